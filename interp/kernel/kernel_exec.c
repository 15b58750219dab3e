/* kernel_exec.c - the interpreter's inner loop: one thread runs its bytecode to its next stop; layout programs run the same way. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../util/limits.h"
#include "run.h"

/* ---- the interpreter loop ---- */

static int
fail_div(Run *r, Thr *th, const Ins *in)
{
	char w[256];

	kmem_where(r, th, in, w, sizeof w);
	return err_set(r->e, "kernel.run: %s: index %s by zero", w, in->op == I_XDIV ? "division" : "modulo");
}

static int
fail_steps(Run *r, Thr *th, const Ins *in)
{
	char w[256];

	kmem_where(r, th, in, w, sizeof w);
	if (limits_poll(r->e) < 0)
		return err_set(r->e, "kernel.run: interrupted (Ctrl-C) at %s", w);
	return err_set(r->e, "steps limit: kernel.run needs more than %lld instructions, at %s "
	               "(raise it with tessel.limits{steps = N}, or k:run(bindings, {max_steps = N}) / "
	               "KRunOpts.max_steps for one run)",
	               (long long)r->max_steps, w);
}

/* Run thread th from its pc to a barrier (W_BAR), a warp op (W_WARP, pc at
** it), its end (0) or an error (-1). */
int
kexec_thread(Run *r, const Prog *P, Thr *th)
{
	const Ins *code = P->code, *in;
	Val *v = th->v;
	RBuf *rb = r->rb;
	int pc = th->pc, chk = r->checks, cnt = r->counting;
	int64_t left = r->left, ops = 0, x, y, off;
	unsigned char *p;
	uint64_t ux, uy;

#define A v[in->a]
#define B v[in->b]
#define CC v[in->c]
#define D v[in->d]
#define FR(e) fround(in->t, (e))
#define IW(e) (in->w ? dtype_wrap((DType)in->t, (e)) : (e))
#define U(e) ((uint64_t)(e))
	for (;;) {
		in = code + pc++;
		/* the step limit, and every 2^16 steps Ctrl-C */
		if (--left < 0 || ((left & 0xffff) == 0 && limits_poll(NULL) < 0)) {
			r->left = 0;
			return fail_steps(r, th, in);
		}
		switch (in->op) {
		case I_EXIT:
			th->done = 1;
			th->pc = pc - 1;
			r->left = left;
			r->ops += ops;
			return th->ncpa ? kasync_fail_cp_end(r, th) : th->nwg ? kasync_fail_wg_end(r, th) : 0;
		case I_CPA:
			if (kasync_cp_issue(r, th, in, D.i, A.i) < 0)
				goto fail;
			break;
		case I_CPC: th->ncommit++; break;
		case I_WGF:
			if (th->wgs)
				memset(th->wgs + r->k->nbuf, 0, (size_t)r->k->nbuf * sizeof *th->wgs);
			break;
		case I_WGC: th->wgcommit++; break;
		case I_WGW: kasync_wg_wait(r, th, in->imm); break;
		case I_CPW: kasync_cp_wait(r, th, in->imm); break;
		case I_MBI:
			if (kasync_mbar_init(r, th, in, D.i) < 0)
				goto fail;
			break;
		case I_MBA:
			if (kasync_mbar_arrive(r, th, in, D.i) < 0)
				goto fail;
			break;
		case I_MBW:
			if ((x = kasync_mbar_wait(r, th, in, D.i, A.i, 0)) < 0)
				goto fail;
			if (!x) {
				th->pc = pc - 1;
				r->left = left;
				r->ops += ops;
				return W_MBAR;
			}
			break;
		case I_TMA:
			if (kasync_tma_issue(r, th, in, D.i, A.i) < 0)
				goto fail;
			break;
		case I_BAR:
			th->bar = (int)in->imm;
			th->pc = pc;
			r->left = left;
			r->ops += ops;
			return W_BAR;
		case I_ATOM:
			if (kmem_atomic(r, th, in, A.i, &B, &D) < 0)
				goto fail;
			break;
		case I_FENCE:
			if (cnt)
				r->cnt->fences++;
			if (in->imm == KF_GPU) {
				if (th->fc < ATOMIC_BIT - 1)
					th->fc++;
				th->fphase = r->phase;
				if (chk && kmem_acquire(r, th) < 0)
					goto fail;
			}
			break;
		case I_SHFL: case I_MMA: case I_LDSM: case I_WGMMA:
			th->pc = pc - 1;
			r->left = left;
			r->ops += ops;
			return W_WARP;
		case I_JZ: if (!A.i) pc = in->b; break;
		case I_SET0: D.i = 0; break;
		case I_LOOP: if (++A.i < in->imm) pc = in->b; break;
		case I_GUARD: if (A.i >= in->imm) pc = in->b; break;
		case I_HW:
			switch (in->imm) {
			case HW_BLOCK_X: case HW_BLOCK_Y: case HW_BLOCK_Z: D.i = r->bc[in->imm - HW_BLOCK_X]; break;
			case HW_THREAD_X: case HW_THREAD_Y: case HW_THREAD_Z: D.i = th->tc[in->imm - HW_THREAD_X]; break;
			case HW_WARP: D.i = th->tc[0] / WARP; break;
			default: D.i = th->tc[0] % WARP; break;
			}
			break;
		case I_LOAD: {
			RBuf *b = &rb[in->imm];

			if (in->b >= 0 && !B.i) {
				/* gated off: 0, and no memory touched */
				D.i = 0;
				if (cnt)
					th->kc[in->c]++;
				break;
			}
			off = A.i;
			if (chk) {
				if (kmem_check(r, th, in, off, 0) < 0)
					goto fail;
			} else if ((uint64_t)off >= (uint64_t)b->size) {
				kmem_fail_oob(r, th, in, off, -1);
				goto fail;
			}
			if (cnt && kcount_access(r, th, in, off) < 0)
				goto fail;
			p = b->p + th->tid * b->tstride + off * b->bytes;
			switch (b->t) {
			case DT_FLOAT32: { float f; memcpy(&f, p, 4); D.f = f; break; }
			case DT_FLOAT64: memcpy(&D.f, p, 8); break;
			case DT_INT32: { int32_t i; memcpy(&i, p, 4); D.i = i; break; }
			case DT_INT64: case DT_UINT64: memcpy(&D.i, p, 8); break;
			default:
				if (isf(b->t))
					D.f = dtype_load_f(b->t, p);
				else
					D.i = dtype_load_i(b->t, p);
				break;
			}
			break;
		}
		case I_STORE: {
			/* the same checks as I_LOAD's, written out again: one shared helper
			** cost 10-17% of the fast path (bench/kernel_bench.lua) */
			RBuf *b = &rb[in->imm];

			if (in->b >= 0 && !B.i) {
				if (cnt)
					th->kc[in->c]++;
				break;
			}
			off = A.i;
			if (chk) {
				if (kmem_check(r, th, in, off, 1) < 0)
					goto fail;
			} else if ((uint64_t)off >= (uint64_t)b->size) {
				kmem_fail_oob(r, th, in, off, -1);
				goto fail;
			}
			if (cnt && kcount_access(r, th, in, off) < 0)
				goto fail;
			p = b->p + th->tid * b->tstride + off * b->bytes;
			if (in->w) {
				if (b->t == DT_FLOAT32) {
					float f = (float)D.f;

					memcpy(p, &f, 4);
				} else
					dtype_store_f(b->t, p, D.f);
			} else if (b->t == DT_INT32) {
				int32_t i = (int32_t)(uint32_t)U(D.i);

				memcpy(p, &i, 4);
			} else
				dtype_store_i(b->t, p, D.i);
			break;
		}
		/* conversions */
		case I_ITOF: D.f = FR((double)A.i); ops++; break;
		case I_UTOF: D.f = FR((double)U(A.i)); ops++; break;
		case I_FTOI: D.i = dtype_ftoi((DType)in->t, A.f); ops++; break;
		case I_FROUND: D.f = FR(A.f); ops++; break;
		case I_IWRAP: D.i = IW(A.i); ops++; break;
		/* floats: fop's semantics, rounded to the dtype */
		case I_FNEG: D.f = FR(-A.f); ops++; break;
		case I_FRECIP: D.f = FR(1.0 / A.f); ops++; break;
		case I_FTRUNC: D.f = FR(trunc(A.f)); ops++; break;
		case I_FEXP2: D.f = FR(exp2(A.f)); ops++; break;
		case I_FLOG2: D.f = FR(log2(A.f)); ops++; break;
		case I_FSIN: D.f = FR(sin(A.f)); ops++; break;
		case I_FSQRT: D.f = FR(sqrt(A.f)); ops++; break;
		case I_FADD: D.f = FR(A.f + B.f); ops++; break;
		case I_FSUB: D.f = FR(A.f - B.f); ops++; break;
		case I_FMUL: D.f = FR(A.f * B.f); ops++; break;
		case I_FPOW: D.f = FR(pow(A.f, B.f)); ops++; break;
		case I_FIDIV: D.f = FR(floor(A.f / B.f)); ops++; break;
		case I_FMOD: {
			double m = fmod(A.f, B.f);

			D.f = FR(m != 0 && (m < 0) != (B.f < 0) ? m + B.f : m);
			ops++;
			break;
		}
		case I_FMIN: D.f = FR(A.f < B.f || isnan(A.f) ? A.f : B.f); ops++; break;
		case I_FMAX: D.f = FR(A.f > B.f || isnan(A.f) ? A.f : B.f); ops++; break;
		case I_FLT: D.i = A.f < B.f; ops++; break;
		case I_FNE: D.i = A.f != B.f; ops++; break;
		case I_FEQ: D.i = A.f == B.f; ops++; break;
		case I_FWHERE: D.f = FR(A.i ? B.f : CC.f); ops++; break;
		case I_FMULACC: D.f = FR(A.f * B.f + CC.f); ops++; break;
		case I_FNAN: D.f = NAN; ops++; break;
		/* integers: iop's semantics, wrapped to the dtype */
		case I_INEG: D.i = IW((int64_t)(0 - U(A.i))); ops++; break;
		case I_IRECIP: x = A.i; D.i = IW(x == 1 ? 1 : x == -1 ? -1 : 0); ops++; break;
		case I_IADD: D.i = IW((int64_t)(U(A.i) + U(B.i))); ops++; break;
		case I_ISUB: D.i = IW((int64_t)(U(A.i) - U(B.i))); ops++; break;
		case I_IMUL: D.i = IW((int64_t)(U(A.i) * U(B.i))); ops++; break;
		case I_IMULACC: D.i = IW((int64_t)(U(A.i) * U(B.i) + U(CC.i))); ops++; break;
		case I_IDIV:
			x = A.i;
			y = B.i;
			if (uck_fdiv(x, y, &off) < 0)
				off = y == 0 ? 0 : x;   /* x // 0 is 0; INT64_MIN // -1 wraps */
			D.i = IW(off);
			ops++;
			break;
		case I_UDIV: D.i = IW(B.i ? (int64_t)(U(A.i) / U(B.i)) : 0); ops++; break;
		case I_IMOD:
			if (uck_fmod(A.i, B.i, &off) < 0)
				off = 0;
			D.i = IW(off);
			ops++;
			break;
		case I_UMOD: D.i = IW(B.i ? (int64_t)(U(A.i) % U(B.i)) : 0); ops++; break;
		case I_XDIV:
			x = A.i;
			y = B.i;
			if (y == 0) {
				fail_div(r, th, in);
				goto fail;
			}
			if (uck_fdiv(x, y, &off) < 0)
				off = x;
			D.i = off;
			ops++;
			break;
		case I_XMOD:
			if (B.i == 0) {
				fail_div(r, th, in);
				goto fail;
			}
			uck_fmod(A.i, B.i, &off);
			D.i = off;
			ops++;
			break;
		case I_IMIN: D.i = A.i < B.i ? A.i : B.i; ops++; break;
		case I_UMIN: D.i = U(A.i) < U(B.i) ? A.i : B.i; ops++; break;
		case I_IMAX: D.i = A.i > B.i ? A.i : B.i; ops++; break;
		case I_UMAX: D.i = U(A.i) > U(B.i) ? A.i : B.i; ops++; break;
		case I_ILT: D.i = A.i < B.i; ops++; break;
		case I_ULT: D.i = U(A.i) < U(B.i); ops++; break;
		case I_INE: D.i = A.i != B.i; ops++; break;
		case I_IEQ: D.i = A.i == B.i; ops++; break;
		case I_IWHERE: D.i = IW(A.i ? B.i : CC.i); ops++; break;
		case I_AND: D.i = IW(A.i & B.i); ops++; break;
		case I_OR: D.i = IW(A.i | B.i); ops++; break;
		case I_XOR: D.i = IW(A.i ^ B.i); ops++; break;
		case I_SHL:
			y = B.i;
			D.i = IW(y < 0 || y > 63 ? 0 : (int64_t)(U(A.i) << y));
			ops++;
			break;
		case I_SHR:
			x = A.i;
			y = B.i;
			D.i = IW(y < 0 || y > 63 ? (x >= 0 ? 0 : -1) : x >> y);
			ops++;
			break;
		case I_USHR:
			y = B.i;
			D.i = IW(y < 0 || y > 63 ? 0 : (int64_t)(U(A.i) >> y));
			ops++;
			break;
		case I_THREEFRY: D.i = IW((int64_t)tensor_threefry(U(A.i), U(B.i))); ops++; break;
		case I_IPOW: case I_UPOW:
			/* by squaring, wrapping; a negative exponent leaves only 1/1 and 1/-1 */
			x = A.i;
			y = B.i;
			if (y < 0 && in->op == I_IPOW)
				off = x == 1 ? 1 : x == -1 ? (y % 2 ? -1 : 1) : 0;
			else {
				for (ux = U(x), uy = 1; y; y = (int64_t)(U(y) >> 1), ux *= ux)
					if (y & 1)
						uy *= ux;
				off = (int64_t)uy;
			}
			D.i = IW(off);
			ops++;
			break;
		case I_IZERO: D.i = 0; ops++; break;
		default:
			err_set(r->e, "kernel.run: internal: bad instruction %d", in->op);
			goto fail;
		}
	}
fail:
	r->left = left;
	r->ops += ops;
	th->pc = pc - 1;
	return -1;
#undef A
#undef B
#undef CC
#undef D
#undef FR
#undef IW
#undef U
}

/* The physical offset of logical element lin (row-major) of buffer b. */
/* The physical offset of element c (logical coordinates) of buffer B through its layout program. */
int
kexec_lay_at(Run *r, RBuf *B, const KBuf *kb, const int64_t *c, Val *slots, int64_t *off)
{
	Thr th;
	const Prog *save = r->P;
	int64_t left = r->left, ops = r->ops;
	int i, rc;
	char cs[160];
	size_t at;

	for (i = 0; i < kb->ndim; i++)
		slots[i].i = c[i];
	memset(&th, 0, sizeof th);
	th.v = slots;
	r->P = NULL;
	/* placing data is not the kernel's work: neither steps nor ops */
	r->left = INT64_MAX;
	rc = kexec_thread(r, &B->lay, &th);
	r->P = save;
	r->left = left;
	r->ops = ops;
	if (rc < 0)
		return -1;
	*off = slots[B->lay.res].i;
	if (*off >= 0 && *off < B->size)
		return 0;
	for (i = 0, at = 0; i < kb->ndim && at < sizeof cs; i++)
		at += snprintf(cs + at, sizeof cs - at, "%s%lld", i ? ", " : "", (long long)c[i]);
	return err_set(r->e, "out of bounds: buffer %s: its layout maps element (%s) outside [0, %lld)", kb->name, cs,
	               (long long)B->size);
}

/* The same for element lin of the row-major logical order. */
int
kexec_lay_offset(Run *r, RBuf *B, const KBuf *kb, int64_t lin, Val *slots, int64_t *off)
{
	int64_t c[T_MAXDIM];
	int i;

	for (i = kb->ndim - 1; i >= 0; i--) {
		c[i] = lin % kb->shape[i];
		lin /= kb->shape[i];
	}
	return kexec_lay_at(r, B, kb, c, slots, off);
}

Val *
kexec_lay_slots(Run *r, RBuf *B)
{
	Val *s = malloc((size_t)(B->lay.nstack + B->lay.nconst + 1) * sizeof *s);

	if (!s) {
		err_set(r->e, "kernel.run: out of memory");
		return NULL;
	}
	memset(s, 0, (size_t)B->lay.nstack * sizeof *s);
	if (B->lay.nconst)
		memcpy(s + B->lay.nstack, B->lay.cval, (size_t)B->lay.nconst * sizeof *s);
	return s;
}
