/* jit.c - the C JIT: emitted C compiled by the system compiler into a shared object, loaded, run on tessel's buffers, checked against the interpreter. */
#define _GNU_SOURCE   /* RTLD_NOLOAD, RTLD_NODELETE: pinning the OpenMP runtime */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <fenv.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../util/limits.h"
#include "emit.h"

extern char **environ;

/*
** The compiler runs as a child process: fork, then in the child only what
** is async-signal-safe (setpgid, chdir, dup2, execve), since the parent may hold
** OpenMP worker threads from an earlier kernel. So the compiler's path is
** looked up in PATH before the fork (execvp would search after it), and
** its output goes to a log file opened before the fork, read afterwards.
** Everything lives in one private directory (mkdtemp: mode 0700) per cache.
*/

/*
** -ffp-contract=off: no a*b+c fused into one rounding (the interpreter rounds twice).
** -fwrapv: integers wrap as the interpreter's do.
** -frounding-math: GCC 12 folds 0.0 - (double)i into -(double)i, which is -0.0
** where the subtraction gives +0.0 (round to nearest); assuming no rounding mode
** keeps the subtraction.
** -fno-tree-sra: a register tile (a local array whose vector loops are unrolled)
** is kept in registers by store motion around the reduction loop; scalar
** replacement instead makes SSA values of it that live across the loop, and
** GCC 12 then copies each at every step and spills (an 8x32 float32 tile:
** 7.5 ms against 4.4 ms for a 1024^3 GEMM on 2 cores, docs/export.md).
*/
static const char *const fixed[] = {
	"-std=c11", "-O2", "-march=native", "-fPIC", "-shared", "-ffp-contract=off", "-fwrapv", "-frounding-math",
	"-fno-tree-sra", NULL
};
/* fast source (BJitOpts.fast): reassociated sums and glibc's vector exp2f (libmvec) */
static const char *const fastflags[] = {
	"-std=c11", "-O3", "-march=native", "-fPIC", "-shared", "-ffast-math", "-fwrapv", "-fno-tree-sra", NULL
};

typedef void (*KernelFn)(void **);
typedef int (*CopyFn)(int, void *, const void *);

typedef struct Entry {
	uint64_t hash;
	char *key;            /* the flags, a NUL, the source: compared in full */
	size_t keylen;
	int seq;              /* files k<seq>.c, .so, .log */
	void *dl;
	KernelFn fn;
	CopyFn place, take;
} Entry;

struct BJitCache {
	char dir[512];        /* "" until the first compilation */
	Entry *e;
	int n, cap, seq;
};

BJitCache *
backend_jit_cache_new(void)
{
	return calloc(1, sizeof(BJitCache));
}

static void
unlink_files(const BJitCache *c, int seq)
{
	static const char *const ext[] = { "c", "so", "log" };
	char p[600];
	size_t i;

	for (i = 0; i < sizeof ext / sizeof ext[0]; i++) {
		snprintf(p, sizeof p, "%s/k%d.%s", c->dir, seq, ext[i]);
		unlink(p);
	}
}

void
backend_jit_cache_free(BJitCache *c)
{
	int i;

	if (!c)
		return;
	for (i = 0; i < c->n; i++) {
		if (c->e[i].dl)
			dlclose(c->e[i].dl);
		free(c->e[i].key);
	}
	if (c->dir[0]) {
		for (i = 1; i <= c->seq; i++)
			unlink_files(c, i);
		rmdir(c->dir);
	}
	free(c->e);
	free(c);
}

int
backend_jit_cache_size(const BJitCache *c)
{
	return c ? c->n : 0;
}

static double
now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* FNV-1a, 64 bits */
static uint64_t
hash(const char *s, size_t n)
{
	uint64_t h = 0xcbf29ce484222325ull;
	size_t i;

	for (i = 0; i < n; i++) {
		h ^= (unsigned char)s[i];
		h *= 0x100000001b3ull;
	}
	return h;
}

/* The compiler's path: cc as given when it holds a slash, else the first executable in PATH. */
static int
find_cc(const char *cc, char *out, size_t n, Err *e)
{
	const char *path = getenv("PATH"), *p, *q;

	if (strchr(cc, '/')) {
		if (access(cc, X_OK) != 0)
			return err_set(e, "jit: the C compiler %s is not an executable file", cc);
		snprintf(out, n, "%s", cc);
		return 0;
	}
	for (p = path ? path : "/usr/local/bin:/usr/bin:/bin"; ; p = q + 1) {
		size_t len;

		q = strchr(p, ':');
		len = q ? (size_t)(q - p) : strlen(p);
		if ((size_t)snprintf(out, n, "%.*s/%s", (int)len, len ? p : ".", cc) < n && access(out, X_OK) == 0)
			return 0;
		if (!q)
			break;
	}
	return err_set(e, "jit: the C compiler %s is not in PATH (install gcc: apt-get install gcc)", cc);
}

void
backend_jit_flags(Buf *b, const Kernel *k)
{
	EmitInfo info;
	Buf src;
	Err e;
	int i;

	for (i = 0; fixed[i]; i++)
		emit(b, "%s%s", i ? " " : "", fixed[i]);
	buf_init(&src);
	memset(&info, 0, sizeof info);
	if (k && emit_kernel(&src, k, &emit_c, &info, &e) == 0 && (info.omp || info.simd))
		emit(b, " %s", info.omp ? "-fopenmp" : "-fopenmp-simd");
	buf_free(&src);
}

/* The line of the source a compiler message points at ("k1.c:12:5: error: ..."). */
static void
compiler_error(Err *e, const char *cc, int status, const char *log, const char *src, int seq)
{
	char pre[32], msg[360] = "", line[200] = "";
	const char *at = log, *nl;
	int ln = 0;

	snprintf(pre, sizeof pre, "k%d.c:", seq);
	/* the first line that says error, else the first line */
	for (at = log; at && *at; at = nl ? nl + 1 : NULL) {
		nl = strchr(at, '\n');
		if (strstr(at, "error") && (!nl || strstr(at, "error") < nl))
			break;
	}
	if (!at || !*at)
		at = log;
	nl = strchr(at, '\n');
	snprintf(msg, sizeof msg, "%.*s", nl ? (int)(nl - at) : (int)strlen(at), at);
	if (strncmp(at, pre, strlen(pre)) == 0)
		ln = atoi(at + strlen(pre));
	if (ln > 0) {
		const char *s = src;
		int i;

		for (i = 1; i < ln && s; i++)
			if ((s = strchr(s, '\n')))
				s++;
		if (s) {
			const char *end = strchr(s, '\n');

			while (*s == ' ')
				s++;
			snprintf(line, sizeof line, "%.*s", end ? (int)(end - s) : (int)strlen(s), s);
		}
	}
	if (status >= 0)
		err_set(e, "jit: %s failed (exit %d): %s%s%s", cc, status, msg[0] ? msg : "(no message)",
		        line[0] ? "\n  emitted line: " : "", line);
	else
		err_set(e, "jit: %s was killed by signal %d: %s", cc, -status, msg);
}

static char *
read_file(const char *p)
{
	FILE *f = fopen(p, "rb");
	char *s;
	long n;

	if (!f)
		return NULL;
	if (fseek(f, 0, SEEK_END) != 0 || (n = ftell(f)) < 0 || fseek(f, 0, SEEK_SET) != 0
	|| !(s = malloc((size_t)n + 1))) {
		fclose(f);
		return NULL;
	}
	n = (long)fread(s, 1, (size_t)n, f);
	s[n] = 0;
	fclose(f);
	return s;
}

/*
** Stop the compiler's process group after Ctrl-C: SIGTERM lets the driver delete its
** temporary files and stops cc1 and as with it; SIGKILL after a second if it has not
** ended. The child is reaped either way.
*/
static void
stop_compiler(pid_t pid)
{
	int st, i = 0;
	pid_t w;

	if (kill(-pid, SIGTERM) != 0)
		kill(pid, SIGTERM);
	while ((w = waitpid(pid, &st, WNOHANG)) != pid) {
		if (w < 0 && errno != EINTR)
			return;
		if (++i == 500) {
			kill(-pid, SIGKILL);
			kill(pid, SIGKILL);
			while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
				;
			return;
		}
		nanosleep(&(struct timespec){ 0, 2000000 }, NULL);
	}
}

/* Compile src into the cache's directory as k<seq>.so; 0, or -1 with e saying why. */
static int
compile(BJitCache *c, int seq, const char *cc, const char *const *argv_flags, int nflags, const char *src,
        size_t srclen, Err *e)
{
	char path[600], cpath[1024], so[32], cfile[32], *log = NULL;
	const char **argv, **envp = NULL;
	FILE *f;
	pid_t pid;
	int fd, nullfd, st, i, j, n = 0, rc = -1;

	if (!c->dir[0]) {
		const char *tmp = getenv("TMPDIR");

		snprintf(c->dir, sizeof c->dir, "%s/tessel-jit-XXXXXX", tmp && *tmp ? tmp : "/tmp");
		if (!mkdtemp(c->dir)) {
			err_set(e, "jit: cannot make a private directory %s: %s", c->dir, strerror(errno));
			c->dir[0] = 0;
			return -1;
		}
	}
	if (find_cc(cc, cpath, sizeof cpath, e) < 0)
		return -1;
	snprintf(cfile, sizeof cfile, "k%d.c", seq);
	snprintf(so, sizeof so, "k%d.so", seq);
	snprintf(path, sizeof path, "%s/%s", c->dir, cfile);
	if (!(f = fopen(path, "w")) || fwrite(src, 1, srclen, f) != srclen || fclose(f) != 0) {
		if (f)
			fclose(f);
		return err_set(e, "jit: cannot write %s: %s", path, strerror(errno));
	}
	snprintf(path, sizeof path, "%s/k%d.log", c->dir, seq);
	if ((fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600)) < 0)
		return err_set(e, "jit: cannot write %s: %s", path, strerror(errno));
	/* standard input from /dev/null: the compiler, in a process group of its own, must not read the terminal */
	if ((nullfd = open("/dev/null", O_RDONLY)) < 0) {
		close(fd);
		return err_set(e, "jit: cannot open /dev/null: %s", strerror(errno));
	}
	/* the environment, with the compiler's messages in plain ASCII (LC_ALL=C) */
	for (i = 0; environ && environ[i]; i++)
		;
	if (!(argv = calloc((size_t)nflags + 16, sizeof *argv)) || !(envp = calloc((size_t)i + 2, sizeof *envp))) {
		free(argv);
		close(fd);
		close(nullfd);
		return err_set(e, "jit: out of memory");
	}
	envp[0] = "LC_ALL=C";
	for (i = 0, j = 1; environ && environ[i]; i++)
		if (strncmp(environ[i], "LC_ALL=", 7) != 0)
			envp[j++] = environ[i];
	argv[n++] = cc;
	for (i = 0; i < nflags; i++)
		argv[n++] = argv_flags[i];
	argv[n++] = "-o";
	argv[n++] = so;
	argv[n++] = cfile;
	argv[n++] = "-lm";
	argv[n] = NULL;
	pid = fork();
	if (pid == 0) {
		/* the child: async-signal-safe calls only; its own process group (stop_compiler) */
		setpgid(0, 0);
		if (chdir(c->dir) != 0 || dup2(nullfd, 0) < 0 || dup2(fd, 1) < 0 || dup2(fd, 2) < 0)
			_exit(126);
		close(fd);
		close(nullfd);
		execve(cpath, (char *const *)argv, (char *const *)envp);
		_exit(127);
	}
	close(fd);
	close(nullfd);
	free(argv);
	free(envp);
	if (pid < 0)
		return err_set(e, "jit: fork: %s", strerror(errno));
	setpgid(pid, pid);   /* as the child does: whichever runs first, kill(-pid) then reaches it */
	/*
	** Wait without blocking, so that Ctrl-C (limits_poll) is seen while the compiler
	** runs: then it is stopped and reaped, and no kernel is loaded.
	*/
	for (;;) {
		pid_t w = waitpid(pid, &st, WNOHANG);

		if (w == pid)
			break;
		if (w < 0 && errno != EINTR)
			return err_set(e, "jit: waiting for %s: %s", cc, strerror(errno));
		if (limits_poll(NULL) < 0) {
			stop_compiler(pid);
			return err_set(e, "jit: interrupted (Ctrl-C) while %s compiled %s", cc, cfile);
		}
		nanosleep(&(struct timespec){ 0, 2000000 }, NULL);   /* 2 ms */
	}
	if (WIFEXITED(st) && WEXITSTATUS(st) == 0)
		return 0;
	log = read_file(path);
	if (WIFEXITED(st) && WEXITSTATUS(st) == 127)
		err_set(e, "jit: cannot run %s", cpath);
	else
		compiler_error(e, cc, WIFEXITED(st) ? WEXITSTATUS(st) : -WTERMSIG(st), log ? log : "", src, seq);
	free(log);
	return rc;
}

/*
** A kernel built with -fopenmp loads the OpenMP runtime, which keeps its
** worker threads alive, idle, after a parallel loop ends. Unloading the
** kernel must not unload the runtime under them (a worker would wake up in
** unmapped code): once loaded, the runtime stays (RTLD_NODELETE on the
** already-loaded library; RTLD_NOLOAD loads nothing that is not there).
*/
static void
pin_openmp(void)
{
	static const char *const lib[] = { "libgomp.so.1", "libomp.so.5", "libomp.so" };
	size_t i;

	for (i = 0; i < sizeof lib / sizeof lib[0]; i++)
		dlopen(lib[i], RTLD_LAZY | RTLD_NOLOAD | RTLD_NODELETE);
}

/* The compiled kernel for src and flags: from the cache, or compiled and loaded now. */
static Entry *
lookup(BJitCache *c, const char *cc, const char *const *flags, int nflags, const char *src, size_t srclen,
       int *cached, Err *e)
{
	Buf key;
	Entry *x;
	uint64_t h;
	char so[600];
	fenv_t env;
	int i;

	buf_init(&key);
	emit(&key, "%s", cc);
	for (i = 0; i < nflags; i++)
		emit(&key, " %s", flags[i]);
	emitn(&key, "", 1);
	emitn(&key, src, srclen);
	if (key.oom) {
		buf_free(&key);
		err_set(e, "jit: out of memory");
		return NULL;
	}
	h = hash(key.s, key.len);
	for (i = 0; i < c->n; i++)
		if (c->e[i].hash == h && c->e[i].keylen == key.len && memcmp(c->e[i].key, key.s, key.len) == 0) {
			buf_free(&key);
			*cached = 1;
			return &c->e[i];
		}
	*cached = 0;
	if (c->n == c->cap) {
		int cap = c->cap ? 2 * c->cap : 8;
		Entry *n = realloc(c->e, cap * sizeof *n);

		if (!n) {
			buf_free(&key);
			err_set(e, "jit: out of memory");
			return NULL;
		}
		c->e = n;
		c->cap = cap;
	}
	x = &c->e[c->n];
	memset(x, 0, sizeof *x);
	x->seq = ++c->seq;
	if (compile(c, x->seq, cc, flags, nflags, src, srclen, e) < 0) {
		buf_free(&key);
		return NULL;
	}
	snprintf(so, sizeof so, "%s/k%d.so", c->dir, x->seq);
	/* GCC 12 links a -ffast-math shared object with crtfastmath.o, whose constructor turns
	** on flush-to-zero and denormals-are-zero for the whole process: the interpreter, the
	** reference, then read every subnormal as 0 (and agreed with C, whose kernels ran in the
	** same thread). The floating-point environment is the caller's again once it is loaded. */
	fegetenv(&env);
	x->dl = dlopen(so, RTLD_NOW | RTLD_LOCAL);
	fesetenv(&env);
	if (!x->dl) {
		const char *m = dlerror();

		buf_free(&key);
		err_set(e, "jit: dlopen %s: %s", so, m ? m : "failed");
		return NULL;
	}
	pin_openmp();
	*(void **)&x->fn = dlsym(x->dl, "tessel_kernel");
	*(void **)&x->place = dlsym(x->dl, "tessel_place");
	*(void **)&x->take = dlsym(x->dl, "tessel_take");
	if (!x->fn) {
		dlclose(x->dl);
		buf_free(&key);
		err_set(e, "jit: %s defines no tessel_kernel", so);
		return NULL;
	}
	x->hash = h;
	x->keylen = key.len;
	x->key = buf_take(&key);
	c->n++;
	return x;
}

/* The outputs against the interpreter's: the first disagreement is the error. */
static int
compare(const Kernel *k, const TBuf *got, const TBuf *want, int fast, Err *e)
{
	EMismatch m;

	if (!emit_mismatch(k, got, want, fast ? EM_FAST : EM_EXACT, &m))
		return 0;
	if (fast)
		err_set(e, "jit: the fast kernel disagrees with the interpreter beyond %g (relative to max(|x|, 1)) "
		        "at %lld of %lld elements of %s; first %s: compiled %.9g, interpreter %.9g (fast = false "
		        "computes the interpreter's bits; {compare = false} skips this check)", m.tol, (long long)m.bad,
		        (long long)m.n, k->buf[m.buf].name, m.where.s ? m.where.s : "?", m.got, m.want);
	else
		err_set(e, "jit: the compiled kernel disagrees with the interpreter at %lld of %lld elements of %s; "
		        "first %s: compiled %.9g, interpreter %.9g (a bug in the C backend: please report it with the "
		        "kernel; {compare = false} skips this check)", (long long)m.bad, (long long)m.n,
		        k->buf[m.buf].name, m.where.s ? m.where.s : "?", m.got, m.want);
	buf_free(&m.where);
	return -1;
}

/*
** backend_jit_run, and with reps > 0 backend_jit_time: after the first run
** (whose outputs come back), reps more runs of the same object, timed.
*/
static int
jit_run(const Kernel *k, TBuf *bufs, const BJitOpts *o, int reps, double *run_s, Err *e)
{
	BJitOpts dflt;
	BJitCache *tmp = NULL, *c;
	EmitInfo info;
	Buf src;
	Entry *x;
	const char *flags[64];
	void **ptr = NULL, **base = NULL;   /* base: what posix_memalign gave (ptr is inside it) */
	size_t sz;
	TBuf *ref = NULL, *outs = NULL;
	double t0;
	int i, j, nflags = 0, cached = 0, rc = -1;

	memset(&dflt, 0, sizeof dflt);
	if (!o)
		o = &dflt;
	e->msg[0] = 0;
	if (o->stats)
		memset(o->stats, 0, sizeof *o->stats);
	if (!k)
		return err_set(e, "jit: no kernel");
	/* the caller's inputs, as kernel_run checks them, before anything is allocated */
	if (emit_check_inputs(k, bufs, "jit", e) < 0)
		return -1;
	t0 = now();
	buf_init(&src);
	memset(&info, 0, sizeof info);
	info.fast = o->fast;
	if (emit_kernel(&src, k, &emit_c, &info, e) < 0) {
		buf_free(&src);
		return -1;
	}
	for (i = 0; (o->fast ? fastflags : fixed)[i]; i++)
		flags[nflags++] = (o->fast ? fastflags : fixed)[i];
	if (info.omp || info.simd)
		flags[nflags++] = info.omp ? "-fopenmp" : "-fopenmp-simd";
	for (i = 0; o->flags && o->flags[i]; i++) {
		if (nflags == (int)(sizeof flags / sizeof flags[0]))
			return buf_free(&src), err_set(e, "jit: more than %d flags", nflags - 10);
		flags[nflags++] = o->flags[i];
	}
	if (!(c = o->cache) && !(c = tmp = backend_jit_cache_new())) {
		buf_free(&src);
		return err_set(e, "jit: out of memory");
	}
	x = lookup(c, o->cc ? o->cc : "cc", flags, nflags, src.s ? src.s : "", src.len, &cached, e);
	buf_free(&src);
	if (!x)
		goto out;
	if (o->stats) {
		o->stats->cached = cached;
		o->stats->compile_s = cached ? 0 : now() - t0;
	}
	/* the interpreter first: its checks stop a race or a bad access before native code runs */
	if (!o->no_check) {
		KRunOpts io = { .checks = 1 };

		if (!(ref = calloc(k->nbuf ? k->nbuf : 1, sizeof *ref))) {
			err_set(e, "jit: out of memory");
			goto out;
		}
		for (i = 0; i < k->nbuf; i++)
			if (k->buf[i].role == KB_INPUT)
				ref[i] = bufs[i];   /* shared, not owned: kernel_run only reads inputs */
		t0 = now();
		if (kernel_run(k, o->interp ? o->interp : &io, ref, NULL, e) < 0) {
			for (i = 0; i < k->nbuf; i++)
				memset(&ref[i], 0, sizeof ref[i]);
			goto out;
		}
		if (o->stats)
			o->stats->check_s = now() - t0;
	}
	if (!(ptr = calloc(k->nbuf ? k->nbuf : 1, sizeof *ptr)) || !(base = calloc(k->nbuf ? k->nbuf : 1, sizeof *base))
	|| !(outs = calloc(k->nbuf ? k->nbuf : 1, sizeof *outs))) {
		err_set(e, "jit: out of memory");
		goto out;
	}
	for (i = 0; i < k->nbuf; i++) {
		const KBuf *kb = &k->buf[i];
		size_t bytes = (size_t)dtype_bytes(kb->dtype);

		if (kb->scope != AS_GLOBAL)
			continue;
		/*
		** Zeroed as the interpreter's are. Placed at a fixed offset from a
		** page, a different one per buffer (multiples of 64 bytes): where
		** malloc puts buffers varies from run to run, and buffers at the
		** same offset from a page alias in the L1 cache (4K aliasing), so
		** a run's time would depend on the allocator (a scheduled 256^3
		** GEMM took 360 or 660 us from one run to the next).
		*/
		sz = ((size_t)kb->size ? (size_t)kb->size : 1) * bytes;
		if (posix_memalign(&base[i], 4096, sz + 4096) != 0) {
			base[i] = NULL;
			err_set(e, "jit: out of memory (%lld bytes for %s)", (long long)kb->size * (long long)bytes, kb->name);
			goto out;
		}
		ptr[i] = (char *)base[i] + (size_t)i * 576 % 4096;
		memset(ptr[i], 0, sz);
		if (kb->role == KB_INPUT && !(x->place && x->place(i, ptr[i], bufs[i].data)))
			memcpy(ptr[i], bufs[i].data, (size_t)emit_numel(kb) * bytes);
	}
	t0 = now();
	x->fn(ptr);
	if (o->stats)
		o->stats->run_s = now() - t0;
	for (i = 0; i < k->nbuf; i++) {
		const KBuf *kb = &k->buf[i];
		size_t bytes = (size_t)dtype_bytes(kb->dtype);
		int64_t n = emit_numel(kb);

		if (kb->role != KB_OUTPUT)
			continue;
		if (!(outs[i].data = malloc(n ? (size_t)n * bytes : 1))) {
			err_set(e, "jit: out of memory for output %s", kb->name);
			goto out;
		}
		outs[i].dtype = kb->dtype;
		outs[i].ndim = kb->ndim;
		memcpy(outs[i].shape, kb->shape, sizeof kb->shape);
		outs[i].device = NULL;
		outs[i].axis = -1;
		outs[i].numel = n;
		if (!(x->take && x->take(i, outs[i].data, ptr[i])))
			memcpy(outs[i].data, ptr[i], (size_t)n * bytes);
	}
	if (ref && compare(k, outs, ref, o->fast, e) < 0)
		goto out;
	/*
	** The timed runs: every buffer but the inputs zeroed again first, so
	** that a kernel that accumulates into its outputs runs as the first
	** run did (outside the timed region).
	*/
	for (j = 0; j < reps; j++) {
		if (limits_poll(e) < 0)
			goto out;
		for (i = 0; i < k->nbuf; i++)
			if (ptr[i] && k->buf[i].role != KB_INPUT)
				memset(ptr[i], 0, ((size_t)k->buf[i].size ? (size_t)k->buf[i].size : 1)
				       * (size_t)dtype_bytes(k->buf[i].dtype));
		t0 = now();
		x->fn(ptr);
		run_s[j] = now() - t0;
	}
	for (i = 0; i < k->nbuf; i++)
		if (k->buf[i].role == KB_OUTPUT) {
			bufs[i] = outs[i];
			memset(&outs[i], 0, sizeof outs[i]);
		} else if (k->buf[i].role == KB_TEMP)
			memset(&bufs[i], 0, sizeof bufs[i]);
	rc = 0;
out:
	if (ref)
		for (j = 0; j < k->nbuf; j++)
			if (k->buf[j].role == KB_OUTPUT)
				free(ref[j].data);
	free(ref);
	if (outs)
		for (j = 0; j < k->nbuf; j++)
			free(outs[j].data);
	free(outs);
	if (base)
		for (j = 0; j < k->nbuf; j++)
			free(base[j]);
	free(base);
	free(ptr);
	backend_jit_cache_free(tmp);
	return rc;
}

int
backend_jit_run(const Kernel *k, TBuf *bufs, const BJitOpts *o, Err *e)
{
	return jit_run(k, bufs, o, 0, NULL, e);
}

int
backend_jit_time(const Kernel *k, TBuf *bufs, const BJitOpts *o, int reps, double *run_s, Err *e)
{
	if (reps < 0 || (reps && !run_s))
		return err_set(e, "jit: %d timed runs into %s", reps, run_s ? "a table" : "no table");
	return jit_run(k, bufs, o, reps, run_s, e);
}
