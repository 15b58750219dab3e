/* bench/dist/ref.cu - the hand-written references for tessel's multi-GPU GEMMs on TESSEL_NDEV GPUs
** (bench/dist/run.sh builds it against an export of bench/dist/export.lua):
**
**     nvcc -O3 -std=c++17 -gencode=arch=compute_90a,code=sm_90a -I<export dir> -o ref bench/dist/ref.cu -lcublas -lnccl -lpthread
**     ./ref rs M N K parts [runs]    GEMM sharded on K + reduce_scatter (gemm_rs_*, gemm_rs_ov<parts>_*)
**     ./ref ag M N K parts [runs]    allgather of A's rows + GEMM, B sharded on N (ag_gemm_*, ag_gemm_ov<parts>_*)
**
** parts: the export's parts (0 or 1: one piece). An export in parts stores the rows of A and Cp (rs),
** or of Af and C (ag), as (parts, devices, rows); the reference runs on row-major tensors, permuted
** from and to the export's storage by a copy kernel outside the timed loops.
** The same inputs for both: tessel's storage filled with a hash of the element. Reference, unfused as
** a framework runs it: cuBLAS (cublasGemmEx, float16 in and out, float32 accumulation) and NCCL
** (float16), on one stream. tessel: the exported program (dist.cu, tessel_rank_run), kernels and
** collectives on two streams. Both outputs are compared (relative L2 error of each GPU's part), then
** both are timed the same way: all GPUs start after a barrier, a run ends when the last GPU finishes,
** the median of the runs. The collectives alone are timed on the same buffers, with bus bandwidth
** as nccl-tests defines it.
*/
#include "dist.cu"

#include <algorithm>
#include <pthread.h>
#include <time.h>
#include <cublas_v2.h>

static int M, N, K, parts = 1, runs = 30, mode_ag;
static pthread_barrier_t barrier;
static ncclComm_t comms[TESSEL_NDEV];
enum { T_TESSEL, T_REF, T_CUBLAS, T_RS, T_AG, T_AR, NT };
static double times[NT][1000];
static double err[TESSEL_NDEV];
static int failed;

static double
now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

__global__ void
fill(__half *p, size_t n, unsigned seed)
{
	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
		unsigned h = (unsigned)i * 2654435761u ^ seed;
		h ^= h >> 16; h *= 2246822519u; h ^= h >> 13; h *= 3266489917u; h ^= h >> 16;
		p[i] = __float2half((h >> 8) * (2.0f / 16777216.0f) - 1.0f);
	}
}

/* ||a - b|| and ||b|| over n halves */
__global__ void
diff(const __half *a, const __half *b, size_t n, double *out)
{
	double d = 0, w = 0;
	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
		double x = __half2float(a[i]), y = __half2float(b[i]);
		d += (x - y) * (x - y);
		w += y * y;
		if (x != x)
			d = INFINITY;
	}
	atomicAdd(&out[0], d);
	atomicAdd(&out[1], w);
}

/* rows of a (rows, w) tensor: to[L] = from[S] (to_storage 0) or to[S] = from[L] (1), where the storage row
** S = j n rr + o rr + i holds logical row L = o c rr + j rr + i (c parts, n devices, rr = rows / (n c)) */
__global__ void
permute_rows(__half *to, const __half *from, size_t rows, size_t w, int n, int c, int to_storage)
{
	size_t rr = rows / ((size_t)n * c);
	for (size_t x = blockIdx.x * (size_t)blockDim.x + threadIdx.x; x < rows * w; x += (size_t)gridDim.x * blockDim.x) {
		size_t S = x / w, col = x % w, j = S / (n * rr), o = S / rr % n, i = S % rr, L = o * c * rr + j * rr + i;
		if (to_storage)
			to[S * w + col] = from[L * w + col];
		else
			to[L * w + col] = from[S * w + col];
	}
}

#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { \
	fprintf(stderr, "rank %d: %s: %s\n", r, #x, cudaGetErrorString(e_)); failed = 1; return NULL; } } while (0)
#define NK(x) do { ncclResult_t e_ = (x); if (e_ != ncclSuccess) { \
	fprintf(stderr, "rank %d: %s: %s\n", r, #x, ncclGetErrorString(e_)); failed = 1; return NULL; } } while (0)
#define BK(x) do { cublasStatus_t e_ = (x); if (e_ != CUBLAS_STATUS_SUCCESS) { \
	fprintf(stderr, "rank %d: %s: cuBLAS status %d\n", r, #x, (int)e_); failed = 1; return NULL; } } while (0)

/* one timed loop of `what` on every GPU: barrier, enqueue, wait, barrier */
#define TIMED(slot, what) \
	for (int it = -3; it < runs; it++) { \
		pthread_barrier_wait(&barrier); \
		double t0 = now(); \
		what; \
		CK(cudaStreamSynchronize(R.stream)); \
		pthread_barrier_wait(&barrier); \
		if (r == 0 && it >= 0) \
			times[slot][it] = now() - t0; \
	}

static void *
rank_main(void *arg)
{
	int r = (int)(size_t)arg, n = TESSEL_NDEV, c = parts > 1 ? parts : 1;
	int ia = tessel_tensor_index("A"), ib = tessel_tensor_index("B"), ic = tessel_tensor_index("C");
	/* rs: A (M, K/n) and B (K/n, N) per device, C (M/n, N); ag: A (M/n, K), B (K, N/n), C (M, N/n) */
	size_t ar = mode_ag ? M / n : M, ac = mode_ag ? K : K / n, bk = mode_ag ? K : K / n, bn = mode_ag ? N / n : N;
	size_t na = ar * ac, nb = bk * bn, nc = mode_ag ? (size_t)M * (N / n) : (size_t)M * N / n;
	size_t nbig = (size_t)M * N;
	TesselRank R;
	__half *a, *full, *c_ref, *c_got, *big;
	double *d, h[2];
	cublasHandle_t blas;
	const float one = 1, zero = 0;

	if (tessel_rank_init(&R, r, comms[r]) < 0) {
		failed = 1;
		return NULL;
	}
	if (ia < 0 || ib < 0 || ic < 0 || tessel_tensor_count[ia] != na || tessel_tensor_count[ib] != nb ||
	    tessel_tensor_count[ic] != nc) {
		fprintf(stderr, "ref: the export is not the %s of %d x %d x %d on %d GPUs\n",
		        mode_ag ? "allgather + GEMM" : "GEMM + reduce_scatter", M, N, K, n);
		failed = 1;
		return NULL;
	}
	CK(cudaMalloc(&a, na * 2));            /* rs: A row-major; ag: unused */
	CK(cudaMalloc(&full, nbig * 2 > (size_t)M * K * 2 ? nbig * 2 : (size_t)M * K * 2));   /* rs: Cp; ag: A gathered */
	CK(cudaMalloc(&c_ref, nc * 2));
	CK(cudaMalloc(&c_got, nc * 2));
	CK(cudaMalloc(&big, nbig * 2));
	CK(cudaMalloc(&d, 2 * sizeof *d));
	BK(cublasCreate(&blas));
	BK(cublasSetStream(blas, R.stream));
	fill<<<1024, 256, 0, R.stream>>>((__half *)R.t[ia], na, 0x1234u + 977u * r);
	fill<<<1024, 256, 0, R.stream>>>((__half *)R.t[ib], nb, 0x5678u + 977u * r);
	fill<<<1024, 256, 0, R.stream>>>(big, nbig, 0x9abcu + 977u * r);
	CK(cudaMemsetAsync(R.t[ic], 0xff, nc * 2, R.stream));   /* NaN: an unwritten element shows */
	/* rs: the reference's A is the export's, its rows back in logical order */
	if (!mode_ag)
		permute_rows<<<1024, 256, 0, R.stream>>>(a, (const __half *)R.t[ia], ar, ac, n, c, 0);
	CK(cudaStreamSynchronize(R.stream));
	/* row-major C = A B is column-major C^T = B^T A^T */
#define RS_GEMM BK(cublasGemmEx(blas, CUBLAS_OP_N, CUBLAS_OP_N, N, M, K / n, &one, R.t[ib], CUDA_R_16F, N, \
	a, CUDA_R_16F, K / n, &zero, full, CUDA_R_16F, N, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT))
#define RS_COLL NK(ncclReduceScatter(full, c_ref, nc, ncclFloat16, ncclSum, R.comm, R.stream))
#define AG_COLL NK(ncclAllGather(R.t[ia], full, na, ncclFloat16, R.comm, R.stream))
#define AG_GEMM BK(cublasGemmEx(blas, CUBLAS_OP_N, CUBLAS_OP_N, N / n, M, K, &one, R.t[ib], CUDA_R_16F, N / n, \
	full, CUDA_R_16F, K, &zero, c_ref, CUDA_R_16F, N / n, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT))
#define REF_GEMM do { if (mode_ag) AG_GEMM; else RS_GEMM; } while (0)
#define REF_COLL do { if (mode_ag) AG_COLL; else RS_COLL; } while (0)
	/* correctness first: one run of each, then the comparison */
	pthread_barrier_wait(&barrier);
	if (tessel_rank_run(&R) < 0) {
		failed = 1;
		return NULL;
	}
	if (mode_ag) {
		AG_COLL;
		AG_GEMM;
		/* tessel's C in parts keeps rows (parts, devices, rows) */
		permute_rows<<<1024, 256, 0, R.stream>>>(c_got, (const __half *)R.t[ic], M, N / n, n, c, 0);
	} else {
		RS_GEMM;
		RS_COLL;
		CK(cudaMemcpyAsync(c_got, R.t[ic], nc * 2, cudaMemcpyDeviceToDevice, R.stream));
	}
	CK(cudaMemsetAsync(d, 0, 2 * sizeof *d, R.stream));
	diff<<<256, 256, 0, R.stream>>>(c_got, c_ref, nc, d);
	CK(cudaMemcpyAsync(h, d, sizeof h, cudaMemcpyDeviceToHost, R.stream));
	CK(cudaStreamSynchronize(R.stream));
	err[r] = sqrt(h[0] / h[1]);
	TIMED(T_TESSEL, if (tessel_rank_run(&R) < 0) { failed = 1; return NULL; });
	TIMED(T_REF, if (mode_ag) { AG_COLL; AG_GEMM; } else { RS_GEMM; RS_COLL; });
	TIMED(T_CUBLAS, REF_GEMM);
	TIMED(T_RS, REF_COLL);
	TIMED(T_AG, NK(ncclAllGather(c_ref, big, nbig / n, ncclFloat16, R.comm, R.stream)));
	TIMED(T_AR, NK(ncclAllReduce(big, full, nbig, ncclFloat16, ncclSum, R.comm, R.stream)));
	cublasDestroy(blas);
	cudaFree(a);
	cudaFree(full);
	cudaFree(c_ref);
	cudaFree(c_got);
	cudaFree(big);
	cudaFree(d);
	tessel_rank_free(&R);
	return NULL;
}

static double
median(int slot)
{
	std::sort(times[slot], times[slot] + runs);
	return times[slot][runs / 2];
}

int
main(int argc, char **argv)
{
	int devs[TESSEL_NDEV], ndev = 0, n = TESSEL_NDEV;
	pthread_t th[TESSEL_NDEV];

	if (argc < 6 || (strcmp(argv[1], "rs") != 0 && strcmp(argv[1], "ag") != 0)) {
		fprintf(stderr, "usage: ref rs|ag M N K parts [runs]\n");
		return 2;
	}
	mode_ag = strcmp(argv[1], "ag") == 0;
	M = atoi(argv[2]), N = atoi(argv[3]), K = atoi(argv[4]), parts = atoi(argv[5]);
	if (argc > 6)
		runs = std::min(std::max(atoi(argv[6]), 1), 1000);
	setenv("NCCL_NVLS_ENABLE", "0", 0);
	if (cudaGetDeviceCount(&ndev) != cudaSuccess || ndev < n) {
		fprintf(stderr, "ref: %d GPUs needed, %d here\n", n, ndev);
		return 2;
	}
	for (int r = 0; r < n; r++)
		devs[r] = r;
	if (ncclCommInitAll(comms, n, devs) != ncclSuccess) {
		fprintf(stderr, "ref: ncclCommInitAll failed\n");
		return 1;
	}
	pthread_barrier_init(&barrier, NULL, n);
	for (int r = 0; r < n; r++)
		pthread_create(&th[r], NULL, rank_main, (void *)(size_t)r);
	for (int r = 0; r < n; r++)
		pthread_join(th[r], NULL);
	for (int r = 0; r < n; r++)
		ncclCommDestroy(comms[r]);
	if (failed)
		return 1;
	double worst = 0;
	for (int r = 0; r < n; r++)
		worst = std::max(worst, err[r]);
	double flops = 2.0 * M * N * (double)K, rs = (double)M * N * 2, ag = rs, ar = rs;
	double tt = median(T_TESSEL), tr = median(T_REF), tb = median(T_CUBLAS), tcol = median(T_RS);
	double tag = median(T_AG), tar = median(T_AR);
	char what[64];
	if (mode_ag)
		ag = (double)M * K * 2;
	snprintf(what, sizeof what, mode_ag ? "allgather + GEMM" : "GEMM + reduce_scatter");
	if (parts > 1)
		snprintf(what + strlen(what), sizeof what - strlen(what), ", %d parts", parts);
	printf(mode_ag ? "allgather of A (M x K, rows sharded) + GEMM %d x %d x %d (N sharded) on %d GPUs, float16; "
	                 "tessel against NCCL + cuBLAS:\n"
	               : "GEMM %d x %d x %d (K sharded) + reduce_scatter on %d GPUs, float16; tessel against cuBLAS + NCCL:\n",
	       M, N, K, n);
	printf("  tessel's C against the reference's: relative L2 error %.3g (float16)\n", worst);
	printf("  %-34s %10s %12s\n", "", "ms", "TFLOP/s");
	printf("  %-34s %10.4f %12.1f\n", what, tt * 1e3, flops / tt / 1e12);
	printf("  %-34s %10.4f %12.1f\n", mode_ag ? "NCCL + cuBLAS (unfused)" : "cuBLAS + NCCL (unfused)", tr * 1e3,
	       flops / tr / 1e12);
	printf("  %-34s %10.4f %12.1f\n", "  of which cuBLAS GEMM alone", tb * 1e3, flops / tb / 1e12);
	printf("  %-34s %10.4f\n", mode_ag ? "  of which allgather alone" : "  of which reduce_scatter alone", tcol * 1e3);
	printf("  ratio reference / tessel: %.3f (above 1: tessel is faster)\n", tr / tt);
	printf("TABLE | %d | %s | %d x %d x %d | %.4f | %.4f | %.2fx | %.4f | %.4f |\n", n, what, M, N, K, tt * 1e3,
	       tr * 1e3, tr / tt, tb * 1e3, tcol * 1e3);
	printf("collectives on these buffers (bus bandwidth as nccl-tests defines it):\n");
	printf("  %-16s %12s %10s %12s\n", "", "bytes", "ms", "busbw GB/s");
	if (mode_ag)
		printf("  %-16s %12.0f %10.4f %12.1f\n", "allgather of A", ag, tcol * 1e3, ag / tcol * (n - 1) / n / 1e9);
	else
		printf("  %-16s %12.0f %10.4f %12.1f\n", "reduce_scatter", rs, tcol * 1e3, rs / tcol * (n - 1) / n / 1e9);
	printf("  %-16s %12.0f %10.4f %12.1f\n", "allgather", rs, tag * 1e3, rs / tag * (n - 1) / n / 1e9);
	printf("  %-16s %12.0f %10.4f %12.1f\n", "allreduce", ar, tar * 1e3, ar / tar * 2 * (n - 1) / n / 1e9);
	return worst < 2e-2 ? 0 : 1;
}
