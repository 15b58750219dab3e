/* search.c - schedule search: a grid of parameters (TVM's knobs) or tinygrad's BEAM over OptOps, each candidate verified and timed on the C JIT. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "../interp/sched/sched.h"
#include "../util/limits.h"
#include "backend.h"

/*
** A candidate is a copy of the schedule with steps applied. Its fate, in
** this order (so that native code only runs what the interpreter has
** checked for out-of-bounds accesses and races):
**   refused       the steps failed (apply, sched_apply_opt);
**   wrong         sched_verify failed on it;
**   compile error the C backend refused it or the compiler failed;
**   wrong         its compiled outputs differ from the starting schedule's
**                 (the cheap check that still runs with no_verify);
**   ok            timed: the median of reps runs after the warm-up run.
** Inputs are drawn once, matched by buffer name (a schedule may add caches
** and temporaries, never inputs), and shared by every run.
*/

typedef struct Named {
	char name[K_NAME];
	TBuf t;
} Named;

/* a BEAM candidate that is in the beam: its schedule, OptOps and time */
typedef struct Beam {
	Schedule *s;
	BSearchOpt *opt;
	int nopt;
	double t;
	int row;             /* its row, or -1 (the starting schedule) */
} Beam;

/* hashes, each with the row it came from (-1: the baseline) */
typedef struct Seen {
	uint64_t *hash;
	int *row;
	int n, cap;
} Seen;

typedef struct Search {
	Schedule *s;
	const BSearchOpts *o;
	BSearchResult *r;
	BJitCache *cache;
	Named *in, *out;        /* inputs drawn once; the baseline's outputs */
	int nin, nout;
	Seen src;               /* kernels (printed) evaluated, with their rows */
	Seen printed;           /* BEAM: kernels (printed) that are candidates already */
	double start;
	int budget, reps, done;
	double fastest;         /* the fastest ok time so far, the baseline's included (progress) */
	Schedule *best;         /* the winner's schedule so far (grid) */
} Search;

static double
now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* splitmix64: the seeded order of the grid and of a BEAM round */
static uint64_t
rnd(uint64_t *x)
{
	uint64_t z = (*x += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static char *
dupstr(const char *s)
{
	char *d = malloc(strlen(s) + 1);

	return d ? strcpy(d, s) : NULL;
}

const char *
backend_search_status(BSearchStatus st)
{
	switch (st) {
	case BS_OK: return "ok";
	case BS_REFUSED: return "refused";
	case BS_WRONG: return "wrong";
	case BS_COMPILE: return "compile error";
	}
	return "?";
}

void
backend_search_free(BSearchResult *r)
{
	int i;

	if (!r)
		return;
	for (i = 0; i < r->nrow; i++) {
		free(r->row[i].opt);
		free(r->row[i].msg);
	}
	free(r->row);
	r->row = NULL;
	r->nrow = r->caprow = 0;
}

/* A new row (zeroed, same_as -1), or NULL when out of memory. */
static BSearchRow *
new_row(BSearchResult *r)
{
	BSearchRow *w;

	if (r->nrow == r->caprow) {
		int cap = r->caprow ? 2 * r->caprow : 16;
		BSearchRow *n = realloc(r->row, cap * sizeof *n);

		if (!n)
			return NULL;
		r->row = n;
		r->caprow = cap;
	}
	w = &r->row[r->nrow++];
	memset(w, 0, sizeof *w);
	w->same_as = -1;
	return w;
}

static void
row_fail(BSearchRow *w, BSearchStatus st, const char *msg)
{
	w->status = st;
	free(w->msg);
	w->msg = dupstr(msg && *msg ? msg : backend_search_status(st));
}

/* ---- running and timing ---- */

static uint64_t
fnv(const char *s, size_t n)
{
	uint64_t h = 0xcbf29ce484222325ull;
	size_t i;

	for (i = 0; i < n; i++) {
		h ^= (unsigned char)s[i];
		h *= 0x100000001b3ull;
	}
	return h;
}

/*
** Candidates are told apart by their printed kernels (a kernel prints all it
** is: buffers, layouts, loops and their types), which is cheap; emitting C is
** not (a parallel or vector loop's independence is proved by enumerating its
** iterations), so C is emitted once a candidate, to compile and time it.
*/
static uint64_t
printed_hash(const Kernel *k)
{
	Buf b;
	uint64_t h;

	buf_init(&b);
	kernel_print(&b, k, 0);
	h = fnv(b.s ? b.s : "", b.len);
	buf_free(&b);
	return h;
}

/* the row h came from (-1: the baseline), or -2 when h is new */
static int
seen(const Seen *t, uint64_t h)
{
	int i;

	for (i = 0; i < t->n; i++)
		if (t->hash[i] == h)
			return t->row[i];
	return -2;
}

static int
remember(Seen *t, uint64_t h, int row, Err *e)
{
	if (t->n == t->cap) {
		int cap = t->cap ? 2 * t->cap : 32;
		uint64_t *nh = realloc(t->hash, cap * sizeof *nh);
		int *nr;

		if (!nh)
			return err_set(e, "search: out of memory");
		t->hash = nh;
		if (!(nr = realloc(t->row, cap * sizeof *nr)))
			return err_set(e, "search: out of memory");
		t->row = nr;
		t->cap = cap;
	}
	t->hash[t->n] = h;
	t->row[t->n++] = row;
	return 0;
}

static void
free_outputs(const Kernel *k, TBuf *bufs)
{
	int i;

	for (i = 0; i < k->nbuf; i++)
		if (k->buf[i].role == KB_OUTPUT)
			tbuf_free(&bufs[i]);
}

/* Tolerances as sched_verify's, per dtype; integers and bools exact. */
static void
tolerance(DType t, double *rtol, double *atol)
{
	switch (t) {
	case DT_FLOAT16: *rtol = 1e-2; *atol = 1e-3; break;
	case DT_BFLOAT16: *rtol = 2e-2; *atol = 1e-2; break;
	case DT_FLOAT32: *rtol = 1e-4; *atol = 1e-5; break;
	case DT_FLOAT64: *rtol = 1e-9; *atol = 1e-12; break;
	default: *rtol = *atol = 0; break;
	}
}

/* The outputs of k in bufs against the baseline's, by name; -1 with e naming the first difference. */
static int
compare(const Search *S, const Kernel *k, const TBuf *bufs, Err *e)
{
	int i, j;

	for (i = 0; i < k->nbuf; i++) {
		const KBuf *kb = &k->buf[i];
		const TBuf *want = NULL;
		double rtol, atol;
		int64_t x;

		if (kb->role != KB_OUTPUT)
			continue;
		for (j = 0; j < S->nout; j++)
			if (strcmp(S->out[j].name, kb->name) == 0)
				want = &S->out[j].t;
		if (!want || want->numel != bufs[i].numel)
			return err_set(e, "output %s is not an output of the starting schedule's shape", kb->name);
		tolerance(kb->dtype, &rtol, &atol);
		for (x = 0; x < want->numel; x++) {
			double g = tbuf_get(&bufs[i], x), w = tbuf_get(want, x);

			if (g == w || (isnan(g) && isnan(w)))
				continue;
			if (!(fabs(g - w) <= atol + rtol * fabs(w)))
				return err_set(e, "its compiled output %s differs from the starting schedule's at element %lld "
				               "(row-major): %.9g, want %.9g", kb->name, (long long)x, g, w);
		}
	}
	return 0;
}

static int
cmpd(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/*
** k compiled and run: the warm-up run (it compiles, or finds the cache's
** object), then reps timed runs (backend_jit_time: the source is emitted
** once); the warm-up's outputs against the baseline's unless baseline is
** set (then they become the baseline's); *t the median. Returns 0; 1 with e
** when the kernel is wrong; 2 when it does not compile; -1 on Ctrl-C or out
** of memory.
*/
static int
timed(Search *S, const Kernel *k, int baseline, double *t, Err *e)
{
	BJitOpts jo;
	TBuf *bufs;
	double *ts;
	int i, j, rc = -1;

	memset(&jo, 0, sizeof jo);
	jo.no_check = 1;   /* sched_verify ran the interpreter on it already, or the user said not to */
	jo.cache = S->cache;
	if (!(bufs = calloc(k->nbuf ? k->nbuf : 1, sizeof *bufs)) || !(ts = calloc(S->reps, sizeof *ts))) {
		free(bufs);
		return err_set(e, "search: out of memory");
	}
	for (i = 0; i < k->nbuf; i++) {
		if (k->buf[i].role != KB_INPUT)
			continue;
		for (j = 0; j < S->nin && strcmp(S->in[j].name, k->buf[i].name) != 0; j++)
			;
		if (j == S->nin) {
			err_set(e, "it has an input %s the starting schedule has not", k->buf[i].name);
			rc = 1;
			goto out;
		}
		bufs[i] = S->in[j].t;   /* shared: the JIT only reads inputs */
	}
	if (backend_jit_time(k, bufs, &jo, S->reps, ts, e) < 0) {
		rc = strncmp(e->msg, "interrupted", 11) == 0 || strstr(e->msg, "out of memory") ? -1 : 2;
		goto out;
	}
	if (baseline) {
		for (i = 0; i < k->nbuf; i++)
			if (k->buf[i].role == KB_OUTPUT) {
				snprintf(S->out[S->nout].name, K_NAME, "%s", k->buf[i].name);
				S->out[S->nout++].t = bufs[i];
				memset(&bufs[i], 0, sizeof bufs[i]);
			}
	} else if (compare(S, k, bufs, e) < 0) {
		free_outputs(k, bufs);
		rc = 1;
		goto out;
	}
	free_outputs(k, bufs);
	qsort(ts, S->reps, sizeof *ts, cmpd);
	*t = S->reps % 2 ? ts[S->reps / 2] : 0.5 * (ts[S->reps / 2 - 1] + ts[S->reps / 2]);
	rc = 0;
out:
	free(ts);
	free(bufs);
	return rc;
}

/*
** Candidate c (its steps applied) into row w: verified, compiled, timed.
** Returns 0 (w says how it went), -1 on Ctrl-C or out of memory.
*/
static int
evaluate(Search *S, Schedule *c, BSearchRow *w, Err *e)
{
	Err ce;
	uint64_t h;
	int rc, prev, trials = S->o->trials > 0 ? S->o->trials : 1;

	ce.msg[0] = 0;
	/* the same kernel as an earlier row: its verdict and time stand (verified once) */
	h = printed_hash(c->k);
	if ((prev = seen(&S->src, h)) != -2) {
		if (prev == -1) {
			w->status = BS_OK;
			w->time_s = S->r->baseline_s;
			w->msg = dupstr("the same kernel as the starting schedule");
		} else {
			const BSearchRow *p = &S->r->row[prev];

			w->status = p->status;
			w->time_s = p->time_s;
			w->msg = p->msg ? dupstr(p->msg) : NULL;
			w->same_as = prev;
		}
		w->speedup = w->time_s > 0 ? S->r->baseline_s / w->time_s : 0;
		return 0;
	}
	if (!S->o->no_verify) {
		SVerifyOpts vo = { 0 };

		vo.trials = trials;
		vo.seed = S->o->seed;
		if (sched_verify(c, &vo, NULL, &ce) < 0) {
			if (limits_poll(e) < 0)
				return -1;
			if (strncmp(ce.msg, "verify", 6) != 0) {
				char m[sizeof ce.msg];

				snprintf(m, sizeof m, "%s", ce.msg);
				err_set(&ce, "verify: %s", m);
			}
			row_fail(w, BS_WRONG, ce.msg);
			return remember(&S->src, h, (int)(w - S->r->row), e);
		}
	}
	rc = timed(S, c->k, 0, &w->time_s, &ce);
	if (rc < 0) {
		if (limits_poll(e) < 0)
			return -1;
		*e = ce;
		return -1;
	}
	if (rc == 1)
		row_fail(w, BS_WRONG, ce.msg);
	else if (rc == 2)
		row_fail(w, BS_COMPILE, ce.msg);
	else {
		w->status = BS_OK;
		w->speedup = S->r->baseline_s / (w->time_s > 0 ? w->time_s : 1e-12);
		if (w->time_s < S->fastest)
			S->fastest = w->time_s;
	}
	if (rc != 0)
		w->time_s = 0;
	return remember(&S->src, h, (int)(w - S->r->row), e);
}

/* Whether the search must stop before the next candidate; why into r->stop. */
static int
stop(Search *S)
{
	if (S->done >= S->budget) {
		snprintf(S->r->stop, sizeof S->r->stop, "the budget of %d candidates", S->budget);
		return 1;
	}
	if (S->o->time_s > 0 && now() - S->start >= S->o->time_s) {
		snprintf(S->r->stop, sizeof S->r->stop, "the time limit of %g s", S->o->time_s);
		return 1;
	}
	return 0;
}

static void
progress(Search *S)
{
	if (S->o->progress)
		S->o->progress(S->done, S->r->total, S->fastest, S->o->progress_aux);
}

/* ---- the grid ---- */

/* Point x of the product (mixed radix, the last parameter fastest) into vals. */
static void
decode(const BSearchOpts *o, int64_t x, int64_t *vals)
{
	int i;

	for (i = o->nparam - 1; i >= 0; i--) {
		vals[i] = o->param[i].vals[x % o->param[i].nvals];
		x /= o->param[i].nvals;
	}
}

static int
grid(Search *S, Err *e)
{
	const BSearchOpts *o = S->o;
	BSearchResult *r = S->r;
	int64_t size = 1, *pick = NULL;
	uint64_t rs = o->seed;
	int n, i, j;

	for (i = 0; i < o->nparam; i++)
		size = size > INT64_MAX / o->param[i].nvals ? INT64_MAX : size * o->param[i].nvals;
	n = size < S->budget ? (int)size : S->budget;
	r->total = n;
	if (!(pick = malloc((n ? n : 1) * sizeof *pick)))
		return err_set(e, "search: out of memory");
	/* the whole product in order, or n distinct points in a seeded random order */
	for (i = 0; i < n; i++) {
		if (size <= S->budget) {
			pick[i] = i;
			continue;
		}
		do {
			pick[i] = (int64_t)(rnd(&rs) % (uint64_t)size);
			for (j = 0; j < i && pick[j] != pick[i]; j++)
				;
		} while (j < i);
	}
	progress(S);
	snprintf(r->stop, sizeof r->stop, size <= S->budget ? "every candidate tried"
	         : "the budget of %d candidates (of %lld)", S->budget, (long long)size);
	for (i = 0; i < n; i++) {
		BSearchRow *w;
		Schedule *c;
		Err ae;

		if (limits_poll(e) < 0)
			goto fail;
		if (stop(S))
			break;
		if (!(w = new_row(r)) || !(c = sched_clone(S->s, e))) {
			if (w)
				r->nrow--;
			err_set(e, "search: out of memory");
			goto fail;
		}
		decode(o, pick[i], w->val);
		ae.msg[0] = 0;
		if (o->apply(c, w->val, o->aux, &ae) < 0) {
			if (limits_poll(e) < 0) {
				sched_free(c);
				goto fail;
			}
			row_fail(w, BS_REFUSED, ae.msg[0] ? ae.msg : "apply failed without saying why");
		} else if (evaluate(S, c, w, e) < 0) {
			sched_free(c);
			goto fail;
		}
		if (w->status == BS_OK && (r->best < 0 || w->time_s < r->best_s)) {
			r->best = (int)(w - r->row);
			r->best_s = w->time_s;
			sched_free(S->best);
			S->best = c;
		} else
			sched_free(c);
		S->done++;
		progress(S);
	}
	free(pick);
	if (r->best < 0)
		snprintf(r->stop + strlen(r->stop), sizeof r->stop - strlen(r->stop), "; no candidate is ok");
	return 0;
fail:
	free(pick);
	return -1;
}

/* ---- BEAM ---- */

/*
** tinygrad's actions (tinygrad/codegen/opt/search.py), adapted: amounts per
** OptOp, tried on every loop of every stage whose axis type the OptOp
** splits. 0 is the whole loop (only for loops of at most 32 iterations).
** LOCAL and GROUP make workgroup axes the C JIT runs as plain loops (as
** tinygrad's CPU backend has no locals), so they are tried on request only;
** THREAD (OpenMP) and SWAP (loop interchange) matter on the CPU.
*/
typedef struct Action {
	const char *op;
	int reduce;          /* splits a reduce loop (else a spatial one) */
	int64_t amt[12];     /* amounts, ending at -1 */
} Action;

static const Action actions[] = {
	{ "UPCAST", 0, { 0, 2, 3, 4, 5, 7, 8, 16, -1 } },
	{ "UNROLL", 1, { 0, 2, 4, 7, 8, -1 } },
	{ "THREAD", 0, { 2, 3, 4, 5, 8, 12, 16, 24, 32, 64, -1 } },
	{ "SWAP", 0, { -1 } },
	{ "LOCAL", 0, { 2, 3, 4, 8, 13, 16, 29, 32, -1 } },
	{ "GROUP", 1, { 0, 4, 8, 16, -1 } },
	{ "GROUPTOP", 1, { 13, 16, 28, 29, 32, 49, 64, 256, -1 } },
	{ "PADTO", 0, { 32, -1 } },
};
static const char *const default_ops[] = { "UPCAST", "UNROLL", "THREAD", "SWAP", NULL };

static int
wanted(const BSearchOpts *o, const char *op)
{
	const char *const *ops = o->ops ? o->ops : default_ops;
	int i;

	for (i = 0; ops[i]; i++)
		if (strcasecmp(ops[i], op) == 0)
			return 1;
	return 0;
}

static int
apply_opt(Schedule *c, const BSearchOpt *a, Err *e)
{
	return sched_apply_opt(c, a->op, a->stage, a->loop, a->arg, a->other[0] ? a->other : NULL, e);
}

/* The actions on schedule c worth trying, into *out (grown); their count, or -1. */
static int
expand(const Search *S, const Schedule *c, BSearchOpt **out, int *cap, Err *e)
{
	const Kernel *k = c->k;
	int st, i, a, n = 0, m;

	for (st = 0; st < k->nstage; st++) {
		UOp *l[256];
		int nl = sched_loops(k, st, l, 256), threaded = 0;

		for (i = 0; i < nl; i++)
			threaded |= krange_type(l[i]->src[0]) == AX_THREAD;
		for (i = 0; i < nl; i++) {
			const UOp *r = l[i]->src[0];
			AxisType t = krange_type(r);
			int64_t ext = krange_extent(r);
			int spatial = (t == AX_LOOP || t == AX_GLOBAL) && krange_hw(r) == HW_NONE;
			int reduce = t == AX_REDUCE && krange_hw(r) == HW_NONE;

			for (a = 0; a < (int)(sizeof actions / sizeof actions[0]); a++) {
				const Action *ac = &actions[a];

				if (!wanted(S->o, ac->op) || (ac->reduce ? !reduce : !spatial))
					continue;
				/*
				** One parallel loop per stage, its outermost: OpenMP runs
				** nested ones serially, and an inner parallel loop starts
				** its threads on every iteration of the loops around it.
				*/
				if (strcmp(ac->op, "THREAD") == 0 && (threaded || i > 0))
					continue;
				for (m = 0; strcmp(ac->op, "SWAP") == 0 ? m < nl : ac->amt[m] >= 0; m++) {
					BSearchOpt *o;
					int64_t amt = strcmp(ac->op, "SWAP") == 0 ? 0 : ac->amt[m];

					if (strcmp(ac->op, "SWAP") == 0) {
						if (m <= i || krange_hw(l[m]->src[0]) != HW_NONE)
							continue;
					} else if (strcmp(ac->op, "PADTO") == 0) {
						if (ext % amt == 0)
							continue;
					} else if (amt == 0 ? ext > 32 || ext < 2 : amt >= ext || ext % amt)
						continue;
					if (n == *cap) {
						int nc = *cap ? 2 * *cap : 64;
						BSearchOpt *no = realloc(*out, nc * sizeof *no);

						if (!no)
							return err_set(e, "search: out of memory");
						*out = no;
						*cap = nc;
					}
					o = &(*out)[n++];
					memset(o, 0, sizeof *o);
					snprintf(o->op, sizeof o->op, "%s", ac->op);
					snprintf(o->stage, sizeof o->stage, "%s", k->stage[st].name);
					snprintf(o->loop, sizeof o->loop, "%s", krange_var(r)->name);
					o->arg = amt;
					if (strcmp(ac->op, "SWAP") == 0)
						snprintf(o->other, sizeof o->other, "%s", krange_var(l[m]->src[0])->name);
				}
			}
		}
	}
	return n;
}

typedef struct Cand {
	int parent;          /* its beam entry */
	BSearchOpt act;
} Cand;

static void
beam_free(Beam *b, int n)
{
	int i;

	for (i = 0; i < n; i++) {
		sched_free(b[i].s);
		free(b[i].opt);
	}
}

static int
cmpbeam(const void *a, const void *b)
{
	return cmpd(&((const Beam *)a)->t, &((const Beam *)b)->t);
}

static int
beam_search(Search *S, Err *e)
{
	const BSearchOpts *o = S->o;
	BSearchResult *r = S->r;
	int width = o->beam > 0 ? o->beam : 4, nbeam = 1, capacts = 0, ncand, nnext, i, rc = -1;
	double minp = o->min_progress > 0 ? o->min_progress : 0.01;
	uint64_t rs = o->seed;
	Beam *beam = calloc(width, sizeof *beam), *next = NULL;
	BSearchOpt *acts = NULL;
	Cand *cand = NULL;

	r->total = S->budget;
	if (!beam || !(beam[0].s = sched_clone(S->s, e))) {
		free(beam);
		return err_set(e, "search: out of memory");
	}
	beam[0].t = r->baseline_s;
	beam[0].row = -1;
	if (remember(&S->printed, printed_hash(S->s->k), -1, e) < 0) {
		beam_free(beam, 1);
		free(beam);
		return -1;
	}
	progress(S);
	for (;;) {
		int capcand = 0;

		if (stop(S))
			break;
		if (beam[0].nopt >= BSEARCH_MAXOPT) {
			snprintf(r->stop, sizeof r->stop, "%d OptOps deep", BSEARCH_MAXOPT);
			break;
		}
		/* every action on every beam entry that applies and makes new code */
		ncand = 0;
		for (i = 0; i < nbeam; i++) {
			int n = expand(S, beam[i].s, &acts, &capacts, e), a;

			if (n < 0)
				goto out;
			for (a = 0; a < n; a++) {
				Schedule *c;
				uint64_t h;
				Err ie;

				if (limits_poll(e) < 0)
					goto out;
				if (!(c = sched_clone(beam[i].s, e)))
					goto out;
				if (apply_opt(c, &acts[a], &ie) < 0) {
					r->refused++;
					sched_free(c);
					continue;
				}
				h = printed_hash(c->k);
				sched_free(c);
				if (seen(&S->printed, h) != -2) {
					r->duplicates++;
					continue;
				}
				if (remember(&S->printed, h, -1, e) < 0)
					goto out;
				if (ncand == capcand) {
					int nc = capcand ? 2 * capcand : 64;
					Cand *nw = realloc(cand, nc * sizeof *nw);

					if (!nw) {
						err_set(e, "search: out of memory");
						goto out;
					}
					cand = nw;
					capcand = nc;
				}
				cand[ncand].parent = i;
				cand[ncand++].act = acts[a];
			}
		}
		if (ncand == 0) {
			snprintf(r->stop, sizeof r->stop, "no action left to try");
			break;
		}
		/* more than the budget left: a seeded random sample of them, not the first stage's */
		if (ncand > S->budget - S->done)
			for (i = ncand - 1; i > 0; i--) {
				int j = (int)(rnd(&rs) % (uint64_t)(i + 1));
				Cand t = cand[i];

				cand[i] = cand[j];
				cand[j] = t;
			}
		r->rounds++;
		if (!(next = calloc(ncand, sizeof *next))) {
			err_set(e, "search: out of memory");
			goto out;
		}
		nnext = 0;
		for (i = 0; i < ncand && !stop(S); i++) {
			const Beam *p = &beam[cand[i].parent];
			BSearchRow *w;
			Schedule *c;
			Err ie;

			if (limits_poll(e) < 0)
				goto out;
			if (!(c = sched_clone(p->s, e)))
				goto out;
			if (apply_opt(c, &cand[i].act, &ie) < 0) {
				/* it applied a moment ago */
				sched_free(c);
				*e = ie;
				goto out;
			}
			if (!(w = new_row(r)) || !(w->opt = malloc((p->nopt + 1) * sizeof *w->opt))) {
				sched_free(c);
				err_set(e, "search: out of memory");
				goto out;
			}
			if (p->nopt)
				memcpy(w->opt, p->opt, p->nopt * sizeof *w->opt);
			w->opt[p->nopt] = cand[i].act;
			w->nopt = p->nopt + 1;
			if (evaluate(S, c, w, e) < 0) {
				sched_free(c);
				goto out;
			}
			S->done++;
			if (w->status == BS_OK) {
				Beam *b = &next[nnext++];

				b->s = c;
				b->t = w->time_s;
				b->row = (int)(w - r->row);
				b->nopt = w->nopt;
				if (!(b->opt = malloc(w->nopt * sizeof *b->opt))) {
					err_set(e, "search: out of memory");
					goto out;
				}
				memcpy(b->opt, w->opt, w->nopt * sizeof *b->opt);
			} else
				sched_free(c);
			progress(S);
		}
		qsort(next, nnext, sizeof *next, cmpbeam);
		/*
		** tinygrad's rule: go on while the round's best beats the beam's by
		** min_progress. A smaller gain is not taken (tinygrad takes it): on
		** a CPU that is timing noise, and it would cost a step for nothing.
		*/
		if (nnext == 0 || next[0].t > beam[0].t * (1 - minp) || i < ncand) {
			if (i < ncand)
				;   /* stop() said why */
			else if (nnext == 0)
				snprintf(r->stop, sizeof r->stop, "round %d found no correct candidate", r->rounds);
			else
				snprintf(r->stop, sizeof r->stop, "round %d improved by less than %g%%", r->rounds, 100 * minp);
			if (nnext && next[0].t <= beam[0].t * (1 - minp)) {
				beam_free(beam, nbeam);
				beam[0] = next[0];
				memset(&next[0], 0, sizeof next[0]);
				nbeam = 1;
			}
			beam_free(next, nnext);
			free(next);
			next = NULL;
			break;
		}
		beam_free(beam, nbeam);
		nbeam = nnext < width ? nnext : width;
		memcpy(beam, next, nbeam * sizeof *beam);
		beam_free(next + nbeam, nnext - nbeam);
		free(next);
		next = NULL;
	}
	/* the winner: the beam's best, when it beats the starting schedule */
	if (beam[0].row >= 0) {
		r->best = beam[0].row;
		r->best_s = beam[0].t;
		S->best = beam[0].s;
		beam[0].s = NULL;
	} else
		r->best = -1;
	rc = 0;
out:
	if (next) {
		beam_free(next, nnext);
		free(next);
	}
	beam_free(beam, nbeam);
	free(beam);
	free(acts);
	free(cand);
	return rc;
}

/* ---- the search ---- */

static int64_t
numel(const KBuf *b)
{
	int64_t n = 1;
	int i;

	for (i = 0; i < b->ndim; i++)
		n *= b->shape[i];
	return n;
}

static int
inputs(Search *S, Err *e)
{
	const Kernel *k = S->s->k;
	int i;

	if (!(S->in = calloc(k->nbuf + 1, sizeof *S->in)) || !(S->out = calloc(k->nbuf + 1, sizeof *S->out)))
		return err_set(e, "search: out of memory");
	for (i = 0; i < k->nbuf; i++) {
		const KBuf *kb = &k->buf[i];
		Named *x = &S->in[S->nin];
		int64_t n = numel(kb);

		if (kb->role != KB_INPUT)
			continue;
		snprintf(x->name, sizeof x->name, "%s", kb->name);
		S->nin++;
		if (S->o->inputs && S->o->inputs[i].data) {
			const TBuf *g = &S->o->inputs[i];
			size_t bytes = (size_t)n * dtype_bytes(kb->dtype);

			if (g->dtype != kb->dtype || g->numel != n)
				return err_set(e, "search: input %s: %lld elements of %s given, %lld of %s declared", kb->name,
				               (long long)g->numel, dtype_name(g->dtype), (long long)n, dtype_name(kb->dtype));
			x->t = *g;
			if (!(x->t.data = malloc(bytes + 1)))
				return err_set(e, "search: out of memory");
			memcpy(x->t.data, g->data, bytes);
			continue;
		}
		if (kb->tensor && kb->tensor->op != OP_PARAM) {
			if (tensor_realize(kb->tensor, NULL, &x->t, e) < 0)
				return -1;
			continue;
		}
		x->t.dtype = kb->dtype;
		x->t.ndim = kb->ndim;
		memcpy(x->t.shape, kb->shape, sizeof kb->shape);
		x->t.numel = n;
		x->t.axis = -1;
		if (!(x->t.data = malloc((size_t)n * dtype_bytes(kb->dtype) + 1)))
			return err_set(e, "search: out of memory (%lld elements for %s)", (long long)n, kb->name);
		backend_draw(k, i, &x->t);
	}
	return 0;
}

static int
check_opts(const Schedule *s, const BSearchOpts *o, Err *e)
{
	int i, j;

	if (!s)
		return err_set(e, "search: no schedule");
	if (o->apply && o->nparam < 1)
		return err_set(e, "search: apply is given but no parameter");
	if (!o->apply && o->nparam)
		return err_set(e, "search: %d parameters but no apply function to apply them", o->nparam);
	if (o->nparam > BSEARCH_MAXPARAM)
		return err_set(e, "search: %d parameters, at most %d", o->nparam, BSEARCH_MAXPARAM);
	for (i = 0; i < o->nparam; i++) {
		if (!o->param[i].name || !*o->param[i].name)
			return err_set(e, "search: parameter %d has no name", i + 1);
		if (strlen(o->param[i].name) >= K_NAME)
			return err_set(e, "search: parameter name %.40s... is longer than %d characters", o->param[i].name,
			               K_NAME - 1);
		if (o->param[i].nvals < 1 || !o->param[i].vals)
			return err_set(e, "search: parameter %s has no candidate value", o->param[i].name);
		for (j = 0; j < i; j++)
			if (strcmp(o->param[i].name, o->param[j].name) == 0)
				return err_set(e, "search: parameter %s is given twice", o->param[i].name);
	}
	if (o->budget < 0 || o->reps < 0 || o->beam < 0 || o->trials < 0)
		return err_set(e, "search: budget %d, reps %d, beam %d, trials %d: none may be negative", o->budget,
		               o->reps, o->beam, o->trials);
	if (o->reps > 1000 || o->trials > 1000)
		return err_set(e, "search: reps %d, trials %d: at most 1000 each", o->reps, o->trials);
	if (!(o->time_s >= 0) || !(o->min_progress >= 0 && o->min_progress < 1))
		return err_set(e, "search: time_s %g must be >= 0 and min_progress %g in [0, 1)", o->time_s,
		               o->min_progress);
	for (i = 0; o->ops && o->ops[i]; i++) {
		for (j = 0; j < (int)(sizeof actions / sizeof actions[0]); j++)
			if (strcasecmp(o->ops[i], actions[j].op) == 0)
				break;
		if (j == (int)(sizeof actions / sizeof actions[0]))
			return err_set(e, "search: unknown OptOp %s in ops (UPCAST, UNROLL, THREAD, SWAP, LOCAL, GROUP, "
			               "GROUPTOP, PADTO)", o->ops[i]);
	}
	if (o->ops && o->apply)
		return err_set(e, "search: ops chooses BEAM's OptOps; a grid search (apply) takes none");
	return 0;
}

/* s takes over c's kernels and steps; c gets s's old ones (freed by the caller) */
static void
adopt(Schedule *s, Schedule *c)
{
	Schedule t = *s;

	*s = *c;
	*c = t;
}

int
backend_search(Schedule *s, const BSearchOpts *o, BSearchResult *r, Err *e)
{
	BSearchOpts dflt;
	Search S;
	Err ie;
	int i, rc = -1;

	memset(&dflt, 0, sizeof dflt);
	if (!o)
		o = &dflt;
	memset(r, 0, sizeof *r);
	r->best = -1;
	if (check_opts(s, o, e) < 0)
		return -1;
	memset(&S, 0, sizeof S);
	S.s = s;
	S.o = o;
	S.r = r;
	S.start = now();
	S.budget = o->budget ? o->budget : 64;
	S.reps = o->reps ? o->reps : 5;
	r->beam = !o->apply;
	r->nparam = o->nparam;
	for (i = 0; i < o->nparam; i++)
		snprintf(r->pname[i], K_NAME, "%s", o->param[i].name);
	if (!(S.cache = o->cache) && !(S.cache = backend_jit_cache_new()))
		return err_set(e, "search: out of memory");
	if (inputs(&S, e) < 0)
		goto out;
	/* the baseline: the starting schedule, checked and timed as every candidate will be */
	if (!o->no_verify && s->nstep > 0 && sched_verify(s, &(SVerifyOpts){ .trials = o->trials > 0 ? o->trials : 1,
	                                                     .seed = o->seed }, NULL, &ie) < 0) {
		if (limits_poll(e) < 0)
			goto out;
		err_set(e, "search: the starting schedule fails verification, so no candidate can be trusted: %s", ie.msg);
		goto out;
	}
	if (timed(&S, s->k, 1, &r->baseline_s, &ie) != 0) {
		if (limits_poll(e) < 0)
			goto out;
		err_set(e, "search: the starting schedule does not run as C: %s", ie.msg);
		goto out;
	}
	if (remember(&S.src, printed_hash(s->k), -1, e) < 0)
		goto out;
	r->best_s = S.fastest = r->baseline_s;
	if ((o->apply ? grid(&S, e) : beam_search(&S, e)) < 0) {
		if (strncmp(e->msg, "interrupted", 11) == 0)
			err_set(e, "search: interrupted after %d candidates; the schedule is as it was", S.done);
		goto out;
	}
	if (S.best) {
		adopt(s, S.best);
		sched_free(S.best);
		S.best = NULL;
	}
	if (r->best < 0)
		r->best_s = r->baseline_s;
	rc = 0;
out:
	r->wall_s = now() - S.start;
	if (rc < 0)
		backend_search_free(r);
	sched_free(S.best);
	for (i = 0; i < S.nin; i++)
		tbuf_free(&S.in[i].t);
	for (i = 0; i < S.nout; i++)
		tbuf_free(&S.out[i].t);
	free(S.in);
	free(S.out);
	free(S.src.hash);
	free(S.src.row);
	free(S.printed.hash);
	free(S.printed.row);
	if (!o->cache)
		backend_jit_cache_free(S.cache);
	return rc;
}

/* ---- the table ---- */

void
backend_search_opts(Buf *b, const BSearchOpt *opt, int n)
{
	int i;

	if (n == 0)
		emit(b, "(none)");
	for (i = 0; i < n; i++) {
		emit(b, "%s%s %s.%s", i ? ", " : "", opt[i].op, opt[i].stage, opt[i].loop);
		if (opt[i].other[0])
			emit(b, " %s", opt[i].other);
		else
			emit(b, " %lld", (long long)opt[i].arg);
	}
}

/* seconds in a unit that keeps 3-4 significant digits: "1.234 ms" */
static void
fmt_time(char *out, size_t n, double t)
{
	if (t <= 0)
		snprintf(out, n, "-");
	else if (t < 1e-3)
		snprintf(out, n, "%.2f us", t * 1e6);
	else if (t < 1)
		snprintf(out, n, "%.3f ms", t * 1e3);
	else
		snprintf(out, n, "%.3f s", t);
}

static int
cmprow(const void *a, const void *b, const BSearchResult *r)
{
	const BSearchRow *x = &r->row[*(const int *)a], *y = &r->row[*(const int *)b];

	if ((x->status == BS_OK) != (y->status == BS_OK))
		return x->status == BS_OK ? -1 : 1;
	if (x->status == BS_OK && x->time_s != y->time_s)
		return x->time_s < y->time_s ? -1 : 1;
	return *(const int *)a - *(const int *)b;
}

/* qsort has no context argument: an insertion sort of row indices (tables are small) */
static void
sort_rows(int *ix, int n, const BSearchResult *r)
{
	int i, j;

	for (i = 1; i < n; i++) {
		int v = ix[i];

		for (j = i; j > 0 && cmprow(&v, &ix[j - 1], r) < 0; j--)
			ix[j] = ix[j - 1];
		ix[j] = v;
	}
}

void
backend_search_table(Buf *b, const BSearchResult *r)
{
	int *ix = malloc((r->nrow ? r->nrow : 1) * sizeof *ix), w[BSEARCH_MAXPARAM], wo = 4, i, j, ok = 0, wrong = 0;
	char t[32], base[32], best[32];
	Buf ob;

	if (!ix) {
		emit(b, "search: out of memory\n");
		return;
	}
	for (i = 0; i < r->nrow; i++) {
		ix[i] = i;
		ok += r->row[i].status == BS_OK;
		wrong += r->row[i].status == BS_WRONG;
	}
	sort_rows(ix, r->nrow, r);
	fmt_time(base, sizeof base, r->baseline_s);
	fmt_time(best, sizeof best, r->best_s);
	emit(b, "search (%s): %d candidates, %d ok, %d wrong", r->beam ? "BEAM over OptOps" : "grid", r->nrow, ok,
	     wrong);
	if (r->beam)
		emit(b, ", %d refused, %d repeats skipped, %d rounds", r->refused, r->duplicates, r->rounds);
	emit(b, "; stopped by %s after %.1f s\n", r->stop, r->wall_s);
	emit(b, "baseline %s, best %s (%.2fx)%s\n", base, best, r->best_s > 0 ? r->baseline_s / r->best_s : 0,
	     r->best < 0 ? ": the starting schedule stays" : "");
	/* column widths */
	buf_init(&ob);
	for (j = 0; j < r->nparam; j++) {
		w[j] = (int)strlen(r->pname[j]);
		for (i = 0; i < r->nrow; i++) {
			int n = snprintf(t, sizeof t, "%lld", (long long)r->row[i].val[j]);

			if (n > w[j])
				w[j] = n;
		}
	}
	for (i = 0; r->beam && i < r->nrow; i++) {
		buf_reset(&ob);
		backend_search_opts(&ob, r->row[i].opt, r->row[i].nopt);
		if ((int)ob.len > wo)
			wo = (int)ob.len > 72 ? 72 : (int)ob.len;
	}
	emit(b, "    %4s", "#");
	for (j = 0; j < r->nparam; j++)
		emit(b, "  %*s", w[j], r->pname[j]);
	if (r->beam)
		emit(b, "  %-*s", wo, "opts");
	emit(b, "  %11s  %8s  %s\n", "time", "speedup", "status");
	for (i = 0; i < r->nrow; i++) {
		const BSearchRow *x = &r->row[ix[i]];
		const char *m = x->msg ? x->msg : "";
		int mlen = (int)strcspn(m, "\n");

		emit(b, "%s %4d", ix[i] == r->best ? "  *" : "   ", ix[i] + 1);
		for (j = 0; j < r->nparam; j++)
			emit(b, "  %*lld", w[j], (long long)x->val[j]);
		if (r->beam) {
			buf_reset(&ob);
			backend_search_opts(&ob, x->opt, x->nopt);
			emit(b, "  %-*.*s", wo, wo, ob.s ? ob.s : "");
		}
		fmt_time(t, sizeof t, x->time_s);
		emit(b, "  %11s  ", t);
		if (x->speedup > 0)
			emit(b, "%7.2fx", x->speedup);
		else
			emit(b, "%8s", "-");
		emit(b, "  %s", backend_search_status(x->status));
		if (x->same_as >= 0)
			emit(b, " (the code of #%d)", x->same_as + 1);
		else if (x->status == BS_OK && mlen)
			emit(b, " (%.*s)", mlen, m);
		else if (x->status != BS_OK && mlen)
			emit(b, ": %.*s%s", mlen > 160 ? 160 : mlen, m, mlen > 160 ? "..." : "");
		emit(b, "\n");
	}
	buf_free(&ob);
	free(ix);
}
