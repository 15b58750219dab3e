/* uop_scene.c - pictures of UOp graphs: index expressions and tensor programs, one node per distinct UOp. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../interp/ir/uop.h"
#include "viz.h"

/*
** Hash-consing makes a shared subexpression one UOp, so the picture is the
** DAG itself: each distinct node is drawn once, with edges from an operation
** to its operands; only constants are drawn once per use, which keeps the
** picture from tangling around a shared 2 or 8. Nodes are numbered in depth-first post order (operands
** before their users); an open-addressing table maps a UOp to its number.
*/
typedef struct Seen {
	const UOp **key;
	int *val;
	size_t cap;
} Seen;

static size_t
slot(const Seen *t, const UOp *u)
{
	size_t h = (size_t)u->hash * 0x9E3779B97F4A7C15ull, m = t->cap - 1;

	for (h &= m; t->key[h] && t->key[h] != u; h = (h + 1) & m)
		;
	return h;
}

/* An index expression's node: a constant, a variable with its range, an op with its range. */
static void
expr_label(Buf *b, const UOp *u)
{
	const OpInfo *in = &uop_info[u->op];

	if (u->op == OP_CONST) {
		if (u->dtype == DT_BOOL)
			emit(b, "%s", u->arg[0] ? "true" : "false");
		else
			emit(b, "%lld", (long long)u->arg[0]);
		return;
	}
	if (u->op == OP_VAR) {
		emit(b, "%s\n[%lld, %lld]", u->name ? u->name : "?", (long long)u->arg[0],
		     (long long)u->arg[1]);
		return;
	}
	if (u->op == OP_CAST)
		emit(b, "cast %s", dtype_name(u->dtype));
	else if (in->sym[0][0])
		emit(b, "%s", in->sym[0]);
	else
		emit(b, "%s", in->name);
	if (u->dtype == DT_BOOL)
		emit(b, "\nbool");
	else
		emit(b, "\n[%lld, %lld]", (long long)u->vmin, (long long)u->vmax);
}

/* A tensor program's node: op, name, arguments, dtype and shape, device where it is set. */
static void
tensor_label(Buf *b, const UOp *u)
{
	const OpInfo *in = &uop_info[u->op];
	int i;

	if (u->op == OP_CONST) {
		if (dtype_is_float(u->dtype))
			emit(b, "%g", uop_const_value(u));
		else if (u->dtype == DT_BOOL)
			emit(b, "%s", u->arg[0] ? "true" : "false");
		else
			emit(b, "%lld", (long long)u->arg[0]);
		emit(b, "\n%s", dtype_name(u->dtype));
		return;
	}
	emit(b, "%s", in->name);
	if (u->name)
		emit(b, " \"%s\"", u->name);
	if (u->op == OP_REDUCE || (u->op == OP_PERMUTE && u->data)) {
		const int64_t *d = u->data;

		if (u->op == OP_REDUCE)
			emit(b, " %s", uop_info[u->arg[0]].name);
		emit(b, " (");
		for (i = 0; i < (int)(u->ndata / 8); i++)
			emit(b, "%s%lld", i ? "," : "", (long long)d[i]);
		emit(b, ")");
	}
	if (u->op == OP_GETTUPLE || u->op == OP_PARAM)
		emit(b, " %lld", (long long)u->arg[0]);
	emit(b, "\n%s ", dtype_name(u->dtype));
	uop_shape_str(b, u->shape, u->ndim);
	if (u->op == OP_COPY || u->op == OP_PARAM || u->op == OP_BUFFER)
		emit(b, "\n%s", u->device ? u->device : "");
}

/* How a node looks: its shape and fill. */
static void
expr_style(Scene *s, int me, const UOp *u)
{
	if (u->op == OP_VAR) {
		strcpy(s->node[me].shape, "ellipse");
		s->node[me].fill = 0xD6E6F5;
	} else if (u->op == OP_CONST) {
		strcpy(s->node[me].shape, "plaintext");
	} else {
		s->node[me].fill = u->dtype == DT_BOOL ? 0xF5E1C8 : 0xEDEDED;
	}
}

/* The spec's colours: movement green, reduce red, elementwise yellow, calls blue. */
static void
tensor_style(Scene *s, int me, const UOp *u)
{
	int fl = uop_info[u->op].flags;

	if (u->op == OP_PARAM || u->op == OP_BINARY || u->op == OP_BUFFER) {
		strcpy(s->node[me].shape, "ellipse");
		s->node[me].fill = 0xD6E6F5;
	} else if (u->op == OP_CONST) {
		strcpy(s->node[me].shape, "plaintext");
	} else {
		s->node[me].fill = (fl & U_MOVE) ? 0xC8E6C9 : u->op == OP_REDUCE ? 0xF4C7C3
		                 : (fl & U_ALU) ? 0xFFF3C4 : (u->op == OP_FUNCTION || u->op == OP_CALL
		                 || u->op == OP_TUPLE || u->op == OP_GETTUPLE) ? 0xBBDEFB
		                 : u->op == OP_COPY || u->op == OP_REPLICATED ? 0xE1BEE7 : 0xEDEDED;
	}
}

/* Number u and everything below it; the node index, or -1 with a message. */
static int
visit(Scene *s, Seen *t, const UOp *u, int tensor, Err *e)
{
	size_t h = slot(t, u);
	int k, me;
	Buf b;

	if (t->key[h] && u->op != OP_CONST)
		return t->val[h];
	for (k = 0; k < u->nsrc; k++)   /* constants are drawn at each use, below */
		if (u->src[k]->op != OP_CONST && visit(s, t, u->src[k], tensor, e) < 0)
			return -1;
	buf_init(&b);
	(tensor ? tensor_label : expr_label)(&b, u);
	if (b.oom) {
		buf_free(&b);
		return err_set(e, "show: out of memory for a node label");
	}
	me = scene_node(s, VIZ_NODE_TEXT, b.s, e);
	buf_free(&b);
	if (me < 0)
		return -1;
	(tensor ? tensor_style : expr_style)(s, me, u);
	h = slot(t, u);   /* again: the recursion may have taken the slot found above */
	t->key[h] = u;
	t->val[h] = me;
	for (k = 0; k < u->nsrc; k++) {
		const int commutes = (uop_info[u->op].flags & U_COMM) || u->nsrc == 1;
		char lab[12];

		int to = u->src[k]->op == OP_CONST ? visit(s, t, u->src[k], tensor, e)
		                                   : t->val[slot(t, u->src[k])];

		snprintf(lab, sizeof lab, "%d", k);
		if (to < 0 || scene_edge(s, me, NULL, to, NULL, commutes ? NULL : lab, e) < 0)
			return -1;
	}
	return me;
}

/* The DAG below root; tensor picks the tensor program's labels and colours. */
static int
dag_scene(Scene *s, const UOp *root, int tensor, Err *e)
{
	int64_t n = uop_ops_dag(root);
	Seen t;
	int rc;

	scene_init(s);
	if (n > VIZ_GV_MAX_NODES)
		return err_set(e, "show: the %s has %lld distinct operations; a picture "
		               "draws at most %d nodes", tensor ? "graph" : "expression", (long long)n,
		               VIZ_GV_MAX_NODES);
	/* scene_node refuses the node after VIZ_GV_MAX_NODES: the table never fills */
	for (t.cap = 16; t.cap < 2 * (size_t)(VIZ_GV_MAX_NODES + 1); t.cap *= 2)
		;
	t.key = calloc(t.cap, sizeof *t.key);
	t.val = calloc(t.cap, sizeof *t.val);
	if (!t.key || !t.val) {
		free(t.key);
		free(t.val);
		return err_set(e, "show: out of memory");
	}
	rc = visit(s, &t, root, tensor, e);
	free(t.key);
	free(t.val);
	if (rc < 0) {
		scene_free(s);
		return -1;
	}
	if (tensor)
		scene_note(&s->caption, "%lld operations; edges run from an op to its sources, numbered "
		           "where order matters", (long long)n);
	else
		scene_note(&s->caption, "%lld operations (%lld as a tree); edges run from an operation "
		           "to its operands, numbered where order matters",
		           (long long)n, (long long)uop_ops(root));
	return scene_oom(s) ? (scene_free(s), err_set(e, "show: out of memory")) : 0;
}

int
uop_scene(Scene *s, const UOp *root, const VizOpts *o, Err *e)
{
	(void)o;
	return dag_scene(s, root, 0, e);
}

int
tensor_scene(Scene *s, const UOp *root, const VizOpts *o, Err *e)
{
	(void)o;
	return dag_scene(s, root, 1, e);
}
