/* harness.c - k:export: a kernel's source, a standalone host program that checks it against the interpreter's saved outputs and times it, and a Makefile. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "gpu.h"

/*
** A directory that builds and runs with one `make` where the toolchain is
** (cc; nvcc; an OpenCL loader and device):
**   kernel.c | kernel.cu | kernel.cl   the source (backend_source)
**   main.c | main.cu                   the host program
**   ref_<buffer>.bin                   the interpreter's outputs
**   in_<buffer>.bin                    inputs the host cannot draw (data, bindings)
**   Makefile
** The host program draws the other inputs as tessel draws unbound inputs
** (backend_draw: Threefry, the same function), runs the kernel once and
** compares every output with the interpreter's (bit for bit where the
** arithmetic is the interpreter's; harness_tol says where it is not), then
** times the kernel: the median of repeated runs after warm-up, with CUDA
** events for CUDA and the wall clock for C and OpenCL. Global buffers start
** zeroed, as the interpreter's do, and the timed runs come after the check
** (a kernel that accumulates into its outputs changes them).
**
** File names and every name in the program are buffer and stage names,
** which are identifiers already (sanitized again here); the Makefile holds
** none: no string of the user's reaches a shell.
*/

enum { E_IO = -2 };   /* an environmental failure: the directory or a file */

void
backend_draw(const Kernel *k, int b, TBuf *t)
{
	const KBuf *kb = &k->buf[b];
	int64_t i, n = emit_numel(kb);
	int bytes = dtype_bytes(kb->dtype);

	for (i = 0; i < n; i++) {
		uint64_t v = tensor_threefry((uint64_t)i, (uint64_t)b + 1);

		if (dtype_is_float(kb->dtype))
			dtype_store_f(kb->dtype, (char *)t->data + i * bytes, (double)(v >> 11) / 9007199254740992.0);
		else
			dtype_store_i(kb->dtype, (char *)t->data + i * bytes, (int64_t)(v % 7));
	}
}

/* ---- files ---- */

static void
sanitize(const char *in, char *out, size_t n)
{
	size_t i;

	for (i = 0; in[i] && i + 1 < n; i++)
		out[i] = (in[i] >= 'a' && in[i] <= 'z') || (in[i] >= 'A' && in[i] <= 'Z') || (in[i] >= '0' && in[i] <= '9')
		       ? in[i] : '_';
	out[i] = 0;
	if (!i && n > 1)
		snprintf(out, n, "x");
}

typedef struct Out {
	const char *dir;
	Buf *files;      /* names written, one a line (may be NULL) */
	Err *e;
} Out;

int
export_write(const char *dir, Buf *files, const char *name, const void *data, size_t len, Err *e)
{
	char path[4096];
	FILE *f;

	if ((size_t)snprintf(path, sizeof path, "%s/%s", dir, name) >= sizeof path) {
		err_set(e, "export: the path %s/%s is too long", dir, name);
		return E_IO;
	}
	if (!(f = fopen(path, "wb"))) {
		err_set(e, "export: cannot write %s: %s", path, strerror(errno));
		return E_IO;
	}
	if (len && fwrite(data, 1, len, f) != len) {
		err_set(e, "export: cannot write %s: %s", path, strerror(errno));
		fclose(f);
		return E_IO;
	}
	if (fclose(f) != 0) {
		err_set(e, "export: cannot write %s: %s", path, strerror(errno));
		return E_IO;
	}
	if (files)
		emit(files, "%s\n", name);
	return 0;
}

/* mkdir -p: the directory and any missing parent. */
int
export_mkdir(const char *dir, Err *e)
{
	char path[4096];
	struct stat st;
	size_t i, n = strlen(dir);

	if (n >= sizeof path)
		return err_set(e, "export: the path %s is too long", dir), E_IO;
	memcpy(path, dir, n + 1);
	for (i = 1; i <= n; i++) {
		if (path[i] != '/' && path[i] != 0)
			continue;
		path[i] = 0;
		if (mkdir(path, 0777) < 0 && !(errno == EEXIST && stat(path, &st) == 0 && S_ISDIR(st.st_mode))) {
			if (errno == EEXIST)
				err_set(e, "export: cannot make the directory %s: %s is not a directory", dir, path);
			else
				err_set(e, "export: cannot make the directory %s: %s", path, strerror(errno));
			return E_IO;
		}
		path[i] = dir[i];
	}
	return 0;
}

static int
write_file(Out *o, const char *name, const void *data, size_t len)
{
	return export_write(o->dir, o->files, name, data, len, o->e);
}

/* ---- what the device computes differently (emit_kinds, run_check.c) ---- */

/*
** An output's tolerance, relative to max(|ref|, 1): 0 (bit for bit) where
** the device does the interpreter's arithmetic. C does (jit.c). A GPU's
** double exp2, log2, sin and pow are within 2 units in the last place of
** double, not correctly rounded: 8 units of the output's rounding error
** cover the rare float32 result they move. An MMA sums its products in the
** tensor cores' own order and precision: 1e-4 for float32 outputs (a K of a
** few thousand), 1e-2 for 16-bit ones.
*/
static double
harness_tol(Dialect d, const EKinds *kd, DType t)
{
	double u = emit_unit(t);
	double tol = 0;

	if (d == D_C || u == 0)
		return 0;
	if (kd->approx)
		tol = 8 * u;
	if (kd->mma)
		tol = t == DT_FLOAT16 || t == DT_BFLOAT16 ? 1e-2 : t == DT_FLOAT32 ? 1e-4 : 8 * u;
	return tol;
}
/* The host programs' shared part (C and C++ alike). */
static const char runtime[] =
	"/* The buffers: kinds as tessel's dtypes. */\n"
	"enum { K_BOOL, K_I8, K_I16, K_I32, K_I64, K_U8, K_U16, K_U32, K_U64, K_F16, K_BF16, K_F32, K_F64 };\n"
	"\n"
	"typedef struct Buffer {\n"
	"  const char *name;\n"
	"  int role;             /* 'i' input, 'o' output, 't' temporary */\n"
	"  int kind, bytes;\n"
	"  int64_t numel, size;  /* logical elements; elements of storage (its layout's) */\n"
	"  int global;           /* in global memory: the host allocates it */\n"
	"  int drawn;            /* an input drawn here, as tessel draws it; else read from in_<name>.bin */\n"
	"  double tol;           /* an output: 0 bit for bit, else |got - ref| <= tol * max(|ref|, 1) */\n"
	"} Buffer;\n"
	"\n"
	"/* Threefry 2x32 with 20 rounds, as tessel draws inputs (tensor_threefry) */\n"
	"static uint64_t\n"
	"threefry(uint64_t ctr, uint64_t key)\n"
	"{\n"
	"  static const int rot[8] = { 13, 15, 26, 6, 17, 29, 16, 24 };\n"
	"  uint32_t x0 = (uint32_t)ctr, x1 = (uint32_t)(ctr >> 32), ks[3];\n"
	"  int r;\n"
	"\n"
	"  ks[0] = (uint32_t)key;\n"
	"  ks[1] = (uint32_t)(key >> 32);\n"
	"  ks[2] = 0x1BD11BDAu ^ ks[0] ^ ks[1];\n"
	"  x0 += ks[0];\n"
	"  x1 += ks[1];\n"
	"  for (r = 0; r < 20; r++) {\n"
	"    x0 += x1;\n"
	"    x1 = (x1 << rot[r % 8]) | (x1 >> (32 - rot[r % 8]));\n"
	"    x1 ^= x0;\n"
	"    if (r % 4 == 3) {\n"
	"      x0 += ks[(r / 4 + 1) % 3];\n"
	"      x1 += ks[(r / 4 + 2) % 3] + (uint32_t)(r / 4 + 1);\n"
	"    }\n"
	"  }\n"
	"  return (uint64_t)x1 << 32 | x0;\n"
	"}\n"
	"\n"
	"/* a double rounded once to a 16-bit float of ebits exponent bits (tessel's dtype.c) */\n"
	"static uint16_t\n"
	"encode(double x, int ebits, int mbits)\n"
	"{\n"
	"  const int bias = (1 << (ebits - 1)) - 1, emax = (1 << ebits) - 1;\n"
	"  uint16_t sign = signbit(x) ? (uint16_t)(1u << (ebits + mbits)) : 0;\n"
	"  double a = fabs(x), m;\n"
	"  uint32_t bits;\n"
	"  int ex;\n"
	"\n"
	"  if (isnan(x))\n"
	"    return (uint16_t)(sign | (emax << mbits) | (1u << (mbits - 1)));\n"
	"  if (a == 0)\n"
	"    return sign;\n"
	"  if (isinf(a))\n"
	"    return (uint16_t)(sign | (emax << mbits));\n"
	"  if (a < ldexp(1, 1 - bias))\n"
	"    return (uint16_t)(sign | (uint16_t)nearbyint(ldexp(a, bias - 1 + mbits)));\n"
	"  frexp(a, &ex);\n"
	"  ex -= 1;\n"
	"  if (ex > bias)\n"
	"    return (uint16_t)(sign | (emax << mbits));\n"
	"  m = nearbyint(ldexp(a, mbits - ex)) - ldexp(1, mbits);\n"
	"  bits = ((uint32_t)(ex + bias) << mbits) + (uint32_t)m;\n"
	"  if (bits >= (uint32_t)emax << mbits)\n"
	"    bits = (uint32_t)emax << mbits;\n"
	"  return (uint16_t)(sign | bits);\n"
	"}\n"
	"\n"
	"static double\n"
	"decode(uint16_t h, int ebits, int mbits)\n"
	"{\n"
	"  const int bias = (1 << (ebits - 1)) - 1, emax = (1 << ebits) - 1;\n"
	"  int e = (h >> mbits) & emax;\n"
	"  uint32_t m = h & ((1u << mbits) - 1);\n"
	"  double v;\n"
	"\n"
	"  if (e == emax)\n"
	"    v = m ? NAN : INFINITY;\n"
	"  else if (e == 0)\n"
	"    v = ldexp(m, 1 - bias - mbits);\n"
	"  else\n"
	"    v = ldexp(m + (1u << mbits), e - bias - mbits);\n"
	"  return (h >> (ebits + mbits)) & 1 ? -v : v;\n"
	"}\n"
	"\n"
	"/* element i of a buffer of b's kind at p: a float from f, an integer from v */\n"
	"static void\n"
	"put(const Buffer *b, void *p, int64_t i, double f, int64_t v)\n"
	"{\n"
	"  char *q = (char *)p + i * b->bytes;\n"
	"\n"
	"  switch (b->kind) {\n"
	"  case K_BOOL: { uint8_t x = v != 0; memcpy(q, &x, 1); break; }\n"
	"  case K_I8: case K_U8: { uint8_t x = (uint8_t)(uint64_t)v; memcpy(q, &x, 1); break; }\n"
	"  case K_I16: case K_U16: { uint16_t x = (uint16_t)(uint64_t)v; memcpy(q, &x, 2); break; }\n"
	"  case K_I32: case K_U32: { uint32_t x = (uint32_t)(uint64_t)v; memcpy(q, &x, 4); break; }\n"
	"  case K_I64: case K_U64: memcpy(q, &v, 8); break;\n"
	"  case K_F16: { uint16_t x = encode(f, 5, 10); memcpy(q, &x, 2); break; }\n"
	"  case K_BF16: { uint16_t x = encode(f, 8, 7); memcpy(q, &x, 2); break; }\n"
	"  case K_F32: { float x = (float)f; memcpy(q, &x, 4); break; }\n"
	"  default: memcpy(q, &f, 8); break;\n"
	"  }\n"
	"}\n"
	"\n"
	"static double\n"
	"get(const Buffer *b, const void *p, int64_t i)\n"
	"{\n"
	"  const char *q = (const char *)p + i * b->bytes;\n"
	"  union { uint8_t u8; int8_t i8; uint16_t u16; int16_t i16; uint32_t u32; int32_t i32; uint64_t u64; int64_t i64;\n"
	"          float f; double d; } x;\n"
	"\n"
	"  memcpy(&x, q, b->bytes);\n"
	"  switch (b->kind) {\n"
	"  case K_BOOL: case K_U8: return x.u8;\n"
	"  case K_I8: return x.i8;\n"
	"  case K_I16: return x.i16;\n"
	"  case K_U16: return x.u16;\n"
	"  case K_I32: return x.i32;\n"
	"  case K_U32: return x.u32;\n"
	"  case K_I64: return (double)x.i64;\n"
	"  case K_U64: return (double)x.u64;\n"
	"  case K_F16: return decode(x.u16, 5, 10);\n"
	"  case K_BF16: return decode(x.u16, 8, 7);\n"
	"  case K_F32: return x.f;\n"
	"  default: return x.d;\n"
	"  }\n"
	"}\n"
	"\n"
	"/* input b (buffer number i), drawn as tessel draws an unbound input */\n"
	"static void\n"
	"draw(const Buffer *b, int i, void *p)\n"
	"{\n"
	"  int64_t j;\n"
	"\n"
	"  for (j = 0; j < b->numel; j++) {\n"
	"    uint64_t v = threefry((uint64_t)j, (uint64_t)i + 1);\n"
	"\n"
	"    if (b->kind >= K_F16)\n"
	"      put(b, p, j, (double)(v >> 11) / 9007199254740992.0, 0);\n"
	"    else\n"
	"      put(b, p, j, 0, (int64_t)(v % 7));\n"
	"  }\n"
	"}\n"
	"\n"
	"static void *\n"
	"alloc(size_t n)\n"
	"{\n"
	"  void *p = calloc(n ? n : 1, 1);\n"
	"\n"
	"  if (!p) {\n"
	"    fprintf(stderr, \"out of memory (%zu bytes)\\n\", n);\n"
	"    exit(2);\n"
	"  }\n"
	"  return p;\n"
	"}\n"
	"\n"
	"static void\n"
	"read_file(const char *prefix, const Buffer *b, void *p)\n"
	"{\n"
	"  char path[256];\n"
	"  size_t n = (size_t)b->numel * b->bytes;\n"
	"  FILE *f;\n"
	"\n"
	"  snprintf(path, sizeof path, \"%s_%s.bin\", prefix, b->name);\n"
	"  if (!(f = fopen(path, \"rb\")) || fread(p, 1, n, f) != n) {\n"
	"    fprintf(stderr, \"cannot read %zu bytes from %s\\n\", n, path);\n"
	"    exit(2);\n"
	"  }\n"
	"  fclose(f);\n"
	"}\n"
	"\n"
	"/* output b against the interpreter's: 0 when it matches */\n"
	"static int\n"
	"compare(const Buffer *b, const void *got, const void *ref)\n"
	"{\n"
	"  int64_t j, bad = 0, first = -1;\n"
	"  double worst = 0;\n"
	"\n"
	"  for (j = 0; j < b->numel; j++) {\n"
	"    double g = get(b, got, j), r = get(b, ref, j), err;\n"
	"\n"
	"    if (memcmp((const char *)got + j * b->bytes, (const char *)ref + j * b->bytes, b->bytes) == 0\n"
	"    || (isnan(g) && isnan(r)))\n"
	"      continue;\n"
	"    err = fabs(g - r) / (fabs(r) > 1 ? fabs(r) : 1);\n"
	"    if (b->tol > 0 && err <= b->tol) {\n"
	"      worst = err > worst ? err : worst;\n"
	"      continue;\n"
	"    }\n"
	"    if (first < 0)\n"
	"      first = j;\n"
	"    bad++;\n"
	"  }\n"
	"  if (bad) {\n"
	"    printf(\"  %s: MISMATCH at %lld of %lld elements; first [%lld]: got %.9g, interpreter %.9g\\n\", b->name,\n"
	"           (long long)bad, (long long)b->numel, (long long)first, get(b, got, first), get(b, ref, first));\n"
	"    return 1;\n"
	"  }\n"
	"  if (worst > 0)\n"
	"    printf(\"  %s: match, %lld elements within %.3g of the interpreter's (largest error %.3g)\\n\", b->name,\n"
	"           (long long)b->numel, b->tol, worst);\n"
	"  else\n"
	"    printf(\"  %s: match, %lld elements bit for bit\\n\", b->name, (long long)b->numel);\n"
	"  return 0;\n"
	"}\n"
	"\n"
	"static int\n"
	"cmp_double(const void *a, const void *b)\n"
	"{\n"
	"  double x = *(const double *)a, y = *(const double *)b;\n"
	"\n"
	"  return x < y ? -1 : x > y;\n"
	"}\n"
	"\n"
	"static double\n"
	"median(double *t, int n)\n"
	"{\n"
	"  qsort(t, (size_t)n, sizeof *t, cmp_double);\n"
	"  return n % 2 ? t[n / 2] : (t[n / 2 - 1] + t[n / 2]) / 2;\n"
	"}\n";

static const char *
kind(DType t)
{
	switch (t) {
	case DT_BOOL: return "K_BOOL";
	case DT_INT8: return "K_I8";
	case DT_INT16: return "K_I16";
	case DT_INT32: return "K_I32";
	case DT_INT64: case DT_INDEX: return "K_I64";
	case DT_UINT8: return "K_U8";
	case DT_UINT16: return "K_U16";
	case DT_UINT32: return "K_U32";
	case DT_UINT64: return "K_U64";
	case DT_FLOAT16: return "K_F16";
	case DT_BFLOAT16: return "K_BF16";
	case DT_FLOAT32: return "K_F32";
	default: return "K_F64";
	}
}

typedef struct Gen {
	const Kernel *k;
	Dialect d;
	const char *src;          /* kernel.c, kernel.cu, kernel.cl */
	const int *drawn;         /* per buffer: an input the host draws */
	const double *tol;        /* per buffer: an output's tolerance */
	int reps, warmup;
	int place, take;          /* tessel_place and tessel_take exist */
	const GpuLaunches *L;     /* CUDA, OpenCL */
} Gen;

static void
head(Buf *b, const Gen *g, const char *what)
{
	const Kernel *k = g->k;
	int i;

	emit(b, "/*\n** A tessel harness: %s, the kernel in %s, with stage%s", what, g->src, k->nstage == 1 ? "" : "s");
	for (i = 0; i < k->nstage; i++)
		emit(b, "%s%s", i ? ", " : " ", k->stage[i].name);
	emit(b, ".\n"
	     "** `make` builds and runs it: inputs drawn as tessel draws them (or read from in_*.bin),\n"
	     "** one run checked against the interpreter's outputs (ref_*.bin), then the median time of\n"
	     "** %d runs after %d warm-up runs. Exit status 0 when every output matches.\n*/\n", g->reps, g->warmup);
}

/* The buffer table and the run counts. */
static void
table(Buf *b, const Gen *g)
{
	const Kernel *k = g->k;
	char nm[K_NAME + 8];
	int i;

	emit(b, "\nenum { NBUF = %d, REPS = %d, WARMUP = %d };\n\n", k->nbuf, g->reps, g->warmup);
	emit(b, "static const Buffer buf[%d] = {\n", k->nbuf ? k->nbuf : 1);
	for (i = 0; i < k->nbuf; i++) {
		const KBuf *kb = &k->buf[i];

		sanitize(kb->name, nm, sizeof nm);
		emit(b, "  { \"%s\", '%c', %s, %d, %lldLL, %lldLL, %d, %d, %.17g },\n", nm,
		     kb->role == KB_INPUT ? 'i' : kb->role == KB_OUTPUT ? 'o' : 't', kind(kb->dtype), dtype_bytes(kb->dtype),
		     (long long)emit_numel(kb), (long long)kb->size, kb->scope == AS_GLOBAL, g->drawn[i], g->tol[i]);
	}
	if (!k->nbuf)
		emit(b, "  { \"none\", 't', K_F32, 4, 0LL, 0LL, 0, 0, 0 },\n");
	emit(b, "};\n");
}

static void
copies_decl(Buf *b, const Gen *g, const char *ext)
{
	if (g->place)
		emit(b, "%sint tessel_place(int b, void *dst, const void *src);\n", ext);
	if (g->take)
		emit(b, "%sint tessel_take(int b, void *dst, const void *src);\n", ext);
	emit(b, "#define PLACE(b, d, s) %s\n#define TAKE(b, d, s) %s\n", g->place ? "tessel_place(b, d, s)" : "0",
	     g->take ? "tessel_take(b, d, s)" : "0");
}

/* The host side before the first run: storage for the global buffers, inputs placed. */
static const char setup[] =
	"  for (i = 0; i < NBUF; i++) {\n"
	"    const Buffer *b = &buf[i];\n\n"
	"    store[i] = host[i] = ref[i] = NULL;\n"
	"    if (!b->global)\n      continue;\n"
	"    store[i] = alloc((size_t)b->size * b->bytes);\n"
	"    host[i] = alloc((size_t)b->numel * b->bytes);\n"
	"    if (b->role != 'i')\n      continue;\n"
	"    if (b->drawn)\n      draw(b, i, host[i]);\n    else\n      read_file(\"in\", b, host[i]);\n"
	"    if (!PLACE(i, store[i], host[i]))\n"
	"      memcpy(store[i], host[i], (size_t)b->numel * b->bytes);\n"
	"  }\n";

/* Outputs from storage into row-major order, compared. */
static const char check[] =
	"  for (i = 0; i < NBUF; i++) {\n"
	"    const Buffer *b = &buf[i];\n\n"
	"    if (b->role != 'o')\n      continue;\n"
	"    if (!TAKE(i, host[i], store[i]))\n"
	"      memcpy(host[i], store[i], (size_t)b->numel * b->bytes);\n"
	"    ref[i] = alloc((size_t)b->numel * b->bytes);\n"
	"    read_file(\"ref\", b, ref[i]);\n"
	"    bad += compare(b, host[i], ref[i]);\n"
	"  }\n";

static const char report[] =
	"  printf(\"  time: median %.4g ms of %d runs, after %d warm-up runs\\n\", median(t, REPS) * 1e3, REPS, WARMUP);\n"
	"  printf(\"%s\\n\", bad ? \"MISMATCH\" : \"match\");\n"
	"  for (i = 0; i < NBUF; i++) {\n"
	"    free(store[i]);\n    free(host[i]);\n    free(ref[i]);\n"
	"  }\n";

static const char includes[] =
	"#include <math.h>\n#include <stdint.h>\n#include <stdio.h>\n#include <stdlib.h>\n#include <string.h>\n"
	"#include <time.h>\n";

static const char clock_fn[] =
	"\nstatic double\nnow(void)\n{\n  struct timespec t;\n\n"
	"  clock_gettime(CLOCK_MONOTONIC, &t);\n"
	"  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;\n}\n";

static void
main_c(Buf *b, const Gen *g)
{
	head(b, g, "C");
	emit(b, "#define _POSIX_C_SOURCE 200809L\n%s\n%s", includes, runtime);
	table(b, g);
	emit(b, "\nvoid tessel_kernel(void **bufs);\n");
	copies_decl(b, g, "");
	emit(b, "%s", clock_fn);
	emit(b, "\nint\nmain(void)\n{\n  void *store[NBUF + 1], *host[NBUF + 1], *ref[NBUF + 1];\n"
	     "  double t[REPS];\n  int i, bad = 0;\n\n"
	     "  printf(\"tessel harness (c): %s\\n\");\n%s"
	     "  tessel_kernel(store);\n%s"
	     "  for (i = 0; i < WARMUP; i++)\n    tessel_kernel(store);\n"
	     "  for (i = 0; i < REPS; i++) {\n    double t0 = now();\n\n"
	     "    tessel_kernel(store);\n    t[i] = now() - t0;\n  }\n%s"
	     "  return bad != 0;\n}\n", g->src, setup, check, report);
}

static void
main_cuda(Buf *b, const Gen *g)
{
	head(b, g, "CUDA");
	emit(b, "%s#include <cuda_runtime.h>\n\n%s", includes, runtime);
	table(b, g);
	emit(b, "\nextern \"C\" void tessel_launch(void **dbufs, cudaStream_t s);\n");
	copies_decl(b, g, "extern \"C\" ");
	emit(b, "\n/* every CUDA call checked: exit status 0 proves nothing otherwise */\n"
	     "#define CK(x) ck((x), #x, __LINE__)\n\n"
	     "static void\nck(cudaError_t e, const char *what, int line)\n{\n"
	     "  if (e != cudaSuccess) {\n"
	     "    fprintf(stderr, \"main.cu:%%d: %%s: %%s\\n\", line, what, cudaGetErrorString(e));\n"
	     "    exit(2);\n  }\n}\n");
	emit(b, "\nint\nmain(void)\n{\n  void *store[NBUF + 1], *host[NBUF + 1], *ref[NBUF + 1], *dev[NBUF + 1];\n"
	     "  double t[REPS];\n  int i, bad = 0, dv;\n  cudaDeviceProp prop;\n  cudaStream_t s;\n"
	     "  cudaEvent_t e0, e1;\n\n"
	     "  CK(cudaGetDevice(&dv));\n  CK(cudaGetDeviceProperties(&prop, dv));\n"
	     "  printf(\"tessel harness (cuda): %s on %%s\\n\", prop.name);\n"
	     "  CK(cudaStreamCreate(&s));\n  CK(cudaEventCreate(&e0));\n  CK(cudaEventCreate(&e1));\n%s"
	     "  /* device storage: zeros, inputs placed */\n"
	     "  for (i = 0; i < NBUF; i++) {\n    dev[i] = NULL;\n    if (!buf[i].global)\n      continue;\n"
	     "    CK(cudaMalloc(&dev[i], (size_t)(buf[i].size ? buf[i].size : 1) * buf[i].bytes));\n"
	     "    CK(cudaMemcpy(dev[i], store[i], (size_t)buf[i].size * buf[i].bytes, cudaMemcpyHostToDevice));\n"
	     "  }\n"
	     "  tessel_launch(dev, s);\n  CK(cudaGetLastError());\n  CK(cudaStreamSynchronize(s));\n"
	     "  for (i = 0; i < NBUF; i++)\n    if (buf[i].role == 'o')\n"
	     "      CK(cudaMemcpy(store[i], dev[i], (size_t)buf[i].size * buf[i].bytes, cudaMemcpyDeviceToHost));\n%s"
	     "  for (i = 0; i < WARMUP; i++) {\n    tessel_launch(dev, s);\n    CK(cudaGetLastError());\n  }\n"
	     "  CK(cudaStreamSynchronize(s));\n"
	     "  for (i = 0; i < REPS; i++) {\n    float ms;\n\n"
	     "    CK(cudaEventRecord(e0, s));\n    tessel_launch(dev, s);\n    CK(cudaGetLastError());\n"
	     "    CK(cudaEventRecord(e1, s));\n    CK(cudaEventSynchronize(e1));\n"
	     "    CK(cudaEventElapsedTime(&ms, e0, e1));\n    t[i] = ms * 1e-3;\n  }\n%s"
	     "  for (i = 0; i < NBUF; i++)\n    if (dev[i])\n      CK(cudaFree(dev[i]));\n"
	     "  return bad != 0;\n}\n", g->src, setup, check, report);
}

static void
main_opencl(Buf *b, const Gen *g)
{
	const GpuLaunches *L = g->L;
	int i, j, maxarg = 1;

	head(b, g, "OpenCL");
	emit(b, "#define _POSIX_C_SOURCE 200809L\n#define CL_TARGET_OPENCL_VERSION 120\n%s#include <CL/cl.h>\n\n%s",
	     includes, runtime);
	table(b, g);
	if (gpu_layout_copies(b, g->k, "static ") > 0)
		emit(b, "\n");
	copies_decl(b, g, "static ");
	for (i = 0; i < L->n; i++)
		maxarg = L->l[i].narg > maxarg ? L->l[i].narg : maxarg;
	emit(b, "\n/* the launches, in order: global size grid * block, local size block, arguments by buffer */\n"
	     "enum { NLAUNCH = %d, MAXARG = %d };\n\n"
	     "static const struct Launch {\n  const char *name;\n  size_t grid[3], block[3];\n  int narg, arg[MAXARG];\n"
	     "} launch[%d] = {\n", L->n, maxarg, L->n ? L->n : 1);
	for (i = 0; i < L->n; i++) {
		const GpuLaunch *l = &L->l[i];
		char nm[K_NAME + 8];

		sanitize(l->name, nm, sizeof nm);
		emit(b, "  { \"%s\", { %lld, %lld, %lld }, { %lld, %lld, %lld }, %d, {", nm, (long long)l->grid[0],
		     (long long)l->grid[1], (long long)l->grid[2], (long long)l->block[0], (long long)l->block[1],
		     (long long)l->block[2], l->narg);
		for (j = 0; j < l->narg; j++)
			emit(b, "%s %d", j ? "," : "", l->arg[j]);
		emit(b, "%s } },\n", l->narg ? "" : " 0");
	}
	if (!L->n)
		emit(b, "  { \"none\", { 1, 1, 1 }, { 1, 1, 1 }, 0, { 0 } },\n");
	emit(b, "};\n%s", clock_fn);
	emit(b, "\n#define CK(x) ck((x), #x, __LINE__)\n\n"
	     "static void\nck(cl_int e, const char *what, int line)\n{\n"
	     "  if (e != CL_SUCCESS) {\n"
	     "    fprintf(stderr, \"main.c:%%d: %%s: OpenCL error %%d\\n\", line, what, (int)e);\n"
	     "    exit(2);\n  }\n}\n\n"
	     "static char *\nslurp(const char *path, size_t *n)\n{\n  FILE *f = fopen(path, \"rb\");\n  char *s;\n  long len;\n\n"
	     "  if (!f || fseek(f, 0, SEEK_END) != 0 || (len = ftell(f)) < 0 || fseek(f, 0, SEEK_SET) != 0) {\n"
	     "    fprintf(stderr, \"cannot read %%s\\n\", path);\n    exit(2);\n  }\n"
	     "  s = (char *)alloc((size_t)len + 1);\n"
	     "  *n = fread(s, 1, (size_t)len, f);\n  fclose(f);\n  return s;\n}\n\n"
	     "/* every stage once, to the queue's end */\n"
	     "static void\nrun(cl_command_queue q, cl_kernel *kn)\n{\n  int j, d;\n\n"
	     "  for (j = 0; j < NLAUNCH; j++) {\n    size_t global[3];\n\n"
	     "    for (d = 0; d < 3; d++)\n      global[d] = launch[j].grid[d] * launch[j].block[d];\n"
	     "    CK(clEnqueueNDRangeKernel(q, kn[j], 3, NULL, global, launch[j].block, 0, NULL, NULL));\n"
	     "  }\n  CK(clFinish(q));\n}\n");
	emit(b, "\nint\nmain(void)\n{\n  void *store[NBUF + 1], *host[NBUF + 1], *ref[NBUF + 1];\n"
	     "  cl_mem mem[NBUF + 1];\n  cl_kernel kn[NLAUNCH + 1];\n  cl_platform_id plat[16];\n"
	     "  cl_device_id dv = NULL;\n  cl_uint np = 0, nd = 0, u;\n  cl_device_fp_config fp = 0;\n"
	     "  cl_context ctx;\n  cl_command_queue q;\n  cl_program prog;\n  cl_int err;\n"
	     "  char name[256] = \"\", *src, log[16384];\n  const char *text;\n  size_t n;\n"
	     "  double t[REPS];\n  int i, j, bad = 0;\n\n"
	     "  CK(clGetPlatformIDs(16, plat, &np));\n"
	     "  for (u = 0; u < np && u < 16 && !dv; u++)\n"
	     "    if (clGetDeviceIDs(plat[u], CL_DEVICE_TYPE_ALL, 1, &dv, &nd) != CL_SUCCESS || !nd)\n      dv = NULL;\n"
	     "  if (!dv) {\n    fprintf(stderr, \"no OpenCL device\\n\");\n    return 2;\n  }\n"
	     "  CK(clGetDeviceInfo(dv, CL_DEVICE_NAME, sizeof name - 1, name, NULL));\n"
	     "  CK(clGetDeviceInfo(dv, CL_DEVICE_SINGLE_FP_CONFIG, sizeof fp, &fp, NULL));\n"
	     "  printf(\"tessel harness (opencl): %s on %%s\\n\", name);\n"
	     "  ctx = clCreateContext(NULL, 1, &dv, NULL, NULL, &err);\n  CK(err);\n"
	     "  q = clCreateCommandQueue(ctx, dv, 0, &err);\n  CK(err);\n"
	     "  src = slurp(\"%s\", &n);\n  text = src;\n"
	     "  prog = clCreateProgramWithSource(ctx, 1, &text, &n, &err);\n  CK(err);\n"
	     "  /* OpenCL's float / and sqrt may be off by 2.5 and 3 ulp unless asked */\n"
	     "  if (clBuildProgram(prog, 1, &dv, fp & CL_FP_CORRECTLY_ROUNDED_DIVIDE_SQRT ?\n"
	     "                     \"-cl-fp32-correctly-rounded-divide-sqrt\" : \"\", NULL, NULL) != CL_SUCCESS) {\n"
	     "    clGetProgramBuildInfo(prog, dv, CL_PROGRAM_BUILD_LOG, sizeof log - 1, log, NULL);\n"
	     "    fprintf(stderr, \"%s does not build:\\n%%s\\n\", log);\n    return 2;\n  }\n%s"
	     "  for (i = 0; i < NBUF; i++) {\n    mem[i] = NULL;\n    if (!buf[i].global)\n      continue;\n"
	     "    mem[i] = clCreateBuffer(ctx, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR,\n"
	     "                            (size_t)(buf[i].size ? buf[i].size : 1) * buf[i].bytes, store[i], &err);\n"
	     "    CK(err);\n  }\n"
	     "  for (j = 0; j < NLAUNCH; j++) {\n"
	     "    kn[j] = clCreateKernel(prog, launch[j].name, &err);\n    CK(err);\n"
	     "    for (i = 0; i < launch[j].narg; i++)\n"
	     "      CK(clSetKernelArg(kn[j], (cl_uint)i, sizeof(cl_mem), &mem[launch[j].arg[i]]));\n  }\n"
	     "  run(q, kn);\n"
	     "  for (i = 0; i < NBUF; i++)\n    if (buf[i].role == 'o')\n"
	     "      CK(clEnqueueReadBuffer(q, mem[i], CL_TRUE, 0, (size_t)buf[i].size * buf[i].bytes, store[i], 0, NULL,\n"
	     "                             NULL));\n%s"
	     "  for (i = 0; i < WARMUP; i++)\n    run(q, kn);\n"
	     "  for (i = 0; i < REPS; i++) {\n    double t0 = now();\n\n    run(q, kn);\n    t[i] = now() - t0;\n  }\n%s"
	     "  for (j = 0; j < NLAUNCH; j++)\n    clReleaseKernel(kn[j]);\n"
	     "  for (i = 0; i < NBUF; i++)\n    if (mem[i])\n      clReleaseMemObject(mem[i]);\n"
	     "  clReleaseProgram(prog);\n  clReleaseCommandQueue(q);\n  clReleaseContext(ctx);\n  free(src);\n"
	     "  return bad != 0;\n}\n", g->src, g->src, g->src, setup, check, report);
}


/* ---- Triton: run.py ---- */

/*
** The Triton tolerance of an output of dtype t: |got - ref| <= atol + rtol *
** |ref|. float32: Triton's exp2, log2 and sin are the device's approximate
** ones (a few units in the last place) and its reductions add in a tree, not
** in the interpreter's order: 1e-4 relative bounds the reassociation of
** sums of ~10^4 terms of one sign, 1e-5 absolute the cancellation near 0.
** float64: the same in double. 16-bit floats: the interpreter rounds every
** operation to the dtype, Triton computes some in float32: 1e-2 both.
** Integers and bool: exact.
*/
static void
triton_tol(DType t, double *rtol, double *atol)
{
	switch (t) {
	case DT_FLOAT32: *rtol = 1e-4; *atol = 1e-5; break;
	case DT_FLOAT64: *rtol = 1e-9; *atol = 1e-12; break;
	case DT_FLOAT16: case DT_BFLOAT16: *rtol = 1e-2; *atol = 1e-2; break;
	default: *rtol = 0; *atol = 0; break;
	}
}

static const char *
npname(DType t)
{
	switch (t) {
	case DT_BOOL: return "bool";
	case DT_INT8: return "int8";
	case DT_INT16: return "int16";
	case DT_INT32: return "int32";
	case DT_INT64: case DT_INDEX: return "int64";
	case DT_UINT8: return "uint8";
	case DT_UINT16: return "uint16";
	case DT_UINT32: return "uint32";
	case DT_UINT64: return "uint64";
	case DT_FLOAT16: return "float16";
	case DT_BFLOAT16: return "bfloat16";
	case DT_FLOAT32: return "float32";
	default: return "float64";
	}
}

static const char run_py[] =
	"\n\ndef main():\n"
	"    interpret = os.environ.get(\"TRITON_INTERPRET\") == \"1\"\n"
	"    try:\n"
	"        import torch\n"
	"    except ImportError:\n"
	"        torch = None\n"
	"    if not interpret and (torch is None or not torch.cuda.is_available()):\n"
	"        print(\"tessel harness (triton): no CUDA device (torch %s); `make interpret` runs Triton's CPU \"\n"
	"              \"interpreter\" % (\"missing\" if torch is None else \"sees none\"))\n"
	"        return 2\n"
	"    if interpret:   # padded lanes divide by zero and are masked: numpy need not say so\n"
	"        warnings.filterwarnings(\"ignore\", category=RuntimeWarning)\n"
	"    import triton\n"
	"    import triton.testing\n"
	"    import kernel\n"
	"\n"
	"    bufs, host = [], []\n"
	"    for name, role, dt, numel, size, tol in BUFS:\n"
	"        if role == \"i\":\n"
	"            logical = read(\"in\", name, dt, numel)\n"
	"        elif dt.startswith(\"float\") or dt == \"bfloat16\":\n"
	"            logical = np.full(numel, np.nan, dtype=np.float64)   # poisoned: an element never written shows\n"
	"        else:\n"
	"            logical = np.full(numel, 0 if dt == \"bool\" else 123, dtype=host_dtype(dt))\n"
	"        store = np.zeros(size, dtype=host_dtype(dt))\n"
	"        if role == \"t\":\n"
	"            store[:] = 0\n"
	"        elif os.path.exists(\"off_%s.bin\" % name):   # stored through its layout\n"
	"            store[np.fromfile(\"off_%s.bin\" % name, dtype=np.int64)] = logical\n"
	"        else:\n"
	"            store[:numel] = logical\n"
	"        host.append(store)\n"
	"        bufs.append(device(torch, store, dt, interpret))\n"
	"\n"
	"    kernel.tessel_launch(bufs)\n"
	"    if not interpret:\n"
	"        torch.cuda.synchronize()\n"
	"    bad, notes = 0, []\n"
	"    for (name, role, dt, numel, size, tol), b in zip(BUFS, bufs):\n"
	"        if role != \"o\":\n"
	"            continue\n"
	"        got = fetch(torch, b, dt)\n"
	"        if os.path.exists(\"off_%s.bin\" % name):\n"
	"            got = got[np.fromfile(\"off_%s.bin\" % name, dtype=np.int64)]\n"
	"        else:\n"
	"            got = got[:numel]\n"
	"        ref = read(\"ref\", name, dt, numel)\n"
	"        rtol, atol = tol\n"
	"        if got.dtype == np.float64:\n"
	"            with np.errstate(invalid=\"ignore\"):\n"
	"                err = np.abs(got - ref)\n"
	"                ok = (got == ref) | (np.isnan(got) & np.isnan(ref)) | (err <= atol + rtol * np.abs(ref))\n"
	"            worst = float(np.nanmax(np.where(got == ref, 0, err))) if numel else 0.0\n"
	"        else:   # integers and bool exactly, in their own dtype: an int64 need not fit a double\n"
	"            ok = got == ref\n"
	"            worst = 0.0\n"
	"        if not ok.all():\n"
	"            i = int(np.argmin(ok))\n"
	"            bad += 1\n"
	"            notes.append(\"%s MISMATCH at %d of %d elements, first [%d]: got %s, interpreter %s\"\n"
	"                         % (name, int((~ok).sum()), numel, i, show(got[i]), show(ref[i])))\n"
	"        else:\n"
	"            notes.append(\"%s match (%d elements, largest error %.3g, rtol %g atol %g)\" % (name, numel, worst, rtol, atol))\n"
	"    if interpret:\n"
	"        where, timing = \"Triton's CPU interpreter\", \"time: not measured (interpreter)\"\n"
	"    else:\n"
	"        where = torch.cuda.get_device_name()\n"
	"        ms = triton.testing.do_bench(lambda: kernel.tessel_launch(bufs), return_mode=\"median\")\n"
	"        timing = \"median %.4g ms (triton.testing.do_bench)\" % ms\n"
	"    print(\"tessel harness (triton): kernel.py on %s: %s; %s; %s\" % (where, \"; \".join(notes), timing,\n"
	"                                                             \"MISMATCH\" if bad else \"match\"))\n"
	"    return 1 if bad else 0\n"
	"\n\n"
	"def host_dtype(dt):\n"
	"    \"\"\"floats are held as float64 on the host, integers and bool as themselves\"\"\"\n"
	"    return np.float64 if dt.startswith(\"float\") or dt == \"bfloat16\" else np.dtype(dt)\n"
	"\n\n"
	"def show(v):\n"
	"    return \"%.9g\" % v if isinstance(v, np.floating) else str(v)\n"
	"\n\n"
	"def read(prefix, name, dt, numel):\n"
	"    \"\"\"prefix_name.bin as host values (bfloat16: the upper half of a float32)\"\"\"\n"
	"    path = \"%s_%s.bin\" % (prefix, name)\n"
	"    if dt == \"bfloat16\":\n"
	"        raw = np.fromfile(path, dtype=np.uint16).astype(np.uint32) << 16\n"
	"        return raw.view(np.float32).astype(np.float64)\n"
	"    return np.fromfile(path, dtype=dt, count=numel).astype(host_dtype(dt))\n"
	"\n\n"
	"class Host:\n"
	"    \"\"\"A numpy array as Triton's interpreter takes a tensor (no torch needed)\"\"\"\n"
	"\n"
	"    def __init__(self, a):\n"
	"        self.a = a\n"
	"        self.dtype = a.dtype\n"
	"        self.device = \"cpu\"\n"
	"\n"
	"    def data_ptr(self):\n"
	"        return self.a.ctypes.data\n"
	"\n"
	"    def cpu(self):\n"
	"        return self\n"
	"\n"
	"    def to(self, device):\n"
	"        return self\n"
	"\n"
	"    @property\n"
	"    def data(self):\n"
	"        return self\n"
	"\n"
	"    def copy_(self, other):\n"
	"        if other is not self:\n"
	"            self.a[...] = other.a\n"
	"\n\n"
	"def device(torch, store, dt, interpret):\n"
	"    if torch is None:\n"
	"        if dt == \"bfloat16\":\n"
	"            raise SystemExit(\"bfloat16 under the interpreter needs torch\")\n"
	"        return Host(store.astype(dt))\n"
	"    if dt == \"bfloat16\":\n"
	"        t = torch.from_numpy(store.astype(np.float32)).to(torch.bfloat16)\n"
	"    else:\n"
	"        t = torch.from_numpy(store.astype(dt))\n"
	"    return t if interpret else t.cuda()\n"
	"\n\n"
	"def fetch(torch, b, dt):\n"
	"    if isinstance(b, Host):\n"
	"        return b.a.astype(host_dtype(dt))\n"
	"    t = b.detach().cpu()\n"
	"    if dt == \"bfloat16\":\n"
	"        return t.to(torch.float64).numpy()\n"
	"    # the bytes, read as numpy reads the dtype (torch's unsigned types need not convert)\n"
	"    return t.contiguous().view(torch.uint8).numpy().view(dt).astype(host_dtype(dt))\n"
	"\n\n"
	"if __name__ == \"__main__\":\n"
	"    sys.exit(main())\n";

static void
main_triton(Buf *b, const Gen *g)
{
	const Kernel *k = g->k;
	char nm[K_NAME + 8];
	double rtol, atol;
	int i;

	emit(b, "\"\"\"\nA tessel harness: Triton, the kernel in kernel.py, with stage%s", k->nstage == 1 ? "" : "s");
	for (i = 0; i < k->nstage; i++)
		emit(b, "%s%s", i ? ", " : " ", k->stage[i].name);
	emit(b, ".\n`make` runs it on a CUDA GPU (torch and triton installed), `make interpret` on the CPU\n"
	     "through Triton's interpreter (TRITON_INTERPRET=1; numpy and triton suffice). It reads the\n"
	     "inputs (in_*.bin), poisons the outputs (NaN), launches tessel_launch once, compares every\n"
	     "output with the interpreter's (ref_*.bin) within |got - ref| <= atol + rtol * |ref|, times\n"
	     "the launch with triton.testing.do_bench (median) and prints one line. Exit status 0 when\n"
	     "every output matches.\n\"\"\"\nimport os\nimport sys\nimport warnings\n\nimport numpy as np\n\n"
	     "os.chdir(os.path.dirname(os.path.abspath(__file__)))\n"
	     "sys.path.insert(0, os.getcwd())\n\n"
	     "# name, role (i input, o output, t temporary), dtype, elements, elements of storage, (rtol, atol)\n"
	     "BUFS = [\n");
	for (i = 0; i < k->nbuf; i++) {
		const KBuf *kb = &k->buf[i];

		sanitize(kb->name, nm, sizeof nm);
		triton_tol(kb->dtype, &rtol, &atol);
		emit(b, "    (\"%s\", \"%c\", \"%s\", %lld, %lld, (%g, %g)),\n", nm,
		     kb->role == KB_INPUT ? 'i' : kb->role == KB_OUTPUT ? 'o' : 't', npname(kb->dtype),
		     (long long)emit_numel(kb), (long long)(kb->size ? kb->size : 1), rtol, atol);
	}
	emit(b, "]\n%s", run_py);
}

static void
makefile(Buf *b, const Gen *g, const EmitInfo *info)
{
	emit(b, "# A tessel harness: `make` builds the program and runs it; `make build` only builds it.\n");
	switch (g->d) {
	case D_C:
		if (info->fast)
			emit(b, "CC ?= cc\nCFLAGS ?= -O3 -march=native -fno-tree-sra\n"
			     "# fast source: reassociation and vector math functions; wrapping integers\n"
			     "FLAGS = -std=c11 -ffast-math -fwrapv%s\n\n", info->omp ? " -fopenmp" : "");
		else
			emit(b, "CC ?= cc\nCFLAGS ?= -O2 -march=native -fno-tree-sra\n"
			     "# the interpreter's values bit for bit: no contraction into FMAs, no folding that\n"
			     "# assumes the rounding mode, wrapping integers\n"
			     "FLAGS = -std=c11 -ffp-contract=off -frounding-math -fwrapv%s\n\n",
			     info->omp ? " -fopenmp" : info->simd ? " -fopenmp-simd" : "");
		emit(b, "run: main\n\t./main\n\nbuild: main\n\n"
		     "main: main.c kernel.c\n\t$(CC) $(FLAGS) $(CFLAGS) -o main main.c kernel.c -lm\n");
		break;
	case D_TRITON:
		emit(b, "PYTHON ?= python3\n\n"
		     "# on a CUDA GPU (torch and triton installed)\nrun:\n\t$(PYTHON) run.py\n\n"
		     "# on the CPU, through Triton's interpreter (numpy and triton suffice)\n"
		     "interpret:\n\tTRITON_INTERPRET=1 $(PYTHON) run.py\n\n"
		     "build:\n\t$(PYTHON) -c 'import ast; ast.parse(open(\"kernel.py\").read())'\n\n"
		     "clean:\n\trm -rf __pycache__\n\n.PHONY: run interpret build clean\n");
		return;
	case D_CUDA:
		if (kernel_has_wgmma(g->k))
			/* wgmma is sm_90a's: the arch-specific target, no PTX for later GPUs */
			emit(b, "NVCC ?= $(shell command -v nvcc 2>/dev/null || echo /usr/local/cuda/bin/nvcc)\nARCH ?= 90a\n"
			     "%s"
			     "run: main\n\t./main\n\nbuild: main\n\n"
			     "main: main.cu kernel.cu\n\t$(NVCC) $(FLAGS) -o main main.cu kernel.cu\n",
			     info->fast ? "# fast source: contraction into FMAs allowed\n"
			     "FLAGS = -gencode=arch=compute_$(ARCH),code=sm_$(ARCH) -O3\n\n"
			     : "# no contraction into FMAs: the interpreter rounds each operation\n"
			       "FLAGS = -gencode=arch=compute_$(ARCH),code=sm_$(ARCH) -O2 -fmad=false\n\n");
		else
			emit(b, "NVCC ?= $(shell command -v nvcc 2>/dev/null || echo /usr/local/cuda/bin/nvcc)\nARCH ?= sm_90\n"
			     "%s"
			     "run: main\n\t./main\n\nbuild: main\n\n"
			     "main: main.cu kernel.cu\n\t$(NVCC) $(FLAGS) -o main main.cu kernel.cu\n",
			     info->fast ? "# fast source: contraction into FMAs allowed\nFLAGS = -arch=$(ARCH) -O3\n\n"
			     : "# no contraction into FMAs: the interpreter rounds each operation\n"
			       "FLAGS = -arch=$(ARCH) -O2 -fmad=false\n\n");
		break;
	default:
		emit(b, "CC ?= cc\nCFLAGS ?= -O2\n\n"
		     "run: main\n\t./main\n\nbuild: main\n\n"
		     "main: main.c\n\t$(CC) -std=c11 $(CFLAGS) -o main main.c -lOpenCL -lm\n");
		break;
	}
	emit(b, "\nclean:\n\trm -f main\n\n.PHONY: run build clean\n");
}

/* ---- the export ---- */

/* off_<name>.bin: the storage offset of every element of kb, row-major logical order, int64 */
static int
write_offsets(Out *o, const KBuf *kb, const char *nm, Err *e)
{
	int64_t n = emit_numel(kb), i, *off, idx[T_MAXDIM];
	char name[K_NAME + 16];
	UBind bind[T_MAXDIM];
	UProg *p;
	int d, rc;

	for (d = 0; d < kb->ndim; d++) {
		bind[d].name = kb->lvar[d]->name;
		bind[d].value = idx[d] = 0;
	}
	if (!(p = uop_prog_new((const UOp *const *)&kb->layout, 1, bind, kb->ndim, e)))
		return -1;
	if (!(off = malloc((size_t)(n ? n : 1) * sizeof *off))) {
		uop_prog_free(p);
		return err_set(e, "export: out of memory");
	}
	for (i = 0; i < n; i++) {
		for (d = 0; d < kb->ndim; d++)
			bind[d].value = idx[d];
		if (uop_prog_run(p, bind, &off[i], e) < 0) {
			uop_prog_free(p);
			free(off);
			return -1;
		}
		for (d = kb->ndim - 1; d >= 0 && ++idx[d] == kb->shape[d]; d--)
			idx[d] = 0;
	}
	uop_prog_free(p);
	snprintf(name, sizeof name, "off_%s.bin", nm);
	rc = write_file(o, name, off, (size_t)n * sizeof *off);
	free(off);
	return rc;
}

int
backend_export(const Kernel *k, Dialect d, const char *dir, const BExportOpts *o, Err *e)
{
	BExportOpts dflt;
	Buf src, prog, mk;
	EmitInfo info;
	GpuLaunches L = { 0 };
	TBuf *bufs = NULL;
	int *drawn = NULL, i, rc = -1;
	double *tol = NULL;
	EKinds kd;
	Gen g;
	Out out;
	char name[K_NAME + 16];

	memset(&dflt, 0, sizeof dflt);
	if (!o)
		o = &dflt;
	e->msg[0] = 0;
	if (!k)
		return err_set(e, "export: no kernel");
	if (d != D_C && d != D_CUDA && d != D_OPENCL && d != D_TRITON)
		return err_set(e, "export: %s is not a dialect tessel exports (c, cuda, opencl, triton)", dialect_name(d));
	if (!dir || !*dir)
		return err_set(e, "export: no directory");
	buf_init(&src);
	buf_init(&prog);
	buf_init(&mk);
	memset(&info, 0, sizeof info);
	info.fast = o->fast;
	/* the source first: a kernel the dialect refuses writes nothing */
	if ((d == D_C ? emit_kernel(&src, k, &emit_c, &info, e) : d == D_TRITON ? triton_source(&src, k, e)
	     : gpu_source(&src, k, d, o->fast, &L, e)) < 0)
		goto out;
	if (!(bufs = calloc(k->nbuf ? k->nbuf : 1, sizeof *bufs)) || !(drawn = calloc(k->nbuf ? k->nbuf : 1, sizeof *drawn))
	|| !(tol = calloc(k->nbuf ? k->nbuf : 1, sizeof *tol))) {
		err_set(e, "export: out of memory");
		goto out;
	}
	/* the inputs: given, realized from the kernel's tensors, or drawn as tessel draws them */
	for (i = 0; i < k->nbuf; i++) {
		const KBuf *kb = &k->buf[i];
		int64_t n = emit_numel(kb);
		TBuf *t = &bufs[i];

		if (kb->role != KB_INPUT)
			continue;
		if (o->inputs && o->inputs[i].data) {
			if (o->inputs[i].dtype != kb->dtype || o->inputs[i].numel != n) {
				err_set(e, "export: input %s: %lld elements of %s given, %lld of %s declared", kb->name,
				        (long long)o->inputs[i].numel, dtype_name(o->inputs[i].dtype), (long long)n,
				        dtype_name(kb->dtype));
				goto out;
			}
			if (!(t->data = malloc(n ? (size_t)n * dtype_bytes(kb->dtype) : 1))) {
				err_set(e, "export: out of memory");
				goto out;
			}
			memcpy(t->data, o->inputs[i].data, (size_t)n * dtype_bytes(kb->dtype));
		} else if (kb->tensor && kb->tensor->op != OP_PARAM) {
			if (tensor_realize(kb->tensor, NULL, t, e) < 0)
				goto out;
		} else {
			if (!(t->data = malloc(n ? (size_t)n * dtype_bytes(kb->dtype) : 1))) {
				err_set(e, "export: out of memory");
				goto out;
			}
			backend_draw(k, i, t);
			drawn[i] = d != D_TRITON;   /* run.py reads every input: it draws none */
		}
		t->dtype = kb->dtype;
		t->ndim = kb->ndim;
		memcpy(t->shape, kb->shape, sizeof kb->shape);
		t->numel = n;
		t->axis = -1;
	}
	/* the interpreter's outputs */
	if (kernel_run(k, NULL, bufs, NULL, e) < 0)
		goto out;
	emit_kinds(k, &kd);
	for (i = 0; i < k->nbuf; i++)
		if (k->buf[i].role == KB_OUTPUT)
			tol[i] = o->fast ? backend_tolerance(k->buf[i].dtype) : harness_tol(d, &kd, k->buf[i].dtype);
	memset(&g, 0, sizeof g);
	g.k = k;
	g.d = d;
	g.src = d == D_C ? "kernel.c" : d == D_CUDA ? "kernel.cu" : d == D_TRITON ? "kernel.py" : "kernel.cl";
	g.drawn = drawn;
	g.tol = tol;
	g.reps = o->reps > 0 ? o->reps : 20;
	g.warmup = o->warmup > 0 ? o->warmup : o->warmup < 0 ? 0 : 3;
	g.L = &L;
	if (d == D_C) {
		g.place = info.place;
		g.take = info.take;
	} else
		for (i = 0; i < k->nbuf; i++)
			if (k->buf[i].scope == AS_GLOBAL && !gpu_row_major(&k->buf[i])) {
				g.place |= k->buf[i].role == KB_INPUT;
				g.take |= k->buf[i].role == KB_OUTPUT;
			}
	(d == D_C ? main_c : d == D_CUDA ? main_cuda : d == D_TRITON ? main_triton : main_opencl)(&prog, &g);
	makefile(&mk, &g, &info);
	if (src.oom || prog.oom || mk.oom) {
		err_set(e, "export: out of memory");
		goto out;
	}
	/* the files */
	if ((rc = export_mkdir(dir, e)) < 0)
		goto out;
	out.dir = dir;
	out.files = o->files;
	out.e = e;
	if ((rc = write_file(&out, g.src, src.s, src.len)) < 0
	|| (rc = write_file(&out, d == D_CUDA ? "main.cu" : d == D_TRITON ? "run.py" : "main.c", prog.s, prog.len)) < 0
	|| (rc = write_file(&out, "Makefile", mk.s, mk.len)) < 0)
		goto out;
	for (i = 0; i < k->nbuf; i++) {
		const KBuf *kb = &k->buf[i];
		char nm[K_NAME + 8];

		if (kb->role == KB_TEMP || (kb->role == KB_INPUT && drawn[i]))
			continue;
		sanitize(kb->name, nm, sizeof nm);
		snprintf(name, sizeof name, "%s_%s.bin", kb->role == KB_INPUT ? "in" : "ref", nm);
		if ((rc = write_file(&out, name, bufs[i].data, (size_t)emit_numel(kb) * dtype_bytes(kb->dtype))) < 0)
			goto out;
		/* run.py places and takes a buffer that is not row-major through its offsets */
		if (d == D_TRITON && !gpu_row_major(kb) && (rc = write_offsets(&out, kb, nm, e)) < 0)
			goto out;
	}
	rc = 0;
out:
	if (bufs)
		for (i = 0; i < k->nbuf; i++)
			tbuf_free(&bufs[i]);
	free(bufs);
	free(drawn);
	free(tol);
	buf_free(&src);
	buf_free(&prog);
	buf_free(&mk);
	gpu_launches_free(&L);
	return rc;
}
