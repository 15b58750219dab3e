/* tv.c - thread-value layouts and the MMA atoms of CuTe's mma_traits_sm70/80/90. */
#include "internal.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

/* make_layout_tv: (m,n) -> (thr,val) by raking the value block over the
** threads, and its right inverse (thr,val) -> (m,n) shaped (size(thr), size(val)). */
int
cute_make_layout_tv(const Layout *thr, const Layout *val, Layout *mn, Layout *tv, Err *e)
{
	Layout m, inv, t;
	Tuple shape;
	int at;

	if (cute_raked_product(thr, val, &m, e) < 0 || cute_right_inverse(&m, &inv, e) < 0)
		return -1;
	shape.n = 0;
	if ((at = tuple_open(&shape, e)) < 0 || tuple_push(&shape, cute_size(thr), e) < 0 ||
	    tuple_push(&shape, cute_size(val), e) < 0)
		return -1;
	tuple_close(&shape, at);
	if (cute_with_shape(&inv, &shape, &t, e) < 0)
		return -1;
	*mn = m;
	*tv = t;
	return 0;
}

/*
** The atoms, with the layouts exactly as CuTe's MMA_Traits spell them:
** A: (thr,val) -> m + k*M, B: (thr,val) -> n + k*N, C: (thr,val) -> m + n*M.
*/
#define SM80_8x8_ROW  "((4,8),2):((16,1),8)"
#define SM80_16x8_ROW "((4,8),(2,2)):((32,1),(16,8))"
#define SM70_QUADPAIR "(4,2):(1,16)"

typedef struct AtomDef {
	const char *name, *ptx, *types;
	int m, n, k;
	const char *thr, *a, *b, *c;
} AtomDef;

static const AtomDef atoms[] = {
	{ "SM70_8x8x4_F16F16F16F16_TN", "mma.sync.aligned.m8n8k4.row.col.f16.f16.f16.f16",
	  "f16 = f16 * f16 + f16", 8, 8, 4, SM70_QUADPAIR,
	  "(8,4):(1,8)", "(8,4):(1,8)", "(8,8):(1,8)" },
	{ "SM70_8x8x4_F16F16F16F16_NT", "mma.sync.aligned.m8n8k4.col.row.f16.f16.f16.f16",
	  "f16 = f16 * f16 + f16", 8, 8, 4, SM70_QUADPAIR,
	  "((4,2),4):((8,4),1)", "((4,2),4):((8,4),1)", "(8,8):(1,8)" },
	{ "SM70_8x8x4_F32F16F16F32_TN", "mma.sync.aligned.m8n8k4.row.col.f32.f16.f16.f32",
	  "f32 = f16 * f16 + f32", 8, 8, 4, SM70_QUADPAIR,
	  "(8,4):(1,8)", "(8,4):(1,8)", "((2,2,2),(2,2,2)):((1,16,4),(8,2,32))" },
	{ "SM80_16x8x8_F16F16F16F16_TN", "mma.sync.aligned.m16n8k8.row.col.f16.f16.f16.f16",
	  "f16 = f16 * f16 + f16", 16, 8, 8, "32:1",
	  SM80_16x8_ROW, SM80_8x8_ROW, SM80_16x8_ROW },
	{ "SM80_16x8x16_F16F16F16F16_TN", "mma.sync.aligned.m16n8k16.row.col.f16.f16.f16.f16",
	  "f16 = f16 * f16 + f16", 16, 8, 16, "32:1",
	  "((4,8),(2,2,2)):((32,1),(16,8,128))", "((4,8),(2,2)):((16,1),(8,64))", SM80_16x8_ROW },
	{ "SM80_16x8x16_F32F16F16F32_TN", "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32",
	  "f32 = f16 * f16 + f32", 16, 8, 16, "32:1",
	  "((4,8),(2,2,2)):((32,1),(16,8,128))", "((4,8),(2,2)):((16,1),(8,64))", SM80_16x8_ROW },
	{ "SM80_16x8x16_F32BF16BF16F32_TN", "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32",
	  "f32 = bf16 * bf16 + f32", 16, 8, 16, "32:1",
	  "((4,8),(2,2,2)):((32,1),(16,8,128))", "((4,8),(2,2)):((16,1),(8,64))", SM80_16x8_ROW },
	{ "SM80_16x8x8_F32TF32TF32F32_TN", "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32",
	  "f32 = tf32 * tf32 + f32", 16, 8, 8, "32:1",
	  "((4,8),(2,2)):((16,1),(8,64))", "((4,8),2):((8,1),32)", SM80_16x8_ROW },
	{ "SM80_16x8x4_F32TF32TF32F32_TN", "mma.sync.aligned.m16n8k4.row.col.f32.tf32.tf32.f32",
	  "f32 = tf32 * tf32 + f32", 16, 8, 4, "32:1",
	  "((4,8),2):((16,1),8)", "((4,8),1):((8,1),0)", SM80_16x8_ROW },
};

/* SM90 warpgroup MMA: 64xNx16, A and B from shared memory (SS) or A from
** registers (RS); the accumulator is CuTe's GMMA::CLayout_64xN. */
#define GMMA(n) "SM90_64x" #n "x16_F32F16F16_SS", "SM90_64x" #n "x16_F32F16F16_RS"
static const char *const gmma_names[] = {
	GMMA(8), GMMA(16), GMMA(32), GMMA(64), GMMA(96), GMMA(128), GMMA(192), GMMA(256)
};
static const int gmma_n[] = { 8, 16, 32, 64, 96, 128, 192, 256 };

enum { NATOMS = sizeof atoms / sizeof atoms[0], NGMMA = sizeof gmma_n / sizeof gmma_n[0] };

int
cute_mma_count(void)
{
	return NATOMS + 2 * NGMMA;
}

const char *
cute_mma_name(int i)
{
	if (i < 0 || i >= cute_mma_count())
		return NULL;
	return i < NATOMS ? atoms[i].name : gmma_names[i - NATOMS];
}

static int
fill(MmaAtom *o, const char *name, const char *ptx, const char *types, int m, int n, int k,
     const char *thr, const char *a, const char *b, const char *c, Err *e)
{
	snprintf(o->name, sizeof o->name, "%s", name);
	snprintf(o->ptx, sizeof o->ptx, "%s", ptx);
	snprintf(o->types, sizeof o->types, "%s", types);
	o->m = m;
	o->n = n;
	o->k = k;
	if (cute_parse(thr, &o->thr_id, e) < 0 || cute_parse(a, &o->a, e) < 0 ||
	    cute_parse(b, &o->b, e) < 0 || cute_parse(c, &o->c, e) < 0)
		return -1;
	return 0;
}

int
cute_mma_atom(const char *name, MmaAtom *out, Err *e)
{
	char a[64], b[64], c[96], ptx[80];
	int i;

	for (i = 0; i < NATOMS; i++) {
		const AtomDef *d = &atoms[i];
		if (strcasecmp(name, d->name) == 0)
			return fill(out, d->name, d->ptx, d->types, d->m, d->n, d->k, d->thr, d->a, d->b, d->c, e);
	}
	for (i = 0; i < 2 * NGMMA; i++) {
		int n = gmma_n[i / 2], rs = i % 2;
		if (strcasecmp(name, gmma_names[i]) != 0)
			continue;
		snprintf(a, sizeof a, rs ? "((4,8,4),(2,2,2)):((128,1,16),(64,8,512))" : "(128,(64,16)):(0,(1,64))");
		snprintf(b, sizeof b, "(128,(%d,16)):(0,(1,%d))", n, n);
		snprintf(c, sizeof c, "((4,8,4),(2,2,%d)):((128,1,16),(64,8,512))", n / 8);
		snprintf(ptx, sizeof ptx, "wgmma.mma_async.sync.aligned.m64n%dk16.f32.f16.f16", n);
		return fill(out, gmma_names[i], ptx,
		            "f32 = f16 * f16 + f32", 64, n, 16, "128:1", a, b, c, e);
	}
	return err_set(e, "mma_atom: unknown atom '%s'; see cute.mma_atoms() for the list of names", name);
}
