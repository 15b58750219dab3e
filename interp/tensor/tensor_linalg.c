/* tensor_linalg.c - tinygrad's linear algebra: qr (Householder), svd (QR, then one-sided Jacobi), newton_schulz. */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

/*
** The compositions of tinygrad's Tensor.qr, Tensor.svd and Tensor.newton_schulz
** (tinygrad 0.14), built from matmul, where, eq, sum, sqrt, sign, eye, gather
** and sort as tinygrad's definitions write them, over the last two axes (the
** axes before them are a batch). Nothing here branches on values: every loop
** runs a count fixed by the shape (min(m, n) reflections; 4 min(m, n) Jacobi
** rounds; steps), so the graph grows with the shape: SVD unrolls 4 num rounds
** of about 60 nodes each, num^3 / 2 elements a round for the rotation alone.
*/

static const char *
shp(char *b, size_t n, const UOp *a)
{
	return uop_shape_fmt(b, n, a->shape, a->ndim);
}

/* a with its last two axes exchanged */
static UOp *
tr(UCtx *c, UOp *a, Err *e)
{
	return a ? swap_ax(c, a, a->ndim - 2, a->ndim - 1, e) : NULL;
}

/* sum over the last axis (k = -1) or the second to last (k = -2) */
static UOp *
sum_ax(UCtx *c, UOp *a, int64_t k, int keepdim, Err *e)
{
	return tensor_sum(c, a, &k, 1, keepdim, e);
}

/* eye(n) in dtype t expanded to the batch axes b[nb] + (n, n) */
static UOp *
eye_b(UCtx *c, int64_t n, DType t, const int64_t *b, int nb, Err *e)
{
	int64_t s[T_MAXDIM], one[T_MAXDIM];
	int i;

	for (i = 0; i < nb; i++) {
		s[i] = b[i];
		one[i] = 1;
	}
	s[nb] = s[nb + 1] = one[nb] = one[nb + 1] = n;
	return tensor_expand(c, tensor_reshape(c, tensor_eye(c, n, n, t, e), one, nb + 2, e), s, nb + 2, e);
}

/* a's shape with the last two axes shrunk to [0, r) x [0, k) */
static UOp *
top_left(UCtx *c, UOp *a, int64_t r, int64_t k, Err *e)
{
	int64_t b[T_MAXDIM], en[T_MAXDIM];
	int i;

	if (!a)
		return NULL;
	for (i = 0; i < a->ndim; i++) {
		b[i] = 0;
		en[i] = a->shape[i];
	}
	en[a->ndim - 2] = r;
	en[a->ndim - 1] = k;
	return tensor_shrink(c, a, b, en, a->ndim, e);
}

/* column i of the last two axes: a[..., :, i], shape (..., m) */
static UOp *
column(UCtx *c, UOp *a, int64_t i, Err *e)
{
	int64_t b[T_MAXDIM], en[T_MAXDIM];
	int k;

	if (!a)
		return NULL;
	for (k = 0; k < a->ndim; k++) {
		b[k] = 0;
		en[k] = a->shape[k];
	}
	b[a->ndim - 1] = i;
	en[a->ndim - 1] = i + 1;
	a = tensor_shrink(c, a, b, en, a->ndim, e);
	return a ? tensor_reshape(c, a, a->shape, a->ndim - 1, e) : NULL;
}

static uint32_t
deeper(const UOp *a, const UOp *b)
{
	return a->depth > b->depth ? a->depth : b->depth;
}

/*
** The loops unroll into the graph, and a graph nests at most UOP_MAXDEPTH deep
** (every walker recurses). After the first of n iterations took the depth from
** d0 to d1, refuse when all n would pass the bound (with room for what follows)
** rather than fail deep inside a constructor.
*/
static int
too_deep(const char *what, const char *loop, uint32_t d0, uint32_t d1, int64_t n, const UOp *a, Err *e)
{
	char b1[160];
	int64_t per = (int64_t)d1 - d0, total = d0 + n * per + 100;

	if (total <= UOP_MAXDEPTH)
		return 0;
	return err_set(e, "%s: shape %s unrolls %lld %s of %lld levels each, a graph about %lld deep: past the "
	               "limit of %d (UOP_MAXDEPTH); use a smaller matrix", what, shp(b1, sizeof b1, a), (long long)n,
	               loop, (long long)per, (long long)total, UOP_MAXDEPTH);
}

/* a matrix of rank 2 or more; the message names the operation and the shape */
static int
check_matrix(const char *what, const UOp *a, Err *e)
{
	char b1[160];

	if (a->ndim < 2)
		return err_set(e, "%s: needs two or more axes (a matrix, or a batch of them), got shape %s", what,
		               shp(b1, sizeof b1, a));
	if (a->ndim + 3 > T_MAXDIM)
		return err_set(e, "%s: shape %s has %d batch axes; its matmuls need rank at most %d", what,
		               shp(b1, sizeof b1, a), a->ndim - 2, T_MAXDIM - 3);
	return 0;
}

/*
** qr(A) for A (..., m, n): Q (..., m, m), R (..., m, n), A = Q R, as tinygrad
** does it: R = A, Q = eye(m), then for each column i < min(m, n), with
** idx = arange(m):
**   x    = (idx >= i):where(R[..., :, i], 0)           the column below the diagonal
**   norm = x:square():sum(-1, keepdim):sqrt()
**   x0   = (idx == i):where(x, 0):sum(-1, keepdim)      its diagonal element
**   sgn  = (x0 != 0):where(x0:sign(), 1), active = norm != 0
**   u0   = x0 + sgn norm
**   v    = ((idx == i):where(u0, x) / active:where(u0, 1)):unsqueeze(-1)
**   w    = active:where(sgn u0 / active:where(norm, 1), 0):unsqueeze(-1) v
**   R    = R - w @ (v^T @ R),  Q = Q - (Q @ v) @ w^T
** so R's diagonal has the sign of -x0 (tinygrad's convention, LAPACK's too)
** and a zero column leaves Q and R alone. Integers and bool become float32
** (tinygrad's division does it); with min(m, n) = 0 nothing is computed and
** Q = eye(m) keeps A's dtype, as tinygrad's.
*/
int
tensor_qr(UCtx *c, UOp *a, UOp **q, UOp **r, Err *e)
{
	int64_t m, n, k, i;
	uint32_t d0;
	int nd;
	UOp *Q, *R, *idx, *at, *below, *x, *norm, *x0, *sgn, *active, *u0, *v, *w;
	DType t;

	*q = *r = NULL;
	if (!a)
		return -1;
	if (check_matrix("qr", a, e) < 0)
		return -1;
	nd = a->ndim;
	m = a->shape[nd - 2];
	n = a->shape[nd - 1];
	k = m < n ? m : n;
	R = k > 0 ? flt(c, a, e) : a;
	t = R ? (DType)R->dtype : DT_FLOAT32;
	Q = eye_b(c, m, t, a->shape, nd - 2, e);
	idx = tensor_arange(c, m, DT_INT32, e);
	d0 = Q && R ? deeper(Q, R) : 0;
	for (i = 0; i < k && Q && R; i++) {
		if (i == 1 && too_deep("qr", "reflections", d0, deeper(Q, R), k, a, e) < 0)
			return -1;
		at = tensor_eq(c, idx, kd(c, DT_INT32, (double)i), e);
		below = tensor_ge(c, idx, kd(c, DT_INT32, (double)i), e);
		x = sel(c, below, column(c, R, i, e), kf(c, R, 0), e);
		norm = tensor_unary(c, OP_SQRT, sum_ax(c, tensor_square(c, x, e), -1, 1, e), e);
		x0 = sum_ax(c, sel(c, at, x, kf(c, R, 0), e), -1, 1, e);
		sgn = sel(c, ne(c, x0, kf(c, R, 0), e), tensor_sign(c, x0, e), kf(c, R, 1), e);
		active = ne(c, norm, kf(c, R, 0), e);
		u0 = add(c, x0, mul(c, sgn, norm, e), e);
		v = tensor_div(c, sel(c, at, u0, x, e), sel(c, active, u0, kf(c, R, 1), e), e);
		v = v ? unsq(c, v, v->ndim, e) : NULL;
		w = tensor_div(c, mul(c, sgn, u0, e), sel(c, active, norm, kf(c, R, 1), e), e);
		w = sel(c, active, w, kf(c, R, 0), e);
		w = w ? mul(c, unsq(c, w, w->ndim, e), v, e) : NULL;
		R = sub(c, R, tensor_matmul(c, w, tensor_matmul(c, tr(c, v, e), R, e), e), e);
		Q = sub(c, Q, tensor_matmul(c, tensor_matmul(c, Q, v, e), tr(c, w, e), e), e);
	}
	if (!Q || !R) {
		named_err(NULL, e, "qr");
		return -1;
	}
	*q = Q;
	*r = R;
	return 0;
}

/*
** One round of tinygrad's one-sided Jacobi on U (..., num, num) and V: the
** columns perm[k] and perm[h + k] (k < h = num / 2) are rotated together so
** that they become orthogonal. P[a, b] = (a == perm[b]) selects the pairs:
**   U_pair = U @ P,  U_left, U_right = U_pair:split(h, -1)
**   gamma  = (U_left U_right):sum(-2),  alpha, beta = U_pair:square():sum(-2) split
**   rot    = gamma != 0,  tau = (beta - alpha) / (2 rot:where(gamma, 1))
**   t      = rot:where((tau != 0):where(sign(tau), 1) / (|tau| + sqrt(1 + tau^2)), 0)
**   c      = 1 / sqrt(1 + t^2),  s = c t
**   Mi, Mj = P^T:split(h, -2)   (h, num) one-hot rows
**   Rot    = eye + ((c - 1)(Mi_a Mi_b + Mj_a Mj_b) + s (Mi_a Mj_b - Mj_a Mi_b)):sum(-3)
**   U, V   = U @ Rot, V @ Rot
** with X_a = X:unsqueeze(-1), X_b = X:unsqueeze(-2) and c, s reshaped to (..., h, 1, 1).
*/
static int
jacobi_round(UCtx *c, UOp **U, UOp **V, UOp *eye, const int64_t *perm, int64_t num, const int64_t *bs, int nb,
             Err *e)
{
	int64_t h = num / 2, s2[2], sz[2], sh[T_MAXDIM];
	double *pd;
	UOp *cols, *pr, *P, *up, *ul[2], *gamma, *ab, *al[2], *rot, *tau, *t, *cc, *ss, *mij[2], *mi_a, *mi_b, *mj_a,
	    *mj_b, *rm, *one;
	int i;

	if (!(pd = malloc(sizeof *pd * (size_t)(2 * h))))
		return err_set(e, "svd: out of memory");
	for (i = 0; i < 2 * h; i++)
		pd[i] = (double)perm[i];
	s2[0] = 1;
	s2[1] = 2 * h;
	pr = tensor_from(c, DT_INT32, pd, s2, 2, e);
	free(pd);
	s2[0] = num;
	s2[1] = 1;
	cols = tensor_reshape(c, tensor_arange(c, num, DT_INT32, e), s2, 2, e);
	P = tensor_cast(c, (DType)(*U)->dtype, tensor_eq(c, cols, pr, e), e);   /* (num, 2h) */
	up = tensor_matmul(c, *U, P, e);                                        /* (..., num, 2h) */
	sz[0] = sz[1] = h;
	if (tensor_split(c, up, sz, 2, -1, ul, e) < 0)
		return -1;
	for (i = 0; i < nb; i++)
		sh[i] = bs[i];
	sh[nb] = 1;
	sh[nb + 1] = h;
	gamma = tensor_reshape(c, sum_ax(c, mul(c, ul[0], ul[1], e), -2, 0, e), sh, nb + 2, e);
	ab = sum_ax(c, tensor_square(c, up, e), -2, 0, e);
	ab = ab ? unsq(c, ab, ab->ndim - 1, e) : NULL;                          /* (..., 1, 2h) */
	if (tensor_split(c, ab, sz, 2, -1, al, e) < 0)
		return -1;
	one = kf(c, gamma, 1);
	rot = ne(c, gamma, kf(c, gamma, 0), e);
	tau = tensor_div(c, sub(c, al[1], al[0], e), mul(c, kf(c, gamma, 2), sel(c, rot, gamma, one, e), e), e);
	t = sel(c, ne(c, tau, kf(c, gamma, 0), e), tensor_sign(c, tau, e), one, e);
	t = tensor_div(c, t, add(c, tensor_abs(c, tau, e),
	                         tensor_unary(c, OP_SQRT, add(c, one, tensor_square(c, tau, e), e), e), e), e);
	t = sel(c, rot, t, kf(c, gamma, 0), e);
	cc = tensor_div(c, one, tensor_unary(c, OP_SQRT, add(c, one, tensor_square(c, t, e), e), e), e);
	ss = mul(c, cc, t, e);
	sh[nb] = h;
	sh[nb + 1] = sh[nb + 2] = 1;
	cc = tensor_reshape(c, sub(c, cc, one, e), sh, nb + 3, e);
	ss = tensor_reshape(c, ss, sh, nb + 3, e);
	if (tensor_split(c, tr(c, P, e), sz, 2, -2, mij, e) < 0)
		return -1;
	mi_a = unsq(c, mij[0], 2, e);
	mi_b = unsq(c, mij[0], 1, e);
	mj_a = unsq(c, mij[1], 2, e);
	mj_b = unsq(c, mij[1], 1, e);
	rm = mul(c, cc, add(c, mul(c, mi_a, mi_b, e), mul(c, mj_a, mj_b, e), e), e);
	rm = add(c, rm, mul(c, ss, sub(c, mul(c, mi_a, mj_b, e), mul(c, mj_a, mi_b, e), e), e), e);
	rm = add(c, eye, sum_ax(c, rm, -3, 0, e), e);
	*U = tensor_matmul(c, *U, rm, e);
	*V = tensor_matmul(c, *V, rm, e);
	return *U && *V ? 0 : -1;
}

/*
** The next round robin pairing of tinygrad's svd (it computes the same integers
** with tensors; they depend on num alone, so here they are computed once on the
** host): odd num shifts every position by -1 mod num; even num keeps perm[0]
** and rotates the rest through 1..num-1 by -2 mod (num - 1).
*/
static void
next_pairing(int64_t *perm, int64_t num)
{
	int64_t k, x;

	for (k = num % 2 ? 0 : 1; k < num; k++) {
		if (num % 2)
			x = ((perm[k] - 1) % num + num) % num;
		else
			x = ((perm[k] - 2) % (num - 1) + (num - 1)) % (num - 1) + 1;
		perm[k] = x;
	}
}

/*
** svd(A, full_matrices) as tinygrad does it (LAWN 169, one-sided Jacobi after
** a QR): for A (..., m, n) with m >= n (else on A^T, the factors exchanged),
** Q, R = qr(A), num = min(m, n), U = R[..., :num, :num], V = eye(num); the
** pairing starts as arange(num/2) ++ arange(num/2, num):flip(0) and 4 num
** Jacobi rounds (jacobi_round) follow, a fixed count (about four sweeps). Then
**   S, idx = U:square():sum(-2):sqrt():sort(-1, descending)
**   U = U:gather(-1, idx') / (S != 0):where(S, 1),  V = V:gather(-1, idx')
**   U = Q @ (U:pad(to q_num) + eye(q_num) - eye(num):pad(to q_num))
** with idx' = idx expanded over the rows; full_matrices = 0 keeps U[..., :num].
** Returns U (..., m, m or num), S (..., num), V^T (..., num or n, n). A column
** with S = 0 is left zero in U (tinygrad's too). num = 1 has no pair to rotate:
** tinygrad's split(0) raises there, tessel runs no round.
*/
int
tensor_svd(UCtx *c, UOp *a, int full_matrices, UOp **u, UOp **s, UOp **v, Err *e)
{
	int64_t m, n, num, qn, h, i, nr, *perm, before[T_MAXDIM], after[T_MAXDIM], sh[T_MAXDIM];
	uint32_t d0;
	int nd, nb, wide, k;
	UOp *Q, *R, *U, *V, *eye, *S, *idx, *den;

	*u = *s = *v = NULL;
	if (!a)
		return -1;
	if (check_matrix("svd", a, e) < 0)
		return -1;
	nd = a->ndim;
	nb = nd - 2;
	m = a->shape[nd - 2];
	n = a->shape[nd - 1];
	wide = m < n;
	num = wide ? m : n;
	qn = wide ? n : m;
	h = num / 2;
	if (tensor_qr(c, wide ? tr(c, a, e) : a, &Q, &R, e) < 0) {
		named_err(NULL, e, "svd");
		return -1;
	}
	U = top_left(c, R, num, num, e);
	V = U ? eye_b(c, num, (DType)U->dtype, a->shape, nb, e) : NULL;
	eye = V;
	if (!(perm = malloc(sizeof *perm * (size_t)(num ? num : 1))))
		return err_set(e, "svd: out of memory");
	for (i = 0; i < h; i++)
		perm[i] = i;
	for (i = h; i < num; i++)
		perm[i] = num - 1 - (i - h);
	nr = h > 0 ? 4 * num : 0;
	d0 = U ? U->depth : 0;
	for (i = 0; i < nr && U && V; i++) {
		if (i == 1 && too_deep("svd", "Jacobi rounds", d0, U->depth, nr, a, e) < 0) {
			free(perm);
			return -1;
		}
		if (jacobi_round(c, &U, &V, eye, perm, num, a->shape, nb, e) < 0)
			U = NULL;
		next_pairing(perm, num);
	}
	free(perm);
	S = U ? tensor_unary(c, OP_SQRT, sum_ax(c, tensor_square(c, U, e), -2, 0, e), e) : NULL;
	if (!S || tensor_sort(c, S, -1, 1, &S, &idx, e) < 0) {
		named_err(NULL, e, "svd");
		return -1;
	}
	for (k = 0; k < nb; k++)
		sh[k] = a->shape[k];
	sh[nb] = sh[nb + 1] = num;
	idx = tensor_expand(c, unsq(c, idx, nb, e), sh, nb + 2, e);
	den = sel(c, ne(c, S, kf(c, S, 0), e), S, kf(c, S, 1), e);
	U = tensor_div(c, tensor_gather(c, U, -1, idx, e), unsq(c, den, nb, e), e);
	V = tensor_gather(c, V, -1, idx, e);
	for (k = 0; k < nd; k++)
		before[k] = after[k] = 0;
	after[nd - 2] = after[nd - 1] = qn - num;
	U = tensor_pad(c, U, before, after, nd, e);
	U = U ? add(c, U, eye_b(c, qn, (DType)U->dtype, a->shape, nb, e), e) : NULL;
	U = U ? sub(c, U, tensor_pad(c, eye_b(c, num, (DType)U->dtype, a->shape, nb, e), before, after, nd, e), e)
	      : NULL;
	U = tensor_matmul(c, Q, U, e);
	if (U && !full_matrices)
		U = top_left(c, U, qn, num, e);
	if (!U || !V) {
		named_err(NULL, e, "svd");
		return -1;
	}
	if (wide) {
		*u = V;
		*v = tr(c, U, e);
	} else {
		*u = U;
		*v = tr(c, V, e);
	}
	*s = S;
	return *u && *v ? 0 : (named_err(NULL, e, "svd"), -1);
}

/*
** newton_schulz(A, steps, params, eps) as tinygrad writes it: for m > n it is
** newton_schulz(A^T)^T; otherwise
**   G = A / (A:square():sum((-2, -1), keepdim):sqrt() + eps)
** and steps times G = sum_i params[i] (G G^T)^i G, the powers applied from the
** left one at a time ((G G^T) @ ((G G^T) @ G)), summed left to right. Integers
** and bool become float32.
*/
UOp *
tensor_newton_schulz(UCtx *c, UOp *a, int steps, const double *params, int np, double eps, Err *e)
{
	int64_t ax[2] = { -2, -1 };
	char b1[160];
	UOp *G, *A, *term, *acc;
	int i, j;

	if (!a)
		return NULL;
	if (check_matrix("newton_schulz", a, e) < 0)
		return NULL;
	if (steps < 0)
		return err_set(e, "newton_schulz: steps = %d on %s must not be negative", steps, shp(b1, sizeof b1, a)),
		       NULL;
	if (np < 1 || !params)
		return err_set(e, "newton_schulz: needs at least one coefficient in params, got %d (on %s)", np,
		               shp(b1, sizeof b1, a)), NULL;
	if (a->shape[a->ndim - 2] > a->shape[a->ndim - 1])
		return tr(c, tensor_newton_schulz(c, tr(c, a, e), steps, params, np, eps, e), e);
	a = flt(c, a, e);
	G = a ? tensor_unary(c, OP_SQRT, tensor_sum(c, tensor_square(c, a, e), ax, 2, 1, e), e) : NULL;
	G = tensor_div(c, a, addk(c, G, eps, e), e);
	for (i = 0; i < steps && G; i++) {
		A = tensor_matmul(c, G, tr(c, G, e), e);
		term = G;
		acc = mulk(c, G, params[0], e);
		for (j = 1; j < np && acc; j++) {
			term = tensor_matmul(c, A, term, e);
			acc = add(c, acc, mulk(c, term, params[j], e), e);
		}
		G = acc;
	}
	return named_err(G, e, "newton_schulz");
}
