/* stmt.c - statements of the C family: stores, atomics, ifs, loops through the dialect's hook, reductions accumulated in a local variable. */
#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "emit.h"

/* ---- statements ---- */

const char *
emit_loop_note(const UOp *r, char *buf, size_t n)
{
	AxisType t = krange_type(r);
	HwAxis hw = krange_hw(r);
	char ty[24];
	int i;

	snprintf(ty, sizeof ty, "%s", axistype_name(t));
	for (i = 0; ty[i]; i++)
		ty[i] = (char)tolower((unsigned char)ty[i]);
	if (hw != HW_NONE)
		snprintf(buf, n, "%s", hwaxis_name(hw));
	else if (t != AX_LOOP)
		snprintf(buf, n, "%s", ty);
	else
		buf[0] = 0;
	return buf;
}

static int
store(Emit *E, EStage *S, const UOp *s, int ind)
{
	const UOp *ix = s->src[0], *v = s->src[1];
	const KBuf *kb;
	UOp *off, *roots[3];
	Ex o, x, g;
	const char *op = NULL;
	int b, rc = -1;

	if (s->nsrc < 2 || s->nsrc > 3 || ix->op != OP_INDEX)
		return err_set(E->e, "%s: stage %s: a store to something that is not an index", E->D->name,
		               E->k->stage[S->st].name);
	if (!(off = emit_index_offset(E, ix)))
		return -1;
	b = (int)ix->src[0]->arg[0];
	kb = &E->k->buf[b];
	roots[0] = (UOp *)ix;
	roots[1] = (UOp *)v;
	roots[2] = s->nsrc > 2 ? s->src[2] : NULL;
	ex_init(&o);
	ex_init(&x);
	ex_init(&g);
	if (emit_hoist(E, roots, 3, ind) < 0)
		goto out;
	/* an update x[i] = x[i] op v of the buffer's dtype prints as x[i] op= v */
	if ((v->op == OP_ADD || v->op == OP_MUL) && v->dtype == kb->dtype && !ishalf(kb->dtype)
	&& !pmap_get(&E->hoist, v)) {
		int w = v->src[0]->op == OP_LOAD && v->src[0]->nsrc == 1 && v->src[0]->src[0] == ix ? 1
		      : v->src[1]->op == OP_LOAD && v->src[1]->nsrc == 1 && v->src[1]->src[0] == ix ? 0 : -1;

		if (w >= 0) {
			if (emit_value(E, v->src[w], &x) < 0)
				goto out;
			/* C converts the right side to the left's type first: only where that is exact */
			if (x.ct == kb->dtype || (kb->dtype == DT_FLOAT32 && x.ct == DT_FLOAT64)
			|| (isf(kb->dtype) && x.ct == DT_FLOAT32))
				op = v->op == OP_ADD ? "+=" : "*=";
			else
				buf_reset(&x.s);
		}
	}
	if (!op && emit_value(E, v, &x) < 0)
		goto out;
	/* dtype_store_i puts an integer into a float buffer as a signed one, uint64 included */
	if (!op && isf(kb->dtype) && x.ct == DT_UINT64)
		emit_convert(E, &x, DT_INT64);
	if (!op && emit_convert(E, &x, kb->dtype) < 0)
		goto out;
	if (emit_value(E, off, &o) < 0 || (s->nsrc > 2 && emit_value(E, s->src[2], &g) < 0))
		goto out;
	emit_indent(E->out, ind);
	if (s->nsrc > 2) {
		emit(E->out, "if (");
		emit_operand(E->out, &g, 0);
		emit(E->out, ")\n");
		emit_indent(E->out, ind + 1);
	}
	if (s == E->accstore)
		emit(E->out, "%s %s ", E->accname, op ? op : "=");
	else {
		emit(E->out, "%s[", E->bname[b]);
		emit_operand(E->out, &o, 0);
		emit(E->out, "] %s ", op ? op : "=");
	}
	emit_operand(E->out, &x, 0);
	emit(E->out, ";\n");
	rc = 0;
out:
	emit_unhoist(E);
	ex_free(&o, 1);
	ex_free(&x, 1);
	ex_free(&g, 1);
	return rc;
}

/*
** An ATOMIC through the dialect's function, fn(&buf[off], value), its result
** stored to the old value's register element when there is one; or, where
** the dialect runs blocks one after another (fn ""), as a plain
** read-modify-write in a block of its own, the integer add wrapping as the
** interpreter's does. The value is converted to the element's type first,
** as a store converts it.
*/
static int
atomic(Emit *E, EStage *S, const UOp *s, int ind)
{
	const UOp *ix, *ox;
	const char *fn, *ty;
	UOp *off, *ooff = NULL, *roots[3];
	Ex o, x, oo;
	int b, ob = -1, rc = -1;
	DType t;

	if (!E->D->atomic)
		return err_set(E->e, "%s: stage %s: an %s; the %s dialect has no atomics", E->D->name,
		               E->k->stage[S->st].name, uop_info[s->op].name, E->D->name);
	if (!(fn = E->D->atomic(E, S, s)))
		return -1;
	if (s->op == OP_FENCE) {
		emit_indent(E->out, ind);
		emit(E->out, "%s\n", fn);
		return 0;
	}
	if (s->nsrc < 2 || s->nsrc > 3 || s->src[0]->op != OP_INDEX || (s->nsrc == 3 && s->src[2]->op != OP_INDEX))
		return err_set(E->e, "%s: stage %s: an atomic that is not (element, value [, old element])", E->D->name,
		               E->k->stage[S->st].name);
	ix = s->src[0];
	ox = s->nsrc == 3 ? s->src[2] : NULL;
	b = (int)ix->src[0]->arg[0];
	t = E->k->buf[b].dtype;
	ty = E->D->type(t);
	if (!(off = emit_index_offset(E, ix)) || (ox && !(ooff = emit_index_offset(E, ox))))
		return -1;
	if (ox)
		ob = (int)ox->src[0]->arg[0];
	roots[0] = (UOp *)ix;
	roots[1] = s->src[1];
	roots[2] = (UOp *)ox;
	ex_init(&o);
	ex_init(&x);
	ex_init(&oo);
	if (emit_hoist(E, roots, 3, ind) < 0 || emit_value(E, s->src[1], &x) < 0 || emit_convert(E, &x, t) < 0
	|| emit_value(E, off, &o) < 0 || (ooff && emit_value(E, ooff, &oo) < 0))
		goto out;
	emit_indent(E->out, ind);
	if (*fn) {
		if (ox) {
			emit(E->out, "%s[", E->bname[ob]);
			emit_operand(E->out, &oo, 0);
			emit(E->out, "] = ");
		}
		emit(E->out, "%s(&%s[", fn, E->bname[b]);
		emit_operand(E->out, &o, 0);
		emit(E->out, "], ");
		emit_operand(E->out, &x, 0);
		emit(E->out, ");\n");
	} else {
		const char *vn = emit_fresh(E, "atomic_value"), *on = emit_fresh(E, "atomic_old");

		if (!vn || !on)
			goto out;
		emit(E->out, "{\n");
		emit_indent(E->out, ind + 1);
		emit(E->out, "const %s %s = ", ty, vn);
		emit_operand(E->out, &x, 0);
		emit(E->out, ";\n");
		emit_indent(E->out, ind + 1);
		emit(E->out, "const %s %s = %s[", ty, on, E->bname[b]);
		emit_operand(E->out, &o, 0);
		emit(E->out, "];\n");
		emit_indent(E->out, ind + 1);
		emit(E->out, "%s[", E->bname[b]);
		emit_operand(E->out, &o, 0);
		emit(E->out, "] = ");
		switch (s->arg[0]) {
		case KA_ADD:
			if (t == DT_INT32)
				emit(E->out, "(int32_t)((uint32_t)%s + (uint32_t)%s);\n", on, vn);
			else
				emit(E->out, "%s + %s;\n", on, vn);
			break;
		case KA_MAX: emit(E->out, "%s > %s ? %s : %s;\n", on, vn, on, vn); break;
		case KA_MIN: emit(E->out, "%s < %s ? %s : %s;\n", on, vn, on, vn); break;
		default: emit(E->out, "%s;\n", vn); break;
		}
		if (ox) {
			emit_indent(E->out, ind + 1);
			emit(E->out, "%s[", E->bname[ob]);
			emit_operand(E->out, &oo, 0);
			emit(E->out, "] = %s;\n", on);
		}
		emit_indent(E->out, ind);
		emit(E->out, "}\n");
	}
	rc = 0;
out:
	emit_unhoist(E);
	ex_free(&o, 1);
	ex_free(&x, 1);
	ex_free(&oo, 1);
	return rc;
}

/* The loads of buffer b in u: 0 none, 1 all of them ungated at ix (*at gets one), -1 another. */
static int
loads_of(PMap *memo, const UOp *u, int b, const UOp *ix, const UOp **at, int depth)
{
	int i, r = 0, q;

	if (depth > E_MAXDEPTH)
		return -1;
	if (pmap_get(memo, u))
		return 0;   /* seen: counted where it was first met */
	if (u->op == OP_LOAD && u->nsrc >= 1 && u->src[0]->op == OP_INDEX && u->src[0]->src[0]->arg[0] == b) {
		if (u->nsrc != 1 || u->src[0] != ix)
			return -1;
		*at = u;
		r = 1;
	}
	for (i = 0; i < u->nsrc; i++) {
		if ((q = loads_of(memo, u->src[i], b, ix, at, depth + 1)) < 0)
			return -1;
		r |= q;
	}
	if (pmap_put(memo, u, (void *)1) < 0)
		return -1;
	return r;
}

/*
** A reduction into one element, x[i] = f(x[i], v) under serial loops that
** do not move i, accumulates in a local variable: loaded before the
** outermost such loop, stored after it. The operations and their order are
** the same, so are the values; the compiler need not prove that x[i] is not
** read through another pointer (OpenMP's outlined functions lose restrict),
** and a reduction it may reassociate (fast) vectorizes. Taken: a chain of
** serial loops (not bound, not parallel, not vectorized), each the only
** statement of the one above, around one ungated store whose value reads
** the buffer only at the stored element; not for 16-bit floats, which round
** at every store.
*/
static const UOp *
promotable(Emit *E, const UOp *loop, const UOp **load)
{
	const UOp *s = loop, *vars[64], *st, *ix;
	PMap memo = { 0 };
	int n = 0, i, b, ok = 1;

	for (;;) {
		const UOp *r = s->src[0];
		AxisType t = krange_type(r);

		if (krange_hw(r) != HW_NONE || (t != AX_LOOP && t != AX_REDUCE && t != AX_UNROLL) || n == 64)
			return NULL;
		vars[n++] = krange_var(r);
		if (s->nsrc != 2)
			return NULL;
		s = s->src[1];
		if (s->op == OP_STORE)
			break;
		if (s->op != OP_END || s->nsrc < 1 || s->src[0]->op != OP_RANGE)
			return NULL;
	}
	st = s;
	if (st->nsrc != 2 || (ix = st->src[0])->op != OP_INDEX)
		return NULL;
	b = (int)ix->src[0]->arg[0];
	if (ishalf(E->k->buf[b].dtype))
		return NULL;
	/* one memo per variable: it records whether a node mentions that variable */
	for (i = 0; i < n && ok; i++) {
		ok = !emit_mentions(&memo, ix, vars[i], 0);
		pmap_free(&memo);
	}
	if (!ok)
		return NULL;
	*load = NULL;
	ok = loads_of(&memo, st->src[1], b, ix, load, 0) == 1;
	pmap_free(&memo);
	return ok ? st : NULL;
}

/*
** The loop, its reduction promoted: T acc = x[i]; the loop on acc; x[i] =
** acc. init (may be NULL) is a store to x[i] just before the loop whose value
** does not read x: acc starts at that value and the store is left out (the
** one after the loop writes x[i] whatever the trip count).
*/
static int
promoted_loop(Emit *E, EStage *S, const UOp *s, const UOp *st, const UOp *ld, const UOp *init, int ind)
{
	Ex x, v;
	UOp *root = (UOp *)ld;
	DType t = E->k->buf[ld->src[0]->src[0]->arg[0]].dtype;
	const char *name;
	int rc = -1;

	ex_init(&x);
	ex_init(&v);
	if (!(name = emit_fresh(E, "acc")))
		return err_set(E->e, "%s: out of memory", E->D->name);
	if (emit_hoist(E, &root, 1, ind) < 0 || emit_value(E, ld, &x) < 0) {
		emit_unhoist(E);
		goto out;
	}
	emit_unhoist(E);
	if (init) {
		root = init->src[1];
		if (emit_hoist(E, &root, 1, ind) < 0 || emit_value(E, root, &v) < 0) {
			emit_unhoist(E);
			goto out;
		}
		emit_unhoist(E);
		if (isf(t) && v.ct == DT_UINT64)
			emit_convert(E, &v, DT_INT64);
		if (emit_convert(E, &v, t) < 0)
			goto out;
	}
	emit_indent(E->out, ind);
	emit(E->out, "%s %s = ", emit_ctype(E, t), name);
	emit_operand(E->out, init ? &v : &x, 0);
	emit(E->out, ";\n");
	E->accstore = st;
	E->accload = ld;
	E->accname = name;
	rc = E->D->loop(E, S, s, ind);
	E->accstore = E->accload = NULL;
	E->accname = NULL;
	if (rc == 0) {
		emit_indent(E->out, ind);
		emit(E->out, "%s = %s;\n", x.s.s, name);
	}
out:
	ex_free(&x, 1);
	ex_free(&v, 1);
	return rc;
}

/* Whether s stores to the element ld loads, ungated, with a value that does not read its buffer. */
static int
inits(const UOp *s, const UOp *ld)
{
	const UOp *at = NULL;
	PMap memo = { 0 };
	int r;

	if (s->op != OP_STORE || s->nsrc != 2 || s->src[0] != ld->src[0])
		return 0;
	r = loads_of(&memo, s->src[1], (int)ld->src[0]->src[0]->arg[0], NULL, &at, 0) == 0;
	pmap_free(&memo);
	return r;
}

int
emit_stmts(Emit *E, EStage *S, UOp *const *s, int n, int ind)
{
	int i;

	for (i = 0; i < n; i++) {
		const UOp *ld, *st;

		/* x[i] = init; a promotable reduction into x[i]: acc starts at init */
		if (i + 1 < n && !E->accstore && s[i + 1]->op == OP_END && s[i + 1]->nsrc >= 1
		&& s[i + 1]->src[0]->op == OP_RANGE && (st = promotable(E, s[i + 1], &ld)) && inits(s[i], ld)) {
			if (promoted_loop(E, S, s[i + 1], st, ld, s[i], ind) < 0)
				return -1;
			i++;
			continue;
		}
		if (emit_stmt(E, S, s[i], ind) < 0)
			return -1;
	}
	return 0;
}

int
emit_stmt(Emit *E, EStage *S, const UOp *s, int ind)
{
	Ex g;
	UOp *root;

	if (ind > E_MAXDEPTH)
		return err_set(E->e, "%s: stage %s: statements nest too deep", E->D->name, E->k->stage[S->st].name);
	switch (s->op) {
	case OP_STORE:
		return store(E, S, s, ind);
	case OP_END:
		if (s->nsrc < 1 || s->src[0]->op != OP_RANGE)
			return err_set(E->e, "%s: stage %s: a loop without a range", E->D->name, E->k->stage[S->st].name);
		if (!E->accstore) {
			const UOp *ld, *st = promotable(E, s, &ld);

			if (st)
				return promoted_loop(E, S, s, st, ld, NULL, ind);
		}
		return E->D->loop(E, S, s, ind);
	case OP_IF:
		if (s->nsrc < 1)
			return err_set(E->e, "%s: stage %s: an if without a condition", E->D->name,
			               E->k->stage[S->st].name);
		if (s->src[0]->op == OP_CONST && s->src[0]->arg[0]) {
			/* a sequence; a collective operator names what it dispatched to */
			if (s->name) {
				emit_indent(E->out, ind);
				emit(E->out, "/* %s */\n", s->name);
			}
			return emit_stmts(E, S, s->src + 1, s->nsrc - 1, ind);
		}
		root = s->src[0];
		ex_init(&g);
		if (emit_hoist(E, &root, 1, ind) < 0 || emit_value(E, root, &g) < 0) {
			emit_unhoist(E);
			ex_free(&g, 1);
			return -1;
		}
		emit_unhoist(E);
		emit_indent(E->out, ind);
		emit(E->out, "if (");
		emit_operand(E->out, &g, 0);
		emit(E->out, ") {\n");
		ex_free(&g, 1);
		if (emit_stmts(E, S, s->src + 1, s->nsrc - 1, ind + 1) < 0)
			return -1;
		emit_indent(E->out, ind);
		emit(E->out, "}\n");
		return 0;
	case OP_BARRIER:
	case OP_MMA:
	case OP_LDMATRIX:
		return E->D->sync(E, S, s, ind);
	case OP_ATOMIC:
	case OP_FENCE:
		return atomic(E, S, s, ind);
	case OP_WGMMA:
	case OP_WG_FENCE:
	case OP_WG_COMMIT:
	case OP_WG_WAIT:
	case OP_SETMAXNREG:
		if (!E->D->async)
			return err_set(E->e, "%s: stage %s: a %s; the warpgroup MMA is sm_90a's wgmma, which only the cuda "
			               "dialect writes (kernel.mma or kernel.gemm for this one)", E->D->name,
			               E->k->stage[S->st].name, uop_info[s->op].name);
		return E->D->async(E, S, s, ind);
	case OP_CP_ASYNC:
	case OP_CP_COMMIT:
	case OP_CP_WAIT:
		if (!E->D->async)
			return err_set(E->e, "%s: stage %s: a %s; asynchronous global-to-shared copies are sm_80's "
			               "cp.async, which only the cuda dialect writes (copy with another impl, without "
			               "kernel.cp_async_commit and kernel.cp_async_wait, for this one)", E->D->name,
			               E->k->stage[S->st].name, uop_info[s->op].name);
		return E->D->async(E, S, s, ind);
	case OP_MBAR_INIT:
	case OP_MBAR_ARRIVE:
	case OP_MBAR_WAIT:
	case OP_TMA_LOAD:
		if (!E->D->async || E->D->d != D_C || strcmp(E->D->name, "cuda") != 0)
			return err_set(E->e, "%s: stage %s: a %s; mbarriers and bulk tensor copies (TMA) are sm_90's, "
			               "which only the cuda dialect writes (copy with kernel.copy for this one)", E->D->name,
			               E->k->stage[S->st].name, uop_info[s->op].name);
		return E->D->async(E, S, s, ind);
	default:
		return err_set(E->e, "%s: stage %s: %s is not a statement", E->D->name, E->k->stage[S->st].name,
		               uop_info[s->op].name);
	}
}
