/* nccl.c - a distributed program as CUDA kernels per device and host code on NCCL: one thread a GPU, the collectives on each rank's stream, checked against the CPU simulation. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend.h"
#include "emit.h"
#include "../interp/dist/dist.h"

/*
** What export_dist writes into dir (docs/distributed.md):
**   plan.txt           dist_plan's text
**   <unit>.cu          each kernel's CUDA (k:source("cuda")): a launch step's
**                      kernel once, a pack or unpack kernel once a device
**                      (once for all where the devices' sources agree)
**   dist.cu            the program: every unit included in its own namespace
**                      with its tessel_launch renamed, the tensor tables, and
**                      tessel_rank_init / tessel_rank_run / tessel_rank_free,
**                      which a thread calls for its GPU; a bench includes it
**   main.cu            creates the communicator (ncclCommInitAll), starts a
**                      thread a GPU; `./dist check` loads data/, runs once,
**                      compares every tensor a step writes with the
**                      simulation's; `./dist time [runs]` fills the inputs on
**                      the devices and prints the median latency. Or a
**                      process a GPU (ncclCommInitRank, the unique id through
**                      a file): `./dist launch N check`, or one rank started
**                      by torchrun, mpirun or by hand (RANK, WORLD_SIZE,
**                      LOCAL_RANK, TESSEL_NCCL_ID)
**   Makefile           nvcc ... -lnccl -lpthread (NCCL_HOME if not system-wide)
**   data/              with check: every input's local storage per device, and
**                      every written tensor's expected storage (ref_*)
** Names in the files are tensor and stage names, identifiers already.
*/

enum { E_IO = -2 };

static const char *
nccl_type(DType t)
{
	switch (t) {
	case DT_FLOAT32: return "ncclFloat32";
	case DT_FLOAT16: return "ncclFloat16";
	case DT_BFLOAT16: return "ncclBfloat16";
	case DT_FLOAT64: return "ncclFloat64";
	case DT_INT32: return "ncclInt32";
	case DT_INT64: return "ncclInt64";
	case DT_INT8: return "ncclInt8";
	case DT_UINT8: return "ncclUint8";
	case DT_UINT32: return "ncclUint32";
	case DT_UINT64: return "ncclUint64";
	default: return NULL;
	}
}

/* the C type main.cu fills and compares a tensor with */
static const char *
host_type(DType t)
{
	switch (t) {
	case DT_FLOAT32: return "float";
	case DT_FLOAT16: return "__half";
	case DT_BFLOAT16: return "__nv_bfloat16";
	case DT_FLOAT64: return "double";
	case DT_INT32: return "int32_t";
	case DT_INT64: return "int64_t";
	case DT_INT8: return "int8_t";
	case DT_UINT8: return "uint8_t";
	case DT_UINT32: return "uint32_t";
	case DT_UINT64: return "uint64_t";
	default: return NULL;
	}
}

/* How far a device value may be from the simulation's, relative to max(|ref|, 1). */
static double
dist_tol(DType t)
{
	return t == DT_FLOAT32 ? 1e-3 : t == DT_FLOAT64 ? 1e-9 : t == DT_FLOAT16 || t == DT_BFLOAT16 ? 2e-2 : 0;
}

/* A unit: one kernel's source, and the name its tessel_launch takes. */
typedef struct Unit {
	char name[K_NAME + 24];
	char *src;
} Unit;

typedef struct Units {
	Unit *u;
	int n, cap;
} Units;

static int
add_unit(Units *U, const char *name, char *src, Err *e)
{
	if (U->n == U->cap) {
		int cap = U->cap ? 2 * U->cap : 16;
		Unit *nu = realloc(U->u, (size_t)cap * sizeof *nu);

		if (!nu) {
			free(src);
			return err_set(e, "export: out of memory");
		}
		U->u = nu;
		U->cap = cap;
	}
	snprintf(U->u[U->n].name, sizeof U->u[U->n].name, "%s", name);
	U->u[U->n].src = src;
	return U->n++;
}

static char *
cuda_of(const Kernel *k, int fast, const char *what, Err *e)
{
	BSourceOpts so = { 0 };
	Buf b;
	char msg[sizeof e->msg];

	so.fast = fast;
	buf_init(&b);
	if (backend_source_opts(&b, k, D_CUDA, &so, e) < 0) {
		buf_free(&b);
		snprintf(msg, sizeof msg, "%s", e->msg);
		err_set(e, "export: %s: %s", what, msg);
		return NULL;
	}
	if (b.oom) {
		buf_free(&b);
		err_set(e, "export: out of memory");
		return NULL;
	}
	return buf_take(&b);
}

/*
** The units of step i: its kernel (a launch: pack[0] gets its unit), or its
** pack and unpack kernels per device (pack[r], unpack[r]: the unit device r
** launches, -1 for none).
*/
static int
step_units(const DistProgram *p, int i, Units *U, int *pack, int *unpack, int fast, Err *e)
{
	const DistStep *s = &p->s[i];
	int r, q, w;

	for (r = 0; r < p->ndev; r++)
		pack[r] = unpack[r] = -1;
	if (s->kind == DIST_LAUNCH) {
		char name[K_NAME + 24], *src;

		snprintf(name, sizeof name, "step%d_%s", i + 1, s->name);
		if (!(src = cuda_of(s->k, fast, name, e)))
			return -1;
		/* a kernel launched before (a GEMM a part at a time) is built once */
		for (q = 0; q < U->n; q++)
			if (strcmp(U->u[q].src, src) == 0) {
				free(src);
				pack[0] = q;
				return 0;
			}
		return (pack[0] = add_unit(U, name, src, e)) < 0 ? -1 : 0;
	}
	for (w = 0; w < 2; w++) {
		Kernel *const *ks = w ? s->unpack : s->pack;
		int *to = w ? unpack : pack, same = 1, first = -1;
		char **src = calloc((size_t)p->ndev, sizeof *src);

		if (!src)
			return err_set(e, "export: out of memory");
		for (r = 0; r < p->ndev; r++) {
			if (!ks[r])
				continue;
			if (!(src[r] = cuda_of(ks[r], fast, ks[r]->stage[0].name, e))) {
				for (q = 0; q < r; q++)
					free(src[q]);
				free(src);
				return -1;
			}
			if (first < 0)
				first = r;
			else
				same &= strcmp(src[first], src[r]) == 0;
		}
		/* one unit when the devices' sources agree (a slice names the device: then one each) */
		for (r = 0; r < p->ndev; r++) {
			char name[K_NAME + 24];

			if (!src[r])
				continue;
			if (same && r != first) {
				free(src[r]);
				to[r] = to[first];
				continue;
			}
			snprintf(name, sizeof name, "step%d_%s", i + 1, ks[r]->stage[0].name);
			if (!same)
				snprintf(name + strlen(name), sizeof name - strlen(name), "_r%d", r);
			if ((to[r] = add_unit(U, name, src[r], e)) < 0) {
				for (q = r + 1; q < p->ndev; q++)
					free(src[q]);
				free(src);
				return -1;
			}
		}
		free(src);
	}
	return 0;
}

/* the kernel's buffer pointers: bound tensors, the step's temporaries, NULL for shared and local */
static void
launch_args(Buf *b, const Kernel *k, const int *bind, const int64_t *at, int *ntemp)
{
	int j;

	emit(b, "    void *b[] = {");
	for (j = 0; j < k->nbuf; j++) {
		const KBuf *kb = &k->buf[j];

		if (j)
			emit(b, ", ");
		if (bind && bind[j] >= 0 && at && at[j])
			emit(b, "(char *)R->t[%d] + %lld", bind[j], (long long)(at[j] * dtype_bytes(kb->dtype)));
		else if (bind && bind[j] >= 0)
			emit(b, "R->t[%d]", bind[j]);
		else if (kb->scope == AS_GLOBAL)
			emit(b, "R->temp[%d]", (*ntemp)++);
		else
			emit(b, "NULL");
	}
	if (!k->nbuf)
		emit(b, "NULL");
	emit(b, "};\n");
}

static void
call_unit(Buf *b, const Units *U, const int *unit, int ndev, const char *in, const char *out)
{
	int r, same = 1;

	for (r = 1; r < ndev; r++)
		same &= unit[r] == unit[0];
	emit(b, "    void *b[] = {%s, %s};\n", in, out);
	if (same) {
		emit(b, "    tessel_%s::tessel_%s_launch(b, st);\n", U->u[unit[0]].name, U->u[unit[0]].name);
		return;
	}
	emit(b, "    switch (R->rank) {\n");
	for (r = 0; r < ndev; r++)
		if (unit[r] >= 0)
			emit(b, "    case %d: tessel_%s::tessel_%s_launch(b, st); break;\n", r, U->u[unit[r]].name,
			     U->u[unit[r]].name);
	emit(b, "    default: break;\n    }\n");
}

static void
comment_lines(Buf *b, const char *text)
{
	const char *s = text, *nl;

	while (*s) {
		nl = strchr(s, '\n');
		emit(b, "**   ");
		emitn(b, s, nl ? (size_t)(nl - s) : strlen(s));
		emit(b, "\n");
		if (!nl)
			break;
		s = nl + 1;
	}
}

static const char dist_runtime[] =
	"#define TESSEL_CUDA(x) do { cudaError_t err_ = (x); if (err_ != cudaSuccess) { \\\n"
	"    fprintf(stderr, \"rank %d: %s: %s\\n\", R->rank, #x, cudaGetErrorString(err_)); return -1; } } while (0)\n"
	"#define TESSEL_NCCL(x) do { ncclResult_t err_ = (x); if (err_ != ncclSuccess) { \\\n"
	"    fprintf(stderr, \"rank %d: %s: %s\\n\", R->rank, #x, ncclGetErrorString(err_)); return -1; } } while (0)\n"
	"\n"
	"/* Every rank, for the peer copies (registered by tessel_rank_init), and a barrier of the threads\n"
	"** that drive them: a step another GPU waits for is enqueued on every GPU before any GPU waits on it. */\n"
	"static TesselRank *tessel_ranks[TESSEL_NDEV];\n"
	"/* the GPU of this process's rank when it is one rank of many processes (LOCAL_RANK); -1: GPU r */\n"
	"static int tessel_local_device = -1;\n"
	"static pthread_barrier_t tessel_barrier;\n"
	"static pthread_once_t tessel_barrier_once = PTHREAD_ONCE_INIT;\n"
	"\n"
	"static void\n"
	"tessel_barrier_init(void)\n"
	"{\n"
	"  pthread_barrier_init(&tessel_barrier, NULL, TESSEL_NDEV);\n"
	"}\n"
	"\n"
	"__device__ static double tessel_widen(float x) { return x; }\n"
	"__device__ static double tessel_widen(double x) { return x; }\n"
	"__device__ static double tessel_widen(__half x) { return __half2float(x); }\n"
	"__device__ static double tessel_widen(__nv_bfloat16 x) { return __bfloat162float(x); }\n"
	"template <typename T> __device__ static long long tessel_widen(T x) { return (long long)x; }\n"
	"\n"
	"/* out[i] = the sum over the devices q of slot q's element i (own: the device's own summand), in A\n"
	"** (double for floats: the simulation's sum, rounded once) */\n"
	"template <typename T, typename A>\n"
	"__global__ void\n"
	"tessel_peer_sum(T *out, const T *own, const T *slots, size_t slot, size_t n, int rank)\n"
	"{\n"
	"  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {\n"
	"    A v = 0;\n"
	"    for (int q = 0; q < TESSEL_NDEV; q++)\n"
	"      v += tessel_widen(q == rank ? own[i] : slots[q * slot + i]);\n"
	"    out[i] = (T)v;\n"
	"  }\n"
	"}\n"
	"\n"
	"/* Copy from this GPU to every peer q at once, each on its own stream (copy engine): to(q) and\n"
	"** from(q) give the addresses; st waits for all of them. */\n"
	"template <typename To, typename From>\n"
	"static int\n"
	"tessel_peer_copies(TesselRank *R, cudaStream_t st, int step, size_t bytes, To to, From from)\n"
	"{\n"
	"  TESSEL_CUDA(cudaEventRecord(R->ev_copy[step], st));\n"
	"  for (int q = 0; q < TESSEL_NDEV; q++) {\n"
	"    if (q == R->rank)\n"
	"      continue;\n"
	"    TESSEL_CUDA(cudaStreamWaitEvent(R->peer_stream[q], R->ev_copy[step], 0));\n"
	"    TESSEL_CUDA(cudaMemcpyPeerAsync(to(q), q, from(q), R->rank, bytes, R->peer_stream[q]));\n"
	"    TESSEL_CUDA(cudaEventRecord(R->ev_peer[q], R->peer_stream[q]));\n"
	"    TESSEL_CUDA(cudaStreamWaitEvent(st, R->ev_peer[q], 0));\n"
	"  }\n"
	"  return 0;\n"
	"}\n"
	"\n"
	"/* a GPU's pointers into every GPU's storage (kernel arguments) */\n"
	"typedef struct TesselPtrs {\n  const void *p[TESSEL_NDEV];\n} TesselPtrs;\n"
	"\n"
	"static __device__ bool\n"
	"tessel_aligned(const TesselPtrs &src, const void *out, size_t bytes)\n"
	"{\n"
	"  size_t a = (size_t)out | bytes;\n"
	"  for (int q = 0; q < TESSEL_NDEV; q++)\n"
	"    a |= (size_t)src.p[q];\n"
	"  return a % 16 == 0;\n"
	"}\n"
	"\n"
	"/* out[i] = the sum over q of src.p[q][i], i < n, in A (double for floats: rounded once); every\n"
	"** device's 16 bytes loaded before they are added, so NVLink has NDEV loads in flight a thread */\n"
	"template <typename T, typename A>\n"
	"__global__ void __launch_bounds__(512)\n"
	"tessel_load_sum(T *out, TesselPtrs src, size_t n)\n"
	"{\n"
	"  const size_t V = 16 / sizeof(T), step = (size_t)gridDim.x * blockDim.x;\n"
	"  size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;\n"
	"  if (sizeof(T) <= 16 && 16 % sizeof(T) == 0 && tessel_aligned(src, out, n * sizeof(T))) {\n"
	"    for (; i < n / V; i += step) {\n"
	"      uint4 v[TESSEL_NDEV], o;\n"
	"      for (int q = 0; q < TESSEL_NDEV; q++)\n"
	"        v[q] = ((const uint4 *)src.p[q])[i];\n"
	"      for (size_t k = 0; k < V; k++) {\n"
	"        A a = 0;\n"
	"        for (int q = 0; q < TESSEL_NDEV; q++)\n"
	"          a += tessel_widen(((const T *)&v[q])[k]);\n"
	"        ((T *)&o)[k] = (T)a;\n"
	"      }\n"
	"      ((uint4 *)out)[i] = o;\n"
	"    }\n"
	"    return;\n"
	"  }\n"
	"  for (; i < n; i += step) {\n"
	"    A a = 0;\n"
	"    for (int q = 0; q < TESSEL_NDEV; q++)\n"
	"      a += tessel_widen(((const T *)src.p[q])[i]);\n"
	"    out[i] = (T)a;\n"
	"  }\n"
	"}\n"
	"\n"
	"/* out = src.p[0][0 .. bytes), src.p[1][0 .. bytes), ...: an allgather's part, 16 bytes a load where\n"
	"** the pointers and sizes allow */\n"
	"__global__ void __launch_bounds__(512)\n"
	"tessel_load_gather(char *out, TesselPtrs src, size_t bytes)\n"
	"{\n"
	"  const size_t step = (size_t)gridDim.x * blockDim.x;\n"
	"  size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;\n"
	"  if (tessel_aligned(src, out, bytes)) {\n"
	"    size_t u = bytes / 16;\n"
	"    for (; i < TESSEL_NDEV * u; i += step)\n"
	"      ((uint4 *)out)[i] = ((const uint4 *)src.p[i / u])[i % u];\n"
	"    return;\n"
	"  }\n"
	"  for (; i < TESSEL_NDEV * bytes; i += step)\n"
	"    out[i] = ((const char *)src.p[i / bytes])[i % bytes];\n"
	"}\n"
	"\n"
	"static int\n"
	"tessel_tensor_index(const char *name)\n"
	"{\n"
	"  for (int i = 0; i < TESSEL_NTENSORS; i++)\n"
	"    if (strcmp(tessel_tensor_name[i], name) == 0)\n"
	"      return i;\n"
	"  return -1;\n"
	"}\n"
	"\n"
	"/* Rank r's storage on GPU r (every tensor's count, the staging buffer, the temporaries);\n"
	"** comm is its communicator. Call from the thread that drives GPU r. */\n"
	"static int\n"
	"tessel_rank_init(TesselRank *R, int r, ncclComm_t comm)\n"
	"{\n"
	"  memset(R, 0, sizeof *R);\n"
	"  R->rank = r;\n"
	"  R->comm = comm;\n"
	"  R->device = tessel_local_device >= 0 ? tessel_local_device : r;\n"
	"  TESSEL_CUDA(cudaSetDevice(R->device));\n"
	"  TESSEL_CUDA(cudaStreamCreateWithFlags(&R->stream, cudaStreamNonBlocking));\n"
	"  TESSEL_CUDA(cudaStreamCreateWithFlags(&R->comm_stream, cudaStreamNonBlocking));\n"
	"  TESSEL_CUDA(cudaStreamCreateWithFlags(&R->reduce_stream, cudaStreamNonBlocking));\n"
	"  for (int i = 0; i < TESSEL_NSTEPS + 2; i++) {\n"
	"    TESSEL_CUDA(cudaEventCreateWithFlags(&R->ev[i], cudaEventDisableTiming));\n"
	"    TESSEL_CUDA(cudaEventCreateWithFlags(&R->ev_copy[i], cudaEventDisableTiming));\n"
	"  }\n"
	"  for (int q = 0; q < TESSEL_NDEV && TESSEL_PEERS; q++) {\n"
	"    TESSEL_CUDA(cudaStreamCreateWithFlags(&R->peer_stream[q], cudaStreamNonBlocking));\n"
	"    TESSEL_CUDA(cudaEventCreateWithFlags(&R->ev_peer[q], cudaEventDisableTiming));\n"
	"  }\n"
	"  pthread_once(&tessel_barrier_once, tessel_barrier_init);\n"
	"  tessel_ranks[r] = R;\n"
	"  /* peer copies: straight over NVLink where the GPUs can reach each other */\n"
	"  for (int q = 0; q < TESSEL_NDEV && TESSEL_PEERS; q++) {\n"
	"    int can = 0;\n"
	"    if (q == r || cudaDeviceCanAccessPeer(&can, r, q) != cudaSuccess || !can)\n"
	"      continue;\n"
	"    cudaError_t pe = cudaDeviceEnablePeerAccess(q, 0);\n"
	"    if (pe == cudaErrorPeerAccessAlreadyEnabled)\n"
	"      cudaGetLastError();\n"
	"    else\n"
	"      TESSEL_CUDA(pe);\n"
	"  }\n"
	"  if (tessel_peer_bytes)\n"
	"    TESSEL_CUDA(cudaMalloc(&R->peer, tessel_peer_bytes));\n"
	"  for (int i = 0; i < TESSEL_NTENSORS; i++)\n"
	"    TESSEL_CUDA(cudaMalloc(&R->t[i], tessel_tensor_count[i] * tessel_tensor_esize[i] + 16));\n"
	"  if (tessel_staging_bytes)\n"
	"    TESSEL_CUDA(cudaMalloc(&R->staging, tessel_staging_bytes));\n"
	"  for (int i = 0; i < TESSEL_NTEMP; i++) {\n"
	"    TESSEL_CUDA(cudaMalloc(&R->temp[i], tessel_temp_bytes[i] + 16));\n"
	"    /* temporaries start at zero (a kernel.atomic counter), as kernel_run's do */\n"
	"    TESSEL_CUDA(cudaMemset(R->temp[i], 0, tessel_temp_bytes[i] + 16));\n"
	"  }\n"
	"  return 0;\n"
	"}\n"
	"\n"
	"static void\n"
	"tessel_rank_free(TesselRank *R)\n"
	"{\n"
	"  cudaSetDevice(R->device);\n"
	"  for (int i = 0; i < TESSEL_NTENSORS; i++)\n"
	"    cudaFree(R->t[i]);\n"
	"  cudaFree(R->staging);\n"
	"  cudaFree(R->peer);\n"
	"  for (int i = 0; i < TESSEL_NTEMP; i++)\n"
	"    cudaFree(R->temp[i]);\n"
	"  for (int i = 0; i < TESSEL_NSTEPS + 2; i++) {\n"
	"    if (R->ev[i])\n"
	"      cudaEventDestroy(R->ev[i]);\n"
	"    if (R->ev_copy[i])\n"
	"      cudaEventDestroy(R->ev_copy[i]);\n"
	"  }\n"
	"  if (R->reduce_stream)\n"
	"    cudaStreamDestroy(R->reduce_stream);\n"
	"  for (int q = 0; q < TESSEL_NDEV; q++) {\n"
	"    if (R->peer_stream[q])\n"
	"      cudaStreamDestroy(R->peer_stream[q]);\n"
	"    if (R->ev_peer[q])\n"
	"      cudaEventDestroy(R->ev_peer[q]);\n"
	"  }\n"
	"  if (R->stream)\n"
	"    cudaStreamDestroy(R->stream);\n"
	"  if (R->comm_stream)\n"
	"    cudaStreamDestroy(R->comm_stream);\n"
	"}\n";

static int
dist_cu(Buf *b, const DistProgram *p, const Units *U, int **pk, int **up, const char *plan, Err *e)
{
	int i, j, ntemp = 0;
	int64_t staging = 0;

	emit(b, "/*\n** A tessel distributed program: CUDA kernels on each of %d GPUs and the NCCL collectives\n"
	        "** between them, one thread a GPU (main.cu). The plan:\n**\n", p->ndev);
	comment_lines(b, plan);
	emit(b, "*/\n#include <math.h>\n#include <stdint.h>\n#include <stdio.h>\n#include <stdlib.h>\n#include <string.h>\n"
	        "#include <pthread.h>\n#include <cuda_runtime.h>\n#include <cuda_fp16.h>\n#include <cuda_bf16.h>\n#include <nccl.h>\n\n"
	        "/* each kernel in a namespace of its own, its host entry renamed */\n");
	for (i = 0; i < U->n; i++)
		emit(b, "#define tessel_launch tessel_%s_launch\nnamespace tessel_%s {\n#include \"%s.cu\"\n}\n#undef tessel_launch\n",
		     U->u[i].name, U->u[i].name, U->u[i].name);
	emit(b, "\nenum { TESSEL_NDEV = %d, TESSEL_NTENSORS = %d };\n", p->ndev, p->nt);
	emit(b, "static const char *const tessel_tensor_name[] = {");
	for (i = 0; i < p->nt; i++)
		emit(b, "%s\"%s\"", i ? ", " : "", p->t[i].name);
	emit(b, "};\n/* elements each device stores, the bytes of one, whether a step writes it (else an input) */\n");
	emit(b, "static const size_t tessel_tensor_count[] = {");
	for (i = 0; i < p->nt; i++)
		emit(b, "%s%lld", i ? ", " : "", (long long)p->t[i].dist.count);
	emit(b, "};\nstatic const size_t tessel_tensor_esize[] = {");
	for (i = 0; i < p->nt; i++)
		emit(b, "%s%d", i ? ", " : "", dtype_bytes(p->t[i].dtype));
	emit(b, "};\nstatic const int tessel_tensor_written[] = {");
	for (i = 0; i < p->nt; i++)
		emit(b, "%s%d", i ? ", " : "", p->t[i].producer >= 0);
	emit(b, "};\n/* the device whose storage holds it (-1: every device's) */\nstatic const int tessel_tensor_root[] = {");
	for (i = 0; i < p->nt; i++)
		emit(b, "%s%lld", i ? ", " : "", p->t[i].dist.kind == AXE_SINGLE ? (long long)p->t[i].dist.root : -1LL);
	emit(b, "};\n/* its dtype, as main.cu fills and compares it: 0 float32, 1 float16, 2 bfloat16, 3 float64, 4 integer */\n"
	        "static const int tessel_tensor_kind[] = {");
	for (i = 0; i < p->nt; i++) {
		DType t = p->t[i].dtype;
		emit(b, "%s%d", i ? ", " : "", t == DT_FLOAT32 ? 0 : t == DT_FLOAT16 ? 1 : t == DT_BFLOAT16 ? 2 : t == DT_FLOAT64 ? 3 : 4);
	}
	emit(b, "};\nstatic const double tessel_tensor_tol[] = {");
	for (i = 0; i < p->nt; i++)
		emit(b, "%s%g", i ? ", " : "", dist_tol(p->t[i].dtype));
	emit(b, "};\n");
	for (i = 0; i < p->ns; i++) {
		const DistStep *s = &p->s[i];

		if (s->kind == DIST_REDIST)
			staging = s->staging * dtype_bytes(p->t[s->src].dtype) > staging
			          ? s->staging * dtype_bytes(p->t[s->src].dtype) : staging;
		else
			for (j = 0; j < s->k->nbuf; j++)
				if (s->bind[j] < 0 && s->k->buf[j].scope == AS_GLOBAL)
					ntemp++;
	}
	emit(b, "static const size_t tessel_staging_bytes = %lld;\n", (long long)staging);
	for (i = 0, j = 0; i < p->ns; i++)
		j |= p->s[i].kind == DIST_REDIST && p->s[i].via != DIST_VIA_NCCL;
	emit(b, "/* each device's buffer for what the peers copy in (reduce_scatter through peer copies) */\n"
	        "static const size_t tessel_peer_bytes = %lld;\nenum { TESSEL_PEERS = %d };\n", (long long)p->peer_bytes, j);
	emit(b, "enum { TESSEL_NTEMP = %d };\nstatic const size_t tessel_temp_bytes[] = {", ntemp);
	for (i = 0, ntemp = 0; i < p->ns; i++) {
		const DistStep *s = &p->s[i];

		if (s->kind == DIST_LAUNCH)
			for (j = 0; j < s->k->nbuf; j++)
				if (s->bind[j] < 0 && s->k->buf[j].scope == AS_GLOBAL)
					emit(b, "%s%lld", ntemp++ ? ", " : "", (long long)(s->k->buf[j].size * dtype_bytes(s->k->buf[j].dtype)));
	}
	if (!ntemp)
		emit(b, "0");
	emit(b, "};\n\nenum { TESSEL_NSTEPS = %d };\n", p->ns);
	emit(b, "\n/* one GPU's part: its rank, its streams (kernels on stream, collectives on comm_stream, the sums of\n"
	        "** peer copies on reduce_stream), an event a step (and two that fork and join the streams), one\n"
	        "** after each step's peer copies, its communicator and storage */\n"
	        "typedef struct TesselRank {\n  int rank, device;   /* device: its GPU in this process */\n  cudaStream_t stream, comm_stream, reduce_stream;\n"
	        "  cudaEvent_t ev[TESSEL_NSTEPS + 2], ev_copy[TESSEL_NSTEPS + 2];\n"
	        "  cudaStream_t peer_stream[TESSEL_NDEV];   /* a copy engine a peer: copies to each run at once */\n"
	        "  cudaEvent_t ev_peer[TESSEL_NDEV];\n  ncclComm_t comm;\n"
	        "  void *t[TESSEL_NTENSORS];\n  void *staging, *peer;\n  void *temp[TESSEL_NTEMP + 1];\n} TesselRank;\n\n");
	emit(b, "%s", dist_runtime);
	emit(b, "\n/* each step's stream (1: collectives) and the step of the other stream it waits for (-1: none) */\n"
	        "static const int tessel_step_stream[] = {");
	for (i = 0; i < p->ns; i++)
		emit(b, "%s%d", i ? ", " : "", p->s[i].stream);
	if (!p->ns)
		emit(b, "0");
	emit(b, "};\nstatic const int tessel_step_wait[][2] = {");
	for (i = 0; i < p->ns; i++)
		emit(b, "%s{%d, %d}", i ? ", " : "", p->s[i].wait[0], p->s[i].wait[1]);
	if (!p->ns)
		emit(b, "{-1, -1}");
	emit(b, "};\n/* 1 a reduce_scatter on the copy engines (it ends on the sums' stream), 2 an allgather on the copy\n"
	        "** engines (it writes every GPU's storage, so a step after it waits for every GPU's event), 3 a\n"
	        "** kernel loading from every GPU (it waits for every GPU to be where it is in the program) */\n"
	        "static const int tessel_step_peer[] = {");
	for (i = 0; i < p->ns; i++) {
		const DistStep *s = &p->s[i];

		emit(b, "%s%d", i ? ", " : "", s->kind != DIST_REDIST || s->via == DIST_VIA_NCCL ? 0 : s->via == DIST_VIA_LOAD ? 3
		     : s->r.coll == AXE_COLL_REDUCE_SCATTER ? 1 : 2);
	}
	if (!p->ns)
		emit(b, "0");
	emit(b, "};\nstatic const char *const tessel_step_name[] = {");
	for (i = 0; i < p->ns; i++) {
		const DistStep *s = &p->s[i];

		if (s->kind == DIST_LAUNCH)
			emit(b, "%s\"%d. launch %s\"", i ? ", " : "", i + 1, s->name);
		else
			emit(b, "%s\"%d. %s -> %s: %s\"", i ? ", " : "", i + 1, p->t[s->src].name, p->t[s->dst].name,
			     axe_coll_name(s->r.coll));
	}
	emit(b, "};\n\n/* Enqueue step i (0-based) on its stream st of rank R. */\n"
	        "static int\ntessel_rank_enqueue(TesselRank *R, int step, cudaStream_t st)\n{\n  switch (step) {\n");
	for (i = 0, ntemp = 0; i < p->ns; i++) {
		const DistStep *s = &p->s[i];
		const DistTensor *src, *dst;
		const char *nt = NULL;
		char in[64], out[64];

		if (s->kind == DIST_LAUNCH) {
			emit(b, "  case %d: { /* %d. launch %s */\n", i, i + 1, s->name);
			launch_args(b, s->k, s->bind, s->at, &ntemp);
			emit(b, "    tessel_%s::tessel_%s_launch(b, st);\n    TESSEL_CUDA(cudaGetLastError());\n    return 0;\n  }\n",
			     U->u[pk[i][0]].name, U->u[pk[i][0]].name);
			continue;
		}
		src = &p->t[s->src];
		dst = &p->t[s->dst];
		if (s->r.coll != AXE_COLL_NONE && !(nt = nccl_type(src->dtype)))
			return err_set(e, "export: %s -> %s: NCCL has no %s", src->name, dst->name, dtype_name(src->dtype));
		emit(b, "  case %d: { /* %d. %s -> %s: %s */\n", i, i + 1, src->name, dst->name, axe_coll_name(s->r.coll));
		if (s->parts) {
			DistRange rg[2];
			int es = dtype_bytes(src->dtype);

			dist_step_ranges(p, i, rg, 2);
			emit(b, "    /* part %d of %d: %s[%lld:%lld] -> %s[%lld:%lld] */\n", s->part + 1, s->parts, src->name,
			     (long long)rg[0].lo, (long long)rg[0].hi, dst->name, (long long)rg[1].lo, (long long)rg[1].hi);
			if (s->via == DIST_VIA_LOAD) {
				int sum = s->r.coll == AXE_COLL_REDUCE_SCATTER;
				int64_t c = sum ? rg[1].hi - rg[1].lo : rg[0].hi - rg[0].lo;

				emit(b, "    /* every device where this one is in the program, then a kernel on %d blocks loads %s */\n"
				        "    TESSEL_CUDA(cudaEventRecord(R->ev_copy[%d], st));\n    pthread_barrier_wait(&tessel_barrier);\n"
				        "    TesselPtrs from;\n    for (int q = 0; q < TESSEL_NDEV; q++) {\n"
				        "      TESSEL_CUDA(cudaStreamWaitEvent(st, tessel_ranks[q]->ev_copy[%d], 0));\n",
				        s->blocks, sum ? "this device's rows from every device and adds them" : "every device's part", i, i);
				if (sum)
					emit(b, "      from.p[q] = (const char *)tessel_ranks[q]->t[%d] + (%lld + (size_t)R->rank * %lld) * %d;\n    }\n"
					        "    tessel_load_sum<%s, %s><<<%d, 512, 0, st>>>((%s *)R->t[%d] + %lld, from, %lld);\n",
					        s->src, (long long)rg[0].lo, (long long)c, es, host_type(src->dtype),
					        dtype_is_float(src->dtype) ? "double" : "long long", s->blocks, host_type(src->dtype), s->dst,
					        (long long)rg[1].lo, (long long)c);
				else
					emit(b, "      from.p[q] = (const char *)tessel_ranks[q]->t[%d] + %lld;\n    }\n"
					        "    tessel_load_gather<<<%d, 512, 0, st>>>((char *)R->t[%d] + %lld, from, %lld);\n",
					        s->src, (long long)(rg[0].lo * es), s->blocks, s->dst, (long long)(rg[1].lo * es),
					        (long long)(c * es));
				emit(b, "    TESSEL_CUDA(cudaGetLastError());\n    return 0;\n  }\n");
				continue;
			}
			if (s->via == DIST_VIA_COPY && s->r.coll == AXE_COLL_REDUCE_SCATTER) {
				int64_t c = rg[1].hi - rg[1].lo;

				emit(b, "    /* each device's rows of the part to their owner's peer buffer, then the owner's sum */\n"
				        "    if (tessel_peer_copies(R, st, %d, %lld,\n"
				        "          [&](int q) { return (char *)tessel_ranks[q]->peer + %lld + ((size_t)R->rank * %lld + %lld) * %d; },\n"
				        "          [&](int q) { return (const char *)R->t[%d] + (%lld + (size_t)q * %lld) * %d; }) < 0)\n"
				        "      return -1;\n", i, (long long)(c * es), (long long)s->peer_at, (long long)dst->dist.count,
				        (long long)rg[1].lo, es, s->src, (long long)rg[0].lo, (long long)c, es);
				emit(b, "    TESSEL_CUDA(cudaEventRecord(R->ev_copy[%d], st));\n    pthread_barrier_wait(&tessel_barrier);\n"
				        "    for (int q = 0; q < TESSEL_NDEV; q++)\n"
				        "      TESSEL_CUDA(cudaStreamWaitEvent(R->reduce_stream, tessel_ranks[q]->ev_copy[%d], 0));\n", i, i);
				emit(b, "    tessel_peer_sum<%s, %s><<<%lld, 256, 0, R->reduce_stream>>>((%s *)R->t[%d] + %lld,\n"
				        "        (const %s *)R->t[%d] + %lld + (size_t)R->rank * %lld, (const %s *)((char *)R->peer + %lld) + %lld, %lld, %lld, R->rank);\n"
				        "    TESSEL_CUDA(cudaGetLastError());\n    return 0;\n  }\n",
				        host_type(src->dtype), dtype_is_float(src->dtype) ? "double" : "long long",
				        (long long)((c + 255) / 256 < 1024 ? (c + 255) / 256 : 1024), host_type(src->dtype), s->dst,
				        (long long)rg[1].lo, host_type(src->dtype), s->src, (long long)rg[0].lo, (long long)c,
				        host_type(src->dtype), (long long)s->peer_at, (long long)rg[1].lo, (long long)dst->dist.count,
				        (long long)c);
				continue;
			}
			if (s->via == DIST_VIA_COPY) {
				int64_t c = rg[0].hi - rg[0].lo;

				emit(b, "    /* the device's part to its place in its own result and every peer's */\n"
				        "    TESSEL_CUDA(cudaMemcpyAsync((char *)R->t[%d] + (%lld + (size_t)R->rank * %lld) * %d,\n"
				        "                                (const char *)R->t[%d] + %lld, %lld, cudaMemcpyDeviceToDevice, st));\n"
				        "    if (tessel_peer_copies(R, st, %d, %lld,\n"
				        "          [&](int q) { return (char *)tessel_ranks[q]->t[%d] + (%lld + (size_t)R->rank * %lld) * %d; },\n"
				        "          [&](int) { return (const char *)R->t[%d] + %lld; }) < 0)\n"
				        "      return -1;\n    return 0;\n  }\n",
				        s->dst, (long long)rg[1].lo, (long long)c, es, s->src, (long long)(rg[0].lo * es), (long long)(c * es),
				        i, (long long)(c * es), s->dst, (long long)rg[1].lo, (long long)c, es, s->src,
				        (long long)(rg[0].lo * es));
				continue;
			}
			emit(b, "    char *in = (char *)R->t[%d] + %lld, *out = (char *)R->t[%d] + %lld;\n", s->src,
			     (long long)(rg[0].lo * es), s->dst, (long long)(rg[1].lo * es));
			if (s->r.coll == AXE_COLL_REDUCE_SCATTER)
				emit(b, "    TESSEL_NCCL(ncclReduceScatter(in, out, %lld, %s, ncclSum, R->comm, st));\n",
				     (long long)(rg[1].hi - rg[1].lo), nt);
			else if (s->r.coll == AXE_COLL_ALLGATHER)
				emit(b, "    TESSEL_NCCL(ncclAllGather(in, out, %lld, %s, R->comm, st));\n",
				     (long long)(rg[0].hi - rg[0].lo), nt);
			else
				emit(b, "    TESSEL_NCCL(ncclAllReduce(in, out, %lld, %s, ncclSum, R->comm, st));\n",
				     (long long)(rg[0].hi - rg[0].lo), nt);
			emit(b, "    return 0;\n  }\n");
			continue;
		}
		snprintf(in, sizeof in, "R->t[%d]", s->src);
		if (s->r.pack) {
			call_unit(b, U, pk[i], p->ndev, in, "R->staging");
			emit(b, "    TESSEL_CUDA(cudaGetLastError());\n");
			snprintf(in, sizeof in, "R->staging");
		}
		if (s->r.unpack && !s->r.copy && s->r.coll != AXE_COLL_NONE)
			snprintf(out, sizeof out, "R->staging");
		else
			snprintf(out, sizeof out, "R->t[%d]", s->dst);
		switch (s->r.coll) {
		case AXE_COLL_ALLGATHER:
			emit(b, "    TESSEL_NCCL(ncclAllGather(%s, %s, %lld, %s, R->comm, st));\n", in, out,
			     (long long)src->dist.count, nt);
			break;
		case AXE_COLL_REDUCE_SCATTER:
			emit(b, "    TESSEL_NCCL(ncclReduceScatter(%s, %s, %lld, %s, ncclSum, R->comm, st));\n", in, out,
			     (long long)dst->dist.count, nt);
			break;
		case AXE_COLL_ALLREDUCE:
			emit(b, "    TESSEL_NCCL(ncclAllReduce(%s, %s, %lld, %s, ncclSum, R->comm, st));\n", in, out,
			     (long long)src->dist.size, nt);
			break;
		case AXE_COLL_BROADCAST:
			emit(b, "    TESSEL_NCCL(ncclBroadcast(%s, %s, %lld, %s, %lld, R->comm, st));\n", in, out,
			     (long long)src->dist.size, nt, (long long)s->r.root);
			break;
		case AXE_COLL_REDUCE:
			emit(b, "    TESSEL_NCCL(ncclReduce(%s, %s, %lld, %s, ncclSum, %lld, R->comm, st));\n", in, out,
			     (long long)src->dist.size, nt, (long long)s->r.root);
			break;
		case AXE_COLL_NONE:
			if (s->r.copy)
				emit(b, "    TESSEL_CUDA(cudaMemcpyAsync(%s, %s, %lld, cudaMemcpyDeviceToDevice, st));\n", out, in,
				     (long long)(dst->dist.count * dtype_bytes(dst->dtype)));
			break;
		}
		if (s->r.unpack && !s->r.copy) {
			char from[64];

			snprintf(from, sizeof from, "%s", s->r.coll == AXE_COLL_NONE ? in : "R->staging");
			snprintf(out, sizeof out, "R->t[%d]", s->dst);
			call_unit(b, U, up[i], p->ndev, from, out);
			emit(b, "    TESSEL_CUDA(cudaGetLastError());\n");
		}
		emit(b, "    return 0;\n  }\n");
	}
	emit(b, "  default:\n    return -1;\n  }\n}\n\n"
	        "/* Steps lo .. hi-1 of rank R, each on its stream after the step it waits for; the collectives'\n"
	        "** stream forks from R->stream first and joins it after, so R->stream orders whole runs. */\n"
	        "static int\ntessel_rank_steps(TesselRank *R, int lo, int hi)\n{\n"
	        "  TESSEL_CUDA(cudaEventRecord(R->ev[TESSEL_NSTEPS], R->stream));\n"
	        "  TESSEL_CUDA(cudaStreamWaitEvent(R->comm_stream, R->ev[TESSEL_NSTEPS], 0));\n"
	        "  TESSEL_CUDA(cudaStreamWaitEvent(R->reduce_stream, R->ev[TESSEL_NSTEPS], 0));\n"
	        "  for (int i = lo; i < hi; i++) {\n"
	        "    cudaStream_t st = tessel_step_stream[i] ? R->comm_stream : R->stream;\n"
	        "    for (int k = 0; k < 2; k++)\n"
	        "      for (int w = tessel_step_wait[i][k], q = 0; w >= 0 && q < TESSEL_NDEV; q++)\n"
	        "        if (q == R->rank || tessel_step_peer[w] == 2)\n"
	        "          TESSEL_CUDA(cudaStreamWaitEvent(st, tessel_ranks[q]->ev[w], 0));\n"
	        "    if (tessel_rank_enqueue(R, i, st) < 0)\n      return -1;\n"
	        "    TESSEL_CUDA(cudaEventRecord(R->ev[i], tessel_step_peer[i] == 1 ? R->reduce_stream : st));\n"
	        "    if (tessel_step_peer[i] == 2)\n"
	        "      pthread_barrier_wait(&tessel_barrier);   /* recorded on every GPU before any waits on it */\n"
	        "  }\n"
	        "  TESSEL_CUDA(cudaEventRecord(R->ev[TESSEL_NSTEPS + 1], R->comm_stream));\n"
	        "  TESSEL_CUDA(cudaStreamWaitEvent(R->stream, R->ev[TESSEL_NSTEPS + 1], 0));\n"
	        "  TESSEL_CUDA(cudaEventRecord(R->ev_copy[TESSEL_NSTEPS + 1], R->reduce_stream));\n"
	        "  TESSEL_CUDA(cudaStreamWaitEvent(R->stream, R->ev_copy[TESSEL_NSTEPS + 1], 0));\n"
	        "  if (TESSEL_PEERS)\n"
	        "    pthread_barrier_wait(&tessel_barrier);   /* no GPU leaves while another may still wait on its events */\n"
	        "  return 0;\n}\n\n"
	        "/* Enqueue step i alone, or the whole program, on rank R: R->stream's completion is the end. */\n"
	        "static int\ntessel_rank_step(TesselRank *R, int step)\n{\n  return tessel_rank_steps(R, step, step + 1);\n}\n\n"
	        "static int\ntessel_rank_run(TesselRank *R)\n{\n  return tessel_rank_steps(R, 0, TESSEL_NSTEPS);\n}\n");
	return 0;
}

static const char main_cu[] =
	"/* main.cu - runs dist.cu on TESSEL_NDEV GPUs, one thread a GPU:\n"
	"**   ./dist check        inputs from data/, one run, every written tensor compared with the\n"
	"**                       CPU simulation's (data/ref_*), relative to max(|ref|, 1)\n"
	"**   ./dist time [runs]  inputs filled on the GPUs, the median latency of a run of the whole\n"
	"**                       program, then of each step alone (all GPUs start together after a\n"
	"**                       barrier; a run ends when the last GPU finishes)\n"
	"** or a process a GPU, the same checks and times:\n"
	"**   ./dist launch N [check | time [runs]]   N processes on this machine's GPUs 0 .. N-1\n"
	"**   RANK=r WORLD_SIZE=N [LOCAL_RANK=g] TESSEL_NCCL_ID=file ./dist [check | time [runs]]\n"
	"**                       one rank (torchrun's variables; Open MPI's OMPI_COMM_WORLD_* too), on\n"
	"**                       GPU g of its host: rank 0 writes the NCCL unique id to file, which every\n"
	"**                       rank must see (a shared filesystem across hosts), the others read it and\n"
	"**                       all call ncclCommInitRank. The barrier is a 4-byte ncclAllReduce.\n"
	"*/\n"
	"#include \"dist.cu\"\n"
	"#include <pthread.h>\n"
	"#include <time.h>\n"
	"#include <signal.h>\n"
	"#include <sys/types.h>\n"
	"#include <sys/wait.h>\n"
	"#include <unistd.h>\n"
	"#include <algorithm>\n"
	"\n"
	"static pthread_barrier_t barrier;\n"
	"static ncclComm_t comms[TESSEL_NDEV];\n"
	"static int mode_check, runs = 50;\n"
	"static double *times;\n"
	"static int procs;            /* this process is one rank */\n"
	"static float *sync_buf;      /* procs: the barrier's allreduce */\n"
	"\n"
	"/* every rank here: the threads' barrier, or across processes an allreduce every rank waits for */\n"
	"static int\n"
	"everyone(TesselRank *R)\n"
	"{\n"
	"  if (!procs) {\n"
	"    pthread_barrier_wait(&barrier);\n"
	"    return 0;\n"
	"  }\n"
	"  TESSEL_NCCL(ncclAllReduce(sync_buf, sync_buf, 1, ncclFloat32, ncclSum, R->comm, R->stream));\n"
	"  TESSEL_CUDA(cudaStreamSynchronize(R->stream));\n"
	"  return 0;\n"
	"}\n"
	"\n"
	"typedef struct Thread {\n"
	"  int rank, status;\n"
	"  double worst;\n"
	"} Thread;\n"
	"\n"
	"static double\n"
	"now(void)\n"
	"{\n"
	"  struct timespec ts;\n"
	"  clock_gettime(CLOCK_MONOTONIC, &ts);\n"
	"  return ts.tv_sec + ts.tv_nsec * 1e-9;\n"
	"}\n"
	"\n"
	"static void *\n"
	"load(const char *name, size_t bytes)\n"
	"{\n"
	"  FILE *f = fopen(name, \"rb\");\n"
	"  void *p = malloc(bytes ? bytes : 1);\n"
	"  if (!f || !p || fread(p, 1, bytes, f) != bytes) {\n"
	"    fprintf(stderr, \"cannot read %s (%zu bytes): run ./dist check from the export's directory\\n\", name, bytes);\n"
	"    if (f)\n"
	"      fclose(f);\n"
	"    free(p);\n"
	"    return NULL;\n"
	"  }\n"
	"  fclose(f);\n"
	"  return p;\n"
	"}\n"
	"\n"
	"static double\n"
	"value(int kind, const void *p, size_t i)\n"
	"{\n"
	"  switch (kind) {\n"
	"  case 0: return ((const float *)p)[i];\n"
	"  case 1: return __half2float(((const __half *)p)[i]);\n"
	"  case 2: return __bfloat162float(((const __nv_bfloat16 *)p)[i]);\n"
	"  case 3: return ((const double *)p)[i];\n"
	"  default: return 0;\n"
	"  }\n"
	"}\n"
	"\n"
	"/* uniform values in [-1, 1) from a hash of (tensor, rank, element): inputs that are not zeros */\n"
	"__global__ void\n"
	"fill(void *p, size_t n, int kind, size_t esize, unsigned seed)\n"
	"{\n"
	"  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {\n"
	"    unsigned h = (unsigned)i * 2654435761u ^ seed;\n"
	"    h ^= h >> 16; h *= 2246822519u; h ^= h >> 13; h *= 3266489917u; h ^= h >> 16;\n"
	"    float v = (h >> 8) * (2.0f / 16777216.0f) - 1.0f;\n"
	"    switch (kind) {\n"
	"    case 0: ((float *)p)[i] = v; break;\n"
	"    case 1: ((__half *)p)[i] = __float2half(v); break;\n"
	"    case 2: ((__nv_bfloat16 *)p)[i] = __float2bfloat16(v); break;\n"
	"    case 3: ((double *)p)[i] = v; break;\n"
	"    default: for (size_t b = 0; b < esize; b++) ((unsigned char *)p)[i * esize + b] = b ? 0 : h % 7;\n"
	"    }\n"
	"  }\n"
	"}\n"
	"\n"
	"static int\n"
	"check(Thread *T, TesselRank *R)\n"
	"{\n"
	"  char name[512];\n"
	"  for (int i = 0; i < TESSEL_NTENSORS; i++) {\n"
	"    size_t bytes = tessel_tensor_count[i] * tessel_tensor_esize[i];\n"
	"    if (tessel_tensor_written[i]) {\n"
	"      TESSEL_CUDA(cudaMemset(R->t[i], 0xff, bytes));   /* NaN for floats: an unwritten element shows */\n"
	"      continue;\n"
	"    }\n"
	"    snprintf(name, sizeof name, \"data/%s_r%d.bin\", tessel_tensor_name[i], R->rank);\n"
	"    void *h = load(name, bytes);\n"
	"    if (!h)\n"
	"      return -1;\n"
	"    TESSEL_CUDA(cudaMemcpy(R->t[i], h, bytes, cudaMemcpyHostToDevice));\n"
	"    free(h);\n"
	"  }\n"
	"  if (everyone(R) < 0 || tessel_rank_run(R) < 0)\n"
	"    return -1;\n"
	"  TESSEL_CUDA(cudaStreamSynchronize(R->stream));\n"
	"  int bad = 0;\n"
	"  for (int i = 0; i < TESSEL_NTENSORS; i++) {\n"
	"    if (!tessel_tensor_written[i] || (tessel_tensor_root[i] >= 0 && tessel_tensor_root[i] != R->rank))\n"
	"      continue;\n"
	"    size_t n = tessel_tensor_count[i], bytes = n * tessel_tensor_esize[i];\n"
	"    snprintf(name, sizeof name, \"data/ref_%s_r%d.bin\", tessel_tensor_name[i], R->rank);\n"
	"    void *want = load(name, bytes), *got = malloc(bytes ? bytes : 1);\n"
	"    if (!want || !got) {\n"
	"      free(want);\n"
	"      free(got);\n"
	"      return -1;\n"
	"    }\n"
	"    TESSEL_CUDA(cudaMemcpy(got, R->t[i], bytes, cudaMemcpyDeviceToHost));\n"
	"    int kind = tessel_tensor_kind[i];\n"
	"    double worst = 0;\n"
	"    size_t at = 0;\n"
	"    for (size_t j = 0; j < n; j++) {\n"
	"      double d;\n"
	"      if (kind == 4)\n"
	"        d = memcmp((char *)got + j * tessel_tensor_esize[i], (char *)want + j * tessel_tensor_esize[i],\n"
	"                   tessel_tensor_esize[i]) != 0;\n"
	"      else {\n"
	"        double g = value(kind, got, j), w = value(kind, want, j);\n"
	"        d = fabs(g - w) / fmax(fabs(w), 1.0);\n"
	"        if (d != d || g != g)\n"
	"          d = INFINITY;\n"
	"      }\n"
	"      if (d > worst)\n"
	"        worst = d, at = j;\n"
	"    }\n"
	"    if (worst > tessel_tensor_tol[i]) {\n"
	"      fprintf(stderr, \"rank %d: %s differs from the simulation at local element %zu: %g against %g (error %.3g, \"\n"
	"              \"tolerance %g)\\n\", R->rank, tessel_tensor_name[i], at, value(kind, got, at), value(kind, want, at),\n"
	"              worst, tessel_tensor_tol[i]);\n"
	"      bad = 1;\n"
	"    }\n"
	"    T->worst = fmax(T->worst, worst);\n"
	"    free(want);\n"
	"    free(got);\n"
	"  }\n"
	"  return bad ? -1 : 0;\n"
	"}\n"
	"\n"
	"static int\n"
	"timed(Thread *T, TesselRank *R)\n"
	"{\n"
	"  for (int i = 0; i < TESSEL_NTENSORS; i++) {\n"
	"    if (tessel_tensor_written[i])\n"
	"      continue;\n"
	"    fill<<<1024, 256, 0, R->stream>>>(R->t[i], tessel_tensor_count[i], tessel_tensor_kind[i],\n"
	"                                      tessel_tensor_esize[i], 0x9e3779b9u * (i + 1) + 7919u * R->rank);\n"
	"    TESSEL_CUDA(cudaGetLastError());\n"
	"  }\n"
	"  TESSEL_CUDA(cudaStreamSynchronize(R->stream));\n"
	"  /* the whole program (step -1), then each step alone */\n"
	"  for (int step = -1; step < TESSEL_NSTEPS; step++)\n"
	"    for (int it = -5; it < runs; it++) {\n"
	"      if (everyone(R) < 0)\n"
	"        return -1;\n"
	"      double t0 = now();\n"
	"      if ((step < 0 ? tessel_rank_run(R) : tessel_rank_step(R, step)) < 0)\n"
	"        return -1;\n"
	"      TESSEL_CUDA(cudaStreamSynchronize(R->stream));\n"
	"      if (everyone(R) < 0)\n"
	"        return -1;\n"
	"      if (R->rank == 0 && it >= 0)\n"
	"        times[(step + 1) * runs + it] = now() - t0;\n"
	"    }\n"
	"  /* the barrier alone: a process a GPU, the allreduce it takes is in every time above */\n"
	"  for (int it = -5; it < runs && procs; it++) {\n"
	"    if (everyone(R) < 0)\n"
	"      return -1;\n"
	"    double t0 = now();\n"
	"    if (everyone(R) < 0)\n"
	"      return -1;\n"
	"    if (R->rank == 0 && it >= 0)\n"
	"      times[(TESSEL_NSTEPS + 1) * runs + it] = now() - t0;\n"
	"  }\n"
	"  return 0;\n"
	"}\n"
	"\n"
	"static void *\n"
	"thread_main(void *arg)\n"
	"{\n"
	"  Thread *T = (Thread *)arg;\n"
	"  TesselRank R;\n"
	"  if (tessel_rank_init(&R, T->rank, comms[T->rank]) < 0) {\n"
	"    T->status = -1;\n"
	"    pthread_barrier_wait(&barrier);   /* the others wait for this rank: stop them at the next one */\n"
	"    return NULL;\n"
	"  }\n"
	"  pthread_barrier_wait(&barrier);\n"
	"  T->status = mode_check ? check(T, &R) : timed(T, &R);\n"
	"  tessel_rank_free(&R);\n"
	"  return NULL;\n"
	"}\n"
	"\n"
	"/* what rank 0 prints: the check's largest error, or the times */\n"
	"static void\n"
	"report(double worst)\n"
	"{\n"
	"  const char *how = procs ? \"a process each\" : \"a thread each\";\n"
	"  if (mode_check) {\n"
	"    printf(\"check: every written tensor on %d GPUs (%s) matches the simulation (largest error %.3g)\\n\", TESSEL_NDEV,\n"
	"           how, worst);\n"
	"    return;\n"
	"  }\n"
	"  printf(\"time on %d GPUs (%s), median (min) of %d runs, each step also alone:\\n\", TESSEL_NDEV, how, runs);\n"
	"  for (int step = -1; step < TESSEL_NSTEPS + procs; step++) {\n"
	"    double *t = times + (size_t)(step + 1) * runs;\n"
	"    std::sort(t, t + runs);\n"
	"    printf(\"  %-40s %10.4f ms (%.4f)\\n\", step < 0 ? \"the program\" : step == TESSEL_NSTEPS\n"
	"           ? \"the barrier (an allreduce, in each time)\" : tessel_step_name[step], t[runs / 2] * 1e3, t[0] * 1e3);\n"
	"  }\n"
	"}\n"
	"\n"
	"static int\n"
	"env_int(const char *a, const char *b, int def)\n"
	"{\n"
	"  const char *v = getenv(a);\n"
	"  if (!v && b)\n"
	"    v = getenv(b);\n"
	"  return v && *v ? atoi(v) : def;\n"
	"}\n"
	"\n"
	"/* One rank a process: the NCCL id through a file (rank 0 writes it, the others wait for it). */\n"
	"static int\n"
	"rank_main(int rank, int world, int local)\n"
	"{\n"
	"  const char *idfile = getenv(\"TESSEL_NCCL_ID\");\n"
	"  ncclUniqueId id;\n"
	"  if (world != TESSEL_NDEV) {\n"
	"    fprintf(stderr, \"dist: the program runs on %d GPUs; WORLD_SIZE is %d\\n\", TESSEL_NDEV, world);\n"
	"    return 2;\n"
	"  }\n"
	"  if (TESSEL_PEERS) {\n"
	"    fprintf(stderr, \"dist: this program moves parts through peer copies or loads (via copy, via load), which \"\n"
	"            \"need every GPU in one process: run ./dist check or ./dist time\\n\");\n"
	"    return 2;\n"
	"  }\n"
	"  if (rank < 0 || rank >= world) {\n"
	"    fprintf(stderr, \"dist: RANK %d is not in 0 .. %d\\n\", rank, world - 1);\n"
	"    return 2;\n"
	"  }\n"
	"  if (world > 1 && !idfile) {\n"
	"    fprintf(stderr, \"dist: rank %d of %d: set TESSEL_NCCL_ID to a file every rank sees (rank 0 writes the NCCL id \"\n"
	"            \"there)\\n\", rank, world);\n"
	"    return 2;\n"
	"  }\n"
	"  if (rank == 0) {\n"
	"    char tmp[4096];\n"
	"    ncclResult_t nr = ncclGetUniqueId(&id);\n"
	"    if (nr != ncclSuccess) {\n"
	"      fprintf(stderr, \"dist: ncclGetUniqueId: %s\\n\", ncclGetErrorString(nr));\n"
	"      return 1;\n"
	"    }\n"
	"    if (world > 1) {\n"
	"      snprintf(tmp, sizeof tmp, \"%s.%d.tmp\", idfile, (int)getpid());\n"
	"      FILE *f = fopen(tmp, \"wb\");\n"
	"      if (!f || fwrite(&id, sizeof id, 1, f) != 1 || fclose(f) != 0 || rename(tmp, idfile) != 0) {\n"
	"        fprintf(stderr, \"dist: rank 0 cannot write the NCCL id to %s\\n\", idfile);\n"
	"        return 1;\n"
	"      }\n"
	"    }\n"
	"  } else {\n"
	"    /* up to 120 s for rank 0 */\n"
	"    for (int waited = 0;; waited++) {\n"
	"      FILE *f = fopen(idfile, \"rb\");\n"
	"      int ok = f && fread(&id, sizeof id, 1, f) == 1;\n"
	"      if (f)\n"
	"        fclose(f);\n"
	"      if (ok)\n"
	"        break;\n"
	"      if (waited == 1200) {\n"
	"        fprintf(stderr, \"dist: rank %d: no NCCL id in %s after 120 s (is rank 0 running?)\\n\", rank, idfile);\n"
	"        return 1;\n"
	"      }\n"
	"      usleep(100000);\n"
	"    }\n"
	"  }\n"
	"  procs = 1;\n"
	"  tessel_local_device = local;\n"
	"  if (cudaSetDevice(local) != cudaSuccess) {\n"
	"    fprintf(stderr, \"dist: rank %d: no GPU %d here (LOCAL_RANK)\\n\", rank, local);\n"
	"    return 2;\n"
	"  }\n"
	"  ncclComm_t comm;\n"
	"  ncclResult_t nr = ncclCommInitRank(&comm, world, id, rank);\n"
	"  if (nr != ncclSuccess) {\n"
	"    fprintf(stderr, \"dist: rank %d: ncclCommInitRank: %s\\n\", rank, ncclGetErrorString(nr));\n"
	"    return 1;\n"
	"  }\n"
	"  times = (double *)calloc((size_t)runs * (TESSEL_NSTEPS + 2), sizeof *times);\n"
	"  TesselRank R;\n"
	"  Thread T = { rank, 0, 0 };\n"
	"  int status = tessel_rank_init(&R, rank, comm) < 0 || cudaMalloc(&sync_buf, sizeof *sync_buf) != cudaSuccess;\n"
	"  if (!status)\n"
	"    status = (mode_check ? check(&T, &R) : timed(&T, &R)) < 0;\n"
	"  /* every rank's status and largest error, at rank 0 */\n"
	"  double *both = NULL, h[2] = { (double)status, T.worst };\n"
	"  if (cudaMalloc(&both, sizeof h) == cudaSuccess && cudaMemcpy(both, h, sizeof h, cudaMemcpyHostToDevice) == cudaSuccess\n"
	"      && ncclAllReduce(both, both, 2, ncclFloat64, ncclMax, comm, R.stream) == ncclSuccess\n"
	"      && cudaMemcpy(h, both, sizeof h, cudaMemcpyDeviceToHost) == cudaSuccess)\n"
	"    status = h[0] != 0;\n"
	"  else\n"
	"    status = 1;\n"
	"  cudaFree(both);\n"
	"  cudaFree(sync_buf);\n"
	"  tessel_rank_free(&R);\n"
	"  ncclCommDestroy(comm);\n"
	"  if (rank == 0 && world > 1)\n"
	"    unlink(idfile);\n"
	"  if (status) {\n"
	"    if (rank == 0)\n"
	"      fprintf(stderr, \"dist: failed\\n\");\n"
	"    free(times);\n"
	"    return 1;\n"
	"  }\n"
	"  if (rank == 0)\n"
	"    report(h[1]);\n"
	"  free(times);\n"
	"  return 0;\n"
	"}\n"
	"\n"
	"/* ./dist launch N ...: N processes of this program, ranks 0 .. N-1 on GPUs 0 .. N-1; one that fails\n"
	"** stops the others (which would wait for it in NCCL) */\n"
	"static int\n"
	"launch(int n)\n"
	"{\n"
	"  char idfile[64];\n"
	"  pid_t pid[TESSEL_NDEV];\n"
	"  int status = 0, left = n;\n"
	"  if (n != TESSEL_NDEV) {\n"
	"    fprintf(stderr, \"dist launch: the program runs on %d GPUs, not %d\\n\", TESSEL_NDEV, n);\n"
	"    return 2;\n"
	"  }\n"
	"  snprintf(idfile, sizeof idfile, \"/tmp/tessel_nccl_id.%d\", (int)getpid());\n"
	"  unlink(idfile);\n"
	"  fflush(stdout);\n"
	"  for (int r = 0; r < n; r++) {\n"
	"    if ((pid[r] = fork()) < 0) {\n"
	"      perror(\"dist launch: fork\");\n"
	"      for (int q = 0; q < r; q++)\n"
	"        kill(pid[q], SIGTERM);\n"
	"      return 1;\n"
	"    }\n"
	"    if (pid[r] == 0) {\n"
	"      char v[16];\n"
	"      snprintf(v, sizeof v, \"%d\", r);\n"
	"      setenv(\"RANK\", v, 1);\n"
	"      setenv(\"LOCAL_RANK\", v, 1);\n"
	"      snprintf(v, sizeof v, \"%d\", n);\n"
	"      setenv(\"WORLD_SIZE\", v, 1);\n"
	"      setenv(\"TESSEL_NCCL_ID\", idfile, 1);\n"
	"      _exit(rank_main(r, n, r));\n"
	"    }\n"
	"  }\n"
	"  while (left > 0) {\n"
	"    int st;\n"
	"    pid_t w = wait(&st);\n"
	"    if (w < 0)\n"
	"      break;\n"
	"    left--;\n"
	"    if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {\n"
	"      if (!status)\n"
	"        for (int q = 0; q < n; q++)\n"
	"          if (pid[q] != w)\n"
	"            kill(pid[q], SIGTERM);\n"
	"      status = 1;\n"
	"    }\n"
	"  }\n"
	"  unlink(idfile);\n"
	"  return status;\n"
	"}\n"
	"\n"
	"int\n"
	"main(int argc, char **argv)\n"
	"{\n"
	"  int ndev = 0, devs[TESSEL_NDEV], status = 0;\n"
	"  pthread_t th[TESSEL_NDEV];\n"
	"  Thread T[TESSEL_NDEV];\n"
	"  int n = 0;\n"
	"  if (argc > 2 && strcmp(argv[1], \"launch\") == 0) {\n"
	"    n = atoi(argv[2]);\n"
	"    argc -= 2;\n"
	"    argv += 2;\n"
	"  }\n"
	"  mode_check = argc < 2 || strcmp(argv[1], \"time\") != 0;\n"
	"  if (argc > 2)\n"
	"    runs = atoi(argv[2]) > 0 ? atoi(argv[2]) : runs;\n"
	"  setenv(\"NCCL_NVLS_ENABLE\", \"0\", 0);   /* no NVLink multicast unless asked for */\n"
	"  if (n)\n"
	"    return launch(n);   /* before any CUDA call: the children initialize their own */\n"
	"  if (getenv(\"RANK\") || getenv(\"OMPI_COMM_WORLD_RANK\"))\n"
	"    return rank_main(env_int(\"RANK\", \"OMPI_COMM_WORLD_RANK\", 0), env_int(\"WORLD_SIZE\", \"OMPI_COMM_WORLD_SIZE\", 1),\n"
	"                     env_int(\"LOCAL_RANK\", \"OMPI_COMM_WORLD_LOCAL_RANK\", env_int(\"RANK\", \"OMPI_COMM_WORLD_RANK\", 0)));\n"
	"  if (cudaGetDeviceCount(&ndev) != cudaSuccess || ndev < TESSEL_NDEV) {\n"
	"    fprintf(stderr, \"dist: the program runs on %d GPUs; this machine has %d\\n\", TESSEL_NDEV, ndev);\n"
	"    return 2;\n"
	"  }\n"
	"  for (int r = 0; r < TESSEL_NDEV; r++)\n"
	"    devs[r] = r;\n"
	"  ncclResult_t nr = ncclCommInitAll(comms, TESSEL_NDEV, devs);\n"
	"  if (nr != ncclSuccess) {\n"
	"    fprintf(stderr, \"dist: ncclCommInitAll: %s\\n\", ncclGetErrorString(nr));\n"
	"    return 1;\n"
	"  }\n"
	"  times = (double *)calloc((size_t)runs * (TESSEL_NSTEPS + 2), sizeof *times);\n"
	"  pthread_barrier_init(&barrier, NULL, TESSEL_NDEV);\n"
	"  for (int r = 0; r < TESSEL_NDEV; r++) {\n"
	"    T[r].rank = r;\n"
	"    T[r].status = 0;\n"
	"    T[r].worst = 0;\n"
	"    pthread_create(&th[r], NULL, thread_main, &T[r]);\n"
	"  }\n"
	"  for (int r = 0; r < TESSEL_NDEV; r++) {\n"
	"    pthread_join(th[r], NULL);\n"
	"    status |= T[r].status;\n"
	"  }\n"
	"  for (int r = 0; r < TESSEL_NDEV; r++)\n"
	"    ncclCommDestroy(comms[r]);\n"
	"  if (status) {\n"
	"    fprintf(stderr, \"dist: failed\\n\");\n"
	"    return 1;\n"
	"  }\n"
	"  double worst = 0;\n"
	"  for (int r = 0; r < TESSEL_NDEV; r++)\n"
	"    worst = fmax(worst, T[r].worst);\n"
	"  report(worst);\n"
	"  free(times);\n"
	"  return 0;\n"
	"}\n";

/* wgmma in a step needs the architecture-specific target sm_90a (gencode) */
static void
makefile(Buf *b, int fast, int wgmma, int ndev)
{
	emit(b, "# Builds and runs a tessel distributed program: make, make check, make time, make check-procs.\n"
	        "# NCCL: found by nvcc's include and library paths, or NCCL_HOME=/path (include/, lib/).\n"
	        "NVCC ?= nvcc\nARCH ?= %s\nNCCL_HOME ?=\n"
	        "NCCL_FLAGS = $(if $(NCCL_HOME),-I$(NCCL_HOME)/include -L$(NCCL_HOME)/lib -Xlinker -rpath=$(NCCL_HOME)/lib)\n"
	        "FLAGS = -O3 -std=c++17 %s%s\n\n", wgmma ? "90a" : "sm_90",
	        wgmma ? "-gencode=arch=compute_$(ARCH),code=sm_$(ARCH)" : "-arch=$(ARCH)", fast ? "" : " -fmad=false");
	emit(b,
	        "all: check\n\n"
	        "dist: main.cu dist.cu $(wildcard step*.cu)\n"
	        "\t$(NVCC) $(FLAGS) $(NCCL_FLAGS) -o dist main.cu -lnccl -lpthread\n\n"
	        "check: dist\n\t./dist check\n\n"
	        "time: dist\n\t./dist time\n\n"
	        "# a process a GPU: the same check and times through ncclCommInitRank\n"
	        "check-procs: dist\n\t./dist launch %d check\n\n"
	        ".PHONY: all check time check-procs\n", ndev);
}

static int
write_data(const DistProgram *p, const char *dir, const BDistExportOpts *o, Buf *files, Err *e)
{
	DistState st = { 0 };
	char sub[4096], name[K_NAME + 32];
	int t, r, rc = -1;

	if ((size_t)snprintf(sub, sizeof sub, "%s/data", dir) >= sizeof sub)
		return err_set(e, "export: the path %s/data is too long", dir), E_IO;
	if ((rc = export_mkdir(sub, e)) < 0)
		return rc;
	rc = -1;
	if (dist_scatter(p, o ? o->inputs : NULL, &st, e) < 0 || dist_simulate(p, NULL, &st, e) < 0)
		goto out;
	for (t = 0; t < p->nt; t++)
		for (r = 0; r < p->ndev; r++) {
			const TBuf *b = &st.store[(size_t)r * (size_t)p->nt + (size_t)t];

			if (!b->data)
				continue;
			snprintf(name, sizeof name, "%s%s_r%d.bin", p->t[t].producer >= 0 ? "ref_" : "", p->t[t].name, r);
			if ((rc = export_write(sub, files, name, b->data, (size_t)b->numel * (size_t)dtype_bytes(b->dtype), e)) < 0)
				goto out;
			rc = -1;
		}
	rc = 0;
out:
	dist_state_free(&st);
	return rc;
}

int
backend_export_dist(const DistProgram *p, const char *dir, const BDistExportOpts *o, Err *e)
{
	BDistExportOpts dflt = { 0 };
	Units U = { 0 };
	Buf plan, dcu, mk;
	int **pk = NULL, **up = NULL, i, rc = -1, wg;
	Buf *files;

	if (!o)
		o = &dflt;
	files = o->files;
	buf_init(&plan);
	buf_init(&dcu);
	buf_init(&mk);
	if (!p || !dir || !*dir)
		return err_set(e, "export: no program or no directory");
	if (p->ns == 0)
		return err_set(e, "export: the program has no steps");
	for (i = 0; i < p->nt; i++)
		if (!host_type(p->t[i].dtype))
			return err_set(e, "export: tensor %s is %s; the NCCL export takes float, float16, bfloat16 and "
			               "integer tensors", p->t[i].name, dtype_name(p->t[i].dtype));
	if (!(pk = calloc((size_t)p->ns, sizeof *pk)) || !(up = calloc((size_t)p->ns, sizeof *up))) {
		err_set(e, "export: out of memory");
		goto out;
	}
	for (i = 0; i < p->ns; i++) {
		if (!(pk[i] = calloc((size_t)p->ndev, sizeof **pk)) || !(up[i] = calloc((size_t)p->ndev, sizeof **up))) {
			err_set(e, "export: out of memory");
			goto out;
		}
		if (step_units(p, i, &U, pk[i], up[i], o->fast, e) < 0)
			goto out;
	}
	dist_plan(&plan, p);
	if (dist_cu(&dcu, p, &U, pk, up, plan.s ? plan.s : "", e) < 0)
		goto out;
	for (i = 0, wg = 0; i < p->ns; i++)
		wg |= p->s[i].kind == DIST_LAUNCH && kernel_has_wgmma(p->s[i].k);
	makefile(&mk, o->fast, wg, p->ndev);
	if (plan.oom || dcu.oom || mk.oom) {
		err_set(e, "export: out of memory");
		goto out;
	}
	if ((rc = export_mkdir(dir, e)) < 0)
		goto out;
	if ((rc = export_write(dir, files, "plan.txt", plan.s, plan.len, e)) < 0 ||
	    (rc = export_write(dir, files, "dist.cu", dcu.s, dcu.len, e)) < 0 ||
	    (rc = export_write(dir, files, "main.cu", main_cu, sizeof main_cu - 1, e)) < 0 ||
	    (rc = export_write(dir, files, "Makefile", mk.s, mk.len, e)) < 0)
		goto out;
	for (i = 0; i < U.n; i++) {
		char name[K_NAME + 32];

		snprintf(name, sizeof name, "%s.cu", U.u[i].name);
		if ((rc = export_write(dir, files, name, U.u[i].src, strlen(U.u[i].src), e)) < 0)
			goto out;
	}
	rc = o->no_check ? 0 : write_data(p, dir, o, files, e);
out:
	for (i = 0; i < U.n; i++)
		free(U.u[i].src);
	free(U.u);
	for (i = 0; pk && up && i < p->ns; i++) {
		free(pk[i]);
		free(up[i]);
	}
	free(pk);
	free(up);
	buf_free(&plan);
	buf_free(&dcu);
	buf_free(&mk);
	return rc;
}
