/* test_tensor_linalg.c - tinygrad's qr, svd and newton_schulz (tensor_linalg.c): the factorizations' definitions checked on realized values, the iteration against float64 C, batches, refusals. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tensor_test.h"

static double
rnd(double lo, double hi)
{
	return lo + (hi - lo) * rand() / (double)RAND_MAX;
}

/* A batch of b random m x n float32 matrices (values rounded to float32 in v), shape (b, m, n) or (m, n) for b = 0. */
static UOp *
rmat(double *v, int64_t b, int64_t m, int64_t n, DType t)
{
	int64_t s[3] = { b, m, n }, i, k = (b ? b : 1) * m * n;
	Err e = { "" };
	UOp *u;

	for (i = 0; i < k; i++)
		v[i] = t == DT_INT32 ? (double)(rand() % 11 - 5) : (double)(float)rnd(-3, 3);
	u = b ? tensor_from(C, t, v, s, 3, &e) : tensor_from(C, t, v, s + 1, 2, &e);
	if (!u)
		fail_msg("tensor_from: %s", e.msg);
	return u;
}

/* Realize u into out (at most max elements), checking its shape against want[nd]; returns the element count. */
static int64_t
realize(const UOp *u, const Err *e, double *out, int64_t max, const int64_t *want, int nd, int line)
{
	TBuf b;
	Err re = { "" };
	int64_t i;
	int k;

	if (!u)
		fail_msg("line %d: built nothing: %s", line, e->msg);
	if (tensor_realize(u, NULL, &b, &re) < 0)
		fail_msg("line %d: realize: %s", line, re.msg);
	if (b.ndim != nd)
		fail_msg("line %d: rank %d, want %d", line, b.ndim, nd);
	for (k = 0; k < nd; k++)
		if (b.shape[k] != want[k])
			fail_msg("line %d: axis %d has %lld, want %lld", line, k, (long long)b.shape[k], (long long)want[k]);
	if (b.numel > max)
		fail_msg("line %d: %lld elements, more than %lld", line, (long long)b.numel, (long long)max);
	for (i = 0; i < b.numel; i++)
		out[i] = tbuf_get(&b, i);
	i = b.numel;
	tbuf_free(&b);
	return i;
}

#define REALIZE(u, e, out, ...) \
	realize((u), &(e), (out), (int64_t)(sizeof(out) / sizeof(out)[0]), (const int64_t[]){ __VA_ARGS__ }, \
	        (int)(sizeof((const int64_t[]){ __VA_ARGS__ }) / sizeof(int64_t)), __LINE__)

/* |x - y| <= tol (1 + |y|) or fail naming what and where */
static void
near(double x, double y, double tol, const char *what, int64_t at, int line)
{
	if (!(fabs(x - y) <= tol * (1 + fabs(y))))
		fail_msg("line %d: %s at %lld: got %.9g, want %.9g (seed %u)", line, what, (long long)at, x, y, seed);
}

/* P[i][j] = sum_k X[i][k] Y[k][j] (or X^T when tx, Y^T when ty), X r x q, Y q x p stored as given */
static void
mm(const double *X, const double *Y, double *P, int64_t r, int64_t q, int64_t p, int tx, int ty)
{
	int64_t i, j, k;

	for (i = 0; i < r; i++)
		for (j = 0; j < p; j++) {
			double s = 0;

			for (k = 0; k < q; k++)
				s += (tx ? X[k * r + i] : X[i * q + k]) * (ty ? Y[j * q + k] : Y[k * p + j]);
			P[i * p + j] = s;
		}
}

/* X^T X (c x c, X r x c) is the identity within tol */
static void
orthonormal_cols(const double *X, int64_t r, int64_t c, double tol, const char *what, int line)
{
	double P[64 * 64];
	int64_t i, j;

	mm(X, X, P, c, r, c, 1, 0);
	for (i = 0; i < c; i++)
		for (j = 0; j < c; j++)
			near(P[i * c + j], i == j, tol, what, i * c + j, line);
}

/* The singular values of the m x n matrix A in float64, descending: sqrt of the eigenvalues of A^T A
** (n x n) by cyclic Jacobi rotations until the off-diagonal vanishes. */
static void
singular_values(const double *A, int64_t m, int64_t n, double *s)
{
	double M[64 * 64];
	int64_t p, q, i, sweep;

	mm(A, A, M, n, m, n, 1, 0);
	for (sweep = 0; sweep < 100; sweep++) {
		double off = 0;

		for (p = 0; p < n; p++)
			for (q = p + 1; q < n; q++)
				off += M[p * n + q] * M[p * n + q];
		if (off < 1e-30)
			break;
		for (p = 0; p < n; p++)
			for (q = p + 1; q < n; q++) {
				double apq = M[p * n + q], th, t, c, sn;

				if (fabs(apq) < 1e-300)
					continue;
				th = (M[q * n + q] - M[p * n + p]) / (2 * apq);
				t = (th >= 0 ? 1 : -1) / (fabs(th) + sqrt(th * th + 1));
				c = 1 / sqrt(t * t + 1);
				sn = t * c;
				for (i = 0; i < n; i++) {   /* M = J^T M J */
					double x = M[i * n + p], y = M[i * n + q];

					M[i * n + p] = c * x - sn * y;
					M[i * n + q] = sn * x + c * y;
				}
				for (i = 0; i < n; i++) {
					double x = M[p * n + i], y = M[q * n + i];

					M[p * n + i] = c * x - sn * y;
					M[q * n + i] = sn * x + c * y;
				}
			}
	}
	for (i = 0; i < n; i++)
		s[i] = sqrt(M[i * n + i] > 0 ? M[i * n + i] : 0);
	for (p = 0; p < n; p++)   /* descending */
		for (q = p + 1; q < n; q++)
			if (s[q] > s[p]) {
				double x = s[p];

				s[p] = s[q];
				s[q] = x;
			}
}

/* ---- qr ---- */

/* Q R = A, Q^T Q = I, R upper triangular (below the diagonal within rounding), tinygrad's sign:
** R[0][0] has the sign opposite to A[0][0] (Householder towards -sign(x0) |x|) */
static void
check_qr(int64_t b, int64_t m, int64_t n, DType t)
{
	double A[4 * 16 * 16], Q[4 * 16 * 16], R[4 * 16 * 16], P[16 * 16];
	int64_t bb = b ? b : 1, k, i, j;
	Err e = { "" };
	UOp *q, *r, *a = rmat(A, b, m, n, t);

	if (tensor_qr(C, a, &q, &r, &e) < 0)
		fail_msg("qr (%lld, %lld, %lld): %s", (long long)b, (long long)m, (long long)n, e.msg);
	assert_int_equal(q->dtype, t == DT_INT32 ? DT_FLOAT32 : t);
	assert_int_equal(r->dtype, q->dtype);
	if (b) {
		REALIZE(q, e, Q, b, m, m);
		REALIZE(r, e, R, b, m, n);
	} else {
		REALIZE(q, e, Q, m, m);
		REALIZE(r, e, R, m, n);
	}
	for (k = 0; k < bb; k++) {
		const double *Ak = A + k * m * n, *Qk = Q + k * m * m, *Rk = R + k * m * n;
		double scale = 0;

		for (i = 0; i < m * n; i++)
			scale = fmax(scale, fabs(Ak[i]));
		orthonormal_cols(Qk, m, m, 2e-6 * m, "Q^T Q", __LINE__);
		mm(Qk, Rk, P, m, m, n, 0, 0);
		for (i = 0; i < m * n; i++)
			near(P[i], Ak[i], 4e-6 * m * (1 + scale), "Q R", i, __LINE__);
		for (i = 0; i < m; i++)
			for (j = 0; j < i && j < n; j++)
				near(Rk[i * n + j], 0, 4e-6 * m * (1 + scale), "R below the diagonal", i * n + j, __LINE__);
		if (Ak[0] != 0 && Rk[0] * Ak[0] > 0)
			fail_msg("qr: R[0][0] = %g has the sign of A[0][0] = %g (tinygrad's is the opposite; seed %u)",
			         Rk[0], Ak[0], seed);
		{   /* |R[0][0]| is the norm of A's first column */
			double nrm = 0;

			for (i = 0; i < m; i++)
				nrm += Ak[i * n] * Ak[i * n];
			near(fabs(Rk[0]), sqrt(nrm), 1e-5, "|R[0][0]|", 0, __LINE__);
		}
	}
}

static void
test_qr(void **state)
{
	check_qr(0, 1, 1, DT_FLOAT32);
	check_qr(0, 3, 3, DT_FLOAT32);
	check_qr(0, 5, 3, DT_FLOAT32);    /* tall */
	check_qr(0, 3, 5, DT_FLOAT32);    /* wide */
	check_qr(0, 8, 8, DT_FLOAT32);
	check_qr(2, 4, 4, DT_FLOAT32);    /* batch */
	check_qr(3, 6, 2, DT_FLOAT32);
	check_qr(2, 2, 5, DT_FLOAT32);
	check_qr(0, 4, 4, DT_INT32);      /* integers become float32 */
	check_qr(0, 16, 16, DT_FLOAT32);
	{
		/* a zero matrix: no reflection is active, Q = I and R = 0 exactly (tinygrad's where guards) */
		double z[6] = { 0 }, Q[9], R[6];
		int64_t s[2] = { 3, 2 }, i;
		Err e = { "" };
		UOp *q, *r;

		assert_int_equal(tensor_qr(C, tensor_from(C, DT_FLOAT32, z, s, 2, &e), &q, &r, &e), 0);
		REALIZE(q, e, Q, 3, 3);
		REALIZE(r, e, R, 3, 2);
		for (i = 0; i < 9; i++)
			assert_true(Q[i] == (i % 4 == 0));
		for (i = 0; i < 6; i++)
			assert_true(R[i] == 0);
	}
	{
		/* a column of zeros in the middle leaves that reflection out: still Q R = A */
		double A[9] = { 1, 0, 2, 3, 0, 1, -2, 0, 4 }, Q[9], R[9], P[9];
		int64_t s[2] = { 3, 3 }, i;
		Err e = { "" };
		UOp *q, *r;

		assert_int_equal(tensor_qr(C, tensor_from(C, DT_FLOAT32, A, s, 2, &e), &q, &r, &e), 0);
		REALIZE(q, e, Q, 3, 3);
		REALIZE(r, e, R, 3, 3);
		mm(Q, R, P, 3, 3, 3, 0, 0);
		for (i = 0; i < 9; i++)
			near(P[i], A[i], 1e-5, "Q R", i, __LINE__);
		orthonormal_cols(Q, 3, 3, 1e-5, "Q^T Q", __LINE__);
	}
	{
		/* min(m, n) = 0: nothing to reflect, Q = eye(m) in the input's dtype, R the input (tinygrad's) */
		double none[1] = { 0 };
		int64_t s[2] = { 2, 0 };
		Err e = { "" };
		UOp *q, *r, *a = tensor_from(C, DT_INT32, none, s, 2, &e);

		assert_int_equal(tensor_qr(C, a, &q, &r, &e), 0);
		assert_int_equal(q->dtype, DT_INT32);
		assert_ptr_equal(r, a);
	}
}

/* ---- svd ---- */

/* A random n x n orthogonal matrix in float64: the product of three Householder reflections I - 2 v v^T / v^T v. */
static void
orthogonal(double *H, int64_t n)
{
	double v[16], P[16 * 16], W[16 * 16], vv;
	int64_t i, j, r;

	for (i = 0; i < n * n; i++)
		H[i] = i % (n + 1) == 0;
	for (r = 0; r < 3; r++) {
		for (i = 0, vv = 0; i < n; i++) {
			v[i] = rnd(-1, 1);
			vv += v[i] * v[i];
		}
		for (i = 0; i < n; i++)
			for (j = 0; j < n; j++)
				P[i * n + j] = (i == j) - 2 * v[i] * v[j] / vv;
		mm(H, P, W, n, n, n, 0, 0);
		memcpy(H, W, sizeof(double) * (size_t)(n * n));
	}
}

/*
** U diag(S) V^T = A, S descending and non-negative, V's rows orthonormal (a product of rotations),
** U's first columns of unit norm, for any A. The singular values against float64 (Jacobi on A^T A)
** and U's columns orthonormal only when conditioned: then A = H1 diag(s) H2 with s spread over
** [1, 1 + 2 num] at least 0.5 apart. tinygrad's 4 num Jacobi rounds are about four sweeps, short
** of convergence when the smallest singular values are small or close: the rotated columns keep
** some of their overlap, which dividing by S magnifies in U (tinygrad's values and tessel's agree
** there too, within 5e-6 at 16 x 16, with U^T U off by up to 0.2).
*/
static void
check_svd(int64_t b, int64_t m, int64_t n, int full, int conditioned)
{
	double A[4 * 8 * 8], U[4 * 8 * 8], S[4 * 8], V[4 * 8 * 8], P[8 * 8], want[8], scale = 0;
	int64_t bb = b ? b : 1, k, i, j, l, kk = m < n ? m : n, uc = full ? m : kk, vr = full ? n : kk;
	int64_t sh[3] = { b, m, n };
	char what[80];
	Err e = { "" };
	UOp *u, *s, *v, *a;

	if (conditioned) {
		for (k = 0; k < bb; k++) {
			double H1[64], H2[64], D[64];

			orthogonal(H1, m);
			orthogonal(H2, n);
			memset(D, 0, sizeof D);
			for (i = 0; i < kk; i++)
				D[i * n + i] = 1 + 2 * i + rnd(0, 1.5);
			mm(H1, D, P, m, m, n, 0, 0);
			mm(P, H2, A + k * m * n, m, n, n, 0, 0);
			for (i = 0; i < m * n; i++)
				A[k * m * n + i] = (float)A[k * m * n + i];
		}
		a = b ? tensor_from(C, DT_FLOAT32, A, sh, 3, &e) : tensor_from(C, DT_FLOAT32, A, sh + 1, 2, &e);
	} else
		a = rmat(A, b, m, n, DT_FLOAT32);
	for (i = 0; i < bb * m * n; i++)
		scale = fmax(scale, fabs(A[i]));
	if (tensor_svd(C, a, full, &u, &s, &v, &e) < 0)
		fail_msg("svd (%lld, %lld, %lld): %s", (long long)b, (long long)m, (long long)n, e.msg);
	if (b) {
		REALIZE(u, e, U, b, m, uc);
		REALIZE(s, e, S, b, kk);
		REALIZE(v, e, V, b, vr, n);
	} else {
		REALIZE(u, e, U, m, uc);
		REALIZE(s, e, S, kk);
		REALIZE(v, e, V, vr, n);
	}
	for (k = 0; k < bb; k++) {
		const double *Ak = A + k * m * n, *Uk = U + k * m * uc, *Sk = S + k * kk, *Vk = V + k * vr * n;
		double Vt[64];

		for (i = 0; i < kk; i++) {
			double nrm = 0;

			assert_true(Sk[i] >= 0);
			if (i && Sk[i] > Sk[i - 1])
				fail_msg("svd: S[%lld] = %g > S[%lld] = %g (seed %u)", (long long)i, Sk[i], (long long)i - 1,
				         Sk[i - 1], seed);
			for (j = 0; j < m; j++)
				nrm += Uk[j * uc + i] * Uk[j * uc + i];
			near(sqrt(nrm), 1, 1e-5 * (m + n), "|U[:, i]|", i, __LINE__);
		}
		for (i = 0; i < m; i++)   /* U[:, :k] diag(S) V^T[:k, :] */
			for (j = 0; j < n; j++) {
				double x = 0;

				for (l = 0; l < kk; l++)
					x += Uk[i * uc + l] * Sk[l] * Vk[l * n + j];
				P[i * n + j] = x;
			}
		for (i = 0; i < m * n; i++)
			near(P[i], Ak[i], 2e-6 * (m + n) * (1 + scale), "U diag(S) V^T", i, __LINE__);
		for (i = 0; i < vr; i++)   /* V^T's rows orthonormal */
			for (j = 0; j < n; j++)
				Vt[j * vr + i] = Vk[i * n + j];
		orthonormal_cols(Vt, n, vr, 1e-5 * (m + n), "V^T V", __LINE__);
		if (!conditioned)
			continue;
		if (m < n) {   /* the singular values of A are those of A^T (A A^T is the smaller) */
			double At[64];

			for (i = 0; i < m; i++)
				for (j = 0; j < n; j++)
					At[j * m + i] = Ak[i * n + j];
			singular_values(At, n, m, want);
		} else
			singular_values(Ak, m, n, want);
		for (i = 0; i < kk; i++)
			near(Sk[i], want[i], 1e-5 * (m + n), "S", i, __LINE__);
		/* four sweeps leave up to a few 1e-4 here at num = 8 (seed 159: 2.9e-4) */
		snprintf(what, sizeof what, "U^T U of a conditioned (%lld, %lld, %lld)", (long long)b, (long long)m,
		         (long long)n);
		orthonormal_cols(Uk, m, uc, 1e-4 * (m + n), what, __LINE__);
	}
}

static void
test_svd(void **state)
{
	int c;

	for (c = 0; c < 2; c++) {   /* conditioned, then any random matrix */
		check_svd(0, 2, 2, 1, !c);
		check_svd(0, 4, 4, 1, !c);
		check_svd(0, 5, 5, 0, !c);   /* odd num: the other round robin */
		check_svd(0, 6, 3, 1, !c);   /* tall */
		check_svd(0, 6, 3, 0, !c);
		check_svd(0, 3, 6, 1, !c);   /* wide: on A^T, U and V exchanged */
		check_svd(0, 3, 6, 0, !c);
		check_svd(0, 8, 8, 1, !c);
		check_svd(2, 4, 3, 1, !c);   /* batch */
		check_svd(3, 3, 5, 0, !c);
		check_svd(2, 5, 5, 1, !c);
		check_svd(0, 1, 1, 1, !c);   /* num = 1: no pair to rotate (tinygrad's split(0) raises) */
		check_svd(0, 4, 1, 0, !c);
		check_svd(0, 1, 4, 1, !c);
	}
	{
		/* a zero matrix: S = 0, V = I, and U's first num columns zero (tinygrad's S != 0 guard) */
		double z[6] = { 0 }, U[9], S[2], V[4];
		int64_t s[2] = { 3, 2 }, i;
		Err e = { "" };
		UOp *u, *sv, *v;

		assert_int_equal(tensor_svd(C, tensor_from(C, DT_FLOAT32, z, s, 2, &e), 1, &u, &sv, &v, &e), 0);
		REALIZE(u, e, U, 3, 3);
		REALIZE(sv, e, S, 2);
		REALIZE(v, e, V, 2, 2);
		for (i = 0; i < 9; i++)
			assert_true(U[i] == (i == 8));
		assert_true(S[0] == 0 && S[1] == 0);
		for (i = 0; i < 4; i++)
			assert_true(V[i] == (i % 3 == 0));
	}
	{
		/* a diagonal matrix with known singular values, out of order: sorted, with signs carried by U */
		double A[9] = { 1, 0, 0, 0, -3, 0, 0, 0, 2 }, S[3], want[3] = { 3, 2, 1 };
		int64_t s[2] = { 3, 3 }, i;
		Err e = { "" };
		UOp *u, *sv, *v;

		assert_int_equal(tensor_svd(C, tensor_from(C, DT_FLOAT32, A, s, 2, &e), 1, &u, &sv, &v, &e), 0);
		REALIZE(sv, e, S, 3);
		for (i = 0; i < 3; i++)
			near(S[i], want[i], 1e-6, "S of diag(1, -3, 2)", i, __LINE__);
	}
	{
		/* a random 16 x 16 batch of 2 (64 Jacobi rounds) realizes and satisfies U diag(S) V^T = A, V orthogonal
		** (U's columns are not orthogonal there: check_svd says why) */
		double A[2 * 16 * 16], U[2 * 16 * 16], S[2 * 16], V[2 * 16 * 16], P[16 * 16];
		int64_t i, j, l, k;
		Err e = { "" };
		UOp *u, *sv, *v, *a = rmat(A, 2, 16, 16, DT_FLOAT32);

		assert_int_equal(tensor_svd(C, a, 1, &u, &sv, &v, &e), 0);
		REALIZE(u, e, U, 2, 16, 16);
		REALIZE(sv, e, S, 2, 16);
		REALIZE(v, e, V, 2, 16, 16);
		for (k = 0; k < 2; k++) {
			for (i = 0; i < 16; i++)
				for (j = 0; j < 16; j++) {
					double x = 0;

					for (l = 0; l < 16; l++)
						x += U[k * 256 + i * 16 + l] * S[k * 16 + l] * V[k * 256 + l * 16 + j];
					P[i * 16 + j] = x;
				}
			for (i = 0; i < 256; i++)
				near(P[i], A[k * 256 + i], 1e-4, "16 x 16: U diag(S) V^T", i, __LINE__);
			for (i = 0; i < 16; i++)   /* V^T's rows: a product of rotations */
				for (j = 0; j < 16; j++) {
					double x = 0;

					for (l = 0; l < 16; l++)
						x += V[k * 256 + i * 16 + l] * V[k * 256 + j * 16 + l];
					near(x, i == j, 1e-5, "16 x 16: V^T V", i * 16 + j, __LINE__);
				}
		}
	}
}

/* ---- newton_schulz ---- */

/* The iteration in float64: G = A / (|A|_F + eps), then G = sum_i p[i] (G G^T)^i G, on A^T when m > n. */
static void
ns_ref(const double *A0, int64_t m0, int64_t n0, int steps, const double *p, int np, double eps, double *out)
{
	double A[64], G[64], W[64], T[64], T2[64], acc[64], nrm = 0;
	int64_t m = m0 <= n0 ? m0 : n0, n = m0 <= n0 ? n0 : m0, i, j;
	int s, k;

	for (i = 0; i < m; i++)
		for (j = 0; j < n; j++)
			A[i * n + j] = m0 <= n0 ? A0[i * n + j] : A0[j * m + i];
	for (i = 0; i < m * n; i++)
		nrm += A[i] * A[i];
	for (i = 0; i < m * n; i++)
		G[i] = A[i] / (sqrt(nrm) + eps);
	for (s = 0; s < steps; s++) {
		mm(G, G, W, m, n, m, 0, 1);   /* G G^T */
		memcpy(T, G, sizeof(double) * (size_t)(m * n));
		for (i = 0; i < m * n; i++)
			acc[i] = p[0] * G[i];
		for (k = 1; k < np; k++) {
			mm(W, T, T2, m, m, n, 0, 0);
			memcpy(T, T2, sizeof(double) * (size_t)(m * n));
			for (i = 0; i < m * n; i++)
				acc[i] += p[k] * T[i];
		}
		memcpy(G, acc, sizeof(double) * (size_t)(m * n));
	}
	for (i = 0; i < m0; i++)
		for (j = 0; j < n0; j++)
			out[i * n0 + j] = m0 <= n0 ? G[i * n0 + j] : G[j * m0 + i];
}

static void
check_ns(int64_t b, int64_t m, int64_t n, int steps, const double *p, int np, double eps, DType t)
{
	double A[3 * 64], G[3 * 64], want[64];
	int64_t bb = b ? b : 1, k, i;
	Err e = { "" };
	UOp *g = tensor_newton_schulz(C, rmat(A, b, m, n, t), steps, p, np, eps, &e);

	if (!g)
		fail_msg("newton_schulz: %s", e.msg);
	assert_int_equal(g->dtype, DT_FLOAT32);
	if (b)
		REALIZE(g, e, G, b, m, n);
	else
		REALIZE(g, e, G, m, n);
	for (k = 0; k < bb; k++) {
		ns_ref(A + k * m * n, m, n, steps, p, np, eps, want);
		for (i = 0; i < m * n; i++)
			near(G[k * m * n + i], want[i], 2e-5 * (1 + steps), "newton_schulz", k * m * n + i, __LINE__);
	}
}

static void
test_newton_schulz(void **state)
{
	static const double muon[3] = { 3.4445, -4.7750, 2.0315 }, cubic[3] = { 2, -1.5, 0.5 }, lin[2] = { 1.5, -0.5 },
	                    one[1] = { 1 };

	check_ns(0, 4, 4, 5, muon, 3, 1e-7, DT_FLOAT32);
	check_ns(0, 3, 6, 3, cubic, 3, 1e-7, DT_FLOAT32);   /* wide */
	check_ns(0, 6, 3, 3, cubic, 3, 1e-7, DT_FLOAT32);   /* tall: on A^T */
	check_ns(2, 3, 5, 4, lin, 2, 1e-3, DT_FLOAT32);     /* batch, eps */
	check_ns(3, 5, 2, 2, muon, 3, 1e-7, DT_FLOAT32);
	check_ns(0, 4, 4, 0, muon, 3, 1e-7, DT_FLOAT32);    /* no step: the normalization alone */
	check_ns(0, 1, 1, 3, one, 1, 1e-7, DT_FLOAT32);
	check_ns(0, 3, 3, 2, cubic, 3, 1e-7, DT_INT32);     /* integers become float32 */
	{
		/* the cubic iteration converges to the orthogonal polar factor: G G^T = I */
		double A[16], G[16];
		int64_t s[2] = { 4, 4 };
		Err e = { "" };
		UOp *g;
		int i;

		for (i = 0; i < 16; i++)   /* well conditioned: I + 0.1 X */
			A[i] = (i % 5 == 0) + 0.1 * rnd(-1, 1);
		g = tensor_newton_schulz(C, tensor_from(C, DT_FLOAT32, A, s, 2, &e), 30, cubic, 3, 1e-7, &e);
		REALIZE(g, e, G, 4, 4);
		orthonormal_cols(G, 4, 4, 1e-4, "polar factor G^T G", __LINE__);
	}
}

/* ---- refusals ---- */

/* the call failed (-1 or NULL) and e names the operation and holds frag */
static void
refused(int failed, const Err *e, const char *op, const char *frag, int line)
{
	if (!failed)
		fail_msg("line %d: expected %s to refuse (%s)", line, op, frag);
	if (strncmp(e->msg, op, strlen(op)) != 0 || !strstr(e->msg, frag))
		fail_msg("line %d: message \"%s\" does not start with \"%s\" or lacks \"%s\"", line, e->msg, op, frag);
}

#define REFUSED(failed, e, op, frag) refused((failed), &(e), (op), (frag), __LINE__)

static void
test_refusals(void **state)
{
	static const double cubic[3] = { 2, -1.5, 0.5 };
	double v[60 * 60];
	int64_t s1 = 4;
	Err e = { "" };
	UOp *q, *r, *u, *s, *vt, *vec, *big;

	memset(v, 0, sizeof v);
	vec = tensor_from(C, DT_FLOAT32, v, &s1, 1, &e);
	REFUSED(tensor_qr(C, vec, &q, &r, &e) < 0, e, "qr", "needs two or more axes");
	assert_true(strstr(e.msg, "(4,)") != NULL);
	assert_null(q);
	REFUSED(tensor_svd(C, vec, 1, &u, &s, &vt, &e) < 0, e, "svd", "got shape (4,)");
	assert_null(u);
	REFUSED(!tensor_newton_schulz(C, vec, 1, cubic, 3, 1e-7, &e), e, "newton_schulz", "needs two or more axes");
	REFUSED(!tensor_newton_schulz(C, tensor_full(C, DT_FLOAT32, 2, NULL, 0, &e), 1, cubic, 3, 1e-7, &e), e,
	        "newton_schulz", "shape ()");
	big = rmat(v, 0, 3, 3, DT_FLOAT32);
	REFUSED(!tensor_newton_schulz(C, big, -1, cubic, 3, 1e-7, &e), e, "newton_schulz", "steps = -1");
	assert_true(strstr(e.msg, "(3, 3)") != NULL);
	REFUSED(!tensor_newton_schulz(C, big, 1, cubic, 0, 1e-7, &e), e, "newton_schulz", "at least one coefficient");
	REFUSED(!tensor_newton_schulz(C, big, 1, NULL, 3, 1e-7, &e), e, "newton_schulz", "at least one coefficient");
	{
		/* past the graph's depth: 60 x 60 unrolls 240 Jacobi rounds */
		UOp *a = rmat(v, 0, 60, 60, DT_FLOAT32);

		REFUSED(tensor_svd(C, a, 1, &u, &s, &vt, &e) < 0, e, "svd", "UOP_MAXDEPTH");
		assert_true(strstr(e.msg, "(60, 60)") != NULL && strstr(e.msg, "240 Jacobi rounds") != NULL);
	}
	{
		/* a rank that leaves the matmuls no room */
		int64_t sh[14] = { 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 2, 2 };
		UOp *a = tensor_full(C, DT_FLOAT32, 1, sh, 14, &e);

		REFUSED(tensor_qr(C, a, &q, &r, &e) < 0, e, "qr", "batch axes");
	}
	/* a NULL operand passes through with e untouched */
	strcpy(e.msg, "earlier");
	assert_int_equal(tensor_qr(C, NULL, &q, &r, &e), -1);
	assert_int_equal(tensor_svd(C, NULL, 0, &u, &s, &vt, &e), -1);
	assert_null(tensor_newton_schulz(C, NULL, 1, cubic, 3, 1e-7, &e));
	assert_string_equal(e.msg, "earlier");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_qr, setup, teardown),
		cmocka_unit_test_setup_teardown(test_svd, setup, teardown),
		cmocka_unit_test_setup_teardown(test_newton_schulz, setup, teardown),
		cmocka_unit_test_setup_teardown(test_refusals, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
