/* bench/dist/ref.cu - the hand-written reference for tessel's GEMM + reduce_scatter on TESSEL_NDEV GPUs
** (bench/dist/run.sh builds it against an export of bench/dist/export.lua):
**
**     nvcc -O3 -std=c++17 -gencode=arch=compute_90a,code=sm_90a -I<export dir> -o ref bench/dist/ref.cu -lcublas -lnccl -lpthread
**     ./ref M N K [runs]
**
** The same inputs on every GPU for both: A (M, K/n) and B (K/n, N) float16, a hash of the element.
** Reference, unfused as a framework runs it: cuBLAS (cublasGemmEx, float16 in and out, float32
** accumulation) into the partial C (M, N), then ncclReduceScatter (float16, sum) into each GPU's
** M/n rows. tessel: the exported program (dist.cu, tessel_rank_run). Both outputs are compared
** (relative L2 error of each GPU's rows), then both are timed the same way: all GPUs start after a
** barrier, a run ends when the last GPU finishes, the median of the runs. The collectives alone
** are timed on the same buffers, with bus bandwidth as nccl-tests defines it.
*/
#include "dist.cu"

#include <algorithm>
#include <pthread.h>
#include <time.h>
#include <cublas_v2.h>

static int M, N, K, runs = 30;
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
	int r = (int)(size_t)arg, n = TESSEL_NDEV;
	int ia = tessel_tensor_index("A"), ib = tessel_tensor_index("B"), ip = tessel_tensor_index("Cp"),
	    ic = tessel_tensor_index("C");
	size_t na = (size_t)M * (K / n), nb = (size_t)(K / n) * N, nc = (size_t)M * N;
	TesselRank R;
	__half *cp, *c, *big;
	double *d, h[2];
	cublasHandle_t blas;
	const float one = 1, zero = 0;

	if (tessel_rank_init(&R, r, comms[r]) < 0) {
		failed = 1;
		return NULL;
	}
	if (tessel_tensor_count[ia] != na || tessel_tensor_count[ib] != nb || tessel_tensor_count[ip] != nc) {
		fprintf(stderr, "ref: the export is not the GEMM + reduce_scatter of %d x %d x %d\n", M, N, K);
		failed = 1;
		return NULL;
	}
	CK(cudaMalloc(&cp, nc * 2));
	CK(cudaMalloc(&c, nc / n * 2));
	CK(cudaMalloc(&big, nc * 2));
	CK(cudaMalloc(&d, 2 * sizeof *d));
	BK(cublasCreate(&blas));
	BK(cublasSetStream(blas, R.stream));
	fill<<<1024, 256, 0, R.stream>>>((__half *)R.t[ia], na, 0x1234u + 977u * r);
	fill<<<1024, 256, 0, R.stream>>>((__half *)R.t[ib], nb, 0x5678u + 977u * r);
	fill<<<1024, 256, 0, R.stream>>>(big, nc, 0x9abcu + 977u * r);
	CK(cudaMemsetAsync(R.t[ic], 0xff, nc / n * 2, R.stream));   /* NaN: an unwritten element shows */
	CK(cudaStreamSynchronize(R.stream));

	/* row-major C = A B is column-major C^T = B^T A^T */
#define REF_GEMM BK(cublasGemmEx(blas, CUBLAS_OP_N, CUBLAS_OP_N, N, M, K / n, &one, R.t[ib], CUDA_R_16F, N, \
	R.t[ia], CUDA_R_16F, K / n, &zero, cp, CUDA_R_16F, N, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT))
#define REF_RS NK(ncclReduceScatter(cp, c, nc / n, ncclFloat16, ncclSum, R.comm, R.stream))

	/* correctness first: one run of each, then the comparison */
	pthread_barrier_wait(&barrier);
	if (tessel_rank_run(&R) < 0) {
		failed = 1;
		return NULL;
	}
	REF_GEMM;
	REF_RS;
	CK(cudaMemsetAsync(d, 0, 2 * sizeof *d, R.stream));
	diff<<<256, 256, 0, R.stream>>>((const __half *)R.t[ic], c, nc / n, d);
	CK(cudaMemcpyAsync(h, d, sizeof h, cudaMemcpyDeviceToHost, R.stream));
	CK(cudaStreamSynchronize(R.stream));
	err[r] = sqrt(h[0] / h[1]);

	TIMED(T_TESSEL, if (tessel_rank_run(&R) < 0) { failed = 1; return NULL; });
	TIMED(T_REF, REF_GEMM; REF_RS);
	TIMED(T_CUBLAS, REF_GEMM);
	TIMED(T_RS, REF_RS);
	TIMED(T_AG, NK(ncclAllGather(c, cp, nc / n, ncclFloat16, R.comm, R.stream)));
	TIMED(T_AR, NK(ncclAllReduce(big, cp, nc, ncclFloat16, ncclSum, R.comm, R.stream)));

	cublasDestroy(blas);
	cudaFree(cp);
	cudaFree(c);
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

	if (argc < 4) {
		fprintf(stderr, "usage: ref M N K [runs]\n");
		return 2;
	}
	M = atoi(argv[1]), N = atoi(argv[2]), K = atoi(argv[3]);
	if (argc > 4)
		runs = std::min(std::max(atoi(argv[4]), 1), 1000);
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
	double tt = median(T_TESSEL), tr = median(T_REF), tb = median(T_CUBLAS), trs = median(T_RS);
	double tag = median(T_AG), tar = median(T_AR);
	printf("GEMM %d x %d x %d (K sharded) + reduce_scatter on %d GPUs, float16; tessel against cuBLAS + NCCL:\n",
	       M, N, K, n);
	printf("  tessel's C against the reference's: relative L2 error %.3g (float16 partial sums)\n", worst);
	printf("  %-34s %10s %12s\n", "", "ms", "TFLOP/s");
	printf("  %-34s %10.4f %12.1f\n", "tessel (GEMM + reduce_scatter)", tt * 1e3, flops / tt / 1e12);
	printf("  %-34s %10.4f %12.1f\n", "cuBLAS + NCCL (unfused)", tr * 1e3, flops / tr / 1e12);
	printf("  %-34s %10.4f %12.1f\n", "  of which cuBLAS GEMM alone", tb * 1e3, flops / tb / 1e12);
	printf("  %-34s %10.4f\n", "  of which reduce_scatter alone", trs * 1e3);
	printf("  ratio reference / tessel: %.3f (above 1: tessel is faster)\n", tr / tt);
	printf("collectives on these buffers (bus bandwidth as nccl-tests defines it):\n");
	printf("  %-16s %12s %10s %12s\n", "", "bytes", "ms", "busbw GB/s");
	printf("  %-16s %12.0f %10.4f %12.1f\n", "reduce_scatter", rs, trs * 1e3, rs / trs * (n - 1) / n / 1e9);
	printf("  %-16s %12.0f %10.4f %12.1f\n", "allgather", ag, tag * 1e3, ag / tag * (n - 1) / n / 1e9);
	printf("  %-16s %12.0f %10.4f %12.1f\n", "allreduce", ar, tar * 1e3, ar / tar * 2 * (n - 1) / n / 1e9);
	return worst < 2e-2 ? 0 : 1;
}
