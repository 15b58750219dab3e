/* test_dist.c - distributed tensors and programs: the layout analysis, the collective each redistribution gets, and every redistribution's simulation against the logical value it must keep. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../backends/backend.h"
#include "../interp/dist/dist.h"

static AxeLayout
A(const char *s)
{
	AxeLayout l;
	Err e;

	if (axe_parse(s, &l, &e) < 0)
		fail_msg("parse %s: %s", s, e.msg);
	return l;
}

static AxeShape
SH2(int64_t a, int64_t b)
{
	AxeShape s = { 2, { a, b } };
	return s;
}

static AxeLayout
DT(AxeShape sh, int ndev, const char *placement)
{
	AxeMesh m = { 1, { "gpuid" }, { ndev } };
	AxeLayout l;
	int p;
	Err e;

	assert_int_equal(axe_placement_parse(placement, &p), 0);
	if (axe_dtensor(&sh, &m, &p, &l, &e) < 0)
		fail_msg("dtensor %s: %s", placement, e.msg);
	return l;
}

static AxeDist
D(const AxeLayout *l, AxeShape sh, int ndev)
{
	AxeDist d;
	Err e;

	if (axe_dist(l, &sh, "gpuid", ndev, &d, &e) < 0)
		fail_msg("dist: %s", e.msg);
	return d;
}

/* the kinds, counts and local shapes; every element's (device, m) against axe_apply */
static void
test_axe_dist_kinds(void **state)
{
	AxeShape sh = SH2(8, 12);
	AxeLayout s0 = DT(sh, 2, "S(0)"), s1 = DT(sh, 2, "S(1)"), r = DT(sh, 2, "R");
	AxeLayout one = A("S[(8,12):(12,1)] + 1@gpuid"), cyc = A("S[(4,2,12):(12,1@gpuid,1)]");
	const AxeLayout *all[] = { &s0, &s1, &r, &one, &cyc };
	AxeDist d;
	int i;
	int64_t x;

	(void)state;
	d = D(&s0, sh, 2);
	assert_int_equal(d.kind, AXE_SHARDED);
	assert_int_equal(d.count, 48);
	assert_int_equal(d.shard, 0);
	assert_int_equal(d.local.v[0], 4);
	assert_int_equal(d.local.v[1], 12);
	d = D(&s1, sh, 2);
	assert_int_equal(d.shard, 1);
	assert_int_equal(d.local.v[1], 6);
	d = D(&r, sh, 2);
	assert_int_equal(d.kind, AXE_REPLICATED);
	assert_int_equal(d.count, 96);
	assert_int_equal(d.shard, -1);
	d = D(&one, sh, 2);
	assert_int_equal(d.kind, AXE_SINGLE);
	assert_int_equal(d.root, 1);
	d = D(&cyc, sh, 2);
	assert_int_equal(d.kind, AXE_SHARDED);
	assert_int_equal(d.shard, -2);   /* rows dealt round-robin: no DTensor placement */
	/* the analysis agrees with the layout's own map at every element */
	for (i = 0; i < 5; i++) {
		AxeAxes ax;
		AxeCoord c[4];
		int n, gi, mi;
		Err e;

		d = D(all[i], sh, 2);
		axe_axes(all[i], &ax);
		for (x = 0; x < d.size; x++) {
			assert_int_equal(axe_apply(all[i], x, c, 4, &n, &e), 0);
			gi = axe_axes_index(&c[0].ax, "gpuid");
			mi = axe_axes_index(&c[0].ax, "m");
			assert_int_equal(axe_dist_m(&d, x), mi < 0 ? 0 : c[0].v[mi]);
			if (d.kind != AXE_REPLICATED)
				assert_int_equal(axe_dist_g(&d, x), gi < 0 ? 0 : c[0].v[gi]);
			if (d.kind == AXE_SHARDED)
				assert_int_equal(axe_dist_flat(&d, x), axe_dist_g(&d, x) * d.count + axe_dist_m(&d, x));
		}
	}
}

static void
refused(const char *layout, AxeShape sh, int ndev, const char *want)
{
	AxeLayout l = A(layout);
	AxeDist d;
	Err e;

	assert_int_equal(axe_dist(&l, &sh, "gpuid", ndev, &d, &e), -1);
	if (!strstr(e.msg, want))
		fail_msg("%s: got \"%s\", want \"%s\"", layout, e.msg, want);
}

static void
test_axe_dist_refusals(void **state)
{
	(void)state;
	refused("S[(8,2,6):(12,1@gpuid,1)]", SH2(8, 12), 2, "not dense");           /* a gap on m */
	refused("S[(8,12):(12,1@lane)]", SH2(8, 12), 2, "places elements on lane");
	refused("S[(2,4,12):(1@gpuid,12,1)] + R[2:2@gpuid]", SH2(8, 12), 4, "both shards and replicates");
	refused("S[(2,4,12):(1@gpuid,12,1)]", SH2(8, 12), 4, "evenly");              /* devices 2, 3 hold nothing */
	refused("S[(8,12):(12,1)] + 3@gpuid", SH2(8, 12), 2, "lives on device 3");
	refused("S[(8,12):(12,1)] + 5", SH2(8, 12), 2, "starts at m = 5");
	refused("S[(8,12):(12,1)]", SH2(8, 8), 2, "elements");
}

typedef struct Case {
	const char *src, *dst;
	int partial;
	AxeColl coll;
	int pack, unpack, slice;
} Case;

/* Section 4.2's analysis: which collective, and where the layouts need a permute */
static void
test_axe_redistribute(void **state)
{
	AxeShape sh = SH2(8, 12);
	static const Case cases[] = {
		{ "R", "S(0)", 1, AXE_COLL_REDUCE_SCATTER, 0, 0, 0 },   /* GEMM sharded on K, then reduce_scatter */
		{ "R", "S(1)", 1, AXE_COLL_REDUCE_SCATTER, 1, 0, 0 },   /* columns: pack into rank-major first */
		{ "R", "R", 1, AXE_COLL_ALLREDUCE, 0, 0, 0 },
		{ "S(0)", "R", 0, AXE_COLL_ALLGATHER, 0, 0, 0 },
		{ "S(1)", "R", 0, AXE_COLL_ALLGATHER, 0, 1, 0 },        /* out of rank-major order after */
		{ "R", "S(1)", 0, AXE_COLL_NONE, 0, 1, 1 },             /* each keeps its shard */
		{ "S(0)", "S(1)", 0, AXE_COLL_ALLGATHER, 0, 1, 1 },
		{ "S(0)", "S(0)", 0, AXE_COLL_NONE, 0, 1, 1 },
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		AxeLayout a = DT(sh, 2, cases[i].src), b = DT(sh, 2, cases[i].dst);
		AxeDist da = D(&a, sh, 2), db = D(&b, sh, 2);
		AxeRedist r;
		Err e;

		if (axe_redistribute(&da, cases[i].partial, &db, &r, &e) < 0)
			fail_msg("case %zu: %s", i, e.msg);
		assert_int_equal(r.coll, cases[i].coll);
		assert_int_equal(r.pack, cases[i].pack);
		assert_int_equal(r.unpack, cases[i].unpack);
		assert_int_equal(r.slice, cases[i].slice);
		assert_true(r.why[0] != 0);
	}
	{
		AxeLayout s0 = DT(sh, 2, "S(0)"), one = A("S[(8,12):(12,1)] + 1@gpuid"), zero = A("S[(8,12):(12,1)]");
		AxeLayout r = DT(sh, 2, "R");
		AxeDist d0 = D(&s0, sh, 2), d1 = D(&one, sh, 2), dz = D(&zero, sh, 2), dr = D(&r, sh, 2);
		AxeRedist x;
		Err e;

		assert_int_equal(axe_redistribute(&d1, 0, &dr, &x, &e), 0);
		assert_int_equal(x.coll, AXE_COLL_BROADCAST);
		assert_int_equal(x.root, 1);
		assert_int_equal(axe_redistribute(&dr, 1, &d1, &x, &e), 0);
		assert_int_equal(x.coll, AXE_COLL_REDUCE);
		assert_int_equal(axe_redistribute(&d0, 0, &d1, &x, &e), -1);
		assert_non_null(strstr(e.msg, "gather"));
		assert_int_equal(axe_redistribute(&dz, 0, &d1, &x, &e), -1);
		assert_non_null(strstr(e.msg, "send/recv"));
		assert_int_equal(axe_redistribute(&d0, 1, &dr, &x, &e), -1);
		assert_non_null(strstr(e.msg, "partial"));
	}
}

/* ---- programs ---- */

static DistProgram *
prog(int ndev)
{
	Err e;
	DistProgram *p = dist_new(ndev, "gpuid", &e);

	if (!p)
		fail_msg("dist_new: %s", e.msg);
	return p;
}

static void
add(DistProgram *p, const char *name, DType t, AxeShape sh, AxeLayout l, int partial)
{
	Err e;

	if (dist_tensor(p, name, t, &sh, &l, partial, &e) < 0)
		fail_msg("tensor %s: %s", name, e.msg);
}

/* the logical value of t: gathered, as doubles */
static double *
logical(const DistProgram *p, const DistState *st, int t)
{
	TBuf b;
	Err e;
	double *v;
	int64_t i;

	if (dist_gather(p, st, t, &b, &e) < 0)
		fail_msg("gather %s: %s", p->t[t].name, e.msg);
	v = malloc((size_t)b.numel * sizeof *v);
	for (i = 0; i < b.numel; i++)
		v[i] = tbuf_get(&b, i);
	tbuf_free(&b);
	return v;
}

/*
** Every redistribution between the layouts below, on 2 and 4 devices, from
** a plain and from a partial source: the simulation (pack and unpack kernels
** in the interpreter, collectives as sums) must keep the logical value; a
** refused pair must be one NCCL has no collective for.
*/
static void
test_every_redistribution(void **state)
{
	static const char *const place[] = { "S(0)", "S(1)", "R", "single0", "single1", "cyclic" };
	AxeShape sh = SH2(8, 12);
	int nd, i, j, partial, done = 0;

	(void)state;
	for (nd = 2; nd <= 4; nd += 2)
		for (partial = 0; partial < 2; partial++)
			for (i = 0; i < 6; i++)
				for (j = 0; j < 6; j++) {
					AxeLayout l[2];
					const int idx[2] = { i, j };
					DistProgram *p;
					DistState st = { 0 };
					double *a, *b;
					Err e;
					int k, rc;

					if (partial && i != 2)
						continue;
					for (k = 0; k < 2; k++) {
						const char *pl = place[idx[k]];

						if (!strcmp(pl, "single0"))
							l[k] = A("S[(8,12):(12,1)]");
						else if (!strcmp(pl, "single1"))
							l[k] = A(nd == 2 ? "S[(8,12):(12,1)] + 1@gpuid" : "S[(8,12):(12,1)] + 3@gpuid");
						else if (!strcmp(pl, "cyclic"))
							l[k] = A(nd == 2 ? "S[(4,2,12):(12,1@gpuid,1)]" : "S[(2,4,12):(12,1@gpuid,1)]");
						else
							l[k] = DT(sh, nd, pl);
					}
					p = prog(nd);
					add(p, "x", DT_FLOAT32, sh, l[0], partial);
					add(p, "y", DT_FLOAT32, sh, l[1], 0);
					/* a partial input needs a writer: a launch that copies x's storage from an input */
					if (partial) {
						Kernel *k = kernel_new();
						int64_t n = 96;
						int bi, bo;
						UOp *v, *body;

						add(p, "s", DT_FLOAT32, sh, DT(sh, nd, "R"), 0);
						bi = kernel_add_buffer(k, "s", DT_FLOAT32, AS_GLOBAL, KB_INPUT, &n, 1, &e);
						bo = kernel_add_buffer(k, "x", DT_FLOAT32, AS_GLOBAL, KB_OUTPUT, &n, 1, &e);
						v = kernel_var(k, "i", n);
						body = kernel_store(k, kernel_index(k, bo, &v, 1), kernel_load(k, kernel_index(k, bi, &v, 1), NULL), NULL);
						body = kernel_loop(k, kernel_range(k, v, AX_LOOP, HW_NONE), &body, 1);
						assert_int_equal(kernel_add_stage(k, "copy", body, NULL, &e), 0);
						if (dist_launch(p, k, NULL, &e) < 0)
							fail_msg("launch: %s", e.msg);
						kernel_free(k);
					}
					rc = dist_redistribute(p, "x", "y", &e);
					if (rc < 0) {
						/* only what NCCL cannot do */
						if (!strstr(e.msg, "gather") && !strstr(e.msg, "send/recv"))
							fail_msg("%d devices, %s%s -> %s: %s", nd, partial ? "partial " : "", place[i], place[j], e.msg);
						dist_free(p);
						continue;
					}
					if (dist_scatter(p, NULL, &st, &e) < 0 || dist_simulate(p, NULL, &st, &e) < 0)
						fail_msg("%d devices, %s -> %s: %s", nd, place[i], place[j], e.msg);
					a = logical(p, &st, 0);
					b = logical(p, &st, 1);
					for (k = 0; k < 96; k++)
						if (fabs(a[k] - b[k]) > 1e-6 * fmax(fabs(a[k]), 1))
							fail_msg("%d devices, %s%s -> %s: element %d is %g, was %g", nd, partial ? "partial " : "",
							         place[i], place[j], k, b[k], a[k]);
					/* a partial source summed over devices: nd times each summand */
					if (partial) {
						double *s = logical(p, &st, 2);

						for (k = 0; k < 96; k++)
							assert_true(fabs(b[k] - nd * s[k]) < 1e-5);
						free(s);
					}
					free(a);
					free(b);
					dist_state_free(&st);
					dist_free(p);
					done++;
				}
	assert_true(done >= 50);
}

/* the Axe paper's Section 4.2 case: C = A B with K sharded, partial sums reduce-scattered over rows */
static Kernel *
gemm_kernel(int64_t M, int64_t N, int64_t K)
{
	Kernel *k = kernel_new();
	int64_t sa[2] = { M, K }, sb[2] = { K, N }, sc[2] = { M, N };
	int a, b, c;
	UOp *i, *j, *kk, *ia[2], *ib[2], *ic[2], *ld, *prod, *body;
	Err e;

	a = kernel_add_buffer(k, "A", DT_FLOAT32, AS_GLOBAL, KB_INPUT, sa, 2, &e);
	b = kernel_add_buffer(k, "B", DT_FLOAT32, AS_GLOBAL, KB_INPUT, sb, 2, &e);
	c = kernel_add_buffer(k, "C", DT_FLOAT32, AS_GLOBAL, KB_OUTPUT, sc, 2, &e);
	i = kernel_var(k, "i", M);
	j = kernel_var(k, "j", N);
	kk = kernel_var(k, "k", K);
	ia[0] = i, ia[1] = kk, ib[0] = kk, ib[1] = j, ic[0] = i, ic[1] = j;
	{
		UOp *z = kernel_store(k, kernel_index(k, c, ic, 2), kernel_const(k, DT_FLOAT32, 0), NULL);
		UOp *src[2];

		src[0] = kernel_load(k, kernel_index(k, a, ia, 2), NULL);
		src[1] = kernel_load(k, kernel_index(k, b, ib, 2), NULL);
		prod = kernel_alu(k, OP_MUL, DT_FLOAT32, src, 2);
		src[0] = kernel_load(k, kernel_index(k, c, ic, 2), NULL);
		src[1] = prod;
		ld = kernel_alu(k, OP_ADD, DT_FLOAT32, src, 2);
		body = kernel_store(k, kernel_index(k, c, ic, 2), ld, NULL);
		body = kernel_loop(k, kernel_range(k, kk, AX_REDUCE, HW_NONE), &body, 1);
		{
			UOp *seq[2] = { z, body };
			body = kernel_loop(k, kernel_range(k, j, AX_LOOP, HW_NONE), seq, 2);
		}
		body = kernel_loop(k, kernel_range(k, i, AX_LOOP, HW_NONE), &body, 1);
	}
	if (kernel_add_stage(k, "gemm", body, NULL, &e) < 0)
		fail_msg("gemm: %s", e.msg);
	return k;
}

static void
test_gemm_reduce_scatter(void **state)
{
	const int64_t M = 8, N = 6, K = 8;
	AxeShape sa = SH2(M, K), sb = SH2(K, N), sc = SH2(M, N);
	DistProgram *p = prog(2);
	DistState st = { 0 };
	Kernel *k = gemm_kernel(M, N, K / 2);
	const char *bind[] = { "A", "B", "Cp" };
	double *a, *b, *c;
	Buf plan;
	Err e;
	int64_t i, j, x;

	(void)state;
	add(p, "A", DT_FLOAT32, sa, DT(sa, 2, "S(1)"), 0);
	add(p, "B", DT_FLOAT32, sb, DT(sb, 2, "S(0)"), 0);
	add(p, "Cp", DT_FLOAT32, sc, DT(sc, 2, "R"), 1);
	add(p, "C", DT_FLOAT32, sc, DT(sc, 2, "S(0)"), 0);
	if (dist_launch(p, k, bind, &e) < 0)
		fail_msg("launch: %s", e.msg);
	/* a tensor is written once */
	assert_int_equal(dist_launch(p, k, bind, &e), -1);
	assert_non_null(strstr(e.msg, "written once"));
	/* the spec's verb must be the one the layouts call for */
	assert_int_equal(dist_collective(p, AXE_COLL_ALLREDUCE, "Cp", "C", &e), -1);
	assert_non_null(strstr(e.msg, "allreduce: Cp -> C is reduce_scatter by their layouts"));
	assert_int_equal(dist_collective(p, AXE_COLL_REDUCE_SCATTER, "Cp", "C", &e), 1);
	buf_init(&plan);
	dist_plan(&plan, p);
	assert_non_null(strstr(plan.s, "Cp -> C: reduce_scatter, 192 B in a device"));
	assert_non_null(strstr(plan.s, "A          float32(8,8) sharded on dim 1, local (8,4) (32 a device), input"));
	buf_free(&plan);
	assert_int_equal(dist_scatter(p, NULL, &st, &e), 0);
	assert_int_equal(dist_simulate(p, NULL, &st, &e), 0);
	a = logical(p, &st, 0);
	b = logical(p, &st, 1);
	c = logical(p, &st, 3);
	for (i = 0; i < M; i++)
		for (j = 0; j < N; j++) {
			double want = 0;

			for (x = 0; x < K; x++)
				want += a[i * K + x] * b[x * N + j];
			assert_true(fabs(c[i * N + j] - want) < 1e-5);
		}
	/* device 1 holds rows 4..7 */
	assert_true(fabs(tbuf_get(&st.store[1 * p->nt + 3], 0) - c[4 * N]) < 1e-6);
	free(a);
	free(b);
	free(c);
	dist_state_free(&st);
	kernel_free(k);
	/* a kernel of the wrong local shape names both */
	k = gemm_kernel(M, N, K);
	assert_int_equal(dist_launch(p, k, bind, &e), -1);
	assert_non_null(strstr(e.msg, "kernel buffer A holds 64 float32; tensor A stores 32 float32 on each device (local shape (8,4))"));
	kernel_free(k);
	dist_free(p);
}

static void
test_export_files(void **state)
{
	const int64_t M = 8, N = 6, K = 8;
	AxeShape sa = SH2(M, K), sb = SH2(K, N), sc = SH2(M, N);
	DistProgram *p = prog(2);
	Kernel *k = gemm_kernel(M, N, K / 2);
	const char *bind[] = { "A", "B", "Cp" };
	char dir[] = "/tmp/tessel_dist_XXXXXX", path[256];
	BDistExportOpts o = { 0 };
	Buf files;
	Err e;
	FILE *f;
	long sz;

	(void)state;
	add(p, "A", DT_FLOAT32, sa, DT(sa, 2, "S(1)"), 0);
	add(p, "B", DT_FLOAT32, sb, DT(sb, 2, "S(0)"), 0);
	add(p, "Cp", DT_FLOAT32, sc, DT(sc, 2, "R"), 1);
	add(p, "C", DT_FLOAT32, sc, DT(sc, 2, "S(1)"), 0);   /* columns: a pack kernel */
	assert_int_equal(dist_launch(p, k, bind, &e), 0);
	assert_int_equal(dist_redistribute(p, "Cp", "C", &e), 1);
	assert_non_null(mkdtemp(dir));
	buf_init(&files);
	o.files = &files;
	if (backend_export_dist(p, dir, &o, &e) < 0)
		fail_msg("export: %s", e.msg);
	assert_non_null(strstr(files.s, "dist.cu\n"));
	assert_non_null(strstr(files.s, "step1_gemm.cu\n"));
	assert_non_null(strstr(files.s, "step2_pack_C.cu\n"));
	assert_non_null(strstr(files.s, "ref_C_r1.bin\n"));
	/* device 1's shard of C: 8 rows of 3 floats */
	snprintf(path, sizeof path, "%s/data/ref_C_r1.bin", dir);
	assert_non_null(f = fopen(path, "rb"));
	fseek(f, 0, SEEK_END);
	sz = ftell(f);
	fclose(f);
	assert_int_equal(sz, 8 * 3 * 4);
	buf_free(&files);
	{
		char cmd[512];

		snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
		assert_int_equal(system(cmd), 0);
	}
	kernel_free(k);
	dist_free(p);
}

static int
redist_part(DistProgram *p, const char *src, const char *dst, int part, int parts, Err *e)
{
	DistRedistOpts o = { part, parts, DIST_VIA_NCCL, 0 };

	return dist_redistribute_opts(p, src, dst, &o, e);
}

/*
** Rows of an (M, X) tensor stored (parts, devices, rows): part j of every
** device's rows is contiguous, in NCCL's rank-major order. cols: X sharded
** over the devices (A of a GEMM sharded on K, or a GEMM's output sharded on
** N), else replicated (a partial sum, or an allgather's result).
*/
static AxeLayout
parted(int64_t M, int64_t X, int n, int c, int cols)
{
	char s[256];
	int64_t rr = M / (n * c), xl = X / n;

	if (cols)
		snprintf(s, sizeof s, "S[(%d,%d,%lld,%d,%lld):(%lld,%lld,%lld,1@gpuid,1)]", n, c, (long long)rr, n,
		         (long long)xl, (long long)(rr * xl), (long long)(n * rr * xl), (long long)xl);
	else
		snprintf(s, sizeof s, "S[(%d,%d,%lld,%lld):(%lld,%lld,%lld,1)] + R[%d:1@gpuid]", n, c, (long long)rr,
		         (long long)X, (long long)(rr * X), (long long)(n * rr * X), (long long)X, n);
	return A(s);
}

/* C (M, N) = A (M, K) B (K, N) from the logical values, against got */
static void
assert_gemm(const double *a, const double *b, const double *got, int64_t M, int64_t N, int64_t K)
{
	int64_t i, j, x;

	for (i = 0; i < M; i++)
		for (j = 0; j < N; j++) {
			double want = 0;

			for (x = 0; x < K; x++)
				want += a[i * K + x] * b[x * N + j];
			if (fabs(got[i * N + j] - want) > 1e-5)
				fail_msg("C[%lld, %lld] = %g, want %g", (long long)i, (long long)j, got[i * N + j], want);
		}
}

/*
** GEMM + reduce_scatter a part at a time (issue 31's overlap): on 2 and 4
** devices in 1, 2 and 4 parts, launch j writes rows j of Cp and the
** collective of part j waits for it alone, on the other stream. The values
** match the definition in program order and in the order that runs every
** kernel first; an order that runs a part before its kernel is refused.
*/
static void
test_overlap_parts(void **state)
{
	static const int nds[] = { 2, 4 }, cs[] = { 1, 2, 4 };
	int a, b;

	(void)state;
	for (a = 0; a < 2; a++)
		for (b = 0; b < 3; b++) {
			int n = nds[a], c = cs[b], j, *order;
			int64_t M = 4 * n * c, N = 6, K = 4 * n, Kl = K / n;
			AxeShape sa = SH2(M, K), sb = SH2(K, N), sc = SH2(M, N);
			DistProgram *p = prog(n);
			DistState st = { 0 }, st2 = { 0 };
			Kernel *k = gemm_kernel(M / c, N, Kl);
			const char *bind[] = { "A", "B", "Cp" };
			double *av, *bv, *cv, *cv2;
			Err e;

			add(p, "A", DT_FLOAT32, sa, parted(M, K, n, c, 1), 0);
			add(p, "B", DT_FLOAT32, sb, DT(sb, n, "S(0)"), 0);
			add(p, "Cp", DT_FLOAT32, sc, parted(M, N, n, c, 0), 1);
			add(p, "C", DT_FLOAT32, sc, DT(sc, n, "S(0)"), 0);
			for (j = 0; j < c; j++) {
				int64_t at[] = { j * (M / c) * Kl, -1, j * (M / c) * N };

				if (dist_launch_at(p, k, bind, at, &e) != 2 * j)
					fail_msg("n %d, %d parts, launch %d: %s", n, c, j, e.msg);
				if (redist_part(p, "Cp", "C", j, c, &e) != 2 * j + 1)
					fail_msg("n %d, %d parts, part %d: %s", n, c, j, e.msg);
				assert_int_equal(p->s[2 * j].stream, 0);
				assert_int_equal(p->s[2 * j].wait[0], -1);
				assert_int_equal(p->s[2 * j + 1].stream, 1);
				assert_int_equal(p->s[2 * j + 1].wait[0], 2 * j);
				assert_int_equal(p->s[2 * j + 1].wait[1], -1);
			}
			assert_int_equal(dist_scatter(p, NULL, &st, &e), 0);
			if (dist_simulate(p, NULL, &st, &e) < 0)
				fail_msg("simulate: %s", e.msg);
			av = logical(p, &st, 0);
			bv = logical(p, &st, 1);
			cv = logical(p, &st, 3);
			assert_gemm(av, bv, cv, M, N, K);
			/* every kernel first, then the collectives: the same values */
			order = malloc((size_t)p->ns * sizeof *order);
			for (j = 0; j < c; j++)
				order[j] = 2 * j, order[c + j] = 2 * j + 1;
			assert_int_equal(dist_scatter(p, NULL, &st2, &e), 0);
			if (dist_simulate_order(p, NULL, order, &st2, &e) < 0)
				fail_msg("simulate in order: %s", e.msg);
			cv2 = logical(p, &st2, 3);
			assert_memory_equal(cv, cv2, (size_t)(M * N) * sizeof *cv);
			dist_state_free(&st2);
			/* a part before its kernel */
			order[0] = 1, order[1] = 0;
			for (j = 2; j < p->ns; j++)
				order[j] = j;
			assert_int_equal(dist_scatter(p, NULL, &st2, &e), 0);
			assert_int_equal(dist_simulate_order(p, NULL, order, &st2, &e), -1);
			assert_non_null(strstr(e.msg, "step 2 before step 1, which it waits for"));
			dist_state_free(&st2);
			free(order);
			free(av);
			free(bv);
			free(cv);
			free(cv2);
			dist_state_free(&st);
			kernel_free(k);
			dist_free(p);
		}
}

/* AllGather + GEMM: A sharded on rows, gathered a part at a time, each part multiplied when it lands */
static void
test_overlap_allgather(void **state)
{
	const int n = 4, c = 2;
	const int64_t M = 32, N = 8, K = 6;
	AxeShape sa = SH2(M, K), sb = SH2(K, N), sc = SH2(M, N);
	DistProgram *p = prog(n);
	DistState st = { 0 };
	Kernel *k = gemm_kernel(M / c, N / n, K);
	const char *bind[] = { "Af", "B", "C" };
	double *av, *bv, *cv;
	Buf plan;
	Err e;
	int j;

	(void)state;
	add(p, "A", DT_FLOAT32, sa, DT(sa, n, "S(0)"), 0);
	add(p, "Af", DT_FLOAT32, sa, parted(M, K, n, c, 0), 0);
	add(p, "B", DT_FLOAT32, sb, DT(sb, n, "S(1)"), 0);
	add(p, "C", DT_FLOAT32, sc, parted(M, N, n, c, 1), 0);
	for (j = 0; j < c; j++)
		if (redist_part(p, "A", "Af", j, c, &e) != j)
			fail_msg("allgather part %d: %s", j, e.msg);
	for (j = 0; j < c; j++) {
		int64_t at[] = { j * (M / c) * K, -1, j * (M / c) * (N / n) };

		if (dist_launch_at(p, k, bind, at, &e) != c + j)
			fail_msg("launch %d: %s", j, e.msg);
		assert_int_equal(p->s[c + j].wait[0], j);
	}
	buf_init(&plan);
	dist_plan(&plan, p);
	assert_non_null(strstr(plan.s, "A -> Af: allgather part 2 of 2 (A[24:48] -> Af[96:192]), 96 B in a device\n"));
	assert_non_null(strstr(plan.s, "-> C[32:64]; after step 2\n"));
	buf_free(&plan);
	assert_int_equal(dist_scatter(p, NULL, &st, &e), 0);
	if (dist_simulate(p, NULL, &st, &e) < 0)
		fail_msg("simulate: %s", e.msg);
	av = logical(p, &st, 0);
	bv = logical(p, &st, 2);
	cv = logical(p, &st, 3);
	assert_gemm(av, bv, cv, M, N, K);
	free(av);
	free(bv);
	free(cv);
	dist_state_free(&st);
	kernel_free(k);
	dist_free(p);
}

/*
** The same program with its parts on the copy engines: the sums end on a
** third stream, every part shares one slot a device in the peer buffer (its
** count from every device), and a step that reads the result waits for the
** sum; the values match the definition. Loads from the peers take 16
** blocks unless told.
*/
static void
test_overlap_via(void **state)
{
	const int n = 4, c = 2;
	const int64_t M = 4 * n * c, N = 8, K = 4 * n, Kl = K / n;
	AxeShape sa = SH2(M, K), sb = SH2(K, N), sc = SH2(M, N);
	DistProgram *p = prog(n);
	DistState st = { 0 };
	Kernel *k = gemm_kernel(M / c, N, Kl), *k2 = gemm_kernel(M / n, N, N);
	const char *bind[] = { "A", "B", "Cp" }, *bind2[] = { "C", "B2", "D" };
	DistRedistOpts o = { 0, c, DIST_VIA_COPY, 0 };
	double *av, *bv, *cv;
	Err e;
	int j;

	(void)state;
	add(p, "A", DT_FLOAT32, sa, parted(M, K, n, c, 1), 0);
	add(p, "B", DT_FLOAT32, sb, DT(sb, n, "S(0)"), 0);
	add(p, "Cp", DT_FLOAT32, sc, parted(M, N, n, c, 0), 1);
	add(p, "C", DT_FLOAT32, sc, DT(sc, n, "S(0)"), 0);
	add(p, "B2", DT_FLOAT32, SH2(N, N), DT(SH2(N, N), n, "R"), 0);
	add(p, "D", DT_FLOAT32, sc, DT(sc, n, "S(0)"), 0);
	for (j = 0; j < c; j++) {
		int64_t at[] = { j * (M / c) * Kl, -1, j * (M / c) * N };

		o.part = j;
		assert_int_equal(dist_launch_at(p, k, bind, at, &e), 2 * j);
		if (dist_redistribute_opts(p, "Cp", "C", &o, &e) != 2 * j + 1)
			fail_msg("part %d: %s", j, e.msg);
		assert_int_equal(p->s[2 * j + 1].via, DIST_VIA_COPY);
		assert_int_equal(p->s[2 * j + 1].stream, 1);
		assert_int_equal(p->s[2 * j + 1].end, 2);
		assert_int_equal(p->s[2 * j + 1].peer_at, 0);
	}
	assert_int_equal(p->peer_bytes, n * (M / n) * N * 4);
	/* D = C B2 reads C: it waits for both parts' sums, the last of them on the sums' stream */
	assert_int_equal(dist_launch(p, k2, bind2, &e), 2 * c);
	assert_int_equal(p->s[2 * c].wait[0], 2 * c - 1);
	assert_int_equal(dist_scatter(p, NULL, &st, &e), 0);
	if (dist_simulate(p, NULL, &st, &e) < 0)
		fail_msg("simulate: %s", e.msg);
	av = logical(p, &st, 0);
	bv = logical(p, &st, 1);
	cv = logical(p, &st, 3);
	assert_gemm(av, bv, cv, M, N, K);
	free(av);
	free(bv);
	free(cv);
	dist_state_free(&st);
	/* loads: 16 blocks by default; copy and load move only what reduce_scatter and allgather do */
	o.via = DIST_VIA_LOAD;
	o.part = 0;
	o.parts = 0;
	add(p, "X", DT_FLOAT32, sc, DT(sc, n, "S(0)"), 0);
	add(p, "Y", DT_FLOAT32, sc, DT(sc, n, "R"), 0);
	add(p, "Z", DT_FLOAT32, sc, DT(sc, n, "S(0)"), 0);
	j = dist_redistribute_opts(p, "X", "Y", &o, &e);
	if (j < 0)
		fail_msg("load: %s", e.msg);
	assert_int_equal(p->s[j].blocks, 16);
	assert_int_equal(p->s[j].parts, 1);
	assert_int_equal(dist_redistribute_opts(p, "Y", "Z", &o, &e), -1);
	assert_non_null(strstr(e.msg, "redistribute Y -> Z: via load does a reduce_scatter or an allgather; the layouts call for"));
	o.blocks = 2000;
	assert_int_equal(dist_redistribute_opts(p, "X", "Y", &o, &e), -1);
	assert_non_null(strstr(e.msg, "2000 blocks"));
	kernel_free(k);
	kernel_free(k2);
	dist_free(p);
}

/* what a part refuses: a layout out of NCCL's order (with the element), reading what no step wrote, writing twice */
static void
test_overlap_refusals(void **state)
{
	const int64_t M = 16, N = 4, K = 4;
	AxeShape sa = SH2(M, K), sb = SH2(K, N), sc = SH2(M, N);
	DistProgram *p = prog(2);
	Kernel *k = gemm_kernel(M / 2, N, K / 2);
	const char *bind[] = { "A", "B", "Cp" };
	int64_t at0[] = { 0, -1, 0 }, at1[] = { 16, -1, 32 };
	Err e;

	(void)state;
	add(p, "A", DT_FLOAT32, sa, parted(M, K, 2, 2, 1), 0);
	add(p, "B", DT_FLOAT32, sb, DT(sb, 2, "S(0)"), 0);
	add(p, "Cp", DT_FLOAT32, sc, parted(M, N, 2, 2, 0), 1);
	add(p, "C", DT_FLOAT32, sc, DT(sc, 2, "S(0)"), 0);
	add(p, "Cr", DT_FLOAT32, sc, DT(sc, 2, "R"), 1);
	add(p, "Cw", DT_FLOAT32, sc, DT(sc, 2, "S(0)"), 0);
	add(p, "D", DT_FLOAT32, sc, DT(sc, 2, "R"), 0);
	assert_int_equal(dist_launch_at(p, k, bind, at0, &e), 0);
	/* part 2's rows are not written yet */
	assert_int_equal(redist_part(p, "Cp", "C", 1, 2, &e), -1);
	assert_non_null(strstr(e.msg, "redistribute: reads element 32 of Cp's storage, which no step before it writes"));
	/* rows 0..7 again */
	assert_int_equal(dist_launch_at(p, k, bind, at0, &e), -1);
	assert_non_null(strstr(e.msg, "Cp is written already (elements [0, 32) by step 1)"));
	/* past the end */
	at1[2] = 40;
	assert_int_equal(dist_launch_at(p, k, bind, at1, &e), -1);
	assert_non_null(strstr(e.msg, "kernel buffer C holds 32 float32 from element 40; tensor Cp stores 64"));
	at1[2] = 32;
	assert_int_equal(dist_launch_at(p, k, bind, at1, &e), 1);
	assert_int_equal(redist_part(p, "Cp", "C", 0, 2, &e), 2);
	assert_int_equal(redist_part(p, "Cp", "C", 0, 2, &e), -1);
	assert_non_null(strstr(e.msg, "C is written already"));
	assert_int_equal(redist_part(p, "Cp", "C", 1, 3, &e), -1);
	assert_non_null(strstr(e.msg, "32 elements a device in 3 parts"));
	/* whole rows a device, rank-major only for the whole: part 1's element (4, 0) is out of place */
	{
		const char *bind2[] = { "A", "B", "Cr" };
		Kernel *k2 = gemm_kernel(M, N, K / 2);

		assert_int_equal(dist_launch(p, k2, bind2, &e), 3);
		assert_int_equal(redist_part(p, "Cr", "Cw", 0, 2, &e), -1);
		assert_non_null(strstr(e.msg, "reduce_scatter Cr -> Cw in 2 parts: element (4, 0) lands at Cw[16] on device 0, so "
		                              "NCCL takes it from Cr[32]; Cr's layout stores it at 16"));
		/* a broadcast has no parts */
		assert_int_equal(redist_part(p, "Cw", "D", 0, 2, &e), -1);
		kernel_free(k2);
	}
	kernel_free(k);
	dist_free(p);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_axe_dist_kinds),
		cmocka_unit_test(test_axe_dist_refusals),
		cmocka_unit_test(test_axe_redistribute),
		cmocka_unit_test(test_every_redistribution),
		cmocka_unit_test(test_gemm_reduce_scatter),
		cmocka_unit_test(test_export_files),
		cmocka_unit_test(test_overlap_parts),
		cmocka_unit_test(test_overlap_allgather),
		cmocka_unit_test(test_overlap_via),
		cmocka_unit_test(test_overlap_refusals),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
