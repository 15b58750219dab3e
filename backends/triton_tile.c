/* triton_tile.c - the Triton dialect's tiles in registers: register buffers as tile variables, tile contractions as tl.dot, loops bounded by an affine guard. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "triton.h"

/* name = value over the whole register tile of the store's buffer (a where keeps the old
** elements under a gate) */
int
tr_reg_put(Emit *E, const UOp *s, const Tx *v, const Tx *gate, int ind)
{
	TState *T = E->aux;
	int bi = (int)s->src[0]->src[0]->arg[0], at[T_MAXDIM], d, n = 0, ok = 1;
	const KBuf *B = &E->k->buf[bi];
	Buf shape;

	if (tr_reg_axes(E, s->src[0], at) < 0)
		return -1;
	buf_init(&shape);
	for (d = 0; d < B->ndim; d++) {
		const Ar *a;

		if (at[d] < 0)
			continue;
		ok &= at[d] == n;
		a = tr_arange(E, T->fr[at[d]].var, T->fr[at[d]].pad);
		if (!a)
			return tr_oom(E);
		emit(&shape, "%s%s", n++ ? ", " : "", a->block);
	}
	if (!ok || n != T->nfr) {
		buf_free(&shape);
		return err_set(E->e, "triton: stage %s: a store to register buffer %s that does not cover it in "
		               "its own order", tr_stname(E, T->S->st), B->name);
	}
	emit_indent(E->out, 2 * ind);
	emit(E->out, "%s = ", T->rname[bi]);
	if (gate)
		emit(E->out, "tl.where(%s, ", gate->s.s ? gate->s.s : "True");
	/* the value over the whole tile, in the buffer's dtype: a constant fills it; a value over
	** every axis of the frame is already whole; another is broadcast */
	if (s->src[1]->op == OP_CONST && n)
		emit(E->out, "tl.full((%s,), %s, %s)", shape.s, v->s.s ? v->s.s : "", tr_ttype(B->dtype));
	else if (s->src[1]->op == OP_CONST)
		emit(E->out, "tl.full((), %s, %s)", v->s.s ? v->s.s : "", tr_ttype(B->dtype));
	else if (tr_axes_of(T, s->src[1]) == (1u << n) - 1 && s->src[1]->dtype == B->dtype)
		emit(E->out, "%s", v->s.s ? v->s.s : "");
	else if (n == 0)
		emit(E->out, "(%s).to(%s)", v->s.s ? v->s.s : "", tr_ttype(B->dtype));
	else
		emit(E->out, "tl.broadcast_to((%s).to(%s), (%s,))", v->s.s ? v->s.s : "", tr_ttype(B->dtype), shape.s);
	if (gate)
		emit(E->out, ", %s)", T->rname[bi]);
	emit(E->out, "\n");
	buf_free(&shape);
	return 0;
}


/*
** Tile contractions on tensor cores. X[m, n] += reduce(+, a * b, dim=k), where
** a spans the axes (m, k) and b the axes (k, n) of the value's frame, is
** tl.dot(a, b): each operand is written in a frame of its own two axes (a
** transposed tile is loaded through transposed offsets), the padding of k
** zeroed. A float32 operand widened from float16 or bfloat16 goes in as it
** was (the products are exact in float32, and tl.dot accumulates in float32,
** as the interpreter does, in another order); two float32 operands multiply
** in IEEE float32 (input_precision="ieee": no TF32 rounding). Triton's dot
** takes tiles of at least 16 in each axis: smaller ones keep the broadcast
** product and tl.sum. Returns 1 with the dot in *x, 0 when the statement is
** not a contraction, -1 on error.
*/
static int
dot_operand(Emit *E, EStage *S, const TileStmt *ts, const UOp *x, int r0, int r1, int kpos, Tx *out,
            DType *dt, int ind)
{
	TState *T = E->aux;
	const UOp *fr[2];
	UOp *xs;

	fr[0] = ts->loop[r0];
	fr[1] = ts->loop[r1];
	*dt = (DType)x->dtype;
	if (x->op == OP_CAST && x->dtype == DT_FLOAT32
	&& (x->src[0]->dtype == DT_FLOAT16 || x->src[0]->dtype == DT_BFLOAT16)) {
		x = x->src[0];
		*dt = (DType)x->dtype;
	}
	if (tr_frame(E, S->st, fr, 2) < 0 || !(xs = tr_in_frame(E, (UOp *)x)))
		return -1;
	if (tr_hoist(E, &xs, 1, ind) < 0 || tr_value(E, xs, out, 0) < 0) {
		pmap_free(&T->hoist);
		return -1;
	}
	pmap_free(&T->hoist);
	if (T->fr[kpos].masked) {
		Tx w;

		tr_tx_init(&w);
		emit(&w.s, "tl.where(");
		tr_mask_text(T, &w.s, 1u << kpos);
		emit(&w.s, ", ");
		tr_operand(&w.s, out, 0);
		emit(&w.s, ", 0.0)");
		buf_free(&out->s);
		*out = w;
	}
	return 0;
}

/* the axes of the statement's frame (its loops) that u mentions */
static unsigned
loops_of(const TileStmt *ts, const UOp *u)
{
	const UOp *v[64];
	int n = uop_vars(u, v, 64), i, f;
	unsigned m = 0;

	for (i = 0; i < n && i < 64; i++)
		for (f = 0; f < ts->n; f++)
			if (v[i] == krange_var(ts->loop[f]))
				m |= 1u << f;
	return m;
}

int
tr_dot(Emit *E, EStage *S, const TileStmt *ts, Tx *x, int ind)
{
	const UOp *other = ts->other, *a, *b, *t;
	unsigned ma, mb;
	DType da, db;
	Tx ta, tb;
	int f, rc = -1;

	if (ts->op != OP_ADD || ts->nstored != 2 || ts->n != 3 || !other || other->op != OP_MUL
	|| other->dtype != DT_FLOAT32)
		return 0;
	for (f = 0; f < 3; f++)
		if (tr_pow2(krange_extent(ts->loop[f])) < 16)
			return 0;
	a = other->src[0];
	b = other->src[1];
	ma = loops_of(ts, a);
	mb = loops_of(ts, b);
	if (ma == 6 && mb == 5) {   /* b spans (m, k), a spans (k, n) */
		t = a, a = b, b = t;
		ma = 5, mb = 6;
	}
	if (ma != 5 || mb != 6)   /* a: axes 0 and 2 (m, k); b: axes 2 and 1 (k, n) */
		return 0;
	tr_tx_init(&ta);
	tr_tx_init(&tb);
	if (dot_operand(E, S, ts, a, 0, 2, 1, &ta, &da, ind) < 0 || dot_operand(E, S, ts, b, 2, 1, 0, &tb, &db, ind) < 0)
		goto out;
	emit(&x->s, "tl.dot(");
	tr_operand(&x->s, &ta, P_TATOM);
	if (da != db || da == DT_FLOAT32)
		emit(&x->s, "%s", da == DT_FLOAT32 ? "" : ".to(tl.float32)");
	emit(&x->s, ", ");
	tr_operand(&x->s, &tb, P_TATOM);
	if (da != db || db == DT_FLOAT32)
		emit(&x->s, "%s", db == DT_FLOAT32 ? "" : ".to(tl.float32)");
	if (da != db || da == DT_FLOAT32)
		emit(&x->s, ", input_precision=\"ieee\"");
	emit(&x->s, ")");
	x->prec = P_TATOM;
	rc = 1;
out:
	buf_free(&ta.s);
	buf_free(&tb.s);
	return rc;
}

/*
** A serial loop whose whole body is one guard made of comparisons affine in
** the loop's variable (skip_masked's "some mask holds in the tile") runs
** over the range the guard allows: for v in range(lo, hi), each c*v + r < 0
** a bound (c > 0: v < ceil(-r / c); c < 0: v > floor(r / -c)), the
** numerators kept non-negative so that Triton's truncating // floors. The
** loop's own extent bounds both. 1 when written, 0 when the guard is not
** of that form, -1 on error.
*/
int
tr_bounded(Emit *E, const UOp *s, int ind)
{
	TState *T = E->aux;
	const UOp *r = s->src[0];
	UOp *v = (UOp *)krange_var(r), *g = s->src[1]->src[0], *cj[16];
	int64_t ext = krange_extent(r);
	int n = 0, i;
	Buf lo, hi;

	/* the conjuncts */
	cj[n++] = g;
	for (i = 0; i < n; i++)
		while (cj[i]->op == OP_AND && n < 16) {
			cj[n++] = cj[i]->src[1];
			cj[i] = cj[i]->src[0];
		}
	for (i = 0; i < n; i++)
		if (cj[i]->op != OP_CMPLT || cj[i]->src[0]->dtype != DT_INDEX || !tr_pure(T, cj[i], 0))
			return 0;
	buf_init(&lo);
	buf_init(&hi);
	emit(&lo, "0");
	emit(&hi, "%lld", (long long)ext);
	for (i = 0; i < n; i++) {
		UOp *d = uop_sub(E->k->c, cj[i]->src[0], cj[i]->src[1]), *rest, *num;
		Buf b;
		int64_t c;

		if (!d || !kernel_affine_in(E->k->c, d, v, &c, &rest) || c == 0) {
			buf_free(&lo);
			buf_free(&hi);
			return 0;
		}
		/* c > 0: hi = (max(-r, 0) + c - 1) // c; c < 0: lo = (max(r, -1) - c) // -c */
		num = c > 0 ? uop_neg(E->k->c, rest) : rest;
		{
			UOp *o;
			Err ie;

			if (num && uop_simplify(E->k->c, num, &o, &ie) == 0)
				num = o;
		}
		buf_init(&b);
		uop_print(&b, num, D_TRITON);
		if (c > 0) {
			Buf t;

			buf_init(&t);
			emit(&t, "tl.minimum(%s, (tl.maximum(%s, 0) + %lld) // %lld)", hi.s, b.s ? b.s : "0",
			     (long long)(c - 1), (long long)c);
			buf_free(&hi);
			hi = t;
		} else {
			Buf t;

			buf_init(&t);
			emit(&t, "tl.maximum(%s, (tl.maximum(%s, -1) + %lld) // %lld)", lo.s, b.s ? b.s : "0",
			     (long long)-c, (long long)-c);
			buf_free(&lo);
			lo = t;
		}
		buf_free(&b);
	}
	i = lo.oom || hi.oom;
	emit(E->out, "for %s in range(%s, %s):  # the iterations skip_masked keeps\n", v->name, lo.s, hi.s);
	buf_free(&lo);
	buf_free(&hi);
	(void)ind;
	return i ? tr_oom(E) : 1;
}

