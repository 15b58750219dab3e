/* kernel_check.c - the verifier: what must hold of a kernel after every transform, with where it fails. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../layout/layout.h"
#include "../../util/pmap.h"
#include "kernel.h"

/*
** One walk per stage with the enclosing loops on a stack. Statements are
** checked where they stand (bindings, barriers); expressions are walked for
** the variables they use, the buffers they read and the bounds of their
** indices. The first error stops the check; unproven bounds are notes.
*/
enum { MAXLOOP = 64, ENUM_LIMIT = 1 << 16 };

typedef struct Ck {
	const Kernel *k;
	const KStage *st;
	Buf *notes;
	Err *e;
	const UOp *loop[MAXLOOP];     /* enclosing RANGEs, outermost first */
	int nloop;
	int nblock, nthread;          /* enclosing bound loops */
	/* Under a guard, an if or a loop that differs per thread: 0 where control flow is
	** uniform over the block, else the width of the aligned groups of threads it is uniform
	** over (128: each warpgroup goes one way, 32: each warp, 1: threads differ) */
	int divergent;
	const char *why;              /* what made it divergent */
	int64_t hwext[HW_COUNT];      /* extent per hardware axis in this stage (0: unbound) */
	int hwkind;                   /* 1: thread.*, 2: warp/lane */
	unsigned char *written;       /* per buffer: some stage up to this one stores it */
	int nnotes;
	int has_block;                /* the stage has block-bound loops */
	const UOp *cond[MAXLOOP];     /* the gates of the enclosing ifs */
	int ncond;
} Ck;

static int
fail(Ck *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static int
fail(Ck *c, const char *fmt, ...)
{
	char m[480];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(m, sizeof m, fmt, ap);
	va_end(ap);
	return err_set(c->e, "check: stage %s: %s", c->st->name, m);
}

static void
note(Ck *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void
note(Ck *c, const char *fmt, ...)
{
	va_list ap;

	if (!c->notes || c->nnotes++ >= 50)
		return;
	emit(c->notes, "stage %s: ", c->st->name);
	va_start(ap, fmt);
	vemit(c->notes, fmt, ap);
	va_end(ap);
	emit(c->notes, "\n");
}

/* the enclosing loop that binds variable v, or NULL */
static const UOp *
binder(const Ck *c, const UOp *v)
{
	int i;

	for (i = c->nloop - 1; i >= 0; i--)
		if (krange_var(c->loop[i]) == v)
			return c->loop[i];
	return NULL;
}

static int
thread_var(const Ck *c, const UOp *v)
{
	const UOp *r = binder(c, v);

	return r && hwaxis_is_thread(krange_hw(r));
}

/* Does u depend on a thread index or on loaded data? */
static int
per_thread(const Ck *c, const UOp *u, int depth)
{
	int i;

	if (depth > 300 || u->op == OP_LOAD)
		return 1;
	if (u->op == OP_VAR)
		return thread_var(c, u);
	for (i = 0; i < u->nsrc; i++)
		if (per_thread(c, u->src[i], depth + 1))
			return 1;
	return 0;
}

static int has_load(const UOp *u);
static int af_vars(const UOp *u, const UOp **vars, int *nv);
static int64_t af_points(const UOp **vars, int nv, UBind *bind);
static void af_next(const UOp **vars, int nv, UBind *bind);

/*
** The widest aligned groups of threads (128, a warpgroup; 32, a warp) over
** which cond takes one value, or 1. cond may depend on thread.x (the linear
** thread id when thread.y and thread.z are 1) or on warp, and on variables
** that are not threads; it is enumerated over all of them (at most
** ENUM_LIMIT points), each thread against the first thread of its group (the
** last group may be partial: a producer warp after whole warpgroups).
*/
static int
uniform_width(const Ck *c, const UOp *cond)
{
	const UOp *vars[16];
	UBind bind[16];
	int nv = 0, i, t = -1, g;
	int64_t pts, p, unit, save, v0, v1;
	Err ee;

	if (has_load(cond) || af_vars(cond, vars, &nv) < 0)
		return 1;
	for (i = 0; i < nv; i++) {
		const UOp *r = binder(c, vars[i]);
		HwAxis hw = r ? krange_hw(r) : HW_NONE;

		if (!r || !hwaxis_is_thread(hw))
			continue;
		if (t >= 0 || (hw != HW_THREAD_X && hw != HW_WARP) || vars[i]->arg[0] != 0)
			return 1;
		if (hw == HW_THREAD_X && (c->hwext[HW_THREAD_Y] > 1 || c->hwext[HW_THREAD_Z] > 1))
			return 1;
		t = i;
	}
	if (t < 0)
		return 1;
	for (g = 128; g >= 32; g /= 4) {
		const UOp *r = binder(c, vars[t]);

		unit = krange_hw(r) == HW_WARP ? g / 32 : g;
		if (!(pts = af_points(vars, nv, bind)))
			return 1;
		for (p = 0; p < pts; p++, af_next(vars, nv, bind)) {
			save = bind[t].value;
			if (uop_eval(cond, bind, nv, &v1, &ee) < 0)
				return 1;
			bind[t].value = save - save % unit;
			if (uop_eval(cond, bind, nv, &v0, &ee) < 0)
				return 1;
			bind[t].value = save;
			if (!v0 != !v1)
				break;
		}
		if (p == pts)
			return g;
	}
	return 1;
}

/* Control flow uniform over groups of w threads inside what c is under. */
static void
narrow(Ck *c, int w, const char *why)
{
	if (!c->divergent || w < c->divergent) {
		c->divergent = w;
		c->why = why;
	}
}

static int
has_load(const UOp *u)
{
	const UOp *st[512];
	int sp = 0, j;

	st[sp++] = u;
	while (sp) {
		u = st[--sp];
		if (u->op == OP_LOAD)
			return 1;
		for (j = 0; j < u->nsrc; j++) {
			if (sp == 512)
				return 1;   /* too large to tell: treat as data-dependent */
			st[sp++] = u->src[j];
		}
	}
	return 0;
}

static void
desc_access(Buf *b, const Kernel *k, const UOp *ix)
{
	kernel_print_expr(b, k, ix);
}

/*
** Bounds of one index of an access: proved from ranges; or, when the ranges
** are loose (a gate, a where, an xor), checked at every point of the loops it
** uses when there are few; else a note.
*/
static int
bounds(Ck *c, const UOp *ix, const UOp *gate0, int dim)
{
	const KBuf *b = &c->k->buf[ix->src[0]->arg[0]];
	const UOp *x = ix->src[dim + 1], *vars[16];
	int64_t n = b->shape[dim], pts = 1, p, val, g;
	int nv, i;
	UBind bind[16];
	UProg *pg = NULL, *px = NULL;
	Buf d;
	Err ee;
	const UOp *gate = gate0;

	if (x->vmin >= 0 && x->vmax < n)
		return 0;
	/* the path condition: the enclosing ifs' gates (without loads) and the access's */
	for (i = 0; i < c->ncond; i++)
		if (!has_load(c->cond[i]))
			gate = gate ? uop_alu(c->k->c, OP_AND, (UOp *)gate, (UOp *)c->cond[i]) : c->cond[i];
	buf_init(&d);
	desc_access(&d, c->k, ix);
	if (!gate && (x->vmax < 0 || x->vmin >= n)) {
		fail(c, "%s: index %d ranges over [%lld, %lld], always outside [0, %lld)", d.s ? d.s : "",
		     dim, (long long)x->vmin, (long long)x->vmax, (long long)n);
		buf_free(&d);
		return -1;
	}
	/* data-dependent indices cannot be enumerated */
	if (has_load(x) || (gate && has_load(gate))) {
		note(c, "%s: index %d depends on loaded data; its bounds are not proved", d.s ? d.s : "", dim);
		buf_free(&d);
		return 0;
	}
	nv = uop_vars(x, vars, 16);
	if (gate) {
		const UOp *gv[16];
		int ng = uop_vars(gate, gv, 16), j, k2;

		for (j = 0; j < ng; j++) {
			for (k2 = 0; k2 < nv && vars[k2] != gv[j]; k2++)
				;
			if (k2 == nv && nv < 16)
				vars[nv++] = gv[j];
		}
	}
	for (i = 0; i < nv; i++) {
		bind[i].name = vars[i]->name;
		bind[i].value = vars[i]->arg[0];
		if (uck_mul(pts, vars[i]->arg[1] - vars[i]->arg[0] + 1, &pts) < 0 || pts > ENUM_LIMIT) {
			note(c, "%s: index %d ranges over [%lld, %lld] of [0, %lld); not proved inside",
			     d.s ? d.s : "", dim, (long long)x->vmin, (long long)x->vmax, (long long)n);
			buf_free(&d);
			return 0;
		}
	}
	/* compiled once; the gate apart, since x may fail where the gate is false */
	if ((gate && !(pg = uop_prog_new(&gate, 1, bind, nv, &ee))) || !(px = uop_prog_new(&x, 1, bind, nv, &ee))) {
		note(c, "%s: index %d: %s", d.s ? d.s : "", dim, ee.msg);
		pts = 0;
	}
	for (p = 0; p < pts; p++) {
		if (pg && (uop_prog_run(pg, bind, &g, &ee) < 0 || !g))
			goto next;
		if (uop_prog_run(px, bind, &val, &ee) < 0) {
			note(c, "%s: index %d: %s", d.s ? d.s : "", dim, ee.msg);
			break;
		}
		if (val < 0 || val >= n) {
			Buf w;

			buf_init(&w);
			for (i = 0; i < nv; i++)
				emit(&w, "%s%s=%lld", i ? ", " : " at ", bind[i].name, (long long)bind[i].value);
			fail(c, "%s: index %d is %lld%s, outside [0, %lld)", d.s ? d.s : "", dim,
			     (long long)val, w.s ? w.s : "", (long long)n);
			buf_free(&w);
			buf_free(&d);
			uop_prog_free(pg);
			uop_prog_free(px);
			return -1;
		}
	next:
		for (i = nv - 1; i >= 0 && ++bind[i].value > vars[i]->arg[1]; i--)
			bind[i].value = vars[i]->arg[0];
	}
	buf_free(&d);
	uop_prog_free(pg);
	uop_prog_free(px);
	return 0;
}

static int expr(Ck *c, const UOp *u, int depth);

static int
access(Ck *c, const UOp *ix, const UOp *gate, int write)
{
	const KBuf *b;
	int i;

	if (ix->op != OP_INDEX || ix->src[0]->op != OP_DEFINE)
		return fail(c, "an access that is not INDEX(buffer, ...)");
	if (ix->src[0]->arg[0] < 0 || ix->src[0]->arg[0] >= c->k->nbuf
	|| c->k->buf[ix->src[0]->arg[0]].def != ix->src[0])
		return fail(c, "an access to buffer %s, which is not this kernel's", ix->src[0]->name);
	b = &c->k->buf[ix->src[0]->arg[0]];
	if (ix->nsrc - 1 != b->ndim)
		return fail(c, "%s has %d dimensions, an access gives %d indices", b->name, b->ndim, ix->nsrc - 1);
	if (!write && b->role != KB_INPUT && !c->written[ix->src[0]->arg[0]])
		return fail(c, "reads %s, which no stage before it writes and no caller provides", b->name);
	for (i = 1; i < ix->nsrc; i++) {
		if (ix->src[i]->dtype != DT_INDEX && ix->src[i]->dtype != DT_INT32 && ix->src[i]->dtype != DT_INT64)
			return fail(c, "index %d of %s is a %s, not an integer", i - 1, b->name, dtype_name(ix->src[i]->dtype));
		if (expr(c, ix->src[i], 1) < 0)
			return -1;
	}
	if (gate && expr(c, gate, 1) < 0)
		return -1;
	for (i = 0; i < b->ndim; i++)
		if (bounds(c, ix, gate, i) < 0)
			return -1;
	return 0;
}

static int
expr(Ck *c, const UOp *u, int depth)
{
	int i;

	if (depth > UOP_MAXDEPTH)
		return fail(c, "an expression nests too deep");
	switch (u->op) {
	case OP_VAR:
		if (!binder(c, u))
			return fail(c, "variable %s is not bound by an enclosing loop", u->name);
		return 0;
	case OP_CONST:
		return 0;
	case OP_LOAD:
		return access(c, u->src[0], u->nsrc > 1 ? u->src[1] : NULL, 0);
	case OP_END: case OP_IF: case OP_BARRIER: case OP_STORE: case OP_RANGE: case OP_DEFINE:
	case OP_INDEX: case OP_MMA: case OP_LDMATRIX: case OP_CP_ASYNC: case OP_CP_COMMIT: case OP_CP_WAIT:
	case OP_WGMMA: case OP_WG_FENCE: case OP_WG_COMMIT: case OP_WG_WAIT: case OP_SETMAXNREG:
	case OP_MBAR_INIT: case OP_MBAR_ARRIVE: case OP_MBAR_WAIT: case OP_TMA_LOAD: case OP_ATOMIC: case OP_FENCE:
		return fail(c, "a %s where a value belongs", uop_info[u->op].name);
	case OP_SHUFFLE:
		if (c->divergent && c->divergent < 32)
			return fail(c, "a shuffle under thread-divergent control flow (%s): lanes that skip "
			            "it leave their warp waiting", c->why);
		if (u->nsrc != 2 || dtype_is_float(u->src[1]->dtype) || u->src[1]->dtype == DT_VOID)
			return fail(c, "a shuffle that is not (value, integer lane)");
		for (i = 0; i < u->nsrc; i++)
			if (expr(c, u->src[i], depth + 1) < 0)
				return -1;
		return 0;
	default:
		if (uop_info[u->op].flags & (U_MOVE | U_KERNEL) || (uop_info[u->op].flags & U_TENSOR
		&& !(uop_info[u->op].flags & U_ALU)))
			return fail(c, "a tensor-level %s inside a kernel", uop_info[u->op].name);
		for (i = 0; i < u->nsrc; i++)
			if (expr(c, u->src[i], depth + 1) < 0)
				return -1;
		return 0;
	}
}

static int stmt(Ck *c, const UOp *s, int depth);

static int
loop(Ck *c, const UOp *s, int depth)
{
	const UOp *r = s->src[0];
	HwAxis hw;
	int i, rc = 0, saved_div = c->divergent;
	const char *saved_why = c->why;
	int64_t ext;

	if (r->op != OP_RANGE || r->src[0]->op != OP_VAR)
		return fail(c, "a loop without a range");
	hw = krange_hw(r);
	ext = krange_extent(r);
	if (hw < 0 || hw >= HW_COUNT || krange_type(r) < 0 || krange_type(r) >= AX_COUNT)
		return fail(c, "loop %s has a bad axis type or binding", krange_var(r)->name);
	for (i = 0; i < c->nloop; i++) {
		if (strcmp(krange_var(c->loop[i])->name, krange_var(r)->name) == 0)
			return fail(c, "loop variable %s is bound twice (nested loops need their own variables)",
			            krange_var(r)->name);
		if (hw != HW_NONE && krange_hw(c->loop[i]) == hw)
			return fail(c, "loop %s is bound to %s inside loop %s bound to it too",
			            krange_var(r)->name, hwaxis_name(hw), krange_var(c->loop[i])->name);
	}
	if (c->nloop == MAXLOOP)
		return fail(c, "loops nest deeper than %d", MAXLOOP);
	if (hwaxis_is_block(hw)) {
		if (c->nloop != c->nblock)
			return fail(c, "loop %s is bound to %s under loop %s, which is not block-bound (block "
			            "loops are the outermost loops of a stage)", krange_var(r)->name,
			            hwaxis_name(hw), krange_var(c->loop[c->nloop - 1])->name);
		if (c->hwext[hw] && c->hwext[hw] != ext)
			return fail(c, "loops bound to %s have extents %lld and %lld (a grid has one size)",
			            hwaxis_name(hw), (long long)c->hwext[hw], (long long)ext);
		c->nblock++;
	} else if (hwaxis_is_thread(hw)) {
		int kind = hw == HW_WARP || hw == HW_LANE ? 2 : 1;

		if (c->hwkind && c->hwkind != kind)
			return fail(c, "loop %s is bound to %s; a stage binds threads either to thread.x/y/z "
			            "or to warp and lane, not both", krange_var(r)->name, hwaxis_name(hw));
		c->hwkind = kind;
		if (c->has_block && !c->nblock)
			return fail(c, "loop %s is bound to %s outside the block-bound loops of its stage",
			            krange_var(r)->name, hwaxis_name(hw));
		if (hw == HW_LANE && ext > 32)
			return fail(c, "loop %s is bound to lane with extent %lld (a warp has 32 lanes)",
			            krange_var(r)->name, (long long)ext);
		if (c->hwext[hw] && c->hwext[hw] != ext) {
			/* a guard: threads past this loop's extent skip it (whole warpgroups or warps
			** when the extent is a multiple of them along the linear thread id) */
			int w = 1, lin = hw == HW_WARP || (hw == HW_THREAD_X && c->hwext[HW_THREAD_Y] <= 1
			                                    && c->hwext[HW_THREAD_Z] <= 1);

			if (lin && (hw == HW_WARP ? ext % 4 == 0 : ext % 128 == 0))
				w = 128;
			else if (lin && (hw == HW_WARP || ext % 32 == 0))
				w = 32;
			narrow(c, w, "a thread-bound loop shorter than its block dimension");
		}
		c->nthread++;
	}
	if (hw != HW_NONE && (!c->hwext[hw] || ext > c->hwext[hw]))
		c->hwext[hw] = ext;
	c->loop[c->nloop++] = r;
	for (i = 1; i < s->nsrc && rc == 0; i++)
		rc = stmt(c, s->src[i], depth + 1);
	c->nloop--;
	if (hwaxis_is_block(hw))
		c->nblock--;
	else if (hwaxis_is_thread(hw))
		c->nthread--;
	c->divergent = saved_div;
	c->why = saved_why;
	return rc;
}

static int
stmt(Ck *c, const UOp *s, int depth)
{
	int i, rc = 0;

	if (depth > 1000)
		return fail(c, "statements nest deeper than 1000");
	switch (s->op) {
	case OP_END:
		return loop(c, s, depth);
	case OP_IF: {
		int saved = c->divergent;
		const char *why = c->why;

		if (s->src[0]->dtype != DT_BOOL)
			return fail(c, "an if whose condition is a %s, not a bool", dtype_name(s->src[0]->dtype));
		if (expr(c, s->src[0], 1) < 0)
			return -1;
		if (per_thread(c, s->src[0], 0))
			narrow(c, uniform_width(c, s->src[0]),
			       "an if whose condition depends on a thread index or on loaded data");
		if (c->ncond == MAXLOOP)
			return fail(c, "ifs nest deeper than %d", MAXLOOP);
		c->cond[c->ncond++] = s->src[0];
		for (i = 1; i < s->nsrc && rc == 0; i++)
			rc = stmt(c, s->src[i], depth + 1);
		c->ncond--;
		c->divergent = saved;
		c->why = why;
		return rc;
	}
	case OP_BARRIER:
		if (c->divergent)
			return fail(c, "a barrier under thread-divergent control flow (%s): threads that skip "
			            "it would deadlock", c->why);
		return 0;
	case OP_MMA: {
		int buf[4];
		Err ee;

		if (c->divergent && c->divergent < 32)
			return fail(c, "an mma under thread-divergent control flow (%s): lanes that skip it "
			            "leave their warp waiting", c->why);
		for (i = 0; i < 4 && i < s->nsrc; i++) {
			const UOp *d = s->src[i];

			if (d->op != OP_DEFINE || d->arg[0] < 0 || d->arg[0] >= c->k->nbuf
			|| c->k->buf[d->arg[0]].def != d)
				return fail(c, "an mma whose operand %d is not a buffer of this kernel", i);
			buf[i] = (int)d->arg[0];
		}
		if (s->nsrc != 4)
			return fail(c, "an mma with %d operands, not (D, A, B, C)", s->nsrc);
		if (kernel_mma_atom(c->k, s->name, buf, NULL, NULL, &ee) < 0)
			return fail(c, "%s", ee.msg);
		for (i = 1; i < 4; i++)
			if (!c->written[buf[i]])
				return fail(c, "an mma reads %s, which no stage before it writes", c->k->buf[buf[i]].name);
		c->written[buf[0]] = 1;
		return 0;
	}
	case OP_LDMATRIX: {
		const UOp *d = s->nsrc == 2 ? s->src[0] : NULL, *ix = s->nsrc == 2 ? s->src[1] : NULL;
		Err ee;

		if (c->divergent && c->divergent < 32)
			return fail(c, "an ldmatrix under thread-divergent control flow (%s): lanes that skip it "
			            "leave their warp waiting", c->why);
		if (!d || d->op != OP_DEFINE || d->arg[0] < 0 || d->arg[0] >= c->k->nbuf || c->k->buf[d->arg[0]].def != d)
			return fail(c, "an ldmatrix whose destination is not a buffer of this kernel");
		if (access(c, ix, NULL, 0) < 0)
			return -1;
		if (kernel_ldmatrix_check(c->k, (int)d->arg[0], (int)ix->src[0]->arg[0], (int)s->arg[0], &ee) < 0)
			return fail(c, "%s", ee.msg);
		c->written[d->arg[0]] = 1;
		return 0;
	}
	case OP_CP_ASYNC: {
		const UOp *dx = s->nsrc == 2 ? s->src[0] : NULL, *sx = s->nsrc == 2 ? s->src[1] : NULL;
		Err ee;

		if (!dx)
			return fail(c, "a cp_async without a destination and a source");
		if (access(c, dx, NULL, 1) < 0 || access(c, sx, NULL, 0) < 0)
			return -1;
		if (kernel_cp_async_check(c->k, (int)dx->src[0]->arg[0], (int)sx->src[0]->arg[0], (int)s->arg[0],
		                          &ee) < 0)
			return fail(c, "%s", ee.msg);
		c->written[dx->src[0]->arg[0]] = 1;
		return 0;
	}
	case OP_WGMMA: {
		Err ee;

		if (c->divergent && c->divergent < 128)
			return fail(c, "a wgmma under control flow that divides a warpgroup (%s): threads that skip it "
			            "leave their warpgroup waiting", c->why);
		if (s->nsrc != 3 || s->src[0]->op != OP_DEFINE || s->src[0]->arg[0] < 0 || s->src[0]->arg[0] >= c->k->nbuf
		|| c->k->buf[s->src[0]->arg[0]].def != s->src[0])
			return fail(c, "a wgmma that is not (D, A, B) of this kernel's buffers");
		if (access(c, s->src[1], NULL, 0) < 0 || access(c, s->src[2], NULL, 0) < 0)
			return -1;
		if (kernel_wgmma_check(c->k, s, NULL, NULL, &ee) < 0)
			return fail(c, "%s", ee.msg);
		for (i = 1; i < 3; i++)
			if (!c->written[s->src[i]->src[0]->arg[0]])
				return fail(c, "a wgmma reads %s, which no stage before it writes",
				            c->k->buf[s->src[i]->src[0]->arg[0]].name);
		c->written[s->src[0]->arg[0]] = 1;
		return 0;
	}
	case OP_WG_FENCE:
	case OP_WG_COMMIT:
	case OP_WG_WAIT:
	case OP_SETMAXNREG:
		if (c->divergent && c->divergent < 128)
			return fail(c, "a %s under control flow that divides a warpgroup (%s): the warpgroup's threads "
			            "must all run it (.sync.aligned)", uop_info[s->op].name, c->why);
		if (s->op == OP_WG_WAIT && (s->arg[0] < 0 || s->arg[0] > 7))
			return fail(c, "a wgmma_wait of %lld groups (0 to 7)", (long long)s->arg[0]);
		if (s->op == OP_SETMAXNREG && (s->arg[0] < 24 || s->arg[0] > 256 || s->arg[0] % 8))
			return fail(c, "a setmaxnreg of %lld registers (a multiple of 8 from 24 to 256)", (long long)s->arg[0]);
		return 0;
	case OP_ATOMIC: {
		Err ee;
		int b, o = -1;

		if (s->nsrc < 2 || s->nsrc > 3 || s->src[0]->op != OP_INDEX || (s->nsrc == 3 && s->src[2]->op != OP_INDEX))
			return fail(c, "an atomic that is not (element, value [, old element])");
		/* the target counts as written: global temporaries start at zero (kernel.h) */
		if (access(c, s->src[0], NULL, 1) < 0 || expr(c, s->src[1], 0) < 0
		|| (s->nsrc == 3 && access(c, s->src[2], NULL, 1) < 0))
			return -1;
		b = (int)s->src[0]->src[0]->arg[0];
		if (s->nsrc == 3)
			o = (int)s->src[2]->src[0]->arg[0];
		if (kernel_atomic_check(c->k, (int)s->arg[0], b, (DType)s->src[1]->dtype, o, &ee) < 0)
			return fail(c, "%s", ee.msg);
		c->written[b] = 1;
		if (o >= 0)
			c->written[o] = 1;
		return 0;
	}
	case OP_FENCE:
		if (s->arg[0] != KF_GPU && s->arg[0] != KF_BLOCK)
			return fail(c, "a fence of scope %lld (0 gpu, 1 block)", (long long)s->arg[0]);
		return 0;
	case OP_CP_COMMIT:
		return 0;
	case OP_CP_WAIT:
		if (s->arg[0] < 0 || s->arg[0] > 63)
			return fail(c, "a cp_async_wait of %lld groups (0 to 63)", (long long)s->arg[0]);
		return 0;
	case OP_MBAR_INIT:
	case OP_MBAR_ARRIVE:
	case OP_MBAR_WAIT: {
		Err ee;

		if (s->nsrc < 1 || s->src[0]->op != OP_INDEX || (s->op == OP_MBAR_WAIT && s->nsrc != 2))
			return fail(c, "an %s without its barrier element", uop_info[s->op].name);
		if (access(c, s->src[0], NULL, s->op == OP_MBAR_INIT) < 0
		|| (s->op == OP_MBAR_WAIT && expr(c, s->src[1], 0) < 0))
			return -1;
		if (kernel_mbar_check(c->k, (int)s->src[0]->src[0]->arg[0], uop_info[s->op].name, &ee) < 0)
			return fail(c, "%s", ee.msg);
		if (s->op == OP_MBAR_WAIT && (s->src[1]->vmin < 0 || s->src[1]->vmax > 1))
			return fail(c, "an mbar_wait whose parity may leave [0, 1]");
		if (s->op == OP_MBAR_INIT)
			c->written[s->src[0]->src[0]->arg[0]] = 1;
		return 0;
	}
	case OP_TMA_LOAD: {
		Err ee;

		if (kernel_tma_check(c->k, s, &ee) < 0)
			return fail(c, "%s", ee.msg);
		if (access(c, s->src[0], NULL, 1) < 0 || access(c, s->src[1], NULL, 0) < 0
		|| access(c, s->src[2], NULL, 0) < 0)
			return -1;
		c->written[s->src[0]->src[0]->arg[0]] = 1;
		return 0;
	}
	case OP_STORE: {
		const UOp *ix = s->src[0];
		const KBuf *b;

		if (s->nsrc > 2 && s->src[2]->dtype != DT_BOOL)
			return fail(c, "a store gated by a %s, not a bool", dtype_name(s->src[2]->dtype));
		if (access(c, ix, s->nsrc > 2 ? s->src[2] : NULL, 1) < 0)
			return -1;
		b = &c->k->buf[ix->src[0]->arg[0]];
		if (s->src[1]->dtype != b->dtype)
			return fail(c, "stores a %s into %s, a %s buffer", dtype_name(s->src[1]->dtype), b->name,
			            dtype_name(b->dtype));
		if (expr(c, s->src[1], 1) < 0)
			return -1;
		if (b->role == KB_INPUT)
			note(c, "writes the input %s in place", b->name);
		c->written[ix->src[0]->arg[0]] = 1;
		return 0;
	}
	default:
		return fail(c, "a %s where a statement belongs", uop_info[s->op].name);
	}
}

static int
has_block(const UOp *s, int depth)
{
	int i;

	if (depth > 1000 || (s->op != OP_END && s->op != OP_IF))
		return 0;
	if (s->op == OP_END && hwaxis_is_block(krange_hw(s->src[0])))
		return 1;
	for (i = 1; i < s->nsrc; i++)
		if (has_block(s->src[i], depth + 1))
			return 1;
	return 0;
}

/* The buffers a statement stores to, so that a stage may read what it writes. */
static void
stores(const UOp *s, unsigned char *w, int n, int depth)
{
	int i;

	if (depth > 1000)
		return;
	if (s->op == OP_STORE) {
		const UOp *d = s->src[0]->src[0];

		if (d->op == OP_DEFINE && d->arg[0] >= 0 && d->arg[0] < n)
			w[d->arg[0]] = 1;
		return;
	}
	if (s->op == OP_LDMATRIX && s->nsrc == 2) {
		if (s->src[0]->op == OP_DEFINE && s->src[0]->arg[0] >= 0 && s->src[0]->arg[0] < n)
			w[s->src[0]->arg[0]] = 1;
		return;
	}
	if (s->op == OP_MMA && s->nsrc == 4) {
		if (s->src[0]->op == OP_DEFINE && s->src[0]->arg[0] >= 0 && s->src[0]->arg[0] < n)
			w[s->src[0]->arg[0]] = 1;
		return;
	}
	if (s->op == OP_WGMMA && s->nsrc == 3) {
		const UOp *d = s->src[0];

		if (d->op == OP_DEFINE && d->arg[0] >= 0 && d->arg[0] < n)
			w[d->arg[0]] = 1;
		return;
	}
	if ((s->op == OP_TMA_LOAD && s->nsrc == 3) || (s->op == OP_MBAR_INIT && s->nsrc == 1)) {
		const UOp *d = s->src[0]->src[0];

		if (d->op == OP_DEFINE && d->arg[0] >= 0 && d->arg[0] < n)
			w[d->arg[0]] = 1;
		return;
	}
	if (s->op == OP_CP_ASYNC && s->nsrc == 2) {
		const UOp *d = s->src[0]->src[0];

		if (d->op == OP_DEFINE && d->arg[0] >= 0 && d->arg[0] < n)
			w[d->arg[0]] = 1;
		return;
	}
	if (s->op == OP_ATOMIC && s->nsrc >= 2) {
		for (i = 0; i < s->nsrc; i += 2) {
			const UOp *d = s->src[i]->op == OP_INDEX ? s->src[i]->src[0] : NULL;

			if (d && d->op == OP_DEFINE && d->arg[0] >= 0 && d->arg[0] < n)
				w[d->arg[0]] = 1;
		}
		return;
	}
	if (s->op == OP_END || s->op == OP_IF)
		for (i = 1; i < s->nsrc; i++)
			stores(s->src[i], w, n, depth + 1);
}

/*
** The copies in flight (cp.async), along every path of a stage, per buffer
** and per region: a copy is remembered by the leading index of its
** destination (the stage or slot of a pipelined tile) and the gates of the
** ifs around it. State bit 1 is a copy issued and not yet committed, bit 2 a
** committed one that no wait has covered since. A commit turns 1 into 2; a
** cp_async_wait clears 2 (a wait for all but n > 0 groups is taken to retire
** the copies the code reads next: which groups those are depends on the slot
** indices, and the interpreter checks it exactly); nothing clears 1.
**
** An access to a buffer with copies in flight is refused unless its leading
** index and each copy's are proved apart: at every point of the loops around
** both (the same iteration), the values the copy's index takes over its other
** variables (threads, its own unit loops), where its gates hold, never meet
** the values the access's index takes over its own. Threads count as other
** variables on both sides, so another thread's copy is covered too; a copy
** left by an earlier iteration is not compared (a loop's back edge and its
** exit forget the region of copies whose index or gates use its variable),
** and a thread that runs ahead into the next iteration is the interpreter's
** race to find. Loops are walked until their state settles; an if's body may
** not run.
*/
enum { AF_REGIONS = 8 };

typedef struct AfCopy {
	const UOp *at;       /* the destination's leading index; NULL: anywhere in the buffer */
	const UOp *gate;     /* the path condition of the copy; NULL: none */
	uint8_t st;
} AfCopy;

typedef struct AfBuf {
	AfCopy c[AF_REGIONS];
	int n;
} AfBuf;

typedef struct Af {
	Ck *c;
	AfBuf *st;
	int relied;          /* a wait of n > 0 covered a copy */
	PMap seen;
	const UOp *loop[MAXLOOP];    /* enclosing RANGEs */
	int nloop;
	const UOp *cond[MAXLOOP];    /* enclosing ifs' gates */
	int ncond;
} Af;

/* Adds copies (at, gate) in state st; returns whether the set grew. */
static int
af_add(AfBuf *b, const UOp *at, const UOp *gate, uint8_t st)
{
	int i;
	uint8_t all = st;

	for (i = 0; i < b->n; i++)
		if (b->c[i].at == at && b->c[i].gate == gate) {
			if ((b->c[i].st | st) == b->c[i].st)
				return 0;
			b->c[i].st |= st;
			return 1;
		}
	if (b->n < AF_REGIONS) {
		b->c[b->n++] = (AfCopy){ at, gate, st };
		return 1;
	}
	/* too many regions to keep apart: one copy anywhere in the buffer */
	for (i = 0; i < b->n; i++)
		all |= b->c[i].st;
	b->n = 0;
	af_add(b, NULL, NULL, all);
	return 1;
}

/* Forgets the region of copies whose index or gates use variable v. */
static void
af_forget(AfBuf *st, int nbuf, const UOp *v)
{
	const UOp *vars[16];
	AfBuf old;
	int i, j, k, nv, use;

	for (i = 0; i < nbuf; i++) {
		old = st[i];
		st[i].n = 0;
		for (j = 0; j < old.n; j++) {
			use = !old.c[j].at;
			nv = old.c[j].at ? uop_vars(old.c[j].at, vars, 16) : 0;
			for (k = 0; k < nv && k < 16; k++)
				use |= vars[k] == v || nv > 16;
			nv = old.c[j].gate ? uop_vars(old.c[j].gate, vars, 16) : 0;
			for (k = 0; k < nv && k < 16; k++)
				use |= vars[k] == v || nv > 16;
			if (use)
				af_add(&st[i], NULL, NULL, old.c[j].st);
			else
				af_add(&st[i], old.c[j].at, old.c[j].gate, old.c[j].st);
		}
	}
}

/* Adds the variables of u not yet in vars; -1 when there are too many. */
static int
af_vars(const UOp *u, const UOp **vars, int *nv)
{
	const UOp *v[16];
	int n, i, j;

	if (!u)
		return 0;
	if ((n = uop_vars(u, v, 16)) > 16)
		return -1;
	for (i = 0; i < n; i++) {
		for (j = 0; j < *nv && vars[j] != v[i]; j++)
			;
		if (j == *nv) {
			if (*nv == 16)
				return -1;
			vars[(*nv)++] = v[i];
		}
	}
	return 0;
}

/* the points of vars[0..nv) with first bound in bind: 0 when past ENUM_LIMIT */
static int64_t
af_points(const UOp **vars, int nv, UBind *bind)
{
	int64_t pts = 1;
	int i;

	for (i = 0; i < nv; i++) {
		bind[i].name = vars[i]->name;
		bind[i].value = vars[i]->arg[0];
		if (uck_mul(pts, vars[i]->arg[1] - vars[i]->arg[0] + 1, &pts) < 0 || pts > ENUM_LIMIT)
			return 0;
	}
	return pts;
}

static void
af_next(const UOp **vars, int nv, UBind *bind)
{
	int i;

	for (i = nv - 1; i >= 0 && ++bind[i].value > vars[i]->arg[1]; i--)
		bind[i].value = vars[i]->arg[0];
}

/*
** Whether copies cp into buffer b and an access at leading index x can meet:
** 0 proved apart; 1 they can, or it is not proved, with the reason in why.
*/
static int
af_meet(Af *a, int b, const AfCopy *cp, const UOp *x, Buf *why)
{
	const UOp *all[16], *sh[16], *fc[16], *fr[16];
	UBind bind[48];
	int nall = 0, nsh = 0, nfc = 0, nfr = 0, i, j, rc = 0;
	int64_t n = a->c->k->buf[b].shape[0], psh, pfc, pfr, p, q, v, g;
	unsigned char *hit;
	UProg *pg = NULL, *pa = NULL, *px = NULL;
	Err ee;

	if (!cp->at) {
		emit(why, "anywhere in %s", a->c->k->buf[b].name);
		return 1;
	}
	if (has_load(cp->at) || has_load(x) || (cp->gate && has_load(cp->gate)) || n > ENUM_LIMIT) {
		emit(why, "index 0 depends on loaded data or the stages are too many to compare");
		return 1;
	}
	/* the variables of the loops around the access that are not threads are
	** common to both (the same iteration); the rest each side enumerates alone */
	if (af_vars(cp->at, all, &nall) < 0 || af_vars(cp->gate, all, &nall) < 0 || af_vars(x, all, &nall) < 0) {
		emit(why, "too many variables to compare the indices");
		return 1;
	}
	for (i = 0; i < nall; i++) {
		for (j = 0; j < a->nloop && krange_var(a->loop[j]) != all[i]; j++)
			;
		if (j < a->nloop && !hwaxis_is_thread(krange_hw(a->loop[j])))
			sh[nsh++] = all[i];
	}
	nall = 0;
	af_vars(cp->at, fc, &nfc);
	af_vars(cp->gate, fc, &nfc);
	af_vars(x, fr, &nfr);
	for (i = j = 0; i < nfc; i++) {
		for (nall = 0; nall < nsh && sh[nall] != fc[i]; nall++)
			;
		if (nall == nsh)
			fc[j++] = fc[i];
	}
	nfc = j;
	for (i = j = 0; i < nfr; i++) {
		for (nall = 0; nall < nsh && sh[nall] != fr[i]; nall++)
			;
		if (nall == nsh)
			fr[j++] = fr[i];
	}
	nfr = j;
	psh = af_points(sh, nsh, bind);
	pfc = af_points(fc, nfc, bind + nsh);
	pfr = af_points(fr, nfr, bind + nsh);
	if (!psh || !pfc || !pfr || psh * (pfc + pfr) > 16 * (int64_t)ENUM_LIMIT) {
		emit(why, "too many points to compare the indices");
		return 1;
	}
	/* compiled once: the earlier access's gate and index over sh and fc, this one's over sh and fr */
	af_points(fc, nfc, bind + nsh);
	if ((cp->gate && !(pg = uop_prog_new(&cp->gate, 1, bind, nsh + nfc, &ee))) ||
	    !(pa = uop_prog_new(&cp->at, 1, bind, nsh + nfc, &ee))) {
		emit(why, "the earlier index does not evaluate: %s", ee.msg);
		uop_prog_free(pg);
		return 1;
	}
	af_points(fr, nfr, bind + nsh);
	if (!(px = uop_prog_new(&x, 1, bind, nsh + nfr, &ee))) {
		emit(why, "the index does not evaluate: %s", ee.msg);
		uop_prog_free(pg);
		uop_prog_free(pa);
		return 1;
	}
	if (!(hit = malloc((size_t)n))) {
		uop_prog_free(pg);
		uop_prog_free(pa);
		uop_prog_free(px);
		return err_set(a->c->e, "check: out of memory");
	}
	for (p = 0; p < psh && !rc; p++, af_next(sh, nsh, bind)) {
		memset(hit, 0, (size_t)n);
		af_points(fc, nfc, bind + nsh);
		for (q = 0; q < pfc; q++, af_next(fc, nfc, bind + nsh)) {
			if (pg && (uop_prog_run(pg, bind, &g, &ee) < 0 || !g))
				continue;
			if (uop_prog_run(pa, bind, &v, &ee) == 0 && v >= 0 && v < n)
				hit[v] = 1;
		}
		af_points(fr, nfr, bind + nsh);
		for (q = 0; q < pfr && !rc; q++, af_next(fr, nfr, bind + nsh))
			if (uop_prog_run(px, bind, &v, &ee) == 0 && v >= 0 && v < n && hit[v]) {
				emit(why, "both reach index 0 = %lld", (long long)v);
				for (i = 0; i < nsh; i++)
					emit(why, "%s%s=%lld", i ? ", " : " at ", bind[i].name, (long long)bind[i].value);
				rc = 1;
			}
	}
	free(hit);
	uop_prog_free(pg);
	uop_prog_free(pa);
	uop_prog_free(px);
	return rc;
}

static int
af_touch(Af *a, const UOp *ix, const char *how)
{
	int b, i, r;
	Buf why, d, cd;

	if (ix->op != OP_INDEX || ix->src[0]->op != OP_DEFINE || ix->nsrc < 2)
		return 0;
	b = (int)ix->src[0]->arg[0];
	if (b < 0 || b >= a->c->k->nbuf)
		return 0;
	for (i = 0; i < a->st[b].n; i++) {
		const AfCopy *cp = &a->st[b].c[i];

		buf_init(&why);
		if ((r = af_meet(a, b, cp, ix->src[1], &why)) <= 0) {
			buf_free(&why);
			if (r < 0)
				return -1;
			continue;
		}
		buf_init(&d);
		buf_init(&cd);
		kernel_print_expr(&d, a->c->k, ix->src[1]);
		if (cp->at)
			kernel_print_expr(&cd, a->c->k, cp->at);
		if (cp->st & 1)
			r = fail(a->c, "%s %s while a cp.async into it is issued and not committed: cp_async_wait "
			         "waits for committed groups only (kernel.cp_async_commit() before the wait; the "
			         "copy's index 0 is %s, this access's %s: %s)", how, a->c->k->buf[b].name,
			         cd.s ? cd.s : "any", d.s ? d.s : "", why.s ? why.s : "");
		else
			r = fail(a->c, "%s %s while a cp.async into it may be in flight: no cp_async_wait between "
			         "the copy and this access (the copy's index 0 is %s, this access's %s: %s)", how,
			         a->c->k->buf[b].name, cd.s ? cd.s : "any", d.s ? d.s : "", why.s ? why.s : "");
		buf_free(&d);
		buf_free(&cd);
		buf_free(&why);
		return r;
	}
	return 0;
}

static int
af_expr(Af *a, const UOp *u, int depth)
{
	int i;

	if (depth > 1000 || pmap_get(&a->seen, u))
		return 0;
	if (pmap_put(&a->seen, u, (void *)1) < 0)
		return err_set(a->c->e, "check: out of memory");
	if (u->op == OP_LOAD && u->nsrc >= 1 && af_touch(a, u->src[0], "reads") < 0)
		return -1;
	for (i = 0; i < u->nsrc; i++)
		if (af_expr(a, u->src[i], depth + 1) < 0)
			return -1;
	return 0;
}

/* the path condition of a statement here: the enclosing gates without loads, NULL: none */
static const UOp *
af_gate(Af *a)
{
	const UOp *g = NULL;
	int i;

	for (i = 0; i < a->ncond; i++)
		if (!has_load(a->cond[i]))
			g = g ? uop_alu(a->c->k->c, OP_AND, (UOp *)g, (UOp *)a->cond[i]) : a->cond[i];
	return g;
}

static int
af_stmt(Af *a, const UOp *s, int depth)
{
	int n = a->c->k->nbuf, i, j, it, grew;
	AfBuf *in;

	if (depth > 1000)
		return 0;
	switch (s->op) {
	case OP_CP_ASYNC:
		/* copies into one buffer in flight together are the rule; the
		** interpreter refuses two into one element */
		if (s->nsrc == 2 && s->src[0]->src[0]->op == OP_DEFINE) {
			const UOp *ix = s->src[0];

			af_add(&a->st[ix->src[0]->arg[0]], ix->nsrc > 1 ? ix->src[1] : NULL,
			       ix->nsrc > 1 ? af_gate(a) : NULL, 1);
		}
		return 0;
	case OP_CP_COMMIT:
		for (i = 0; i < n; i++)
			for (j = 0; j < a->st[i].n; j++)
				if (a->st[i].c[j].st & 1)
					a->st[i].c[j].st = 2;
		return 0;
	case OP_CP_WAIT:
		for (i = 0; i < n; i++) {
			AfBuf old = a->st[i];

			a->st[i].n = 0;
			for (j = 0; j < old.n; j++) {
				if (old.c[j].st & 2)
					a->relied |= s->arg[0] > 0;
				if (old.c[j].st & 1)
					af_add(&a->st[i], old.c[j].at, old.c[j].gate, 1);
			}
		}
		return 0;
	case OP_STORE:
		pmap_free(&a->seen);
		memset(&a->seen, 0, sizeof a->seen);
		for (i = 1; i < s->nsrc; i++)
			if (af_expr(a, s->src[i], 0) < 0)
				return -1;
		for (i = 1; i < s->src[0]->nsrc; i++)
			if (af_expr(a, s->src[0]->src[i], 0) < 0)
				return -1;
		return af_touch(a, s->src[0], "writes");
	case OP_LDMATRIX:
		return s->nsrc == 2 ? af_touch(a, s->src[1], "an ldmatrix reads") : 0;
	case OP_WGMMA:
		if (s->nsrc == 3 && (af_touch(a, s->src[1], "a wgmma reads") < 0 || af_touch(a, s->src[2], "a wgmma reads") < 0))
			return -1;
		return 0;
	case OP_IF:
	case OP_END:
		if (a->nloop == MAXLOOP || a->ncond == MAXLOOP)
			return fail(a->c, "loops and ifs nest deeper than %d", MAXLOOP);
		if (!(in = malloc((n ? (size_t)n : 1) * sizeof *in)))
			return err_set(a->c->e, "check: out of memory");
		memcpy(in, a->st, (size_t)n * sizeof *in);
		pmap_free(&a->seen);
		memset(&a->seen, 0, sizeof a->seen);
		if (s->op == OP_IF && af_expr(a, s->src[0], 0) < 0) {
			free(in);
			return -1;
		}
		if (s->op == OP_IF)
			a->cond[a->ncond++] = s->src[0];
		else
			a->loop[a->nloop++] = s->src[0];
		for (it = 0; it < 16; it++) {
			memcpy(a->st, in, (size_t)n * sizeof *in);
			for (i = 1; i < s->nsrc; i++)
				if (af_stmt(a, s->src[i], depth + 1) < 0) {
					free(in);
					return -1;
				}
			/* an if's body may not run */
			if (s->op == OP_IF) {
				for (i = 0; i < n; i++)
					for (j = 0; j < in[i].n; j++)
						af_add(&a->st[i], in[i].c[j].at, in[i].c[j].gate, in[i].c[j].st);
				break;
			}
			/* a loop's next iteration starts from where the one before began
			** or ended; what the one before issued is in another region */
			af_forget(a->st, n, krange_var(s->src[0]));
			for (i = grew = 0; i < n; i++)
				for (j = 0; j < a->st[i].n; j++)
					grew |= af_add(&in[i], a->st[i].c[j].at, a->st[i].c[j].gate, a->st[i].c[j].st);
			if (!grew)
				break;
		}
		if (s->op == OP_IF)
			a->ncond--;
		else
			a->nloop--;
		free(in);
		return 0;
	default:
		return 0;
	}
}

static int
async_flow(Ck *c, const UOp *body)
{
	Af a;
	int i, rc;

	memset(&a, 0, sizeof a);
	a.c = c;
	if (!(a.st = calloc(c->k->nbuf ? c->k->nbuf : 1, sizeof *a.st)))
		return err_set(c->e, "check: out of memory");
	rc = af_stmt(&a, body, 0);
	if (rc == 0 && a.relied)
		note(c, "reads after a cp_async_wait of n > 0 groups rely on the copies into the slots read being "
		     "older than the n most recent groups (the interpreter checks it as it runs)");
	for (i = 0; rc == 0 && i < c->k->nbuf; i++)
		if (a.st[i].n) {
			note(c, "copies into %s may still be in flight at the end of the stage (the interpreter reports "
			     "any that are)", c->k->buf[i].name);
			break;
		}
	pmap_free(&a.seen);
	free(a.st);
	return rc;
}

/*
** Shared memory the interpreter gives a block without limit, a GPU does not:
** a note where the stage's shared buffers pass the most a GPU block has (227
** KiB on sm_90; the CUDA and OpenCL exports refuse past it and past 64 KiB).
*/
static void
shared_note(Ck *c, const Kernel *k)
{
	unsigned char *w = calloc(k->nbuf ? k->nbuf : 1, 1);
	int64_t total = 0;
	int b, big = -1;

	if (!w)
		return;
	stores(c->st->body, w, k->nbuf, 0);
	for (b = 0; b < k->nbuf; b++)
		if (w[b] && k->buf[b].scope == AS_LOCAL) {
			total += k->buf[b].size * dtype_bytes(k->buf[b].dtype);
			if (big < 0 || k->buf[b].size * dtype_bytes(k->buf[b].dtype)
			               > k->buf[big].size * dtype_bytes(k->buf[big].dtype))
				big = b;
		}
	free(w);
	if (total > 227 * 1024)
		note(c, "%lld bytes of shared memory a block (the largest, %s, %lld): more than a GPU block "
		     "has (227 KiB on sm_90); the exports refuse it", (long long)total, k->buf[big].name,
		     (long long)(k->buf[big].size * dtype_bytes(k->buf[big].dtype)));
}

int
kernel_check(const Kernel *k, Buf *notes, Err *e)
{
	Ck c;
	int i, rc = 0;

	memset(&c, 0, sizeof c);
	c.k = k;
	c.notes = notes;
	c.e = e;
	if (!(c.written = calloc(k->nbuf ? k->nbuf : 1, 1)))
		return err_set(e, "check: out of memory");
	for (i = 0; i < k->nstage && rc == 0; i++) {
		c.st = &k->stage[i];
		c.nloop = c.nblock = c.nthread = c.divergent = c.hwkind = c.ncond = 0;
		memset(c.hwext, 0, sizeof c.hwext);
		stores(c.st->body, c.written, k->nbuf, 0);
		c.has_block = has_block(c.st->body, 0);
		rc = stmt(&c, c.st->body, 0);
		if (rc == 0)
			rc = async_flow(&c, c.st->body);
		if (rc == 0)
			shared_note(&c, k);
	}
	for (i = 0; i < k->nbuf && rc == 0; i++)
		if (k->buf[i].role == KB_OUTPUT && !c.written[i])
			rc = err_set(e, "check: output %s is written by no stage", k->buf[i].name);
	free(c.written);
	return rc;
}
