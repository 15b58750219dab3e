/* kernel.c - kernels: buffers, stages and the loop-IR constructors on the UOp arena. */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "../../layout/layout.h"
#include "../../util/pmap.h"
#include "kernel.h"

static const char *const axnames[AX_COUNT] = {
	"GLOBAL", "LOCAL", "WARP", "THREAD", "LOOP", "REDUCE", "GROUP_REDUCE", "UPCAST", "UNROLL"
};
static const char axletters[AX_COUNT] = { 'g', 'l', 'w', 't', 'L', 'R', 'G', 'u', 'r' };

const char *
axistype_name(int t)
{
	return t >= 0 && t < AX_COUNT ? axnames[t] : "?";
}

char
axistype_letter(int t)
{
	return t >= 0 && t < AX_COUNT ? axletters[t] : '?';
}

int
axistype_parse(const char *s, AxisType *t)
{
	int i;

	for (i = 0; i < AX_COUNT; i++)
		if (strcasecmp(s, axnames[i]) == 0 || (s[0] == axletters[i] && !s[1])) {
			*t = (AxisType)i;
			return 0;
		}
	return -1;
}

static const char *const hwnames[HW_COUNT] = {
	"", "block.x", "block.y", "block.z", "thread.x", "thread.y", "thread.z", "warp", "lane"
};
static const char *const hwcuda[HW_COUNT] = {
	"", "blockIdx.x", "blockIdx.y", "blockIdx.z", "threadIdx.x", "threadIdx.y", "threadIdx.z",
	"threadIdx.x / 32", "threadIdx.x % 32"
};

const char *
hwaxis_name(int h)
{
	return h >= 0 && h < HW_COUNT ? hwnames[h] : "?";
}

const char *
hwaxis_cuda(int h)
{
	return h >= 0 && h < HW_COUNT ? hwcuda[h] : "?";
}

int
hwaxis_parse(const char *s, HwAxis *h)
{
	int i;

	for (i = 1; i < HW_COUNT; i++)
		if (strcmp(s, hwnames[i]) == 0 || (i < HW_WARP && strcmp(s, hwcuda[i]) == 0)) {
			*h = (HwAxis)i;
			return 0;
		}
	return -1;
}

int
hwaxis_is_block(int h)
{
	return h >= HW_BLOCK_X && h <= HW_BLOCK_Z;
}

int
hwaxis_is_thread(int h)
{
	return h >= HW_THREAD_X && h <= HW_LANE;
}

const char *
kscope_name(int as)
{
	switch (as) {
	case AS_GLOBAL: return "global";
	case AS_LOCAL: return "shared";
	case AS_REG: return "local";
	default: return "?";
	}
}

int
kscope_parse(const char *s, UAddrSpace *as)
{
	if (strcmp(s, "global") == 0)
		*as = AS_GLOBAL;
	else if (strcmp(s, "shared") == 0)
		*as = AS_LOCAL;
	else if (strcmp(s, "local") == 0 || strcmp(s, "register") == 0 || strcmp(s, "reg") == 0)
		*as = AS_REG;
	else
		return -1;
	return 0;
}

const char *
krole_name(int r)
{
	static const char *const n[] = { "input", "output", "temp" };

	return r >= 0 && r <= KB_TEMP ? n[r] : "?";
}

Kernel *
kernel_new(void)
{
	Kernel *k = calloc(1, sizeof *k);

	if (!k)
		return NULL;
	if (!(k->c = uctx_new())) {
		free(k);
		return NULL;
	}
	return k;
}

void
kernel_free(Kernel *k)
{
	if (!k)
		return;
	uctx_free(k->c);
	free(k->buf);
	free(k->stage);
	free(k);
}

Kernel *
kernel_clone(const Kernel *k, Err *e)
{
	Kernel *n = kernel_new();
	int i, j;

	if (!n)
		return err_set(e, "kernel: out of memory"), NULL;
	n->buf = k->nbuf ? malloc(k->nbuf * sizeof *n->buf) : NULL;
	n->stage = k->nstage ? malloc(k->nstage * sizeof *n->stage) : NULL;
	if ((k->nbuf && !n->buf) || (k->nstage && !n->stage))
		goto oom;
	n->nbuf = n->capbuf = k->nbuf;
	n->nstage = n->capstage = k->nstage;
	for (i = 0; i < k->nbuf; i++) {
		KBuf *b = &n->buf[i];

		*b = k->buf[i];
		if (!(b->def = uop_import(n->c, k->buf[i].def))
		|| !(b->layout = uop_import(n->c, k->buf[i].layout)))
			goto oom;
		for (j = 0; j < b->ndim; j++)
			if (!(b->lvar[j] = uop_import(n->c, k->buf[i].lvar[j])))
				goto oom;
	}
	for (i = 0; i < k->nstage; i++) {
		n->stage[i] = k->stage[i];
		if (!(n->stage[i].body = uop_import(n->c, k->stage[i].body)))
			goto oom;
	}
	return n;
oom:
	kernel_free(n);
	return err_set(e, "kernel: out of memory"), NULL;
}

/* Buffers and stages have a namespace each: a stage usually shares its name
** with the buffer it writes (xmax). */
static int
buffer_taken(const Kernel *k, const char *s)
{
	int i;

	for (i = 0; i < k->nbuf; i++)
		if (strcmp(k->buf[i].name, s) == 0)
			return 1;
	return 0;
}

static int
stage_taken(const Kernel *k, const char *s)
{
	int i;

	for (i = 0; i < k->nstage; i++)
		if (strcmp(k->stage[i].name, s) == 0)
			return 1;
	return 0;
}

int
kernel_find_buffer(const Kernel *k, const char *name)
{
	int i;

	for (i = 0; i < k->nbuf; i++)
		if (strcmp(k->buf[i].name, name) == 0)
			return i;
	return -1;
}

/* base made an identifier: other characters become '_', a leading digit gets one */
static void
ident(const char *base, char *out, size_t n)
{
	size_t i = 0, j = 0;

	if (!base || !*base)
		base = "t";
	if (isdigit((unsigned char)base[0]) && n > 1)
		out[j++] = '_';
	for (; base[i] && j + 1 < n && j < 40; i++)
		out[j++] = isalnum((unsigned char)base[i]) ? base[i] : '_';
	out[j] = 0;
}

void
kernel_fresh_name(const Kernel *k, const char *base, char *out, size_t n)
{
	char b[48];
	int i;

	ident(base, b, sizeof b);
	snprintf(out, n, "%s", b);
	for (i = 1; buffer_taken(k, out) || stage_taken(k, out); i++)
		snprintf(out, n, "%s_%d", b, i);
}

/* the row-major offset of (lvar[0], ..., lvar[n-1]) */
static UOp *
row_major(UCtx *c, UOp *const *v, const int64_t *shape, int n)
{
	UOp *o = uop_int(c, 0);
	int i;

	for (i = 0; i < n && o; i++)
		o = uop_add(c, uop_mul(c, o, uop_int(c, shape[i])), v[i]);
	return o;
}

int
kernel_add_buffer(Kernel *k, const char *name, DType t, UAddrSpace scope, KRole role,
                  const int64_t *shape, int n, Err *e)
{
	KBuf *b;
	int64_t size = 1;
	int i;

	if (!uop_valid_name(name))
		return err_set(e, "buffer: \"%s\" is not a name (letters, digits, _; at most 63)", name ? name : "");
	if (buffer_taken(k, name))
		return err_set(e, "buffer: the name %s is taken", name);
	if (n < 0 || n > T_MAXDIM)
		return err_set(e, "buffer %s: rank %d is not in [0, %d]", name, n, T_MAXDIM);
	if (t == DT_VOID || t == DT_INDEX)
		return err_set(e, "buffer %s: %s is not an element type", name, dtype_name(t));
	if (scope != AS_GLOBAL && scope != AS_LOCAL && scope != AS_REG)
		return err_set(e, "buffer %s: bad scope", name);
	for (i = 0; i < n; i++) {
		if (shape[i] < 1)
			return err_set(e, "buffer %s: size %lld of dimension %d is not positive", name,
			               (long long)shape[i], i);
		if (uck_mul(size, shape[i], &size) < 0 || size > ((int64_t)1 << 40))
			return err_set(e, "buffer %s: more than 2^40 elements", name);
	}
	if (k->nbuf == k->capbuf) {
		int cap = k->capbuf ? 2 * k->capbuf : 8;
		KBuf *nb = realloc(k->buf, cap * sizeof *nb);

		if (!nb)
			return err_set(e, "buffer: out of memory");
		k->buf = nb;
		k->capbuf = cap;
	}
	b = &k->buf[k->nbuf];
	memset(b, 0, sizeof *b);
	snprintf(b->name, sizeof b->name, "%s", name);
	b->dtype = t;
	b->scope = scope;
	b->role = role;
	b->ndim = n;
	b->size = size;
	for (i = 0; i < n; i++) {
		char vn[16];

		b->shape[i] = shape[i];
		snprintf(vn, sizeof vn, "x%d", i);
		if (!(b->lvar[i] = uop_var(k->c, vn, 0, shape[i] - 1)))
			return err_set(e, "buffer: out of memory");
	}
	b->layout = row_major(k->c, b->lvar, shape, n);
	b->def = uop_new(k->c, OP_DEFINE, t, NULL, 0, k->nbuf, scope, b->name, NULL, 0);
	if (!b->layout || !b->def)
		return err_set(e, "buffer: out of memory");
	snprintf(b->layout_desc, sizeof b->layout_desc, "row-major");
	return k->nbuf++;
}

int
kernel_reshape_buffer(Kernel *k, int b, const int64_t *shape, Err *e)
{
	KBuf *B = &k->buf[b];
	int64_t size = 1;
	int i;

	if (strcmp(B->layout_desc, "row-major") != 0)
		return err_set(e, "buffer %s has the layout %s; a new shape would need a new one", B->name,
		               B->layout_desc);
	for (i = 0; i < B->ndim; i++)
		if (shape[i] < 1 || uck_mul(size, shape[i], &size) < 0)
			return err_set(e, "buffer %s: size %lld of dimension %d", B->name, (long long)shape[i], i);
	for (i = 0; i < B->ndim; i++) {
		char vn[16];

		snprintf(vn, sizeof vn, "x%d", i);
		B->shape[i] = shape[i];
		if (!(B->lvar[i] = uop_var(k->c, vn, 0, shape[i] - 1)))
			return err_set(e, "buffer: out of memory");
	}
	B->size = size;
	if (!(B->layout = row_major(k->c, B->lvar, shape, B->ndim)))
		return err_set(e, "buffer: out of memory");
	return 0;
}

/* "(i, j, ...)": element p of b, row-major */
static void
element_text(Buf *cb, const KBuf *b, int64_t p)
{
	int64_t c[T_MAXDIM];
	int i;

	for (i = b->ndim - 1; i >= 0; i--) {
		c[i] = p % b->shape[i];
		p /= b->shape[i];
	}
	for (i = 0; i < b->ndim; i++)
		emit(cb, "%s%lld", i ? ", " : "", (long long)c[i]);
}

/*
** A layout x for buffer b, by enumeration where ranges do not prove it: every
** offset in [0, size), and for a buffer the kernel writes (anything but an
** input) no two elements at one offset, since the second store would silently
** replace the first. Inputs may repeat offsets (a broadcast). Buffers of more
** than LAYOUT_ENUM elements are checked by ranges only, and a written one's
** storage must then be at least its element count.
*/
enum { LAYOUT_ENUM = 1 << 24, LAYOUT_BITS = 1 << 29 };

/* x as c + sum coef[i] * lvar[i]: 1, or 0 when it has another form */
static int
linear(const UOp *x, const KBuf *b, int64_t f, int64_t *coef, int64_t *c, int depth)
{
	int i;

	if (depth > 64)
		return 0;
	switch (x->op) {
	case OP_CONST:
		return uck_mul(f, x->arg[0], &f) == 0 && uck_add(*c, f, c) == 0;
	case OP_VAR:
		for (i = 0; i < b->ndim && b->lvar[i] != x; i++)
			;
		return i < b->ndim && uck_add(coef[i], f, &coef[i]) == 0;
	case OP_ADD:
		return linear(x->src[0], b, f, coef, c, depth + 1) && linear(x->src[1], b, f, coef, c, depth + 1);
	case OP_MUL:
		for (i = 0; i < 2; i++)
			if (x->src[i]->op == OP_CONST) {
				int64_t g;
				return uck_mul(f, x->src[i]->arg[0], &g) == 0 &&
				       linear(x->src[1 - i], b, g, coef, c, depth + 1);
			}
		return 0;
	default:
		return 0;
	}
}

/*
** Whether a linear layout is one-to-one, by a sufficient condition: taken by
** increasing |stride|, each stride passes the span of the ones before
** (row-major, column-major and padded layouts). 0 means "not shown".
*/
static int
linear_one2one(const UOp *x, const KBuf *b)
{
	int64_t coef[T_MAXDIM] = { 0 }, c = 0, span = 0, t;
	int used[T_MAXDIM] = { 0 }, i, j, m;

	if (!linear(x, b, 1, coef, &c, 0))
		return 0;
	for (j = 0; j < b->ndim; j++) {
		for (m = -1, i = 0; i < b->ndim; i++)
			if (!used[i] && b->shape[i] > 1 && (m < 0 || llabs(coef[i]) < llabs(coef[m])))
				m = i;
		if (m < 0)
			return 1;
		used[m] = 1;
		if (llabs(coef[m]) <= span || uck_mul(llabs(coef[m]), b->shape[m] - 1, &t) < 0 ||
		    uck_add(span, t, &span) < 0)
			return 0;
	}
	return 1;
}

static int
layout_check(const KBuf *b, const UOp *x, int64_t size, Err *e)
{
	int64_t pts = 1, p, q, v, c[T_MAXDIM] = { 0 };
	int one2one = b->role != KB_INPUT, i, rc = 0;
	unsigned char *seen = NULL;
	UBind bind[T_MAXDIM];
	UProg *prog;
	Buf cb, cb2;

	for (i = 0; i < b->ndim; i++)
		if (uck_mul(pts, b->shape[i], &pts) < 0 || pts > LAYOUT_ENUM)
			pts = -1;
	if (one2one && size < pts)
		return err_set(e, "set_layout: %s: %lld elements in a storage of %lld: some share an "
		               "offset, and the kernel writes %s (only an input may repeat offsets)",
		               b->name, (long long)pts, (long long)size, b->name);
	if (x->vmin >= 0 && x->vmax < size && (!one2one || pts < 0 || size > LAYOUT_BITS ||
	                                        linear_one2one(x, b)))
		return 0;
	if (pts < 0)
		return err_set(e, "set_layout: %s: offsets range over [%lld, %lld], outside [0, %lld), and "
		               "there are too many elements to check", b->name, (long long)x->vmin,
		               (long long)x->vmax, (long long)size);
	for (i = 0; i < b->ndim; i++) {
		bind[i].name = b->lvar[i]->name;
		bind[i].value = 0;
	}
	if (!(prog = uop_prog_new(&x, 1, bind, b->ndim, e)))
		return -1;
	if (one2one && size <= LAYOUT_BITS && !(seen = calloc((size_t)(size + 7) / 8, 1))) {
		uop_prog_free(prog);
		return err_set(e, "set_layout: out of memory");
	}
	buf_init(&cb);
	buf_init(&cb2);
	for (p = 0; p < pts && rc == 0; p++) {
		for (i = 0; i < b->ndim; i++)
			bind[i].value = c[i];
		if ((rc = uop_prog_run(prog, bind, &v, e)) < 0)
			break;
		if (v < 0 || v >= size) {
			element_text(&cb, b, p);
			rc = err_set(e, "set_layout: %s: element (%s) maps to %lld, outside the storage "
			             "[0, %lld)", b->name, cb.s ? cb.s : "", (long long)v, (long long)size);
		} else if (seen && (seen[v >> 3] >> (v & 7) & 1)) {
			int64_t w = -1, d[T_MAXDIM] = { 0 };

			/* the first element at v, for the counterexample */
			for (q = 0; q < p && w != v; q++) {
				for (i = 0; i < b->ndim; i++)
					bind[i].value = d[i];
				if (uop_prog_run(prog, bind, &w, e) < 0)
					break;
				for (i = b->ndim - 1; i >= 0 && ++d[i] == b->shape[i]; i--)
					d[i] = 0;
			}
			element_text(&cb, b, q - 1);
			element_text(&cb2, b, p);
			rc = err_set(e, "set_layout: %s: elements (%s) and (%s) both map to offset %lld; the "
			             "kernel writes %s, so its layout must be one-to-one (only an input may "
			             "repeat offsets, as a broadcast)", b->name, cb.s ? cb.s : "",
			             cb2.s ? cb2.s : "", (long long)v, b->name);
		} else if (seen) {
			seen[v >> 3] |= (unsigned char)(1u << (v & 7));
		}
		for (i = b->ndim - 1; i >= 0 && ++c[i] == b->shape[i]; i--)
			c[i] = 0;
	}
	buf_free(&cb);
	buf_free(&cb2);
	free(seen);
	uop_prog_free(prog);
	return rc;
}

int
kernel_set_layout(Kernel *k, int bi, UOp *expr, UOp *const *vars, int n, int64_t size,
                  const char *desc, Err *e)
{
	KBuf *b;
	UOp *own[T_MAXDIM], *x;
	int i;

	if (bi < 0 || bi >= k->nbuf)
		return err_set(e, "set_layout: no buffer %d", bi);
	b = &k->buf[bi];
	if (n != b->ndim)
		return err_set(e, "set_layout: %s has %d dimensions, the layout takes %d coordinates",
		               b->name, b->ndim, n);
	if (size < 1 || size > ((int64_t)1 << 40))
		return err_set(e, "set_layout: %s: storage of %lld elements", b->name, (long long)size);
	for (i = 0; i < n; i++) {
		if (!vars[i] || vars[i]->op != OP_VAR)
			return err_set(e, "set_layout: %s: coordinate %d is not a variable", b->name, i);
		if (vars[i]->arg[0] != 0 || vars[i]->arg[1] != b->shape[i] - 1)
			return err_set(e, "set_layout: %s: coordinate %d ranges over [%lld, %lld], "
			               "dimension %d has size %lld", b->name, i, (long long)vars[i]->arg[0],
			               (long long)vars[i]->arg[1], i, (long long)b->shape[i]);
		own[i] = uop_import(k->c, vars[i]);
	}
	/* the layout in the buffer's own variables x0, x1, ... */
	x = uop_import(k->c, expr);
	if (!x)
		return err_set(e, "set_layout: out of memory");
	x = kernel_substitute(k->c, x, own, b->lvar, n);
	if (!x)
		return err_set(e, "set_layout: out of memory");
	if (layout_check(b, x, size, e) < 0)
		return -1;
	b->layout = x;
	b->size = size;
	snprintf(b->layout_desc, sizeof b->layout_desc, "%s", desc ? desc : "custom");
	return 0;
}

UOp *
kernel_offset(Kernel *k, int bi, UOp *const *idx)
{
	KBuf *b = &k->buf[bi];

	return kernel_substitute(k->c, b->layout, b->lvar, idx, b->ndim);
}

UOp *
kernel_var(Kernel *k, const char *hint, int64_t extent)
{
	char name[48];

	if (extent < 1)
		return NULL;
	ident(hint && *hint ? hint : "i", name, sizeof name);
	return uop_var(k->c, name, 0, extent - 1);
}

UOp *
kernel_range(Kernel *k, UOp *var, AxisType t, HwAxis hw)
{
	if (!var || var->op != OP_VAR || var->arg[0] != 0)
		return NULL;
	return uop_new(k->c, OP_RANGE, DT_INDEX, &var, 1, t, hw, NULL, NULL, 0);
}

static UOp *
block(Kernel *k, Op op, UOp *head, UOp *const *body, int n)
{
	UOp *src[1 + 4096], **s = src;
	UOp *u;
	int i;

	if (n < 0)
		return NULL;
	if (n + 1 > (int)(sizeof src / sizeof *src) && !(s = malloc((n + 1) * sizeof *s)))
		return NULL;
	s[0] = head;
	for (i = 0; i < n; i++)
		s[i + 1] = body[i];
	u = uop_new(k->c, op, DT_VOID, s, n + 1, 0, 0, NULL, NULL, 0);
	if (s != src)
		free(s);
	return u;
}

UOp *
kernel_loop(Kernel *k, UOp *range, UOp *const *body, int n)
{
	if (!range || range->op != OP_RANGE)
		return NULL;
	return block(k, OP_END, range, body, n);
}

UOp *
kernel_if(Kernel *k, UOp *gate, UOp *const *body, int n)
{
	return gate ? block(k, OP_IF, gate, body, n) : NULL;
}

UOp *
kernel_barrier(Kernel *k)
{
	return uop_new(k->c, OP_BARRIER, DT_VOID, NULL, 0, 0, 0, NULL, NULL, 0);
}

UOp *
kernel_index(Kernel *k, int bi, UOp *const *idx, int n)
{
	UOp *src[1 + T_MAXDIM];
	int i;

	if (bi < 0 || bi >= k->nbuf || n < 0 || n > T_MAXDIM)
		return NULL;
	src[0] = k->buf[bi].def;
	for (i = 0; i < n; i++)
		src[i + 1] = idx[i];
	return uop_new(k->c, OP_INDEX, k->buf[bi].dtype, src, n + 1, 0, 0, NULL, NULL, 0);
}

UOp *
kernel_load(Kernel *k, UOp *index, UOp *gate)
{
	UOp *src[2] = { index, gate };

	if (!index || index->op != OP_INDEX)
		return NULL;
	if (gate && gate->op == OP_CONST && gate->arg[0])
		gate = NULL;
	return uop_new(k->c, OP_LOAD, index->dtype, src, gate ? 2 : 1, 0, 0, NULL, NULL, 0);
}

UOp *
kernel_store(Kernel *k, UOp *index, UOp *value, UOp *gate)
{
	UOp *src[3] = { index, value, gate };

	if (!index || index->op != OP_INDEX || !value)
		return NULL;
	if (gate && gate->op == OP_CONST && gate->arg[0])
		gate = NULL;
	return uop_new(k->c, OP_STORE, DT_VOID, src, gate ? 3 : 2, 0, 0, NULL, NULL, 0);
}

static int
int_dtype(int t)
{
	return !dtype_is_float(t) && t != DT_VOID;
}

UOp *
kernel_alu(Kernel *k, Op op, DType t, UOp *const *src, int n)
{
	int i, allint = 1;
	DType rt = (uop_info[op].flags & U_CMP) ? DT_BOOL : t;

	for (i = 0; i < n; i++) {
		if (!src[i])
			return NULL;
		allint &= int_dtype(src[i]->dtype) && src[i]->op != OP_LOAD;
	}
	/* integer arithmetic folds and simplifies as index arithmetic does */
	if (allint && int_dtype(t) && (t == DT_INDEX || t == DT_INT64 || t == DT_INT32)
	&& !(uop_info[op].flags & U_TENSOR)) {
		if (n == 1 && op == OP_NEG)
			return uop_neg(k->c, src[0]);
		if (n == 2 && t == DT_INDEX)
			return uop_alu(k->c, op, src[0], src[1]);
		if (n == 3 && op == OP_WHERE && t == DT_INDEX)
			return uop_where(k->c, src[0], src[1], src[2]);
	}
	return uop_new(k->c, op, rt, src, n, 0, 0, NULL, NULL, 0);
}

UOp *
kernel_const(Kernel *k, DType t, double v)
{
	return uop_constf(k->c, t, v);
}

UOp *
kernel_identity(Kernel *k, Op op, DType t)
{
	int64_t lo, hi;

	switch (op) {
	case OP_ADD: return kernel_const(k, t, 0);
	case OP_MUL: return kernel_const(k, t, 1);
	case OP_MAX:
	case OP_MIN:
		if (dtype_is_float(t))
			return kernel_const(k, t, op == OP_MAX ? -INFINITY : INFINITY);
		dtype_range(t, &lo, &hi);
		return uop_const(k->c, t, op == OP_MAX ? lo : hi);
	default:
		return NULL;
	}
}

UOp *
kernel_cast(Kernel *k, DType t, UOp *v)
{
	if (!v)
		return NULL;
	if (v->dtype == t)
		return v;
	if (v->op == OP_CONST)
		return uop_constf(k->c, t, uop_const_value(v));
	return uop_new(k->c, OP_CAST, t, &v, 1, 0, 0, NULL, NULL, 0);
}

UOp *
kernel_shuffle(Kernel *k, UOp *value, UOp *lane)
{
	UOp *src[2] = { value, lane };

	if (!value || !lane || value->dtype == DT_VOID || dtype_is_float(lane->dtype)
	|| lane->dtype == DT_VOID)
		return NULL;
	return uop_new(k->c, OP_SHUFFLE, value->dtype, src, 2, 0, 0, NULL, NULL, 0);
}

/* One operand type of an atom's "f32 = f16 * f16 + f32"; tf32 is float32 in registers. */
static int
atom_dtype(const char *s, size_t n, DType *t, int *tf32)
{
	static const struct { const char *name; DType t; } tab[] = {
		{ "f16", DT_FLOAT16 }, { "bf16", DT_BFLOAT16 }, { "tf32", DT_FLOAT32 },
		{ "f32", DT_FLOAT32 }, { "f64", DT_FLOAT64 },
	};
	size_t i;

	for (i = 0; i < sizeof tab / sizeof *tab; i++)
		if (strlen(tab[i].name) == n && strncmp(s, tab[i].name, n) == 0) {
			*t = tab[i].t;
			if (strcmp(tab[i].name, "tf32") == 0)
				*tf32 = 1;
			return 0;
		}
	return -1;
}

int
kernel_mma_atom(const Kernel *k, const char *atom, const int *buf, MmaAtom *out, int *tf32, Err *e)
{
	static const char *const role[4] = { "D", "A", "B", "C" };
	MmaAtom at;
	DType want[4];
	const char *p;
	int i, t32 = 0;
	Err ee;

	if (!atom || cute_mma_atom(atom, &at, &ee) < 0)
		return err_set(e, "mma: unknown atom '%s' (cute.mma_atoms() lists them)", atom ? atom : "");
	if (cute_size(&at.thr_id) > 32)
		return err_set(e, "mma: %s: a warpgroup MMA (%lld threads); only warp-wide atoms run in "
		               "kernels", at.name, (long long)cute_size(&at.thr_id));
	/* "D = A * B + C": four type names between the separators */
	for (i = 0, p = at.types; i < 4; i++) {
		size_t n = strcspn(p, " =*+");

		if (atom_dtype(p, n, &want[i], &t32) < 0)
			return err_set(e, "mma: %s: the atom's types \"%s\" are not supported", at.name, at.types);
		p += n;
		p += strspn(p, " =*+");
	}
	for (i = 0; i < 4; i++) {
		const Layout *l = i == 1 ? &at.a : i == 2 ? &at.b : &at.c;
		const KBuf *b;
		Layout m;
		int64_t nv, numel = 1;
		int j;

		if (buf[i] < 0 || buf[i] >= k->nbuf)
			return err_set(e, "mma: %s: operand %s: no buffer %d", at.name, role[i], buf[i]);
		b = &k->buf[buf[i]];
		if (b->scope != AS_REG)
			return err_set(e, "mma: %s: operand %s is %s, a %s buffer; MMA operands are registers "
			               "(local)", at.name, role[i], b->name, kscope_name(b->scope));
		if (cute_mode(l, 1, &m, &ee) < 0)
			return err_set(e, "mma: %s: %s", at.name, ee.msg);
		nv = cute_size(&m);
		for (j = 0; j < b->ndim; j++)
			numel *= b->shape[j];
		if (numel != nv) {
			Buf lb;

			buf_init(&lb);
			cute_print(&lb, l);
			err_set(e, "mma: %s: operand %s is %s, of %lld elements; a thread holds %lld values of %s "
			        "(mode 1 of %s)", at.name, role[i], b->name, (long long)numel, (long long)nv,
			        i == 0 ? "D (C's layout)" : role[i], lb.s ? lb.s : "?");
			buf_free(&lb);
			return -1;
		}
		if (b->dtype != want[i])
			return err_set(e, "mma: %s: operand %s is %s, of %s; the atom takes %s (%s%s)", at.name,
			               role[i], b->name, dtype_name(b->dtype), dtype_name(want[i]), at.types,
			               t32 && (i == 1 || i == 2) ? "; tf32 lives in float32 registers" : "");
	}
	if (out)
		*out = at;
	if (tf32)
		*tf32 = t32;
	return 0;
}

UOp *
kernel_mma(Kernel *k, const char *atom, int d, int a, int b, int c, Err *e)
{
	int buf[4] = { d, a, b, c }, i;
	MmaAtom at;
	UOp *src[4], *u;

	if (kernel_mma_atom(k, atom, buf, &at, NULL, e) < 0)
		return NULL;
	for (i = 0; i < 4; i++)
		src[i] = k->buf[buf[i]].def;
	if (!(u = uop_new(k->c, OP_MMA, DT_VOID, src, 4, 0, 0, at.name, NULL, 0)))
		err_set(e, "mma: out of memory");
	return u;
}

static int
is16(DType t)
{
	return t == DT_FLOAT16 || t == DT_BFLOAT16 || t == DT_INT16 || t == DT_UINT16;
}

int
kernel_ldmatrix_check(const Kernel *k, int d, int s, int n, Err *e)
{
	const KBuf *db, *sb;
	int64_t numel = 1;
	int j;

	if (n != 1 && n != 2 && n != 4)
		return err_set(e, "ldmatrix: x%d; ldmatrix loads 1, 2 or 4 matrices (x1, x2, x4)", n);
	if (d < 0 || d >= k->nbuf || s < 0 || s >= k->nbuf)
		return err_set(e, "ldmatrix: no buffer %d", d < 0 || d >= k->nbuf ? d : s);
	db = &k->buf[d];
	sb = &k->buf[s];
	if (sb->scope != AS_LOCAL)
		return err_set(e, "ldmatrix: the source %s is a %s buffer; ldmatrix reads shared memory", sb->name,
		               kscope_name(sb->scope));
	if (!is16(sb->dtype))
		return err_set(e, "ldmatrix: the source %s is %s; ldmatrix moves 16-bit elements (b16)", sb->name,
		               dtype_name(sb->dtype));
	if (db->scope != AS_REG)
		return err_set(e, "ldmatrix: the destination %s is a %s buffer; ldmatrix writes registers (local)",
		               db->name, kscope_name(db->scope));
	if (db->dtype != sb->dtype)
		return err_set(e, "ldmatrix: the destination %s is %s, the source %s is %s", db->name,
		               dtype_name(db->dtype), sb->name, dtype_name(sb->dtype));
	for (j = 0; j < db->ndim; j++)
		numel *= db->shape[j];
	if (numel != 2 * n)
		return err_set(e, "ldmatrix: the destination %s holds %lld elements; x%d gives a lane %d", db->name,
		               (long long)numel, n, 2 * n);
	return 0;
}

UOp *
kernel_ldmatrix(Kernel *k, int d, UOp *index, int n, int trans, Err *e)
{
	UOp *src[2], *u;

	if (!index || index->op != OP_INDEX || index->nsrc < 1 || index->src[0]->op != OP_DEFINE)
		return err_set(e, "ldmatrix: the row address is not an element of a buffer"), NULL;
	if (kernel_ldmatrix_check(k, d, (int)index->src[0]->arg[0], n, e) < 0)
		return NULL;
	src[0] = k->buf[d].def;
	src[1] = index;
	if (!(u = uop_new(k->c, OP_LDMATRIX, DT_VOID, src, 2, n, trans != 0, NULL, NULL, 0)))
		err_set(e, "ldmatrix: out of memory");
	return u;
}

int
kernel_cp_async_check(const Kernel *k, int d, int s, int n, Err *e)
{
	const KBuf *db, *sb;
	int64_t bytes;

	if (d < 0 || d >= k->nbuf || s < 0 || s >= k->nbuf)
		return err_set(e, "cp_async: no buffer %d", d < 0 || d >= k->nbuf ? d : s);
	db = &k->buf[d];
	sb = &k->buf[s];
	if (db->scope != AS_LOCAL)
		return err_set(e, "cp_async: the destination %s is a %s buffer; cp.async writes shared memory",
		               db->name, kscope_name(db->scope));
	if (sb->scope != AS_GLOBAL)
		return err_set(e, "cp_async: the source %s is a %s buffer; cp.async reads global memory", sb->name,
		               kscope_name(sb->scope));
	if (db->dtype != sb->dtype)
		return err_set(e, "cp_async: the destination %s is %s, the source %s is %s", db->name,
		               dtype_name(db->dtype), sb->name, dtype_name(sb->dtype));
	bytes = (int64_t)n * dtype_bytes(db->dtype);
	if (n < 1 || (bytes != 4 && bytes != 8 && bytes != 16))
		return err_set(e, "cp_async: %d elements of %s are %lld bytes; cp.async moves 4, 8 or 16", n,
		               dtype_name(db->dtype), (long long)bytes);
	return 0;
}

UOp *
kernel_cp_async(Kernel *k, UOp *dst, UOp *src, int n, Err *e)
{
	UOp *s[2], *u;

	if (!dst || dst->op != OP_INDEX || dst->nsrc < 1 || dst->src[0]->op != OP_DEFINE
	|| !src || src->op != OP_INDEX || src->nsrc < 1 || src->src[0]->op != OP_DEFINE)
		return err_set(e, "cp_async: the destination and the source must be elements of buffers"), NULL;
	if (kernel_cp_async_check(k, (int)dst->src[0]->arg[0], (int)src->src[0]->arg[0], n, e) < 0)
		return NULL;
	s[0] = dst;
	s[1] = src;
	if (!(u = uop_new(k->c, OP_CP_ASYNC, DT_VOID, s, 2, n, 0, NULL, NULL, 0)))
		err_set(e, "cp_async: out of memory");
	return u;
}

UOp *
kernel_cp_commit(Kernel *k)
{
	return uop_new(k->c, OP_CP_COMMIT, DT_VOID, NULL, 0, 0, 0, NULL, NULL, 0);
}

UOp *
kernel_cp_wait(Kernel *k, int n, Err *e)
{
	UOp *u;

	if (n < 0 || n > 63)
		return err_set(e, "cp_async_wait: %d groups; wait_group takes 0 to 63", n), NULL;
	if (!(u = uop_new(k->c, OP_CP_WAIT, DT_VOID, NULL, 0, n, 0, NULL, NULL, 0)))
		err_set(e, "cp_async_wait: out of memory");
	return u;
}

int
kernel_add_stage(Kernel *k, const char *name, UOp *body, const UOp *tensor, Err *e)
{
	KStage *s;

	if (!body)
		return err_set(e, "stage: out of memory, or the program nests deeper than %d", UOP_MAXDEPTH);
	if (body->dtype != DT_VOID)
		return err_set(e, "stage %s: the body is a value, not a statement", name ? name : "?");
	if (!uop_valid_name(name))
		return err_set(e, "stage: \"%s\" is not a name (letters, digits, _; at most 63)", name ? name : "");
	if (stage_taken(k, name))
		return err_set(e, "stage: the name %s is taken", name);
	if (k->nstage == k->capstage) {
		int cap = k->capstage ? 2 * k->capstage : 8;
		KStage *ns = realloc(k->stage, cap * sizeof *ns);

		if (!ns)
			return err_set(e, "stage: out of memory");
		k->stage = ns;
		k->capstage = cap;
	}
	s = &k->stage[k->nstage];
	memset(s, 0, sizeof *s);
	snprintf(s->name, sizeof s->name, "%s", name);
	s->body = body;
	s->tensor = tensor;
	return k->nstage++;
}

/*
** Substitution: a memoized rebuild. Index arithmetic goes through the folding
** constructors (uop_rebuild); the loop-IR and value nodes are rebuilt raw, so
** float arithmetic is never folded as integers. An explicit stack keeps deep
** statement trees off the C stack.
*/
static int
is_index_arith(const UOp *u)
{
	return !(uop_info[u->op].flags & (U_TENSOR | U_KERNEL)) && u->op != OP_LOAD
	&& u->op != OP_INDEX && u->op != OP_STORE && (u->dtype == DT_INDEX || u->dtype == DT_BOOL)
	&& u->op != OP_CONST;
}

UOp *
kernel_substitute(UCtx *c, UOp *u, UOp *const *vars, UOp *const *vals, int n)
{
	PMap m = { 0 };
	const UOp **stack = NULL;
	size_t sp = 0, cap = 0;
	UOp *r = NULL;
	int i;

	if (!u)
		return NULL;
	for (i = 0; i < n; i++)
		if (pmap_put(&m, vars[i], vals[i]) < 0)
			goto out;
	/* post-order: a node is rebuilt once all its sources are */
	if (!(stack = malloc((cap = 256) * sizeof *stack)))
		goto out;
	stack[sp++] = u;
	while (sp) {
		const UOp *x = stack[sp - 1];
		UOp *src[64], **s = src, *y;
		int pending = 0, changed = 0;

		if (pmap_get(&m, x)) {
			sp--;
			continue;
		}
		for (i = 0; i < x->nsrc; i++)
			if (!pmap_get(&m, x->src[i]) && x->src[i]->nsrc > 0) {
				if (sp == cap) {
					const UOp **ns = realloc(stack, 2 * cap * sizeof *ns);

					if (!ns)
						goto out;
					stack = ns;
					cap *= 2;
				}
				stack[sp++] = x->src[i];
				pending = 1;
			}
		if (pending)
			continue;
		sp--;
		if (x->nsrc > 64 && !(s = malloc(x->nsrc * sizeof *s)))
			goto out;
		for (i = 0; i < x->nsrc; i++) {
			UOp *v = pmap_get(&m, x->src[i]);

			s[i] = v ? v : x->src[i];
			changed |= s[i] != x->src[i];
		}
		if (!changed)
			y = (UOp *)x;
		else if (is_index_arith(x))
			y = uop_rebuild(c, x, s);
		else
			y = uop_new(c, (Op)x->op, (DType)x->dtype, s, x->nsrc, x->arg[0], x->arg[1],
			            x->name, x->data, x->ndata);
		if (s != src)
			free(s);
		if (!y || pmap_put(&m, x, y) < 0)
			goto out;
	}
	r = pmap_get(&m, u);
	if (!r)
		r = u;
out:
	free(stack);
	pmap_free(&m);
	return r;
}

UOp *
kernel_at(UCtx *c, UOp *u, UOp *const *vars, const int64_t *val, int n)
{
	UOp *v[64], *o;
	Err ie;
	int i;

	if (!u || n > 64)
		return NULL;
	for (i = 0; i < n; i++)
		v[i] = uop_int(c, val ? val[i] : 0);
	if ((n && !(u = kernel_substitute(c, u, vars, v, n))) || uop_simplify(c, u, &o, &ie) < 0)
		return NULL;
	return o;
}

int
kernel_affine_in(UCtx *c, UOp *u, UOp *v, int64_t *coef, UOp **rest)
{
	int64_t one = 1;
	UOp *r0 = kernel_at(c, u, &v, NULL, 1), *r1 = kernel_at(c, u, &v, &one, 1), *k, *z;

	if (!r0 || !r1 || !(k = kernel_at(c, uop_sub(c, r1, r0), NULL, NULL, 0)) || k->op != OP_CONST
	|| !(z = kernel_at(c, uop_sub(c, uop_sub(c, u, r0), uop_mul(c, k, v)), NULL, NULL, 0))
	|| z->op != OP_CONST || z->arg[0] != 0)
		return 0;
	*coef = k->arg[0];
	*rest = r0;
	return 1;
}

/* ---- atomics and fences ---- */

static const char *const atomic_names[KA_COUNT] = { "add", "max", "min", "exch" };

const char *
katomic_name(int op)
{
	return op >= 0 && op < KA_COUNT ? atomic_names[op] : "?";
}

int
katomic_parse(const char *s, KAtomicOp *op)
{
	int i;

	for (i = 0; s && i < KA_COUNT; i++)
		if (strcmp(s, atomic_names[i]) == 0) {
			*op = (KAtomicOp)i;
			return 0;
		}
	return -1;
}

/*
** The dtypes are those every exporter's device has a native atomic for
** (CUDA's atomicAdd, atomicMax, atomicExch on 32-bit words): a float max,
** or a 64-bit or 16-bit atomic, would be a CAS loop on some of them and
** nothing on others.
*/
int
kernel_atomic_check(const Kernel *k, int op, int b, DType value, int old, Err *e)
{
	const KBuf *kb;
	DType t;
	int is32;

	if (op < 0 || op >= KA_COUNT)
		return err_set(e, "atomic: no atomic op %d (add, max, min, exch)", op);
	if (b < 0 || b >= k->nbuf)
		return err_set(e, "atomic: no buffer %d", b);
	kb = &k->buf[b];
	t = kb->dtype;
	if (kb->scope == AS_REG)
		return err_set(e, "atomic %s: %s is a register buffer; atomics update global or shared memory (a "
		               "thread's own registers need no atomic)", katomic_name(op), kb->name);
	is32 = t == DT_INT32 || t == DT_UINT32;
	if (!(is32 || (t == DT_FLOAT32 && (op == KA_ADD || op == KA_EXCH))))
		return err_set(e, "atomic %s: %s is %s; atomic %s takes int32, uint32%s", katomic_name(op), kb->name,
		               dtype_name(t), katomic_name(op),
		               op == KA_ADD || op == KA_EXCH ? " or float32" : " (a float max has no native atomic)");
	if (value != t)
		return err_set(e, "atomic %s: the value is %s, %s is %s (kernel.cast it)", katomic_name(op),
		               dtype_name(value), kb->name, dtype_name(t));
	if (old >= 0) {
		if (old >= k->nbuf)
			return err_set(e, "atomic: no buffer %d", old);
		if (k->buf[old].scope != AS_REG || k->buf[old].dtype != t)
			return err_set(e, "atomic %s: the old value goes to %s, a %s %s buffer; it takes a register "
			               "buffer of %s", katomic_name(op), k->buf[old].name, kscope_name(k->buf[old].scope),
			               dtype_name(k->buf[old].dtype), dtype_name(t));
	}
	return 0;
}

UOp *
kernel_atomic(Kernel *k, KAtomicOp op, UOp *index, UOp *value, UOp *old, Err *e)
{
	UOp *s[3], *u;

	if (!index || index->op != OP_INDEX || index->nsrc < 1 || index->src[0]->op != OP_DEFINE)
		return err_set(e, "atomic %s: the target is not an element of a buffer", katomic_name(op)), NULL;
	if (!value || value->dtype == DT_VOID)
		return err_set(e, "atomic %s: the value is not a value", katomic_name(op)), NULL;
	if (old && (old->op != OP_INDEX || old->nsrc < 1 || old->src[0]->op != OP_DEFINE))
		return err_set(e, "atomic %s: the old value's place is not an element of a buffer",
		               katomic_name(op)), NULL;
	if (kernel_atomic_check(k, op, (int)index->src[0]->arg[0], (DType)value->dtype,
	                        old ? (int)old->src[0]->arg[0] : -1, e) < 0)
		return NULL;
	s[0] = index;
	s[1] = value;
	s[2] = old;
	if (!(u = uop_new(k->c, OP_ATOMIC, DT_VOID, s, old ? 3 : 2, op, 0, NULL, NULL, 0)))
		err_set(e, "atomic: out of memory");
	return u;
}

UOp *
kernel_fence(Kernel *k, KFenceScope scope)
{
	return uop_new(k->c, OP_FENCE, DT_VOID, NULL, 0, scope == KF_BLOCK, 0, NULL, NULL, 0);
}
