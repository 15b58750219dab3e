/* vector_loop.c - a short unrolled loop as one vector copy, or as vector loads and its body once per iteration. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "emit.h"

/* ---- vector loads ---- */

enum { VEC_MAX = 16 };

typedef struct VecRun {
	int b;
	const UOp *off0;       /* the offset at iteration 0 */
	const UOp *load[4];    /* a load of the run, as the body has it */
	int nload;
	char name[K_NAME + 16];
} VecRun;

typedef struct VecScan {
	Emit *E;
	const UOp *v;          /* the loop variable */
	int w;
	VecRun run[VEC_MAX];
	int nrun;
	PMap seen;
	uint8_t *written;      /* per buffer: stored to in the body */
} VecScan;

static UOp *
simplified(Emit *E, UOp *u)
{
	UOp *o;

	return u && uop_simplify(E->k->c, u, &o, E->e) == 0 ? o : NULL;
}

/* A load of one element at base + v, base a multiple of w: a run's member. */
static int
vec_scan(VecScan *V, const UOp *u, int depth)
{
	Emit *E = V->E;
	UOp *off, *zero, *off0, *d, *m;
	int i, b;

	if (depth > E_MAXDEPTH)
		return -1;
	if (pmap_get(&V->seen, u))
		return 0;
	if (pmap_put(&V->seen, u, (void *)1) < 0)
		return emit_oom(E);
	for (i = 0; i < u->nsrc; i++)
		if (vec_scan(V, u->src[i], depth + 1) < 0)
			return -1;
	if (u->op != OP_LOAD || u->nsrc != 1 || u->src[0]->op != OP_INDEX || u->src[0]->nsrc < 1
	|| u->src[0]->src[0]->op != OP_DEFINE)
		return 0;
	b = (int)u->src[0]->src[0]->arg[0];
	if (b < 0 || b >= E->k->nbuf || E->k->buf[b].dtype != DT_FLOAT32 || V->written[b]
	|| !(E->D->vscopes & (1u << E->k->buf[b].scope)))
		return 0;
	if (!(off = emit_index_offset(E, u->src[0])))
		return -1;
	zero = uop_int(E->k->c, 0);
	if (!zero || !(off0 = simplified(E, kernel_substitute(E->k->c, off, (UOp *const *)&V->v, &zero, 1)))
	|| !(d = simplified(E, uop_sub(E->k->c, off, off0)))
	|| !(m = simplified(E, uop_mod(E->k->c, off0, uop_int(E->k->c, V->w)))))
		return E->e->msg[0] ? -1 : emit_oom(E);
	if (d != V->v || m->op != OP_CONST || m->arg[0] != 0)
		return 0;
	for (i = 0; i < V->nrun; i++)
		if (V->run[i].b == b && V->run[i].off0 == off0)
			break;
	if (i == V->nrun) {
		if (V->nrun == VEC_MAX)
			return 0;
		V->run[i].b = b;
		V->run[i].off0 = off0;
		V->run[i].nload = 0;
		V->nrun++;
	}
	if (V->run[i].nload < 4)
		V->run[i].load[V->run[i].nload++] = u;
	return 0;
}

/*
** The offset off of a vector's element v (v the loop variable, w the
** width) as base + v with base = 0 mod w, proved by the simplifier: base, or
** NULL when not proved (e->msg set on an error). A swizzle's XOR keeps the
** run when its mask is 0 mod w: (a0 + v) ^ m = (a0 ^ m) + v, since a0 and m
** leave the low log2(w) bits, which v fills, alone.
*/
static UOp *
vec_base(Emit *E, UOp *off, const UOp *v, int w, int depth)
{
	UCtx *c = E->k->c;
	UOp *zero = uop_int(c, 0), *off0, *d, *m;
	PMap memo;
	int i, r;

	if (!zero || depth > 8)
		return NULL;
	if ((off0 = simplified(E, kernel_substitute(c, off, (UOp *const *)&v, &zero, 1)))
	&& (d = simplified(E, uop_sub(c, off, off0))) && (m = simplified(E, uop_mod(c, off0, uop_int(c, w))))
	&& d == v && m->op == OP_CONST && m->arg[0] == 0)
		return off0;
	if (off->op != OP_XOR || off->nsrc != 2 || off->vmin < 0)
		return NULL;
	for (i = 0; i < 2; i++) {
		UOp *a = off->src[i], *mask = off->src[1 - i], *a0;

		memset(&memo, 0, sizeof memo);
		r = emit_mentions(&memo, mask, v, 0);
		pmap_free(&memo);
		if (r || mask->vmin < 0 || a->vmin < 0)
			continue;
		if (!(m = simplified(E, uop_mod(c, mask, uop_int(c, w)))) || m->op != OP_CONST || m->arg[0] != 0)
			continue;
		if ((a0 = vec_base(E, a, v, w, depth + 1)))
			return uop_alu(c, OP_XOR, a0, mask);
	}
	return NULL;
}

/*
** A loop of w iterations (UPCAST, UNROLL) whose body is one copy between
** buffers of one dtype, dst[base_d + v] = src[base_s + v], with w elements
** 4, 8 or 16 bytes and both bases multiples of w: one move of that width
** (CUDA's uint4). The bits are the loads' bits, as in the interpreter; only
** the width changes. 1 written, 0 not taken, -1 an error.
*/
static int
vector_copy(Emit *E, EStage *S, const UOp *s, int ind)
{
	const UOp *r = s->src[0], *st, *ld, *v = krange_var(r);
	int64_t ext = krange_extent(r);
	UOp *od, *os, *bd, *bs, *roots[2];
	int b[2], i, bytes, rc = -1;
	const char *ty;
	Ex x[2];

	if (!E->D->vcopy || s->nsrc != 2)
		return 0;
	st = s->src[1];
	if (st->op != OP_STORE || st->nsrc != 2 || st->src[0]->op != OP_INDEX || st == E->accstore)
		return 0;
	ld = st->src[1];
	if (ld->op != OP_LOAD || ld->nsrc != 1 || ld->src[0]->op != OP_INDEX)
		return 0;
	b[0] = (int)st->src[0]->src[0]->arg[0];
	b[1] = (int)ld->src[0]->src[0]->arg[0];
	for (i = 0; i < 2; i++)
		if (b[i] < 0 || b[i] >= E->k->nbuf || !(E->D->vcscopes & (1u << E->k->buf[b[i]].scope)))
			return 0;
	if (E->k->buf[b[0]].dtype != E->k->buf[b[1]].dtype)
		return 0;
	bytes = (int)ext * dtype_bytes(E->k->buf[b[0]].dtype);
	if ((bytes != 4 && bytes != 8 && bytes != 16) || !(ty = E->D->vcopy(bytes)))
		return 0;
	/* a register array is aligned to its element, and a 16-bit one to 4 bytes (gpu.c) */
	for (i = 0; i < 2; i++)
		if (E->k->buf[b[i]].scope == AS_REG && bytes > (dtype_bytes(E->k->buf[b[i]].dtype) == 2 ? 4
		                                                : dtype_bytes(E->k->buf[b[i]].dtype)))
			return 0;
	if (!(od = emit_index_offset(E, st->src[0])) || !(os = emit_index_offset(E, ld->src[0])))
		return -1;
	if (!(bd = vec_base(E, od, v, (int)ext, 0)) || !(bs = vec_base(E, os, v, (int)ext, 0)))
		return E->e->msg[0] ? -1 : 0;
	roots[0] = bd;
	roots[1] = bs;
	ex_init(&x[0]);
	ex_init(&x[1]);
	if (emit_hoist(E, roots, 2, ind) < 0 || emit_value(E, bd, &x[0]) < 0 || emit_value(E, bs, &x[1]) < 0)
		goto out;
	emit_indent(E->out, ind);
	emit(E->out, "/* %s: %lld elements moved as one %d-byte %s */\n", v->name, (long long)ext, bytes, ty);
	emit_indent(E->out, ind);
	emit(E->out, "*(%s *)&%s[", ty, E->bname[b[0]]);
	emit_operand(E->out, &x[0], 0);
	emit(E->out, "] = *(const %s *)&%s[", ty, E->bname[b[1]]);
	emit_operand(E->out, &x[1], 0);
	emit(E->out, "];\n");
	rc = 1;
out:
	emit_unhoist(E);
	ex_free(x, 2);
	return rc;
}

/*
** A loop of w = 2 or 4 iterations that the GPU unrolls anyway (UPCAST,
** UNROLL) reads float32 runs x[base + v], v its variable, base a multiple of
** w: each run is loaded once before the body as one 8- or 16-byte access
** (CUDA's float4, OpenCL's vload4), and the body is written once per
** iteration with v a constant, each load of a run its component (x_v.y).
** Taken when the body is stores alone (no loop, branch, barrier or MMA), no
** run's buffer is stored to in it, and the dialect loads the buffer's
** scope. The values are the same loads' values: only their width changes.
*/
int
emit_vector_loop(Emit *E, EStage *S, const UOp *s, int ind)
{
	static const char comp[4][2] = { "x", "y", "z", "w" };
	const UOp *r = s->src[0];
	VecScan V;
	int64_t ext = krange_extent(r);
	AxisType t = krange_type(r);
	int i, j, rc = -1;

	if (krange_hw(r) != HW_NONE || (t != AX_UPCAST && t != AX_UNROLL))
		return 0;
	if ((i = vector_copy(E, S, s, ind)) != 0)
		return i;
	if (!E->D->vload || (ext != 2 && ext != 4))
		return 0;
	for (i = 1; i < s->nsrc; i++)
		if (s->src[i]->op != OP_STORE || s->src[i]->nsrc < 2 || s->src[i]->src[0]->op != OP_INDEX)
			return 0;
	memset(&V, 0, sizeof V);
	V.E = E;
	V.v = krange_var(r);
	V.w = (int)ext;
	if (!(V.written = calloc(E->k->nbuf ? E->k->nbuf : 1, 1)))
		return emit_oom(E);
	for (i = 1; i < s->nsrc; i++)
		V.written[s->src[i]->src[0]->src[0]->arg[0]] = 1;
	for (i = 1; i < s->nsrc; i++)
		for (j = 1; j < s->src[i]->nsrc; j++)
			if (vec_scan(&V, s->src[i]->src[j], 0) < 0)
				goto out;
	if (!V.nrun) {
		rc = 0;
		goto out;
	}
	emit_indent(E->out, ind);
	emit(E->out, "/* %s: %lld iterations unrolled, %d run%s loaded as float%lld */\n", V.v->name, (long long)ext,
	     V.nrun, V.nrun == 1 ? "" : "s", (long long)ext);
	for (i = 0; i < V.nrun; i++) {
		VecRun *run = &V.run[i];
		UOp *root = (UOp *)run->off0;
		const char *n;
		char base[K_NAME + 16];
		Ex o;

		snprintf(base, sizeof base, "%s_v", E->bname[run->b]);
		if (!(n = emit_fresh(E, base)))
			goto out;
		snprintf(run->name, sizeof run->name, "%s", n);
		ex_init(&o);
		if (emit_hoist(E, &root, 1, ind) < 0 || emit_value(E, run->off0, &o) < 0) {
			emit_unhoist(E);
			ex_free(&o, 1);
			goto out;
		}
		emit_unhoist(E);
		emit_indent(E->out, ind);
		emit(E->out, "const float%lld %s = ", (long long)ext, run->name);
		E->D->vload(E, run->b, (int)ext, &o);
		emit(E->out, ";\n");
		ex_free(&o, 1);
	}
	for (j = 0; j < ext; j++) {
		UOp *kv = uop_int(E->k->c, j), *st;
		const UOp *acc = E->accstore;

		if (!kv)
			goto out;
		/* each run's loads at iteration j, as the substituted body has them */
		for (i = 0; i < V.nrun; i++) {
			char c[K_NAME + 24], *o;
			int l;

			snprintf(c, sizeof c, "%s.%s", V.run[i].name, comp[j]);
			if (!(o = emit_own(E, c)))
				goto oom;
			for (l = 0; l < V.run[i].nload; l++) {
				UOp *ld = kernel_substitute(E->k->c, (UOp *)V.run[i].load[l], (UOp *const *)&V.v, &kv, 1);

				if (!ld || pmap_put(&E->vec, ld, o) < 0)
					goto oom;
			}
		}
		for (i = 1; i < s->nsrc; i++) {
			if (!(st = kernel_substitute(E->k->c, s->src[i], (UOp *const *)&V.v, &kv, 1)))
				goto oom;
			/* the promoted reduction's store, as this iteration has it */
			if (s->src[i] == acc)
				E->accstore = st;
			rc = emit_stmt(E, S, st, ind);
			E->accstore = acc;
			if (rc < 0)
				goto out;
		}
		pmap_free(&E->vec);
		memset(&E->vec, 0, sizeof E->vec);
	}
	rc = 1;
	goto out;
oom:
	rc = emit_oom(E);
out:
	pmap_free(&E->vec);
	memset(&E->vec, 0, sizeof E->vec);
	pmap_free(&V.seen);
	free(V.written);
	return rc;
}
