/* tensor_math.c - tinygrad's elementwise Tensor methods and activations, composed from the primitives. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "internal.h"

/* PI and SQRT2 are not C11 */
#define PI 3.14159265358979323846
#define SQRT2 1.41421356237309504880

/*
** Each function builds the graph its comment (and tensor.h's) writes, as
** tinygrad's Tensor method of the same name does (mixin/elementwise.py of
** tinygrad 0.14), from the primitives of tensor.c and the compositions of
** tensor_compose.c. dtypes as tinygrad's: a function of real numbers (exp,
** erf, gelu, ...) turns an integer or bool operand into float32 first and
** keeps float16 and bfloat16; the ones whose constants are integers (abs,
** sign, square, relu6, clamp with integer bounds, floor on integers) keep
** an integer dtype. A NULL operand passes through.
*/

/* ---- logic, sign, rounding ---- */

/* logical_not(x) = cast(x, bool) != true */
UOp *
tensor_logical_not(UCtx *c, UOp *a, Err *e)
{
	a = a ? tensor_cast(c, DT_BOOL, a, e) : NULL;
	return a ? ne(c, a, kd(c, DT_BOOL, 1), e) : NULL;
}

/* neg(x) = Neg(x); bool: logical_not */
UOp *
tensor_neg(UCtx *c, UOp *a, Err *e)
{
	if (a && a->dtype == DT_BOOL)
		return tensor_logical_not(c, a, e);
	return tensor_unary(c, OP_NEG, a, e);
}

/* bitwise_not(x) = x ^ ~0 (bool: logical_not); floats refused */
UOp *
tensor_bitwise_not(UCtx *c, UOp *a, Err *e)
{
	if (!a)
		return NULL;
	if (a->dtype == DT_BOOL)
		return tensor_logical_not(c, a, e);
	if (dtype_is_float(a->dtype))
		return err_set(e, "bitwise_not: needs an integer or bool tensor, got %s", dtype_name(a->dtype)), NULL;
	return tensor_alu(c, OP_XOR, a, kd(c, (DType)a->dtype, -1), e);
}

/* sign(x) = (x != 0):where((x < 0):where(-1, 1), 0), in x's dtype */
UOp *
tensor_sign(UCtx *c, UOp *a, Err *e)
{
	DType t;
	UOp *s;

	if (!a)
		return NULL;
	t = (DType)a->dtype;
	s = sel(c, lt(c, a, kd(c, t, 0), e), kd(c, t, -1), kd(c, t, 1), e);
	return sel(c, ne(c, a, kd(c, t, 0), e), s, kd(c, t, 0), e);
}

/* abs(x) = x * sign(x) */
UOp *
tensor_abs(UCtx *c, UOp *a, Err *e)
{
	return mul(c, a, tensor_sign(c, a, e), e);
}

/* square(x) = x * x */
UOp *
tensor_square(UCtx *c, UOp *a, Err *e)
{
	return mul(c, a, a, e);
}

/* rsqrt(x) = Recip(Sqrt(x)) */
UOp *
tensor_rsqrt(UCtx *c, UOp *a, Err *e)
{
	return tensor_unary(c, OP_RECIP, tensor_unary(c, OP_SQRT, a, e), e);
}

/* floor(x) = (x < t):where(t - 1, t) with t = trunc(x); integers and bool unchanged */
UOp *
tensor_floor(UCtx *c, UOp *a, Err *e)
{
	UOp *t;

	if (!a || !dtype_is_float(a->dtype))
		return a;
	t = tensor_unary(c, OP_TRUNC, a, e);
	return sel(c, lt(c, a, t, e), addk(c, t, -1, e), t, e);
}

/* ceil(x) = (x > t):where(t + 1, t) with t = trunc(x); integers and bool unchanged */
UOp *
tensor_ceil(UCtx *c, UOp *a, Err *e)
{
	UOp *t;

	if (!a || !dtype_is_float(a->dtype))
		return a;
	t = tensor_unary(c, OP_TRUNC, a, e);
	return sel(c, lt(c, t, a, e), addk(c, t, 1, e), t, e);
}

/*
** round(x), half to even: ((x > 0) == (trunc(b) == b)):where(ceil(x - 0.5),
** floor(x + 0.5)) with b = trunc(x) / 2 (trunc(x) even); integers become
** float32 first, as tinygrad's (its `/ 2.0` promotes them).
*/
UOp *
tensor_round(UCtx *c, UOp *a, Err *e)
{
	UOp *b, *even, *pos;

	a = flt(c, a, e);
	b = mulk(c, tensor_unary(c, OP_TRUNC, a, e), 0.5, e);
	even = tensor_eq(c, tensor_unary(c, OP_TRUNC, b, e), b, e);
	pos = a ? lt(c, kd(c, (DType)a->dtype, 0), a, e) : NULL;
	return sel(c, tensor_eq(c, pos, even, e), tensor_ceil(c, addk(c, a, -0.5, e), e),
	           tensor_floor(c, addk(c, a, 0.5, e), e), e);
}

/* isnan(x) = x != x */
UOp *
tensor_isnan(UCtx *c, UOp *a, Err *e)
{
	return ne(c, a, a, e);
}

/* isinf(x) = (x == inf) | (x == -inf), each side when asked for; integers: all false */
UOp *
tensor_isinf(UCtx *c, UOp *a, int pos, int neg, Err *e)
{
	UOp *r = NULL, *s;

	if (!a)
		return NULL;
	if (!dtype_is_float(a->dtype) || (!pos && !neg))
		return tensor_full(c, DT_BOOL, 0, a->shape, a->ndim, e);
	if (pos)
		r = tensor_eq(c, a, kd(c, (DType)a->dtype, INFINITY), e);
	if (neg) {
		s = tensor_eq(c, a, kd(c, (DType)a->dtype, -INFINITY), e);
		r = r ? bor(c, r, s, e) : s;
	}
	return r;
}

/* isfinite(x) = logical_not(isinf(x) | isnan(x)) */
UOp *
tensor_isfinite(UCtx *c, UOp *a, Err *e)
{
	return tensor_logical_not(c, bor(c, tensor_isinf(c, a, 1, 1, e), tensor_isnan(c, a, e), e), e);
}

/* ---- functions of real numbers ---- */

/* Horner's rule as tinygrad's polyN: ((p0 x + p1) x + ...) + pn */
static UOp *
poly(UCtx *c, UOp *x, const double *p, int n, Err *e)
{
	UOp *acc;
	int i;

	if (!x)
		return NULL;
	acc = kf(c, x, p[0]);
	for (i = 1; i < n; i++)
		acc = addk(c, mul(c, acc, x, e), p[i], e);
	return acc;
}

/* log10(x) = log2(x) * log10(2) */
UOp *
tensor_log10(UCtx *c, UOp *a, Err *e)
{
	return mulk(c, tensor_unary(c, OP_LOG2, a, e), 0.30102999566398120, e);
}

/* tan(x) = sin(x) / cos(x) */
UOp *
tensor_tan(UCtx *c, UOp *a, Err *e)
{
	a = flt(c, a, e);
	return tensor_div(c, tensor_unary(c, OP_SIN, a, e), tensor_cos(c, a, e), e);
}

/* sinh(x) = (exp(x) - exp(-x)) / 2; cosh(x) = (exp(x) + exp(-x)) / 2 */
static UOp *
hyp(UCtx *c, UOp *a, int plus, Err *e)
{
	UOp *p, *m;

	a = flt(c, a, e);
	p = tensor_exp(c, a, e);
	m = tensor_exp(c, tensor_unary(c, OP_NEG, a, e), e);
	return mulk(c, plus ? add(c, p, m, e) : sub(c, p, m, e), 0.5, e);
}

UOp *tensor_sinh(UCtx *c, UOp *a, Err *e) { return hyp(c, a, 0, e); }
UOp *tensor_cosh(UCtx *c, UOp *a, Err *e) { return hyp(c, a, 1, e); }

/* asinh(x) = log(x + sqrt(x^2 + 1)); acosh(x) = log(x + sqrt(x^2 - 1)) */
static UOp *
ahyp(UCtx *c, UOp *a, double one, Err *e)
{
	a = flt(c, a, e);
	return tensor_log(c, add(c, a, tensor_unary(c, OP_SQRT, addk(c, tensor_square(c, a, e), one, e), e), e), e);
}

UOp *tensor_asinh(UCtx *c, UOp *a, Err *e) { return ahyp(c, a, 1, e); }
UOp *tensor_acosh(UCtx *c, UOp *a, Err *e) { return ahyp(c, a, -1, e); }

/* atanh(x) = log((1 + x) / (1 - x)) / 2 */
UOp *
tensor_atanh(UCtx *c, UOp *a, Err *e)
{
	UOp *num, *den;

	a = flt(c, a, e);
	num = addk(c, a, 1, e);
	den = a ? sub(c, kf(c, a, 1), a, e) : NULL;
	return mulk(c, tensor_log(c, tensor_div(c, num, den, e), e), 0.5, e);
}

/* asin(x) = sign(x) (pi/2 - sqrt(1 - |x|) poly(|x|)) (Abramowitz and Stegun 4.4.46) */
UOp *
tensor_asin(UCtx *c, UOp *a, Err *e)
{
	static const double p[] = { -0.0012624911, 0.0066700901, -0.0170881256, 0.0308918810,
	                            -0.0501743046, 0.0889789874, -0.2145988016, 1.5707963050 };
	UOp *ax, *r;

	a = flt(c, a, e);
	ax = tensor_abs(c, a, e);
	r = ax ? tensor_unary(c, OP_SQRT, sub(c, kf(c, ax, 1), ax, e), e) : NULL;
	r = mul(c, r, poly(c, ax, p, 8, e), e);
	r = r ? sub(c, kf(c, r, PI / 2), r, e) : NULL;
	return mul(c, tensor_sign(c, a, e), r, e);
}

/* acos(x) = pi/2 - asin(x) */
UOp *
tensor_acos(UCtx *c, UOp *a, Err *e)
{
	a = tensor_asin(c, a, e);
	return a ? sub(c, kf(c, a, PI / 2), a, e) : NULL;
}

/* atan(x) = asin(x / sqrt(1 + x^2)) */
UOp *
tensor_atan(UCtx *c, UOp *a, Err *e)
{
	a = flt(c, a, e);
	return tensor_asin(c, tensor_div(c, a, tensor_unary(c, OP_SQRT, addk(c, tensor_square(c, a, e), 1, e), e), e),
	                   e);
}

/* erf(x) = sign(x) (1 - t poly(t) exp(-x^2)), t = 1 / (1 + 0.3275911 |x|) (A&S 7.1.26) */
UOp *
tensor_erf(UCtx *c, UOp *a, Err *e)
{
	static const double p[] = { 1.061405429, -1.453152027, 1.421413741, -0.284496736, 0.254829592 };
	UOp *t, *r;

	a = flt(c, a, e);
	t = tensor_unary(c, OP_RECIP, addk(c, mulk(c, tensor_abs(c, a, e), 0.3275911, e), 1, e), e);
	r = mul(c, mul(c, t, poly(c, t, p, 5, e), e), tensor_exp(c, tensor_unary(c, OP_NEG, tensor_square(c, a, e), e), e),
	        e);
	r = r ? sub(c, kf(c, r, 1), r, e) : NULL;
	return mul(c, tensor_sign(c, a, e), r, e);
}

/* ---- activations ---- */

/* tinygrad's relu: (x > 0):where(x, 0) (NaN gives 0) */
static UOp *
relu_w(UCtx *c, UOp *a, Err *e)
{
	UOp *z = a ? kd(c, (DType)a->dtype, 0) : NULL;

	return a ? sel(c, lt(c, z, a, e), a, z, e) : NULL;
}

/* relu6(x) = relu(x) - relu(x - 6) */
UOp *
tensor_relu6(UCtx *c, UOp *a, Err *e)
{
	return sub(c, relu_w(c, a, e), relu_w(c, addk(c, a, -6, e), e), e);
}

/* hardswish(x) = x relu6(x + 3) / 6 */
UOp *
tensor_hardswish(UCtx *c, UOp *a, Err *e)
{
	a = flt(c, a, e);
	return mulk(c, mul(c, a, tensor_relu6(c, addk(c, a, 3, e), e), e), 1.0 / 6, e);
}

/* hardsigmoid(x, alpha, beta) = relu(alpha x + beta) - relu(alpha x + beta - 1) */
UOp *
tensor_hardsigmoid(UCtx *c, UOp *a, double alpha, double beta, Err *e)
{
	UOp *y;

	a = flt(c, a, e);
	y = addk(c, mulk(c, a, alpha, e), beta, e);
	return sub(c, relu_w(c, y, e), relu_w(c, addk(c, y, -1, e), e), e);
}

/* A bound of clamp and hardtanh: an integer tensor keeps its dtype for an integral bound. */
static UOp *
bound(UCtx *c, const UOp *a, double v)
{
	if (is_intdt((DType)a->dtype) && v == floor(v) && fabs(v) < 9007199254740992.0)
		return kd(c, (DType)a->dtype, v);
	return kf(c, a, v);
}

/* clamp(x, lo, hi) = (r > hi):where(hi, r) with r = (x < lo):where(lo, x); NULL: no bound */
UOp *
tensor_clamp(UCtx *c, UOp *a, UOp *lo, UOp *hi, Err *e)
{
	if (!a)
		return NULL;
	if (!lo && !hi)
		return err_set(e, "clamp: at least one of min and max is needed"), NULL;
	if (lo)
		a = sel(c, lt(c, a, lo, e), lo, a, e);
	if (hi)
		a = sel(c, tensor_gt(c, a, hi, e), hi, a, e);
	return named_err(a, e, "clamp");
}

/* hardtanh(x, lo, hi) = clamp(x, lo, hi); an unsigned x is never below a negative lo (tinygrad
** compares the values), so that bound goes */
UOp *
tensor_hardtanh(UCtx *c, UOp *a, double lo, double hi, Err *e)
{
	int unsig = a && dtype_is_unsigned((DType)a->dtype);

	return a ? tensor_clamp(c, a, unsig && lo < 0 ? NULL : bound(c, a, lo), bound(c, a, hi), e) : NULL;
}

/* leaky_relu(x, slope) = (x < 0):where(slope x, x) */
UOp *
tensor_leaky_relu(UCtx *c, UOp *a, double slope, Err *e)
{
	a = flt(c, a, e);
	return a ? sel(c, lt(c, a, kf(c, a, 0), e), mulk(c, a, slope, e), a, e) : NULL;
}

/* elu(x, alpha) = relu(x) - alpha relu(1 - exp(x)) */
UOp *
tensor_elu(UCtx *c, UOp *a, double alpha, Err *e)
{
	UOp *x;

	a = flt(c, a, e);
	x = tensor_exp(c, a, e);
	x = x ? sub(c, kf(c, x, 1), x, e) : NULL;
	return sub(c, relu_w(c, a, e), mulk(c, relu_w(c, x, e), alpha, e), e);
}

/* celu(x, alpha) = max(x, 0) + min(alpha (exp(x / alpha) - 1), 0) */
UOp *
tensor_celu(UCtx *c, UOp *a, double alpha, Err *e)
{
	UOp *x;

	a = flt(c, a, e);
	x = a ? tensor_div(c, a, kf(c, a, alpha), e) : NULL;
	x = mulk(c, addk(c, tensor_exp(c, x, e), -1, e), alpha, e);
	x = x ? tensor_minimum(c, x, kf(c, x, 0), e) : NULL;
	return a ? add(c, tensor_alu(c, OP_MAX, a, kf(c, a, 0), e), x, e) : NULL;
}

/* selu(x, alpha, gamma) = gamma (x >= 0):where(x, alpha (exp(x) - 1)) */
UOp *
tensor_selu(UCtx *c, UOp *a, double alpha, double gamma, Err *e)
{
	UOp *n;

	a = flt(c, a, e);
	n = mulk(c, addk(c, tensor_exp(c, a, e), -1, e), alpha, e);
	return a ? mulk(c, sel(c, tensor_ge(c, a, kf(c, a, 0), e), a, n, e), gamma, e) : NULL;
}

/* logaddexp(a, b) = log(exp(a - m) + exp(b - m)) + m with m = max(a, b) */
UOp *
tensor_logaddexp(UCtx *c, UOp *a, UOp *b, Err *e)
{
	UOp *m;

	a = flt(c, a, e);
	b = flt(c, b, e);
	m = tensor_alu(c, OP_MAX, a, b, e);
	return named_err(add(c, tensor_log(c, add(c, tensor_exp(c, sub(c, a, m, e), e), tensor_exp(c, sub(c, b, m, e), e), e), e),
	           m, e), e, "logaddexp");
}

/* softplus(x, beta) = logaddexp(beta x, 0) / beta */
UOp *
tensor_softplus(UCtx *c, UOp *a, double beta, Err *e)
{
	UOp *x;

	a = flt(c, a, e);
	x = mulk(c, a, beta, e);
	x = x ? tensor_logaddexp(c, x, kf(c, x, 0), e) : NULL;
	return mulk(c, x, 1 / beta, e);
}

/* mish(x) = x tanh(softplus(x)) */
UOp *
tensor_mish(UCtx *c, UOp *a, Err *e)
{
	a = flt(c, a, e);
	return mul(c, a, tensor_tanh(c, tensor_softplus(c, a, 1, e), e), e);
}

/* logsigmoid(x) = -softplus(-x) */
UOp *
tensor_logsigmoid(UCtx *c, UOp *a, Err *e)
{
	a = flt(c, a, e);
	return tensor_unary(c, OP_NEG, tensor_softplus(c, tensor_unary(c, OP_NEG, a, e), 1, e), e);
}

/* softsign(x) = x / (1 + |x|) */
UOp *
tensor_softsign(UCtx *c, UOp *a, Err *e)
{
	a = flt(c, a, e);
	return tensor_div(c, a, addk(c, tensor_abs(c, a, e), 1, e), e);
}

/* swish(x) = silu(x) = x sigmoid(x) */
UOp *
tensor_silu(UCtx *c, UOp *a, Err *e)
{
	a = flt(c, a, e);
	return mul(c, a, tensor_sigmoid(c, a, e), e);
}

/* quick_gelu(x) = x sigmoid(1.702 x) */
UOp *
tensor_quick_gelu(UCtx *c, UOp *a, Err *e)
{
	a = flt(c, a, e);
	return mul(c, a, tensor_sigmoid(c, mulk(c, a, 1.702, e), e), e);
}

/*
** gelu(x, "tanh") = 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)));
** gelu(x, "none") = x 0.5 (1 + erf(x / sqrt 2)) (exact: nonzero)
*/
UOp *
tensor_gelu(UCtx *c, UOp *a, int exact, Err *e)
{
	UOp *x;

	a = flt(c, a, e);
	if (exact) {
		x = tensor_erf(c, mulk(c, a, 1 / SQRT2, e), e);
		return mul(c, mulk(c, a, 0.5, e), addk(c, x, 1, e), e);
	}
	x = add(c, a, mulk(c, mul(c, tensor_square(c, a, e), a, e), 0.044715, e), e);
	x = tensor_tanh(c, mulk(c, x, sqrt(2 / PI), e), e);
	return mul(c, mulk(c, a, 0.5, e), addk(c, x, 1, e), e);
}

/* ---- binary ---- */

/* pow(a, b) = Pow(a, b) (broadcast and promoted; an integer base with a float exponent is float) */
UOp *
tensor_pow(UCtx *c, UOp *a, UOp *b, Err *e)
{
	return named_err(tensor_alu(c, OP_POW, a, b, e), e, "pow");
}

/*
** fmod(a, b), C's remainder (the sign of a): floats a - trunc(a / b) b
** (tinygrad's); integers r = a % b (Python's, the sign of b) moved by b where
** r != 0 and the signs of r and a differ.
*/
UOp *
tensor_fmod(UCtx *c, UOp *a, UOp *b, Err *e)
{
	DType t;
	UOp *r, *fix;

	if (!a || !b)
		return NULL;
	t = dtype_promote(a->dtype, b->dtype);
	if (t == DT_BOOL)
		return err_set(e, "fmod: needs integer or float operands, got bool and bool"), NULL;
	if (dtype_is_float(t))
		return named_err(sub(c, a, mul(c, tensor_unary(c, OP_TRUNC, tensor_div(c, a, b, e), e), b, e), e), e, "fmod");
	r = tensor_alu(c, OP_MOD, a, b, e);
	if (!r)
		return NULL;
	fix = band(c, ne(c, r, kd(c, t, 0), e), ne(c, lt(c, r, kd(c, t, 0), e), lt(c, a, kd(c, t, 0), e), e), e);
	return named_err(sel(c, fix, sub(c, r, b, e), r, e), e, "fmod");
}

/*
** div(a, b, mode) with tinygrad's rounding_mode: 0 true division (Mul(a,
** Recip(b)) in float), 1 "trunc", 2 "floor". Integers: floor is IDiv (Python's
** //), trunc is a // b plus 1 where the remainder is nonzero and the signs of a
** and b differ; floats: trunc(a / b) and floor(a / b).
*/
UOp *
tensor_div_mode(UCtx *c, UOp *a, UOp *b, int mode, Err *e)
{
	DType t;
	UOp *q, *fix;

	if (!a || !b)
		return NULL;
	if (mode < 0 || mode > 2)
		return err_set(e, "div: rounding mode %d is not 0 (none), 1 (trunc) or 2 (floor)", mode), NULL;
	t = dtype_promote(a->dtype, b->dtype);
	if (mode == 0 || !is_intdt(t)) {
		q = tensor_div(c, a, b, e);
		return named_err(mode == 0 ? q : mode == 1 ? tensor_unary(c, OP_TRUNC, q, e) : tensor_floor(c, q, e), e, "div");
	}
	q = tensor_alu(c, OP_IDIV, a, b, e);
	if (mode == 2 || !q)
		return named_err(q, e, "div");
	fix = band(c, ne(c, tensor_alu(c, OP_MOD, a, b, e), kd(c, t, 0), e),
	           ne(c, lt(c, a, kd(c, t, 0), e), lt(c, b, kd(c, t, 0), e), e), e);
	return named_err(sel(c, fix, addk(c, q, 1, e), q, e), e, "div");
}

/* copysign(a, b) = ((b < 0) | (recip(b) < 0)):where(-|a|, |a|) (the recip tells -0.0) */
UOp *
tensor_copysign(UCtx *c, UOp *a, UOp *b, Err *e)
{
	DType t;
	UOp *m, *neg;

	if (!a || !b)
		return NULL;
	t = dtype_promote(a->dtype, b->dtype);
	a = tensor_cast(c, t, a, e);
	b = a ? tensor_cast(c, t, b, e) : NULL;
	m = tensor_abs(c, a, e);
	neg = b ? lt(c, b, kd(c, t, 0), e) : NULL;
	if (b && dtype_is_float(t))
		neg = bor(c, neg, lt(c, tensor_unary(c, OP_RECIP, b, e), kd(c, t, 0), e), e);
	return named_err(sel(c, neg, tensor_neg(c, m, e), m, e), e, "copysign");
}

/* lerp(a, end, w) = a + (end - a) w */
UOp *
tensor_lerp(UCtx *c, UOp *a, UOp *end, UOp *w, Err *e)
{
	return named_err(add(c, a, mul(c, sub(c, end, a, e), w, e), e), e, "lerp");
}

/* masked_fill(x, mask, v) = mask:where(v, x) */
UOp *
tensor_masked_fill(UCtx *c, UOp *a, UOp *mask, UOp *v, Err *e)
{
	if (mask && mask->dtype != DT_BOOL)
		return err_set(e, "masked_fill: the mask is %s, not bool", dtype_name(mask->dtype)), NULL;
	return named_err(sel(c, mask, v, a, e), e, "masked_fill");
}

/*
** isclose(a, b) = (isfinite(a) & isfinite(b) & (|a - b| <= atol + rtol |b|))
**   | ((isinf(a) | isinf(b)) & (a == b)) | (isnan(a) & isnan(b) & equal_nan)
*/
UOp *
tensor_isclose(UCtx *c, UOp *a, UOp *b, double rtol, double atol, int equal_nan, Err *e)
{
	UOp *fin, *tol, *inf, *r;

	if (!a || !b)
		return NULL;
	tol = mulk(c, flt(c, tensor_abs(c, b, e), e), rtol, e);
	tol = addk(c, tol, atol, e);
	fin = band(c, tensor_isfinite(c, a, e), tensor_isfinite(c, b, e), e);
	fin = band(c, fin, tensor_le(c, tensor_abs(c, sub(c, a, b, e), e), tol, e), e);
	inf = band(c, bor(c, tensor_isinf(c, a, 1, 1, e), tensor_isinf(c, b, 1, 1, e), e), tensor_eq(c, a, b, e), e);
	r = bor(c, fin, inf, e);
	if (equal_nan)
		r = bor(c, r, band(c, tensor_isnan(c, a, e), tensor_isnan(c, b, e), e), e);
	return named_err(r, e, "isclose");
}

/* ---- random tensors (from tensor_rand's Threefry bits) ---- */

/*
** randn(shape) (Box-Muller, as tinygrad's randn_like): u = rand((2, n)),
** cos(2 pi u[0]) sqrt(-2 log(1 - u[1])), cast to t, reshaped.
*/
UOp *
tensor_randn(UCtx *c, const int64_t *shape, int n, DType t, uint64_t seed, Err *e)
{
	int64_t total = 1, two[2], b[2] = { 0, 0 }, en[2];
	UOp *u, *u0, *u1, *r;
	int i;

	if (uop_shape_check("tensor.randn", shape, n, e) < 0)
		return NULL;
	if (!dtype_is_float(t))
		return err_set(e, "tensor.randn: %s is not a float dtype", dtype_name(t)), NULL;
	for (i = 0; i < n; i++)
		total *= shape[i];
	two[0] = 2;
	two[1] = total;
	u = tensor_rand(c, two, 2, DT_FLOAT32, seed, e);
	en[0] = 1;
	en[1] = total;
	u0 = tensor_shrink(c, u, b, en, 2, e);
	b[0] = 1;
	en[0] = 2;
	u1 = u0 ? tensor_shrink(c, u, b, en, 2, e) : NULL;
	u0 = tensor_cos(c, mulk(c, u0, 2 * PI, e), e);
	u1 = u1 ? sub(c, kf(c, u1, 1), u1, e) : NULL;
	u1 = tensor_unary(c, OP_SQRT, mulk(c, tensor_log(c, u1, e), -2, e), e);
	r = tensor_cast(c, t, mul(c, u0, u1, e), e);
	return r ? tensor_reshape(c, r, shape, n, e) : NULL;
}

/* uniform(shape, low, high) = ((high - low) rand(shape)):cast(t) + low (randint: t an integer dtype) */
UOp *
tensor_uniform(UCtx *c, const int64_t *shape, int n, double low, double high, DType t, uint64_t seed, Err *e)
{
	UOp *r;

	if (!(low < high))
		return err_set(e, "tensor.uniform: low %g must be below high %g", low, high), NULL;
	if (t == DT_BOOL || t == DT_VOID || t == DT_INDEX || t >= DT_COUNT)
		return err_set(e, "tensor.uniform: %s is not a number dtype", dtype_name(t)), NULL;
	r = tensor_rand(c, shape, n, DT_FLOAT32, seed, e);
	r = tensor_cast(c, t, mulk(c, r, high - low, e), e);
	return r ? add(c, r, kd(c, t, low), e) : NULL;
}

/* normal(shape, mean, std) = std randn(shape) + mean */
UOp *
tensor_normal(UCtx *c, const int64_t *shape, int n, double mean, double std, DType t, uint64_t seed, Err *e)
{
	if (!(std >= 0))
		return err_set(e, "tensor.normal: std %g must be >= 0", std), NULL;
	return addk(c, mulk(c, tensor_randn(c, shape, n, t, seed, e), std, e), mean, e);
}
