/* kernel_scene.c - a kernel as a loop tree: stages, loops coloured by axis type, statements as pseudo-code. */
#include <stdio.h>
#include <string.h>

#include "../interp/kernel/kernel.h"
#include "viz.h"

/* tinygrad's axis-type palette, as kernel_print colours the terminal */
static const int32_t axrgb[AX_COUNT] = {
	0x90caf9, 0x80deea, 0xb2ebf2, 0xbbdefb, 0xf5f5f5, 0xef9a9a, 0xffcdd2, 0xfff59d, 0xe1bee7
};

typedef struct Tr {
	Scene *s;
	const Kernel *k;
	Err *e;
} Tr;

static int
node(Tr *t, const char *label, int32_t fill, const char *shape)
{
	int n = scene_node(t->s, VIZ_NODE_TEXT, label, t->e);

	if (n >= 0) {
		t->s->node[n].fill = fill;
		snprintf(t->s->node[n].shape, sizeof t->s->node[n].shape, "%s", shape);
	}
	return n;
}

static int stmt(Tr *t, const UOp *u, int parent, int depth);

static int
children(Tr *t, const UOp *u, int from, int parent, int depth)
{
	int i;

	for (i = from; i < u->nsrc; i++)
		if (stmt(t, u->src[i], parent, depth + 1) < 0)
			return -1;
	return 0;
}

static int
stmt(Tr *t, const UOp *u, int parent, int depth)
{
	Buf b;
	int n;

	if (depth > 200)
		return 0;
	if (u->op == OP_IF && u->src[0]->op == OP_CONST && u->src[0]->arg[0])
		return children(t, u, 1, parent, depth);   /* a sequence */
	if (t->s->nnode >= VIZ_GV_MAX_NODES - 1)
		return err_set(t->e, "viz: the kernel has more than %d statements and loops", VIZ_GV_MAX_NODES);
	buf_init(&b);
	switch (u->op) {
	case OP_END: {
		const UOp *r = u->src[0];

		emit(&b, "for %s in range(%lld)\n%s", krange_var(r)->name, (long long)krange_extent(r),
		     axistype_name(krange_type(r)));
		if (krange_hw(r) != HW_NONE)
			emit(&b, " %s", hwaxis_name(krange_hw(r)));
		n = node(t, b.s ? b.s : "", axrgb[krange_type(r)], "ellipse");
		break;
	}
	case OP_IF:
		emit(&b, "if ");
		kernel_print_expr(&b, t->k, u->src[0]);
		n = node(t, b.s ? b.s : "", 0xfff3e0, "diamond");
		break;
	case OP_BARRIER:
		n = node(t, "barrier()", 0xe0e0e0, "box");
		break;
	case OP_LDMATRIX:
		emit(&b, "ldmatrix.x%lld%s(%s, ", (long long)u->arg[0], u->arg[1] ? ".trans" : "",
		     u->nsrc == 2 && u->src[0]->name ? u->src[0]->name : "?");
		if (u->nsrc == 2)
			kernel_print_expr(&b, t->k, u->src[1]);
		emit(&b, ")");
		n = node(t, b.s ? b.s : "", 0xd1c4e9, "box");
		break;
	case OP_CP_ASYNC:
		emit(&b, "cp_async.%lld(", (long long)u->arg[0]);
		if (u->nsrc == 2) {
			kernel_print_expr(&b, t->k, u->src[0]);
			emit(&b, ", ");
			kernel_print_expr(&b, t->k, u->src[1]);
		}
		emit(&b, ")");
		n = node(t, b.s ? b.s : "", 0xd1c4e9, "box");
		break;
	case OP_CP_COMMIT:
		n = node(t, "cp_async_commit()", 0xe0e0e0, "box");
		break;
	case OP_WGMMA:
		emit(&b, "wgmma.m64n%lldk16(%s", (long long)u->arg[0], u->nsrc == 3 && u->src[0]->name ? u->src[0]->name : "?");
		if (u->nsrc == 3) {
			emit(&b, ", ");
			kernel_print_expr(&b, t->k, u->src[1]);
			emit(&b, ", ");
			kernel_print_expr(&b, t->k, u->src[2]);
		}
		emit(&b, "%s)", u->arg[1] & KWG_B_NK ? ", b_nk" : "");
		n = node(t, b.s ? b.s : "", 0xd1c4e9, "box");
		break;
	case OP_WG_FENCE:
	case OP_WG_COMMIT:
		n = node(t, u->op == OP_WG_FENCE ? "wgmma_fence()" : "wgmma_commit()", 0xe0e0e0, "box");
		break;
	case OP_WG_WAIT:
		emit(&b, "wgmma_wait(%lld)", (long long)u->arg[0]);
		n = node(t, b.s ? b.s : "", 0xe0e0e0, "box");
		break;
	case OP_SETMAXNREG:
		emit(&b, "setmaxnreg(%lld, %s)", (long long)u->arg[0], u->arg[1] ? "inc" : "dec");
		n = node(t, b.s ? b.s : "", 0xe0e0e0, "box");
		break;
	case OP_CP_WAIT:
		emit(&b, "cp_async_wait(%lld)", (long long)u->arg[0]);
		n = node(t, b.s ? b.s : "", 0xe0e0e0, "box");
		break;
	case OP_MBAR_INIT:
	case OP_MBAR_ARRIVE:
	case OP_MBAR_WAIT:
	case OP_TMA_LOAD:
		kernel_print_tma(&b, t->k, u);
		n = node(t, b.s ? b.s : "", u->op == OP_TMA_LOAD ? 0xd1c4e9 : 0xe0e0e0, "box");
		break;
	case OP_MMA: {
		int i;

		emit(&b, "mma.%s(", u->name ? u->name : "?");
		for (i = 0; i < u->nsrc; i++)
			emit(&b, "%s%s", i ? ", " : "", u->src[i]->name ? u->src[i]->name : "?");
		emit(&b, ")");
		n = node(t, b.s ? b.s : "", 0xd1c4e9, "box");
		break;
	}
	case OP_STORE:
		kernel_print_store(&b, t->k, u);
		n = node(t, b.s ? b.s : "", -1, "box");
		break;
	default:
		emit(&b, "%s", uop_info[u->op].name);
		n = node(t, b.s ? b.s : "", -1, "box");
		break;
	}
	buf_free(&b);
	if (n < 0 || scene_edge(t->s, parent, NULL, n, NULL, NULL, t->e) < 0)
		return -1;
	if (u->op == OP_END || u->op == OP_IF)
		return children(t, u, 1, n, depth);
	return 0;
}

int
kernel_scene(Scene *s, const Kernel *k, const char *label, const VizOpts *o, Err *e)
{
	Tr t = { s, k, e };
	int root, i;
	Buf b;

	(void)o;
	buf_init(&b);
	emit(&b, "%s%skernel: %d stage%s, %d buffer%s", label ? label : "", label ? "\n" : "", k->nstage,
	     k->nstage == 1 ? "" : "s", k->nbuf, k->nbuf == 1 ? "" : "s");
	/* the layouts that are not row-major: what a set_layout changes */
	for (i = 0; i < k->nbuf; i++)
		if (strcmp(k->buf[i].layout_desc, "row-major") != 0)
			emit(&b, "\n%s: %s %s", k->buf[i].name, kscope_name(k->buf[i].scope), k->buf[i].layout_desc);
	root = node(&t, b.s ? b.s : "kernel", 0xeeeeee, "box");
	buf_free(&b);
	if (root < 0)
		return -1;
	for (i = 0; i < k->nstage; i++) {
		int st = node(&t, k->stage[i].name, 0xc8e6c9, "box");

		if (st < 0 || scene_edge(s, root, NULL, st, NULL, NULL, e) < 0
		|| stmt(&t, k->stage[i].body, st, 0) < 0)
			return -1;
	}
	return scene_oom(s) ? err_set(e, "viz: out of memory") : 0;
}
