/* compute_at.c - compute_at and reverse_compute_at: a stage moved under a loop of another, over the region that loop needs (TVM's). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../util/pmap.h"
#include "sched.h"

enum { MAXACC = 256, MAXSTMT = 1024 };

/*
** A moved stage is a nest of spatial loops whose variables are the
** coordinates of the buffer it writes (one loop per dimension, its whole
** extent: the "trivial binding" TVM's blocks have), around an inner body
** that may hold anything, a reduction included. Moving it means rebuilding
** the spatial loops over a region (a start, an expression in the loops
** outside the target loop, and a constant extent per dimension) and
** substituting start + new variable for each old one in the inner body.
*/
typedef struct Nest {
	int buf;                    /* the buffer the stage writes */
	int nd;
	UOp *loop[T_MAXDIM];        /* spatial loops, outermost first */
	int dim[T_MAXDIM];          /* loop[i]'s variable indexes dimension dim[i] */
	UOp **body;                 /* the innermost spatial loop's statements */
	int nbody;
} Nest;

typedef struct Region {
	UOp *start[T_MAXDIM];
	int64_t ext[T_MAXDIM];
} Region;

/* An access under the target loop, with the loops between (inner variables). */
typedef struct Acc {
	const UOp *ix;
	const UOp *inner[64];
	int ninner;
} Acc;

typedef struct Accs {
	Acc a[MAXACC];
	int n, over;
} Accs;

static int
is_reduce(AxisType t)
{
	return t == AX_REDUCE || t == AX_GROUP_REDUCE;
}

static void
expr_str(Buf *b, const Kernel *k, const UOp *u)
{
	kernel_print_expr(b, k, u);
}

/* the stage as a Nest writing one buffer, or -1 with e saying why not */
static int
nest_of(Kernel *k, int st, Nest *n, const char *what, Err *e)
{
	const char *sn = k->stage[st].name;
	UOp *sv[MAXSTMT], *cur;
	int ns = sched_stores(k, st, sv, MAXSTMT), i, d, nl = 0;
	const UOp *def;

	memset(n, 0, sizeof *n);
	if (ns == 0)
		return err_set(e, "stage %s stores nothing", sn);
	def = sv[0]->src[0]->src[0];
	for (i = 1; i < ns; i++)
		if (sv[i]->src[0]->src[0] != def)
			return err_set(e, "stage %s writes %s and %s; %s moves a stage that writes one buffer",
			               sn, def->name, sv[i]->src[0]->src[0]->name, what);
	n->buf = (int)def->arg[0];
	n->nd = k->buf[n->buf].ndim;
	cur = k->stage[st].body;
	/* spatial loops: each indexes one dimension of every store, and stands alone in the one before */
	while (cur->op == OP_END && nl < n->nd) {
		const UOp *v = krange_var(cur->src[0]);

		for (d = 0; d < n->nd && sv[0]->src[0]->src[d + 1] != v; d++)
			;
		if (d == n->nd)
			break;
		for (i = 1; i < ns && sv[i]->src[0]->src[d + 1] == v; i++)
			;
		if (i < ns || krange_extent(cur->src[0]) != k->buf[n->buf].shape[d])
			break;
		for (i = 0; i < nl && n->dim[i] != d; i++)
			;
		if (i < nl)
			break;
		if (krange_hw(cur->src[0]) != HW_NONE)
			return err_set(e, "stage %s: loop %s is bound to %s; %s rebuilds the loops of the "
			               "stage it moves (bind after moving)", sn, v->name,
			               hwaxis_name(krange_hw(cur->src[0])), what);
		n->loop[nl] = cur;
		n->dim[nl++] = d;
		if (nl == n->nd || cur->nsrc != 2)
			break;
		cur = cur->src[1];
	}
	if (nl != n->nd) {
		Buf b;

		buf_init(&b);
		kernel_print_store(&b, k, sv[0]);
		err_set(e, "stage %s: %s needs a perfect nest of loops over %s's %d dimensions (its "
		        "variables the store's indices, whole extents), and the store is %s (split, fuse "
		        "and tile after moving)", sn, what, def->name, n->nd, b.s ? b.s : "?");
		buf_free(&b);
		return -1;
	}
	if (n->nd == 0) {
		n->body = &k->stage[st].body;
		n->nbody = 1;
		return 0;
	}
	cur = n->loop[n->nd - 1];
	n->body = cur->src + 1;
	n->nbody = cur->nsrc - 1;
	return 0;
}

/* Accesses of def under s (stores when store, else loads), with the loops between. */
static int
collect(const Kernel *k, const UOp *s, const UOp *def, int store, const UOp **inner, int ni,
        Accs *out, int depth)
{
	int i;

	if (depth > 1000)
		return -1;
	if (s->op == OP_END) {
		if (ni < 64)
			inner[ni++] = krange_var(s->src[0]);
		for (i = 1; i < s->nsrc; i++)
			if (collect(k, s->src[i], def, store, inner, ni, out, depth + 1) < 0)
				return -1;
		return 0;
	}
	if (s->op == OP_IF) {
		if (!store) {
			UOp *ld[MAXACC];
			int nl = sched_loads(s->src[0], def, ld, MAXACC), j;

			for (j = 0; j < nl; j++) {
				if (out->n == MAXACC)
					return out->over = 1, -1;
				out->a[out->n].ix = ld[j]->src[0];
				memcpy(out->a[out->n].inner, inner, ni * sizeof *inner);
				out->a[out->n++].ninner = ni;
			}
		}
		for (i = 1; i < s->nsrc; i++)
			if (collect(k, s->src[i], def, store, inner, ni, out, depth + 1) < 0)
				return -1;
		return 0;
	}
	if (s->op != OP_STORE)
		return 0;
	if (store) {
		if (s->src[0]->src[0] == def) {
			if (out->n == MAXACC)
				return out->over = 1, -1;
			out->a[out->n].ix = s->src[0];
			memcpy(out->a[out->n].inner, inner, ni * sizeof *inner);
			out->a[out->n++].ninner = ni;
		}
	} else {
		UOp *ld[MAXACC];
		int nl = sched_loads(s, def, ld, MAXACC), j;

		for (j = 0; j < nl; j++) {
			if (out->n == MAXACC)
				return out->over = 1, -1;
			out->a[out->n].ix = ld[j]->src[0];
			memcpy(out->a[out->n].inner, inner, ni * sizeof *inner);
			out->a[out->n++].ninner = ni;
		}
	}
	return 0;
}

static int
has_load(const UOp *u, int depth)
{
	int i;

	if (u->op == OP_LOAD || u->op == OP_SHUFFLE || depth > 500)
		return 1;
	for (i = 0; i < u->nsrc; i++)
		if (has_load(u->src[i], depth + 1))
			return 1;
	return 0;
}

static UOp *
simp(Kernel *k, UOp *x, Err *e)
{
	UOp *y;

	if (!x)
		return err_set(e, "out of memory"), NULL;
	if (uop_simplify(k->c, x, &y, e) < 0)
		return NULL;
	return y;
}

/*
** The region of buffer b the accesses touch for one iteration of the target
** loop. For an index x of an access whose loops below the target are the
** inner variables: lo = x with every inner variable at 0, and x - lo, once
** simplified, must depend on inner variables only; its range is then the
** span, a constant, and the access covers [lo + min, lo + max] whatever the
** outer loops are. Two accesses' lo must differ by a constant, so that the
** union is one box: start = the least lo + min, extent = the greatest
** lo + max - start + 1. Anything else (a span that moves with an outer
** loop, data-dependent indices) is refused: the extent would not be a
** constant.
*/
static int
region_of(Kernel *k, const Accs *A, int b, const char *loop, Region *r, Err *e)
{
	const KBuf *B = &k->buf[b];
	int d, i, j;

	for (d = 0; d < B->ndim; d++) {
		UOp *base = NULL;
		int64_t lo = 0, hi = 0;

		for (i = 0; i < A->n; i++) {
			const Acc *a = &A->a[i];
			UOp *x = a->ix->src[d + 1], *zero[64], *l, *span, *delta;
			const UOp *vs[64];
			int nv;
			int64_t off;
			Buf s;

			if (has_load(x, 0)) {
				buf_init(&s);
				expr_str(&s, k, a->ix);
				err_set(e, "%s: index %d depends on loaded data; the region under loop %s is not "
				        "known", s.s ? s.s : "?", d, loop);
				buf_free(&s);
				return -1;
			}
			for (j = 0; j < a->ninner; j++)
				zero[j] = uop_int(k->c, 0);
			if (!(l = simp(k, kernel_substitute(k->c, x, (UOp *const *)a->inner, zero, a->ninner), e))
			|| !(span = simp(k, uop_sub(k->c, x, l), e)))
				return -1;
			nv = uop_vars(span, vs, 64);
			for (j = 0; j < nv; j++) {
				int m;

				for (m = 0; m < a->ninner && a->inner[m] != vs[j]; m++)
					;
				if (m == a->ninner) {
					buf_init(&s);
					expr_str(&s, k, a->ix);
					err_set(e, "%s: the extent of dimension %d under loop %s is not a constant (its "
					        "span depends on %s, a loop outside it)", s.s ? s.s : "?", d, loop,
					        vs[j]->name);
					buf_free(&s);
					return -1;
				}
			}
			if (!base) {
				base = l;
				lo = span->vmin;
				hi = span->vmax;
				continue;
			}
			if (!(delta = simp(k, uop_sub(k->c, l, base), e)))
				return -1;
			if (delta->vmin != delta->vmax) {
				buf_init(&s);
				expr_str(&s, k, A->a[0].ix);
				emit(&s, " and ");
				expr_str(&s, k, a->ix);
				err_set(e, "%s are not a constant distance apart in dimension %d; the region "
				        "under loop %s would not be one box", s.s ? s.s : "?", d, loop);
				buf_free(&s);
				return -1;
			}
			off = delta->vmin;
			lo = off + span->vmin < lo ? off + span->vmin : lo;
			hi = off + span->vmax > hi ? off + span->vmax : hi;
		}
		if (!base)
			return err_set(e, "no access to %s", B->name);
		if (!(r->start[d] = simp(k, uop_add(k->c, base, uop_int(k->c, lo)), e)))
			return -1;
		r->ext[d] = hi - lo + 1;
		if (r->ext[d] > B->shape[d] && r->start[d]->op == OP_CONST && r->start[d]->arg[0] <= 0) {
			/* a loose span at a fixed start: the whole dimension is enough */
			r->ext[d] = B->shape[d];
			r->start[d] = uop_int(k->c, 0);
		}
	}
	return 0;
}

/* The hardware loops (thread axes) under s: max extent per axis. */
static void
threads_under(const UOp *s, int64_t *ext, int depth)
{
	int i;

	if (depth > 1000 || (s->op != OP_END && s->op != OP_IF))
		return;
	if (s->op == OP_END && hwaxis_is_thread(krange_hw(s->src[0]))) {
		HwAxis h = krange_hw(s->src[0]);

		if (krange_extent(s->src[0]) > ext[h])
			ext[h] = krange_extent(s->src[0]);
	}
	for (i = 1; i < s->nsrc; i++)
		threads_under(s->src[i], ext, depth + 1);
}

/*
** The moved statements over region r in stage st (the target's): one loop
** per spatial loop of the nest, named after it, or, with threads (ext[h] of
** the thread axes under the target loop, when the buffer is not per-thread),
** the region's elements spread over those threads: element it*T + t for
** thread t of T, consecutive threads on consecutive elements (TVM users get
** this cooperative fetch by fusing, splitting and binding the loops after
** compute_at). lim[d] bounds coordinate d (the old loop's extent): a region
** that may pass it is guarded.
*/
static UOp *
rebuild(Kernel *k, int st, const Nest *n, const Region *r, const int64_t *lim, const int64_t *thr,
        Err *e)
{
	UOp *old[T_MAXDIM + 64], *val[T_MAXDIM + 64], *nv[T_MAXDIM], *gate = NULL, **body = NULL, *cur = NULL;
	UOp *tl[64], *lin = NULL, *it = NULL, *tv[HW_COUNT];
	int64_t T = 1, N = 1, nit = 1;
	int i, d, nsub = 0, cooperative = 0, h, ntl = 0;

	for (h = 0; h < HW_COUNT; h++)
		if (thr && thr[h] > 0) {
			cooperative = 1;
			if (uck_mul(T, thr[h], &T) < 0)
				return err_set(e, "too many threads"), NULL;
		}
	for (d = 0; d < n->nd; d++)
		if (uck_mul(N, r->ext[d], &N) < 0 || N > ((int64_t)1 << 40))
			return err_set(e, "the region is too large"), NULL;
	if (cooperative) {
		/* t = ((z*Ey + y)*Ex + x), z outermost; warp*Elane + lane */
		static const HwAxis order[] = { HW_THREAD_Z, HW_THREAD_Y, HW_THREAD_X, HW_WARP, HW_LANE };
		static const char *const names[] = { "tz", "ty", "tx", "w", "l" };
		unsigned o;

		nit = (N + T - 1) / T;
		for (o = 0; o < sizeof order / sizeof *order; o++) {
			h = order[o];
			tv[h] = NULL;
			if (thr[h] <= 0)
				continue;
			if (!(tv[h] = sched_fresh_var(k, st, names[o], thr[h])))
				return err_set(e, "out of memory"), NULL;
			lin = lin ? uop_add(k->c, uop_mul(k->c, lin, uop_int(k->c, thr[h])), tv[h]) : tv[h];
			tl[ntl++] = tv[h];
		}
		if (nit > 1) {
			if (!(it = sched_fresh_var(k, st, "it", nit)))
				return err_set(e, "out of memory"), NULL;
			lin = uop_add(k->c, uop_mul(k->c, it, uop_int(k->c, T)), lin);
		}
		if (nit * T != N)
			gate = uop_alu(k->c, OP_CMPLT, lin, uop_int(k->c, N));
	}
	for (i = 0; i < n->nd; i++) {
		int64_t stride = 1;
		int dd = n->dim[i], m;
		UOp *c;

		if (cooperative) {
			for (m = dd + 1; m < n->nd; m++)
				stride *= r->ext[m];
			c = uop_mod(k->c, uop_idiv(k->c, lin, uop_int(k->c, stride)), uop_int(k->c, r->ext[dd]));
		} else if (r->ext[dd] == 1) {
			/* a region one element wide: no loop of one iteration, its start instead (as TVM
			** simplifies unit loops away) */
			nv[i] = NULL;
			c = uop_int(k->c, 0);
		} else {
			if (!(nv[i] = sched_fresh_var(k, st, krange_var(n->loop[i]->src[0])->name, r->ext[dd])))
				return err_set(e, "out of memory"), NULL;
			c = nv[i];
		}
		c = uop_add(k->c, r->start[dd], c);
		old[nsub] = krange_var(n->loop[i]->src[0]);
		val[nsub++] = c;
		if (c && (c->vmax >= lim[dd] || c->vmin < 0)) {
			UOp *g = uop_alu(k->c, OP_CMPLT, c, uop_int(k->c, lim[dd]));

			if (c->vmin < 0)
				g = uop_alu(k->c, OP_AND, uop_alu(k->c, OP_CMPLT, uop_int(k->c, -1), c), g);
			gate = gate ? uop_alu(k->c, OP_AND, gate, g) : g;
		}
	}
	/* loops inside the moved body whose names the target stage uses get fresh ones */
	{
		UOp *in[256], *mine[256];
		int nin = 0, nm = sched_loops(k, st, mine, 256), j, q;

		for (j = 0; j < n->nbody; j++) {
			UOp *tmp[256];
			int c2 = 0;

			/* loops of each body statement */
			{
				UOp *stack[256];
				int sp = 0;

				stack[sp++] = n->body[j];
				while (sp && c2 < 256) {
					UOp *x = stack[--sp];

					if (x->op == OP_END)
						tmp[c2++] = x;
					if (x->op == OP_END || x->op == OP_IF)
						for (q = 1; q < x->nsrc && sp < 256; q++)
							stack[sp++] = x->src[q];
				}
			}
			for (q = 0; q < c2 && nin < 256; q++)
				in[nin++] = tmp[q];
		}
		for (j = 0; j < nin && nsub < T_MAXDIM + 64; j++) {
			UOp *v = krange_var(in[j]->src[0]);
			int taken = 0, a;

			for (a = 0; a < nsub && old[a] != v; a++)
				;
			if (a < nsub)
				continue;   /* renamed already (sibling loops may share a variable) */
			for (q = 0; q < nm && !taken; q++)
				taken = strcmp(krange_var(mine[q]->src[0])->name, v->name) == 0;
			for (a = 0; a < ntl && !taken; a++)
				taken = strcmp(tl[a]->name, v->name) == 0;
			if (!taken)
				continue;
			old[nsub] = v;
			if (!(val[nsub] = sched_fresh_var(k, st, v->name, v->arg[1] + 1)))
				return err_set(e, "out of memory"), NULL;
			nsub++;
		}
	}
	if (!(body = malloc((n->nbody + 1) * sizeof *body)))
		return err_set(e, "out of memory"), NULL;
	for (i = 0; i < n->nbody; i++) {
		UOp *s = kernel_substitute(k->c, n->body[i], old, val, nsub);

		/* the inner body's loops are rebuilt around renamed variables: ranges follow */
		if (!s || !(body[i] = sched_simplify_stmt(k, s, e)))
			goto fail;
	}
	cur = NULL;
	{
		UOp *b0;
		int nb = n->nbody;

		if (gate) {
			if (!(gate = simp(k, gate, e)))
				goto fail;
			if (!(gate->op == OP_CONST && gate->arg[0])) {
				if (!(b0 = kernel_if(k, gate, body, nb)))
					goto oom;
				body[0] = b0;
				nb = 1;
			}
		}
		if (cooperative) {
			for (i = ntl - 1; i >= 0; i--) {
				HwAxis hh = HW_NONE;

				for (h = 0; h < HW_COUNT; h++)
					if (thr[h] > 0 && tv[h] == tl[i])
						hh = (HwAxis)h;
				cur = kernel_loop(k, kernel_range(k, tl[i], hh == HW_WARP ? AX_WARP : AX_LOCAL, hh),
				                  body, nb);
				if (!cur)
					goto oom;
				body[0] = cur;
				nb = 1;
			}
			if (it && !(cur = kernel_loop(k, kernel_range(k, it, AX_LOOP, HW_NONE), body, nb)))
				goto oom;
		} else {
			for (i = n->nd - 1; i >= 0; i--) {
				if (!nv[i])
					continue;
				cur = kernel_loop(k, kernel_range(k, nv[i], krange_type(n->loop[i]->src[0]), HW_NONE),
				                  body, nb);
				if (!cur)
					goto oom;
				body[0] = cur;
				nb = 1;
			}
		}
		if (!cur)
			cur = nb == 1 ? body[0] : kernel_if(k, uop_const(k->c, DT_BOOL, 1), body, nb);
	}
	free(body);
	return cur;
oom:
	err_set(e, "out of memory");
fail:
	free(body);
	return NULL;
}

/* whether a store to B under s has an index that uses v */
static int
stores_use(const Kernel *k, const UOp *s, const KBuf *B, const UOp *v, int depth)
{
	int i, d;

	if (depth > 256)
		return 1;
	if (s->op == OP_STORE) {
		const UOp *ix = s->src[0], *vs[64];

		if (ix->src[0] != B->def)
			return 0;
		for (d = 1; d < ix->nsrc; d++) {
			int nv = uop_vars(ix->src[d], vs, 64), j;

			for (j = 0; j < nv && j < 64; j++)
				if (vs[j] == v)
					return 1;
		}
		return 0;
	}
	if (s->op != OP_END && s->op != OP_IF)
		return 0;
	for (i = 1; i < s->nsrc; i++)
		if (stores_use(k, s->src[i], B, v, depth + 1))
			return 1;
	return 0;
}

/*
** Every thread bound around the target loop runs the moved statements, and so
** does every block of a block-bound loop around it. For a buffer they share
** (threads: shared or global memory; blocks: global memory), each element they
** write must then be written by one of them only: checked per enclosing bound
** loop (sched_independent) on a scratch stage holding the path down to the
** target with only the new statements under it.
*/
static int
per_instance(Kernel *k, int st, const UOp *target, UOp *moved, const KBuf *B, Err *e)
{
	UOp *p[256], *cur = moved, *th[64];
	int np = sched_path(k, st, target, p, 256), i, nth = 0, tmp, rc = 0;
	char name[K_NAME];
	Err ie;

	for (i = np - 1; i >= 0 && cur; i--) {
		int hw;

		cur = p[i]->op == OP_END ? kernel_loop(k, p[i]->src[0], &cur, 1) : kernel_if(k, p[i]->src[0], &cur, 1);
		if (!cur || p[i]->op != OP_END)
			continue;
		hw = krange_hw(p[i]->src[0]);
		if (((hwaxis_is_thread(hw) && B->scope != AS_REG) || (hwaxis_is_block(hw) && B->scope == AS_GLOBAL))
		&& nth < 64)
			th[nth++] = cur;
	}
	if (!cur)
		return err_set(e, "out of memory");
	if (nth == 0)
		return 0;
	kernel_fresh_name(k, "scratch", name, sizeof name);
	if ((tmp = kernel_add_stage(k, name, cur, NULL, e)) < 0)
		return -1;
	for (i = 0; i < nth && rc == 0; i++) {
		int hw = krange_hw(th[i]->src[0]), block = hwaxis_is_block(hw);

		/* structural first: no store of B depends on the bound loop, so all write alike */
		if (krange_extent(th[i]->src[0]) > 1 && !stores_use(k, moved, B, krange_var(th[i]->src[0]), 0)) {
			char how[200];

			if (block)
				snprintf(how, sizeof how, "set_scope(\"%s\", \"shared\") gives each block a copy "
				         "of its own", B->name);
			else
				snprintf(how, sizeof how, "compute_at a loop outside the bound loops: "
				         "decompose_reduction, then reorder loop %s above them (threads bound "
				         "under the target share the copy)", krange_var(target->src[0])->name);
			rc = err_set(e, "%s is %s memory, which %s share: loop %s is bound to %s, and every %s "
			             "would run what moves under loop %s and write the same elements of %s (its "
			             "index does not use %s); %s", B->name, kscope_name(B->scope),
			             block ? "blocks" : "threads", krange_var(th[i]->src[0])->name,
			             hwaxis_name(hw), block ? "block" : "thread", krange_var(target->src[0])->name,
			             B->name, krange_var(th[i]->src[0])->name, how);
			break;
		}
		if (sched_independent(k, tmp, &th[i], 1, 0, &ie) < 0)
			rc = err_set(e, "%s is %s memory, which %s share: loop %s is bound to %s, and every %s "
			             "runs what moves under loop %s: %s", B->name, kscope_name(B->scope),
			             block ? "blocks" : "threads", krange_var(th[i]->src[0])->name,
			             hwaxis_name(hw), block ? "block" : "thread", krange_var(target->src[0])->name,
			             ie.msg);
	}
	sched_remove_stage(k, tmp);
	return rc;
}

/* loop l of stage st is bound to a thread axis, or inside such a loop: that loop, else NULL */
static const UOp *
thread_around(const Kernel *k, int st, const UOp *l)
{
	UOp *p[256];
	int np = sched_path(k, st, l, p, 256), i;

	for (i = 0; i < np; i++)
		if (p[i]->op == OP_END && hwaxis_is_thread(krange_hw(p[i]->src[0])))
			return p[i];
	return NULL;
}

/* l with stmt put first (compute_at) or last (reverse) in its body, fenced by barriers when fence */
static int
insert(Kernel *k, int st, UOp *l, UOp *stmt, int last, int fence, Err *e)
{
	UOp **v, *nl;
	int n = l->nsrc - 1, m = 0, i, rc;
	UOp *bar = kernel_barrier(k);

	if (!bar || !(v = malloc((n + 4) * sizeof *v)))
		return err_set(e, "out of memory");
	if (!last) {
		/* [barrier, new, barrier, body]; a body that starts with a fenced copy shares its barriers */
		if (fence)
			v[m++] = bar;
		v[m++] = stmt;
		i = 0;
		if (fence && n > 0 && l->src[1]->op == OP_BARRIER)
			i = 1;
		else if (fence)
			v[m++] = bar;
		for (; i < n; i++)
			v[m++] = l->src[i + 1];
	} else {
		/* [body, barrier, new, barrier]; a body that ends with a fenced copy shares them */
		int end = n;

		if (fence && n > 0 && l->src[n]->op == OP_BARRIER)
			end = n - 1;
		for (i = 0; i < end; i++)
			v[m++] = l->src[i + 1];
		if (fence && end == n)
			v[m++] = bar;
		v[m++] = stmt;
		if (fence)
			v[m++] = bar;
	}
	nl = kernel_loop(k, l->src[0], v, m);
	free(v);
	if (!nl)
		return err_set(e, "out of memory");
	rc = sched_replace(k, st, l, nl, e);
	return rc;
}

/* the buffers stage a reads that stage b writes: the first, or -1 */
static int
conflict(const Kernel *k, const UOp *reader, const UOp *writer)
{
	int q;

	for (q = 0; q < k->nbuf; q++)
		if (sched_reads(k, reader, q) && sched_writes(k, writer, q))
			return q;
	return -1;
}

/*
** The moved nest n, rebuilt over region r, placed at the start (last = 0) or
** the end (last = 1) of loop l of stage st. Threads bound under l share the
** region between barriers; threads (and blocks) bound around l each run the
** nest, so a buffer B they share must get each element from one of them.
*/
static int
place(Kernel *k, int st, UOp *l, const Nest *n, const Region *r, const int64_t *lim, const KBuf *B,
      int last, Err *e)
{
	int64_t thr[HW_COUNT] = { 0 };
	const UOp *thr_loop = thread_around(k, st, l);
	UOp *moved;
	int i, coop = 0;

	if (B->scope != AS_REG && !thr_loop) {
		for (i = 1; i < l->nsrc; i++)
			threads_under(l->src[i], thr, 0);
		for (i = 0; i < HW_COUNT; i++)
			coop |= thr[i] > 0;
	}
	if (!(moved = rebuild(k, st, n, r, lim, coop ? thr : NULL, e)))
		return -1;
	if (per_instance(k, st, l, moved, B, e) < 0)
		return -1;
	return insert(k, st, l, moved, last, coop, e);
}

/* the INDEX nodes of buffer def under u, each once */
static int
indices_of(PMap *seen, const UOp *u, const UOp *def, UOp **out, int *n, int max, int depth)
{
	int i;

	if (depth > 2000)
		return -1;
	if (pmap_get(seen, u))
		return 0;
	if (pmap_put(seen, u, (void *)1) < 0)
		return -1;
	if (u->op == OP_INDEX && u->nsrc > 0 && u->src[0] == def) {
		if (*n == max)
			return -1;
		out[(*n)++] = (UOp *)u;
	}
	for (i = 0; i < u->nsrc; i++)
		if (indices_of(seen, u->src[i], def, out, n, max, depth + 1) < 0)
			return -1;
	return 0;
}

/*
** TVM compacts a buffer moved under a loop to the region the loop needs. The
** temporary B takes the region's extents where they are smaller than its own,
** and every access B[x] becomes B[x - start] (the region's start, an
** expression in the loops around). The storage is then reused by every
** iteration of the loops around the target, which is right only where none
** of them runs at once with another onto the same storage: registers are a
** thread's own; shared memory a block's (no thread-bound loop around); global
** memory everyone's (no bound and no parallel loop around). Elsewhere, and
** for a buffer with a layout of its own, the buffer keeps its shape.
*/
static int
compact(Kernel *k, int st, int b, const Region *r, int free_around, Err *e)
{
	KBuf *B = &k->buf[b];
	int64_t shape[T_MAXDIM];
	UOp *old[MAXACC], *new[MAXACC], *body;
	PMap seen = { 0 };
	int d, i, n = 0, any = 0, rc;

	for (d = 0; d < B->ndim; d++) {
		shape[d] = r->ext[d] < B->shape[d] ? r->ext[d] : B->shape[d];
		any |= shape[d] < B->shape[d];
	}
	if (!any || !free_around || strcmp(B->layout_desc, "row-major") != 0)
		return 0;
	rc = indices_of(&seen, k->stage[st].body, B->def, old, &n, MAXACC, 0);
	pmap_free(&seen);
	if (rc < 0)
		return 0;   /* too many accesses to rewrite: the buffer keeps its shape */
	for (i = 0; i < n; i++) {
		UOp *idx[T_MAXDIM];

		for (d = 0; d < B->ndim; d++)
			if (!(idx[d] = shape[d] < B->shape[d] ? simp(k, uop_sub(k->c, old[i]->src[d + 1], r->start[d]), e)
			                                      : old[i]->src[d + 1]))
				return -1;
		if (!(new[i] = kernel_index(k, b, idx, B->ndim)))
			return err_set(e, "out of memory");
	}
	if (kernel_reshape_buffer(k, b, shape, e) < 0)
		return -1;
	if (!(body = kernel_substitute(k->c, k->stage[st].body, old, new, n)))
		return err_set(e, "out of memory");
	k->stage[st].body = body;
	return 0;
}

/* No loop from l outward runs at once with another onto storage of scope sc (compact's condition). */
static int
alone_around(const Kernel *k, int st, const UOp *l, UAddrSpace sc)
{
	UOp *p[256];
	int np = sched_path(k, st, l, p, 256), i;

	if (sc == AS_REG)
		return 1;
	for (i = 0; i < np; i++) {
		const UOp *r;

		if (p[i]->op != OP_END)
			continue;
		r = p[i]->src[0];
		if (krange_type(r) == AX_THREAD || hwaxis_is_thread(krange_hw(r))
		|| (sc == AS_GLOBAL && krange_hw(r) != HW_NONE))
			return 0;
	}
	return 1;
}

/*
** Without enumeration: every loop variable v (of more than one iteration) on
** the path owns a dimension d of the region's start, c*v + k (k a constant)
** with |c| >= the region's extent there: iterations that differ in v place
** their boxes apart in dimension d.
*/
static int
owns_dims(Kernel *k, const Region *r, int nd, const UOp *const *var, int nv)
{
	int i, d;

	for (i = 0; i < nv; i++) {
		UOp *v = (UOp *)var[i];
		int ok = var[i]->arg[1] == var[i]->arg[0];

		for (d = 0; d < nd && !ok; d++) {
			const UOp *vs[64];
			UOp *lo;
			int64_t c;
			int n = uop_vars(r->start[d], vs, 64), j, only = 1;

			for (j = 0; j < n; j++)
				only &= vs[j] == v;
			if (!only || n != 1 || !kernel_affine_in(k->c, r->start[d], v, &c, &lo) || lo->op != OP_CONST)
				continue;
			ok = (c < 0 ? -c : c) >= r->ext[d];
		}
		if (!ok)
			return 0;
	}
	return 1;
}

/*
** The regions of one iteration of loop l (its start: r's, an expression in
** the loops from the stage's body down to l) do not overlap for any two
** iterations of those loops: each writes and reads storage of its own, and
** the storage may be reused. Checked by enumeration (SCHED_ENUM_LIMIT points,
** a buffer of at most 2^22 elements); 0 when not proved.
*/
static int
disjoint(Kernel *k, int st, const UOp *l, int b, const Region *r)
{
	const KBuf *B = &k->buf[b];
	UOp *p[256];
	const UOp *var[64];
	UBind bind[64];
	unsigned char *mark;
	int64_t total = 1, pts = 1, numel = 1, x[T_MAXDIM], at;
	int np = sched_path(k, st, l, p, 256), nv = 0, i, d, ok = 1;
	Err ie;

	for (i = 0; i < np && nv < 64; i++)
		if (p[i]->op == OP_END) {
			var[nv] = krange_var(p[i]->src[0]);
			bind[nv].name = var[nv]->name;
			bind[nv].value = 0;
			pts *= krange_extent(p[i]->src[0]);
			nv++;
		}
	if (owns_dims(k, r, B->ndim, var, nv))
		return 1;
	if (pts > SCHED_ENUM_LIMIT)
		return 0;
	for (d = 0; d < B->ndim; d++)
		if ((numel *= B->shape[d]) > (1 << 22))
			return 0;
	if (!(mark = calloc(numel, 1)))
		return 0;
	for (; total <= pts && ok; total++) {
		int64_t off[T_MAXDIM];

		for (d = 0; d < B->ndim && ok; d++)
			ok = uop_eval(r->start[d], bind, nv, &x[d], &ie) == 0;
		/* mark the box, element by element */
		for (d = 0; d < B->ndim; d++)
			off[d] = 0;
		while (ok) {
			for (at = 0, d = 0; d < B->ndim; d++) {
				int64_t c = x[d] + off[d];

				if (c < 0 || c >= B->shape[d])
					break;
				at = at * B->shape[d] + c;
			}
			if (d == B->ndim) {
				if (mark[at])
					ok = 0;
				mark[at] = 1;
			}
			for (d = B->ndim - 1; d >= 0 && ++off[d] == r->ext[d]; d--)
				off[d] = 0;
			if (d < 0)
				break;
		}
		for (i = nv - 1; i >= 0 && ++bind[i].value > var[i]->arg[1]; i--)
			bind[i].value = var[i]->arg[0];
		if (i < 0)
			break;
	}
	free(mark);
	return ok;
}

int
sched_compact(Kernel *k, int b, Err *e)
{
	const KBuf *B = &k->buf[b];
	UOp *l[256], *best = NULL;
	const UOp *inner[64];
	Accs *A, *all;
	Region r;
	Err ie;
	int st, user = -1, nl, i, rc = 0;

	for (st = 0; st < k->nstage; st++)
		if (sched_reads(k, k->stage[st].body, b) || sched_writes(k, k->stage[st].body, b)) {
			if (user >= 0)
				return 0;   /* a buffer between stages keeps its shape */
			user = st;
		}
	if (user < 0 || B->role != KB_TEMP)
		return 0;
	if (!(A = calloc(2, sizeof *A)))
		return err_set(e, "out of memory");
	all = A + 1;
	/* every access of the stage, then the innermost loop whose body holds them all */
	if (collect(k, k->stage[user].body, B->def, 0, inner, 0, all, 0) < 0
	|| collect(k, k->stage[user].body, B->def, 1, inner, 0, all, 0) < 0)
		goto out;
	nl = sched_loops(k, user, l, 256);
	for (i = 0; i < nl; i++) {
		int j;

		A->n = 0;
		for (j = 1; j < l[i]->nsrc; j++)
			if (collect(k, l[i]->src[j], B->def, 0, inner, 0, A, 0) < 0
			|| collect(k, l[i]->src[j], B->def, 1, inner, 0, A, 0) < 0)
				goto out;
		if (A->n == all->n && (!best || sched_path(k, user, l[i], (UOp *[256]){ 0 }, 256)
		                                > sched_path(k, user, best, (UOp *[256]){ 0 }, 256)))
			best = l[i];
	}
	if (!best)
		goto out;
	A->n = 0;
	for (i = 1; i < best->nsrc; i++)
		if (collect(k, best->src[i], B->def, 0, inner, 0, A, 0) < 0
		|| collect(k, best->src[i], B->def, 1, inner, 0, A, 0) < 0)
			goto out;
	if (region_of(k, A, b, krange_var(best->src[0])->name, &r, &ie) < 0
	|| !disjoint(k, user, best, b, &r))
		goto out;
	{
		int64_t before = 1, after = 1;

		for (i = 0; i < B->ndim; i++)
			before *= B->shape[i];
		if (compact(k, user, b, &r, alone_around(k, user, best, B->scope), e) < 0) {
			rc = -1;
			goto out;
		}
		for (i = 0; i < k->buf[b].ndim; i++)
			after *= k->buf[b].shape[i];
		rc = after < before;
	}
out:
	free(A);
	return rc;
}

/* whether statement s reads load ld anywhere but under loop l */
static int
read_outside(const UOp *s, const UOp *l, const UOp *ld, int depth)
{
	UOp *x[MAXACC];
	int i, n;

	if (s == l || depth > 1000)
		return 0;
	if (s->op == OP_STORE) {
		n = sched_loads(s, ld->src[0]->src[0], x, MAXACC);
		for (i = 0; i < n; i++)
			if (x[i] == ld)
				return 1;
		return 0;
	}
	if (s->op != OP_END && s->op != OP_IF)
		return 0;
	if (s->op == OP_IF) {
		n = sched_loads(s->src[0], ld->src[0]->src[0], x, MAXACC);
		for (i = 0; i < n; i++)
			if (x[i] == ld)
				return 1;
	}
	for (i = 1; i < s->nsrc; i++)
		if (read_outside(s->src[i], l, ld, depth + 1))
			return 1;
	return 0;
}

static int
compute_at(Kernel *k, int sp, int sc, const char *loop, Err *e)
{
	const char *pn = k->stage[sp].name, *cn = k->stage[sc].name;
	const UOp *inner[64];
	int64_t lim[T_MAXDIM];
	UOp *l, *all[MAXACC];
	Nest n;
	Region r;
	Accs *A;
	KBuf *B;
	int i, j, q, nall, rc = -1, alone;

	if (sp == sc)
		return err_set(e, "stage %s is both the producer and the consumer; compute_at moves a "
		               "producer into a later stage that reads it", pn);
	if (sp > sc)
		return err_set(e, "stage %s comes after stage %s; compute_at moves a producer into a later "
		               "consumer (reverse_compute_at moves a consumer)", pn, cn);
	if (!(l = sched_loop(k, sc, loop, e)))
		return -1;
	if (nest_of(k, sp, &n, "compute_at", e) < 0)
		return -1;
	B = &k->buf[n.buf];
	if (B->role != KB_TEMP)
		return err_set(e, "stage %s writes %s, an %s; compute_at computes a temporary only where "
		               "it is read", pn, B->name, krole_name(B->role));
	for (j = 0; j < k->nstage; j++) {
		if (j == sp)
			continue;
		if (sched_writes(k, k->stage[j].body, n.buf))
			return err_set(e, "stage %s also writes %s; compute_at moves the only stage that "
			               "writes its buffer", k->stage[j].name, B->name);
		if (j != sc && sched_reads(k, k->stage[j].body, n.buf))
			return err_set(e, "stage %s also reads %s; compute_at computes only what stage %s "
			               "reads", k->stage[j].name, B->name, cn);
	}
	for (j = sp + 1; j <= sc; j++)
		if ((q = conflict(k, k->stage[sp].body, k->stage[j].body)) >= 0)
			return err_set(e, "stage %s writes %s, which stage %s reads; moved into stage %s it "
			               "would read the new %s", k->stage[j].name, k->buf[q].name, pn, cn,
			               k->buf[q].name);
	if (!(A = calloc(1, sizeof *A)))
		return err_set(e, "out of memory");
	nall = sched_loads(k->stage[sc].body, B->def, all, MAXACC);
	if (nall == 0) {
		err_set(e, "stage %s does not read %s", cn, B->name);
		goto out;
	}
	for (i = 1; i < l->nsrc; i++)
		if (collect(k, l->src[i], B->def, 0, inner, 0, A, 0) < 0) {
			err_set(e, "stage %s: too many accesses to %s under loop %s", cn, B->name, loop);
			goto out;
		}
	/* every load of B in the consumer must be under the loop (by place: one index may be read
	** both inside and outside it) */
	for (i = 0; i < nall; i++) {
		Buf s;

		if (!read_outside(k->stage[sc].body, l, all[i], 0))
			continue;
		buf_init(&s);
		expr_str(&s, k, all[i]->src[0]);
		err_set(e, "compute_at into a loop that does not cover the consumer's region: stage %s "
		        "reads %s outside loop %s", cn, s.s ? s.s : "?", loop);
		buf_free(&s);
		goto out;
	}
	if (region_of(k, A, n.buf, loop, &r, e) < 0)
		goto out;
	for (i = 0; i < n.nd; i++)
		lim[i] = B->shape[i];
	alone = alone_around(k, sc, l, B->scope);
	if (place(k, sc, l, &n, &r, lim, B, 0, e) < 0 || compact(k, sc, n.buf, &r, alone, e) < 0)
		goto out;
	sched_remove_stage(k, sp);
	rc = 0;
out:
	free(A);
	return rc;
}

/* v's value in bind (by name), bound first to its range's start if absent */
static UBind *
bound(UBind *bind, int *nb, const UOp *v)
{
	int m;

	for (m = 0; m < *nb && strcmp(bind[m].name, v->name); m++)
		;
	if (m == *nb && *nb < 128)
		bind[(*nb)++] = (UBind){ v->name, v->arg[0] };
	return m < 128 ? &bind[m] : NULL;
}

static void
bind_vars(UBind *bind, int *nb, const UOp *u)
{
	const UOp *vs[64];
	int n = uop_vars(u, vs, 64), j;

	for (j = 0; j < n && j < 64; j++)
		bound(bind, nb, vs[j]);
}

/*
** reverse_compute_at reads, after each iteration of the loop, the box the
** producer's stores span there (within the buffer). A box is what they write
** only when they cover it: i0*3 + i1 over an inner i0 of 2 spans rows i1 ..
** i1+3 and writes two of them (the rows between come in later iterations); a
** store under a guard on the loop (i11 < 1 after two splits) writes nothing in
** some iterations. Enumerated over the loop and the loops inside it, with the
** loops around it at their first value, where that is at most SCHED_ENUM_LIMIT
** points; -1 with the first element of a box left unwritten.
*/
static int
dense(Kernel *k, int sp, const UOp *l, UOp *const *sv, int nsv, const KBuf *B, const Region *rb,
      const char *loop, Err *e)
{
	int64_t vol = 1, pts, start[T_MAXDIM], p, x[T_MAXDIM], total = 0;
	const UOp *lv = krange_var(l->src[0]);
	UProg *prog = NULL;
	unsigned char *seen;
	int i, d, rc = 0, ok;

	for (d = 0; d < B->ndim; d++)
		if (uck_mul(vol, rb->ext[d], &vol) < 0 || vol > SCHED_ENUM_LIMIT)
			return 0;
	if (!(seen = calloc((size_t)vol, 1)))
		return err_set(e, "out of memory");
	for (pts = 0; lv->arg[0] + pts <= lv->arg[1] && rc == 0; pts++) {
		int64_t lval = lv->arg[0] + pts;

		memset(seen, 0, (size_t)vol);
		for (i = 0; i < nsv && rc == 0; i++) {
			UOp *path[256], *gate[64], *inner[64];
			UBind bind[128];
			int np = sched_path(k, sp, sv[i], path, 256), ng = 0, ni = 0, nb = 0, j, under = 0;

			for (j = 0; j < np - 1; j++) {
				if (path[j] == l) {
					under = 1;
					continue;
				}
				if (!under)
					continue;
				if (path[j]->op == OP_END && ni < 64)
					inner[ni++] = (UOp *)krange_var(path[j]->src[0]);
				else if (path[j]->op == OP_IF && ng < 64)
					gate[ng++] = path[j]->src[0];
			}
			if (!under)
				continue;
			if (sv[i]->nsrc == 3 && ng < 64)
				gate[ng++] = sv[i]->src[2];
			{
				int64_t n = 1;

				/* the store's points in this iteration: the product of the loops inside */
				for (j = 0; j < ni; j++)
					if (uck_mul(n, inner[j]->arg[1] - inner[j]->arg[0] + 1, &n) < 0)
						n = INT64_MAX;
				if (n == INT64_MAX || uck_add(total, n, &total) < 0 || total > SCHED_ENUM_LIMIT) {
					free(seen);
					return 0;   /* too many points to enumerate: the box's construction stands */
				}
			}
			bound(bind, &nb, lv)->value = lval;
			for (d = 0; d < B->ndim; d++) {
				bind_vars(bind, &nb, sv[i]->src[0]->src[d + 1]);
				bind_vars(bind, &nb, rb->start[d]);
			}
			for (j = 0; j < ng; j++)
				bind_vars(bind, &nb, gate[j]);
			for (d = 0; d < B->ndim && rc == 0; d++)
				if (uop_eval(rb->start[d], bind, nb, &start[d], e) < 0)
					rc = -1;
			/* the gates and the indices compiled once, run at every point (every variable bound
			** first: the program keeps bind's layout) */
			for (j = 0; j < ni; j++)
				bound(bind, &nb, inner[j]);
			{
				const UOp *roots[64 + T_MAXDIM];
				int nr = 0;

				for (j = 0; j < ng; j++)
					roots[nr++] = gate[j];
				for (d = 0; d < B->ndim; d++)
					roots[nr++] = sv[i]->src[0]->src[d + 1];
				if (rc == 0 && !(prog = uop_prog_new(roots, nr, bind, nb, e)))
					rc = -1;
			}
			for (; rc == 0;) {
				int64_t off = 0, val[64 + T_MAXDIM];
				int in = 1;

				if (uop_prog_run(prog, bind, val, e) < 0) {
					rc = -1;
					break;
				}
				for (j = 0, ok = 1; j < ng && ok; j++)
					ok = val[j] != 0;
				for (d = 0; d < B->ndim && ok; d++) {
					x[d] = val[ng + d];
					if (x[d] - start[d] < 0 || x[d] - start[d] >= rb->ext[d])
						in = 0;
					else
						off = off * rb->ext[d] + (x[d] - start[d]);
				}
				if (ok && in)
					seen[off] = 1;
				for (j = ni - 1; j >= 0; j--) {
					UBind *v = bound(bind, &nb, inner[j]);

					if (++v->value <= inner[j]->arg[1])
						break;
					v->value = inner[j]->arg[0];
				}
				if (j < 0)
					break;
			}
			uop_prog_free(prog);
			prog = NULL;
		}
		if (rc)
			break;
		/* the box's elements inside the buffer: the consumer's own guard skips the rest */
		for (p = 0; p < vol; p++) {
			int64_t q = p;

			for (d = B->ndim - 1, ok = 1; d >= 0; d--) {
				int64_t c = start[d] + q % rb->ext[d];

				ok &= c >= 0 && c < B->shape[d];
				q /= rb->ext[d];
			}
			if (ok && !seen[p] && rc == 0)
				rc = 1;
		}
		if (rc == 1) {
			Buf el, st;
			int64_t c[T_MAXDIM], q;

			for (p = 0; p < vol; p++) {
				for (q = p, d = B->ndim - 1, ok = 1; d >= 0; d--) {
					c[d] = start[d] + q % rb->ext[d];
					ok &= c[d] >= 0 && c[d] < B->shape[d];
					q /= rb->ext[d];
				}
				if (ok && !seen[p])
					break;
			}
			buf_init(&el);
			buf_init(&st);
			emit(&el, "%s[", B->name);
			for (d = 0; d < B->ndim; d++)
				emit(&el, "%s%lld", d ? ", " : "", (long long)c[d]);
			emit(&el, "]");
			kernel_print_store(&st, k, sv[0]);
			err_set(e, "the stores under loop %s do not fill the box they span: at %s=%lld, %s is in "
			        "the box but written in another iteration (the stores: %s); the consumer would "
			        "read it before it is written", loop, lv->name, (long long)lval, el.s ? el.s : "?",
			        st.s ? st.s : "?");
			buf_free(&el);
			buf_free(&st);
			rc = -1;
		}
	}
	free(seen);
	return rc < 0 ? -1 : 0;
}

/*
** Every buffer C other than B that the producer writes and the consumer reads
** must hold final values, after each iteration of the loop, wherever the
** consumer's box reads it: the producer alone writes C, its stores under the
** loop fill their box (dense), the consumer reads C by its own loop variables
** (each a loop over a dimension of B, or a whole extent), and C's box starts
** where the consumer's does and is as long, in every dimension so read.
*/
static int
also_final(Kernel *k, int sc, int sp, const UOp *l, const KBuf *B, const Nest *n, const Region *r,
           const char *loop, Err *e)
{
	UOp *sv[MAXSTMT], *cs[MAXSTMT], *ld[MAXACC];
	const UOp *inner[64];
	int nsv = sched_stores(k, sp, sv, MAXSTMT), c, i, j, d, m, ncs, nl, rc = 0;
	Accs *A;
	Region rc_;

	if (!(A = calloc(1, sizeof *A)))
		return err_set(e, "out of memory");
	for (c = 0; c < k->nbuf && rc == 0; c++) {
		const KBuf *C = &k->buf[c];

		if (C == B || !sched_writes(k, k->stage[sp].body, c) || !sched_reads(k, k->stage[sc].body, c))
			continue;
		for (j = 0; j < k->nstage; j++)
			if (j != sp && sched_writes(k, k->stage[j].body, c)) {
				rc = err_set(e, "stage %s also writes %s; its values are not stage %s's after loop %s",
				             k->stage[j].name, C->name, k->stage[sp].name, loop);
				goto out;
			}
		for (i = ncs = 0; i < nsv; i++)
			if (sv[i]->src[0]->src[0] == C->def)
				cs[ncs++] = sv[i];
		A->n = 0;
		for (i = 1; i < l->nsrc; i++)
			if (collect(k, l->src[i], C->def, 1, inner, 0, A, 0) < 0) {
				rc = err_set(e, "stage %s: too many stores to %s under loop %s", k->stage[sp].name, C->name, loop);
				goto out;
			}
		if (A->n < ncs) {
			rc = err_set(e, "loop %s of stage %s does not cover the stores to %s, which stage %s reads",
			             loop, k->stage[sp].name, C->name, k->stage[sc].name);
			goto out;
		}
		if (region_of(k, A, c, loop, &rc_, e) < 0 || dense(k, sp, l, cs, ncs, C, &rc_, loop, e) < 0) {
			rc = -1;
			goto out;
		}
		nl = sched_loads(k->stage[sc].body, C->def, ld, MAXACC);
		for (i = 0; i < nl && rc == 0; i++)
			for (d = 0; d < C->ndim && rc == 0; d++) {
				const UOp *x = ld[i]->src[0]->src[d + 1];
				UOp *delta;
				int dd = -1;

				for (m = 0; m < n->nd; m++)
					if (krange_var(n->loop[m]->src[0]) == x)
						dd = n->dim[m];
				if (x->op == OP_CONST && x->arg[0] == 0 && C->shape[d] == 1)
					continue;
				if (dd < 0) {
					rc = err_set(e, "stage %s reads %s at an index that is not one of its loop "
					             "variables (dimension %d)", k->stage[sc].name, C->name, d);
					break;
				}
				if (!(delta = simp(k, uop_sub(k->c, rc_.start[d], r->start[dd]), e)))
					rc = -1;
				else if (delta->op != OP_CONST || delta->arg[0] != 0 || rc_.ext[d] < r->ext[dd])
					rc = err_set(e, "after an iteration of loop %s, stage %s has written a box of %s "
					             "that does not cover what stage %s reads there (dimension %d)", loop,
					             k->stage[sp].name, C->name, k->stage[sc].name, d);
			}
	}
out:
	free(A);
	return rc;
}

static int
reverse_compute_at(Kernel *k, int sc, int sp, const char *loop, Err *e)
{
	const char *pn = k->stage[sp].name, *cn = k->stage[sc].name;
	const UOp *inner[64];
	int64_t lim[T_MAXDIM];
	UOp *l, *p[256], *ld[MAXACC], *sv[MAXSTMT];
	Nest n;
	Region rb, r;
	Accs *A;
	KBuf *B, *D;
	int i, j, q, d, np, nl, nsv, b, rc = -1;

	if (sc == sp)
		return err_set(e, "stage %s is both the consumer and the producer; reverse_compute_at "
		               "moves a consumer under an earlier stage it reads", cn);
	if (sc < sp)
		return err_set(e, "stage %s comes before stage %s; reverse_compute_at moves a consumer under "
		               "an earlier producer (compute_at moves a producer)", cn, pn);
	if (!(l = sched_loop(k, sp, loop, e)))
		return -1;
	if (nest_of(k, sc, &n, "reverse_compute_at", e) < 0)
		return -1;
	D = &k->buf[n.buf];
	/* B: of the buffers the producer writes, the one of most dimensions the consumer reads
	** (a fused stage writes several: attention's pv beside s_sum); the consumer's box comes
	** from B, and every other one it reads must be final in that box too (also_final) */
	nsv = sched_stores(k, sp, sv, MAXSTMT);
	if (nsv == 0)
		return err_set(e, "stage %s stores nothing", pn);
	for (b = -1, i = 0; i < nsv; i++) {
		int c = (int)sv[i]->src[0]->src[0]->arg[0];

		if (sched_reads(k, k->stage[sc].body, c) && (b < 0 || k->buf[c].ndim > k->buf[b].ndim))
			b = c;
	}
	if (b < 0)
		return err_set(e, "stage %s does not read what stage %s writes", cn, pn);
	B = &k->buf[b];
	for (i = j = 0; i < nsv; i++)
		if (sv[i]->src[0]->src[0] == B->def)
			sv[j++] = sv[i];
	nsv = j;
	if (!(nl = sched_loads(k->stage[sc].body, B->def, ld, MAXACC)))
		return err_set(e, "stage %s does not read %s", cn, B->name);
	np = sched_path(k, sp, l, p, 256);
	for (i = 0; i < np; i++)
		if (p[i]->op == OP_END && is_reduce(krange_type(p[i]->src[0])))
			return err_set(e, "loop %s %s reduction loop %s of stage %s: the elements of %s are not "
			               "final at the end of one iteration", loop, p[i] == l ? "is" : "is inside",
			               krange_var(p[i]->src[0])->name, pn, B->name);
	for (j = sp + 1; j < sc; j++) {
		if ((q = conflict(k, k->stage[sc].body, k->stage[j].body)) >= 0)
			return err_set(e, "stage %s writes %s, which stage %s reads; moved under stage %s it "
			               "would read the old %s", k->stage[j].name, k->buf[q].name, cn, pn,
			               k->buf[q].name);
		if (sched_reads(k, k->stage[j].body, n.buf) || sched_writes(k, k->stage[j].body, n.buf))
			return err_set(e, "stage %s, between %s and %s, accesses %s, which %s writes", k->stage[j].name,
			               pn, cn, D->name, cn);
	}
	if (D->role == KB_INPUT)
		return err_set(e, "stage %s writes %s, an input, in place", cn, D->name);
	for (j = 0; j < k->nstage; j++)
		if (j != sp && sched_writes(k, k->stage[j].body, b))
			return err_set(e, "stage %s also writes %s; the regions of stage %s would not cover "
			               "what stage %s reads", k->stage[j].name, B->name, pn, cn);
	/* the consumer reads B by its spatial variables, one load pattern */
	for (d = 0; d < B->ndim; d++) {
		const UOp *x = ld[0]->src[0]->src[d + 1];

		for (i = 0; i < n.nd && krange_var(n.loop[i]->src[0]) != x; i++)
			;
		for (j = 1; j < nl && ld[j]->src[0] == ld[0]->src[0]; j++)
			;
		/* a dimension of one element, read at 0 (the lowering's broadcast of size-1 axes) */
		if (j == nl && B->shape[d] == 1 && x->op == OP_CONST && x->arg[0] == 0)
			continue;
		if (i == n.nd || j < nl) {
			Buf s;

			buf_init(&s);
			expr_str(&s, k, ld[j < nl ? j : 0]->src[0]);
			err_set(e, "stage %s reads %s; reverse_compute_at needs one load of %s whose indices "
			        "are the loop variables over %s's dimensions", cn, s.s ? s.s : "?", B->name,
			        D->name);
			buf_free(&s);
			return -1;
		}
		/* the consumer's elements past B's end (a pad) have no producer iteration to go under */
		if (krange_extent(n.loop[i]->src[0]) != B->shape[d])
			return err_set(e, "stage %s's loop %s runs %lld times over dimension %d of %s, which has "
			               "%lld (the consumer pads or crops it); the elements of %s past %s's end "
			               "would be written by no iteration of the producer", cn,
			               krange_var(n.loop[i]->src[0])->name,
			               (long long)krange_extent(n.loop[i]->src[0]), d, B->name,
			               (long long)B->shape[d], D->name, B->name);
	}
	if (!(A = calloc(1, sizeof *A)))
		return err_set(e, "out of memory");
	for (i = 1; i < l->nsrc; i++)
		if (collect(k, l->src[i], B->def, 1, inner, 0, A, 0) < 0) {
			err_set(e, "stage %s: too many stores to %s under loop %s", pn, B->name, loop);
			goto out;
		}
	if (A->n < nsv) {
		err_set(e, "loop %s of stage %s does not cover the producer's writes: it stores to %s "
		        "outside the loop", loop, pn, B->name);
		goto out;
	}
	if (region_of(k, A, b, loop, &rb, e) < 0 || dense(k, sp, l, sv, nsv, B, &rb, loop, e) < 0)
		goto out;
	/* the consumer's region: B's region on the loops that index B, whole extents elsewhere */
	for (i = 0; i < n.nd; i++) {
		int dd = n.dim[i];
		const UOp *v = krange_var(n.loop[i]->src[0]);

		r.start[dd] = uop_int(k->c, 0);
		r.ext[dd] = krange_extent(n.loop[i]->src[0]);
		lim[dd] = r.ext[dd];
		for (d = 0; d < B->ndim; d++)
			if (ld[0]->src[0]->src[d + 1] == v) {
				r.start[dd] = rb.start[d];
				r.ext[dd] = rb.ext[d] < r.ext[dd] ? rb.ext[d] : r.ext[dd];
			}
	}
	if (also_final(k, sc, sp, l, B, &n, &r, loop, e) < 0 || place(k, sp, l, &n, &r, lim, D, 1, e) < 0)
		goto out;
	sched_remove_stage(k, sc);
	rc = 0;
out:
	free(A);
	return rc;
}

static int
step(Schedule *s, const char *what, const char *stage, const char *other, const char *loop, Err *e)
{
	Kernel *next;
	Buf line;
	Err ie;
	int a, b, rc;

	memset(&ie, 0, sizeof ie);
	if ((a = sched_stage(s->k, stage, &ie)) < 0 || (b = sched_stage(s->k, other, &ie)) < 0)
		return err_set(e, "%s: %s", what, ie.msg);
	if (!(next = sched_begin(s, e)))
		return -1;
	rc = what[0] == 'c' ? compute_at(next, a, b, loop, &ie) : reverse_compute_at(next, a, b, loop, &ie);
	if (rc < 0) {
		kernel_free(next);
		return err_set(e, "%s: %s", what, ie.msg);
	}
	buf_init(&line);
	emit(&line, "s:%s(", what);
	sched_quote(&line, stage);
	emit(&line, ", ");
	sched_quote(&line, other);
	emit(&line, ", ");
	sched_quote(&line, loop);
	emit(&line, ")");
	rc = line.oom ? (kernel_free(next), err_set(e, "%s: out of memory", what))
	   : sched_commit(s, next, what, line.s, e);
	buf_free(&line);
	return rc;
}

int
sched_compute_at(Schedule *s, const char *stage, const char *consumer, const char *loop, Err *e)
{
	return step(s, "compute_at", stage, consumer, loop, e);
}

int
sched_reverse_compute_at(Schedule *s, const char *stage, const char *producer, const char *loop, Err *e)
{
	return step(s, "reverse_compute_at", stage, producer, loop, e);
}
