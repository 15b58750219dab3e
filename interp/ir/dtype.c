/* dtype.c - the tensor dtypes: half-precision rounding, promotion, integer wrap, memory access. */
#include <math.h>
#include <string.h>

#include "uop.h"

/*
** A binary float with ebits exponent bits and mbits mantissa bits, rounded
** once from a double: frexp gives the exact exponent, ldexp scales exactly,
** and nearbyint rounds ties to even (the default rounding mode). A mantissa
** that rounds up to 2^mbits carries into the exponent, and the bit pattern
** is still right because the fields are adjacent.
*/
static uint16_t
encode(double x, int ebits, int mbits)
{
	const int bias = (1 << (ebits - 1)) - 1, emax = (1 << ebits) - 1;
	uint16_t sign = signbit(x) ? (uint16_t)(1u << (ebits + mbits)) : 0;
	double a = fabs(x), m;
	int ex;

	if (isnan(x))
		return (uint16_t)(sign | (emax << mbits) | (1u << (mbits - 1)));
	if (a == 0)
		return sign;
	if (isinf(a))
		return (uint16_t)(sign | (emax << mbits));
	if (a < ldexp(1, 1 - bias)) {   /* subnormal: a multiple of 2^(1-bias-mbits) */
		m = nearbyint(ldexp(a, bias - 1 + mbits));
		return (uint16_t)(sign | (uint16_t)m);
	}
	frexp(a, &ex);                  /* a = f * 2^ex, f in [0.5, 1) */
	ex -= 1;                        /* a = 1.x * 2^ex */
	if (ex > bias)
		return (uint16_t)(sign | (emax << mbits));
	m = nearbyint(ldexp(a, mbits - ex)) - ldexp(1, mbits);
	{
		uint32_t bits = ((uint32_t)(ex + bias) << mbits) + (uint32_t)m;

		if (bits >= (uint32_t)emax << mbits)
			bits = (uint32_t)emax << mbits;   /* rounded past the largest: infinity */
		return (uint16_t)(sign | bits);
	}
}

static double
decode(uint16_t h, int ebits, int mbits)
{
	const int bias = (1 << (ebits - 1)) - 1, emax = (1 << ebits) - 1;
	int e = (h >> mbits) & emax;
	uint32_t m = h & ((1u << mbits) - 1);
	double v;

	if (e == emax)
		v = m ? NAN : INFINITY;
	else if (e == 0)
		v = ldexp(m, 1 - bias - mbits);
	else
		v = ldexp(m + (1u << mbits), e - bias - mbits);
	return (h >> (ebits + mbits)) & 1 ? -v : v;
}

uint16_t dtype_to_half(double x) { return encode(x, 5, 10); }
double dtype_from_half(uint16_t h) { return decode(h, 5, 10); }
uint16_t dtype_to_bf16(double x) { return encode(x, 8, 7); }
double dtype_from_bf16(uint16_t h) { return decode(h, 8, 7); }

/*
** tinygrad's promotion lattice: each dtype points at the dtypes it converts
** to without loss; the promotion of a set is the least dtype (in the rank
** order below) that every member reaches.
*/
static const DType rank[] = {
	DT_BOOL, DT_INT8, DT_UINT8, DT_INT16, DT_UINT16, DT_INT32, DT_UINT32, DT_INT64,
	DT_UINT64, DT_FLOAT16, DT_BFLOAT16, DT_FLOAT32, DT_FLOAT64,
};

static uint32_t
up(DType t)
{
	uint32_t s = 1u << t;

	switch (t) {
	case DT_BOOL: return s | up(DT_INT8) | up(DT_UINT8);
	case DT_INT8: return s | up(DT_INT16);
	case DT_INT16: return s | up(DT_INT32);
	case DT_INT32: return s | up(DT_INT64);
	case DT_INDEX:
	case DT_INT64: return s | (1u << DT_INT64) | up(DT_FLOAT16) | up(DT_BFLOAT16);
	case DT_UINT8: return s | up(DT_INT16) | up(DT_UINT16);
	case DT_UINT16: return s | up(DT_INT32) | up(DT_UINT32);
	case DT_UINT32: return s | up(DT_INT64) | up(DT_UINT64);
	case DT_UINT64: return s | up(DT_FLOAT16) | up(DT_BFLOAT16);
	case DT_FLOAT16: return s | up(DT_FLOAT32);
	case DT_BFLOAT16: return s | up(DT_FLOAT32);
	case DT_FLOAT32: return s | up(DT_FLOAT64);
	default: return s;
	}
}

DType
dtype_promote(DType a, DType b)
{
	uint32_t both = up(a) & up(b);
	size_t i;

	if (a == b)
		return a;
	for (i = 0; i < sizeof rank / sizeof rank[0]; i++)
		if (both & (1u << rank[i]))
			return rank[i];
	return DT_FLOAT64;
}

int64_t
dtype_wrap(DType t, int64_t v)
{
	switch (t) {
	case DT_BOOL: return v != 0;
	case DT_INT8: return (int8_t)(uint8_t)(uint64_t)v;
	case DT_INT16: return (int16_t)(uint16_t)(uint64_t)v;
	case DT_INT32: return (int32_t)(uint32_t)(uint64_t)v;
	case DT_UINT8: return (uint8_t)(uint64_t)v;
	case DT_UINT16: return (uint16_t)(uint64_t)v;
	case DT_UINT32: return (uint32_t)(uint64_t)v;
	default: return v;
	}
}

int64_t
dtype_ftoi(DType t, double x)
{
	int64_t v;

	if (t == DT_BOOL)
		return x != 0;
	if (isnan(x))
		return 0;
	x = trunc(x);
	if (t == DT_UINT64 && x >= 9223372036854775808.0)
		v = x >= 18446744073709551616.0 ? -1 : (int64_t)(uint64_t)x;
	else if (x >= 9223372036854775808.0)
		v = INT64_MAX;
	else if (x < -9223372036854775808.0)
		v = INT64_MIN;
	else
		v = (int64_t)x;
	return dtype_wrap(t, v);
}

void
dtype_store_f(DType t, void *p, double v)
{
	switch (t) {
	case DT_FLOAT16: { uint16_t h = dtype_to_half(v); memcpy(p, &h, 2); break; }
	case DT_BFLOAT16: { uint16_t h = dtype_to_bf16(v); memcpy(p, &h, 2); break; }
	case DT_FLOAT32: { float f = (float)v; memcpy(p, &f, 4); break; }
	case DT_FLOAT64: memcpy(p, &v, 8); break;
	default: dtype_store_i(t, p, dtype_ftoi(t, v)); break;
	}
}

void
dtype_store_i(DType t, void *p, int64_t v)
{
	switch (t) {
	case DT_BOOL: { uint8_t b = v != 0; memcpy(p, &b, 1); break; }
	case DT_INT8: case DT_UINT8: { uint8_t b = (uint8_t)(uint64_t)v; memcpy(p, &b, 1); break; }
	case DT_INT16: case DT_UINT16: { uint16_t b = (uint16_t)(uint64_t)v; memcpy(p, &b, 2); break; }
	case DT_INT32: case DT_UINT32: { uint32_t b = (uint32_t)(uint64_t)v; memcpy(p, &b, 4); break; }
	case DT_INT64: case DT_UINT64: case DT_INDEX: memcpy(p, &v, 8); break;
	case DT_VOID: break;
	default:
		dtype_store_f(t, p, t == DT_UINT64 ? (double)(uint64_t)v : (double)v);
		break;
	}
}

double
dtype_load_f(DType t, const void *p)
{
	switch (t) {
	case DT_FLOAT16: { uint16_t h; memcpy(&h, p, 2); return dtype_from_half(h); }
	case DT_BFLOAT16: { uint16_t h; memcpy(&h, p, 2); return dtype_from_bf16(h); }
	case DT_FLOAT32: { float f; memcpy(&f, p, 4); return f; }
	case DT_FLOAT64: { double d; memcpy(&d, p, 8); return d; }
	case DT_UINT64: return (double)(uint64_t)dtype_load_i(t, p);
	default: return (double)dtype_load_i(t, p);
	}
}

int64_t
dtype_load_i(DType t, const void *p)
{
	switch (t) {
	case DT_BOOL: case DT_UINT8: { uint8_t b; memcpy(&b, p, 1); return b; }
	case DT_INT8: { int8_t b; memcpy(&b, p, 1); return b; }
	case DT_INT16: { int16_t b; memcpy(&b, p, 2); return b; }
	case DT_UINT16: { uint16_t b; memcpy(&b, p, 2); return b; }
	case DT_INT32: { int32_t b; memcpy(&b, p, 4); return b; }
	case DT_UINT32: { uint32_t b; memcpy(&b, p, 4); return b; }
	case DT_INT64: case DT_UINT64: case DT_INDEX: { int64_t b; memcpy(&b, p, 8); return b; }
	case DT_VOID: return 0;
	default: return dtype_ftoi(DT_INT64, dtype_load_f(t, p));
	}
}
