/* gpu.c - what CUDA and OpenCL C share: a stage as a kernel, bound loops as coordinates and guards, barriers, launches, helpers. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpu.h"

enum {
	WARP = 32,
	S_BARRIER = 1, S_SHUFFLE = 2, S_MMA = 4, S_SEEN = 8, S_WGMMA = 16,   /* GpuState.sync bits */
	UNROLL_MAX = 64                                         /* #pragma unroll up to this extent */
};

/* The dialect: both print index arithmetic as C (EmitDialect.d), so ask its name
** (gpu.c sits below cuda.c and opencl.c and does not refer to their tables). */
static int
iscuda(const Emit *E)
{
	return strcmp(E->D->name, "cuda") == 0;
}

static int
oom(Emit *E)
{
	return err_set(E->e, "%s: out of memory", E->D->name);
}

void
gpu_launches_free(GpuLaunches *l)
{
	int i;

	if (!l)
		return;
	for (i = 0; i < l->n; i++)
		free(l->l[i].arg);
	free(l->l);
	memset(l, 0, sizeof *l);
}

const char *
gpu_ctype(DType t, const char *half, const char *bf16)
{
	switch (t) {
	case DT_BOOL: return "bool";
	case DT_INT8: return "int8_t";
	case DT_INT16: return "int16_t";
	case DT_INT32: return "int32_t";
	case DT_INT64: case DT_INDEX: return "int64_t";
	case DT_UINT8: return "uint8_t";
	case DT_UINT16: return "uint16_t";
	case DT_UINT32: return "uint32_t";
	case DT_UINT64: return "uint64_t";
	case DT_FLOAT32: return "float";
	case DT_FLOAT64: return "double";
	case DT_FLOAT16: return half;
	case DT_BFLOAT16: return bf16;
	default: return NULL;
	}
}

/* ---- what a stage holds ---- */

static unsigned
own_bits(const UOp *u)
{
	/* an ldmatrix gathers a whole warp as an MMA does */
	return u->op == OP_BARRIER ? S_BARRIER : u->op == OP_SHUFFLE ? S_SHUFFLE
	     : u->op == OP_MMA || u->op == OP_LDMATRIX ? S_MMA : u->op == OP_WGMMA || u->op == OP_WG_FENCE
	       || u->op == OP_WG_COMMIT || u->op == OP_WG_WAIT || u->op == OP_SETMAXNREG ? S_MMA | S_WGMMA : 0;
}

static unsigned
bits_of(GpuState *G, const UOp *u)
{
	return (unsigned)(uintptr_t)pmap_get(&G->sync, u) & (S_BARRIER | S_SHUFFLE | S_MMA | S_WGMMA);
}

/* The barriers, shuffles and MMAs under every node of root, memoized in G->sync (post-order, no recursion). */
static int
sync_bits(GpuState *G, const UOp *root)
{
	const UOp **st;
	int *nx, rc = 0;
	size_t sp = 0, cap = 256;

	if (pmap_get(&G->sync, root))
		return 0;
	st = malloc(cap * sizeof *st);
	nx = malloc(cap * sizeof *nx);
	if (!st || !nx) {
		free(st);
		free(nx);
		return -1;
	}
	st[sp] = root;
	nx[sp++] = 0;
	while (sp) {
		const UOp *u = st[sp - 1];

		if (nx[sp - 1] < u->nsrc) {
			const UOp *c = u->src[nx[sp - 1]++];

			if (pmap_get(&G->sync, c))
				continue;
			if (sp == cap) {
				const UOp **ns = realloc(st, 2 * cap * sizeof *st);
				int *nn = ns ? realloc(nx, 2 * cap * sizeof *nx) : NULL;

				if (ns)
					st = ns;
				if (!nn) {
					rc = -1;
					break;
				}
				nx = nn;
				cap *= 2;
			}
			st[sp] = c;
			nx[sp++] = 0;
			continue;
		}
		{
			unsigned bits = own_bits(u);
			int i;

			for (i = 0; i < u->nsrc; i++)
				bits |= bits_of(G, u->src[i]);
			if (pmap_put(&G->sync, u, (void *)(uintptr_t)(bits | S_SEEN)) < 0) {
				rc = -1;
				break;
			}
		}
		sp--;
	}
	free(st);
	free(nx);
	return rc;
}

/* The first node under s (s included) that is one of want, following the memoized bits. */
static const UOp *
find_sync(GpuState *G, const UOp *s, unsigned want)
{
	int i;

	while (!(own_bits(s) & want)) {
		for (i = 0; i < s->nsrc && !(bits_of(G, s->src[i]) & want); i++)
			;
		if (i == s->nsrc)
			return NULL;
		s = s->src[i];
	}
	return s;
}

/*
** Whether each statement is the last of its C block wherever it stands
** (1), or not somewhere (2). A loop's body and an if's are blocks of their
** own; a sequence (an if on true) prints in its parent's block.
*/
static int
tails(GpuState *G, const UOp *s, int tail, int depth)
{
	void *want = (void *)(uintptr_t)(tail ? 1 : 2), *old;
	int i, seq;

	if (depth > E_MAXDEPTH || (s->op != OP_END && s->op != OP_IF))
		return 0;
	old = pmap_get(&G->tail, s);
	if (old == want || old == (void *)2)
		return 0;
	if (old)
		want = (void *)2;
	if (pmap_put(&G->tail, s, want) < 0)
		return -1;
	tail = want == (void *)1;
	seq = s->op == OP_IF && s->nsrc > 0 && s->src[0]->op == OP_CONST && s->src[0]->arg[0];
	for (i = 1; i < s->nsrc; i++)
		if (tails(G, s->src[i], i == s->nsrc - 1 && (!seq || tail), depth + 1) < 0)
			return -1;
	return 0;
}

/* Whether every warp of the block agrees on (coordinate on hw) < ext. */
static int
warp_uniform(const EStage *S, HwAxis hw, int64_t ext)
{
	int64_t n = S->blk[0] * S->blk[1] * S->blk[2], w, t, c;
	int first, in;

	for (w = 0; w < n; w += WARP) {
		first = -1;
		for (t = w; t < n && t < w + WARP; t++) {
			switch (hw) {
			case HW_THREAD_X: c = t % S->blk[0]; break;
			case HW_THREAD_Y: c = t / S->blk[0] % S->blk[1]; break;
			case HW_THREAD_Z: c = t / (S->blk[0] * S->blk[1]); break;
			case HW_WARP: c = t / WARP; break;
			case HW_LANE: c = t % WARP; break;
			default: c = 0; break;
			}
			in = c < ext;
			if (first < 0)
				first = in;
			else if (in != first)
				return 0;
		}
	}
	return 1;
}

/* ---- stages ---- */

static const char *
coord(int cuda, HwAxis hw)
{
	static const char *const cudac[HW_COUNT] = {
		"", "blockIdx.x", "blockIdx.y", "blockIdx.z", "threadIdx.x", "threadIdx.y", "threadIdx.z",
		"threadIdx.x / 32", "threadIdx.x % 32"
	};
	static const char *const ocl[HW_COUNT] = {
		"", "get_group_id(0)", "get_group_id(1)", "get_group_id(2)", "get_local_id(0)", "get_local_id(1)",
		"get_local_id(2)", "get_local_id(0) / 32", "get_local_id(0) % 32"
	};

	return cuda ? cudac[hw] : ocl[hw];
}

/*
** A block's static shared memory holds 48 KiB. Past that, CUDA's shared
** buffers are carved from one dynamic array at offsets rounded up to 16
** bytes (16-byte vector moves, cp.async and ldmatrix need them aligned), and
** tessel_launch opts the kernel in to that many bytes.
*/
enum { SHARED_STATIC = 48 * 1024, SHARED_DYNAMIC = 227 * 1024 };
/* The most local memory an OpenCL GPU gives a work-group (AMD's and Intel's; NVIDIA's is 48
** KiB): an export past it runs nowhere but on a CPU. */
enum { OPENCL_LOCAL = 64 * 1024 };

int
gpu_tmap(Emit *E, const UOp *s)
{
	GpuState *G = E->aux;
	GpuTmap t;
	Err ie;
	int i, d;

	if (kernel_tma_check(E->k, s, &ie) < 0)
		return err_set(E->e, "%s: %s", E->D->name, ie.msg);
	memset(&t, 0, sizeof t);
	t.buf = (int)s->src[1]->src[0]->arg[0];
	t.dst = (int)s->src[0]->src[0]->arg[0];
	t.rank = E->k->buf[t.buf].ndim;
	t.swizzle = (int)s->arg[0];
	if (kernel_tma_map(E->k, t.buf, t.dims, t.strides, &ie) < 0)
		return err_set(E->e, "%s: %s", E->D->name, ie.msg);
	for (d = 0; d < t.rank; d++)
		t.box[d] = ((const int64_t *)s->data)[t.rank - 1 - d];
	for (i = 0; i < G->ntmap; i++)
		if (G->tmap[i].buf == t.buf && G->tmap[i].dst == t.dst && G->tmap[i].swizzle == t.swizzle
		&& memcmp(G->tmap[i].box, t.box, sizeof t.box) == 0)
			return i;
	if (G->ntmap == GPU_MAXTMAP)
		return err_set(E->e, "%s: more than %d distinct TMA tensor maps in one stage", E->D->name, GPU_MAXTMAP);
	G->tmap[G->ntmap] = t;
	G->tma = 1;
	return G->ntmap++;
}

/* The stage's tensor maps, in statement order. */
static int
tmaps(Emit *E, const UOp *s, int depth)
{
	int i;

	if (depth > 2000)
		return 0;
	if (s->op == OP_TMA_LOAD)
		return gpu_tmap(E, s) < 0 ? -1 : 0;
	if (s->op == OP_END || s->op == OP_IF)
		for (i = 1; i < s->nsrc; i++)
			if (tmaps(E, s->src[i], depth + 1) < 0)
				return -1;
	return 0;
}

/* Shared buffer b is written by a TMA: 1024-byte aligned (the 128B swizzle's repeat). */
static int
tma_dst(const Emit *E, int b)
{
	const GpuState *G = E->aux;
	int i;

	for (i = 0; i < G->ntmap; i++)
		if (G->tmap[i].dst == b)
			return 1;
	return 0;
}

/*
** Where a shared buffer starts, in bytes: 1024 for what TMA writes and for every buffer of a
** kernel with wgmma (both hardware units swizzle by absolute shared-address bits, and the
** descriptors and tensor maps are chosen for buffers at multiples of 1024), else 16.
*/
static int
shared_align(const Emit *E, int b)
{
	const GpuState *G = E->aux;

	return iscuda(E) && (G->wgmma || tma_dst(E, b)) ? 1024 : 16;
}

static int
arrays(Emit *E, EStage *S, UAddrSpace scope, int64_t *bytes, int *dynamic)
{
	const Kernel *k = E->k;
	int64_t total = 0, off = 0;
	int b, dyn = 0, al, maxal = 16;

	for (b = 0; b < k->nbuf; b++)
		if (k->buf[b].scope == scope && S->use[b]) {
			al = shared_align(E, b);
			maxal = al > maxal ? al : maxal;
			total = (total + al - 1) / al * al + k->buf[b].size * dtype_bytes(k->buf[b].dtype);
		}
	if (scope == AS_LOCAL && iscuda(E) && total > SHARED_STATIC) {
		dyn = 1;
		emit(E->out, "  /* %lld bytes of shared buffers, past the 48 KiB of static shared memory: dynamic, "
		     "at offsets of 16 bytes (1024 for TMA destinations and wgmma operands) */\n"
		     "  extern __shared__ __align__(%d) unsigned char tessel_smem[];\n", (long long)total, maxal);
	}
	for (b = 0; b < k->nbuf; b++) {
		const KBuf *kb = &k->buf[b];

		if (kb->scope != scope || !S->use[b])
			continue;
		al = shared_align(E, b);
		if (dyn) {
			off = (off + al - 1) / al * al;
			emit(E->out, "  %s *const %s = (%s *)(tessel_smem + %lld);  /* shared, one per block, %lld "
			     "elements: ", E->D->type(kb->dtype), E->bname[b], E->D->type(kb->dtype), (long long)off,
			     (long long)kb->size);
			off += kb->size * dtype_bytes(kb->dtype);
		} else
			/* 16-bit registers in 4-byte words: a wgmma's A fragment is read as pairs (cuda.c) */
			emit(E->out, "  %s%s %s[%lld];  /* %s: ",
			     scope == AS_LOCAL ? (iscuda(E) ? (al == 1024 ? "__shared__ __align__(1024) "
			                                       : "__shared__ __align__(16) ") : "__local ")
			     : iscuda(E) && dtype_bytes(kb->dtype) == 2 ? "__align__(4) " : "",
			     E->D->type(kb->dtype), E->bname[b], (long long)kb->size,
			     scope == AS_LOCAL ? "shared, one per block" : "local, one per thread");
		emit_comment_text(E->out, kb->layout_desc);
		emit(E->out, " */\n");
	}
	if (bytes)
		*bytes = dyn ? off : total;
	if (dynamic)
		*dynamic = dyn;
	return 0;
}

/* Whether statement s holds a SETMAXNREG. */
static int
has_setmaxnreg(const UOp *s, int depth)
{
	int i;

	if (s->op == OP_SETMAXNREG)
		return 1;
	if (depth > 2000 || (s->op != OP_END && s->op != OP_IF))
		return 0;
	for (i = 1; i < s->nsrc; i++)
		if (has_setmaxnreg(s->src[i], depth + 1))
			return 1;
	return 0;
}

int
gpu_stage(Emit *E, EStage *S)
{
	GpuState *G = E->aux;
	const Kernel *k = E->k;
	const char *stn = k->stage[S->st].name, *name = E->D->name;
	int cuda = iscuda(E), b, n = 0, dynamic = 0;
	int64_t nthr = S->blk[0] * S->blk[1] * S->blk[2], shared = 0;
	unsigned bits;
	GpuLaunch *L;
	Buf decl;

	if (nthr > 65536)
		return err_set(E->e, "%s: stage %s: blocks of %lld threads (the interpreter runs at most 65536)", name,
		               stn, (long long)nthr);
	if (cuda && (S->blk[0] > 1024 || S->blk[1] > 1024 || S->blk[2] > 64 || nthr > 1024))
		return err_set(E->e, "cuda: stage %s: a block of (%lld, %lld, %lld) threads; a CUDA block holds at "
		               "most 1024 threads, and (1024, 1024, 64) along x, y, z", stn, (long long)S->blk[0],
		               (long long)S->blk[1], (long long)S->blk[2]);
	if (cuda && (S->grid[0] > 2147483647 || S->grid[1] > 65535 || S->grid[2] > 65535))
		return err_set(E->e, "cuda: stage %s: a grid of (%lld, %lld, %lld) blocks; a CUDA grid reaches "
		               "(2^31-1, 65535, 65535)", stn, (long long)S->grid[0], (long long)S->grid[1],
		               (long long)S->grid[2]);
	pmap_free(&G->tail);
	pmap_free(&G->sync);
	if (tails(G, S->body, 1, 0) < 0 || sync_bits(G, S->body) < 0)
		return oom(E);
	bits = bits_of(G, S->body);
	/* wgmma: whole warps; a trailing partial warpgroup (a producer warp) must never reach one,
	** which the interpreter checks as it runs */
	if ((bits & (S_MMA | S_WGMMA)) && nthr % WARP)
		return err_set(E->e, "%s: stage %s: blocks of %lld threads; an MMA or ldmatrix runs on whole warps (a multiple "
		               "of 32 threads), as the interpreter requires", name, stn, (long long)nthr);
	G->nthr = nthr;
	G->shuffles = (bits & S_SHUFFLE) != 0;
	G->mask = G->shuffles && nthr % WARP ? "tessel_mask" : "0xffffffffu";
	G->nopen = 0;

	/* the signature: the global buffers the stage uses, in kernel order; then its tensor maps */
	G->ntmap = 0;
	if (cuda && tmaps(E, S->body, 0) < 0)
		return -1;
	buf_init(&decl);
	for (b = 0; b < k->nbuf; b++) {
		if (!S->use[b] || k->buf[b].scope != AS_GLOBAL)
			continue;
		if (cuda)
			emit(&decl, "%s%s%s *__restrict__ %s", n++ ? ", " : "", S->use[b] == 1 ? "const " : "",
			     E->D->type(k->buf[b].dtype), E->bname[b]);
		else
			emit(&decl, "%s__global %s%s *restrict %s", n++ ? ", " : "", S->use[b] == 1 ? "const " : "",
			     E->D->type(k->buf[b].dtype), E->bname[b]);
	}
	for (b = 0; b < G->ntmap; b++)
		emit(&decl, "%sconst __grid_constant__ CUtensorMap tessel_tmap%d", n++ ? ", " : "", b);
	/* setmaxnreg takes effect only under a register cap at entry: one block an SM */
	if (cuda)
		emit(E->out, "\n__global__ void __launch_bounds__(%lld%s)\n", (long long)nthr,
		     has_setmaxnreg(S->body, 0) ? ", 1" : "");
	else
		emit(E->out, "\n__kernel void __attribute__((reqd_work_group_size(%lld, %lld, %lld)))\n",
		     (long long)S->blk[0], (long long)S->blk[1], (long long)S->blk[2]);
	emit(E->out, "%s(%s)\n{\n", E->sname[S->st], n && decl.s ? decl.s : "void");
	if (decl.oom) {
		buf_free(&decl);
		return oom(E);
	}
	buf_free(&decl);
	if (arrays(E, S, AS_LOCAL, &shared, &dynamic) < 0 || arrays(E, S, AS_REG, NULL, NULL) < 0)
		return -1;
	if ((cuda && shared > SHARED_DYNAMIC) || (!cuda && shared > OPENCL_LOCAL)) {
		int b, big = -1;

		for (b = 0; b < E->k->nbuf; b++)
			if (E->k->buf[b].scope == AS_LOCAL && S->use[b]
			&& (big < 0 || E->k->buf[b].size * dtype_bytes(E->k->buf[b].dtype)
			               > E->k->buf[big].size * dtype_bytes(E->k->buf[big].dtype)))
				big = b;
		if (!cuda)
			return err_set(E->e, "opencl: stage %s: %lld bytes of local buffers, the largest %s with %lld; "
			               "an OpenCL GPU gives a work-group at most 64 KiB (NVIDIA's 48, AMD's and "
			               "Intel's 64): compute_at the buffer under a loop to compact it to a tile", stn,
			               (long long)shared, big >= 0 ? E->k->buf[big].name : "?",
			               big >= 0 ? (long long)(E->k->buf[big].size * dtype_bytes(E->k->buf[big].dtype)) : 0LL);
		return err_set(E->e, "cuda: stage %s: %lld bytes of shared buffers (at offsets of 16 bytes), the "
		               "largest %s with %lld; a block's shared memory holds at most 227 KiB on sm_90 "
		               "(dynamic, past the 48 KiB of static): compute_at the buffer under a loop to "
		               "compact it to a tile", stn, (long long)shared, big >= 0 ? E->k->buf[big].name : "?",
		               big >= 0 ? (long long)(E->k->buf[big].size * dtype_bytes(E->k->buf[big].dtype)) : 0LL);
	}
	if (!S->nbound)
		emit(E->out, "  /* no loop is bound to a block or a thread: one thread runs the stage */\n");
	if (cuda && G->shuffles && nthr % WARP) {
		const char *lin = S->blk[1] * S->blk[2] == 1 ? "threadIdx.x"
		                : "(threadIdx.x + threadIdx.y * blockDim.x + threadIdx.z * blockDim.x * blockDim.y)";

		emit(E->out, "  /* the last warp has %lld lanes: shuffles name only those */\n", (long long)(nthr % WARP));
		emit(E->out, "  const unsigned tessel_mask = %s / 32 == %lld ? 0x%xu : 0xffffffffu;\n", lin,
		     (long long)(nthr / WARP), (unsigned)((1u << (nthr % WARP)) - 1));
	}
	if (emit_stmt(E, S, S->body, 1) < 0)
		return -1;
	emit(E->out, "}\n");

	/* the launch */
	if (G->launches.n == G->launches.cap) {
		int cap = G->launches.cap ? 2 * G->launches.cap : 8;
		GpuLaunch *nl = realloc(G->launches.l, cap * sizeof *nl);

		if (!nl)
			return oom(E);
		G->launches.l = nl;
		G->launches.cap = cap;
	}
	L = &G->launches.l[G->launches.n];
	memset(L, 0, sizeof *L);
	snprintf(L->name, sizeof L->name, "%s", E->sname[S->st]);
	memcpy(L->grid, S->grid, sizeof L->grid);
	memcpy(L->block, S->blk, sizeof L->block);
	L->shared_bytes = shared;
	L->dynamic = dynamic;
	L->ntmap = G->ntmap;
	memcpy(L->tmap, G->tmap, sizeof L->tmap);
	if (!(L->arg = malloc((n ? n : 1) * sizeof *L->arg)))
		return oom(E);
	for (b = 0; b < k->nbuf; b++)
		if (S->use[b] && k->buf[b].scope == AS_GLOBAL)
			L->arg[L->narg++] = b;
	G->launches.n++;
	return 0;
}

/* ---- statements ---- */

static int
refuse_guarded(Emit *E, EStage *S, const UOp *loop, const UOp *at, int64_t dim)
{
	const UOp *r = loop->src[0];
	char w[200];

	emit_where(S, at, w, sizeof w);
	return err_set(E->e, "%s: stage %s: %s %s lies under the guard of loop %s (bound to %s, %lld of the "
	               "%lld %s): the %s past it would skip the %s, which is undefined on a GPU (the "
	               "interpreter stops there too); keep %ss out of guards, under loops as long as their axis",
	               E->D->name, E->k->stage[S->st].name, at->op == OP_BARRIER ? "the barrier" : at->op == OP_MMA
	               ? "the mma" : at->op == OP_LDMATRIX ? "the ldmatrix" : at->op == OP_SHUFFLE ? "the shuffle"
	               : "the wgmma statement", w, krange_var(r)->name, hwaxis_name(krange_hw(r)),
	               (long long)krange_extent(r), (long long)dim,
	               hwaxis_is_block(krange_hw(r)) ? "blocks" : "threads",
	               at->op == OP_BARRIER ? "threads" : "lanes of a warp",
	               at->op == OP_BARRIER ? "barrier" : at->op == OP_MMA ? "mma" : at->op == OP_LDMATRIX
	               ? "ldmatrix" : at->op == OP_SHUFFLE ? "shuffle" : "wgmma statement",
	               at->op == OP_BARRIER ? "barrier" : "warp operation");
}

int
gpu_loop(Emit *E, EStage *S, const UOp *s, int ind)
{
	GpuState *G = E->aux;
	const UOp *r = s->src[0], *v = krange_var(r);
	HwAxis hw = krange_hw(r);
	AxisType t = krange_type(r);
	int64_t ext = krange_extent(r);
	char note[64];
	int i, flat, guard = 0;

	if (r->nsrc != 1 || v->op != OP_VAR || v->arg[0] != 0)
		return err_set(E->e, "%s: stage %s: a loop that does not start at 0", E->D->name, E->k->stage[S->st].name);
	for (i = 0; i < G->nopen; i++)
		if (G->open[i] == v || strcmp(G->open[i]->name, v->name) == 0)
			return err_set(E->e, "%s: stage %s: nested loops share the variable %s (the interpreter refuses "
			               "it too)", E->D->name, E->k->stage[S->st].name, v->name);
	if (G->nopen == (int)(sizeof G->open / sizeof G->open[0]))
		return err_set(E->e, "%s: stage %s: loops nest deeper than %d", E->D->name, E->k->stage[S->st].name,
		               (int)(sizeof G->open / sizeof G->open[0]));
	emit_loop_note(r, note, sizeof note);
	G->open[G->nopen++] = v;
	if (hw != HW_NONE) {
		int64_t dim = hwaxis_is_block(hw) ? S->grid[hw - HW_BLOCK_X] : hw == HW_WARP ? (S->blk[0] + 31) / 32
		            : hw == HW_LANE ? (S->blk[0] < 32 ? S->blk[0] : 32) : S->blk[hw - HW_THREAD_X];
		unsigned bits = bits_of(G, s);

		guard = ext < dim;
		/* a block's guard is the same for all its threads: barriers and warp ops may sit under it */
		if (guard && !hwaxis_is_block(hw)) {
			if (bits & S_BARRIER)
				return refuse_guarded(E, S, s, find_sync(G, s, S_BARRIER), dim);
			if ((bits & (S_SHUFFLE | S_MMA)) && !warp_uniform(S, hw, ext))
				return refuse_guarded(E, S, s, find_sync(G, s, S_SHUFFLE | S_MMA), dim);
		}
		flat = pmap_get(&G->tail, s) == (void *)1;
		if (!flat) {
			emit_indent(E->out, ind++);
			emit(E->out, "{\n");
		}
		emit_indent(E->out, ind);
		emit(E->out, "const int64_t %s = %s;  /* %s */\n", v->name, coord(iscuda(E), hw), note);
		if (guard) {
			emit_indent(E->out, ind);
			emit(E->out, "if (%s < %lld) {\n", v->name, (long long)ext);
		}
		if (emit_stmts(E, S, s->src + 1, s->nsrc - 1, ind + guard) < 0)
			return -1;
		if (guard) {
			emit_indent(E->out, ind);
			emit(E->out, "}\n");
		}
		if (!flat) {
			emit_indent(E->out, --ind);
			emit(E->out, "}\n");
		}
		G->nopen--;
		return 0;
	}
	if ((t == AX_UPCAST || t == AX_UNROLL) && ext > 1 && ext <= UNROLL_MAX) {
		int vec = emit_vector_loop(E, S, s, ind);

		if (vec != 0) {
			G->nopen--;
			return vec < 0 ? -1 : 0;
		}
		/* unrolled, a register array indexed by the loop stays in registers */
		emit_indent(E->out, ind);
		emit(E->out, "#pragma unroll\n");
	}
	emit_indent(E->out, ind);
	emit(E->out, "for (int64_t %s = 0; %s < %lld; %s++) {", v->name, v->name, (long long)ext, v->name);
	emit(E->out, note[0] ? "  /* %s */\n" : "%s\n", note);
	if (emit_stmts(E, S, s->src + 1, s->nsrc - 1, ind + 1) < 0)
		return -1;
	emit_indent(E->out, ind);
	emit(E->out, "}\n");
	G->nopen--;
	return 0;
}

int
gpu_barrier(Emit *E, EStage *S, const UOp *s, int ind)
{
	GpuState *G = E->aux;

	/* shared memory written by ordinary stores and read by wgmma (the async proxy) needs the proxy fence in
	** each writing thread before the barrier: before every barrier of such a kernel, which is always right */
	if (iscuda(E) && G->wgmma) {
		emit_indent(E->out, ind);
		emit(E->out, "asm volatile(\"fence.proxy.async.shared::cta;\\n\" ::: \"memory\");\n");
	}
	emit_indent(E->out, ind);
	/* the interpreter's barrier orders global memory too: OpenCL fences it only when asked */
	emit(E->out, "%s\n", iscuda(E) ? "__syncthreads();"
	     : "barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);");
	return 0;
}

/* ---- whole-kernel checks ---- */

static int
divzero(Emit *E, int st, const UOp *u)
{
	Buf t;

	if ((u->op == OP_IDIV || u->op == OP_MOD) && u->nsrc == 2 && u->dtype == DT_INDEX
	&& u->src[1]->vmin <= 0 && u->src[1]->vmax >= 0) {
		buf_init(&t);
		uop_print(&t, u, D_INFIX);
		err_set(E->e, "%s: stage %s: the index expression %s may divide by zero (its divisor ranges over "
		        "[%lld, %lld]); the interpreter stops there, a GPU would compute garbage", E->D->name,
		        E->k->stage[st].name, t.s ? t.s : "", (long long)u->src[1]->vmin, (long long)u->src[1]->vmax);
		buf_free(&t);
		return -1;
	}
	return 0;
}

/* divzero, then the dialect's own check */
static int
check_node(Emit *E, int st, const UOp *u, void *aux)
{
	int (*fn)(Emit *, int, const UOp *) = *(int (**)(Emit *, int, const UOp *))aux;

	if (divzero(E, st, u) < 0 || (fn && fn(E, st, u) < 0))
		return -1;
	return 0;
}

int
gpu_check(Emit *E, int (*fn)(Emit *E, int st, const UOp *u))
{
	int i;

	for (i = 0; i < E->k->nstage; i++)
		if (emit_each_node(E, i, check_node, &fn) < 0)
			return -1;
	return 0;
}

/* ---- the translation unit ---- */

void
gpu_header(Emit *E, Buf *b, const char *title, const char *bufs, const char *build)
{
	const Kernel *k = E->k;
	int j;

	emit(b, "/*\n** %s\n", title);
	emit_header_line(b, k, KB_INPUT, "inputs:");
	emit_header_line(b, k, KB_OUTPUT, "outputs:");
	emit_header_line(b, k, KB_TEMP, "buffers:");
	emit(b, "** %s", bufs);
	for (j = 0; j < k->nbuf; j++)
		emit(b, "%s%s", j ? ", " : " ", k->buf[j].name);
	emit(b, ".\n** %s\n*/\n", build);
}

/* The helpers of the C dialect (c.c), each function's qualifiers spelled QUAL. */
static const struct {
	unsigned bit;
	const char *text;
} helpers[] = {
	{ H_MAXF | H_MINF | H_MAX | H_MIN, "/* max and min as the interpreter takes them: a NaN first operand wins, a NaN second one too */\n" },
	{ H_FMAXF | H_FMINF, "/* fast: max and min as the hardware takes them (one FMNMX; a NaN operand loses) */\n" },
	{ H_FMAXF, "QUAL float tessel_fmaxf(float a, float b) { return fmax(a, b); }\n" },
	/* exp2f guards the subnormal range (a compare and two multiplies around ex2); fast code
	** takes the instruction (exp2(-inf) = 0; subnormal results flush to 0) */
	{ H_EX2F, "QUAL float tessel_ex2f(float x) { float y; asm(\"ex2.approx.ftz.f32 %0, %1;\" : \"=f\"(y) : \"f\"(x)); return y; }\n" },
	{ H_FMINF, "QUAL float tessel_fminf(float a, float b) { return fmin(a, b); }\n" },
	{ H_MAXF, "QUAL float tessel_maxf(float a, float b) { return a > b || isnan(a) ? a : b; }\n" },
	{ H_MINF, "QUAL float tessel_minf(float a, float b) { return a < b || isnan(a) ? a : b; }\n" },
	{ H_MAX, "QUAL double tessel_max(double a, double b) { return a > b || isnan(a) ? a : b; }\n" },
	{ H_MIN, "QUAL double tessel_min(double a, double b) { return a < b || isnan(a) ? a : b; }\n" },
	{ H_FMOD,
	  "/* floor modulo of floats: the remainder takes the divisor's sign */\n"
	  "QUAL double\ntessel_fmod(double a, double b)\n{\n"
	  "  double m = fmod(a, b);\n\n"
	  "  return m != 0 && (m < 0) != (b < 0) ? m + b : m;\n}\n" },
	{ H_FTOI,
	  "/* a float to an integer: truncated toward zero, NaN is 0, saturated */\n"
	  "QUAL int64_t\ntessel_ftoi(double x)\n{\n"
	  "  if (isnan(x))\n    return 0;\n"
	  "  x = trunc(x);\n"
	  "  return x >= 9223372036854775808.0 ? INT64_MAX : x < -9223372036854775808.0 ? INT64_MIN : (int64_t)x;\n}\n" },
	{ H_FTOU,
	  "/* a float to uint64: truncated toward zero, NaN is 0, saturated, negative values wrapped */\n"
	  "QUAL uint64_t\ntessel_ftou(double x)\n{\n"
	  "  if (isnan(x))\n    return 0;\n"
	  "  x = trunc(x);\n"
	  "  if (x >= 9223372036854775808.0)\n"
	  "    return x >= 18446744073709551616.0 ? UINT64_MAX : (uint64_t)x;\n"
	  "  return x < -9223372036854775808.0 ? (uint64_t)INT64_MIN : (uint64_t)(int64_t)x;\n}\n" },
	{ H_IDIV | H_IMOD | H_UDIV | H_UMOD, "/* floor division and modulo of integers; x // 0 and x % 0 are 0 */\n" },
	{ H_IDIV,
	  "QUAL int64_t\ntessel_idiv(int64_t a, int64_t b)\n{\n"
	  "  if (b == 0)\n    return 0;\n"
	  "  if (b == -1)\n    return (int64_t)(0 - (uint64_t)a);\n"
	  "  return a / b - (a % b != 0 && (a < 0) != (b < 0));\n}\n" },
	{ H_IMOD,
	  "QUAL int64_t\ntessel_imod(int64_t a, int64_t b)\n{\n"
	  "  if (b == 0 || b == -1)\n    return 0;\n"
	  "  return a % b != 0 && (a % b < 0) != (b < 0) ? a % b + b : a % b;\n}\n" },
	{ H_UDIV, "QUAL uint64_t tessel_udiv(uint64_t a, uint64_t b) { return b ? a / b : 0; }\n" },
	{ H_UMOD, "QUAL uint64_t tessel_umod(uint64_t a, uint64_t b) { return b ? a % b : 0; }\n" },
	{ H_IMAX, "QUAL int64_t tessel_imax(int64_t a, int64_t b) { return a > b ? a : b; }\n" },
	{ H_IMIN, "QUAL int64_t tessel_imin(int64_t a, int64_t b) { return a < b ? a : b; }\n" },
	{ H_UMAX, "QUAL uint64_t tessel_umax(uint64_t a, uint64_t b) { return a > b ? a : b; }\n" },
	{ H_UMIN, "QUAL uint64_t tessel_umin(uint64_t a, uint64_t b) { return a < b ? a : b; }\n" },
	{ H_SHL | H_SHR | H_USHR, "/* shifts by a count outside [0, 63] give 0 (-1 for a negative value shifted right) */\n" },
	{ H_SHL, "QUAL int64_t tessel_shl(int64_t x, int64_t y) { return y < 0 || y > 63 ? 0 : (int64_t)((uint64_t)x << y); }\n" },
	{ H_SHR, "QUAL int64_t tessel_shr(int64_t x, int64_t y) { return y < 0 || y > 63 ? (x >= 0 ? 0 : -1) : x >> y; }\n" },
	{ H_USHR, "QUAL uint64_t tessel_ushr(uint64_t x, int64_t y) { return y < 0 || y > 63 ? 0 : x >> y; }\n" },
	{ H_IPOW,
	  "/* integer powers by squaring, wrapping; a negative exponent leaves only 1 and -1 */\n"
	  "QUAL int64_t\ntessel_ipow(int64_t x, int64_t y)\n{\n"
	  "  uint64_t r = 1, b = (uint64_t)x;\n\n"
	  "  if (y < 0)\n    return x == 1 ? 1 : x == -1 ? (y % 2 ? -1 : 1) : 0;\n"
	  "  for (; y; y = (int64_t)((uint64_t)y >> 1), b *= b)\n"
	  "    if (y & 1)\n      r *= b;\n"
	  "  return (int64_t)r;\n}\n" },
	{ H_UPOW,
	  "QUAL uint64_t\ntessel_upow(uint64_t x, uint64_t y)\n{\n"
	  "  uint64_t r = 1;\n\n"
	  "  for (; y; y >>= 1, x *= x)\n"
	  "    if (y & 1)\n      r *= x;\n"
	  "  return r;\n}\n" },
	{ H_IRECIP, "QUAL int64_t tessel_irecip(int64_t x) { return x == 1 ? 1 : x == -1 ? -1 : 0; }\n" },
	{ H_THREEFRY,
	  "/* Threefry 2x32 with 20 rounds (Random123's threefry2x32_20), as tensor.rand draws */\n"
	  "QUAL uint64_t\ntessel_threefry(uint64_t ctr, uint64_t key)\n{\n"
	  "  const int rot[8] = { 13, 15, 26, 6, 17, 29, 16, 24 };\n"
	  "  uint32_t x0 = (uint32_t)ctr, x1 = (uint32_t)(ctr >> 32), ks[3];\n\n"
	  "  ks[0] = (uint32_t)key;\n  ks[1] = (uint32_t)(key >> 32);\n"
	  "  ks[2] = 0x1BD11BDAu ^ ks[0] ^ ks[1];\n"
	  "  x0 += ks[0];\n  x1 += ks[1];\n"
	  "  for (int r = 0; r < 20; r++) {\n"
	  "    x0 += x1;\n"
	  "    x1 = (x1 << rot[r % 8]) | (x1 >> (32 - rot[r % 8]));\n"
	  "    x1 ^= x0;\n"
	  "    if (r % 4 == 3) {\n"
	  "      x0 += ks[(r / 4 + 1) % 3];\n"
	  "      x1 += ks[(r / 4 + 2) % 3] + (uint32_t)(r / 4 + 1);\n"
	  "    }\n  }\n"
	  "  return (uint64_t)x1 << 32 | x0;\n}\n" },
};

void
gpu_helpers(Emit *E, Buf *b, const char *qual)
{
	size_t i;
	int first = 1, prevmulti = 0;

	/* a blank line before a comment or a function of several lines, and after one */
	for (i = 0; i < sizeof helpers / sizeof helpers[0]; i++) {
		const char *t = helpers[i].text, *q;
		int multi = strchr(t, '\n') != t + strlen(t) - 1 || strncmp(t, "/*", 2) == 0;

		if (!(E->need & helpers[i].bit))
			continue;
		if (first || multi || prevmulti)
			emit(b, "\n");
		while ((q = strstr(t, "QUAL"))) {
			emitn(b, t, q - t);
			emit(b, "%s", qual);
			t = q + 4;
		}
		emit(b, "%s", t);
		first = 0;
		prevmulti = multi && strchr(helpers[i].text, '{');
	}
}

int
gpu_row_major(const KBuf *kb)
{
	return strcmp(kb->layout_desc, "row-major") == 0 && kb->size == emit_numel(kb);
}

int
gpu_layout_copies(Buf *b, const Kernel *k, const char *qual)
{
	int r, i, j, n = 0;

	for (r = 0; r < 2; r++) {
		KRole role = r ? KB_OUTPUT : KB_INPUT;
		const char *fn = r ? "tessel_take" : "tessel_place";
		int m = 0;

		for (i = 0; i < k->nbuf; i++) {
			const KBuf *kb = &k->buf[i];
			const char *t = gpu_ctype(kb->dtype, "uint16_t", "uint16_t");

			if (kb->role != role || kb->scope != AS_GLOBAL || gpu_row_major(kb))
				continue;
			if (!m++)
				emit(b, "\n/*\n** %s: %s.\n** 0 for a buffer stored row-major: a plain copy does.\n*/\n%s"
				     "int\n%s(int b, void *dst, const void *src)\n{\n  switch (b) {\n", fn,
				     r ? "output b's elements from its storage (src) into\n** row-major logical order (dst)"
				     : "input b's elements from row-major logical order (src)\n** into its storage (dst)",
				     qual, fn);
			emit(b, "  case %d: {  /* %s @ ", i, kb->name);
			emit_comment_text(b, kb->layout_desc);
			emit(b, " */\n");
			emit(b, "    %s *tessel_d = (%s *)dst;\n    const %s *tessel_s = (const %s *)src;\n"
			     "    int64_t tessel_i = 0;\n\n", t, t, t, t);
			for (j = 0; j < kb->ndim; j++) {
				emit_indent(b, j + 2);
				emit(b, "for (int64_t %s = 0; %s < %lld; %s++) {\n", kb->lvar[j]->name, kb->lvar[j]->name,
				     (long long)kb->shape[j], kb->lvar[j]->name);
			}
			emit_indent(b, kb->ndim + 2);
			if (r)
				emit(b, "tessel_d[tessel_i++] = tessel_s[");
			else
				emit(b, "tessel_d[");
			uop_print(b, kb->layout, D_C);
			emit(b, r ? "];\n" : "] = tessel_s[tessel_i++];\n");
			for (j = kb->ndim - 1; j >= 0; j--) {
				emit_indent(b, j + 2);
				emit(b, "}\n");
			}
			emit(b, "    return 1;\n  }\n");
		}
		if (m)
			emit(b, "  default:\n    return 0;\n  }\n}\n");
		n += m;
	}
	return n;
}
