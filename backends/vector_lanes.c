/* vector_lanes.c - a vectorized loop in C as GCC vector types: lanes loaded and stored whole, kept in registers. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "emit.h"

/*
** `#pragma omp simd` leaves GCC to vectorize a loop, and it does, but a
** register tile (cache_write's local buffer) then stays an array in memory,
** loaded and stored at every step of the reduction around it. Written with
** vector types, 64 bytes a step, and its loops fully unrolled, every access
** to such an array has a constant offset, and GCC's scalar replacement keeps
** it in registers (docs/export.md, "Speed", shows the assembly).
**
** A vectorized (UPCAST) loop of w iterations over v is written so when its
** body is stores alone, each of float32 (or float64) to x[base + v], and
** every value that depends on v is built of
**   loads y[base' + v] of the same dtype (one vector load each),
**   + - * negation and reciprocal, the operations C computes in the dtype
**   itself (no double rounding: the interpreter's bits, lane by lane),
**   max and min of two such float32 values (tessel_maxf_x16 and friends:
**   comparisons and masks, with tessel_maxf's rule for NaNs);
** a value that does not depend on v is computed once, as a scalar of the
** dtype (rounded to it, as the interpreter rounds every node), and widens
** when a vector operation meets it. w must be a multiple of 4; the loop
** steps by the lanes of a 64-byte vector (or w, when smaller), unrolled.
** Otherwise 0: the caller writes `#pragma omp simd`.
*/

enum { VL_MAXNODE = 256 };

typedef struct Lanes {
	Emit *E;
	const UOp *v;
	DType t;
	PMap memo;                  /* node -> 1 invariant, 2 varying */
	const UOp *node[VL_MAXNODE];  /* varying nodes, sources first */
	int nnode;
	PMap uses;                  /* varying node -> its users + 1 */
} Lanes;

static int
varies(Lanes *L, const UOp *u)
{
	PMap m = { 0 };
	int r = emit_mentions(&m, u, L->v, 0);

	pmap_free(&m);
	return r;
}

/* 1: u (varying) can be written in vector form, its varying sources listed first; 0: not */
static int
scan(Lanes *L, const UOp *u, int depth)
{
	Emit *E = L->E;
	uintptr_t seen = (uintptr_t)pmap_get(&L->memo, u);
	int i;

	if (seen)
		return seen != 3;
	if (depth > 200 || L->nnode == VL_MAXNODE || u->dtype != L->t)
		return 0;
	if (u->op == OP_LOAD) {
		const UOp *ix = u->src[0];
		UOp *off, *rest;
		int64_t coef;
		int b;

		if (u->nsrc != 1 || ix->op != OP_INDEX || ix->src[0]->op != OP_DEFINE)
			return 0;
		b = (int)ix->src[0]->arg[0];
		if (b < 0 || b >= E->k->nbuf || ix->nsrc != 1 + E->k->buf[b].ndim)
			return 0;
		if (!(off = emit_index_offset(E, ix)))
			return -1;
		if (!kernel_affine_in(E->k->c, off, (UOp *)L->v, &coef, &rest) || coef != 1)
			return 0;
	} else {
		switch (u->op) {
		case OP_ADD: case OP_SUB: case OP_MUL: case OP_NEG: case OP_RECIP:
			break;
		case OP_MAX: case OP_MIN:
			/* tessel_maxf_x16 and friends take two vectors */
			if (L->t != DT_FLOAT32 || !varies(L, u->src[0]) || !varies(L, u->src[1]))
				return 0;
			break;
		default:
			return 0;
		}
		for (i = 0; i < u->nsrc; i++) {
			int r;

			if (u->src[i]->dtype != L->t)
				return 0;
			if (!varies(L, u->src[i]))
				continue;
			if ((r = scan(L, u->src[i], depth + 1)) <= 0)
				return r;
			if (pmap_put(&L->uses, u->src[i], (void *)((uintptr_t)pmap_get(&L->uses, u->src[i]) + 1)) < 0)
				return emit_oom(E);
		}
	}
	if (pmap_put(&L->memo, u, (void *)2) < 0)
		return emit_oom(E);
	L->node[L->nnode++] = u;
	return 1;
}

static const char *
vtype(DType t, int lanes)
{
	if (t == DT_FLOAT32)
		return lanes == 16 ? "tessel_f32x16" : lanes == 8 ? "tessel_f32x8" : "tessel_f32x4";
	return lanes == 8 ? "tessel_f64x8" : lanes == 4 ? "tessel_f64x4" : "tessel_f64x2";
}

/* u, which does not depend on v, computed once as a named scalar of the dtype (rounded to it, as
** the interpreter rounds every node): its name, or NULL with E->e set */
static const char *
scalar(Lanes *L, const UOp *u, int ind)
{
	Emit *E = L->E;
	UOp *root = (UOp *)u;
	const char *nm = NULL;
	Ex x;

	ex_init(&x);
	if (emit_hoist(E, &root, 1, ind) < 0 || emit_value(E, u, &x) < 0 || emit_convert(E, &x, L->t) < 0)
		goto out;
	if (!(nm = emit_fresh(E, "s"))) {
		emit_oom(E);
		goto out;
	}
	emit_indent(E->out, ind);
	emit(E->out, "const %s %s = ", emit_ctype(E, L->t), nm);
	emit_operand(E->out, &x, 0);
	emit(E->out, ";\n");
out:
	emit_unhoist(E);
	ex_free(&x, 1);
	return nm;
}

/* the invariant sources of varying nodes, as named scalars */
static int
scalars(Lanes *L, int ind)
{
	Emit *E = L->E;
	const char *nm;
	int i, j;

	for (i = 0; i < L->nnode; i++) {
		const UOp *u = L->node[i];

		if (u->op == OP_LOAD)
			continue;
		for (j = 0; j < u->nsrc; j++) {
			const UOp *s = u->src[j];

			if (pmap_get(&E->vec, s) || varies(L, s))
				continue;
			if (!(nm = scalar(L, s, ind)))
				return -1;
			if (pmap_put(&E->vec, s, (void *)nm) < 0)
				return emit_oom(E);
		}
	}
	return 0;
}

/* &buf[offset] of an access */
static int
address(Emit *E, const UOp *ix)
{
	UOp *off = emit_index_offset(E, ix);
	Ex x;

	if (!off)
		return -1;
	ex_init(&x);
	if (emit_value(E, off, &x) < 0) {
		ex_free(&x, 1);
		return -1;
	}
	emit(E->out, "&%s[", E->bname[ix->src[0]->arg[0]]);
	emit_operand(E->out, &x, 0);
	emit(E->out, "]");
	ex_free(&x, 1);
	return 0;
}

/* one store: its vector loads, its shared vector values, the value, the store */
static int
store(Lanes *L, const UOp *st, int lanes, int ind)
{
	Emit *E = L->E;
	const char *ty = vtype(L->t, lanes), *nm;
	const UOp *val = st->src[1];
	int i, k;
	Ex x;

	if (scalars(L, ind) < 0)
		return -1;
	for (i = 0; i < L->nnode; i++) {
		const UOp *u = L->node[i];

		if (pmap_get(&E->vec, u))
			continue;
		if (u->op == OP_LOAD) {
			char base[K_NAME + 8];

			snprintf(base, sizeof base, "%s_v", E->bname[u->src[0]->src[0]->arg[0]]);
			if (!(nm = emit_fresh(E, base)))
				return emit_oom(E);
			emit_indent(E->out, ind);
			emit(E->out, "%s %s;\n", ty, nm);
			emit_indent(E->out, ind);
			emit(E->out, "__builtin_memcpy(&%s, ", nm);
			if (address(E, u->src[0]) < 0)
				return -1;
			emit(E->out, ", sizeof %s);\n", nm);
		} else if (u->op == OP_MAX || u->op == OP_MIN) {
			/* lane by lane, with the NaN rule of tessel_maxf and tessel_minf */
			Ex a[2];

			ex_init(&a[0]);
			ex_init(&a[1]);
			if (emit_value(E, u->src[0], &a[0]) < 0 || emit_value(E, u->src[1], &a[1]) < 0
			|| !(nm = emit_fresh(E, "v"))) {
				ex_free(a, 2);
				return E->e->msg[0] ? -1 : emit_oom(E);
			}
			E->need |= H_VMAX32;
			emit_indent(E->out, ind);
			emit(E->out, "const %s %s = tessel_%sf_x%d(", ty, nm, u->op == OP_MAX ? "max" : "min", lanes);
			emit_operand(E->out, &a[0], 0);
			emit(E->out, ", ");
			emit_operand(E->out, &a[1], 0);
			emit(E->out, ");\n");
			ex_free(a, 2);
		} else if (u == val || (uintptr_t)pmap_get(&L->uses, u) > 1) {
			/* the stored value, and a value used twice, get a name */
			ex_init(&x);
			if (emit_value(E, u, &x) < 0 || !(nm = emit_fresh(E, "v"))) {
				ex_free(&x, 1);
				return E->e->msg[0] ? -1 : emit_oom(E);
			}
			emit_indent(E->out, ind);
			emit(E->out, "const %s %s = ", ty, nm);
			emit_operand(E->out, &x, 0);
			emit(E->out, ";\n");
			ex_free(&x, 1);
		} else
			continue;
		if (pmap_put(&E->vec, u, (void *)nm) < 0)
			return emit_oom(E);
	}
	if (!(nm = pmap_get(&E->vec, val))) {
		/* a value the same in every lane: computed once, then in every lane */
		const char *s;

		if (!(s = scalar(L, val, ind)))
			return -1;
		if (!(nm = emit_fresh(E, "v")))
			return emit_oom(E);
		emit_indent(E->out, ind);
		emit(E->out, "const %s %s = {", ty, nm);
		for (k = 0; k < lanes; k++)
			emit(E->out, "%s%s", k ? ", " : "", s);
		emit(E->out, "};\n");
	}
	emit_indent(E->out, ind);
	emit(E->out, "__builtin_memcpy(");
	if (address(E, st->src[0]) < 0)
		return -1;
	emit(E->out, ", &%s, sizeof %s);\n", nm, nm);
	return 0;
}

int
emit_vector_lanes(Emit *E, EStage *S, const UOp *s, int ind)
{
	const UOp *r = s->src[0];
	int64_t w = krange_extent(r);
	Lanes L;
	int i, lanes, rc = -1, b;

	if (s->nsrc < 2 || w % 4)
		return 0;
	memset(&L, 0, sizeof L);
	L.E = E;
	L.v = krange_var(r);
	for (i = 1; i < s->nsrc; i++) {
		const UOp *st = s->src[i];
		UOp *off, *rest;
		int64_t coef;

		if (st->op != OP_STORE || st->nsrc != 2 || st->src[0]->op != OP_INDEX || st == E->accstore
		|| st->src[0]->src[0]->op != OP_DEFINE)
			goto no;
		b = (int)st->src[0]->src[0]->arg[0];
		if (b < 0 || b >= E->k->nbuf || st->src[0]->nsrc != 1 + E->k->buf[b].ndim)
			goto no;
		if (i == 1)
			L.t = E->k->buf[b].dtype;
		if (E->k->buf[b].dtype != L.t || (L.t != DT_FLOAT32 && L.t != DT_FLOAT64))
			goto no;
		if (!(off = emit_index_offset(E, st->src[0])))
			goto out;
		if (!kernel_affine_in(E->k->c, off, (UOp *)L.v, &coef, &rest) || coef != 1)
			goto no;
		if (varies(&L, st->src[1]) && (rc = scan(&L, st->src[1], 0)) <= 0)
			goto done;
	}
	lanes = L.t == DT_FLOAT32 ? 16 : 8;
	while (w % lanes)
		lanes /= 2;
	E->need |= L.t == DT_FLOAT32 ? H_VEC32 : H_VEC64;
	if (w > lanes) {
		emit_indent(E->out, ind);
		emit(E->out, "#pragma GCC unroll %lld\n", (long long)(w / lanes));
	}
	emit_indent(E->out, ind);
	emit(E->out, "for (int64_t %s = 0; %s < %lld; %s += %d) {  /* upcast: %d lanes at once */\n", L.v->name,
	     L.v->name, (long long)w, L.v->name, lanes, lanes);
	for (i = 1; i < s->nsrc; i++) {
		/* each store's values after the stores before it, as the lanes would see them */
		pmap_free(&E->vec);
		memset(&E->vec, 0, sizeof E->vec);
		pmap_free(&L.memo);
		pmap_free(&L.uses);
		memset(&L.memo, 0, sizeof L.memo);
		memset(&L.uses, 0, sizeof L.uses);
		L.nnode = 0;
		if (varies(&L, s->src[i]->src[1]) && scan(&L, s->src[i]->src[1], 0) <= 0)
			goto out;
		if (store(&L, s->src[i], lanes, ind + 1) < 0)
			goto out;
	}
	emit_indent(E->out, ind);
	emit(E->out, "}\n");
	rc = 1;
	goto out;
no:
	rc = 0;
done:
	if (rc < 0)
		goto out;
	rc = 0;
out:
	pmap_free(&E->vec);
	memset(&E->vec, 0, sizeof E->vec);
	pmap_free(&L.memo);
	pmap_free(&L.uses);
	return rc;
}
