/* dist.c - distributed programs: tensors with Axe layouts over a device axis, kernel launches and collectives, the plan and the CPU simulation. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "../../layout/lower.h"

enum { MOVE_THREADS = 256 };

DistProgram *
dist_new(int ndev, const char *axis, Err *e)
{
	DistProgram *p;

	if (ndev < 1 || ndev > 4096) {
		err_set(e, "dist.new: %d devices; 1 to 4096 are supported", ndev);
		return NULL;
	}
	if (!axis || axe_axis_kind(axis) != AXE_DEVICE || strlen(axis) >= AXE_NAME) {
		err_set(e, "dist.new: %s is not a device axis (gpuid, gpuid_x, device, node ...)", axis ? axis : "(null)");
		return NULL;
	}
	if (!(p = calloc(1, sizeof *p))) {
		err_set(e, "dist.new: out of memory");
		return NULL;
	}
	p->ndev = ndev;
	snprintf(p->axis, sizeof p->axis, "%s", axis);
	return p;
}

static void
step_free(DistStep *s, int ndev)
{
	int r;

	kernel_free(s->k);
	free(s->bind);
	free(s->at);
	for (r = 0; r < ndev; r++) {
		if (s->pack)
			kernel_free(s->pack[r]);
		if (s->unpack)
			kernel_free(s->unpack[r]);
	}
	free(s->pack);
	free(s->unpack);
}

void
dist_free(DistProgram *p)
{
	int i;

	if (!p)
		return;
	for (i = 0; i < p->ns; i++)
		step_free(&p->s[i], p->ndev);
	free(p->s);
	free(p->t);
	free(p);
}

int
dist_find(const DistProgram *p, const char *name)
{
	int i;

	for (i = 0; i < p->nt; i++)
		if (strcmp(p->t[i].name, name) == 0)
			return i;
	return -1;
}

static void
shape_str(char *out, size_t n, const AxeShape *sh)
{
	Buf b;

	buf_init(&b);
	axe_shape_print(&b, sh);
	snprintf(out, n, "%s", b.s ? b.s : "");
	buf_free(&b);
}

int
dist_tensor(DistProgram *p, const char *name, DType t, const AxeShape *sh, const AxeLayout *l, int partial,
            Err *e)
{
	DistTensor x;
	Err tmp;

	if (!name || !uop_valid_name(name) || strlen(name) > K_NAME - 9)
		return err_set(e, "dist.tensor: %s is not a name (letters, digits and _, at most %d)", name ? name : "(null)",
		               K_NAME - 9);
	if (dist_find(p, name) >= 0)
		return err_set(e, "dist.tensor: %s is taken", name);
	memset(&x, 0, sizeof x);
	if (axe_dist(l, sh, p->axis, p->ndev, &x.dist, &tmp) < 0)
		return err_set(e, "dist.tensor %s: %s", name, tmp.msg + (strncmp(tmp.msg, "dist: ", 6) ? 0 : 6));
	if (partial && x.dist.kind != AXE_REPLICATED)
		return err_set(e, "dist.tensor %s: a partial tensor holds a summand of the whole on every device, so its "
		               "layout replicates over %s; this one is %s", name, p->axis, axe_dist_kind_name(x.dist.kind));
	if (p->nt == p->capt) {
		int cap = p->capt ? 2 * p->capt : 8;
		DistTensor *nt = realloc(p->t, (size_t)cap * sizeof *nt);

		if (!nt)
			return err_set(e, "dist.tensor: out of memory");
		p->t = nt;
		p->capt = cap;
	}
	snprintf(x.name, sizeof x.name, "%s", name);
	x.dtype = t;
	x.shape = *sh;
	x.layout = *l;
	x.partial = partial;
	x.producer = -1;
	p->t[p->nt] = x;
	return p->nt++;
}

static DistStep *
new_step(DistProgram *p, Err *e)
{
	if (p->ns == p->caps) {
		int cap = p->caps ? 2 * p->caps : 8;
		DistStep *ns = realloc(p->s, (size_t)cap * sizeof *ns);

		if (!ns) {
			err_set(e, "dist: out of memory");
			return NULL;
		}
		p->s = ns;
		p->caps = cap;
	}
	memset(&p->s[p->ns], 0, sizeof p->s[p->ns]);
	return &p->s[p->ns];
}

static int64_t
numel(const KBuf *b)
{
	int64_t n = 1;
	int i;

	for (i = 0; i < b->ndim; i++)
		n *= b->shape[i];
	return n;
}

int
dist_launch(DistProgram *p, const Kernel *k, const char *const *bind, Err *e)
{
	return dist_launch_at(p, k, bind, NULL, e);
}

int
dist_launch_at(DistProgram *p, const Kernel *k, const char *const *bind, const int64_t *at, Err *e)
{
	DistStep *s;
	int *tb, i, ranged = 0;

	if (!k || k->nstage == 0)
		return err_set(e, "dist.launch: the kernel has no stages");
	if (!(tb = malloc((size_t)(k->nbuf ? k->nbuf : 1) * sizeof *tb)))
		return err_set(e, "dist.launch: out of memory");
	for (i = 0; i < k->nbuf; i++) {
		const KBuf *b = &k->buf[i];
		const DistTensor *t;
		int j;

		tb[i] = -1;
		if (!bind || !bind[i]) {
			/* a global buffer named as a tensor binds to it */
			if (b->scope != AS_GLOBAL || b->role == KB_TEMP)
				continue;
			if ((j = dist_find(p, b->name)) < 0) {
				free(tb);
				return err_set(e, "dist.launch: kernel buffer %s (%s) is bound to no tensor, and no tensor has its "
				               "name", b->name, krole_name(b->role));
			}
		} else if (b->scope != AS_GLOBAL || b->role == KB_TEMP) {
			free(tb);
			return err_set(e, "dist.launch: kernel buffer %s is a %s %s; only global inputs and outputs are bound "
			               "to tensors", b->name, kscope_name(b->scope), krole_name(b->role));
		} else if ((j = dist_find(p, bind[i])) < 0) {
			free(tb);
			return err_set(e, "dist.launch: no tensor %s (for kernel buffer %s)", bind[i], b->name);
		}
		t = &p->t[j];
		if (at && at[i] >= 0) {
			ranged = 1;
			if (t->dtype != b->dtype || at[i] + numel(b) > t->dist.count) {
				free(tb);
				return err_set(e, "dist.launch: kernel buffer %s holds %lld %s from element %lld; tensor %s stores "
				               "%lld %s on each device", b->name, (long long)numel(b), dtype_name(b->dtype),
				               (long long)at[i], t->name, (long long)t->dist.count, dtype_name(t->dtype));
			}
		} else if (t->dtype != b->dtype || numel(b) != t->dist.count) {
			char sh[96];

			shape_str(sh, sizeof sh, &t->dist.local);
			free(tb);
			return err_set(e, "dist.launch: kernel buffer %s holds %lld %s; tensor %s stores %lld %s on each device "
			               "(local shape %s)", b->name, (long long)numel(b), dtype_name(b->dtype), t->name,
			               (long long)t->dist.count, dtype_name(t->dtype), sh);
		}
		if (strcmp(b->layout_desc, "row-major") != 0) {
			free(tb);
			return err_set(e, "dist.launch: kernel buffer %s has layout %s; a kernel sees a tensor's local storage "
			               "row-major (the tensor's Axe layout places it)", b->name, b->layout_desc);
		}
		tb[i] = j;
	}
	for (i = 0; i < k->nbuf; i++) {
		int j;

		for (j = 0; j < i; j++)
			if (!ranged && tb[i] >= 0 && tb[i] == tb[j] &&
			    (k->buf[i].role == KB_OUTPUT || k->buf[j].role == KB_OUTPUT)) {
				err_set(e, "dist.launch: kernel buffers %s and %s are both bound to %s; one of them writes it",
				        k->buf[j].name, k->buf[i].name, p->t[tb[i]].name);
				free(tb);
				return -1;
			}
	}
	if (!(s = new_step(p, e))) {
		free(tb);
		return -1;
	}
	s->kind = DIST_LAUNCH;
	s->bind = tb;
	s->src = s->dst = -1;
	snprintf(s->name, sizeof s->name, "%s", k->stage[0].name);
	if (ranged) {
		if (!(s->at = malloc((size_t)k->nbuf * sizeof *s->at))) {
			free(tb);
			return err_set(e, "dist.launch: out of memory");
		}
		for (i = 0; i < k->nbuf; i++)
			s->at[i] = at[i] >= 0 ? at[i] : 0;
	}
	if (!(s->k = kernel_clone(k, e)) || dist_flow_admit(p, "dist.launch", e) < 0) {
		step_free(s, p->ndev);
		return -1;
	}
	return p->ns++;
}

/* ---- the pack and unpack kernels ---- */

/* x's digits over d's extents dotted with strides s: the expression. */
static UOp *
map_expr(UCtx *c, const AxeDist *d, const int64_t *s, UOp *x, Err *e)
{
	UOp *dig[AXE_ITERS];

	if (lower_split(c, x, d->e, d->n, 0, 0, dig, e) < 0)
		return NULL;
	return lower_dot(c, dig, s, d->n, 0);
}

/*
** A kernel moving every logical element x: out[dmap(x)] = in[smap(x)], on
** device r; with a slice only where dst's device of x is r. One thread an
** element, MOVE_THREADS a block.
*/
static Kernel *
move_kernel(const char *stage, const char *in, int64_t nin, const AxeDist *sd, const int64_t *ss, const char *out,
            int64_t nout, const AxeDist *dd, const int64_t *ds, DType t, int slice, int64_t r, Err *e)
{
	Kernel *k = kernel_new();
	int64_t n = sd->size, T = n < MOVE_THREADS ? n : MOVE_THREADS, nb = (n + T - 1) / T;
	UOp *bx, *tx, *x, *si, *di, *gate = NULL, *ld, *st, *body, *inner;
	int bi, bo;

	if (!k) {
		err_set(e, "dist: out of memory");
		return NULL;
	}
	if ((bi = kernel_add_buffer(k, in, t, AS_GLOBAL, KB_INPUT, &nin, 1, e)) < 0 ||
	    (bo = kernel_add_buffer(k, out, t, AS_GLOBAL, KB_OUTPUT, &nout, 1, e)) < 0)
		goto fail;
	bx = kernel_var(k, "bx", nb);
	tx = kernel_var(k, "tx", T);
	x = uop_add(k->c, uop_mul(k->c, bx, uop_int(k->c, T)), tx);
	if (!(si = map_expr(k->c, sd, ss, x, e)) || !(di = map_expr(k->c, dd, ds, x, e)))
		goto fail;
	if (n % T)
		gate = uop_alu(k->c, OP_CMPLT, x, uop_int(k->c, n));
	if (slice) {
		UOp *g = map_expr(k->c, dd, dd->g, x, e), *own;

		if (!g)
			goto fail;
		own = uop_alu(k->c, OP_CMPEQ, g, uop_int(k->c, r));
		gate = gate ? uop_alu(k->c, OP_AND, gate, own) : own;
	}
	if (uop_simplify(k->c, si, &si, e) < 0 || uop_simplify(k->c, di, &di, e) < 0 ||
	    (gate && uop_simplify(k->c, gate, &gate, e) < 0))
		goto fail;
	ld = kernel_load(k, kernel_index(k, bi, &si, 1), NULL);
	st = kernel_store(k, kernel_index(k, bo, &di, 1), ld, NULL);
	inner = gate ? kernel_if(k, gate, &st, 1) : st;
	body = kernel_loop(k, kernel_range(k, tx, AX_LOCAL, HW_THREAD_X), &inner, 1);
	body = kernel_loop(k, kernel_range(k, bx, AX_GLOBAL, HW_BLOCK_X), &body, 1);
	if (!body || kernel_add_stage(k, stage, body, NULL, e) < 0 || kernel_check(k, NULL, e) < 0)
		goto fail;
	return k;
fail:
	kernel_free(k);
	return NULL;
}

static int
build_moves(DistProgram *p, DistStep *s, Err *e)
{
	const DistTensor *src = &p->t[s->src], *dst = &p->t[s->dst];
	const AxeDist *sd = &src->dist, *dd = &dst->dist;
	int64_t sf[AXE_ITERS], df[AXE_ITERS];
	char in[K_NAME + 8], out[K_NAME + 8], stage[K_NAME + 8];   /* names are at most K_NAME - 9 */
	int r;

	axe_dist_flat_strides(sd, sf);
	axe_dist_flat_strides(dd, df);
	if (!(s->pack = calloc((size_t)p->ndev, sizeof *s->pack)) || !(s->unpack = calloc((size_t)p->ndev, sizeof *s->unpack)))
		return err_set(e, "dist: out of memory");
	for (r = 0; r < p->ndev; r++) {
		if (s->r.pack) {
			snprintf(out, sizeof out, "%s_send", dst->name);
			snprintf(stage, sizeof stage, "pack_%s", dst->name);
			if (!(s->pack[r] = move_kernel(stage, src->name, sd->count, sd, sd->m, out, sd->size, dd, df,
			                               src->dtype, 0, r, e)))
				return -1;
		}
		if (s->r.unpack && !s->r.copy) {
			const int64_t *ss = s->r.coll == AXE_COLL_ALLGATHER ? sf : sd->m;
			int64_t nin = s->r.coll == AXE_COLL_NONE ? sd->count : sd->size;

			/* on the root only, where only the root holds the result */
			if (dd->kind == AXE_SINGLE && r != dd->root)
				continue;
			if (s->r.coll == AXE_COLL_NONE)
				snprintf(in, sizeof in, "%s", src->name);
			else
				snprintf(in, sizeof in, "%s_recv", src->name);
			snprintf(stage, sizeof stage, "unpack_%s", dst->name);
			if (!(s->unpack[r] = move_kernel(stage, in, nin, sd, ss, dst->name, dd->count, dd, dd->m, src->dtype,
			                                 s->r.slice && dd->kind == AXE_SHARDED, r, e)))
				return -1;
		}
	}
	return 0;
}

int
dist_redistribute(DistProgram *p, const char *src, const char *dst, Err *e)
{
	return dist_redistribute_opts(p, src, dst, NULL, e);
}

const char *
dist_via_name(int via)
{
	return via == DIST_VIA_COPY ? "copy" : via == DIST_VIA_LOAD ? "load" : "nccl";
}

int
dist_redistribute_opts(DistProgram *p, const char *src, const char *dst, const DistRedistOpts *o, Err *e)
{
	int a = dist_find(p, src ? src : ""), b = dist_find(p, dst ? dst : "");
	int part = o ? o->part : 0, parts = o ? o->parts : 0, via = o ? (int)o->via : DIST_VIA_NCCL;
	DistTensor *ta, *tb;
	DistStep *s;
	AxeRedist r;
	Err tmp;

	if (a < 0 || b < 0)
		return err_set(e, "redistribute: no tensor %s", a < 0 ? (src ? src : "(null)") : (dst ? dst : "(null)"));
	ta = &p->t[a];
	tb = &p->t[b];
	if (a == b)
		return err_set(e, "redistribute: %s into itself", src);
	if (ta->dtype != tb->dtype || ta->dist.size != tb->dist.size || ta->shape.n != tb->shape.n ||
	    memcmp(ta->shape.v, tb->shape.v, (size_t)ta->shape.n * sizeof ta->shape.v[0]) != 0) {
		char s1[96], s2[96];

		shape_str(s1, sizeof s1, &ta->shape);
		shape_str(s2, sizeof s2, &tb->shape);
		return err_set(e, "redistribute: %s is %s%s and %s is %s%s; they must agree", src, dtype_name(ta->dtype), s1,
		               dst, dtype_name(tb->dtype), s2);
	}
	if (tb->partial)
		return err_set(e, "redistribute: %s is partial; a redistribution's result holds values", dst);
	if (ta->producer < 0 && ta->partial)
		return err_set(e, "redistribute: %s is partial and written by no step", src);
	if (parts < 0 || parts > 65536 || (parts && (part < 0 || part >= parts)))
		return err_set(e, "redistribute %s -> %s: part %d of %d; parts are 1 to 65536, a part 1 to parts", src, dst,
		               part + 1, parts);
	if (via < DIST_VIA_NCCL || via > DIST_VIA_LOAD || (o && (o->blocks < 0 || o->blocks > 1024)))
		return err_set(e, "redistribute %s -> %s: via %d, %d blocks; via is NCCL, COPY or LOAD, blocks 0 to 1024", src,
		               dst, via, o ? o->blocks : 0);
	if (via != DIST_VIA_NCCL && !parts)
		part = 0, parts = 1;
	if (axe_redistribute(&ta->dist, ta->partial, &tb->dist, &r, &tmp) < 0)
		return err_set(e, "redistribute %s -> %s: %s", src, dst, tmp.msg + (strncmp(tmp.msg, "redistribute: ", 14) ? 0 : 14));
	if (!(s = new_step(p, e)))
		return -1;
	s->kind = DIST_REDIST;
	s->src = a;
	s->dst = b;
	s->r = r;
	s->part = part;
	s->parts = parts;
	s->via = via;
	s->blocks = via == DIST_VIA_LOAD ? (o->blocks ? o->blocks : 16) : 0;
	snprintf(s->name, sizeof s->name, "%s", axe_coll_name(r.coll));
	if (via != DIST_VIA_NCCL && r.coll != AXE_COLL_REDUCE_SCATTER && r.coll != AXE_COLL_ALLGATHER) {
		step_free(s, p->ndev);
		return err_set(e, "redistribute %s -> %s: via %s does a reduce_scatter or an allgather; the layouts call for %s",
		               src, dst, dist_via_name(via), r.coll == AXE_COLL_NONE ? "no collective" : axe_coll_name(r.coll));
	}
	if (parts) {
		/* NCCL on the tensors' own storage: the layouts put each part in its order (checked) */
		s->r.pack = s->r.unpack = s->r.slice = s->r.copy = 0;
		if (build_moves(p, s, e) < 0 || dist_part_check(p, s, e) < 0 || dist_flow_admit(p, "redistribute", e) < 0) {
			step_free(s, p->ndev);
			return -1;
		}
		if (via == DIST_VIA_COPY && r.coll == AXE_COLL_REDUCE_SCATTER) {
			/* the pair's slots in the peer buffer: a device's count from every device */
			int i;

			s->peer_at = -1;
			for (i = 0; i < p->ns && s->peer_at < 0; i++)
				if (p->s[i].via == DIST_VIA_COPY && p->s[i].src == a && p->s[i].dst == b)
					s->peer_at = p->s[i].peer_at;
			if (s->peer_at < 0) {
				s->peer_at = p->peer_bytes;
				p->peer_bytes += (int64_t)p->ndev * tb->dist.count * dtype_bytes(tb->dtype);
			}
		}
		return p->ns++;
	}
	/* staging: NCCL's buffer in rank-major order when it is not a tensor's own storage */
	if (r.pack || (r.unpack && r.coll != AXE_COLL_NONE))
		s->staging = ta->dist.size;
	if (build_moves(p, s, e) < 0 || dist_flow_admit(p, "redistribute", e) < 0) {
		step_free(s, p->ndev);
		return -1;
	}
	return p->ns++;
}

/* dist_redistribute, where the layouts must call for collective want (the tensor spec's verbs). */
int
dist_collective(DistProgram *p, AxeColl want, const char *src, const char *dst, Err *e)
{
	int a = dist_find(p, src ? src : ""), b = dist_find(p, dst ? dst : "");
	AxeRedist r;
	Err tmp;

	if (a >= 0 && b >= 0 && axe_redistribute(&p->t[a].dist, p->t[a].partial, &p->t[b].dist, &r, &tmp) == 0 &&
	    r.coll != want) {
		char why[sizeof r.why];

		snprintf(why, sizeof why, "%s", r.why);
		return err_set(e, "%s: %s -> %s is %s by their layouts, not %s: %s", axe_coll_name(want), src, dst,
		               r.coll == AXE_COLL_NONE ? "no collective" : axe_coll_name(r.coll), axe_coll_name(want), why);
	}
	return dist_redistribute(p, src, dst, e);
}

/* ---- the plan ---- */

int64_t
dist_step_bytes(const DistProgram *p, int i)
{
	const DistStep *s = &p->s[i];
	const DistTensor *t;

	if (s->kind != DIST_REDIST || s->r.coll == AXE_COLL_NONE)
		return 0;
	t = &p->t[s->src];
	/* what each device puts in: its whole summand or its shard (a part of it) */
	return t->dist.count / (s->parts ? s->parts : 1) * dtype_bytes(t->dtype);
}

static void
layout_str(char *out, size_t n, const AxeLayout *l)
{
	Buf b;

	buf_init(&b);
	axe_print(&b, l);
	snprintf(out, n, "%s", b.s ? b.s : "");
	buf_free(&b);
}

static void
human_bytes(char *out, size_t n, int64_t v)
{
	if (v >= (int64_t)1 << 30)
		snprintf(out, n, "%.2f GiB", (double)v / (double)((int64_t)1 << 30));
	else if (v >= 1 << 20)
		snprintf(out, n, "%.2f MiB", (double)v / (double)(1 << 20));
	else if (v >= 1 << 10)
		snprintf(out, n, "%.2f KiB", (double)v / 1024.0);
	else
		snprintf(out, n, "%lld B", (long long)v);
}

/* text in lines of at most width columns, each after indent, broken at spaces */
static void
wrap(Buf *b, const char *text, const char *indent, size_t width)
{
	const char *s = text;
	size_t room = width - strlen(indent);

	while (*s) {
		size_t n = strlen(s), cut = n;

		if (n > room) {
			for (cut = room; cut > 0 && s[cut] != ' '; cut--)
				;
			if (cut == 0)
				cut = room;
		}
		emit(b, "%s", indent);
		emitn(b, s, cut);
		emit(b, "\n");
		s += cut;
		while (*s == ' ')
			s++;
	}
}

void
dist_plan(Buf *b, const DistProgram *p)
{
	int i, j;

	emit(b, "plan: %d device%s on %s (NCCL, one rank a device)\n", p->ndev, p->ndev == 1 ? "" : "s", p->axis);
	emit(b, "tensors:\n");
	for (i = 0; i < p->nt; i++) {
		const DistTensor *t = &p->t[i];
		char sh[96], loc[96], lay[512], how[64];

		shape_str(sh, sizeof sh, &t->shape);
		shape_str(loc, sizeof loc, &t->dist.local);
		layout_str(lay, sizeof lay, &t->layout);
		if (t->dist.kind == AXE_SINGLE)
			snprintf(how, sizeof how, "on device %lld", (long long)t->dist.root);
		else if (t->dist.shard >= 0)
			snprintf(how, sizeof how, "sharded on dim %d", t->dist.shard);
		else
			snprintf(how, sizeof how, "%s", axe_dist_kind_name(t->dist.kind));
		emit(b, "  %-10s %s%s %s%s, local %s (%lld a device)%s\n    %s\n", t->name, dtype_name(t->dtype), sh, how,
		     t->partial ? ", partial sums" : "", t->dist.shard >= -1 || t->dist.kind == AXE_SINGLE ? loc : "-",
		     (long long)t->dist.count, t->producer < 0 ? ", input" : "", lay);
	}
	emit(b, "steps:\n");
	for (i = 0; i < p->ns; i++) {
		const DistStep *s = &p->s[i];

		if (s->kind == DIST_LAUNCH) {
			int w, first;

			emit(b, "  %d. launch %s (%d stage%s) on every device:", i + 1, s->name, s->k->nstage,
			     s->k->nstage == 1 ? "" : "s");
			for (w = 0; w < 2; w++) {
				first = 1;
				emit(b, "%s", w ? " ->" : "");
				for (j = 0; j < s->k->nbuf; j++) {
					const char *kn = s->k->buf[j].name, *tn;

					if (s->bind[j] < 0 || (s->k->buf[j].role == KB_OUTPUT) != w)
						continue;
					tn = p->t[s->bind[j]].name;
					emit(b, "%s %s%s%s", first ? "" : ",", strcmp(kn, tn) ? kn : "", strcmp(kn, tn) ? "=" : "", tn);
					if (s->at)
						emit(b, "[%lld:%lld]", (long long)s->at[j], (long long)(s->at[j] + numel(&s->k->buf[j])));
					first = 0;
				}
			}
			if (s->wait[0] >= 0)
				emit(b, "; after step %d", s->wait[0] + 1);
			if (s->wait[1] >= 0)
				emit(b, " and %d", s->wait[1] + 1);
			emit(b, "\n");
		} else {
			char by[32];
			int packs = 0, unpacks = 0, r;

			for (r = 0; r < p->ndev; r++)
				packs += s->pack[r] != NULL, unpacks += s->unpack[r] != NULL;
			human_bytes(by, sizeof by, dist_step_bytes(p, i));
			emit(b, "  %d. %s -> %s: %s", i + 1, p->t[s->src].name, p->t[s->dst].name, axe_coll_name(s->r.coll));
			if (s->parts) {
				DistRange rg[2];

				dist_step_ranges(p, i, rg, 2);
				emit(b, " part %d of %d (%s[%lld:%lld] -> %s[%lld:%lld])", s->part + 1, s->parts, p->t[s->src].name,
				     (long long)rg[0].lo, (long long)rg[0].hi, p->t[s->dst].name, (long long)rg[1].lo, (long long)rg[1].hi);
			}
			if (s->via == DIST_VIA_COPY)
				emit(b, " on the copy engines");
			else if (s->via == DIST_VIA_LOAD)
				emit(b, " by loads from the peers (%d blocks)", s->blocks);
			if (s->r.coll == AXE_COLL_BROADCAST || s->r.coll == AXE_COLL_REDUCE)
				emit(b, " (root %lld)", (long long)s->r.root);
			if (s->r.coll != AXE_COLL_NONE)
				emit(b, ", %s in a device", by);
			if (packs)
				emit(b, "; pack kernel before");
			if (unpacks)
				emit(b, "; %s kernel after", s->r.slice ? "slice" : "unpack");
			if (s->r.copy)
				emit(b, "; copy");
			if (s->wait[0] >= 0)
				emit(b, "; after step %d", s->wait[0] + 1);
			if (s->wait[1] >= 0)
				emit(b, " and %d", s->wait[1] + 1);
			emit(b, "\n");
			if (!s->parts || s->part == 0)
				wrap(b, !s->parts ? s->r.why
				     : s->via == DIST_VIA_COPY && s->r.coll == AXE_COLL_REDUCE_SCATTER
				     ? "while the kernels go on: the copy engines move each device's rows to their owner, which adds "
				       "them up (a sum kernel); the layouts put each part in rank-major order"
				     : s->via == DIST_VIA_COPY ? "while the kernels go on: the copy engines move each device's part to "
				                                 "every device; the layouts put each part in rank-major order"
				     : s->via == DIST_VIA_LOAD && s->r.coll == AXE_COLL_REDUCE_SCATTER
				     ? "while the kernels go on: a kernel on a few SMs loads each device's rows from every device and "
				       "adds them; the layouts put each part in rank-major order"
				     : s->via == DIST_VIA_LOAD ? "while the kernels go on: a kernel on a few SMs loads each device's "
				                                 "part from every device; the layouts put each part in rank-major order"
				     : "while the kernels go on: the layouts put each part in NCCL's rank-major order", "     ", 96);
		}
	}
}

/* ---- simulation ---- */

void
dist_state_free(DistState *st)
{
	int64_t i;

	if (!st || !st->store)
		return;
	for (i = 0; i < (int64_t)st->ndev * st->nt; i++)
		tbuf_free(&st->store[i]);
	free(st->store);
	st->store = NULL;
}

int
dist_scatter(const DistProgram *p, const TBuf *logical, DistState *st, Err *e)
{
	int t, r;

	st->ndev = p->ndev;
	st->nt = p->nt;
	if (!(st->store = calloc((size_t)p->ndev * (size_t)(p->nt ? p->nt : 1), sizeof *st->store)))
		return err_set(e, "dist: out of memory");
	for (t = 0; t < p->nt; t++) {
		const DistTensor *x = &p->t[t];
		const TBuf *in = logical ? &logical[t] : NULL;
		int64_t i;

		if (x->producer >= 0)
			continue;
		if (in && in->data && (in->dtype != x->dtype || in->numel != x->dist.size))
			return err_set(e, "dist: input %s is %lld %s; the tensor has %lld %s", x->name, (long long)in->numel,
			               dtype_name(in->dtype), (long long)x->dist.size, dtype_name(x->dtype));
		for (r = 0; r < p->ndev; r++)
			if (dist_alloc_buf(dist_store(st, r, t), x->dtype, x->dist.count, e) < 0)
				return -1;
		for (i = 0; i < x->dist.size; i++) {
			double v;
			int64_t m = axe_dist_m(&x->dist, i);

			if (in && in->data)
				v = tbuf_get(in, i);
			else {
				uint64_t u = tensor_threefry((uint64_t)i, (uint64_t)t + 1);
				v = dtype_is_float(x->dtype) ? (double)(u >> 11) / 9007199254740992.0 : (double)(u % 7);
			}
			if (x->dist.kind == AXE_SHARDED)
				dist_put(dist_store(st, (int)axe_dist_g(&x->dist, i), t), m, v);
			else if (x->dist.kind == AXE_SINGLE)
				dist_put(dist_store(st, (int)x->dist.root, t), m, v);
			else
				for (r = 0; r < p->ndev; r++)
					dist_put(dist_store(st, r, t), m, v);
		}
	}
	return 0;
}

/* Run a 2-buffer move kernel (pack, unpack) on in; the result into *out. */
static int
run_move(const Kernel *k, const KRunOpts *o, const TBuf *in, TBuf *out, Err *e)
{
	TBuf b[2];

	memset(b, 0, sizeof b);
	b[0] = *in;
	if (kernel_run(k, o, b, NULL, e) < 0) {
		tbuf_free(&b[1]);
		return -1;
	}
	tbuf_free(out);
	*out = b[1];
	return 0;
}

/* Run step s's kernel on device r: bound inputs are views of the storage (from s->at), bound outputs copied in. */
static int
launch_sim(const DistProgram *p, const DistStep *s, const KRunOpts *o, DistState *st, int r, Err *e)
{
	const Kernel *k = s->k;
	TBuf *b = calloc((size_t)(k->nbuf ? k->nbuf : 1), sizeof *b);
	int i, rc;

	if (!b)
		return err_set(e, "dist: out of memory");
	for (i = 0; i < k->nbuf; i++)
		if (k->buf[i].role == KB_INPUT && s->bind[i] >= 0) {
			const TBuf *src = dist_store(st, r, s->bind[i]);
			int64_t at = s->at ? s->at[i] : 0;

			b[i] = *src;
			if (src->data)
				b[i].data = (char *)src->data + at * dtype_bytes(src->dtype);
			b[i].numel = numel(&k->buf[i]);
			b[i].ndim = k->buf[i].ndim;
			memcpy(b[i].shape, k->buf[i].shape, sizeof b[i].shape);
		}
	rc = kernel_run(k, o, b, NULL, e);
	for (i = 0; i < k->nbuf; i++) {
		TBuf *d;

		if (k->buf[i].role == KB_INPUT && s->bind[i] >= 0)
			continue;   /* the store's own */
		if (rc == 0 && k->buf[i].role == KB_OUTPUT && s->bind[i] >= 0) {
			d = dist_store(st, r, s->bind[i]);
			if (!s->at) {
				tbuf_free(d);
				*d = b[i];
				d->ndim = 1;
				d->shape[0] = d->numel;
				continue;
			}
			if (!d->data && dist_alloc_buf(d, b[i].dtype, p->t[s->bind[i]].dist.count, e) < 0)
				rc = -1;
			else
				memcpy((char *)d->data + s->at[i] * dtype_bytes(d->dtype), b[i].data,
				       (size_t)b[i].numel * (size_t)dtype_bytes(d->dtype));
		}
		tbuf_free(&b[i]);
	}
	free(b);
	if (rc < 0) {
		char msg[sizeof e->msg];

		snprintf(msg, sizeof msg, "%s", e ? e->msg : "");
		return err_set(e, "dist: step %s on device %d: %s", s->name, r, msg);
	}
	return 0;
}

/* NCCL's collectives on the staging buffers buf[r] (in place), sums in double rounded once. */
static int
collective(const DistProgram *p, const DistStep *s, TBuf *buf, TBuf *res, Err *e)
{
	const DistTensor *src = &p->t[s->src];
	int64_t n = src->dist.size, cnt = p->t[s->dst].dist.count, i;
	int r, q, nd = p->ndev;

	for (r = 0; r < nd; r++)
		if (dist_alloc_buf(&res[r], src->dtype, s->r.coll == AXE_COLL_REDUCE_SCATTER ? cnt : n, e) < 0)
			return -1;
	switch (s->r.coll) {
	case AXE_COLL_ALLGATHER:
		for (r = 0; r < nd; r++)
			for (q = 0; q < nd; q++)
				for (i = 0; i < buf[q].numel; i++)
					dist_put(&res[r], q * buf[q].numel + i, tbuf_get(&buf[q], i));
		break;
	case AXE_COLL_REDUCE_SCATTER:
		for (r = 0; r < nd; r++)
			for (i = 0; i < cnt; i++) {
				double v = 0;

				for (q = 0; q < nd; q++)
					v += tbuf_get(&buf[q], r * cnt + i);
				dist_put(&res[r], i, v);
			}
		break;
	case AXE_COLL_ALLREDUCE:
	case AXE_COLL_REDUCE:
		for (i = 0; i < n; i++) {
			double v = 0;

			for (q = 0; q < nd; q++)
				v += tbuf_get(&buf[q], i);
			for (r = 0; r < nd; r++)
				if (s->r.coll == AXE_COLL_ALLREDUCE || r == s->r.root)
					dist_put(&res[r], i, v);
		}
		break;
	case AXE_COLL_BROADCAST:
		for (r = 0; r < nd; r++)
			memcpy(res[r].data, buf[s->r.root].data, (size_t)n * (size_t)dtype_bytes(src->dtype));
		break;
	default:
		return err_set(e, "dist: no collective");
	}
	return 0;
}

static int
redist_sim(const DistProgram *p, const DistStep *s, const KRunOpts *o, DistState *st, Err *e)
{
	const DistTensor *src = &p->t[s->src], *dst = &p->t[s->dst];
	int nd = p->ndev, r, rc = -1;
	TBuf *send = calloc((size_t)nd, sizeof *send), *recv = calloc((size_t)nd, sizeof *recv);

	if (!send || !recv) {
		free(send);
		free(recv);
		return err_set(e, "dist: out of memory");
	}
	/* what each device puts in */
	for (r = 0; r < nd; r++) {
		if (s->pack[r]) {
			if (run_move(s->pack[r], o, dist_store(st, r, s->src), &send[r], e) < 0)
				goto done;
		} else if (dist_alloc_buf(&send[r], src->dtype, src->dist.count, e) < 0) {
			goto done;
		} else if (dist_store(st, r, s->src)->data) {
			memcpy(send[r].data, dist_store(st, r, s->src)->data, (size_t)src->dist.count * (size_t)dtype_bytes(src->dtype));
		}
	}
	if (s->r.coll != AXE_COLL_NONE) {
		if (collective(p, s, send, recv, e) < 0)
			goto done;
	} else {
		for (r = 0; r < nd; r++) {
			recv[r] = send[r];
			memset(&send[r], 0, sizeof send[r]);
		}
	}
	for (r = 0; r < nd; r++) {
		TBuf *d = dist_store(st, r, s->dst);

		if (s->unpack[r]) {
			if (run_move(s->unpack[r], o, &recv[r], d, e) < 0)
				goto done;
		} else if (dst->dist.kind != AXE_SINGLE || r == dst->dist.root) {
			/* the collective's result is the storage, or a copy of the source's */
			if (dist_alloc_buf(d, dst->dtype, dst->dist.count, e) < 0)
				goto done;
			memcpy(d->data, recv[r].data, (size_t)dst->dist.count * (size_t)dtype_bytes(dst->dtype));
		} else if (dist_alloc_buf(d, dst->dtype, dst->dist.count, e) < 0) {
			goto done;
		}
	}
	rc = 0;
done:
	for (r = 0; r < nd; r++) {
		tbuf_free(&send[r]);
		tbuf_free(&recv[r]);
	}
	free(send);
	free(recv);
	return rc;
}

static int
run_step(const DistProgram *p, int i, const KRunOpts *o, DistState *st, Err *e)
{
	const DistStep *s = &p->s[i];
	int r;

	if (s->kind == DIST_REDIST)
		return s->parts ? dist_part_sim(p, s, st, e) : redist_sim(p, s, o, st, e);
	for (r = 0; r < p->ndev; r++)
		if (launch_sim(p, s, o, st, r, e) < 0)
			return -1;
	return 0;
}

int
dist_simulate(const DistProgram *p, const KRunOpts *o, DistState *st, Err *e)
{
	return dist_simulate_order(p, o, NULL, st, e);
}

int
dist_simulate_order(const DistProgram *p, const KRunOpts *o, const int *order, DistState *st, Err *e)
{
	char *done;
	int i, j, rc = 0;

	if (!st->store)
		return err_set(e, "dist: simulate before the inputs are placed (dist_scatter)");
	if (!(done = calloc((size_t)(p->ns ? p->ns : 1), 1)))
		return err_set(e, "dist: out of memory");
	for (i = 0; i < p->ns && rc == 0; i++) {
		int x = order ? order[i] : i;

		if (x < 0 || x >= p->ns || done[x]) {
			rc = err_set(e, "dist.simulate: the order's entry %d is step %d; an order names every step once", i + 1, x + 1);
			break;
		}
		for (j = 0; j < x && rc == 0; j++)
			if (p->s[j].stream == p->s[x].stream && !done[j])
				rc = err_set(e, "dist.simulate: step %d before step %d, which comes first on its stream", x + 1, j + 1);
		for (j = 0; j < 2 && rc == 0; j++)
			if (p->s[x].wait[j] >= 0 && !done[p->s[x].wait[j]])
				rc = err_set(e, "dist.simulate: step %d before step %d, which it waits for", x + 1, p->s[x].wait[j] + 1);
		if (rc == 0 && (rc = run_step(p, x, o, st, e)) == 0)
			done[x] = 1;
	}
	free(done);
	return rc;
}

int
dist_gather(const DistProgram *p, const DistState *st, int t, TBuf *out, Err *e)
{
	const DistTensor *x;
	int64_t i;
	int r;

	if (t < 0 || t >= p->nt)
		return err_set(e, "dist.gather: no tensor %d", t);
	x = &p->t[t];
	for (r = 0; r < p->ndev; r++)
		if (!dist_store(st, r, t)->data && (x->dist.kind != AXE_SINGLE || r == x->dist.root))
			return err_set(e, "dist.gather: %s has no value on device %d (not computed)", x->name, r);
	if (dist_alloc_buf(out, x->dtype, x->dist.size, e) < 0)
		return -1;
	out->ndim = x->shape.n;
	for (i = 0; i < x->shape.n; i++)
		out->shape[i] = x->shape.v[i];
	for (i = 0; i < x->dist.size; i++) {
		int64_t m = axe_dist_m(&x->dist, i);
		double v;

		if (x->dist.kind == AXE_SHARDED)
			v = tbuf_get(dist_store(st, (int)axe_dist_g(&x->dist, i), t), m);
		else if (x->dist.kind == AXE_SINGLE)
			v = tbuf_get(dist_store(st, (int)x->dist.root, t), m);
		else if (x->partial) {
			for (v = 0, r = 0; r < p->ndev; r++)
				v += tbuf_get(dist_store(st, r, t), m);
		} else {
			v = tbuf_get(dist_store(st, 0, t), m);
			for (r = 1; r < p->ndev; r++) {
				double w = tbuf_get(dist_store(st, r, t), m);

				if (w != v && !(w != w && v != v)) {
					tbuf_free(out);
					return err_set(e, "dist.gather: %s is replicated, but device 0 holds %g and device %d holds %g "
					               "at element %lld", x->name, v, r, w, (long long)i);
				}
			}
		}
		dist_put(out, i, v);
	}
	return 0;
}
