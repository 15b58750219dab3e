/* test_backend_triton.c - the Triton backend: golden sources, Python syntax of every emitted module, runs under Triton's CPU interpreter against tessel's, refusals. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../backends/backend.h"
#include "../interp/sched/sched.h"
#include "../layout/layout.h"
#include "kernel_test.h"

/*
** Python is optional: the syntax check needs python3 (TESSEL_PYTHON names
** another interpreter), the runs need numpy and triton there too (`pip
** install triton numpy`; triton 3.1's interpreter needs numpy < 2, and the
** probe below finds out). Without them those parts skip with a note; CI has
** neither a GPU nor triton.
*/

extern char **environ;

/* ---- the examples, each an owned kernel ---- */

/* softmax over rows of 5 x 6 (padded to 8 in the reduced axis), as lua_tensor.c builds it */
static Kernel *
ex_softmax(void)
{
	int64_t axes[1] = { 1 };
	UOp *a = param("x", 0, 5, 6), *m, *x, *s, *sum;
	KLowerOpts o = { "out" };
	Kernel *k;

	m = ok(tensor_reduce(C, OP_MAX, a, axes, 1, 1, &E));
	x = ok(tensor_alu(C, OP_SUB, a, m, &E));
	x = ok(tensor_alu(C, OP_MUL, x, uop_constf(C, DT_FLOAT32, 1.4426950408889634), &E));
	s = ok(tensor_unary(C, OP_EXP2, x, &E));
	sum = ok(tensor_reduce(C, OP_ADD, s, axes, 1, 1, &E));
	sum = ok(tensor_unary(C, OP_RECIP, sum, &E));
	if (!(k = kernel_lower(ok(tensor_alu(C, OP_MUL, s, sum, &E)), &o, &E)))
		fail_msg("kernel_lower: %s", E.msg);
	return k;
}

static Kernel *
matmul_kernel(const char *name, int64_t n)
{
	int64_t sa[3] = { n, n, 1 }, sb[3] = { 1, n, n }, ax[1] = { 1 };
	UOp *a = param("a", 0, n, n), *b = param("b", 1, n, n), *x;
	KLowerOpts o = { name };
	Kernel *k;

	a = ok(tensor_reshape(C, a, sa, 3, &E));
	b = ok(tensor_reshape(C, b, sb, 3, &E));
	x = ok(tensor_alu(C, OP_MUL, a, b, &E));
	if (!(k = kernel_lower(ok(tensor_reduce(C, OP_ADD, x, ax, 1, 0, &E)), &o, &E)))
		fail_msg("kernel_lower: %s", E.msg);
	return k;
}

/* the init decomposed, 16 x 16 tiles of c on the blocks: one 16 x 16 x 64 tile statement per block */
static Kernel *
ex_matmul(void)
{
	Kernel *k = matmul_kernel("c", 64), *r;
	Schedule *s = sched_new(k, NULL, &E);

	if (!s || sched_decompose_reduction(s, "c", "k", &E) < 0 || sched_tile(s, "c", "i", "j", 16, 16, &E) < 0
	|| sched_bind(s, "c", "i0", "blockIdx.y", &E) < 0 || sched_bind(s, "c", "j0", "blockIdx.x", &E) < 0)
		fail_msg("schedule: %s", E.msg);
	if (!(r = kernel_clone(s->k, &E)))
		fail_msg("clone: %s", E.msg);
	sched_free(s);
	kernel_free(k);
	return r;
}

/* the lowered matmul of 6 x 6: program ids from the independent loops, a padded k tile */
static Kernel *
ex_matmul_lowered(void)
{
	return matmul_kernel("c", 6);
}

/* a 5 x 12 transpose: both extents padded (8, 16) */
static Kernel *
ex_transpose(void)
{
	int64_t order[2] = { 1, 0 };
	UOp *a = param("A", 0, 5, 12);
	KLowerOpts o = { "B" };
	Kernel *k;

	if (!(k = kernel_lower(ok(tensor_permute(C, a, order, 2, &E)), &o, &E)))
		fail_msg("kernel_lower: %s", E.msg);
	return k;
}

/*
** Written by hand: a column-major input, a product and a minimum reduced
** over a padded axis, a scalar loop, a gated store, Python names (a buffer
** `lambda`, a loop `tl`).
*/
static void
build_mixed(void)
{
	int X = mkbuf("X", DT_FLOAT32, AS_GLOBAL, KB_INPUT, 2, (int64_t)3, (int64_t)5);
	int P = mkbuf("P", DT_FLOAT32, AS_GLOBAL, KB_OUTPUT, 1, (int64_t)3);
	int M = mkbuf("lambda", DT_FLOAT32, AS_GLOBAL, KB_OUTPUT, 1, (int64_t)3);
	int S = mkbuf("S", DT_FLOAT32, AS_GLOBAL, KB_OUTPUT, 1, (int64_t)4);
	UOp *i = kernel_var(K, "i", 3), *j = kernel_var(K, "j", 5), *tl = kernel_var(K, "tl", 4);
	UOp *r = kernel_var(K, "r", 3);
	Layout l;

	if (cute_parse("(3,5):(1,3)", &l, &E) < 0 || kernel_layout_cute(K, X, &l, NULL, &E) < 0)
		fail_msg("layout: %s", E.msg);
	stage("prod", loopt(i, AX_LOOP, HW_NONE, 3,
	      st(at(P, 1, i), fc(DT_FLOAT32, 1)),
	      loopt(j, AX_REDUCE, HW_NONE, 1,
	           st(at(P, 1, i), alu(OP_MUL, DT_FLOAT32, ld(at(P, 1, i)), alu(OP_ADD, DT_FLOAT32, ld(at(X, 2, i, j)),
	                                                                     fc(DT_FLOAT32, 0.5))))),
	      st(at(M, 1, i), fc(DT_FLOAT32, 1e30))));
	stage("mins", loopt(i, AX_LOOP, HW_NONE, 1, loopt(j, AX_REDUCE, HW_NONE, 1,
	      st(at(M, 1, i), alu(OP_MIN, DT_FLOAT32, ld(at(M, 1, i)), ld(at(X, 2, i, j)))))));
	/* a scalar loop around a gated store: S[t] = sum over r of X[r, t] for t < 3, else -1 */
	stage("gated", loopt(tl, AX_LOOP, HW_NONE, 2,
	      st(at(S, 1, tl), fc(DT_FLOAT32, -1)),
	      loopt(r, AX_LOOP, HW_NONE, 1,
	           kernel_store(K, at(S, 1, tl), alu(OP_ADD, DT_FLOAT32, alu(OP_MAX, DT_FLOAT32, ld(at(S, 1, tl)),
	                        fc(DT_FLOAT32, 0)), ld(at(X, 2, r, uop_alu(K->c, OP_MIN, tl, I(4))))),
	                        uop_alu(K->c, OP_CMPLT, tl, I(3))))));
}

static Kernel *ex_mixed(void) { return by_hand(build_mixed); }

typedef struct Example {
	const char *name;
	Kernel *(*make)(void);
	const char *golden;     /* tests/golden/<golden>, or NULL */
} Example;

static const Example examples[] = {
	{ "softmax", ex_softmax, "triton_softmax.py" },
	{ "matmul", ex_matmul, "triton_matmul.py" },
	{ "transpose", ex_transpose, "triton_transpose.py" },
	{ "matmul_lowered", ex_matmul_lowered, NULL },
	{ "mixed", ex_mixed, NULL },
};
enum { NEX = sizeof examples / sizeof examples[0] };

/* ---- sources ---- */

static char *
source(const Kernel *k)
{
	Buf b;

	buf_init(&b);
	if (backend_source(&b, k, D_TRITON, &E) < 0)
		fail_msg("backend_source triton: %s", E.msg);
	return buf_take(&b);
}

static void
refused(const Kernel *k, const char *want)
{
	Buf b;

	buf_init(&b);
	if (backend_source(&b, k, D_TRITON, &E) == 0)
		fail_msg("backend_source triton accepted a kernel it should refuse (%s):\n%s", want, b.s);
	buf_free(&b);
	if (!strstr(E.msg, want))
		fail_msg("\"%s\" is not in: %s", want, E.msg);
}

static void
has(const char *text, const char *want)
{
	if (!strstr(text, want)) {
		printf("%s\n", text);   /* cmocka cuts long messages */
		fail_msg("\"%s\" is not in the text above", want);
	}
}

/* Compare with tests/golden/NAME, or write it when TESSEL_GOLDEN_UPDATE is set. */
static void
golden(const char *name, const char *got)
{
	char path[256], *want;
	FILE *f;
	long n;

	snprintf(path, sizeof path, "tests/golden/%s", name);
	if (getenv("TESSEL_GOLDEN_UPDATE")) {
		assert_non_null(f = fopen(path, "wb"));
		fputs(got, f);
		fclose(f);
		return;
	}
	if (!(f = fopen(path, "rb")))
		fail_msg("%s is missing (run with TESSEL_GOLDEN_UPDATE=1 to write it)", path);
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	fseek(f, 0, SEEK_SET);
	assert_non_null(want = malloc((size_t)n + 1));
	assert_int_equal(fread(want, 1, (size_t)n, f), (size_t)n);
	want[n] = '\0';
	fclose(f);
	if (strcmp(want, got) != 0) {
		free(want);
		fail_msg("the emitted source differs from %s:\n%s", path, got);
	}
	free(want);
}

/* ---- child processes: fork and execve, output into a file, no shell ---- */

static int
find_exe(const char *name, char *out, size_t n)
{
	const char *path = getenv("PATH"), *p, *q;

	if (strchr(name, '/')) {
		snprintf(out, n, "%s", name);
		return access(out, X_OK);
	}
	for (p = path ? path : "/usr/bin:/bin"; ; p = q + 1) {
		size_t len;

		q = strchr(p, ':');
		len = q ? (size_t)(q - p) : strlen(p);
		if ((size_t)snprintf(out, n, "%.*s/%s", (int)len, len ? p : ".", name) < n && access(out, X_OK) == 0)
			return 0;
		if (!q)
			break;
	}
	return -1;
}

/* Run argv in dir (NULL: here); its output into *log (malloc'd); the exit status, or -1. */
static int
run_child(char *const *argv, const char *dir, char **log)
{
	char logpath[600];
	const char *t = getenv("TMPDIR");
	int fd, st;
	pid_t pid;
	FILE *f;
	long n;

	*log = NULL;
	snprintf(logpath, sizeof logpath, "%s/tessel-triton-log-XXXXXX", t && *t ? t : "/tmp");
	if ((fd = mkstemp(logpath)) < 0)
		return -1;
	fflush(stdout);
	if ((pid = fork()) == 0) {
		if (dup2(fd, 1) < 0 || dup2(fd, 2) < 0 || (dir && chdir(dir) < 0))
			_exit(126);
		close(fd);
		execve(argv[0], argv, environ);
		_exit(127);
	}
	close(fd);
	if (pid < 0)
		return -1;
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			return -1;
	if ((f = fopen(logpath, "rb"))) {
		fseek(f, 0, SEEK_END);
		n = ftell(f);
		fseek(f, 0, SEEK_SET);
		if (n >= 0 && (*log = malloc((size_t)n + 1))) {
			n = (long)fread(*log, 1, (size_t)n, f);
			(*log)[n] = 0;
		}
		fclose(f);
	}
	unlink(logpath);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static char *
tmpdir(void)
{
	const char *t = getenv("TMPDIR");
	char *d = malloc(512);

	assert_non_null(d);
	snprintf(d, 512, "%s/tessel-triton-XXXXXX", t && *t ? t : "/tmp");
	if (!mkdtemp(d))
		fail_msg("mkdtemp %s: %s", d, strerror(errno));
	return d;
}

static void
write_text(const char *path, const char *text)
{
	FILE *f = fopen(path, "wb");

	if (!f || fputs(text, f) < 0 || fclose(f) != 0)
		fail_msg("cannot write %s", path);
}

/* Remove dir, the files named in names (one a line) and extra. */
static void
remove_dir(const char *dir, const char *names, const char *const *extra)
{
	char p[1024];
	const char *s, *nl;

	for (s = names; s && *s; s = nl + 1) {
		if (!(nl = strchr(s, '\n')))
			break;
		snprintf(p, sizeof p, "%s/%.*s", dir, (int)(nl - s), s);
		unlink(p);
	}
	for (; extra && *extra; extra++) {
		snprintf(p, sizeof p, "%s/%s", dir, *extra);
		unlink(p);
	}
	rmdir(dir);
}

/* The Python to run (TESSEL_PYTHON or python3 in PATH), or NULL with a note once. */
static const char *
python(void)
{
	static char exe[512];
	static int state;   /* 0 unknown, 1 found, 2 absent */
	const char *name = getenv("TESSEL_PYTHON");

	if (!state) {
		state = find_exe(name && *name ? name : "python3", exe, sizeof exe) == 0 ? 1 : 2;
		if (state == 2)
			printf("note: no %s: the Python syntax checks and Triton runs are skipped\n",
			       name && *name ? name : "python3");
	}
	return state == 1 ? exe : NULL;
}

/* Whether Triton's interpreter works with this Python (triton and numpy importable, a store lands). */
static int
interpreter(void)
{
	static int state;   /* 0 unknown, 1 works, 2 not */
	static const char probe[] =
		"import os\nos.environ['TRITON_INTERPRET'] = '1'\n"
		"import numpy as np\nimport triton\nimport triton.language as tl\n"
		"class H:\n"
		"    def __init__(s, a): s.a, s.dtype, s.device = a, a.dtype, 'cpu'\n"
		"    def data_ptr(s): return s.a.ctypes.data\n"
		"    def cpu(s): return s\n"
		"    def to(s, d): return s\n"
		"    data = property(lambda s: s)\n"
		"    def copy_(s, o): pass\n"
		"@triton.jit\ndef k(p):\n    tl.store(p + tl.arange(0, 4), 1.0)\n"
		"try:\n    import torch\n    h = torch.zeros(4)\n    k[(1,)](h)\n    ok = bool((h == 1).all())\n"
		"except ImportError:\n    h = H(np.zeros(4, dtype=np.float32))\n    k[(1,)](h)\n    ok = (h.a == 1).all()\n"
		"assert ok, 'a store under the interpreter did not land (numpy %s, triton %s)' "
		"% (np.__version__, triton.__version__)\n";
	const char *py = python();

	if (!py)
		return 0;
	if (!state) {
		char *argv[4], *log;
		int rc;

		argv[0] = (char *)py;
		argv[1] = "-c";
		argv[2] = (char *)probe;
		argv[3] = NULL;
		rc = run_child(argv, NULL, &log);
		state = rc == 0 ? 1 : 2;
		if (state == 2) {
			const char *last = log ? log : "";
			const char *q;

			/* the last line says why (an ImportError, the probe's assertion) */
			while ((q = strchr(last, '\n')) && q[1])
				last = q + 1;
			printf("note: Triton's interpreter is not usable from %s, runs skipped (pip install triton "
			       "'numpy<2' enables them): %s%s", py, last, strchr(last, '\n') ? "" : "\n");
		}
		free(log);
	}
	return state == 1;
}

/* The source parses as Python (ast.parse), when there is a Python. */
static void
syntax(const char *name, const char *src)
{
	const char *py = python();
	char *dir, path[600], *argv[5], *log;
	int rc;

	if (!py)
		return;
	dir = tmpdir();
	snprintf(path, sizeof path, "%s/kernel.py", dir);
	write_text(path, src);
	argv[0] = (char *)py;
	argv[1] = "-c";
	argv[2] = "import ast, sys; ast.parse(open(sys.argv[1]).read(), sys.argv[1])";
	argv[3] = path;
	argv[4] = NULL;
	rc = run_child(argv, NULL, &log);
	unlink(path);
	rmdir(dir);
	free(dir);
	if (rc != 0) {
		fail_msg("%s: the emitted module is not Python (exit %d):\n%s", name, rc, log ? log : "");
	}
	free(log);
}

/* ---- tests ---- */

static void
test_golden(void **state)
{
	int i;

	for (i = 0; i < NEX; i++) {
		Kernel *k = examples[i].make();
		char *s = source(k);

		if (examples[i].golden)
			golden(examples[i].golden, s);
		syntax(examples[i].name, s);
		free(s);
		kernel_free(k);
	}
}

static void
test_shape(void **state)
{
	Kernel *k = ex_softmax();
	char *s = source(k);

	/* what a Triton programmer writes: constexpr blocks, program ids, masks, reductions */
	has(s, "import triton\nimport triton.language as tl\n");
	has(s, "@triton.jit\ndef xmax_kernel(x_ptr, xmax_ptr, BLOCK_J: tl.constexpr):\n");
	has(s, "    i = tl.program_id(0)\n");
	has(s, "tl.max(tl.where(offs_j < 6, tl.load(x_ptr + (i * 6 + offs_j), mask=offs_j < 6, other=0.0), "
	    "-float(\"inf\")), axis=0)");
	has(s, "tl.sum(tl.where(offs_j_1 < 6, ");
	has(s, "def tessel_launch(bufs):\n");
	has(s, "    xmax_kernel[(5,)](x, xmax, BLOCK_J=8)\n");
	has(s, "Values are close to tessel's interpreter, not equal");
	free(s);
	kernel_free(k);
	/* Python's words are renamed; the product reduction gets its combine function */
	k = ex_mixed();
	s = source(k);
	has(s, "def tessel_mul(a, b):\n    return a * b\n");
	has(s, "tl.reduce(");
	has(s, "lambda_buf_ptr");
	has(s, "    tl_ = tl.program_id(0)\n");
	has(s, "        if tl_ < 3:\n            tl.store(S_ptr + tl_, ");
	has(s, "tl.minimum(");
	free(s);
	kernel_free(k);
}

/* every example exported, run.py run under Triton's interpreter: the values agree with tessel's */
static void
test_interpret(void **state)
{
	int i;

	if (!interpreter()) {
		skip();
		return;
	}
	for (i = 0; i < NEX; i++) {
		static const char *const extra[] = { "__pycache__", NULL };
		Kernel *k = examples[i].make();
		BExportOpts o;
		Buf files;
		char *dir = tmpdir(), *argv[3], *log, run[600];
		int rc;

		buf_init(&files);
		memset(&o, 0, sizeof o);
		o.files = &files;
		if (backend_export(k, D_TRITON, dir, &o, &E) < 0)
			fail_msg("%s: export: %s", examples[i].name, E.msg);
		has(files.s, "kernel.py\n");
		has(files.s, "run.py\n");
		has(files.s, "Makefile\n");
		snprintf(run, sizeof run, "%s/run.py", dir);
		argv[0] = (char *)python();
		argv[1] = run;
		argv[2] = NULL;
		setenv("TRITON_INTERPRET", "1", 1);
		setenv("PYTHONDONTWRITEBYTECODE", "1", 1);
		rc = run_child(argv, dir, &log);
		unsetenv("TRITON_INTERPRET");
		printf("note: %-15s %s", examples[i].name, log ? log : "(no output)\n");
		if (rc != 0 || !log || !strstr(log, "; match\n"))
			fail_msg("%s: run.py under the interpreter: exit %d:\n%s", examples[i].name, rc, log ? log : "");
		free(log);
		remove_dir(dir, files.s, extra);
		buf_free(&files);
		free(dir);
		kernel_free(k);
	}
}

static void
test_export_files(void **state)
{
	Kernel *k = ex_mixed();
	BExportOpts o;
	Buf files;
	char *dir = tmpdir(), path[600];
	struct stat sb;

	buf_init(&files);
	memset(&o, 0, sizeof o);
	o.files = &files;
	assert_int_equal(backend_export(k, D_TRITON, dir, &o, &E), 0);
	/* every input is saved (run.py draws none); the column-major input also gets its offsets */
	has(files.s, "in_X.bin\n");
	has(files.s, "off_X.bin\n");
	has(files.s, "ref_P.bin\n");
	snprintf(path, sizeof path, "%s/off_X.bin", dir);
	assert_int_equal(stat(path, &sb), 0);
	assert_int_equal(sb.st_size, 15 * 8);
	remove_dir(dir, files.s, NULL);
	buf_free(&files);
	free(dir);
	kernel_free(k);
}

static void
test_refusals(void **state)
{
	int A = mkbuf("A", DT_FLOAT32, AS_GLOBAL, KB_INPUT, 1, (int64_t)64);
	int B = mkbuf("B", DT_FLOAT32, AS_GLOBAL, KB_OUTPUT, 1, (int64_t)64);
	int T = mkbuf("T", DT_FLOAT32, AS_LOCAL, KB_TEMP, 1, (int64_t)64);
	UOp *t = kernel_var(K, "t", 64), *u = kernel_var(K, "u", 64), *v = kernel_var(K, "v", 64);

	/* a thread-bound loop */
	stage("threads", loopt(t, AX_LOCAL, HW_THREAD_X, 1, st(at(B, 1, t), ld(at(A, 1, t)))));
	refused(K, "triton: stage threads: loop t is bound to thread.x; a Triton program has no threads");
	kernel_free(K);
	K = kernel_new();
	A = mkbuf("A", DT_FLOAT32, AS_GLOBAL, KB_INPUT, 1, (int64_t)64);
	B = mkbuf("B", DT_FLOAT32, AS_GLOBAL, KB_OUTPUT, 1, (int64_t)64);
	T = mkbuf("T", DT_FLOAT32, AS_LOCAL, KB_TEMP, 1, (int64_t)64);
	T = mkbuf("G", DT_FLOAT32, AS_GLOBAL, KB_TEMP, 1, (int64_t)64);
	t = kernel_var(K, "t", 64);
	u = kernel_var(K, "u", 64);
	/* a barrier between a buffer's write and its read */
	{
		UOp *body[3];

		body[0] = loopt(t, AX_LOOP, HW_NONE, 1, st(at(T, 1, t), ld(at(A, 1, t))));
		body[1] = kernel_barrier(K);
		body[2] = loopt(u, AX_LOOP, HW_NONE, 1, st(at(B, 1, u), ld(at(T, 1, uop_sub(K->c, I(63), u)))));
		stage("staged", kernel_if(K, kernel_const(K, DT_BOOL, 1), body, 3));
	}
	refused(K, "triton: stage staged: a barrier has no Triton form");
	kernel_free(K);
	K = kernel_new();
	A = mkbuf("A", DT_FLOAT32, AS_GLOBAL, KB_INPUT, 1, (int64_t)64);
	B = mkbuf("B", DT_FLOAT32, AS_GLOBAL, KB_OUTPUT, 1, (int64_t)64);
	T = mkbuf("T", DT_FLOAT32, AS_LOCAL, KB_TEMP, 1, (int64_t)64);
	t = kernel_var(K, "t", 64);
	u = kernel_var(K, "u", 64);
	stage("cache", loopt(t, AX_LOOP, HW_NONE, 2, st(at(T, 1, t), ld(at(A, 1, t))), st(at(B, 1, t), ld(at(T, 1, t)))));
	refused(K, "triton: stage cache: buffer T is shared; Triton places tiles in shared memory itself");
	kernel_free(K);
	/* a register buffer read and written element by element: no tile covers it whole */
	K = kernel_new();
	A = mkbuf("A", DT_FLOAT32, AS_GLOBAL, KB_INPUT, 1, (int64_t)64);
	B = mkbuf("B", DT_FLOAT32, AS_GLOBAL, KB_OUTPUT, 1, (int64_t)64);
	T = mkbuf("T", DT_FLOAT32, AS_REG, KB_TEMP, 1, (int64_t)64);
	t = kernel_var(K, "t", 64);
	stage("cache", loopt(t, AX_LOOP, HW_NONE, 2, st(at(T, 1, t), ld(at(A, 1, t))), st(at(B, 1, t), ld(at(T, 1, t)))));
	refused(K, "triton: stage cache: buffer T is in registers, one tile of the program, but an access reads or "
	        "writes part of it (dimension 0)");
	kernel_free(K);
	/* the same as two tile statements: T is one register tile, no pointer, no barrier */
	{
		char *src;

		K = kernel_new();
		A = mkbuf("A", DT_FLOAT32, AS_GLOBAL, KB_INPUT, 1, (int64_t)64);
		B = mkbuf("B", DT_FLOAT32, AS_GLOBAL, KB_OUTPUT, 1, (int64_t)64);
		T = mkbuf("T", DT_FLOAT32, AS_REG, KB_TEMP, 1, (int64_t)64);
		t = kernel_var(K, "t", 64);
		u = kernel_var(K, "u", 64);
		stage("cache", kernel_if(K, kernel_const(K, DT_BOOL, 1), (UOp *[]){
			loopt(t, AX_LOOP, HW_NONE, 1, st(at(T, 1, t), alu(OP_MUL, DT_FLOAT32, ld(at(A, 1, t)), fc(DT_FLOAT32, 2)))),
			loopt(u, AX_LOOP, HW_NONE, 1, st(at(B, 1, u), alu(OP_ADD, DT_FLOAT32, ld(at(T, 1, u)), fc(DT_FLOAT32, 1)))) }, 2));
		src = source(K);
		has(src, "def cache_kernel(A_ptr, B_ptr, ");
		has(src, "    T_1 = tl.load(A_ptr + offs_t) * 2.0\n");
		has(src, "    tl.store(B_ptr + offs_u, T_1 + 1.0)\n");
		if (strstr(src, "debug_barrier"))
			fail_msg("a barrier for a register tile:\n%s", src);
		free(src);
		kernel_free(K);
	}
	K = kernel_new();
	A = mkbuf("A", DT_FLOAT32, AS_GLOBAL, KB_INPUT, 1, (int64_t)64);
	B = mkbuf("B", DT_FLOAT32, AS_GLOBAL, KB_OUTPUT, 1, (int64_t)64);
	t = kernel_var(K, "t", 64);
	/* pow has no Triton function tessel writes */
	stage("power", loopt(t, AX_LOOP, HW_NONE, 1, st(at(B, 1, t), alu(OP_POW, DT_FLOAT32, ld(at(A, 1, t)),
	                                                             fc(DT_FLOAT32, 3)))));
	refused(K, "triton: stage power: the value pow (float32) has no Triton form");
	kernel_free(K);
	K = kernel_new();
	/* a tile past Triton's 2^20 elements */
	A = mkbuf("A", DT_FLOAT32, AS_GLOBAL, KB_INPUT, 2, (int64_t)2048, (int64_t)1024);
	B = mkbuf("B", DT_FLOAT32, AS_GLOBAL, KB_OUTPUT, 1, (int64_t)1);
	t = kernel_var(K, "t", 2048);
	u = kernel_var(K, "u", 1024);
	v = I(0);
	stage("total", loopt(t, AX_REDUCE, HW_NONE, 1, loopt(u, AX_REDUCE, HW_NONE, 1,
	      st(at(B, 1, v), alu(OP_ADD, DT_FLOAT32, ld(at(B, 1, v)), ld(at(A, 2, t, u)))))));
	refused(K, "triton: stage total: a tile of more than 1048576 elements over loops ending in u");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_golden, setup, teardown),
		cmocka_unit_test_setup_teardown(test_shape, setup, teardown),
		cmocka_unit_test_setup_teardown(test_export_files, setup, teardown),
		cmocka_unit_test_setup_teardown(test_refusals, setup, teardown),
		cmocka_unit_test_setup_teardown(test_interpret, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
