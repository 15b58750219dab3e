/* triton.c - the Triton dialect: a kernel as a Python module, one @triton.jit function per stage, tiles from the tile view. */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "triton.h"

/*
** A stage is one Triton program launched over a grid; the host function
** tessel_launch runs the stages in order. Triton has programs, not threads:
** a program computes on tiles (tensors of power-of-two extents), so a stage
** maps as follows.
**
** The grid. Loops bound to block.x/y/z are tl.program_id(0/1/2), with the
** extents the interpreter gives the grid (EStage.grid, as CUDA launches it).
** A stage with no bound loop takes the leading loops of its body, while each
** is the only statement of the one above, its iterations are independent
** (sched_independent, as the C dialect checks a parallel loop) and it is no
** tile's inner loop: one program per iteration. Thread-bound loops are
** refused: a Triton program has no threads to bind them to.
**
** Tiles. Every store the tile view (tile_ir_stmt) turns into a tile
** statement becomes one: each inner loop is an axis, its variable the
** arange offs_<v> of its extent padded to a power of two (BLOCK_<V>, a
** tl.constexpr argument), reshaped into the statement's frame with None
** (offs_j[None, :]). The tile view's frame is the value's dimensions: the
** stored tile's, then the reduced ones. Offsets are the buffers' layouts at
** the access's indices with the loop variables replaced by these aranges, so
** broadcasts and permutes are pointer arithmetic (a transposed tile is
** loaded through transposed offsets, as Triton code does). Padded axes are
** masked: loads by the axes their offsets use (other=0), stores by the
** stored axes, and a reduced padded axis puts the reduction's identity in
** the padding (tl.where) before tl.sum, tl.max, tl.min or tl.reduce (mul).
** Stores that stay scalar statements are scalar Triton; unbound loops that
** are no tile's become `for v in range(n)` (tl.static_range when unrolled).
**
** Memory. The caller passes storage for every buffer, temporaries included
** (kernel order, as the CUDA harness does). A global buffer lives in memory
** between statements (each statement loads what it reads, with a
** tl.debug_barrier before a statement that reads what the program stored).
** A register (local) buffer, compacted to what one program uses, is one
** tile held in a variable of the program, written and read whole
** (triton_tile.c, triton_value.c): the running max, sum and output of a
** rolling update, the scores of a key tile. Shared buffers, barriers,
** shuffles and MMAs are refused: Triton places tiles in shared memory and
** on tensor cores itself, and a tile contraction becomes tl.dot.
**
** Values are close to the interpreter's, not equal: Triton's exp2, log2,
** sin and sqrt are the device's, reductions sum in a tree, max and min
** treat NaN as the device does. docs/export.md states the tolerances.
*/

static const char *const reserved[] = {
	/* Python keywords and soft keywords */
	"False", "None", "True", "and", "as", "assert", "async", "await", "break", "class", "continue",
	"def", "del", "elif", "else", "except", "finally", "for", "from", "global", "if", "import", "in",
	"is", "lambda", "nonlocal", "not", "or", "pass", "raise", "return", "try", "while", "with",
	"yield", "match", "case", "type",
	/* the modules and builtins the source uses */
	"tl", "triton", "torch", "float", "int", "range", "len", "min", "max", "print", "bufs", "self",
	NULL
};



/* ---- refusals ---- */

static int
refuse(Emit *E, int st, const UOp *at, const char *what)
{
	EStage S;
	char w[200];

	memset(&S, 0, sizeof S);
	S.st = st;
	S.body = E->k->stage[st].body;
	emit_where(&S, at, w, sizeof w);
	return err_set(E->e, "triton: stage %s: %s %s", tr_stname(E, st), what, w);
}

static int
check_fn(Emit *E, int st, const UOp *u)
{
	switch (u->op) {
	case OP_BARRIER:
		return refuse(E, st, u, "a barrier has no Triton form (a program has no threads to synchronize; "
		              "tile statements replace thread loops and shared tiles): the barrier");
	case OP_MMA:
		return refuse(E, st, u, "an MMA statement is warp-level; Triton writes tl.dot on tiles instead: "
		              "the mma");
	case OP_LDMATRIX:
		return refuse(E, st, u, "an ldmatrix is warp-level; Triton loads tiles with tl.load and places "
		              "fragments itself: the ldmatrix");
	case OP_CP_ASYNC:
	case OP_CP_COMMIT:
	case OP_CP_WAIT:
		return refuse(E, st, u, "a cp.async is a thread's asynchronous copy; Triton pipelines its loads "
		              "itself (num_stages): the cp_async");
	case OP_WGMMA:
	case OP_WG_FENCE:
	case OP_WG_COMMIT:
	case OP_WG_WAIT:
	case OP_SETMAXNREG:
		return refuse(E, st, u, "a wgmma is a warpgroup's asynchronous MMA; Triton's tl.dot chooses it "
		              "itself on sm_90: the wgmma");
	case OP_MBAR_INIT:
	case OP_MBAR_ARRIVE:
	case OP_MBAR_WAIT:
	case OP_TMA_LOAD:
		return refuse(E, st, u, "mbarriers and TMA are one thread's view of Hopper's copy engine; Triton "
		              "issues its own (tl.make_tensor_descriptor): the mbarrier or TMA statement");
	case OP_ATOMIC:
	case OP_FENCE:
		return refuse(E, st, u, "tessel writes no Triton atomics or fences yet (tl.atomic_add exists; a "
		              "last-block combine needs the threads' view): export to cuda, or split the stage in two "
		              "launches: the atomic or fence");
	case OP_SHUFFLE:
		return refuse(E, st, u, "a warp shuffle has no Triton form (a program has no lanes); reduce a tile "
		              "with tl.sum instead: the shuffle");
	case OP_RANGE:
		if (hwaxis_is_thread(krange_hw(u))) {
			char m[160];

			snprintf(m, sizeof m, "loop %s is bound to %s; a Triton program has no threads (tiles replace "
			         "them): unbind it (the tile view makes its nest a tile) or export to cuda",
			         krange_var(u)->name, hwaxis_name(krange_hw(u)));
			return err_set(E->e, "triton: stage %s: %s", tr_stname(E, st), m);
		}
		return 0;
	case OP_POW:
	case OP_THREEFRY:
	case OP_SHL:
	case OP_SHR:
		if (u->op == OP_SHL || u->op == OP_SHR) {
			if (u->dtype == DT_INDEX)
				return 0;
		}
		return err_set(E->e, "triton: stage %s: the value %s (%s) has no Triton form tessel writes yet",
		               tr_stname(E, st), uop_info[u->op].name, dtype_name((DType)u->dtype));
	case OP_DEFINE: {
		const KBuf *kb;

		if (u->arg[0] < 0 || u->arg[0] >= E->k->nbuf)
			return 0;
		kb = &E->k->buf[u->arg[0]];
		if (kb->scope == AS_LOCAL)
			return err_set(E->e, "triton: stage %s: buffer %s is %s; Triton places tiles in shared "
			               "memory itself, so tessel takes global and register (local) buffers only "
			               "(set_scope it local, or export to cuda)", tr_stname(E, st), kb->name,
			               kscope_name(kb->scope));
		return 0;
	}
	default:
		return 0;
	}
}

static int
check(Emit *E)
{
	return gpu_check(E, check_fn);
}

/* ---- statements ---- */

static int stmt(Emit *E, EStage *S, const UOp *s, int ind);

static void
line(Emit *E, int ind, const char *s)
{
	emit_indent(E->out, 2 * ind);
	emit(E->out, "%s\n", s);
}

/* tl.store(pointer, value, mask=...) of store s (substituted), value text v */
static int
put(Emit *E, const UOp *s, const Tx *v, const Tx *gate, int ind)
{
	TState *T = E->aux;
	unsigned axes;
	Buf p, m;
	int rc, nm;

	if (tr_is_reg(E, s->src[0]))
		return tr_reg_put(E, s, v, gate, ind);
	buf_init(&p);
	buf_init(&m);
	if ((rc = tr_pointer(E, s->src[0], &p, &axes, 0)) == 0) {
		nm = tr_mask_text(T, &m, axes);
		if (gate && !nm) {
			/* a gate alone is control flow: a scalar mask is a value, and Triton's interpreter
			** tests its truth where the compiler tests that it exists (`if not mask`) */
			emit_indent(E->out, 2 * ind++);
			emit(E->out, "if ");
			tr_operand(E->out, gate, 0);
			emit(E->out, ":\n");
			gate = NULL;
		}
		emit_indent(E->out, 2 * ind);
		emit(E->out, "tl.store(%s, ", p.s ? p.s : "");
		tr_operand(E->out, v, 0);
		if (m.len || gate) {
			emit(E->out, ", mask=");
			if (m.len && gate) {
				emit(E->out, nm > 1 ? "%s & " : "(%s) & ", m.s);
				tr_operand(E->out, gate, P_TAND + 1);
			} else if (m.len)
				emit(E->out, "%s", m.s);
			else
				tr_operand(E->out, gate, 0);
		}
		emit(E->out, ")\n");
	}
	buf_free(&p);
	buf_free(&m);
	return rc;
}

static int
scalar_store(Emit *E, EStage *S, const UOp *s, int ind)
{
	TState *T = E->aux;
	UOp *roots[3] = { s->src[0], s->src[1], s->nsrc > 2 ? s->src[2] : NULL };
	Tx v, g;
	int rc;

	T->nfr = 0;
	tr_tx_init(&v);
	tr_tx_init(&g);
	rc = tr_hoist(E, roots, 3, ind);
	if (rc == 0)
		rc = tr_value(E, s->src[1], &v, 0);
	if (rc == 0 && s->nsrc > 2)
		rc = tr_value(E, s->src[2], &g, 0);
	if (rc == 0)
		rc = put(E, s, &v, s->nsrc > 2 ? &g : NULL, ind);
	pmap_free(&T->hoist);
	buf_free(&v.s);
	buf_free(&g.s);
	return rc;
}

static const char *
identity(Op op, DType t)
{
	int fl = tr_isfloat(t);

	switch (op) {
	case OP_ADD: return fl ? "0.0" : "0";
	case OP_MUL: return fl ? "1.0" : "1";
	/* an unsigned operand promotes the int64 identity to uint64 (-2^63 is 2^63): its own are 0 and 2^64 - 1 */
	case OP_MAX: return fl ? "-float(\"inf\")" : t == DT_INT32 ? "-2147483648" : t == DT_UINT64 ? "0"
	                    : "-9223372036854775808";
	default: return fl ? "float(\"inf\")" : t == DT_INT32 ? "2147483647" : t == DT_UINT64 ? "18446744073709551615"
	                : "9223372036854775807";
	}
}

/*
** A tile statement: the stored tile's frame for the pointer and the
** accumulator, the value's frame (stored axes, then reduced ones) for what
** is reduced.
*/
static int
tile_store(Emit *E, EStage *S, const UOp *s, const TileStmt *ts, int ind)
{
	TState *T = E->aux;
	UOp *st = NULL, *other = NULL, *roots[3];
	Tx v, g, r, a;
	Buf m;
	int f, rc = -1, red = ts->n > ts->nstored, isdot = 0;

	tr_tx_init(&v);
	tr_tx_init(&g);
	tr_tx_init(&r);
	tr_tx_init(&a);
	buf_init(&m);
	/* the reduced value first, in the whole frame: a contraction as tl.dot */
	if (red && (isdot = tr_dot(E, S, ts, &r, ind)) < 0)
		goto out;
	if (red && !isdot) {
		int padded = 0;

		if (tr_frame(E, S->st, ts->loop, ts->n) < 0 || !(other = tr_in_frame(E, (UOp *)ts->other)))
			goto out;
		roots[0] = other;
		if (tr_hoist(E, roots, 1, ind) < 0 || tr_value(E, other, &r, 0) < 0)
			goto out;
		for (f = ts->nstored; f < ts->n; f++)
			padded |= T->fr[f].masked;
		if (padded) {
			Tx w;

			/* the padding of a reduced axis holds the identity */
			tr_tx_init(&w);
			emit(&w.s, "tl.where(");
			tr_mask_text(T, &w.s, ((1u << ts->n) - 1) & ~((1u << ts->nstored) - 1));
			emit(&w.s, ", ");
			tr_operand(&w.s, &r, 0);
			emit(&w.s, ", %s)", identity(ts->op, (DType)ts->other->dtype));
			buf_free(&r.s);
			r = w;
		}
		for (f = ts->n - 1; f >= ts->nstored; f--) {
			Tx w;

			tr_tx_init(&w);
			if (ts->op == OP_MUL) {
				emit(&w.s, "tl.reduce(");
				tr_operand(&w.s, &r, 0);
				emit(&w.s, ", %d, tessel_mul)", f);
				T->mul = 1;
			} else {
				emit(&w.s, "%s(", ts->op == OP_ADD ? "tl.sum" : ts->op == OP_MAX ? "tl.max" : "tl.min");
				tr_operand(&w.s, &r, 0);
				emit(&w.s, ", axis=%d)", f);
			}
			buf_free(&r.s);
			r = w;
		}
	}
	if (tr_frame(E, S->st, ts->loop, ts->nstored) < 0 || !(st = tr_in_frame(E, (UOp *)s)))
		goto out;
	if (red) {
		const UOp *acc = NULL, *val = st->src[1];
		int i;

		/* the substituted accumulator: the load of the stored element in the update */
		for (i = 0; i < 2; i++)
			if (val->src[i]->op == OP_LOAD && val->src[i]->nsrc == 1 && val->src[i]->src[0] == st->src[0])
				acc = val->src[i];
		if (!acc || val->nsrc != 2)
			goto bad;
		roots[0] = (UOp *)acc;
		roots[1] = st->nsrc > 2 ? st->src[2] : NULL;
		if (tr_hoist(E, roots, 2, ind) < 0 || tr_value(E, acc, &a, 0) < 0)
			goto out;
		switch (ts->op) {
		case OP_ADD: case OP_MUL:
			if (val->src[0] == acc)
				tr_binop(&v, &a, ts->op == OP_ADD ? "+" : "*", &r, ts->op == OP_ADD ? P_TADD : P_TMUL);
			else
				tr_binop(&v, &r, ts->op == OP_ADD ? "+" : "*", &a, ts->op == OP_ADD ? P_TADD : P_TMUL);
			break;
		default: {
			Tx two[2];

			two[0] = val->src[0] == acc ? a : r;
			two[1] = val->src[0] == acc ? r : a;
			tr_call(&v, ts->op == OP_MAX ? "tl.maximum" : "tl.minimum", two, 2);
			break;
		}
		}
	} else {
		roots[0] = st->src[0];
		roots[1] = st->src[1];
		roots[2] = st->nsrc > 2 ? st->src[2] : NULL;
		if (tr_hoist(E, roots, 3, ind) < 0 || tr_value(E, st->src[1], &v, 0) < 0)
			goto out;
	}
	if (st->nsrc > 2 && tr_value(E, st->src[2], &g, 0) < 0)
		goto out;
	rc = put(E, st, &v, st->nsrc > 2 ? &g : NULL, ind);
	goto out;
bad:
	rc = err_set(E->e, "triton: stage %s: a reduction that is not an update X[I] = X[I] op v", tr_stname(E, S->st));
out:
	T->nfr = 0;
	pmap_free(&T->hoist);
	buf_free(&v.s);
	buf_free(&g.s);
	buf_free(&r.s);
	buf_free(&a.s);
	buf_free(&m);
	return rc;
}

/* Whether u loads a buffer in memory that the stage writes (a register tile is the program's own). */
static int
reads_written(const Kernel *k, EStage *S, const UOp *u, PMap *seen, int depth)
{
	int i;

	if (pmap_get(seen, u) || depth > E_MAXDEPTH)
		return 0;
	pmap_put(seen, u, (void *)1);
	if (u->op == OP_LOAD && u->nsrc > 0 && u->src[0]->op == OP_INDEX && u->src[0]->nsrc > 0
	&& u->src[0]->src[0]->op == OP_DEFINE && (S->use[u->src[0]->src[0]->arg[0]] & 2)
	&& k->buf[u->src[0]->src[0]->arg[0]].scope != AS_REG)
		return 1;
	for (i = 0; i < u->nsrc; i++)
		if (reads_written(k, S, u->src[i], seen, depth + 1))
			return 1;
	return 0;
}

static int
store(Emit *E, EStage *S, const UOp *s, int ind)
{
	TState *T = E->aux;
	TileStmt ts;
	PMap seen = { 0 };
	int n, i, rd = 0;

	if (s->nsrc < 2 || s->nsrc > 3 || s->src[0]->op != OP_INDEX)
		return err_set(E->e, "triton: stage %s: a store to something that is not an index", tr_stname(E, S->st));
	if ((n = tile_ir_stmt(E->k, S->st, s, &ts, E->e)) < 0)
		return -1;
	for (i = 1; i < s->nsrc && !rd; i++)
		rd = reads_written(E->k, S, s->src[i], &seen, 0);
	for (i = 1; i < s->src[0]->nsrc && !rd; i++)
		rd = reads_written(E->k, S, s->src[0]->src[i], &seen, 0);
	pmap_free(&seen);
	/*
	** A statement reading what the program stored (before it, or in an earlier
	** iteration: a for loop is open) may read an element another thread of the program stored: the
	** layouts of two statements differ, and a scalar is stored by one thread and
	** loaded by all. Triton orders one thread's accesses only, so a barrier.
	*/
	if (rd && (T->stored || T->loops))
		line(E, ind, "tl.debug_barrier()");
	T->stored += !tr_is_reg(E, s->src[0]);
	return n ? tile_store(E, S, s, &ts, ind) : scalar_store(E, S, s, ind);
}

static int
body(Emit *E, EStage *S, UOp *const *s, int n, int ind)
{
	size_t len = E->out->len;
	int i;

	for (i = 0; i < n; i++)
		if (stmt(E, S, s[i], ind) < 0)
			return -1;
	if (E->out->len == len)
		line(E, ind, "pass");
	return 0;
}

static int
loop(Emit *E, EStage *S, const UOp *s, int ind)
{
	TState *T = E->aux;
	const UOp *r = s->src[0], *v = krange_var(r);
	uintptr_t ax = (uintptr_t)pmap_get(&T->grid, r);
	HwAxis hw = krange_hw(r);
	int64_t ext = krange_extent(r);
	int rc;

	if (r->nsrc != 1 || v->op != OP_VAR || v->arg[0] != 0)
		return err_set(E->e, "triton: stage %s: a loop that does not start at 0", tr_stname(E, S->st));
	if (pmap_get(&T->inner, r))
		return body(E, S, s->src + 1, s->nsrc - 1, ind);   /* a tile's axis: the store writes it */
	if (ax || hwaxis_is_block(hw)) {
		int a = ax ? (int)ax - 1 : (int)hw - (int)HW_BLOCK_X;
		char t[K_NAME + 48];

		/* past 2^31 elements, offsets are int64 from the program ids on */
		snprintf(t, sizeof t, "%s = tl.program_id(%d)%s", v->name, a, T->wide ? ".to(tl.int64)" : "");
		line(E, ind, t);
		if (!ax && ext < S->grid[a]) {
			/* a block loop shorter than the grid: the blocks past it skip its body */
			snprintf(t, sizeof t, "if %s < %lld:", v->name, (long long)ext);
			line(E, ind, t);
			return body(E, S, s->src + 1, s->nsrc - 1, ind + 1);
		}
		return body(E, S, s->src + 1, s->nsrc - 1, ind);
	}
	emit_indent(E->out, 2 * ind);
	if ((krange_type(r) == AX_UNROLL || krange_type(r) == AX_UPCAST) && ext <= T_UNROLL)
		emit(E->out, "for %s in tl.static_range(%lld):\n", v->name, (long long)ext);
	else if (s->nsrc == 2 && s->src[1]->op == OP_IF && (rc = tr_bounded(E, s, ind)) != 0) {
		if (rc < 0)
			return -1;
		T->loops++;
		rc = body(E, S, s->src[1]->src + 1, s->src[1]->nsrc - 1, ind + 1);
		T->loops--;
		return rc;
	} else
		emit(E->out, "for %s in range(%lld):\n", v->name, (long long)ext);
	T->loops++;
	rc = body(E, S, s->src + 1, s->nsrc - 1, ind + 1);
	T->loops--;
	return rc;
}

static int
stmt(Emit *E, EStage *S, const UOp *s, int ind)
{
	TState *T = E->aux;
	Tx g;
	UOp *root;
	int rc;

	if (ind > E_MAXDEPTH)
		return err_set(E->e, "triton: stage %s: statements nest too deep", tr_stname(E, S->st));
	switch (s->op) {
	case OP_STORE:
		return store(E, S, s, ind);
	case OP_END:
		if (s->nsrc < 1 || s->src[0]->op != OP_RANGE)
			return err_set(E->e, "triton: stage %s: a loop without a range", tr_stname(E, S->st));
		return loop(E, S, s, ind);
	case OP_IF:
		if (s->nsrc < 1)
			return err_set(E->e, "triton: stage %s: an if without a condition", tr_stname(E, S->st));
		if (s->src[0]->op == OP_CONST && s->src[0]->arg[0]) {
			int i;

			if (s->name) {
				emit_indent(E->out, 2 * ind);
				emit(E->out, "# %s\n", s->name);
			}
			for (i = 1; i < s->nsrc; i++)
				if (stmt(E, S, s->src[i], ind) < 0)
					return -1;
			return 0;
		}
		root = s->src[0];
		T->nfr = 0;
		tr_tx_init(&g);
		rc = tr_hoist(E, &root, 1, ind);
		if (rc == 0)
			rc = tr_value(E, root, &g, 0);
		pmap_free(&T->hoist);
		if (rc == 0) {
			emit_indent(E->out, 2 * ind);
			emit(E->out, "if %s:\n", g.s.s ? g.s.s : "");
		}
		buf_free(&g.s);
		return rc < 0 ? -1 : body(E, S, s->src + 1, s->nsrc - 1, ind + 1);
	default:
		return refuse(E, S->st, s, "a statement with no Triton form:");
	}
}

/* ---- stages ---- */

/* every store's tile loops into T->inner */
static int
mark_inner(Emit *E, EStage *S, const UOp *s, int depth)
{
	TState *T = E->aux;
	TileStmt ts;
	int i, n;

	if (depth > E_MAXDEPTH)
		return 0;
	if (s->op == OP_STORE) {
		if ((n = tile_ir_stmt(E->k, S->st, s, &ts, E->e)) < 0)
			return -1;
		for (i = 0; i < n; i++)
			if (pmap_put(&T->inner, ts.loop[i], (void *)1) < 0)
				return tr_oom(E);
		/* the first tile loop on the path heads the inner part: every loop under it is the tile's
		** (one of extent 1 that indexes nothing is no axis, and no loop either) */
		{
			UOp *path[256];
			int np = sched_path(E->k, S->st, s, path, 256), j;

			for (j = 0; n && j < np; j++)
				if (path[j]->op == OP_END)
					for (i = 0; i < n; i++)
						if (path[j]->src[0] == ts.loop[i])
							goto found;
			return 0;
found:
			/* the first inner loop on the path heads the tile: every loop under it is the tile's */
			for (; j < np; j++)
				if (path[j]->op == OP_END && pmap_put(&T->inner, path[j]->src[0], (void *)1) < 0)
					return tr_oom(E);
		}
		return 0;
	}
	if (s->op != OP_END && s->op != OP_IF)
		return 0;
	for (i = 1; i < s->nsrc; i++)
		if (mark_inner(E, S, s->src[i], depth + 1) < 0)
			return -1;
	return 0;
}

/*
** A stage that is one tile statement and nothing else (a lowered
** elementwise stage): its outermost loop, when the tile stores along it, is
** spread over programs, blocks of it as large as keeps the tile within
** T_BLOCKED elements, as a Triton kernel over rows does.
*/
static int
spread(Emit *E, EStage *S, const UOp *s)
{
	TState *T = E->aux;
	const UOp *top = s;
	TileStmt ts;
	int64_t rest = 1, ext, b;
	int f, at = -1;

	if (s->op != OP_END || !pmap_get(&T->inner, s->src[0]))
		return 0;
	while (s->op == OP_END || (s->op == OP_IF && s->src[0]->op == OP_CONST && s->src[0]->arg[0] && !s->name)) {
		if (s->nsrc != 2)
			return 0;
		s = s->src[1];
	}
	if (s->op != OP_STORE || tile_ir_stmt(E->k, S->st, s, &ts, E->e) <= 0)
		return ts.n < 0 ? -1 : 0;
	for (f = 0; f < ts.n; f++)
		if (ts.loop[f] == top->src[0])
			at = f;
		else
			rest *= tr_pow2(krange_extent(ts.loop[f]));
	if (at < 0 || at >= ts.nstored)
		return 0;
	ext = krange_extent(top->src[0]);
	for (b = tr_pow2(ext); b > 1 && b * rest > T_BLOCKED; b /= 2)
		;
	T->blk = top->src[0];
	T->blk_size = b;
	T->gext[0] = (ext + b - 1) / b;
	T->ngrid = 1;
	return 0;
}

/*
** Program ids for a stage without bound loops: the leading nest of loops
** each the only statement of the one above, independent together, no
** tile's axis, at most three (axis 0 the outermost: it takes 2^31-1
** programs, axes 1 and 2 65535).
*/
static int
choose_grid(Emit *E, EStage *S)
{
	TState *T = E->aux;
	UOp *loops[3];
	const UOp *s = S->body;
	Err ie;
	int n = 0;

	T->ngrid = 0;
	if (S->nbound)
		return 0;
	while (n < 3) {
		while (s->op == OP_IF && s->src[0]->op == OP_CONST && s->src[0]->arg[0] && !s->name && s->nsrc == 2)
			s = s->src[1];
		if (s->op != OP_END || s->nsrc < 2 || krange_hw(s->src[0]) != HW_NONE
		|| pmap_get(&T->inner, s->src[0]) || (n && krange_extent(s->src[0]) > 65535))
			break;
		loops[n] = (UOp *)s;
		if (sched_independent(E->k, S->st, loops, n + 1, 0, &ie) < 0) {
			break;
		}
		if (pmap_put(&T->grid, s->src[0], (void *)(uintptr_t)(n + 1)) < 0)
			return tr_oom(E);
		T->gext[n++] = krange_extent(s->src[0]);
		if (s->nsrc != 2)
			break;   /* the next loop would not be the only statement of this one */
		s = s->src[1];
	}
	T->ngrid = n;
	return n ? 0 : spread(E, S, s);
}

static int
add_launch(Emit *E, EStage *S)
{
	TState *T = E->aux;
	TLaunch *L;
	int b, i;

	if (T->nl == T->capl) {
		int cap = T->capl ? 2 * T->capl : 8;
		TLaunch *n = realloc(T->l, cap * sizeof *n);

		if (!n)
			return tr_oom(E);
		T->l = n;
		T->capl = cap;
	}
	L = &T->l[T->nl];
	memset(L, 0, sizeof *L);
	snprintf(L->name, sizeof L->name, "%s_kernel", E->sname[S->st]);
	if (S->nbound) {
		for (i = 0; i < 3; i++)
			L->grid[i] = S->grid[i];
		L->ngrid = S->grid[2] > 1 ? 3 : S->grid[1] > 1 ? 2 : 1;
	} else {
		for (i = 0; i < 3; i++)
			L->grid[i] = i < T->ngrid ? T->gext[i] : 1;
		L->ngrid = T->ngrid ? T->ngrid : 1;
	}
	if (!(L->arg = malloc((E->k->nbuf ? E->k->nbuf : 1) * sizeof *L->arg)))
		return tr_oom(E);
	for (b = 0; b < E->k->nbuf; b++)
		if (S->use[b] && E->k->buf[b].scope != AS_REG)
			L->arg[L->narg++] = b;
	T->nl++;
	if (T->nar && !(L->cx = malloc(T->nar * sizeof *L->cx)))
		return tr_oom(E);
	for (i = 0; i < T->nar; i++)
		L->cx[L->ncx++] = T->ar[i];
	return 0;
}

static int
stage(Emit *E, EStage *S)
{
	TState *T = E->aux;
	const Kernel *k = E->k;
	Buf *out = E->out, b;
	int i, n = 0, rc = -1;

	T->S = S;
	T->nar = 0;
	T->wide = 0;
	for (i = 0; i < k->nbuf; i++)
		T->wide |= S->use[i] && k->buf[i].size > 2147483647;
	T->blk = NULL;
	T->stored = T->loops = 0;
	pmap_free(&T->inner);
	pmap_free(&T->grid);
	buf_init(&T->pre);
	buf_init(&b);
	if (S->grid[0] > 2147483647 || S->grid[1] > 65535 || S->grid[2] > 65535) {
		err_set(E->e, "triton: stage %s: a grid of (%lld, %lld, %lld) programs; Triton's reaches (2^31-1, "
		        "65535, 65535)", tr_stname(E, S->st), (long long)S->grid[0], (long long)S->grid[1],
		        (long long)S->grid[2]);
		goto out;
	}
	if (mark_inner(E, S, S->body, 0) < 0 || choose_grid(E, S) < 0)
		goto out;
	/* the statements first (they make the aranges), then the function around them */
	E->out = &b;
	rc = body(E, S, (UOp *const *)&S->body, 1, 1);
	E->out = out;
	if (rc < 0)
		goto out;
	rc = -1;
	emit(out, "\n\n@triton.jit\ndef %s_kernel(", E->sname[S->st]);
	for (i = 0; i < k->nbuf; i++)
		if (S->use[i] && k->buf[i].scope != AS_REG)
			emit(out, "%s%s", n++ ? ", " : "", T->pname[i]);
	for (i = 0; i < T->nar; i++)
		emit(out, "%s%s: tl.constexpr", n++ ? ", " : "", T->ar[i].block);
	emit(out, "):\n");
	emit(out, "    # %s\n", S->nbound ? "block-bound loops are program ids" : T->blk ? "blocks of the outer "
	     "tile axis are program ids" : T->ngrid ? "independent outer loops are program ids"
	     : "one program runs the stage");
	emit(out, "%s%s", T->pre.s ? T->pre.s : "", b.s ? b.s : "");
	if (add_launch(E, S) < 0)
		goto out;
	rc = b.oom || T->pre.oom ? tr_oom(E) : 0;
out:
	E->out = out;
	buf_free(&b);
	buf_free(&T->pre);
	return rc;
}

/* ---- the module ---- */

static void
shape(Buf *b, const KBuf *x)
{
	int i;

	emit(b, "%s: %s[", x->name, dtype_name(x->dtype));
	for (i = 0; i < x->ndim; i++)
		emit(b, "%s%lld", i ? ", " : "", (long long)x->shape[i]);
	emit(b, "]");
	if (strcmp(x->layout_desc, "row-major") != 0)
		emit(b, " @ %s", x->layout_desc);
}

static void
role_line(Buf *b, const Kernel *k, KRole role, const char *label)
{
	int i, n = 0;

	for (i = 0; i < k->nbuf; i++) {
		if (k->buf[i].role != role)
			continue;
		emit(b, n++ ? ", " : "  %-9s", label);
		shape(b, &k->buf[i]);
	}
	if (n)
		emit(b, "\n");
}

static int
head(Emit *E, Buf *b)
{
	TState *T = E->aux;
	const Kernel *k = E->k;
	int i;

	emit(b, "\"\"\"\nA tessel kernel as Triton (tessel_launch at the end runs its stages in order).\n");
	role_line(b, k, KB_INPUT, "inputs:");
	role_line(b, k, KB_OUTPUT, "outputs:");
	role_line(b, k, KB_TEMP, "buffers:");
	emit(b, "bufs[i] is buffer i's storage, a tensor on the device laid out by its layout; the order is");
	for (i = 0; i < k->nbuf; i++)
		emit(b, "%s%s", i ? ", " : " ", k->buf[i].name);
	emit(b, ".\nValues are close to tessel's interpreter, not equal: Triton's exp2, log2, sin and sqrt\n"
	     "are the device's and its reductions add in a tree. Compare with |got - ref| <= atol + rtol * |ref|:\n"
	     "float32 rtol 1e-4 atol 1e-5, float64 rtol 1e-9 atol 1e-12, float16 and bfloat16 rtol 1e-2\n"
	     "atol 1e-2, integers and bool exactly (docs/export.md).\n\"\"\"\n");
	emit(b, "import triton\nimport triton.language as tl\n");
	if (T->mul)
		emit(b, "\n\n@triton.jit\ndef tessel_mul(a, b):\n    return a * b\n");
	return 0;
}

static int
tail(Emit *E, Buf *b)
{
	TState *T = E->aux;
	const Kernel *k = E->k;
	int i, j;

	emit(b, "\n\ndef tessel_launch(bufs):\n    \"\"\"The stages in order, each on its grid; bufs in kernel order.\"\"\"\n");
	if (k->nbuf) {
		emit(b, "    ");
		for (i = 0; i < k->nbuf; i++)
			emit(b, "%s%s", i ? ", " : "", E->bname[i]);
		emit(b, "%s = bufs\n", k->nbuf == 1 ? "," : "");
	}
	for (i = 0; i < T->nl; i++) {
		const TLaunch *L = &T->l[i];

		emit(b, "    %s[(", L->name);
		for (j = 0; j < L->ngrid; j++)
			emit(b, "%s%lld", j ? ", " : "", (long long)L->grid[j]);
		emit(b, "%s)](", L->ngrid == 1 ? "," : "");
		for (j = 0; j < L->narg; j++)
			emit(b, "%s%s", j ? ", " : "", E->bname[L->arg[j]]);
		for (j = 0; j < L->ncx; j++)
			emit(b, "%s%s=%lld", j || L->narg ? ", " : "", L->cx[j].block, (long long)L->cx[j].pad);
		if (T->num_warps)
			emit(b, "%snum_warps=%d", L->narg || L->ncx ? ", " : "", T->num_warps);
		if (T->num_stages)
			emit(b, "%snum_stages=%d", L->narg || L->ncx || T->num_warps ? ", " : "", T->num_stages);
		emit(b, ")\n");
	}
	return 0;
}

static int
no_loop(Emit *E, EStage *S, const UOp *s, int ind)
{
	return err_set(E->e, "triton: stage %s: internal: the C walk reached the Triton dialect", tr_stname(E, S->st));
}

/* The pointer arguments, named once the walk's names are taken (EmitDialect.check runs after them). */
static int
triton_check(Emit *E)
{
	TState *T = E->aux;
	char nm[K_NAME + 24];
	int i;

	if (check(E) < 0)
		return -1;
	if (!(T->pname = calloc(E->k->nbuf ? E->k->nbuf : 1, sizeof *T->pname)))
		return tr_oom(E);
	if (!(T->rname = calloc(E->k->nbuf ? E->k->nbuf : 1, sizeof *T->rname)))
		return tr_oom(E);
	for (i = 0; i < E->k->nbuf; i++) {
		snprintf(nm, sizeof nm, "%s_ptr", E->bname[i]);
		if (!(T->pname[i] = emit_fresh(E, nm)))
			return tr_oom(E);
		if (E->k->buf[i].scope == AS_REG && !(T->rname[i] = emit_fresh(E, E->bname[i])))
			return tr_oom(E);
	}
	for (i = 0; i < E->k->nstage; i++) {
		snprintf(nm, sizeof nm, "%s_kernel", E->sname[i]);
		if (!emit_fresh(E, nm))
			return tr_oom(E);
	}
	return 0;
}

static const EmitDialect emit_triton = {
	"triton", D_TRITON, reserved, tr_ttype, triton_check, stage, head, tail, no_loop, no_loop, 0, NULL, NULL,
	NULL, 0, NULL, 0, NULL, NULL, NULL, 0
};

int
triton_source(Buf *b, const Kernel *k, Err *e)
{
	return triton_source_opts(b, k, NULL, e);
}

int
triton_source_opts(Buf *b, const Kernel *k, const BSourceOpts *o, Err *e)
{
	TState T;
	EmitInfo info;
	int i, rc;

	memset(&T, 0, sizeof T);
	if (o) {
		T.num_warps = o->num_warps;
		T.num_stages = o->num_stages;
	}
	memset(&info, 0, sizeof info);
	info.aux = &T;
	rc = emit_kernel(b, k, &emit_triton, &info, e);
	for (i = 0; i < T.nl; i++) {
		free(T.l[i].arg);
		free(T.l[i].cx);
	}
	free(T.l);
	free(T.ar);
	free(T.pname);
	free(T.rname);
	pmap_free(&T.inner);
	pmap_free(&T.grid);
	pmap_free(&T.hoist);
	pmap_free(&T.pure);
	return rc;
}
