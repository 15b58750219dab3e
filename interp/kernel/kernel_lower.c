/* kernel_lower.c - tensor graphs to kernels: one stage per reduction, contiguous mark and the root; everything else inlines into index and value expressions. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../util/pmap.h"
#include "kernel.h"

/*
** Four passes, none of them recursive (graphs nest UOP_MAXDEPTH deep):
**   1. flatten   calls inline (a body's PARAM k becomes argument k), DETACH
**                disappears, unsupported ops are refused; the result is a
**                call-free graph whose rebuilt nodes live in a scratch context
**   2. classify  inputs (PARAM, BINARY, BITCAST of a BINARY), realized nodes
**                (every REDUCE, the source of every CONTIGUOUS, the root) in
**                topological order
**   3. name      buffers in priority order (the output name the caller
**                gave, params, the root, temporaries), then add them
**   4. stages    one loop nest per realized node; its value is built by an
**                explicit-stack walk from (node, indices, gate) keys, memoized
**                so that a DAG stays a DAG
** Movement ops only rewrite the index vector of that walk; padding adds a
** gate that every load below it carries (a gated load reads 0 without
** touching memory) and a where(valid, x, 0) above it, which tensor_eval's
** masked views compute. Index expressions and gates go through
** uop_simplify; values never do (float constants hold double bits).
*/

#define E_DEEP "kernel.lower: out of memory, or the kernel nests deeper than %d", UOP_MAXDEPTH


/* ---- the lowering's state ---- */

/* What pass 2 learns about a node of the flattened graph. */
typedef struct Node {
	const UOp *u;
	int input;          /* PARAM, BINARY or BITCAST(BINARY): inbuf holds it */
	int realized;       /* one stage computes it into buf */
	int out;            /* its buffer is the output */
	int inbuf, buf;
	const char *cname;  /* the name of a contiguous mark on it */
	char name[K_NAME];  /* its buffer when realized */
	char iname[K_NAME]; /* its buffer when an input */
	unsigned keep;      /* axes its buffer keeps (a REDUCE drops its reduced axes) */
} Node;

/* A value request: node u at indices idx[0..n-1] under gate (NULL: none). */
typedef struct Key {
	const UOp *u;
	UOp *gate;
	int n;
	UOp *idx[T_MAXDIM];
} Key;

typedef struct VMemo {
	Key *k;
	UOp **v;
	size_t n, cap;
} VMemo;

typedef struct Lower {
	Kernel *k;
	UCtx *g;            /* rebuilt tensor nodes (calls inlined) */
	PMap orig;          /* rebuilt node -> the user's node */
	PMap info;          /* flattened node -> Node* */
	Node **nodes;       /* topological order of the nodes pass 2 classified */
	int nnodes, capnodes;
	const UOp *self;    /* the realized node whose stage is being built */
	VMemo memo;
	Key *stack;
	size_t sp, cap;
	Err *e;
} Lower;

static int
oom(Lower *L)
{
	if (!L->e || !L->e->msg[0])
		err_set(L->e, E_DEEP);
	return -1;
}

static const char *
opname(const UOp *u)
{
	return uop_info[u->op].name;
}

static const UOp *
original(const Lower *L, const UOp *u)
{
	const UOp *o = pmap_get(&L->orig, u);

	return o ? o : u;
}

static Node *
info(const Lower *L, const UOp *u)
{
	return pmap_get(&L->info, u);
}

/* Whether no PARAM is reachable from u: data the reference evaluator can
** realize before the kernel runs (tensor.rand's bits, say). */
static int
param_free(const UOp *u)
{
	PMap seen = { 0 };
	const UOp **st = NULL;
	size_t n = 0, cap = 0;
	int ok = 1, i;

	for (;;) {
		if (u->op == OP_PARAM) {
			ok = 0;
			break;
		}
		if (!pmap_get(&seen, u)) {
			if (pmap_put(&seen, u, (void *)u) < 0) {
				ok = 0;
				break;
			}
			for (i = 0; i < u->nsrc; i++) {
				if (n == cap) {
					const UOp **ns = realloc(st, (cap = cap ? 2 * cap : 64) * sizeof *ns);

					if (!ns) {
						ok = 0;
						goto out;
					}
					st = ns;
				}
				st[n++] = u->src[i];
			}
		}
		if (!n)
			break;
		u = st[--n];
	}
out:
	free(st);
	pmap_free(&seen);
	return ok;
}

/* Inputs: params, data, and bitcasts of data (tensor.from's, or any value
** computed without params: the kernel has no bitcast of its own values). */
static int
is_input(const UOp *u)
{
	return u->op == OP_PARAM || u->op == OP_BINARY
	|| (u->op == OP_BITCAST && (u->src[0]->op == OP_BINARY || param_free(u->src[0])));
}

/* ---- pass 1: flatten ---- */

/* Why u cannot be lowered, or 0. */
static int
refuse(const UOp *u, Err *e)
{
	Buf b;

	if (u->dtype == DT_INDEX)
		return err_set(e, "kernel.lower: %s of dtype index is index arithmetic, not a tensor", opname(u));
	if (u->device && uop_ndev(u->device) > 1)
		return err_set(e, "kernel.lower: %s is on devices %s; lower one device's program",
		               opname(u), u->device);
	switch (u->op) {
	case OP_COPY:
		return err_set(e, "kernel.lower: copy to %s moves data between devices; lower one device's "
		               "program", u->device ? u->device : "?");
	case OP_REPLICATED:
		return err_set(e, "kernel.lower: replicated is a multi-device op; lower one device's program");
	case OP_BITCAST:
		if (u->src[0]->op != OP_BINARY && !param_free(u->src[0]))
			return err_set(e, "kernel.lower: bitcast of a %s computed from params to %s is not "
			               "supported (a kernel cannot reinterpret its own values; realize it first)",
			               opname(u->src[0]), dtype_name((DType)u->dtype));
		break;
	case OP_VAR:
		return err_set(e, "kernel.lower: the index variable %s is not a tensor", u->name ? u->name : "?");
	case OP_TUPLE:
		return err_set(e, "kernel.lower: a tuple has no single value (take an element with gettuple)");
	case OP_BUFFER: case OP_LOAD: case OP_STORE: case OP_AFTER: case OP_GROUP: case OP_SINK:
		return err_set(e, "kernel.lower: %s is not supported (lower the tensor expression it "
		               "stores or orders)", opname(u));
	default:
		if (uop_info[u->op].flags & U_KERNEL)
			return err_set(e, "kernel.lower: %s is already a kernel op, not a tensor op", opname(u));
		if (!(uop_info[u->op].flags & (U_TENSOR | U_ALU | U_LEAF)))
			return err_set(e, "kernel.lower: %s is not supported", opname(u));
		break;
	}
	if (u->op != OP_FUNCTION && u->op != OP_CALL && uop_numel(u) == 0) {
		buf_init(&b);
		uop_shape_str(&b, u->shape, u->ndim);
		err_set(e, "kernel.lower: %s of shape %s has no elements", opname(u), b.s ? b.s : "?");
		buf_free(&b);
		return -1;
	}
	return 0;
}

typedef struct Frame {
	const UOp *u;
	int next;
} Frame;

/*
** The call-free version of u, with a body's PARAM k bound to env[k] (env
** NULL at the top). Each call level has its own memo; levels recurse, as
** tensor_eval's do, at most 64 deep.
*/
static UOp *
flatten(Lower *L, const UOp *root, UOp *const *env, int nenv, int depth)
{
	PMap memo = { 0 };
	Frame *st = NULL;
	size_t n = 0, cap = 64;
	UOp *r = NULL;

	if (depth > 64)
		return err_set(L->e, "kernel.lower: functions nest more than 64 deep"), NULL;
	if (!(st = malloc(cap * sizeof *st)))
		return oom(L), NULL;
	st[n++] = (Frame){ root, 0 };
	while (n) {
		Frame *f = &st[n - 1];
		const UOp *u = f->u;
		UOp *s[64], **sp = s, *y = NULL;
		int i, changed = 0;

		if (pmap_get(&memo, u)) {
			n--;
			continue;
		}
		if (f->next == 0) {
			if (refuse(u, L->e) < 0)
				goto out;
			if (u->op == OP_FUNCTION || u->op == OP_CALL)
				f->next = 1;   /* the body is flattened with its own bindings */
		}
		if (f->next < u->nsrc) {
			const UOp *c = u->src[f->next++];

			if (pmap_get(&memo, c))
				continue;
			if (n == cap) {
				Frame *ns = realloc(st, 2 * cap * sizeof *ns);

				if (!ns) {
					oom(L);
					goto out;
				}
				st = ns;
				cap *= 2;
			}
			st[n++] = (Frame){ c, 0 };
			continue;
		}
		n--;
		if (u->nsrc > 64 && !(sp = malloc(u->nsrc * sizeof *sp))) {
			oom(L);
			goto out;
		}
		for (i = 0; i < u->nsrc; i++) {
			sp[i] = (u->op == OP_FUNCTION || u->op == OP_CALL) && i == 0 ? u->src[0]
			      : pmap_get(&memo, u->src[i]);
			changed |= sp[i] != u->src[i];
		}
		switch (u->op) {
		case OP_PARAM:
			if (!env)
				y = (UOp *)u;
			else if (u->arg[0] < 0 || u->arg[0] >= nenv)
				err_set(L->e, "kernel.lower: param %lld (%s) of a function body is not bound",
				        (long long)u->arg[0], u->name ? u->name : "?");
			else
				y = env[u->arg[0]];
			break;
		case OP_DETACH:
			y = sp[0];
			break;
		case OP_FUNCTION:
		case OP_CALL: {
			const UOp *t = u->src[0];
			UOp **el = calloc(t->nsrc ? t->nsrc : 1, sizeof *el);

			if (!el) {
				oom(L);
				break;
			}
			for (i = 0; i < t->nsrc; i++)
				if (!(el[i] = flatten(L, t->src[i], sp + 1, u->nsrc - 1, depth + 1)))
					break;
			/* a tuple in the scratch context holds the elements for GETTUPLE */
			if (i == t->nsrc && !(y = uop_new(L->g, OP_TUPLE, (DType)el[0]->dtype, el, t->nsrc, 0, 0,
			                                  NULL, NULL, 0)))
				oom(L);
			free(el);
			break;
		}
		case OP_GETTUPLE:
			if (sp[0]->op != OP_TUPLE || u->arg[0] < 0 || u->arg[0] >= sp[0]->nsrc)
				err_set(L->e, "kernel.lower: gettuple %lld of a %s", (long long)u->arg[0], opname(sp[0]));
			else
				y = sp[0]->src[u->arg[0]];
			break;
		default:
			if (!changed)
				y = (UOp *)u;
			else if (!(y = uop_new(L->g, (Op)u->op, (DType)u->dtype, sp, u->nsrc, u->arg[0], u->arg[1],
			                       u->name, u->data, u->ndata)))
				oom(L);
			else if (!pmap_get(&L->orig, y) && pmap_put(&L->orig, y, (void *)u) < 0) {
				oom(L);
				y = NULL;
			}
			break;
		}
		if (sp != s)
			free(sp);
		if (!y || pmap_put(&memo, u, y) < 0) {
			if (y)
				oom(L);
			goto out;
		}
	}
	r = pmap_get(&memo, root);
out:
	free(st);
	pmap_free(&memo);
	return r;
}

/* ---- pass 2: classify ---- */

static Node *
node_new(Lower *L, const UOp *u)
{
	Node *x = calloc(1, sizeof *x);
	int i;

	if (!x)
		return NULL;
	x->u = u;
	x->inbuf = x->buf = -1;
	x->keep = (1u << u->ndim) - 1;
	if (u->op == OP_REDUCE)
		for (i = 0; i < (int)u->arg[1]; i++)
			x->keep &= ~(1u << ((const int64_t *)u->data)[i]);
	if (pmap_put(&L->info, u, x) < 0) {
		free(x);
		return NULL;
	}
	if (L->nnodes == L->capnodes) {
		int cap = L->capnodes ? 2 * L->capnodes : 32;
		Node **nn = realloc(L->nodes, cap * sizeof *nn);

		if (!nn)
			return NULL;   /* x stays owned by the map */
		L->nodes = nn;
		L->capnodes = cap;
	}
	L->nodes[L->nnodes++] = x;
	return x;
}

static const UOp *
strip_contiguous(const UOp *u)
{
	while (u->op == OP_CONTIGUOUS)
		u = u->src[0];
	return u;
}

/*
** Post-order over the flattened graph: every node gets its Node when its
** sources are done (L->nodes is a topological order). Inputs are leaves (a
** BITCAST's BINARY is part of its input); every REDUCE is realized, and so
** is the source of every contiguous mark unless it already lives in a
** buffer or is a constant.
*/
static int
classify(Lower *L, const UOp *root)
{
	Frame *st = NULL;
	size_t n = 0, cap = 64;
	int rc = -1;

	if (!(st = malloc(cap * sizeof *st)))
		goto fail;
	st[n++] = (Frame){ root, 0 };
	while (n) {
		Frame *f = &st[n - 1];
		const UOp *u = f->u;
		Node *x;

		if (f->next < u->nsrc && !is_input(u)) {
			const UOp *c = u->src[f->next++];

			/* the stack is the path from the root: c is new or done */
			if (info(L, c))
				continue;
			if (n == cap) {
				Frame *ns = realloc(st, 2 * cap * sizeof *ns);

				if (!ns)
					goto fail;
				st = ns;
				cap *= 2;
			}
			st[n++] = (Frame){ c, 0 };
			continue;
		}
		n--;
		if (info(L, u))
			continue;
		if (!(x = node_new(L, u)))
			goto fail;
		if (is_input(u))
			x->input = 1;
		else if (u->op == OP_REDUCE)
			x->realized = 1;
		else if (u->op == OP_CONTIGUOUS) {
			Node *s = info(L, strip_contiguous(u));

			if (!s->input && s->u->op != OP_CONST)
				s->realized = 1;
			if (u->name && !s->cname)
				s->cname = u->name;
		} else if (u->name && u->op != OP_PARAM) {
			/* a name on a view of a reduce (matmul's reshape, a permute) names the reduce's stage */
			const UOp *r = u;
			Node *s;

			while (r->op == OP_RESHAPE || r->op == OP_PERMUTE || r->op == OP_EXPAND || r->op == OP_CONTIGUOUS)
				r = r->src[0];
			if (r != u && r->op == OP_REDUCE && (s = info(L, r)) && !s->cname && !r->name)
				s->cname = u->name;
		}
	}
	rc = 0;
fail:
	if (rc < 0)
		oom(L);
	free(st);
	return rc;
}

/* ---- pass 3: names and buffers ---- */

/* a constant as tensor_alu broadcasts it: a reshape and expand of a CONST */
static int
is_fconst(const UOp *u, double v)
{
	while (u->op == OP_EXPAND || u->op == OP_RESHAPE)
		u = u->src[0];
	return u->op == OP_CONST && dtype_is_float(u->dtype)
	&& fabs(uop_const_value(u) - v) <= 1e-7 * fabs(v);
}

/* x * c in either order */
static int
times(const UOp *u, double c)
{
	return u->op == OP_MUL && (is_fconst(u->src[0], c) || is_fconst(u->src[1], c));
}

/* a movement op: a view of its source */
static int
is_view(const UOp *u)
{
	return u->op == OP_RESHAPE || u->op == OP_PERMUTE || u->op == OP_EXPAND || u->op == OP_SHRINK
	    || u->op == OP_FLIP || u->op == OP_PAD;
}

/* a constant, through its views */
static int
is_const(const UOp *u)
{
	while (is_view(u))
		u = u->src[0];
	return u->op == OP_CONST;
}

/* u broadcasts something: an EXPAND within depth ops below it (what a matmul's operands do) */
static int
broadcasts(const UOp *u, int depth)
{
	int i;

	if (u->op == OP_EXPAND)
		return 1;
	if (depth == 0 || u->op == OP_REDUCE || u->op == OP_PARAM || u->op == OP_CONST)
		return 0;
	for (i = 0; i < u->nsrc; i++)
		if (broadcasts(u->src[i], depth - 1))
			return 1;
	return 0;
}

/* every consumer of u among the nodes multiplies it by 1/count (a mean), and there is one */
static int
only_scaled(const Lower *L, const UOp *u, double count)
{
	int i, j, uses = 0;

	for (i = 0; i < L->nnodes; i++) {
		const UOp *c = L->nodes[i]->u;

		if (is_view(c))
			continue;   /* its users are u's users through it */
		for (j = 0; j < c->nsrc; j++) {
			const UOp *s = c->src[j];

			while (is_view(s) && s != u)
				s = s->src[0];
			if (s != u)
				continue;
			if (c->op != OP_MUL || !is_fconst(c->src[1 - j], 1.0 / count))
				return 0;
			uses++;
		}
	}
	return uses > 0;
}

/*
** A temporary's name when nobody named it: what it computes where the graph
** says so, with Neptune's x prefix (xmax, xexp, xsum), so that a buffer never
** reads like the function that fills it (xmax[i] = max(xmax[i], ...)). A sum
** is xmatmul when it reduces a product of two operands one of which is
** broadcast (a matmul, attention's scores and its P V, one query row or many), xsumsq when it reduces a square (a
** variance, an RMS norm), xmean when every use divides it by its count; a max
** of a negation is xmin; otherwise the op.
*/
static const char *
default_name(const Lower *L, const UOp *u, char *out, size_t n)
{
	const char *op = opname(u);

	if (u->op == OP_REDUCE) {
		const UOp *s = u->src[0];
		int64_t in = 1, kept = 1;
		int i;

		for (i = 0; i < s->ndim; i++)
			in *= s->shape[i];
		for (i = 0; i < u->ndim; i++)
			kept *= u->shape[i];
		if (u->arg[0] == OP_MAX)
			op = s->op == OP_NEG ? "min" : "max";
		else if (u->arg[0] != OP_ADD)
			op = "prod";
		else if (s->op == OP_MUL && s->src[0] == s->src[1])
			op = "sumsq";
		else if (s->op == OP_MUL && !is_const(s->src[0]) && !is_const(s->src[1])
		         && (broadcasts(s->src[0], 8) || broadcasts(s->src[1], 8)))
			op = "matmul";
		else if (kept > 0 && in > kept && only_scaled(L, u, (double)(in / kept)))
			op = "mean";
		else
			op = "sum";
	} else if (u->op == OP_EXP2 && times(u->src[0], 1.4426950408889634))
		op = "exp";
	else if (times(u, 0.6931471805599453) && (u->src[0]->op == OP_LOG2 || u->src[1]->op == OP_LOG2))
		op = "log";
	snprintf(out, n, "x%s", op);
	return out;
}

typedef struct Names {
	char (*s)[K_NAME];
	int n;
} Names;

/* base made an identifier (kernel_fresh_name on the still empty kernel),
** then suffixed until no name taken before takes it */
static void
fresh(Lower *L, Names *nm, const char *base, char *out)
{
	char b[K_NAME];
	int i, j, taken;

	kernel_fresh_name(L->k, base, b, sizeof b);
	snprintf(out, K_NAME, "%s", b);
	for (i = 1;; i++) {
		for (taken = 0, j = 0; j < nm->n && !taken; j++)
			taken = strcmp(nm->s[j], out) == 0;
		if (!taken)
			break;
		snprintf(out, K_NAME, "%.40s_%d", b, i);
	}
	snprintf(nm->s[nm->n++], K_NAME, "%s", out);
}

/*
** The output: the root without its contiguous marks, or the REDUCE under a
** root that only drops the reduce's size-1 axes (x:sum(1) without keepdim is
** a RESHAPE of the REDUCE): the reduce's buffer already has the root's shape.
*/
static const UOp *
output_node(const UOp *root, const char **name)
{
	const UOp *r = root, *x;
	int64_t kept[T_MAXDIM];
	int i, n = 0;

	*name = NULL;
	for (; ; r = r->src[0]) {
		if (r->name && !*name && r->op != OP_PARAM)
			*name = r->name;
		if (r->op != OP_CONTIGUOUS)
			break;
	}
	if (r->op != OP_RESHAPE)
		return r;
	x = strip_contiguous(r->src[0]);
	if (x->op != OP_REDUCE)
		return r;
	for (i = 0; i < x->ndim; i++) {
		int red = 0, j;

		for (j = 0; j < (int)x->arg[1]; j++)
			red |= ((const int64_t *)x->data)[j] == i;
		if (!red)
			kept[n++] = x->shape[i];
	}
	if (n != r->ndim || (n && memcmp(kept, r->shape, n * sizeof *kept) != 0))
		return r;
	if (x->name && !*name)
		*name = x->name;
	return x;
}

static int
buffers(Lower *L, const UOp *root, const KLowerOpts *o)
{
	const char *oname = o && o->out_name ? o->out_name : NULL, *rname;
	const UOp *ou = output_node(root, &rname);
	Names nm;
	Node *out;
	int i;

	if (oname && !uop_valid_name(oname))
		return err_set(L->e, "kernel.lower: the output name \"%s\" is not a name (letters, digits, "
		               "_; at most 63)", oname);
	out = info(L, ou);
	out->realized = out->out = 1;
	if (!(nm.s = calloc(L->nnodes + 1, sizeof *nm.s)))
		return oom(L);
	nm.n = 0;
	/* priority: the name the caller gave, params, the root, temporaries */
	if (oname)
		fresh(L, &nm, oname, out->name);
	for (i = 0; i < L->nnodes; i++) {
		Node *x = L->nodes[i];

		if (x->input && x->u->op == OP_PARAM)
			fresh(L, &nm, x->u->name ? x->u->name : "param", x->iname);
	}
	for (i = 0; i < L->nnodes; i++) {
		Node *x = L->nodes[i];

		if (x->input && x->u->op != OP_PARAM)
			fresh(L, &nm, x->u->name ? x->u->name : x->u->op == OP_BITCAST && x->u->src[0]->name
			      ? x->u->src[0]->name : "data", x->iname);
	}
	if (!oname)
		fresh(L, &nm, rname ? rname : "out", out->name);
	for (i = 0; i < L->nnodes; i++) {
		Node *x = L->nodes[i];

		if (x->realized && !x->out) {
			char dn[K_NAME];

			fresh(L, &nm, x->cname ? x->cname : x->u->name ? x->u->name : default_name(L, x->u, dn, sizeof dn),
			      x->name);
		}
	}
	free(nm.s);
	/* buffers: inputs, then realized nodes in topological order */
	for (i = 0; i < L->nnodes; i++) {
		Node *x = L->nodes[i];

		if (!x->input)
			continue;
		x->inbuf = kernel_add_buffer(L->k, x->iname, (DType)x->u->dtype, AS_GLOBAL, KB_INPUT,
		                             x->u->shape, x->u->ndim, L->e);
		if (x->inbuf < 0)
			return -1;
		L->k->buf[x->inbuf].tensor = original(L, x->u);
	}
	for (i = 0; i < L->nnodes; i++) {
		Node *x = L->nodes[i];
		int64_t s[T_MAXDIM];
		int d, n = 0;

		if (!x->realized)
			continue;
		for (d = 0; d < x->u->ndim; d++)
			if (x->keep >> d & 1)
				s[n++] = x->u->shape[d];
		x->buf = kernel_add_buffer(L->k, x->name, (DType)x->u->dtype,
		                           AS_GLOBAL, x->out ? KB_OUTPUT : KB_TEMP, s, n, L->e);
		if (x->buf < 0)
			return -1;
		L->k->buf[x->buf].tensor = x->out ? original(L, root) : original(L, x->u);
	}
	return 0;
}

/* ---- pass 4: values ---- */

static size_t
khash(const Key *k, size_t m)
{
	uint64_t h = (uintptr_t)k->u * 0x9E3779B97F4A7C15ull ^ (uintptr_t)k->gate;
	int i;

	for (i = 0; i < k->n; i++)
		h = (h ^ (uintptr_t)k->idx[i]) * 0x100000001B3ull;
	return (size_t)(h ^ h >> 29) & m;
}

static int
keq(const Key *a, const Key *b)
{
	int i;

	if (a->u != b->u || a->gate != b->gate || a->n != b->n)
		return 0;
	for (i = 0; i < a->n; i++)
		if (a->idx[i] != b->idx[i])
			return 0;
	return 1;
}

static UOp *
memo_get(const VMemo *m, const Key *k)
{
	size_t h;

	if (!m->cap)
		return NULL;
	for (h = khash(k, m->cap - 1); m->v[h]; h = (h + 1) & (m->cap - 1))
		if (keq(&m->k[h], k))
			return m->v[h];
	return NULL;
}

static int
memo_put(VMemo *m, const Key *k, UOp *v)
{
	size_t h, i;

	if (2 * (m->n + 1) > m->cap) {
		size_t cap = m->cap ? 2 * m->cap : 256;
		Key *nk = calloc(cap, sizeof *nk);
		UOp **nv = calloc(cap, sizeof *nv);

		if (!nk || !nv) {
			free(nk);
			free(nv);
			return -1;
		}
		for (i = 0; i < m->cap; i++)
			if (m->v[i]) {
				for (h = khash(&m->k[i], cap - 1); nv[h]; h = (h + 1) & (cap - 1))
					;
				nk[h] = m->k[i];
				nv[h] = m->v[i];
			}
		free(m->k);
		free(m->v);
		m->k = nk;
		m->v = nv;
		m->cap = cap;
	}
	for (h = khash(k, m->cap - 1); m->v[h]; h = (h + 1) & (m->cap - 1))
		;
	m->k[h] = *k;
	m->v[h] = v;
	m->n++;
	return 0;
}

static void
memo_clear(VMemo *m)
{
	free(m->k);
	free(m->v);
	memset(m, 0, sizeof *m);
}

/* An index expression or gate, simplified (NULL only when memory runs out). */
static UOp *
simp(Lower *L, UOp *x)
{
	UOp *o;
	int i;

	if (!x)
		return NULL;
	/* one pass is not always a fixpoint (terms in size-1 loop variables
	** reorder again): a few more, so that printed indices are final */
	for (i = 0; i < 4 && x->op != OP_CONST && x->op != OP_VAR; i++, x = o) {
		if (uop_simplify(L->k->c, x, &o, L->e) < 0)
			return NULL;
		if (o == x)
			break;
	}
	return x;
}

/* gate and cond, simplified; NULL for "always" (*ok 0 when memory runs out) */
static UOp *
gate_and(Lower *L, UOp *gate, UOp *cond, int *ok)
{
	UOp *g = gate ? uop_alu(L->k->c, OP_AND, gate, cond) : cond;

	*ok = 1;
	if (!(g = simp(L, g))) {
		*ok = 0;
		return NULL;
	}
	return g->vmin >= 1 ? NULL : g;
}

/* Memoized value of key c, or NULL after pushing c to be computed first. */
static UOp *
need(Lower *L, const Key *c, int *pushed)
{
	UOp *v = memo_get(&L->memo, c);

	if (v)
		return v;
	if (L->sp == L->cap) {
		size_t cap = L->cap ? 2 * L->cap : 256;
		Key *ns = realloc(L->stack, cap * sizeof *ns);

		if (!ns) {
			*pushed = -1;
			return NULL;
		}
		L->stack = ns;
		L->cap = cap;
	}
	L->stack[L->sp++] = *c;
	if (*pushed >= 0)
		*pushed = 1;
	return NULL;
}

static Key
key(const UOp *u, UOp *const *idx, int n, UOp *gate)
{
	Key k;

	memset(&k, 0, sizeof k);
	k.u = u;
	k.gate = gate;
	k.n = n;
	if (n)
		memcpy(k.idx, idx, n * sizeof *idx);
	return k;
}

/* A load of buffer b at the indices its buffer keeps (a REDUCE's reduced
** axes are gone: every index there is 0 or a broadcast of 0). */
static UOp *
load(Lower *L, int b, unsigned keep, UOp *const *idx, int n, UOp *gate)
{
	UOp *ix[T_MAXDIM];
	int i, m = 0;

	for (i = 0; i < n; i++)
		if (keep >> i & 1)
			ix[m++] = idx[i];
	return kernel_load(L->k, kernel_index(L->k, b, ix, m), gate);
}

/* x as an index into an axis of size n: an integer value, negative counting from the end */
static UOp *
gather_index(Lower *L, UOp *v, int64_t n)
{
	UCtx *c = L->k->c;
	UOp *x = kernel_cast(L->k, DT_INDEX, v);

	x = uop_where(c, uop_alu(c, OP_CMPLT, x, uop_int(c, 0)), uop_add(c, x, uop_int(c, n)), x);
	return simp(L, x);
}

/*
** Integer arithmetic on indices stays index arithmetic. A value that is an
** integer constant, or a cast of an index expression, is *exact*: as an
** index (int64, no wrap) it has the same value. An op over exact operands
** computes in index arithmetic, where the simplifier folds it, and is cast
** back when the result's range fits the dtype, so it never wraps or rounds:
** for floats, when every value is an integer that the dtype holds exactly.
** So arange (a stack of constants, shifted and added) lowers to the loop
** variable, and a causal mask arange(n)[:, None] >= arange(n) to i >= j, as
** in tinygrad. Division and modulo need operands >= 0, where truncation and
** floor agree. NULL when the op or an operand is not exact.
*/
static UOp *
exact(UCtx *c, UOp *v)
{
	if (v->dtype == DT_INDEX || (v->dtype == DT_BOOL && v->op != OP_LOAD && uop_info[v->op].flags & U_CMP))
		return v;
	if (v->op == OP_CAST && v->src[0]->dtype == DT_INDEX)
		return v->src[0];
	if (v->op == OP_CONST && v->dtype == DT_BOOL)
		return uop_const(c, DT_BOOL, v->arg[0] != 0);
	if (v->op == OP_CONST) {
		double x = uop_const_value(v);

		if (x == floor(x) && fabs(x) <= 9007199254740992.0)
			return uop_int(c, (int64_t)x);
	}
	return NULL;
}

static int
exact_fits(DType t, const UOp *r)
{
	int64_t lo, hi;

	if (r->dtype == DT_BOOL)
		return 1;
	switch (t) {
	case DT_FLOAT16:  lo = -2048; hi = 2048; break;
	case DT_BFLOAT16: lo = -256; hi = 256; break;
	case DT_FLOAT32:  lo = -16777216; hi = 16777216; break;
	case DT_FLOAT64:  lo = -9007199254740992LL; hi = 9007199254740992LL; break;
	default:          dtype_range(t, &lo, &hi); break;
	}
	return r->vmin >= lo && r->vmax <= hi;
}

static UOp *
exact_alu(Lower *L, Op op, DType t, UOp *const *v, int n)
{
	UCtx *c = L->k->c;
	UOp *x[3], *r;
	int i, isfloat = dtype_is_float(t);

	if (t == DT_BOOL && op != OP_CMPLT && op != OP_CMPNE && op != OP_CMPEQ)
		return NULL;
	for (i = 0; i < n; i++)
		if (!(x[i] = exact(c, v[i])) || ((i != 0 || op != OP_WHERE) && x[i]->dtype == DT_BOOL
		                                 && op != OP_CMPNE && op != OP_CMPEQ))
			return NULL;
	switch (op) {
	case OP_ADD: case OP_SUB: case OP_MUL: case OP_MAX: case OP_MIN:
	case OP_CMPLT: case OP_CMPNE: case OP_CMPEQ:
		if (n != 2)
			return NULL;
		r = uop_alu(c, op, x[0], x[1]);
		break;
	case OP_IDIV: case OP_MOD:
		if (n != 2 || isfloat || x[0]->vmin < 0 || x[1]->vmin <= 0)
			return NULL;
		r = uop_alu(c, op, x[0], x[1]);
		break;
	case OP_NEG:
		r = n == 1 ? uop_neg(c, x[0]) : NULL;
		break;
	case OP_WHERE:
		/* a float where of two constants stays one: no cast to pay */
		if (n != 3 || x[0]->dtype != DT_BOOL || (isfloat && x[1]->op == OP_CONST && x[2]->op == OP_CONST))
			return NULL;
		r = uop_where(c, x[0], x[1], x[2]);
		break;
	default:
		return NULL;
	}
	if (!r || !(r = simp(L, r)) || !exact_fits(t, r))
		return NULL;
	return r->dtype == DT_BOOL ? r : kernel_cast(L->k, t, r);
}

/* Stacked integer constants v[0..n) in arithmetic progression, selected by
** i0 in [lo, lo + n): v[0] + step*(i0 - lo) as an exact value (arange's
** digits); NULL otherwise. */
static UOp *
stack_progression(Lower *L, DType t, UOp *i0, int64_t lo, UOp *const *v, int64_t n)
{
	UCtx *c = L->k->c;
	UOp *x0, *x1, *r;
	int64_t step, j;

	if (n < 2 || !(x0 = exact(c, v[0])) || !(x1 = exact(c, v[1])) || x0->op != OP_CONST
	|| x1->op != OP_CONST || uck_sub(x1->arg[0], x0->arg[0], &step) < 0)
		return NULL;
	for (j = 2; j < n; j++) {
		UOp *xj = exact(c, v[j]);

		if (!xj || xj->op != OP_CONST || xj->arg[0] - x0->arg[0] != step * j)
			return NULL;
	}
	r = uop_add(c, x0, uop_mul(c, uop_int(c, step), uop_sub(c, i0, uop_int(c, lo))));
	if (!(r = simp(L, r)) || !exact_fits(t, r))
		return NULL;
	return kernel_cast(L->k, t, r);
}

/*
** One step of the walk: the value of f when its sources' values are
** memoized (returns 1 with *out), else pushes the missing ones (returns 0).
*/
static int
step(Lower *L, const Key *f, UOp **out)
{
	const UOp *u = f->u;
	const int64_t *d = u->data;
	Kernel *k = L->k;
	UCtx *c = k->c;
	Node *x = info(L, u);
	UOp *idx[T_MAXDIM], *v[3], *r = NULL;
	Key ck;
	int i, nd = u->ndim, pushed = 0, ok;

	if (x && x->input) {
		*out = load(L, x->inbuf, ~0u, f->idx, f->n, f->gate);
		return *out ? 1 : oom(L);
	}
	if (x && x->realized && u != L->self) {
		*out = load(L, x->buf, x->keep, f->idx, f->n, f->gate);
		return *out ? 1 : oom(L);
	}
	switch ((Op)u->op) {
	case OP_CONST:
		r = uop_import(c, u);
		break;
	case OP_CONTIGUOUS:   /* its source is realized, or an input, or a constant */
		ck = key(u->src[0], f->idx, f->n, f->gate);
		r = need(L, &ck, &pushed);
		break;
	case OP_PERMUTE:
		for (i = 0; i < nd; i++)
			idx[d[i]] = f->idx[i];
		ck = key(u->src[0], idx, nd, f->gate);
		r = need(L, &ck, &pushed);
		break;
	case OP_FLIP:
		for (i = 0; i < nd; i++)
			if (!(idx[i] = d[i] ? simp(L, uop_sub(c, uop_int(c, u->shape[i] - 1), f->idx[i])) : f->idx[i]))
				return oom(L);
		ck = key(u->src[0], idx, nd, f->gate);
		r = need(L, &ck, &pushed);
		break;
	case OP_EXPAND:
		for (i = 0; i < nd; i++)
			idx[i] = u->src[0]->shape[i] == 1 ? uop_int(c, 0) : f->idx[i];
		ck = key(u->src[0], idx, nd, f->gate);
		r = need(L, &ck, &pushed);
		break;
	case OP_SHRINK:
		for (i = 0; i < nd; i++)
			if (!(idx[i] = simp(L, uop_add(c, f->idx[i], uop_int(c, d[i])))))
				return oom(L);
		ck = key(u->src[0], idx, nd, f->gate);
		r = need(L, &ck, &pushed);
		break;
	case OP_PAD: {
		UOp *valid = NULL, *g, *cmp;

		for (i = 0; i < nd; i++) {
			int64_t lo = d[i], hi = d[i] + u->src[0]->shape[i];

			if (!(idx[i] = simp(L, uop_sub(c, f->idx[i], uop_int(c, lo)))))
				return oom(L);
			if (lo > 0) {
				cmp = uop_alu(c, OP_CMPLT, uop_int(c, lo - 1), f->idx[i]);
				valid = valid ? uop_alu(c, OP_AND, valid, cmp) : cmp;
			}
			if (hi < u->shape[i]) {
				cmp = uop_alu(c, OP_CMPLT, f->idx[i], uop_int(c, hi));
				valid = valid ? uop_alu(c, OP_AND, valid, cmp) : cmp;
			}
		}
		if (!(valid = valid ? simp(L, valid) : uop_const(c, DT_BOOL, 1)))
			return oom(L);
		if (valid->vmin >= 1) {   /* nothing of the padding is ever read */
			ck = key(u->src[0], idx, nd, f->gate);
			r = need(L, &ck, &pushed);
			break;
		}
		g = gate_and(L, f->gate, valid, &ok);
		if (!ok)
			return oom(L);
		ck = key(u->src[0], idx, nd, g);
		if (!(r = need(L, &ck, &pushed)))
			break;
		/* a load under the same gate already reads 0 in the padding */
		if (!(r->op == OP_LOAD && r->nsrc == 2 && r->src[1] == g)) {
			v[0] = valid;
			v[1] = r;
			v[2] = kernel_const(k, (DType)u->dtype, 0);
			r = kernel_alu(k, OP_WHERE, (DType)u->dtype, v, 3);
		}
		break;
	}
	case OP_RESHAPE: {
		const UOp *a = u->src[0];
		UOp *flat = uop_int(c, 0);

		for (i = 0; i < nd; i++)
			flat = uop_add(c, uop_mul(c, flat, uop_int(c, u->shape[i])), f->idx[i]);
		/* row-major digits; the slowest is the quotient left (in range where it is read) */
		for (i = a->ndim - 1; i >= 0; i--) {
			UOp *q = i ? uop_idiv(c, flat, uop_int(c, a->shape[i])) : NULL;

			idx[i] = i ? uop_mod(c, flat, uop_int(c, a->shape[i])) : flat;
			if (!(idx[i] = simp(L, idx[i])))
				return oom(L);
			flat = q;
		}
		ck = key(a, idx, a->ndim, f->gate);
		r = need(L, &ck, &pushed);
		break;
	}
	case OP_STACK: {
		UOp *i0 = f->idx[0], *vals[64], **vs = vals;
		int64_t lo = i0->vmin < 0 ? 0 : i0->vmin, hi = i0->vmax >= u->nsrc ? u->nsrc - 1 : i0->vmax, j;

		/* under a pad the index may lie wholly in the padding: any source
		** will do there, the pad's where and gated loads read 0 */
		if (lo > hi)
			lo = hi = i0->vmin < 0 ? 0 : u->nsrc - 1;
		if (hi - lo + 1 > 64 && !(vs = malloc((hi - lo + 1) * sizeof *vs)))
			return oom(L);
		for (j = lo; j <= hi; j++) {
			ck = key(u->src[j], f->idx + 1, nd - 1, f->gate);
			vs[j - lo] = need(L, &ck, &pushed);
		}
		if (!pushed && (r = stack_progression(L, (DType)u->dtype, i0, lo, vs, hi - lo + 1))) {
			/* constants in arithmetic progression: v_lo + step*(i0 - lo) */
		} else if (!pushed) {
			/* where(i0 == lo, v_lo, where(i0 == lo + 1, ..., v_hi)) */
			r = kernel_cast(k, (DType)u->dtype, vs[hi - lo]);
			for (j = hi - 1; j >= lo && r; j--) {
				v[0] = simp(L, uop_alu(c, OP_CMPEQ, i0, uop_int(c, j)));
				v[1] = kernel_cast(k, (DType)u->dtype, vs[j - lo]);
				v[2] = r;
				r = kernel_alu(k, OP_WHERE, (DType)u->dtype, v, 3);
			}
			if (!r) {
				if (vs != vals)
					free(vs);
				return oom(L);
			}
		}
		if (vs != vals)
			free(vs);
		break;
	}
	case OP_INDEX: {
		const UOp *a = u->src[0];
		UOp *xv[T_MAXDIM];
		int od = 0;

		/* the index tensors first: their values are the data's indices */
		for (i = 1; i < u->nsrc; i++) {
			const UOp *ti = u->src[i];

			ck = key(ti, f->idx + od, ti->ndim, f->gate);
			od += ti->ndim;
			xv[i - 1] = need(L, &ck, &pushed);
		}
		if (pushed)
			break;
		for (i = 1; i < u->nsrc; i++)
			if (!(idx[i - 1] = gather_index(L, xv[i - 1], a->shape[i - 1])))
				return oom(L);
		for (i = u->nsrc - 1; i < a->ndim; i++)
			idx[i] = f->idx[od++];
		ck = key(a, idx, a->ndim, f->gate);
		r = need(L, &ck, &pushed);
		break;
	}
	case OP_REDUCE:   /* every reduce is realized: only its own stage gets here */
		return err_set(L->e, "kernel.lower: internal: a reduce inlined");
	default:
		if (!(uop_info[u->op].flags & U_ALU) || u->nsrc > 3)
			return err_set(L->e, "kernel.lower: %s is not supported", opname(u));
		for (i = 0; i < u->nsrc; i++) {
			ck = key(u->src[i], f->idx, f->n, f->gate);
			v[i] = need(L, &ck, &pushed);
		}
		if (pushed)
			break;
		if ((r = exact_alu(L, (Op)u->op, (DType)u->dtype, v, u->nsrc)))
			break;
		if (u->op == OP_WHERE && v[0]->op == OP_CONST) {   /* a mask that always (or never) holds */
			r = kernel_cast(k, (DType)u->dtype, v[0]->arg[0] ? v[1] : v[2]);
			break;
		}
		if (u->op == OP_CAST)
			r = kernel_cast(k, (DType)u->dtype, v[0]);
		else if (uop_info[u->op].flags & U_CMP)
			r = kernel_alu(k, (Op)u->op, (DType)u->src[0]->dtype, v, u->nsrc);
		else
			r = kernel_alu(k, (Op)u->op, (DType)u->dtype, v, u->nsrc);
		if (!r)
			return oom(L);
		break;
	}
	if (pushed < 0)
		return oom(L);
	if (pushed)
		return 0;
	if (!r)
		return oom(L);
	*out = r;
	return 1;
}

/* The value of u at idx under gate: the explicit-stack walk over keys. */
static UOp *
value(Lower *L, const UOp *u, UOp *const *idx, int n, UOp *gate)
{
	Key root = key(u, idx, n, gate);
	UOp *v;

	L->sp = 0;
	if ((v = memo_get(&L->memo, &root)))
		return v;
	if (!need(L, &root, &(int){ 0 }) && L->sp == 0)
		return oom(L), NULL;
	while (L->sp) {
		Key cur = L->stack[L->sp - 1];
		size_t at = L->sp;
		int rc;

		if (memo_get(&L->memo, &cur)) {
			L->sp--;
			continue;
		}
		if ((rc = step(L, &cur, &v)) < 0)
			return NULL;
		if (rc == 0)
			continue;
		if (memo_put(&L->memo, &cur, v) < 0)
			return oom(L), NULL;
		/* nothing was pushed: cur is still on top */
		(void)at;
		L->sp--;
	}
	return memo_get(&L->memo, &root);
}

/* ---- pass 4: stages ---- */

/* loop variables: i, j, k, ... (no o, no x: they read as 0 and as buffers' coordinates) */
static const char letters[] = "ijklmnpqrstuvwyz";

static UOp *
nest(Kernel *k, UOp *body, UOp *const *vars, int n, AxisType t)
{
	int i;

	for (i = n - 1; i >= 0 && body; i--)
		body = kernel_loop(k, kernel_range(k, vars[i], t, HW_NONE), &body, 1);
	return body;
}

static int
stage(Lower *L, Node *x)
{
	Kernel *k = L->k;
	const UOp *u = x->u;
	UOp *sv[T_MAXDIM], *rv[T_MAXDIM], *full[T_MAXDIM], *ix, *val, *body;
	int i, ns = 0, nr = 0;
	char nm[2] = { 0, 0 };

	memo_clear(&L->memo);
	L->self = u;
	for (i = 0; i < u->ndim; i++) {
		int kept = x->keep >> i & 1;

		nm[0] = letters[kept ? ns : 0];
		if (kept && !(sv[ns++] = full[i] = kernel_var(k, nm, u->shape[i])))
			return oom(L);
	}
	ix = kernel_index(k, x->buf, sv, ns);
	if (u->op != OP_REDUCE) {
		val = value(L, u, sv, ns, NULL);
		if (!val)
			return -1;
		body = nest(k, kernel_store(k, ix, val, NULL), sv, ns, AX_LOOP);
	} else {
		const UOp *a = u->src[0];
		Op op = (Op)u->arg[0];
		UOp *seq[2], *acc[2];

		for (i = 0; i < a->ndim; i++)
			if (!(x->keep >> i & 1)) {
				nm[0] = letters[ns + nr];
				if (!(rv[nr++] = full[i] = kernel_var(k, nm, a->shape[i])))
					return oom(L);
			}
		if (!(val = value(L, a, full, a->ndim, NULL)))
			return -1;
		acc[0] = kernel_load(k, ix, NULL);
		acc[1] = val;
		seq[0] = kernel_store(k, ix, kernel_identity(k, op, (DType)u->dtype), NULL);
		seq[1] = nest(k, kernel_store(k, ix, kernel_alu(k, op, (DType)u->dtype, acc, 2), NULL),
		              rv, nr, AX_REDUCE);
		if (!seq[0] || !seq[1])
			return oom(L);
		/* the init, then the reduce loops: inside the spatial loops, or
		** (a rank-0 result) in an always-true if, the IR's sequence */
		body = ns ? nest(k, kernel_loop(k, kernel_range(k, sv[ns - 1], AX_LOOP, HW_NONE), seq, 2),
		                 sv, ns - 1, AX_LOOP)
		          : kernel_if(k, uop_const(k->c, DT_BOOL, 1), seq, 2);
	}
	if (!body)
		return oom(L);
	return kernel_add_stage(k, k->buf[x->buf].name, body, original(L, u), L->e) < 0 ? -1 : 0;
}

static void
lower_free(Lower *L)
{
	int i;

	for (i = 0; i < L->nnodes; i++)
		free(L->nodes[i]);
	free(L->nodes);
	pmap_free(&L->orig);
	pmap_free(&L->info);
	memo_clear(&L->memo);
	free(L->stack);
	uctx_free(L->g);
}

Kernel *
kernel_lower(const UOp *root, const KLowerOpts *o, Err *e)
{
	Lower L;
	const UOp *r;
	int i;

	memset(&L, 0, sizeof L);
	L.e = e;
	if (e)
		e->msg[0] = 0;
	if (!root)
		return err_set(e, "kernel.lower: no graph"), NULL;
	if (root->dtype == DT_VOID || root->op == OP_SINK || root->op == OP_STORE || root->op == OP_GROUP)
		return err_set(e, "kernel.lower: a %s has no value; lower the tensor it computes", opname(root)), NULL;
	if (!(uop_info[root->op].flags & U_TENSOR) && root->op != OP_CONST && root->ndim == 0 && !root->device
	&& !(uop_info[root->op].flags & U_ALU))
		return err_set(e, "kernel.lower: a %s is not a tensor", opname(root)), NULL;
	if (!(L.k = kernel_new()) || !(L.g = uctx_new())) {
		kernel_free(L.k);
		return err_set(e, "kernel.lower: out of memory"), NULL;
	}
	if (!(r = flatten(&L, root, NULL, 0, 0)))
		goto fail;
	if (r->op == OP_TUPLE) {
		err_set(e, "kernel.lower: a %s is a tuple (take an element with gettuple)", opname(root));
		goto fail;
	}
	if (classify(&L, r) < 0 || buffers(&L, r, o) < 0)
		goto fail;
	for (i = 0; i < L.nnodes; i++)
		if (L.nodes[i]->realized && stage(&L, L.nodes[i]) < 0)
			goto fail;
	lower_free(&L);
	return L.k;
fail:
	if (e && !e->msg[0])
		err_set(e, "kernel.lower: out of memory");
	kernel_free(L.k);
	lower_free(&L);
	return NULL;
}
