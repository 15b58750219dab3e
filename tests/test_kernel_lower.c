/* test_kernel_lower.c - tensor graphs lowered to kernels, run by a naive serial evaluator and compared with tensor_realize. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../interp/kernel/kernel.h"
#include "prop.h"

static UCtx *C;

static int
setup(void **state)
{
	seed_rng();
	C = uctx_new();
	return C ? 0 : -1;
}

static int
teardown(void **state)
{
	uctx_free(C);
	return 0;
}

/* ---- a naive evaluator of kernels (the oracle's other half) ----
** A recursive walk of the statement tree, serial: loops bind their variable,
** IF runs its body where the gate holds, loads and stores check bounds and
** initialization. Values follow tensor_eval: each op in double (floats) or
** int64 (integers), then rounded or wrapped to the node's dtype. Expressions
** are cached per store (an epoch per node id: DAGs stay linear). */

typedef struct Val {
	double f;
	int64_t i;
} Val;

typedef struct Run {
	const Kernel *k;
	unsigned char **mem;   /* per buffer, size elements of its dtype */
	unsigned char **init;  /* per buffer, per element: written */
	int64_t *var;          /* loop variable values by node id */
	Val *cache;
	uint32_t *epoch;
	uint32_t now;
	char err[256];
} Run;

static int
isf(int t)
{
	return dtype_is_float((DType)t);
}

static double
rnd_to(int t, double x)
{
	unsigned char b[8];

	dtype_store_f((DType)t, b, x);
	return dtype_load_f((DType)t, b);
}

static Val ev(Run *r, const UOp *u);

/* the element offset of an INDEX node, or -1 (r->err set) */
static int64_t
offset(Run *r, const UOp *ix)
{
	const KBuf *b = &r->k->buf[ix->src[0]->arg[0]];
	UBind bind[T_MAXDIM];
	int64_t off;
	Err e = { "" };
	int i;

	if (ix->nsrc - 1 != b->ndim) {
		snprintf(r->err, sizeof r->err, "%s: %d indices for rank %d", b->name, ix->nsrc - 1, b->ndim);
		return -1;
	}
	for (i = 0; i < b->ndim; i++) {
		int64_t v = ev(r, ix->src[i + 1]).i;

		if (r->err[0])
			return -1;
		if (v < 0 || v >= b->shape[i]) {
			snprintf(r->err, sizeof r->err, "%s: index %lld out of [0, %lld) on axis %d", b->name,
			         (long long)v, (long long)b->shape[i], i);
			return -1;
		}
		bind[i].name = b->lvar[i]->name;
		bind[i].value = v;
	}
	if (uop_eval(b->layout, bind, b->ndim, &off, &e) < 0) {
		snprintf(r->err, sizeof r->err, "layout: %.200s", e.msg);
		return -1;
	}
	return off;
}

static Val
alu(const UOp *u, const Val *a)
{
	int t = u->dtype, st = u->op == OP_WHERE ? u->src[1]->dtype : u->src[0]->dtype;
	int uns = st == DT_UINT64;
	Val v = { 0, 0 };
	double x = a[0].f, y = u->nsrc > 1 ? a[1].f : 0;
	int64_t p = a[0].i, q = u->nsrc > 1 ? a[1].i : 0;

#define U(z) ((uint64_t)(z))
	if (u->op == OP_WHERE) {
		v = a[0].i ? a[1] : a[2];
		return v;
	}
	if (u->op == OP_CAST) {
		if (isf(t))
			v.f = rnd_to(t, isf(st) ? x : st == DT_UINT64 ? (double)U(p) : (double)p);
		else
			v.i = isf(st) ? dtype_ftoi((DType)t, x) : dtype_wrap((DType)t, p);
		return v;
	}
	if (isf(st)) {
		double z = NAN;

		switch (u->op) {
		case OP_NEG: z = -x; break;
		case OP_RECIP: z = 1.0 / x; break;
		case OP_TRUNC: z = trunc(x); break;
		case OP_EXP2: z = exp2(x); break;
		case OP_LOG2: z = log2(x); break;
		case OP_SIN: z = sin(x); break;
		case OP_SQRT: z = sqrt(x); break;
		case OP_ADD: z = x + y; break;
		case OP_SUB: z = x - y; break;
		case OP_MUL: z = x * y; break;
		case OP_POW: z = pow(x, y); break;
		case OP_IDIV: z = floor(x / y); break;
		case OP_MOD: z = fmod(x, y); if (z != 0 && (z < 0) != (y < 0)) z += y; break;
		case OP_MIN: z = x < y || isnan(x) ? x : y; break;
		case OP_MAX: z = x > y || isnan(x) ? x : y; break;
		case OP_MULACC: z = x * y + a[2].f; break;
		case OP_CMPLT: v.i = x < y; return v;
		case OP_CMPNE: v.i = x != y; return v;
		case OP_CMPEQ: v.i = x == y; return v;
		default: break;
		}
		v.f = rnd_to(t, z);
		return v;
	}
	switch (u->op) {
	case OP_NEG: v.i = (int64_t)(0 - U(p)); break;
	case OP_TRUNC: v.i = p; break;
	case OP_ADD: v.i = (int64_t)(U(p) + U(q)); break;
	case OP_SUB: v.i = (int64_t)(U(p) - U(q)); break;
	case OP_MUL: v.i = (int64_t)(U(p) * U(q)); break;
	case OP_MULACC: v.i = (int64_t)(U(p) * U(q) + U(a[2].i)); break;
	case OP_IDIV:
		if (uns)
			v.i = q ? (int64_t)(U(p) / U(q)) : 0;
		else if (uck_fdiv(p, q, &v.i) < 0)
			v.i = q == 0 ? 0 : p;
		break;
	case OP_MOD:
		if (uns)
			v.i = q ? (int64_t)(U(p) % U(q)) : 0;
		else if (uck_fmod(p, q, &v.i) < 0)
			v.i = 0;
		break;
	case OP_MIN: v.i = (uns ? U(p) < U(q) : p < q) ? p : q; break;
	case OP_MAX: v.i = (uns ? U(p) > U(q) : p > q) ? p : q; break;
	case OP_CMPLT: v.i = uns ? U(p) < U(q) : p < q; return v;
	case OP_CMPNE: v.i = p != q; return v;
	case OP_CMPEQ: v.i = p == q; return v;
	case OP_AND: v.i = p & q; break;
	case OP_OR: v.i = p | q; break;
	case OP_XOR: v.i = p ^ q; break;
	case OP_SHL: v.i = q < 0 || q > 63 ? 0 : (int64_t)(U(p) << q); break;
	case OP_SHR: v.i = q < 0 || q > 63 ? (uns || p >= 0 ? 0 : -1) : uns ? (int64_t)(U(p) >> q) : p >> q; break;
	case OP_THREEFRY: v.i = (int64_t)tensor_threefry(U(p), U(q)); break;
	default: break;
	}
	if (t != DT_INDEX)
		v.i = dtype_wrap((DType)t, v.i);
	return v;
#undef U
}

static Val
ev(Run *r, const UOp *u)
{
	Val v = { 0, 0 }, a[3];
	int i;

	if (r->err[0])
		return v;
	if (r->epoch[u->id] == r->now)
		return r->cache[u->id];
	switch (u->op) {
	case OP_CONST:
		if (isf(u->dtype))
			v.f = uop_const_value(u);
		else
			v.i = u->arg[0];
		break;
	case OP_VAR:
		v.i = r->var[u->id];
		break;
	case OP_LOAD: {
		const UOp *ix = u->src[0];
		int bi = (int)ix->src[0]->arg[0];
		int64_t off;

		if (u->nsrc > 1 && !ev(r, u->src[1]).i)
			break;   /* gated off: 0 */
		if ((off = offset(r, ix)) < 0)
			return v;
		if (!r->init[bi][off]) {
			snprintf(r->err, sizeof r->err, "uninitialized read of %s at %lld", r->k->buf[bi].name,
			         (long long)off);
			return v;
		}
		if (isf(u->dtype))
			v.f = dtype_load_f((DType)u->dtype, r->mem[bi] + off * dtype_bytes((DType)u->dtype));
		else
			v.i = dtype_load_i((DType)u->dtype, r->mem[bi] + off * dtype_bytes((DType)u->dtype));
		break;
	}
	default:
		if (!(uop_info[u->op].flags & U_ALU) || u->nsrc > 3) {
			snprintf(r->err, sizeof r->err, "evaluator: %s in an expression", uop_info[u->op].name);
			return v;
		}
		for (i = 0; i < u->nsrc; i++)
			a[i] = ev(r, u->src[i]);
		v = alu(u, a);
		break;
	}
	r->epoch[u->id] = r->now;
	r->cache[u->id] = v;
	return v;
}

static void
exec(Run *r, const UOp *s)
{
	int i;

	if (r->err[0])
		return;
	r->now++;
	switch (s->op) {
	case OP_END: {
		const UOp *var = krange_var(s->src[0]);
		int64_t n = krange_extent(s->src[0]), x;

		for (x = 0; x < n && !r->err[0]; x++) {
			r->var[var->id] = x;
			for (i = 1; i < s->nsrc; i++)
				exec(r, s->src[i]);
		}
		break;
	}
	case OP_IF:
		if (ev(r, s->src[0]).i)
			for (i = 1; i < s->nsrc; i++)
				exec(r, s->src[i]);
		break;
	case OP_STORE: {
		const UOp *ix = s->src[0];
		int bi = (int)ix->src[0]->arg[0];
		DType t = r->k->buf[bi].dtype;
		int64_t off;
		Val v;

		if (s->nsrc > 2 && !ev(r, s->src[2]).i)
			break;
		v = ev(r, s->src[1]);
		if ((off = offset(r, ix)) < 0 || r->err[0])
			break;
		if (isf(t))
			dtype_store_f(t, r->mem[bi] + off * dtype_bytes(t), v.f);
		else
			dtype_store_i(t, r->mem[bi] + off * dtype_bytes(t), v.i);
		r->init[bi][off] = 1;
		break;
	}
	case OP_BARRIER:
		break;
	default:
		snprintf(r->err, sizeof r->err, "evaluator: %s as a statement", uop_info[s->op].name);
		break;
	}
}

static void
run_free(Run *r)
{
	int i;

	for (i = 0; r->mem && i < r->k->nbuf; i++) {
		free(r->mem[i]);
		free(r->init[i]);
	}
	free(r->mem);
	free(r->init);
	free(r->var);
	free(r->cache);
	free(r->epoch);
}

/*
** Run k with its inputs realized from their tensor nodes (params bound by
** o); the output is returned row-major in out (the element values as
** doubles). 0, or -1 with msg.
*/
static int
run_kernel(const Kernel *k, const TEvalOpts *o, double **out, int64_t *nout, char *msg, size_t nmsg)
{
	Run r;
	size_t nn = uctx_nodes(k->c) + 1;
	int i, rc = -1, ob = -1;
	int64_t j;

	memset(&r, 0, sizeof r);
	r.k = k;
	r.mem = calloc(k->nbuf, sizeof *r.mem);
	r.init = calloc(k->nbuf, sizeof *r.init);
	r.var = calloc(nn, sizeof *r.var);
	r.cache = calloc(nn, sizeof *r.cache);
	r.epoch = calloc(nn, sizeof *r.epoch);
	if (!r.mem || !r.init || !r.var || !r.cache || !r.epoch)
		goto done;
	for (i = 0; i < k->nbuf; i++) {
		const KBuf *b = &k->buf[i];

		r.mem[i] = calloc(b->size, dtype_bytes(b->dtype));
		r.init[i] = calloc(b->size, 1);
		if (!r.mem[i] || !r.init[i])
			goto done;
		if (b->role == KB_OUTPUT)
			ob = i;
		if (b->role == KB_INPUT) {
			TBuf t;
			Err e = { "" };

			if (tensor_realize(b->tensor, o, &t, &e) < 0) {
				snprintf(msg, nmsg, "input %s: %.300s", b->name, e.msg);
				goto done;
			}
			if (t.numel != b->size || t.dtype != b->dtype) {
				snprintf(msg, nmsg, "input %s: %lld %s elements for %lld %s", b->name,
				         (long long)t.numel, dtype_name(t.dtype), (long long)b->size, dtype_name(b->dtype));
				tbuf_free(&t);
				goto done;
			}
			memcpy(r.mem[i], t.data, b->size * dtype_bytes(b->dtype));
			memset(r.init[i], 1, b->size);
			tbuf_free(&t);
		}
	}
	for (i = 0; i < k->nstage && !r.err[0]; i++)
		exec(&r, k->stage[i].body);
	if (r.err[0]) {
		snprintf(msg, nmsg, "run: %.250s", r.err);
		goto done;
	}
	if (ob < 0) {
		snprintf(msg, nmsg, "no output buffer");
		goto done;
	}
	*nout = k->buf[ob].size;
	if (!(*out = malloc((*nout ? *nout : 1) * sizeof **out)))
		goto done;
	for (j = 0; j < *nout; j++) {
		if (!r.init[ob][j]) {
			snprintf(msg, nmsg, "output element %lld never written", (long long)j);
			free(*out);
			goto done;
		}
		(*out)[j] = dtype_load_f(k->buf[ob].dtype, r.mem[ob] + j * dtype_bytes(k->buf[ob].dtype));
	}
	rc = 0;
done:
	run_free(&r);
	return rc;
}

/* ---- a small printer for failure messages ---- */

static void
pexpr(Buf *b, const UOp *u, int depth)
{
	int i;

	if (depth > 40) {
		emit(b, "...");
		return;
	}
	switch (u->op) {
	case OP_CONST:
		if (isf(u->dtype))
			emit(b, "%g", uop_const_value(u));
		else
			emit(b, "%lld", (long long)u->arg[0]);
		return;
	case OP_VAR:
		emit(b, "%s", u->name);
		return;
	case OP_INDEX:
		emit(b, "%s[", u->src[0]->name);
		for (i = 1; i < u->nsrc; i++) {
			if (i > 1)
				emit(b, ", ");
			pexpr(b, u->src[i], depth + 1);
		}
		emit(b, "]");
		return;
	case OP_LOAD:
		pexpr(b, u->src[0], depth + 1);
		if (u->nsrc > 1) {
			emit(b, "{if ");
			pexpr(b, u->src[1], depth + 1);
			emit(b, "}");
		}
		return;
	default:
		emit(b, "%s(", uop_info[u->op].name);
		for (i = 0; i < u->nsrc; i++) {
			if (i)
				emit(b, ", ");
			pexpr(b, u->src[i], depth + 1);
		}
		emit(b, ")");
	}
}

static void
pstmt(Buf *b, const UOp *s, int ind)
{
	int i;

	emit(b, "%*s", 2 * ind, "");
	switch (s->op) {
	case OP_END:
		emit(b, "for %s in range(%lld):  # %s\n", krange_var(s->src[0])->name,
		     (long long)krange_extent(s->src[0]), axistype_name(krange_type(s->src[0])));
		for (i = 1; i < s->nsrc; i++)
			pstmt(b, s->src[i], ind + 1);
		return;
	case OP_IF:
		emit(b, "if ");
		pexpr(b, s->src[0], 0);
		emit(b, ":\n");
		for (i = 1; i < s->nsrc; i++)
			pstmt(b, s->src[i], ind + 1);
		return;
	case OP_STORE:
		pexpr(b, s->src[0], 0);
		emit(b, " = ");
		pexpr(b, s->src[1], 0);
		emit(b, "\n");
		return;
	default:
		emit(b, "<%s>\n", uop_info[s->op].name);
	}
}

static void
pkernel(Buf *b, const Kernel *k)
{
	int i, j;

	for (i = 0; i < k->nbuf; i++) {
		emit(b, "# %s %s %s(", krole_name(k->buf[i].role), k->buf[i].name, dtype_name(k->buf[i].dtype));
		for (j = 0; j < k->buf[i].ndim; j++)
			emit(b, "%s%lld", j ? ", " : "", (long long)k->buf[i].shape[j]);
		emit(b, ")\n");
	}
	for (i = 0; i < k->nstage; i++) {
		emit(b, "# stage %s\n", k->stage[i].name);
		pstmt(b, k->stage[i].body, 0);
	}
}

/* ---- the oracle check ---- */

/* Every index and gate of the kernel is a fixpoint of uop_simplify. */
static int
simplified(const Kernel *k, const UOp *u, char *msg, size_t n)
{
	int i;

	if (u->op == OP_INDEX || (u->op == OP_LOAD && u->nsrc > 1) || u->op == OP_IF) {
		int from = u->op == OP_INDEX ? 1 : u->op == OP_LOAD ? 1 : 0;
		int to = u->op == OP_IF ? 1 : u->nsrc;

		for (i = from; i < to; i++) {
			UOp *s;
			Err e = { "" };
			const UOp *x = u->src[i];
			int data = 0, j;

			/* data-dependent indices (a gather) hold loads: not index arithmetic */
			for (j = 0; j < x->nsrc && !data; j++)
				data = x->op == OP_CAST || x->src[j]->op == OP_CAST || x->src[j]->op == OP_WHERE;
			if (data || x->op == OP_CONST || x->op == OP_VAR)
				continue;
			if (uop_simplify(k->c, (UOp *)x, &s, &e) < 0 || s != x) {
				Buf b;

				buf_init(&b);
				pexpr(&b, x, 0);
				snprintf(msg, n, "index not simplified: %s", b.s);
				buf_free(&b);
				return 0;
			}
		}
	}
	for (i = 0; i < u->nsrc; i++)
		if (u->src[i]->op != OP_DEFINE && !simplified(k, u->src[i], msg, n))
			return 0;
	return 1;
}

static int
close_enough(int t, double a, double b)
{
	if (isnan(a) || isnan(b))
		return isnan(a) && isnan(b);
	if (isinf(a) || isinf(b))
		return a == b;
	if (!isf(t))
		return a == b;
	return fabs(a - b) <= 1e-5 * (fabs(b) + 1);
}

/*
** Lower root, run it, compare with tensor_realize: 0 when equal, else -1
** with msg (the kernel printed). k (may be NULL) receives the kernel.
*/
static int
check_graph(const UOp *root, const TEvalOpts *o, Kernel **kout, char *msg, size_t n)
{
	Err e = { "" };
	Kernel *k = kernel_lower(root, NULL, &e);
	TBuf want;
	double *got = NULL;
	int64_t ng = 0, i;
	int rc = -1, s;
	char m[512] = "";

	if (kout)
		*kout = NULL;
	if (!k) {
		snprintf(msg, n, "lower: %.500s", e.msg);
		return -1;
	}
	if (tensor_realize(root, o, &want, &e) < 0) {
		snprintf(m, sizeof m, "realize: %.480s", e.msg);
		goto done;
	}
	for (s = 0; s < k->nstage; s++)
		if (!simplified(k, k->stage[s].body, m, sizeof m))
			goto free_want;
	if (run_kernel(k, o, &got, &ng, m, sizeof m) < 0)
		goto free_want;
	if (ng != want.numel) {
		snprintf(m, sizeof m, "%lld elements, want %lld", (long long)ng, (long long)want.numel);
		goto free_want;
	}
	for (i = 0; i < ng; i++)
		if (!close_enough(want.dtype, got[i], tbuf_get(&want, i))) {
			snprintf(m, sizeof m, "element %lld: kernel %.9g, tensor_realize %.9g", (long long)i, got[i],
			         tbuf_get(&want, i));
			goto free_want;
		}
	rc = 0;
free_want:
	tbuf_free(&want);
done:
	free(got);
	if (rc < 0) {
		Buf b;

		buf_init(&b);
		pkernel(&b, k);
		snprintf(msg, n, "%s\n%s", m, b.s ? b.s : "");
		buf_free(&b);
	}
	if (kout && rc == 0)
		*kout = k;
	else
		kernel_free(k);
	return rc;
}

#define CHECK(root, o) do { \
	char msg_[4096]; \
	if (check_graph((root), (o), NULL, msg_, sizeof msg_) < 0) \
		fail_msg("%s", msg_); \
} while (0)

/* lower, check against the oracle, and keep the kernel for structural asserts */
static Kernel *
lowered(const UOp *root, const TEvalOpts *o)
{
	char msg[4096];
	Kernel *k;

	if (check_graph(root, o, &k, msg, sizeof msg) < 0)
		fail_msg("%s", msg);
	return k;
}

/* ---- graph helpers ---- */

static UOp *
from(const double *v, const int64_t *s, int n)
{
	Err e = { "" };
	UOp *u = tensor_from(C, DT_FLOAT32, v, s, n, &e);

	assert_non_null(u);
	return u;
}

/* deterministic data: element i of a tensor is a small float */
static UOp *
data(int64_t a, int64_t b, int64_t c, int n)
{
	int64_t s[3] = { a, b, c }, t = 1, i;
	double v[512];

	for (i = 0; i < n; i++)
		t *= s[i];
	assert_true(t <= 512);
	for (i = 0; i < t; i++)
		v[i] = (double)((i * 7 + 3) % 11) / 4 - 1.2;
	return from(v, s, n);
}

static UOp *
ok(UOp *u, Err *e)
{
	if (!u)
		fail_msg("graph: %s", e->msg);
	return u;
}

/* the number of loads (with a gate when gated) of buffer name in u */
static int
count_loads(const UOp *u, const char *name, int gated)
{
	int i, n = 0;

	if (u->op == OP_LOAD && strcmp(u->src[0]->src[0]->name, name) == 0 && (!gated || u->nsrc > 1))
		n++;
	for (i = 0; i < u->nsrc; i++)
		n += count_loads(u->src[i], name, gated);
	return n;
}

/* the number of gated loads in u (as a tree) */
static int
count_gated(const UOp *u)
{
	int i, n = u->op == OP_LOAD && u->nsrc > 1;

	for (i = 0; i < u->nsrc; i++)
		n += count_gated(u->src[i]);
	return n;
}

/* the first load of buffer name in u */
static const UOp *
find_load(const UOp *u, const char *name)
{
	int i;

	if (u->op == OP_LOAD && strcmp(u->src[0]->src[0]->name, name) == 0)
		return u;
	for (i = 0; i < u->nsrc; i++) {
		const UOp *x = find_load(u->src[i], name);

		if (x)
			return x;
	}
	return NULL;
}

/* load of name at exactly the variables given by name ("i", "j") */
static void
assert_access(const UOp *body, const char *buf, const char *const *vars, int n)
{
	const UOp *l = find_load(body, buf);
	int i;

	if (!l)
		fail_msg("no load of %s", buf);
	assert_int_equal(l->src[0]->nsrc - 1, n);
	for (i = 0; i < n; i++) {
		const UOp *x = l->src[0]->src[i + 1];

		if (x->op != OP_VAR || strcmp(x->name, vars[i]) != 0) {
			Buf b;

			buf_init(&b);
			pexpr(&b, l, 0);
			fail_msg("load %s: index %d is not the variable %s", b.s, i, vars[i]);
		}
	}
}

static void
assert_shape(const KBuf *b, const int64_t *s, int n)
{
	int i;

	assert_int_equal(b->ndim, n);
	for (i = 0; i < n; i++)
		assert_int_equal(b->shape[i], s[i]);
}

/* ---- tests ---- */

static void
test_elementwise(void **state)
{
	Err e = { "" };
	UOp *a = data(2, 3, 0, 2), *b = data(3, 0, 0, 1), *x;
	Kernel *k;

	x = ok(tensor_alu(C, OP_ADD, a, b, &e), &e);
	x = ok(tensor_alu(C, OP_MUL, x, uop_constf(C, DT_FLOAT32, 2.5), &e), &e);
	x = ok(tensor_unary(C, OP_EXP2, x, &e), &e);
	x = ok(tensor_alu(C, OP_MAX, x, a, &e), &e);
	k = lowered(x, NULL);
	assert_int_equal(k->nstage, 1);
	assert_int_equal(k->nbuf, 3);
	assert_string_equal(k->stage[0].name, "out");
	assert_int_equal(k->buf[0].role, KB_INPUT);
	assert_string_equal(k->buf[0].name, "data");
	assert_string_equal(k->buf[1].name, "data_1");
	assert_int_equal(k->buf[2].role, KB_OUTPUT);
	assert_ptr_equal(k->buf[2].tensor, x);
	assert_ptr_equal(k->stage[0].tensor, x);
	/* for i: for j: out[i, j] = ... */
	assert_int_equal(k->stage[0].body->op, OP_END);
	assert_int_equal(krange_extent(k->stage[0].body->src[0]), 2);
	assert_int_equal(krange_type(k->stage[0].body->src[0]), AX_LOOP);
	assert_int_equal(krange_extent(k->stage[0].body->src[1]->src[0]), 3);
	kernel_free(k);

	/* a bool comparison chain and where, in int32 */
	{
		double v[6] = { 1, -2, 3, 4, -5, 6 };
		int64_t s[2] = { 2, 3 };
		UOp *i = ok(tensor_from(C, DT_INT32, v, s, 2, &e), &e), *c, *w;

		c = ok(tensor_alu(C, OP_CMPLT, i, uop_constf(C, DT_INT32, 2), &e), &e);
		w = ok(tensor_where(C, c, ok(tensor_alu(C, OP_MUL, i, i, &e), &e), ok(tensor_unary(C, OP_NEG, i, &e), &e), &e), &e);
		w = ok(tensor_cast(C, DT_FLOAT32, w, &e), &e);
		CHECK(w, NULL);
	}
}

/* the printed store of the kernel's one stage (its last line) */
static void
assert_store(const Kernel *k, const char *want)
{
	Buf b;
	char *last;

	buf_init(&b);
	kernel_print(&b, k, 0);
	assert_non_null(b.s);
	while (b.len && b.s[b.len - 1] == '\n')
		b.s[--b.len] = 0;
	last = strrchr(b.s, '\n');
	last = last ? last + 1 : b.s;
	while (*last == ' ')
		last++;
	if (strcmp(last, want) != 0)
		fail_msg("store `%s`, want `%s` in\n%s", last, want, b.s);
	buf_free(&b);
}

/* Integer arithmetic on indices lowers to index arithmetic: arange is the
** loop variable (tinygrad gives `i`), a causal mask is i >= j, and values
** stay right where the dtype wraps or rounds. */
static void
test_index_exact(void **state)
{
	Err e = { "" };
	int64_t col[2] = { 6, 1 }, row[2] = { 1, 6 };
	UOp *x, *y, *m;
	Kernel *k;

	k = lowered(ok(tensor_arange(C, 24, DT_INT32, &e), &e), NULL);
	assert_store(k, "out[i] = int32(i)");
	kernel_free(k);
	k = lowered(ok(tensor_arange(C, 3000, DT_INT32, &e), &e), NULL);   /* two digits of 1024 */
	assert_store(k, "out[i] = int32(i)");
	kernel_free(k);
	k = lowered(ok(tensor_arange_int(C, 2, 40, 3, DT_INT32, &e), &e), NULL);
	assert_store(k, "out[i] = int32(i*3 + 2)");
	kernel_free(k);
	x = ok(tensor_reshape(C, ok(tensor_arange(C, 6, DT_INT32, &e), &e), col, 2, &e), &e);
	y = ok(tensor_reshape(C, ok(tensor_arange(C, 6, DT_INT32, &e), &e), row, 2, &e), &e);
	m = ok(tensor_ge(C, x, y, &e), &e);
	k = lowered(ok(tensor_where(C, m, uop_constf(C, DT_FLOAT32, 1), uop_constf(C, DT_FLOAT32, 0), &e), &e),
	            NULL);
	assert_store(k, "out[i, j] = where(i >= j, 1.0, 0.0)");
	kernel_free(k);
	k = lowered(ok(tensor_alu(C, OP_SUB, x, y, &e), &e), NULL);
	assert_store(k, "out[i, j] = int32(i - j)");
	kernel_free(k);
	/* wraps: 70000 does not fit int16, so the cast stays */
	k = lowered(ok(tensor_cast(C, DT_INT16, ok(tensor_arange(C, 70000, DT_INT32, &e), &e), &e), &e), NULL);
	assert_store(k, "out[i] = int16(int32(i))");
	kernel_free(k);
	/* float16 holds integers exactly to 2048: past that the sums stay float16 ones */
	CHECK(ok(tensor_arange(C, 3000, DT_FLOAT16, &e), &e), NULL);
	CHECK(ok(tensor_alu(C, OP_MUL, ok(tensor_arange(C, 1000, DT_FLOAT16, &e), &e),
	                    uop_constf(C, DT_FLOAT16, 3), &e), &e), NULL);
	k = lowered(ok(tensor_arange(C, 1000, DT_FLOAT16, &e), &e), NULL);
	assert_store(k, "out[i] = float16(i)");
	kernel_free(k);
	/* division and modulo of non-negative values */
	x = ok(tensor_alu(C, OP_IDIV, ok(tensor_arange(C, 12, DT_INT32, &e), &e), uop_constf(C, DT_INT32, 4), &e), &e);
	k = lowered(x, NULL);
	assert_store(k, "out[i] = int32(i//4)");
	kernel_free(k);
	x = ok(tensor_alu(C, OP_SUB, ok(tensor_arange(C, 12, DT_INT32, &e), &e), uop_constf(C, DT_INT32, 6), &e), &e);
	CHECK(ok(tensor_alu(C, OP_IDIV, x, uop_constf(C, DT_INT32, 4), &e), &e), NULL);
	CHECK(ok(tensor_alu(C, OP_MOD, x, uop_constf(C, DT_INT32, 4), &e), &e), NULL);
}

static void
test_movement(void **state)
{
	Err e = { "" };
	UOp *a = data(2, 3, 4, 3), *x;
	int64_t perm[3] = { 2, 0, 1 }, rs[2] = { 4, 6 }, rs2[3] = { 3, 2, 4 }, fl[2] = { 0, 2 };
	int64_t pb[3] = { 1, 0, 2 }, pa[3] = { 0, 2, 1 }, sb[3] = { 1, 1, 0 }, se[3] = { 2, 3, 3 };
	int64_t ex[3] = { 2, 5, 3 }, one[3] = { 2, 1, 3 };
	Kernel *k;

	CHECK(ok(tensor_permute(C, a, perm, 3, &e), &e), NULL);
	CHECK(ok(tensor_reshape(C, a, rs, 2, &e), &e), NULL);
	CHECK(ok(tensor_reshape(C, ok(tensor_permute(C, a, perm, 3, &e), &e), rs2, 3, &e), &e), NULL);
	CHECK(ok(tensor_flip(C, a, fl, 2, &e), &e), NULL);
	CHECK(ok(tensor_shrink(C, a, sb, se, 3, &e), &e), NULL);
	x = ok(tensor_reshape(C, ok(tensor_shrink(C, a, (int64_t[]){ 0, 1, 0 }, (int64_t[]){ 2, 2, 4 }, 3, &e), &e),
	                      (int64_t[]){ 2, 4 }, 2, &e), &e);
	CHECK(ok(tensor_expand(C, ok(tensor_reshape(C, x, (int64_t[]){ 2, 1, 4 }, 3, &e), &e),
	                       (int64_t[]){ 2, 5, 4 }, 3, &e), &e), NULL);
	(void)ex;
	(void)one;

	/* pad: gated loads, 0 in the padding even under exp2 (pad of exp2, not exp2 of pad) */
	x = ok(tensor_pad(C, ok(tensor_unary(C, OP_EXP2, a, &e), &e), pb, pa, 3, &e), &e);
	k = lowered(x, NULL);
	assert_int_equal(count_loads(k->stage[0].body, "data", 1), 1);
	kernel_free(k);
	/* exp2 of pad: the padding reads 0, exp2 makes it 1 */
	CHECK(ok(tensor_unary(C, OP_EXP2, ok(tensor_pad(C, a, pb, pa, 3, &e), &e), &e), &e), NULL);
	/* pad then shrink back inside: the gate is proved true and disappears */
	x = ok(tensor_shrink(C, ok(tensor_pad(C, a, pb, pa, 3, &e), &e), (int64_t[]){ 1, 0, 2 },
	                     (int64_t[]){ 3, 3, 6 }, 3, &e), &e);
	k = lowered(x, NULL);
	assert_int_equal(count_loads(k->stage[0].body, "data", 1), 0);
	kernel_free(k);
	/* pad of pad, flipped and reshaped */
	x = ok(tensor_pad(C, ok(tensor_flip(C, ok(tensor_pad(C, a, pb, pa, 3, &e), &e), fl, 2, &e), &e), pa, pb, 3, &e), &e);
	CHECK(ok(tensor_reshape(C, x, (int64_t[]){ -1 }, 1, &e), &e), NULL);

	/* stack: a where chain on the new axis */
	{
		UOp *s[3];

		s[0] = a;
		s[1] = ok(tensor_flip(C, a, fl, 2, &e), &e);
		s[2] = ok(tensor_unary(C, OP_NEG, a, &e), &e);
		x = ok(tensor_new(C, OP_STACK, DT_FLOAT32, s, 3, 0, 0, NULL, NULL, 0, &e), &e);
		CHECK(x, NULL);
		/* stack then shrink to one source: only that source is read */
		x = ok(tensor_shrink(C, x, (int64_t[]){ 1, 0, 0, 0 }, (int64_t[]){ 2, 2, 3, 4 }, 4, &e), &e);
		k = lowered(x, NULL);
		assert_int_equal(count_loads(k->stage[0].body, "data", 0), 1);
		kernel_free(k);
	}
	/* arange is built from stacks, reshapes and shrinks */
	CHECK(ok(tensor_arange(C, 37, DT_INT32, &e), &e), NULL);
	CHECK(ok(tensor_arange(C, 1500, DT_FLOAT32, &e), &e), NULL);
}

static void
test_reduce(void **state)
{
	static const Op ops[3] = { OP_ADD, OP_MAX, OP_MUL };
	static const char *const names[3] = { "xsum", "xmax", "xprod" };
	Err e = { "" };
	UOp *a = data(2, 3, 4, 3), *x;
	int ax, keep, o;
	Kernel *k;

	for (o = 0; o < 3; o++)
		for (ax = 0; ax < 3; ax++)
			for (keep = 0; keep < 2; keep++) {
				int64_t axis = ax, bs[2];
				int n = 0, d;

				x = ok(tensor_reduce(C, ops[o], a, &axis, 1, keep, &e), &e);
				k = lowered(x, NULL);
				for (d = 0; d < 3; d++)
					if (d != ax)
						bs[n++] = a->shape[d];
				/* keepdim: the reduce is the root; without, the reshape only drops the
				** reduced axis, which the buffer drops already: one stage either way */
				assert_int_equal(k->nstage, 1);
				assert_int_equal(k->buf[1].role, KB_OUTPUT);
				assert_shape(&k->buf[1], bs, 2);
				/* for i, j: out[i, j] = identity; for k (REDUCE): ... */
				{
					const UOp *b = k->stage[0].body, *in;

					assert_int_equal(krange_type(b->src[0]), AX_LOOP);
					in = b->src[1];
					assert_int_equal(in->op, OP_END);
					assert_int_equal(in->nsrc, 3);
					assert_int_equal(in->src[1]->op, OP_STORE);
					assert_int_equal(in->src[2]->op, OP_END);
					assert_int_equal(krange_type(in->src[2]->src[0]), AX_REDUCE);
					assert_int_equal(krange_extent(in->src[2]->src[0]), a->shape[ax]);
					assert_string_equal(krange_var(in->src[2]->src[0])->name, "k");
				}
				kernel_free(k);
				/* as a temporary, read by an elementwise root: named by op */
				x = ok(tensor_reduce(C, ops[o], a, &axis, 1, 1, &e), &e);
				x = ok(tensor_alu(C, OP_SUB, a, x, &e), &e);
				k = lowered(x, NULL);
				assert_int_equal(k->nstage, 2);
				assert_string_equal(k->stage[0].name, names[o]);
				assert_string_equal(k->buf[1].name, names[o]);
				kernel_free(k);
			}
	/* two axes, and all axes (rank 0: the init and the loops in an always-true if) */
	x = ok(tensor_reduce(C, OP_ADD, a, (int64_t[]){ 0, 2 }, 2, 0, &e), &e);
	CHECK(x, NULL);
	x = ok(tensor_reduce(C, OP_MAX, a, NULL, -1, 0, &e), &e);
	k = lowered(x, NULL);
	assert_int_equal(k->buf[1].ndim, 0);
	assert_int_equal(k->stage[0].body->op, OP_IF);
	assert_int_equal(k->stage[0].body->nsrc, 3);
	kernel_free(k);
	/* integer reductions are exact; a bool sum is an int32 sum */
	{
		double v[12] = { 3, -7, 100, 2, 5, -1, 0, 9, 4, -3, 8, 1 };
		int64_t s[2] = { 3, 4 }, ax1 = 1;
		UOp *i = ok(tensor_from(C, DT_INT32, v, s, 2, &e), &e);

		for (o = 0; o < 3; o++)
			CHECK(ok(tensor_reduce(C, ops[o], i, &ax1, 1, 0, &e), &e), NULL);
		x = ok(tensor_alu(C, OP_CMPLT, i, uop_constf(C, DT_INT32, 3), &e), &e);
		CHECK(ok(tensor_reduce(C, OP_ADD, x, &ax1, 1, 0, &e), &e), NULL);
		CHECK(ok(tensor_reduce(C, OP_MAX, x, &ax1, 1, 0, &e), &e), NULL);
		x = ok(tensor_cast(C, DT_INT8, i, &e), &e);
		CHECK(ok(tensor_reduce(C, OP_MAX, ok(tensor_unary(C, OP_NEG, x, &e), &e), &ax1, 1, 0, &e), &e), NULL);
		x = ok(tensor_cast(C, DT_UINT16, i, &e), &e);
		CHECK(ok(tensor_reduce(C, OP_MAX, x, NULL, -1, 1, &e), &e), NULL);
	}
	/* a reduce of a reduce, and one used twice: computed once */
	{
		int64_t a1 = 1, a0 = 0;
		UOp *r1 = ok(tensor_reduce(C, OP_ADD, a, &a1, 1, 1, &e), &e), *r2;

		r2 = ok(tensor_reduce(C, OP_MAX, r1, &a0, 1, 1, &e), &e);
		x = ok(tensor_alu(C, OP_ADD, ok(tensor_alu(C, OP_MUL, r1, r1, &e), &e), r2, &e), &e);
		k = lowered(x, NULL);
		assert_int_equal(k->nstage, 3);
		kernel_free(k);
	}
}

/* softmax as lua_tensor.c builds it: e / e.sum with e = exp(x - x.max) */
static UOp *
exp_(UOp *x, Err *e)
{
	x = ok(tensor_alu(C, OP_MUL, x, uop_constf(C, DT_FLOAT32, 1.4426950408889634), e), e);
	return ok(tensor_unary(C, OP_EXP2, x, e), e);
}

static UOp *
softmax(UOp *a, int ax, int mark, Err *e)
{
	int64_t axes[1] = { ax };
	UOp *m, *x, *s, *sum;

	m = ok(tensor_reduce(C, OP_MAX, a, axes, 1, 1, e), e);
	x = ok(tensor_alu(C, OP_SUB, a, m, e), e);
	s = exp_(x, e);
	if (mark)
		s = ok(tensor_new(C, OP_CONTIGUOUS, DT_FLOAT32, &s, 1, 0, 0, NULL, NULL, 0, e), e);
	sum = ok(tensor_reduce(C, OP_ADD, s, axes, 1, 1, e), e);
	sum = ok(tensor_unary(C, OP_RECIP, sum, e), e);
	return ok(tensor_alu(C, OP_MUL, s, sum, e), e);
}

static void
test_softmax(void **state)
{
	Err e = { "" };
	int64_t s[2] = { 2, 4 }, s2[1] = { 2 };
	UOp *inp = ok(tensor_param(C, "inp", 0, s, 2, DT_FLOAT32, NULL, &e), &e), *x;
	const UOp *bind[1] = { data(2, 4, 0, 2) };
	TEvalOpts o = { 0, bind, 1 };
	const char *ij[2] = { "i", "j" }, *i_[1] = { "i" };
	const UOp *b;
	Kernel *k;

	/* Figure 1(a) without the exp stage: max, sum, out; exp inlines twice */
	x = softmax(inp, 1, 0, &e);
	k = lowered(x, &o);
	assert_int_equal(k->nstage, 3);
	assert_int_equal(k->nbuf, 4);
	assert_string_equal(k->buf[0].name, "inp");
	assert_int_equal(k->buf[0].role, KB_INPUT);
	assert_ptr_equal(k->buf[0].tensor, inp);
	assert_string_equal(k->stage[0].name, "xmax");
	assert_string_equal(k->stage[1].name, "xsum");
	assert_string_equal(k->stage[2].name, "out");
	assert_shape(&k->buf[1], s2, 1);
	assert_shape(&k->buf[2], s2, 1);
	assert_shape(&k->buf[3], s, 2);
	assert_int_equal(k->buf[3].role, KB_OUTPUT);
	/* for i in range(2): max[i] = -inf; for j in range(4) REDUCE: max[i] = max(max[i], inp[i, j]) */
	b = k->stage[0].body;
	assert_int_equal(krange_extent(b->src[0]), 2);
	assert_string_equal(krange_var(b->src[0])->name, "i");
	assert_true(isinf(uop_const_value(b->src[1]->src[1])) && uop_const_value(b->src[1]->src[1]) < 0);
	assert_int_equal(krange_extent(b->src[2]->src[0]), 4);
	assert_int_equal(krange_type(b->src[2]->src[0]), AX_REDUCE);
	assert_string_equal(krange_var(b->src[2]->src[0])->name, "j");
	assert_int_equal(b->src[2]->src[1]->src[1]->op, OP_MAX);
	assert_access(b, "inp", ij, 2);
	/* the sum stage reads inp[i, j] and max[i] */
	assert_access(k->stage[1].body, "inp", ij, 2);
	assert_access(k->stage[1].body, "xmax", i_, 1);
	assert_int_equal(k->stage[1].body->src[2]->src[1]->src[1]->op, OP_ADD);
	/* out: for i, j in grid(2, 4) */
	b = k->stage[2].body;
	assert_int_equal(krange_type(b->src[0]), AX_LOOP);
	assert_int_equal(krange_type(b->src[1]->src[0]), AX_LOOP);
	assert_int_equal(krange_extent(b->src[1]->src[0]), 4);
	assert_access(b, "inp", ij, 2);
	assert_access(b, "xmax", i_, 1);
	assert_access(b, "xsum", i_, 1);
	kernel_free(k);

	/* with the exp marked contiguous: Figure 1(a)'s four loop nests */
	x = softmax(inp, 1, 1, &e);
	k = lowered(x, &o);
	assert_int_equal(k->nstage, 4);
	assert_string_equal(k->stage[1].name, "xexp");
	assert_shape(&k->buf[2], s, 2);
	assert_access(k->stage[1].body, "inp", ij, 2);
	assert_access(k->stage[1].body, "xmax", i_, 1);
	assert_access(k->stage[2].body, "xexp", ij, 2);
	assert_int_equal(count_loads(k->stage[2].body, "inp", 0), 0);
	kernel_free(k);

	/* named nodes name their buffers; the caller names the output */
	{
		int64_t ax = 1;
		UOp *m = ok(tensor_named(C, ok(tensor_reduce(C, OP_MAX, inp, &ax, 1, 1, &e), &e), "xmax", &e), &e);
		UOp *ex = exp_(ok(tensor_alu(C, OP_SUB, inp, m, &e), &e), &e);
		UOp *sm = ok(tensor_named(C, ok(tensor_reduce(C, OP_ADD, ex, &ax, 1, 1, &e), &e), "xsum", &e), &e);
		KLowerOpts lo = { "y" };

		x = ok(tensor_alu(C, OP_MUL, ex, ok(tensor_unary(C, OP_RECIP, sm, &e), &e), &e), &e);
		k = kernel_lower(x, &lo, &e);
		assert_non_null(k);
		assert_string_equal(k->stage[0].name, "xmax");
		assert_string_equal(k->stage[1].name, "xsum");
		assert_string_equal(k->stage[2].name, "y");
		assert_int_equal(kernel_find_buffer(k, "xmax"), 1);
		assert_int_equal(kernel_find_buffer(k, "y"), 3);
		kernel_free(k);
		CHECK(softmax(inp, 0, 0, &e), &o);
	}
}

/* Figure 4: exp2d = exp(inp^T) marked contiguous, then its row max */
static void
test_figure4(void **state)
{
	Err e = { "" };
	int64_t s[2] = { 4, 6 }, t[2] = { 1, 0 }, ax = 1, s1[1] = { 6 };
	UOp *inp = ok(tensor_param(C, "inp", 0, s, 2, DT_FLOAT32, NULL, &e), &e), *x;
	const UOp *bind[1] = { data(4, 6, 0, 2) };
	TEvalOpts o = { 0, bind, 1 };
	const char *ji[2] = { "j", "i" }, *ij[2] = { "i", "j" };
	Kernel *k;

	x = exp_(ok(tensor_permute(C, inp, t, 2, &e), &e), &e);
	x = ok(tensor_named(C, ok(tensor_new(C, OP_CONTIGUOUS, DT_FLOAT32, &x, 1, 0, 0, NULL, NULL, 0, &e), &e),
	                    "exp2d", &e), &e);
	x = ok(tensor_reduce(C, OP_MAX, x, &ax, 1, 0, &e), &e);
	k = lowered(x, &o);
	assert_int_equal(k->nstage, 2);
	assert_string_equal(k->stage[0].name, "exp2d");
	assert_int_equal(k->buf[1].shape[0], 6);
	assert_int_equal(k->buf[1].shape[1], 4);
	/* exp2d[i, j] = exp(inp[j, i]) */
	assert_access(k->stage[0].body, "inp", ji, 2);
	assert_int_equal(k->stage[0].body->src[1]->src[1]->src[1]->op, OP_EXP2);
	/* max1d[i] = max(max1d[i], exp2d[i, j]) */
	assert_access(k->stage[1].body, "exp2d", ij, 2);
	assert_shape(&k->buf[2], s1, 1);
	assert_int_equal(k->buf[2].role, KB_OUTPUT);
	kernel_free(k);
}

static void
test_matmul(void **state)
{
	Err e = { "" };
	int64_t sa[3] = { 3, 4, 1 }, sb[3] = { 1, 4, 5 }, ax = 1, so[2] = { 3, 5 };
	UOp *a = ok(tensor_param(C, "a", 0, (int64_t[]){ 3, 4 }, 2, DT_FLOAT32, NULL, &e), &e);
	UOp *b = ok(tensor_param(C, "b", 1, (int64_t[]){ 4, 5 }, 2, DT_FLOAT32, NULL, &e), &e), *x;
	const UOp *bind[2] = { data(3, 4, 0, 2), data(4, 5, 0, 2) };
	TEvalOpts o = { 0, bind, 2 };
	const char *ik[2] = { "i", "k" }, *kj[2] = { "k", "j" };
	Kernel *k;

	x = ok(tensor_alu(C, OP_MUL, ok(tensor_reshape(C, a, sa, 3, &e), &e), ok(tensor_reshape(C, b, sb, 3, &e), &e), &e), &e);
	x = ok(tensor_reduce(C, OP_ADD, x, &ax, 1, 0, &e), &e);
	k = lowered(x, &o);
	/* for i, j: out[i, j] = 0; for k: out[i, j] += a[i, k] * b[k, j] */
	assert_int_equal(k->nstage, 1);
	assert_shape(&k->buf[2], so, 2);
	assert_access(k->stage[0].body, "a", ik, 2);
	assert_access(k->stage[0].body, "b", kj, 2);
	kernel_free(k);
	/* bound the other way round: params are bound by slot, named by name */
	{
		const UOp *bind2[2] = { data(3, 4, 0, 2), ok(tensor_unary(C, OP_NEG, data(4, 5, 0, 2), &e), &e) };
		TEvalOpts o2 = { 0, bind2, 2 };

		CHECK(x, &o2);
	}
}

/* the stage names of a lowered graph, space-separated */
static void
assert_stages(const UOp *root, const char *want)
{
	Err e = { "" };
	Kernel *k = kernel_lower(root, NULL, &e);
	char got[256] = "";
	int i;

	if (!k)
		fail_msg("lower: %s", e.msg);
	for (i = 0; i < k->nstage; i++)
		snprintf(got + strlen(got), sizeof got - strlen(got), "%s%s", i ? " " : "", k->stage[i].name);
	if (strcmp(got, want) != 0)
		fail_msg("stages \"%s\", want \"%s\"", got, want);
	kernel_free(k);
}

/*
** Default stage names say what a stage computes: a matmul's sum is xmatmul
** (attention's scores too, for one query row or many), a variance's sum of
** squares xsumsq, a sum used only divided by its count xmean, a max of a
** negation xmin; a plain sum stays xsum.
*/
static void
test_stage_names(void **state)
{
	Err e = { "" };
	int64_t ax = 1;
	UOp *x = ok(tensor_param(C, "x", 0, (int64_t[]){ 4, 8 }, 2, DT_FLOAT32, NULL, &e), &e);
	UOp *w = ok(tensor_param(C, "w", 1, (int64_t[]){ 8, 6 }, 2, DT_FLOAT32, NULL, &e), &e);
	int sq;

	(void)state;
	assert_stages(ok(tensor_layernorm(C, x, &ax, 1, 1e-5, &e), &e), "xmean xsumsq out");
	assert_stages(ok(tensor_relu(C, ok(tensor_matmul(C, x, w, &e), &e), &e), &e), "xmatmul out");
	assert_stages(ok(tensor_var(C, x, &ax, 1, 0, 1, &e), &e), "xmean xsumsq out");
	assert_stages(ok(tensor_mean(C, x, &ax, 1, 0, &e), &e), "xmean out");
	assert_stages(ok(tensor_relu(C, ok(tensor_min(C, x, &ax, 1, 0, &e), &e), &e), &e), "xmin out");
	assert_stages(ok(tensor_softmax(C, x, 1, &e), &e), "xmax xsum out");
	assert_stages(ok(tensor_relu(C, ok(tensor_sum(C, x, &ax, 1, 0, &e), &e), &e), &e), "xsum out");
	for (sq = 1; sq <= 4; sq += 3) {
		UOp *q = ok(tensor_param(C, "q", 2, (int64_t[]){ 1, 2, sq, 4 }, 4, DT_FLOAT32, NULL, &e), &e);
		UOp *k = ok(tensor_param(C, "k", 3, (int64_t[]){ 1, 2, 8, 4 }, 4, DT_FLOAT32, NULL, &e), &e);
		UOp *v = ok(tensor_param(C, "v", 4, (int64_t[]){ 1, 2, 8, 4 }, 4, DT_FLOAT32, NULL, &e), &e);

		assert_stages(ok(tensor_sdpa(C, q, k, v, NULL, 0, 0, &e), &e), "xmatmul xmax xsum out");
	}
}

static void
test_inputs(void **state)
{
	Err e = { "" };
	double v[12] = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12 };
	int64_t s[2] = { 3, 4 }, s3[3] = { 2, 2, 3 };
	UOp *f = ok(tensor_from(C, DT_FLOAT32, v, s, 2, &e), &e);
	UOp *i = ok(tensor_from(C, DT_INT32, v, s3, 3, &e), &e);
	UOp *u8 = ok(tensor_from(C, DT_UINT8, v, s, 2, &e), &e), *x;
	Kernel *k;

	x = ok(tensor_reshape(C, ok(tensor_cast(C, DT_FLOAT32, i, &e), &e), s, 2, &e), &e);
	x = ok(tensor_alu(C, OP_ADD, f, x, &e), &e);
	x = ok(tensor_alu(C, OP_SUB, x, ok(tensor_cast(C, DT_FLOAT32, u8, &e), &e), &e), &e);
	k = lowered(x, NULL);
	assert_int_equal(k->nbuf, 4);
	assert_string_equal(k->buf[0].name, "data");
	assert_string_equal(k->buf[1].name, "data_1");
	assert_string_equal(k->buf[2].name, "data_2");
	/* flat buffers: the reshapes are index arithmetic */
	assert_int_equal(k->buf[0].ndim, 1);
	assert_int_equal(k->buf[0].shape[0], 12);
	assert_true(k->buf[0].tensor->op == OP_BITCAST || k->buf[0].tensor->op == OP_BINARY);
	kernel_free(k);
	/* a constant root, a param root, tensor.full */
	CHECK(uop_constf(C, DT_FLOAT32, 2.5), NULL);
	CHECK(ok(tensor_full(C, DT_INT32, 7, s, 2, &e), &e), NULL);
	{
		UOp *p = ok(tensor_param(C, "p", 0, s, 2, DT_FLOAT32, NULL, &e), &e);
		const UOp *bind[1] = { f };
		TEvalOpts o = { 0, bind, 1 };
		KLowerOpts lo = { "p" };

		k = lowered(p, &o);
		assert_int_equal(k->nstage, 1);
		assert_string_equal(k->buf[1].name, "out");
		kernel_free(k);
		/* the caller's output name wins over a param's */
		k = kernel_lower(p, &lo, &e);
		assert_non_null(k);
		assert_string_equal(k->buf[0].name, "p_1");
		assert_string_equal(k->buf[1].name, "p");
		kernel_free(k);
		/* contiguous of an input is the input */
		x = ok(tensor_new(C, OP_CONTIGUOUS, DT_FLOAT32, &p, 1, 0, 0, NULL, NULL, 0, &e), &e);
		x = ok(tensor_alu(C, OP_ADD, x, x, &e), &e);
		k = lowered(x, &o);
		assert_int_equal(k->nstage, 1);
		kernel_free(k);
	}
}

/* a padded 2-D convolution-like sum: out[i, j] = sum_{a,b} w[a, b] * xpad[i + a, j + b] */
static void
test_conv(void **state)
{
	Err e = { "" };
	UOp *x = data(5, 6, 0, 2), *w = data(3, 3, 0, 2), *xp, *win[9], *st, *r;
	int64_t pb[2] = { 1, 1 }, ax = 0;
	int a, b;
	Kernel *k;

	xp = ok(tensor_pad(C, x, pb, pb, 2, &e), &e);   /* (7, 8) */
	for (a = 0; a < 3; a++)
		for (b = 0; b < 3; b++)
			win[a * 3 + b] = ok(tensor_shrink(C, xp, (int64_t[]){ a, b }, (int64_t[]){ a + 5, b + 6 }, 2, &e), &e);
	st = ok(tensor_new(C, OP_STACK, DT_FLOAT32, win, 9, 0, 0, NULL, NULL, 0, &e), &e);   /* (9, 5, 6) */
	w = ok(tensor_reshape(C, w, (int64_t[]){ 9, 1, 1 }, 3, &e), &e);
	r = ok(tensor_reduce(C, OP_ADD, ok(tensor_alu(C, OP_MUL, st, w, &e), &e), &ax, 1, 0, &e), &e);
	k = lowered(r, NULL);
	assert_int_equal(k->nstage, 1);
	assert_true(count_loads(k->stage[0].body, "data", 1) >= 1);
	kernel_free(k);
	/* the same through a 4-D window view: pad, reshape, expand, permute */
	{
		UOp *y = data(4, 4, 0, 2), *v;

		v = ok(tensor_pad(C, y, pb, pb, 2, &e), &e);   /* (6, 6) */
		v = ok(tensor_reshape(C, v, (int64_t[]){ 1, 6, 6 }, 3, &e), &e);
		v = ok(tensor_expand(C, v, (int64_t[]){ 3, 6, 6 }, 3, &e), &e);
		v = ok(tensor_permute(C, v, (int64_t[]){ 1, 0, 2 }, 3, &e), &e);
		v = ok(tensor_reshape(C, v, (int64_t[]){ 108 }, 1, &e), &e);
		v = ok(tensor_shrink(C, v, (int64_t[]){ 0 }, (int64_t[]){ 96 }, 1, &e), &e);
		v = ok(tensor_reshape(C, v, (int64_t[]){ 4, 24 }, 2, &e), &e);
		v = ok(tensor_reduce(C, OP_ADD, v, (int64_t[]){ 1 }, 1, 0, &e), &e);
		CHECK(v, NULL);
	}
}

static void
test_gather(void **state)
{
	Err e = { "" };
	double iv[4] = { 2, 0, -1, 1 }, jv[1] = { 2 };
	UOp *a = data(3, 4, 0, 2), *i = ok(tensor_from(C, DT_INT32, iv, (int64_t[]){ 4 }, 1, &e), &e);
	UOp *j = ok(tensor_from(C, DT_INT64, jv, NULL, 0, &e), &e), *s[3], *x;

	s[0] = a;
	s[1] = i;
	x = ok(tensor_new(C, OP_INDEX, DT_FLOAT32, s, 2, 0, 0, NULL, NULL, 0, &e), &e);   /* (4, 4) */
	CHECK(x, NULL);
	s[1] = ok(tensor_reshape(C, j, (int64_t[]){ 1 }, 1, &e), &e);
	s[2] = ok(tensor_alu(C, OP_ADD, i, uop_constf(C, DT_INT32, 1), &e), &e);
	x = ok(tensor_new(C, OP_INDEX, DT_FLOAT32, s, 3, 0, 0, NULL, NULL, 0, &e), &e);   /* (1, 4) */
	CHECK(ok(tensor_unary(C, OP_EXP2, x, &e), &e), NULL);
	s[1] = j;   /* a rank-0 index drops the axis */
	x = ok(tensor_new(C, OP_INDEX, DT_FLOAT32, s, 2, 0, 0, NULL, NULL, 0, &e), &e);   /* (4,) */
	CHECK(x, NULL);
	/* a gather under a pad: the index load is gated too */
	x = ok(tensor_pad(C, x, (int64_t[]){ 2 }, (int64_t[]){ 1 }, 1, &e), &e);
	CHECK(x, NULL);
}

static void
test_function(void **state)
{
	Err e = { "" };
	int64_t s[2] = { 2, 3 }, ax = 1;
	UOp *p0 = ok(tensor_param(C, "x", 0, s, 2, DT_FLOAT32, NULL, &e), &e);
	UOp *p1 = ok(tensor_param(C, "y", 1, s, 2, DT_FLOAT32, NULL, &e), &e);
	UOp *body[2], *args[2], *f, *g, *x;
	const UOp *bind[2] = { data(2, 3, 0, 2), data(2, 3, 0, 2) };
	TEvalOpts o = { 0, bind, 2 };
	Kernel *k;

	body[0] = ok(tensor_alu(C, OP_MUL, p0, p1, &e), &e);
	body[1] = ok(tensor_reduce(C, OP_ADD, p0, &ax, 1, 1, &e), &e);
	/* called with (y, exp2(x)): the body's x is the outer y */
	args[0] = p1;
	args[1] = ok(tensor_unary(C, OP_EXP2, p0, &e), &e);
	f = ok(tensor_function(C, body, 2, args, 2, &e), &e);
	x = ok(tensor_alu(C, OP_ADD, ok(tensor_gettuple(C, f, 0, &e), &e), ok(tensor_gettuple(C, f, 1, &e), &e), &e), &e);
	/* and a nested call */
	g = ok(tensor_function(C, body, 2, (UOp *[]){ x, x }, 2, &e), &e);
	x = ok(tensor_alu(C, OP_SUB, x, ok(tensor_gettuple(C, g, 0, &e), &e), &e), &e);
	x = ok(tensor_new(C, OP_DETACH, DT_FLOAT32, &x, 1, 0, 0, NULL, NULL, 0, &e), &e);
	k = lowered(x, &o);
	/* the body's reduce on y, and the nested one is unused (element 0 only) */
	assert_int_equal(k->nstage, 2);
	assert_int_equal(k->nbuf, 4);
	assert_string_equal(k->buf[0].name, "y");
	assert_string_equal(k->buf[1].name, "x");
	/* the stage's tensor is the user's node (the body's reduce) */
	assert_ptr_equal(k->stage[0].tensor, body[1]);
	kernel_free(k);
}

static void
test_errors(void **state)
{
	Err e = { "" };
	UOp *a = data(2, 3, 0, 2), *x;
	Kernel *k;
	int64_t s[2] = { 4, 3 };

	assert_null(kernel_lower(NULL, NULL, &e));
	assert_non_null(strstr(e.msg, "kernel.lower"));
	x = ok(tensor_new(C, OP_SINK, DT_VOID, &a, 1, 0, 0, NULL, NULL, 0, &e), &e);
	assert_null(kernel_lower(x, NULL, &e));
	assert_non_null(strstr(e.msg, "sink"));
	x = ok(tensor_copy(C, a, "CPU:1", &e), &e);
	assert_null(kernel_lower(x, NULL, &e));
	assert_non_null(strstr(e.msg, "copy"));
	x = ok(tensor_param(C, "m", 0, s, 2, DT_FLOAT32, "CPU:0,CPU:1", &e), &e);
	assert_null(kernel_lower(ok(tensor_unary(C, OP_NEG, x, &e), &e), NULL, &e));
	assert_non_null(strstr(e.msg, "CPU:0,CPU:1"));
	/* a bitcast of values computed from params cannot run in a kernel; of data it is an input */
	x = ok(tensor_param(C, "p", 0, s, 2, DT_FLOAT32, NULL, &e), &e);
	x = ok(tensor_bitcast(C, DT_INT32, ok(tensor_unary(C, OP_NEG, x, &e), &e), &e), &e);
	assert_null(kernel_lower(x, NULL, &e));
	assert_non_null(strstr(e.msg, "bitcast"));
	x = ok(tensor_bitcast(C, DT_INT32, ok(tensor_unary(C, OP_NEG, a, &e), &e), &e), &e);
	k = kernel_lower(x, NULL, &e);
	assert_non_null(k);
	assert_int_equal(k->buf[0].role, KB_INPUT);
	assert_ptr_equal(k->buf[0].tensor, x);
	kernel_free(k);
	k = kernel_lower(ok(tensor_rand(C, s, 2, DT_FLOAT32, 7, &e), &e), NULL, &e);
	assert_non_null(k);
	kernel_free(k);
	x = ok(tensor_full(C, DT_FLOAT32, 1, (int64_t[]){ 2, 0 }, 2, &e), &e);
	assert_null(kernel_lower(x, NULL, &e));
	assert_non_null(strstr(e.msg, "no elements"));
	assert_null(kernel_lower(a, &(KLowerOpts){ "not a name" }, &e));
	assert_non_null(strstr(e.msg, "not a name"));
	assert_null(kernel_lower(uop_var(C, "i", 0, 3), NULL, &e));
	assert_non_null(strstr(e.msg, "kernel.lower"));
	assert_null(kernel_lower(uop_add(C, uop_var(C, "i", 0, 3), uop_int(C, 1)), NULL, &e));
	assert_non_null(strstr(e.msg, "kernel.lower"));
	assert_null(kernel_lower(uop_int(C, 1), NULL, &e));
	assert_non_null(strstr(e.msg, "kernel.lower"));
	{
		UOp *b[1] = { a }, *f = ok(tensor_function(C, b, 1, NULL, 0, &e), &e);

		assert_null(kernel_lower(f, NULL, &e));
		assert_non_null(strstr(e.msg, "tuple"));
	}
}

/* Deep graphs: no recursion on the C stack; past the depth bound, a message. */
static void
test_deep(void **state)
{
	Err e = { "" };
	UOp *x = data(2, 2, 0, 2), *one = uop_constf(C, DT_FLOAT32, 0.5), *y;
	Kernel *k;
	int i;

	for (i = 0; i < 4000; i++)
		x = ok(tensor_alu(C, i % 2 ? OP_ADD : OP_MUL, x, one, &e), &e);
	CHECK(x, NULL);
	/* as deep as a graph may be: the kernel would nest deeper than the bound */
	while ((y = tensor_alu(C, OP_ADD, x, one, &e)))
		x = y;
	assert_true(x->depth >= UOP_MAXDEPTH - 2);
	k = kernel_lower(x, NULL, &e);
	assert_null(k);
	assert_non_null(strstr(e.msg, "kernel.lower"));
	/* deep, with a reduce every 100 nodes: many stages, each shallow */
	x = data(2, 2, 0, 2);
	for (i = 0; i < 3000; i++)
		x = i % 100 == 99 ? ok(tensor_reduce(C, OP_ADD, x, (int64_t[]){ 1 }, 1, 1, &e), &e)
		                  : ok(tensor_alu(C, OP_ADD, x, one, &e), &e);
	k = lowered(x, NULL);
	assert_int_equal(k->nstage, 30);   /* the root is the last reduce */
	kernel_free(k);
}

/* ---- random graphs ---- */

typedef struct Gen {
	const UOp *bind[8];
	int nparams;
	int nodes;
} Gen;

static UOp *gen(Gen *g, const int64_t *s, int n, int depth);

static UOp *
leaf(Gen *g, const int64_t *s, int n)
{
	Err e = { "" };
	int64_t t = 1;
	double *v;
	int i, kind = (int)rint_(0, 5);
	UOp *u;

	for (i = 0; i < n; i++)
		t *= s[i];
	if (kind == 0)
		return ok(tensor_full(C, DT_FLOAT32, (double)rint_(-8, 8) / 4, s, n, &e), &e);
	v = malloc(t * sizeof *v);
	assert_non_null(v);
	for (i = 0; i < t; i++)
		v[i] = (double)rint_(-20, 20) / 8;
	if (kind <= 2 && g->nparams < 8) {
		char name[16];

		snprintf(name, sizeof name, "p%d", g->nparams);
		u = ok(tensor_param(C, name, g->nparams, s, n, DT_FLOAT32, NULL, &e), &e);
		g->bind[g->nparams++] = from(v, s, n);
	} else
		u = from(v, s, n);
	free(v);
	return u;
}

/* a random tensor of shape s[n] */
static UOp *
gen(Gen *g, const int64_t *s, int n, int depth)
{
	Err e = { "" };
	int64_t t[T_MAXDIM + 1], b[T_MAXDIM], a[T_MAXDIM], numel = 1;
	UOp *x, *y;
	int i, kind;

	for (i = 0; i < n; i++)
		numel *= s[i];
	g->nodes++;
	if (depth <= 0 || g->nodes > 40)
		return leaf(g, s, n);
	kind = (int)rint_(0, 13);
	switch (kind) {
	case 0:   /* unary */
		x = gen(g, s, n, depth - 1);
		return ok(tensor_unary(C, rint_(0, 1) ? OP_NEG : OP_EXP2, x, &e), &e);
	case 1: case 2: {   /* binary with broadcasting */
		static const Op ops[4] = { OP_ADD, OP_SUB, OP_MUL, OP_MAX };

		memcpy(t, s, n * sizeof *t);
		for (i = 0; i < n; i++)
			if (rint_(0, 3) == 0)
				t[i] = 1;
		x = gen(g, s, n, depth - 1);
		y = gen(g, t, n, depth - 1);
		return rint_(0, 1) ? ok(tensor_alu(C, ops[rint_(0, 3)], x, y, &e), &e)
		                   : ok(tensor_alu(C, ops[rint_(0, 3)], y, x, &e), &e);
	}
	case 3: {   /* permute */
		int64_t p[T_MAXDIM], inv[T_MAXDIM];

		for (i = 0; i < n; i++)
			p[i] = i;
		for (i = n - 1; i > 0; i--) {
			int j = (int)rint_(0, i);
			int64_t z = p[i];

			p[i] = p[j];
			p[j] = z;
		}
		for (i = 0; i < n; i++) {
			inv[p[i]] = i;
			t[p[i]] = s[i];
		}
		(void)inv;
		x = gen(g, t, n, depth - 1);
		return ok(tensor_permute(C, x, p, n, &e), &e);
	}
	case 4: {   /* flip */
		int64_t ax[T_MAXDIM];
		int k = 0;

		for (i = 0; i < n; i++)
			if (rint_(0, 1))
				ax[k++] = i;
		x = gen(g, s, n, depth - 1);
		return k ? ok(tensor_flip(C, x, ax, k, &e), &e) : x;
	}
	case 5: {   /* pad */
		for (i = 0; i < n; i++) {
			b[i] = s[i] > 1 ? rint_(0, 1) : 0;
			a[i] = s[i] - b[i] > 1 ? rint_(0, 1) : 0;
			t[i] = s[i] - b[i] - a[i];
		}
		x = gen(g, t, n, depth - 1);
		return ok(tensor_pad(C, x, b, a, n, &e), &e);
	}
	case 6: {   /* shrink */
		int64_t end[T_MAXDIM];

		for (i = 0; i < n; i++) {
			b[i] = rint_(0, 2);
			t[i] = s[i] + b[i] + rint_(0, 1);
			end[i] = b[i] + s[i];
		}
		x = gen(g, t, n, depth - 1);
		return ok(tensor_shrink(C, x, b, end, n, &e), &e);
	}
	case 7: {   /* reshape from another factorization */
		int m = 0;
		int64_t rest = numel;

		while (rest > 1 && m < 3) {
			int64_t f = 1, d;

			for (d = rint_(1, 4); d >= 1; d--)
				if (rest % d == 0) {
					f = d;
					break;
				}
			if (m == 2)
				f = rest;
			t[m++] = f;
			rest /= f;
		}
		if (rest > 1)
			t[m - 1] *= rest;
		if (m == 0)
			t[m++] = 1;
		x = gen(g, t, m, depth - 1);
		return ok(tensor_reshape(C, x, s, n, &e), &e);
	}
	case 8: {   /* expand */
		memcpy(t, s, n * sizeof *t);
		for (i = 0; i < n; i++)
			if (rint_(0, 1))
				t[i] = 1;
		x = gen(g, t, n, depth - 1);
		return ok(tensor_expand(C, x, s, n, &e), &e);
	}
	case 9: case 10: {   /* reduce: a new axis without keepdim, or a size-1 axis with */
		static const Op ops[3] = { OP_ADD, OP_MAX, OP_MUL };
		int64_t ax;

		if (n < 3 && rint_(0, 1)) {
			ax = rint_(0, n);
			for (i = 0; i < n + 1; i++)
				t[i] = i < ax ? s[i] : i == ax ? rint_(1, 4) : s[i - 1];
			x = gen(g, t, n + 1, depth - 1);
			return ok(tensor_reduce(C, ops[rint_(0, 2)], x, &ax, 1, 0, &e), &e);
		}
		for (ax = 0; ax < n && s[ax] != 1; ax++)
			;
		if (ax == n)
			return gen(g, s, n, depth - 1);
		memcpy(t, s, n * sizeof *t);
		t[ax] = rint_(1, 4);
		x = gen(g, t, n, depth - 1);
		return ok(tensor_reduce(C, ops[rint_(0, 2)], x, &ax, 1, 1, &e), &e);
	}
	case 11: {   /* stack */
		UOp *src[4];
		int k;

		if (n == 0 || s[0] > 4)
			return gen(g, s, n, depth - 1);
		for (k = 0; k < s[0]; k++)
			src[k] = gen(g, s + 1, n - 1, depth - 1);
		return ok(tensor_new(C, OP_STACK, DT_FLOAT32, src, (int)s[0], 0, 0, NULL, NULL, 0, &e), &e);
	}
	case 12: {   /* contiguous mark */
		x = gen(g, s, n, depth - 1);
		return ok(tensor_new(C, OP_CONTIGUOUS, DT_FLOAT32, &x, 1, 0, 0, NULL, NULL, 0, &e), &e);
	}
	default: {   /* where on a comparison */
		UOp *c = ok(tensor_alu(C, OP_CMPLT, gen(g, s, n, depth - 1), gen(g, s, n, depth - 1), &e), &e);

		return ok(tensor_where(C, c, gen(g, s, n, depth - 1), gen(g, s, n, depth - 1), &e), &e);
	}
	}
}

static void
test_random(void **state)
{
	int trial, n, i, stages = 0, gated = 0, multi = 0;

	for (trial = 0; trial < 1000; trial++) {
		Kernel *k;
		Gen g;
		int64_t s[3];
		UOp *x;
		TEvalOpts o;
		char msg[4096];
		uint64_t at = rng;

		memset(&g, 0, sizeof g);
		n = (int)rint_(0, 3);
		for (i = 0; i < n; i++)
			s[i] = rint_(1, 4);
		x = gen(&g, s, n, (int)rint_(1, 6));
		o = (TEvalOpts){ 0, g.bind, g.nparams };
		if (check_graph(x, &o, &k, msg, sizeof msg) < 0)
			fail_msg("seed %llu, trial %d (generator state %llu): %s", (unsigned long long)seed, trial,
			         (unsigned long long)at, msg);
		stages += k->nstage;
		for (i = 0; i < k->nstage; i++) {
			gated += count_gated(k->stage[i].body);
			multi += k->nstage > 1;
		}
		kernel_free(k);
	}
	printf("# random graphs: %d lowered, run and equal to tensor_realize (%d stages, %d gated loads, "
	       "%d in multi-stage kernels)\n", trial, stages, gated, multi);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_elementwise, setup, teardown),
		cmocka_unit_test_setup_teardown(test_movement, setup, teardown),
		cmocka_unit_test_setup_teardown(test_reduce, setup, teardown),
		cmocka_unit_test_setup_teardown(test_softmax, setup, teardown),
		cmocka_unit_test_setup_teardown(test_figure4, setup, teardown),
		cmocka_unit_test_setup_teardown(test_matmul, setup, teardown),
		cmocka_unit_test_setup_teardown(test_inputs, setup, teardown),
		cmocka_unit_test_setup_teardown(test_conv, setup, teardown),
		cmocka_unit_test_setup_teardown(test_gather, setup, teardown),
		cmocka_unit_test_setup_teardown(test_stage_names, setup, teardown),
		cmocka_unit_test_setup_teardown(test_index_exact, setup, teardown),
		cmocka_unit_test_setup_teardown(test_function, setup, teardown),
		cmocka_unit_test_setup_teardown(test_errors, setup, teardown),
		cmocka_unit_test_setup_teardown(test_deep, setup, teardown),
		cmocka_unit_test_setup_teardown(test_random, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
