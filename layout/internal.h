/* internal.h - helpers shared by the layout module's files, not part of its API. */
#ifndef TESSEL_LAYOUT_INTERNAL_H
#define TESSEL_LAYOUT_INTERNAL_H

#include "layout.h"

/* Node-level views: (t, at) names the subtree of t rooted at node at. */
int64_t node_product(const Tuple *t, int at);  /* unchecked: shapes are checked at construction */
int node_rank(const Tuple *t, int at);
int node_equal(const Tuple *a, int ia, const Tuple *b, int ib);
int node_congruent(const Tuple *a, int ia, const Tuple *b, int ib);
void node_print(Buf *b, const Tuple *t, int at);
int node_extract(const Tuple *t, int at, Tuple *out, Err *e);
int node_crd2idx(const Tuple *c, int ic, const Tuple *s, int is, const Tuple *d, int id,
                 int64_t *out, Err *e);

/* Parse one tuple at *pp (s is the whole text, for messages); leaves *pp
** after it and any spaces. The caller checks what follows. */
int tuple_parse_prefix(const char *s, const char **pp, Tuple *out, Err *e);

/* Checked arithmetic: 0 on success, -1 with a message on overflow. */
int ck_add(int64_t a, int64_t b, int64_t *r, Err *e);
int ck_mul(int64_t a, int64_t b, int64_t *r, Err *e);

/* The notation of a tuple or layout written into dst (truncated with "..."),
** for error messages; returns dst. */
enum { FMT_MAX = 160 };
const char *tfmt(char *dst, const Tuple *t);
const char *lfmt(char *dst, const Layout *l);   /* cute_layout.c */
/* b's text into dst as tfmt and lfmt cut it; frees b. */
const char *fmt_trunc(char *dst, Buf *b);

/*
** cute_layout.c, shared with the algebra (cute.c, cute_order.c, tiler.c): shape and
** stride grow in lockstep (lb_open/lb_close a tuple, lb_leaf a mode, lb_copy the
** subtree at node at of l); lb_check validates every layout the algebra returns.
*/
int lb_open(Layout *o, Err *e);
void lb_close(Layout *o, int at);
int lb_leaf(Layout *o, int64_t s, int64_t d, Err *e);
int lb_copy(Layout *o, const Layout *l, int at, Err *e);
void lb_init(Layout *o);
int lb_scalar(Layout *o, int64_t s, int64_t d, Err *e);
int lb_pair(const Layout *a, const Layout *b, Layout *o, Err *e);   /* make_layout(a, b) */
int lb_check(const Layout *l, const char *op, Err *e);
int lb_mode(const Layout *l, int i, Layout *out, Err *e);           /* mode i as a layout */

/* A layout flattened to parallel arrays of leaf shapes and strides. */
typedef struct Flat {
	int n;
	int64_t s[TUPLE_MAX], d[TUPLE_MAX];
} Flat;

void flat_of(const Layout *l, Flat *f);
int flat_to_layout(const Flat *f, int as_tuple, Layout *out, Err *e);

/*
** axe.c, shared by axe_ops.c (the operators of the paper's appendices),
** axe_convert.c (CuTe, TV and DTensor conversions) and axe_dispatch.c
** (vector width, scopes, TMA, the Trainium tile search).
*/
int axe_add_offset(AxeLayout *l, const char *axis, int64_t v, Err *e);
const char *axe_fmt(char *dst, const AxeLayout *l);
void axe_base_into(const AxeLayout *l, int64_t x, const AxeAxes *ax, int64_t *v);
int axe_check_shape(const AxeShape *sh, const char *op, Err *e);
AxeIter axe_mkiter(int64_t e, int64_t s, const char *axis);
int64_t axe_offset_on(const AxeLayout *l, const char *axis);
void axe_replica_into(const AxeLayout *l, int64_t j, const AxeAxes *ax, int64_t *v);
void axe_setname(char *dst, const char *src);
const char *axe_shape_fmt(char *dst, const AxeShape *sh);
int64_t axe_shape_size(const AxeShape *sh);
int axe_valid_name(const char *s);
/* axe_ops.c, shared with axe_convert.c */
int64_t axe_fiber(const AxeLayout *l, int64_t x, const AxeAxes *ax, int64_t *buf);
int64_t axe_sort_rows(int64_t *r, int64_t n, int na);

#endif
