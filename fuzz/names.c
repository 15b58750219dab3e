/* names.c - libFuzzer harness: every reader of a single name: dtypes, dialects, axis types,
** hardware axes, buffer scopes, execution scopes, colour schemes and colours, element types
** of pictures, MMA atoms, Axe axis names, scopes and DTensor placements, variable names. A name that parses prints back
** as a name that parses to the same value. */
#include "fuzz.h"

#include "../interp/kernel/kernel.h"
#include "../interp/ir/uop.h"
#include "../layout/layout.h"
#include "../viz/viz.h"

static int
one(const uint8_t *data, size_t size)
{
	char *s = fuzz_cstr(data, size);
	DType t, t2;
	Dialect d, d2;
	AxisType a, a2;
	HwAxis h, h2;
	UAddrSpace as, as2;
	KScopeKind k, k2;
	MmaAtom atom;
	AxeLayout l;
	Err e = { "" };
	int sc;
	int32_t rgb;
	int pl;

	if (dtype_parse(s, &t) == 0)
		FUZZ_CHECK(dtype_parse(dtype_name(t), &t2) == 0 && t2 == t, "dtype '%s'", s);
	if (dialect_parse(s, &d) == 0)
		FUZZ_CHECK(dialect_parse(dialect_name(d), &d2) == 0 && d2 == d, "dialect '%s'", s);
	if (axistype_parse(s, &a) == 0)
		FUZZ_CHECK(axistype_parse(axistype_name(a), &a2) == 0 && a2 == a, "axis type '%s'", s);
	if (hwaxis_parse(s, &h) == 0)
		FUZZ_CHECK(hwaxis_parse(hwaxis_name(h), &h2) == 0 && h2 == h, "hardware axis '%s'", s);
	if (kscope_parse(s, &as) == 0)
		FUZZ_CHECK(kscope_parse(kscope_name(as), &as2) == 0 && as2 == as, "scope '%s'", s);
	if (kscope_kind_parse(s, &k) == 0)
		FUZZ_CHECK(kscope_kind_parse(kscope_kind_name(k), &k2) == 0 && k2 == k, "scope kind '%s'", s);
	if ((sc = viz_scheme_parse(s)) >= 0)
		FUZZ_CHECK(viz_scheme_parse(viz_scheme_name(sc)) == sc, "scheme '%s'", s);
	(void)viz_dtype_bytes(s);
	if (viz_color_parse(s, strlen(s), &rgb) == 0) {
		char back[8];
		int32_t rgb2;
		FUZZ_CHECK(rgb >= 0 && rgb <= 0xffffff, "colour '%s' is %d", s, rgb);
		snprintf(back, sizeof back, "#%06x", (unsigned)rgb);
		FUZZ_CHECK(viz_color_parse(back, 7, &rgb2) == 0 && rgb2 == rgb, "colour '%s'", s);
	}
	if (cute_mma_atom(s, &atom, &e) == 0)
		FUZZ_CHECK(strcmp(atom.name, s) == 0 || atom.name[0], "atom '%s'", s);
	else
		FUZZ_ERRMSG(&e, "cute_mma_atom");
	(void)axe_axis_kind(s);
	if (axe_placement_parse(s, &pl) == 0) {
		char back[16];
		int pl2;
		FUZZ_CHECK(pl >= AXE_REPLICATE && pl <= 9999, "placement '%s' is %d", s, pl);
		snprintf(back, sizeof back, pl < 0 ? "R" : "S(%d)", pl);
		FUZZ_CHECK(axe_placement_parse(back, &pl2) == 0 && pl2 == pl, "placement '%s'", s);
	}
	if (axe_scope(s, 128, &l, &e) < 0)
		FUZZ_ERRMSG(&e, "axe_scope");
	(void)uop_valid_name(s);
	free(s);
	return 0;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fuzz_scribble(64 << 10);
	return one(data, size);
}
