/* kernel_layout.c - a buffer takes a CuTe, swizzled, LEGO or Axe layout through its lowered index expression. */
#include <stdio.h>
#include <string.h>

#include "../../layout/lower.h"
#include "kernel.h"

/*
** Each formalism maps the buffer's logical coordinates to an offset its own
** way; all end in kernel_set_layout, which checks that every element lands in
** the storage, and in the simplifier, which keeps the offsets readable.
*/

/* free the description after the message that quotes it is written */
static int
freed(Buf *d, int rc)
{
	buf_free(d);
	return rc;
}

static int
finish(Kernel *k, int bi, UOp *x, int64_t size, Buf *desc, Err *e)
{
	UOp *s;
	int rc;

	if (!x) {
		buf_free(desc);
		return err_set(e, "set_layout: out of memory");
	}
	if (uop_simplify(k->c, x, &s, e) < 0) {
		buf_free(desc);
		return -1;
	}
	rc = kernel_set_layout(k, bi, s, k->buf[bi].lvar, k->buf[bi].ndim, size, desc->s, e);
	buf_free(desc);
	return rc;
}

static int
check_size(const KBuf *b, int64_t size, const char *what, Err *e)
{
	int64_t n = 1;
	int i;

	for (i = 0; i < b->ndim; i++)
		n *= b->shape[i];
	if (n != size)
		return err_set(e, "set_layout: %s has %lld elements, the %s layout %lld", b->name,
		               (long long)n, what, (long long)size);
	return 0;
}

/*
** CuTe: a layout of the buffer's rank takes coordinate k in mode k (a
** hierarchical mode unflattens it colexicographically, as CuTe does); any
** layout takes the single coordinate of a 1-D buffer.
*/
int
kernel_layout_cute(Kernel *k, int bi, const Layout *l, const Composed *cl, Err *e)
{
	KBuf *b;
	UOp *x = NULL, *leaves[LOWER_MAXDIM];
	int64_t shape[LOWER_MAXDIM], stride[LOWER_MAXDIM];
	int n, i, nl = 0;
	Buf d;

	if (bi < 0 || bi >= k->nbuf)
		return err_set(e, "set_layout: no buffer %d", bi);
	b = &k->buf[bi];
	if (cl)
		l = &cl->layout;
	if (check_size(b, cute_size(l), "CuTe", e) < 0)
		return -1;
	buf_init(&d);
	if (cl)
		composed_print(&d, cl);
	else
		cute_print(&d, l);
	if (b->ndim == 1 || b->ndim == 0) {
		x = b->ndim ? b->lvar[0] : uop_int(k->c, 0);
		if (cl ? lower_composed_idx(k->c, cl, x, &x, e) : lower_cute_idx(k->c, l, x, &x, e))
			return freed(&d, -1);
	} else {
		if (cute_rank(l) != b->ndim)
			return freed(&d, err_set(e, "set_layout: %s has %d dimensions, the layout %s has "
			                             "rank %d", b->name, b->ndim, d.s ? d.s : "", cute_rank(l)));
		for (i = 0; i < b->ndim; i++) {
			Layout m;

			if (cute_mode(l, i, &m, e) < 0 || lower_cute_modes(&m, shape, stride, &n, e) < 0)
				return freed(&d, -1);
			if (cute_size(&m) != b->shape[i])
				return freed(&d, err_set(e, "set_layout: mode %d of %s has size %lld, dimension "
				                             "%d of %s has %lld", i, d.s ? d.s : "",
				                             (long long)cute_size(&m), i, b->name, (long long)b->shape[i]));
			if (nl + n > LOWER_MAXDIM)
				return freed(&d, err_set(e, "set_layout: %s has too many modes", d.s ? d.s : ""));
			if (lower_split(k->c, b->lvar[i], shape, n, 1, 0, leaves + nl, e) < 0)
				return freed(&d, -1);
			nl += n;
		}
		if (cl ? lower_composed_crd(k->c, cl, leaves, nl, &x, e)
		       : lower_cute_crd(k->c, l, leaves, nl, &x, e))
			return freed(&d, -1);
	}
	return finish(k, bi, x, cl ? (cute_cosize(l) + cl->offset) : cute_cosize(l), &d, e);
}

/* LEGO: apply takes one coordinate per logical dimension, which must be the buffer's. */
int
kernel_layout_lego(Kernel *k, int bi, const Lego *g, Err *e)
{
	KBuf *b;
	UOp *x = NULL;
	int i;
	Buf d;

	if (bi < 0 || bi >= k->nbuf)
		return err_set(e, "set_layout: no buffer %d", bi);
	b = &k->buf[bi];
	buf_init(&d);
	lego_print(&d, g);
	if (g->rank != b->ndim)
		return freed(&d, err_set(e, "set_layout: %s has %d dimensions, the LEGO layout %s has %d",
		                             b->name, b->ndim, d.s ? d.s : "", g->rank));
	for (i = 0; i < b->ndim; i++)
		if (g->dim[i] != b->shape[i])
			return freed(&d, err_set(e, "set_layout: dimension %d of %s has size %lld, of the LEGO "
			                             "layout %lld", i, b->name, (long long)b->shape[i],
			                             (long long)g->dim[i]));
	if (lower_lego(k->c, g, 0, b->lvar, &x, NULL, NULL, e) < 0)
		return freed(&d, -1);
	return finish(k, bi, x, lego_cosize(g), &d, e);
}

/* Axe: the row-major index of the coordinates through D, on the one memory axis m. */
int
kernel_layout_axe(Kernel *k, int bi, const AxeLayout *l, Err *e)
{
	KBuf *b;
	AxeAxes ax;
	UOp *x, *out[AXE_AXES];
	int64_t shape[T_MAXDIM];
	int i;
	Buf d;

	if (bi < 0 || bi >= k->nbuf)
		return err_set(e, "set_layout: no buffer %d", bi);
	b = &k->buf[bi];
	buf_init(&d);
	axe_print(&d, l);
	axe_axes(l, &ax);
	if (ax.n != 1 || strcmp(ax.name[0], "m") != 0)
		return freed(&d, err_set(e, "set_layout: the Axe layout %s places elements on %d axes; "
		                             "a buffer's layout uses only the memory axis m", d.s ? d.s : "", ax.n));
	if (l->nr)
		return freed(&d, err_set(e, "set_layout: the Axe layout %s has replicas; a buffer holds "
		                             "each element once", d.s ? d.s : ""));
	if (check_size(b, axe_size(l), "Axe", e) < 0)
		return freed(&d, -1);
	for (i = 0; i < b->ndim; i++)
		shape[i] = b->shape[i];
	x = b->ndim ? lower_join(k->c, b->lvar, shape, b->ndim, 0) : uop_int(k->c, 0);
	if (!x || lower_axe(k->c, l, x, NULL, &ax, out, e) < 0)
		return freed(&d, -1);
	if (out[0]->vmin < 0)
		return freed(&d, err_set(e, "set_layout: the Axe layout %s reaches offset %lld",
		                             d.s ? d.s : "", (long long)out[0]->vmin));
	return finish(k, bi, out[0], out[0]->vmax + 1, &d, e);
}
