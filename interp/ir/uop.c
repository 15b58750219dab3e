/* uop.c - the UOp context: arena, hash-consing, folding constructors, structural order. */
#include <stdlib.h>
#include <string.h>

#include "uop.h"

/*
** The arena: a list of chunks, bump-allocated, freed together. The hash table
** of nodes grows by doubling; chains run through UOp.chain.
*/
typedef struct Chunk {
	struct Chunk *next;
	size_t size, used;
	max_align_t data[];
} Chunk;

struct UCtx {
	Chunk *chunks;
	UOp **tab;
	size_t ntab, count, bytes;
};

enum { CHUNK = 64 * 1024 };

static void *
alloc(UCtx *c, size_t n)
{
	Chunk *k = c->chunks;
	void *p;

	n = (n + sizeof(max_align_t) - 1) / sizeof(max_align_t) * sizeof(max_align_t);
	if (!k || k->size - k->used < n) {
		size_t sz = n > CHUNK ? n : CHUNK;
		k = malloc(sizeof *k + sz);
		if (!k)
			return NULL;
		k->size = sz;
		k->used = 0;
		k->next = c->chunks;
		c->chunks = k;
		c->bytes += sizeof *k + sz;
	}
	p = (char *)k->data + k->used;
	k->used += n;
	return p;
}

UCtx *
uctx_new(void)
{
	UCtx *c = calloc(1, sizeof *c);

	if (!c)
		return NULL;
	c->ntab = 256;
	c->tab = calloc(c->ntab, sizeof *c->tab);
	if (!c->tab) {
		free(c);
		return NULL;
	}
	return c;
}

void
uctx_free(UCtx *c)
{
	Chunk *k, *n;

	if (!c)
		return;
	for (k = c->chunks; k; k = n) {
		n = k->next;
		free(k);
	}
	free(c->tab);
	free(c);
}

size_t
uctx_nodes(const UCtx *c)
{
	return c->count;
}

size_t
uctx_bytes(const UCtx *c)
{
	return c->bytes + c->ntab * sizeof *c->tab;
}

void *
uctx_alloc(UCtx *c, size_t n)
{
	return alloc(c, n ? n : 1);
}

static uint32_t
mix(uint32_t h, uint64_t v)
{
	h ^= (uint32_t)v;
	h *= 16777619u;
	h ^= (uint32_t)(v >> 32);
	h *= 16777619u;
	return h;
}

static uint32_t
hash_bytes(uint32_t h, const void *p, size_t n)
{
	const unsigned char *s = p;

	while (n--)
		h = (h ^ *s++) * 16777619u;
	return h;
}

static int
grow(UCtx *c)
{
	size_t n = c->ntab * 2, i;
	UOp **t = calloc(n, sizeof *t), *u, *next;

	if (!t)
		return -1;
	for (i = 0; i < c->ntab; i++)
		for (u = c->tab[i]; u; u = next) {
			next = u->chain;
			u->chain = t[u->hash & (n - 1)];
			t[u->hash & (n - 1)] = u;
		}
	free(c->tab);
	c->tab = t;
	c->ntab = n;
	return 0;
}

UOp *
uop_new(UCtx *c, Op op, DType t, UOp *const *src, int nsrc,
        int64_t a0, int64_t a1, const char *name, const void *data, uint32_t ndata)
{
	uint32_t h = 2166136261u;
	UOp *u;
	UDerived d;
	int i;
	size_t nl;

	uint32_t depth = 1;

	if (!c || nsrc < 0 || nsrc > 0xffff)
		return NULL;
	for (i = 0; i < nsrc; i++) {
		if (!src[i])
			return NULL;
		if (src[i]->depth + 1 > depth)
			depth = src[i]->depth + 1;
	}
	if (depth > UOP_MAXDEPTH)
		return NULL;
	h = mix(h, op);
	h = mix(h, t);
	h = mix(h, (uint64_t)a0);
	h = mix(h, (uint64_t)a1);
	for (i = 0; i < nsrc; i++)
		h = mix(h, src[i]->hash * 31u + src[i]->id);
	if (name)
		h = hash_bytes(h, name, strlen(name));
	if (data)
		h = hash_bytes(h, data, ndata);
	for (u = c->tab[h & (c->ntab - 1)]; u; u = u->chain) {
		if (u->hash != h || u->op != op || u->dtype != t || u->nsrc != nsrc
		|| u->arg[0] != a0 || u->arg[1] != a1 || u->ndata != ndata)
			continue;
		if ((u->name == NULL) != (name == NULL) || (name && strcmp(u->name, name) != 0))
			continue;
		if ((u->data == NULL) != (data == NULL) || (data && memcmp(u->data, data, ndata) != 0))
			continue;
		for (i = 0; i < nsrc && u->src[i] == src[i]; i++)
			;
		if (i == nsrc)
			return u;
	}
	if (c->count >= UINT32_MAX - 1)
		return NULL;
	if (c->count >= c->ntab && grow(c) < 0)
		return NULL;
	u = alloc(c, sizeof *u + (size_t)nsrc * sizeof u->src[0]);
	if (!u)
		return NULL;
	memset(u, 0, sizeof *u);
	u->op = (uint8_t)op;
	u->dtype = (uint8_t)t;
	u->nsrc = (uint16_t)nsrc;
	u->depth = depth;
	u->arg[0] = a0;
	u->arg[1] = a1;
	for (i = 0; i < nsrc; i++)
		u->src[i] = src[i];
	if (name) {
		nl = strlen(name);
		if (!(u->name = alloc(c, nl + 1)))
			return NULL;
		memcpy((char *)u->name, name, nl + 1);
	}
	if (data) {
		if (!(u->data = alloc(c, ndata ? ndata : 1)))
			return NULL;
		memcpy((void *)u->data, data, ndata);
		u->ndata = ndata;
	}
	/* shape, device and shard axis; an ill-formed tensor node is never entered */
	if (uop_derive(u, &d, NULL) < 0)
		return NULL;
	if (d.ndim > 0) {
		int64_t *shape = alloc(c, (size_t)d.ndim * sizeof *shape);

		if (!shape)
			return NULL;
		memcpy(shape, d.shape, (size_t)d.ndim * sizeof *shape);
		u->shape = shape;
	}
	u->ndim = (int16_t)d.ndim;
	u->axis = (int16_t)d.axis;
	u->addrspace = (uint8_t)d.addrspace;
	u->device = d.device;
	uop_minmax(op, t, src, nsrc, u->arg, &u->vmin, &u->vmax);
	u->hash = h;
	u->id = (uint32_t)c->count++;
	u->chain = c->tab[h & (c->ntab - 1)];
	c->tab[h & (c->ntab - 1)] = u;
	return u;
}

UOp *
uop_const(UCtx *c, DType t, int64_t v)
{
	int64_t lo, hi;

	dtype_range(t, &lo, &hi);
	if (v < lo || v > hi)
		return NULL;
	return uop_new(c, OP_CONST, t, NULL, 0, v, 0, NULL, NULL, 0);
}

UOp *
uop_constf(UCtx *c, DType t, double v)
{
	int64_t bits;

	if (dtype_is_float(t)) {
		/* the value as the dtype holds it */
		unsigned char tmp[8];

		dtype_store_f(t, tmp, v);
		v = dtype_load_f(t, tmp);
		memcpy(&bits, &v, 8);
	} else
		bits = dtype_ftoi(t, v);
	return uop_new(c, OP_CONST, t, NULL, 0, bits, 0, NULL, NULL, 0);
}

double
uop_const_value(const UOp *u)
{
	double d;

	if (dtype_is_float(u->dtype)) {
		memcpy(&d, &u->arg[0], sizeof d);
		return d;
	}
	if (u->dtype == DT_UINT64)
		return (double)(uint64_t)u->arg[0];
	return (double)u->arg[0];
}

UOp *
uop_int(UCtx *c, int64_t v)
{
	return uop_const(c, DT_INDEX, v);
}

int
uop_valid_name(const char *s)
{
	int n;

	if (!s || !((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || *s == '_'))
		return 0;
	for (n = 0; s[n]; n++)
		if (!((s[n] >= 'a' && s[n] <= 'z') || (s[n] >= 'A' && s[n] <= 'Z') || s[n] == '_'
		|| (s[n] >= '0' && s[n] <= '9')) || n >= 63)
			return 0;
	return 1;
}

UOp *
uop_var(UCtx *c, const char *name, int64_t lo, int64_t hi)
{
	if (lo > hi || !uop_valid_name(name))
		return NULL;
	return uop_new(c, OP_VAR, DT_INDEX, NULL, 0, lo, hi, name, NULL, 0);
}

int
uop_is_const(const UOp *u, int64_t v)
{
	return u && u->op == OP_CONST && u->arg[0] == v;
}

static int
isconst(const UOp *u)
{
	return u->op == OP_CONST;
}

/* The dtype of a binary result: comparisons give bool; otherwise the wider
** operand (bool < int32 < int64 < index), so that constants adapt. */
static DType
join(const UOp *a, const UOp *b)
{
	static const int rank[DT_COUNT] = { 0, 1, 2, 3, 4 };

	if (isconst(a) && !isconst(b) && b->dtype != DT_BOOL)
		return b->dtype;
	if (isconst(b) && !isconst(a) && a->dtype != DT_BOOL)
		return a->dtype;
	return rank[a->dtype] >= rank[b->dtype] ? (DType)a->dtype : (DType)b->dtype;
}

static UOp *
raw2(UCtx *c, Op op, DType t, UOp *a, UOp *b)
{
	UOp *s[2] = { a, b };

	return uop_new(c, op, t, s, 2, 0, 0, NULL, NULL, 0);
}

/* A constant of the same dtype as u (bool results of comparisons are bool). */
static UOp *
konst(UCtx *c, DType t, int64_t v)
{
	return uop_const(c, t, v);
}

UOp *
uop_alu(UCtx *c, Op op, UOp *a, UOp *b)
{
	const OpInfo *oi;
	DType t;
	int64_t v[2], r;

	if (!a || !b || op >= OP_COUNT || uop_info[op].arity != 2)
		return NULL;
	oi = &uop_info[op];
	t = (oi->flags & U_CMP) ? DT_BOOL : join(a, b);
	if (isconst(a) && isconst(b)) {
		v[0] = a->arg[0];
		v[1] = b->arg[0];
		if (uop_fold(op, t, v, 2, &r) == 0)
			return konst(c, t, r);
		return raw2(c, op, t, a, b);
	}
	/* identities: x op e -> x, and e op x -> x for commutative ops */
	if (oi->identity != U_NOID) {
		if (isconst(b) && b->arg[0] == oi->identity && a->dtype == t)
			return a;
		if ((oi->flags & U_COMM) && isconst(a) && a->arg[0] == oi->identity && b->dtype == t)
			return b;
	}
	if ((oi->flags & U_COMM) && isconst(a) && !isconst(b)) {
		UOp *x = a;   /* constants go right */
		a = b;
		b = x;
	}
	switch (op) {
	case OP_MUL:
		if (isconst(b) && b->arg[0] == 0)
			return konst(c, t, 0);
		break;
	case OP_AND:
		if (isconst(b) && b->arg[0] == 0)
			return konst(c, t, 0);
		if (a == b)
			return a;
		break;
	case OP_OR:
	case OP_MIN:
	case OP_MAX:
		if (a == b)
			return a;
		break;
	case OP_SUB:
	case OP_XOR:
		if (a == b)
			return konst(c, t, 0);
		break;
	case OP_MOD:
		if (isconst(b) && (b->arg[0] == 1 || b->arg[0] == -1))
			return konst(c, t, 0);
		break;
	case OP_CMPLT:
	case OP_CMPNE:
		if (a == b)
			return konst(c, DT_BOOL, 0);
		break;
	case OP_CMPEQ:
		if (a == b)
			return konst(c, DT_BOOL, 1);
		break;
	default:
		break;
	}
	return raw2(c, op, t, a, b);
}

UOp *
uop_unary(UCtx *c, Op op, UOp *a)
{
	int64_t r;

	if (!a)
		return NULL;
	if (op == OP_NEG) {
		if (isconst(a) && uop_fold(OP_NEG, a->dtype, a->arg, 1, &r) == 0)
			return konst(c, a->dtype, r);
		if (a->op == OP_NEG)
			return a->src[0];
		return uop_new(c, OP_NEG, a->dtype, &a, 1, 0, 0, NULL, NULL, 0);
	}
	return NULL;
}

UOp *uop_add(UCtx *c, UOp *a, UOp *b) { return uop_alu(c, OP_ADD, a, b); }
UOp *uop_sub(UCtx *c, UOp *a, UOp *b) { return uop_alu(c, OP_SUB, a, b); }
UOp *uop_mul(UCtx *c, UOp *a, UOp *b) { return uop_alu(c, OP_MUL, a, b); }
UOp *uop_idiv(UCtx *c, UOp *a, UOp *b) { return uop_alu(c, OP_IDIV, a, b); }
UOp *uop_mod(UCtx *c, UOp *a, UOp *b) { return uop_alu(c, OP_MOD, a, b); }
UOp *uop_neg(UCtx *c, UOp *a) { return uop_unary(c, OP_NEG, a); }

UOp *
uop_where(UCtx *c, UOp *cond, UOp *a, UOp *b)
{
	UOp *s[3] = { cond, a, b };

	if (!cond || !a || !b)
		return NULL;
	if (cond->vmin == cond->vmax && cond->vmin != 0 && a->dtype == b->dtype)
		return a;
	if (cond->vmin == 0 && cond->vmax == 0 && a->dtype == b->dtype)
		return b;
	if (a == b)
		return a;
	return uop_new(c, OP_WHERE, join(a, b), s, 3, 0, 0, NULL, NULL, 0);
}

UOp *
uop_cast(UCtx *c, DType t, UOp *a)
{
	int64_t r;

	if (!a || t == DT_VOID || t >= DT_COUNT)
		return NULL;
	if (a->dtype == t)
		return a;
	if (isconst(a) && uop_fold(OP_CAST, t, a->arg, 1, &r) == 0)
		return konst(c, t, r);
	return uop_new(c, OP_CAST, t, &a, 1, 0, 0, NULL, NULL, 0);
}

UOp *
uop_rebuild(UCtx *c, const UOp *u, UOp *const *s)
{
	int i;

	for (i = 0; i < u->nsrc && s[i] == u->src[i]; i++)
		;
	if (i == u->nsrc)
		return (UOp *)u;
	switch (uop_info[u->op].arity) {
	case 1:
		if (u->op == OP_CAST)
			return uop_cast(c, (DType)u->dtype, s[0]);
		return uop_unary(c, (Op)u->op, s[0]);
	case 2:
		return uop_alu(c, (Op)u->op, s[0], s[1]);
	case 3:
		if (u->op == OP_WHERE)
			return uop_where(c, s[0], s[1], s[2]);
		break;
	}
	return uop_new(c, (Op)u->op, (DType)u->dtype, s, u->nsrc, u->arg[0], u->arg[1],
	               u->name, u->data, u->ndata);
}

/* Depth-first copy with a small memo keyed by source pointer. */
typedef struct Memo {
	const UOp **k;
	UOp **v;
	size_t n, cap;
} Memo;

static UOp **
memo_slot(Memo *m, const UOp *k, int *found)
{
	size_t i, j;

	if (m->n * 2 >= m->cap) {
		size_t nc = m->cap ? m->cap * 2 : 64;
		const UOp **nk = calloc(nc, sizeof *nk);
		UOp **nv = calloc(nc, sizeof *nv);
		if (!nk || !nv) {
			free(nk);
			free(nv);
			return NULL;
		}
		for (i = 0; i < m->cap; i++)
			if (m->k[i]) {
				for (j = ((uintptr_t)m->k[i] >> 4) & (nc - 1); nk[j]; j = (j + 1) & (nc - 1))
					;
				nk[j] = m->k[i];
				nv[j] = m->v[i];
			}
		free(m->k);
		free(m->v);
		m->k = nk;
		m->v = nv;
		m->cap = nc;
	}
	for (j = ((uintptr_t)k >> 4) & (m->cap - 1); m->k[j]; j = (j + 1) & (m->cap - 1))
		if (m->k[j] == k) {
			*found = 1;
			return &m->v[j];
		}
	*found = 0;
	m->k[j] = k;
	m->n++;
	return &m->v[j];
}

static UOp *
import(UCtx *c, const UOp *u, Memo *m, int depth)
{
	UOp *s[16], **ss = s, **slot, *r;
	int i, found;

	if (depth > UOP_MAXDEPTH + 1)
		return NULL;
	slot = memo_slot(m, u, &found);
	if (!slot)
		return NULL;
	if (found)
		return *slot;
	if (u->nsrc > 16 && !(ss = malloc(u->nsrc * sizeof *ss)))
		return NULL;
	for (i = 0; i < u->nsrc; i++)
		if (!(ss[i] = import(c, u->src[i], m, depth + 1)))
			break;
	r = i == u->nsrc ? uop_new(c, (Op)u->op, (DType)u->dtype, ss, u->nsrc, u->arg[0],
	                           u->arg[1], u->name, u->data, u->ndata) : NULL;
	if (ss != s)
		free(ss);
	/* the memo may have moved while the sources were imported */
	slot = memo_slot(m, u, &found);
	if (slot)
		*slot = r;
	return r;
}

UOp *
uop_import(UCtx *c, const UOp *u)
{
	Memo m = { 0 };
	UOp *r;

	if (!u)
		return NULL;
	r = import(c, u, &m, 0);
	free(m.k);
	free(m.v);
	return r;
}

int
uop_cmp(const UOp *a, const UOp *b)
{
	int i, r;

	if (a == b)
		return 0;
	/* constants last; then variables before compound terms */
	if ((a->op == OP_CONST) != (b->op == OP_CONST))
		return a->op == OP_CONST ? 1 : -1;
	if (a->op != b->op) {
		if (a->op == OP_VAR || b->op == OP_VAR)
			return a->op == OP_VAR ? -1 : 1;
		return a->op < b->op ? -1 : 1;
	}
	if (a->op == OP_VAR && (r = strcmp(a->name, b->name)) != 0)
		return r;
	if (a->dtype != b->dtype)
		return a->dtype < b->dtype ? -1 : 1;
	if (a->arg[0] != b->arg[0])
		return a->arg[0] < b->arg[0] ? -1 : 1;
	if (a->arg[1] != b->arg[1])
		return a->arg[1] < b->arg[1] ? -1 : 1;
	if (a->nsrc != b->nsrc)
		return a->nsrc < b->nsrc ? -1 : 1;
	for (i = 0; i < a->nsrc; i++)
		if ((r = uop_cmp(a->src[i], b->src[i])) != 0)
			return r;
	if (a->ndata != b->ndata)
		return a->ndata < b->ndata ? -1 : 1;
	if (a->ndata && (r = memcmp(a->data, b->data, a->ndata)) != 0)
		return r;
	return 0;
}

static int64_t
ops_tree(const UOp *u, Memo *m)
{
	UOp **slot;
	int found, i;
	int64_t n = 0;

	if (u->op == OP_CONST || u->op == OP_VAR)
		return 0;
	slot = memo_slot(m, u, &found);
	if (slot && found)
		return (int64_t)(intptr_t)*slot;
	n = 1;
	for (i = 0; i < u->nsrc; i++) {
		n += ops_tree(u->src[i], m);
		if (n > ((int64_t)1 << 40))
			n = (int64_t)1 << 40;   /* saturate: huge shared DAGs */
	}
	slot = memo_slot(m, u, &found);
	if (slot)
		*slot = (UOp *)(intptr_t)n;
	return n;
}

int64_t
uop_ops(const UOp *u)
{
	Memo m = { 0 };
	int64_t n;

	if (!u)
		return 0;
	n = ops_tree(u, &m);
	free(m.k);
	free(m.v);
	return n;
}

static void
dag_walk(const UOp *u, Memo *m, int64_t *n, const UOp **vars, int *nv, int max)
{
	int found, i;
	UOp **slot = memo_slot(m, u, &found);

	if (!slot || found)
		return;
	if (u->op == OP_VAR) {
		if (vars && *nv < max)
			vars[*nv] = u;
		(*nv)++;
	} else if (u->op != OP_CONST)
		(*n)++;
	for (i = 0; i < u->nsrc; i++)
		dag_walk(u->src[i], m, n, vars, nv, max);
}

int64_t
uop_ops_dag(const UOp *u)
{
	Memo m = { 0 };
	int64_t n = 0;
	int nv = 0;

	if (u)
		dag_walk(u, &m, &n, NULL, &nv, 0);
	free(m.k);
	free(m.v);
	return n;
}

static int
byname(const void *a, const void *b)
{
	const UOp *x = *(const UOp *const *)a, *y = *(const UOp *const *)b;
	int r = strcmp(x->name, y->name);

	if (r)
		return r;
	return x->arg[0] != y->arg[0] ? (x->arg[0] < y->arg[0] ? -1 : 1)
	     : x->arg[1] != y->arg[1] ? (x->arg[1] < y->arg[1] ? -1 : 1) : 0;
}

int
uop_vars(const UOp *u, const UOp **out, int max)
{
	Memo m = { 0 };
	int64_t n = 0;
	int nv = 0;

	if (u)
		dag_walk(u, &m, &n, out, &nv, max);
	free(m.k);
	free(m.v);
	if (out)
		qsort(out, nv < max ? nv : max, sizeof *out, byname);
	return nv;
}
