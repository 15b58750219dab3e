/* minmax.c - derived min_max of every op (interval analysis) and checked constant arithmetic. */
#include <math.h>
#include <string.h>

#include "uop.h"

int uck_add(int64_t a, int64_t b, int64_t *r) { return __builtin_add_overflow(a, b, r) ? -1 : 0; }
int uck_sub(int64_t a, int64_t b, int64_t *r) { return __builtin_sub_overflow(a, b, r) ? -1 : 0; }
int uck_mul(int64_t a, int64_t b, int64_t *r) { return __builtin_mul_overflow(a, b, r) ? -1 : 0; }

int
uck_fdiv(int64_t a, int64_t b, int64_t *r)
{
	int64_t q;

	if (b == 0 || (a == INT64_MIN && b == -1))
		return -1;
	q = a / b;
	if ((a % b != 0) && ((a < 0) != (b < 0)))
		q--;
	*r = q;
	return 0;
}

int
uck_fmod(int64_t a, int64_t b, int64_t *r)
{
	int64_t m;

	if (b == 0)
		return -1;
	if (b == -1) {
		*r = 0;
		return 0;
	}
	m = a % b;
	if (m != 0 && ((m < 0) != (b < 0)))
		m += b;
	*r = m;
	return 0;
}

static int
fits(DType t, int64_t v)
{
	int64_t lo, hi;

	dtype_range(t, &lo, &hi);
	return v >= lo && v <= hi;
}

int
uop_fold(Op op, DType t, const int64_t *v, int n, int64_t *r)
{
	int64_t x = v[0], y = n > 1 ? v[1] : 0;
	int rc = 0;

	switch (op) {
	case OP_NEG: rc = uck_sub(0, x, r); break;
	case OP_CAST:
		*r = t == DT_BOOL ? x != 0 : x;
		break;
	case OP_ADD: rc = uck_add(x, y, r); break;
	case OP_SUB: rc = uck_sub(x, y, r); break;
	case OP_MUL: rc = uck_mul(x, y, r); break;
	case OP_IDIV: rc = uck_fdiv(x, y, r); break;
	case OP_MOD: rc = uck_fmod(x, y, r); break;
	case OP_MIN: *r = x < y ? x : y; break;
	case OP_MAX: *r = x > y ? x : y; break;
	case OP_CMPLT: *r = x < y; break;
	case OP_CMPNE: *r = x != y; break;
	case OP_CMPEQ: *r = x == y; break;
	case OP_WHERE: *r = x ? y : v[2]; break;
	case OP_AND: *r = x & y; break;
	case OP_OR: *r = x | y; break;
	case OP_XOR: *r = x ^ y; break;
	case OP_SHL:
		/* defined as multiplication by 2^y */
		if (y < 0 || y > 62)
			return -1;
		rc = uck_mul(x, (int64_t)1 << y, r);
		break;
	case OP_SHR:
		/* arithmetic: floor division by 2^y */
		if (y < 0 || y > 63)
			return -1;
		*r = y == 63 ? (x < 0 ? -1 : 0) : (x >> y);
		break;
	default:
		return -1;
	}
	if (rc < 0 || !fits(t, *r))
		return -1;
	return 0;
}

/* [lo, hi] as the min and max of four candidates, or the dtype range when one overflowed. */
static void
span4(const int64_t *c, int ok, DType t, int64_t *lo, int64_t *hi)
{
	int i;

	if (!ok) {
		dtype_range(t, lo, hi);
		return;
	}
	*lo = *hi = c[0];
	for (i = 1; i < 4; i++) {
		if (c[i] < *lo)
			*lo = c[i];
		if (c[i] > *hi)
			*hi = c[i];
	}
}

static void
mul_range(int64_t a, int64_t A, int64_t b, int64_t B, DType t, int64_t *lo, int64_t *hi)
{
	int64_t c[4];
	int ok = uck_mul(a, b, &c[0]) == 0 && uck_mul(a, B, &c[1]) == 0
	      && uck_mul(A, b, &c[2]) == 0 && uck_mul(A, B, &c[3]) == 0;

	span4(c, ok, t, lo, hi);
}

/* Floor division of [a,A] by [b,B]. With a divisor of one sign, the quotient
** is monotone in each argument, so the corners bound it; a divisor range
** that contains 0 (an error at 0) still gives |q| <= max(|a|, |A|). */
static void
div_range(int64_t a, int64_t A, int64_t b, int64_t B, DType t, int64_t *lo, int64_t *hi)
{
	int64_t c[4], m;
	int ok;

	if (b > 0 || B < 0) {
		ok = uck_fdiv(a, b, &c[0]) == 0 && uck_fdiv(a, B, &c[1]) == 0
		  && uck_fdiv(A, b, &c[2]) == 0 && uck_fdiv(A, B, &c[3]) == 0;
		span4(c, ok, t, lo, hi);
		return;
	}
	if (a == INT64_MIN) {
		dtype_range(t, lo, hi);
		return;
	}
	m = -a > A ? -a : A;
	*lo = -m;
	*hi = m;
}

static void
mod_range(int64_t a, int64_t A, int64_t b, int64_t B, DType t, int64_t *lo, int64_t *hi)
{
	int64_t qa, qA;

	if (b == B && b != 0 && uck_fdiv(a, b, &qa) == 0 && uck_fdiv(A, b, &qA) == 0 && qa == qA) {
		/* one band: x % b is x - qa*b, monotone */
		uck_fmod(a, b, lo);
		uck_fmod(A, b, hi);
		return;
	}
	if (b > 0) {
		*lo = 0;
		*hi = B - 1;
		if (a >= 0 && A < *hi)
			*hi = A;
		return;
	}
	if (B < 0) {
		*lo = b + 1;
		*hi = 0;
		if (A <= 0 && a > *lo)
			*lo = a;
		return;
	}
	if (b == INT64_MIN) {
		dtype_range(t, lo, hi);
		return;
	}
	*lo = b < 0 ? b + 1 : 0;
	*hi = B > 0 ? B - 1 : 0;
}

/* The smallest 2^k - 1 >= v, for v >= 0. */
static int64_t
ones(int64_t v)
{
	int64_t m = 0;

	while (m < v)
		m = m * 2 + 1;
	return m;
}

void
uop_minmax(Op op, DType t, UOp *const *s, int n, const int64_t *arg, int64_t *lo, int64_t *hi)
{
	int64_t a = n > 0 ? s[0]->vmin : 0, A = n > 0 ? s[0]->vmax : 0;
	int64_t b = n > 1 ? s[1]->vmin : 0, B = n > 1 ? s[1]->vmax : 0;
	int64_t c[4];
	int ok;

	dtype_range(t, lo, hi);
	switch (op) {
	case OP_CONST:
		if (t == DT_FLOAT16 || t == DT_BFLOAT16 || t == DT_FLOAT32 || t == DT_FLOAT64) {
			double d;   /* the enclosing integer interval of the value */

			memcpy(&d, arg, sizeof d);
			if (d >= -9.2e18 && d <= 9.2e18) {
				*lo = (int64_t)floor(d);
				*hi = (int64_t)ceil(d);
			}
			return;
		}
		*lo = *hi = arg[0];
		return;
	/* the spec's table: views, markers and copies keep their source's range */
	case OP_PERMUTE: case OP_FLIP: case OP_RESHAPE: case OP_EXPAND: case OP_SHRINK:
	case OP_INDEX: case OP_COPY: case OP_REPLICATED: case OP_CONTIGUOUS: case OP_DETACH:
	case OP_AFTER: case OP_LOAD: case OP_RANGE: case OP_SHUFFLE:
		*lo = a;
		*hi = A;
		return;
	case OP_PAD:     /* padding adds zeros */
		*lo = a < 0 ? a : 0;
		*hi = A > 0 ? A : 0;
		return;
	case OP_STACK:
		for (ok = 0; ok < n; ok++) {
			if (s[ok]->vmin < a) a = s[ok]->vmin;
			if (s[ok]->vmax > A) A = s[ok]->vmax;
		}
		*lo = a;
		*hi = A;
		return;
	case OP_VAR:
		*lo = arg[0];
		*hi = arg[1];
		return;
	case OP_NEG:
		if (a != INT64_MIN) {
			*lo = -A;
			*hi = -a;
		}
		break;
	case OP_CAST:
		if (t == DT_BOOL) {
			*lo = (a > 0 || A < 0) ? 1 : 0;
			*hi = (a == 0 && A == 0) ? 0 : 1;
			return;
		}
		if (!fits(t, a) || !fits(t, A))
			return;   /* wraps: the whole dtype */
		*lo = a;
		*hi = A;
		return;
	case OP_ADD:
		if (uck_add(a, b, lo) < 0 || uck_add(A, B, hi) < 0)
			dtype_range(t, lo, hi);
		break;
	case OP_SUB:
		if (uck_sub(a, B, lo) < 0 || uck_sub(A, b, hi) < 0)
			dtype_range(t, lo, hi);
		break;
	case OP_MUL:
		mul_range(a, A, b, B, t, lo, hi);
		break;
	case OP_IDIV:
		div_range(a, A, b, B, t, lo, hi);
		break;
	case OP_MOD:
		mod_range(a, A, b, B, t, lo, hi);
		break;
	case OP_MIN:
		*lo = a < b ? a : b;
		*hi = A < B ? A : B;
		break;
	case OP_MAX:
		*lo = a > b ? a : b;
		*hi = A > B ? A : B;
		break;
	case OP_CMPLT:
		*lo = A < b;
		*hi = a < B;
		return;
	case OP_CMPNE:
	case OP_CMPEQ:
		if (a == A && b == B && a == b)
			*lo = *hi = 0;
		else if (A < b || B < a)
			*lo = *hi = 1;
		else {
			*lo = 0;
			*hi = 1;
			return;
		}
		if (op == OP_CMPEQ)
			*lo = *hi = !*lo;
		return;
	case OP_WHERE:
		if (a == A) {   /* the condition is decided */
			*lo = a ? b : s[2]->vmin;
			*hi = a ? B : s[2]->vmax;
		} else {
			*lo = b < s[2]->vmin ? b : s[2]->vmin;
			*hi = B > s[2]->vmax ? B : s[2]->vmax;
		}
		break;
	case OP_AND:
		if (a >= 0 && b >= 0) {
			*lo = 0;
			*hi = A < B ? A : B;
		} else if (a >= 0) {
			*lo = 0;
			*hi = A;
		} else if (b >= 0) {
			*lo = 0;
			*hi = B;
		}
		break;
	case OP_OR:
	case OP_XOR:
		if (a >= 0 && b >= 0) {
			*lo = op == OP_OR ? (a > b ? a : b) : 0;
			*hi = ones(A > B ? A : B);
		}
		break;
	case OP_SHL:
		if (b >= 0 && B <= 62) {
			mul_range(a, A, (int64_t)1 << b, (int64_t)1 << B, t, lo, hi);
			break;
		}
		return;
	case OP_SHR:
		if (b >= 0 && B <= 62) {
			div_range(a, A, (int64_t)1 << b, (int64_t)1 << B, t, lo, hi);
			break;
		}
		return;
	default:
		return;
	}
	/* a result outside the dtype wraps at run time: claim nothing */
	if (!fits(t, *lo) || !fits(t, *hi))
		dtype_range(t, lo, hi);
	(void)c;
	(void)ok;
}
