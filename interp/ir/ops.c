/* ops.c - the tables behind ops.h and the dtypes: op properties, dtype names, sizes and ranges. */
#include <string.h>

#include "uop.h"

const OpInfo uop_info[OP_COUNT] = {
#define O(NAME, nm, ar, fl, id, inf, c, py, lua, p0, p1, p2, p3) \
	{ nm, ar, fl, id, { inf, c, py, lua }, { p0, p1, p2, p3 } },
#include "ops.h"
#undef O
};

static const char *const dtnames[DT_COUNT] = {
#define D(N, s, b) s,
	DTYPES(D)
#undef D
};

const char *
dtype_name(DType t)
{
	return t < DT_COUNT ? dtnames[t] : "?";
}

int
dtype_parse(const char *s, DType *t)
{
	int i;

	for (i = 0; i < DT_COUNT; i++)
		if (strcmp(s, dtnames[i]) == 0) {
			*t = (DType)i;
			return 0;
		}
	return -1;
}

void
dtype_range(DType t, int64_t *lo, int64_t *hi)
{
	switch (t) {
	case DT_BOOL: *lo = 0; *hi = 1; break;
	case DT_INT8: *lo = INT8_MIN; *hi = INT8_MAX; break;
	case DT_INT16: *lo = INT16_MIN; *hi = INT16_MAX; break;
	case DT_INT32: *lo = INT32_MIN; *hi = INT32_MAX; break;
	case DT_UINT8: *lo = 0; *hi = UINT8_MAX; break;
	case DT_UINT16: *lo = 0; *hi = UINT16_MAX; break;
	case DT_UINT32: *lo = 0; *hi = UINT32_MAX; break;
	case DT_UINT64: *lo = 0; *hi = INT64_MAX; break;
	case DT_VOID: *lo = 0; *hi = 0; break;
	default: *lo = INT64_MIN; *hi = INT64_MAX; break;
	}
}

static const unsigned char dtbytes[DT_COUNT] = {
#define D(N, s, b) b,
	DTYPES(D)
#undef D
};

int
dtype_bytes(DType t)
{
	return t < DT_COUNT ? dtbytes[t] : 0;
}

int
dtype_is_float(DType t)
{
	return t == DT_FLOAT16 || t == DT_BFLOAT16 || t == DT_FLOAT32 || t == DT_FLOAT64;
}

int
dtype_is_unsigned(DType t)
{
	return t == DT_UINT8 || t == DT_UINT16 || t == DT_UINT32 || t == DT_UINT64;
}

