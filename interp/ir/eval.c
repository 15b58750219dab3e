/* eval.c - evaluating scalar UOps and checking two expressions for equality over their ranges. */
#include <stdlib.h>
#include <string.h>

#include "../../util/limits.h"
#include "uop.h"

/*
** An expression is compiled once into a program: its distinct nodes in an
** order where sources come first, each with the slots of its sources. A
** point is then one pass over an array, so that exhaustive checks over
** millions of points stay fast and shared subexpressions are computed once.
*/
typedef struct Inst {
	const UOp *u;
	int src[3];
	int var;        /* VAR: index into the variable table */
} Inst;

typedef struct Prog {
	Inst *ins;
	int n, cap;
	const UOp **vars;  /* distinct variable names (first node seen for each) */
	int nvars, capv;
	const UOp **seen;  /* open-addressing set: node -> slot */
	int *slot;
	size_t nseen;
	int bad;
} Prog;

static int
lookup(Prog *p, const UOp *u, int *found)
{
	size_t i = ((uintptr_t)u >> 4) & (p->nseen - 1);

	for (; p->seen[i]; i = (i + 1) & (p->nseen - 1))
		if (p->seen[i] == u) {
			*found = 1;
			return (int)i;
		}
	*found = 0;
	return (int)i;
}

static int
compile(Prog *p, const UOp *u, int depth, Err *e)
{
	int h, found, i, s[3];
	Inst *in;

	h = lookup(p, u, &found);
	if (found)
		return p->slot[h];
	if (depth > 20000)
		return err_set(e, "eval: the expression is nested too deep");
	if (u->nsrc > 3)
		return err_set(e, "eval: %s is not a scalar op", uop_info[u->op].name);
	for (i = 0; i < u->nsrc; i++)
		if ((s[i] = compile(p, u->src[i], depth + 1, e)) < 0)
			return -1;
	if (p->n == p->cap) {
		int nc = p->cap ? p->cap * 2 : 64;
		Inst *ni = realloc(p->ins, nc * sizeof *ni);
		if (!ni)
			return err_set(e, "eval: out of memory");
		p->ins = ni;
		p->cap = nc;
	}
	in = &p->ins[p->n];
	in->u = u;
	in->var = -1;
	for (i = 0; i < u->nsrc; i++)
		in->src[i] = s[i];
	if (u->op == OP_VAR) {
		for (i = 0; i < p->nvars && strcmp(p->vars[i]->name, u->name) != 0; i++)
			;
		if (i < p->nvars && (p->vars[i]->arg[0] != u->arg[0] || p->vars[i]->arg[1] != u->arg[1]))
			return err_set(e, "eval: variable %s has two ranges, [%lld, %lld] and [%lld, %lld]",
			               u->name, (long long)p->vars[i]->arg[0], (long long)p->vars[i]->arg[1],
			               (long long)u->arg[0], (long long)u->arg[1]);
		if (i == p->nvars) {
			if (p->nvars == p->capv) {
				int nc = p->capv ? p->capv * 2 : 8;
				const UOp **nv = realloc(p->vars, nc * sizeof *nv);
				if (!nv)
					return err_set(e, "eval: out of memory");
				p->vars = nv;
				p->capv = nc;
			}
			p->vars[p->nvars++] = u;
		}
		in->var = i;
	}
	/* the set may not be full: it was sized for every node of the DAG */
	h = lookup(p, u, &found);
	p->seen[h] = u;
	p->slot[h] = p->n;
	return p->n++;
}

static int
count(const UOp *u, const UOp ***set, size_t *n, size_t *cap, int depth)
{
	size_t i;
	int k;

	if (depth > 20000)
		return -1;
	if (*n * 2 >= *cap) {
		size_t nc = *cap ? *cap * 2 : 64;
		const UOp **ns = calloc(nc, sizeof *ns);
		if (!ns)
			return -1;
		for (i = 0; i < *cap; i++)
			if ((*set)[i]) {
				size_t j = ((uintptr_t)(*set)[i] >> 4) & (nc - 1);
				while (ns[j])
					j = (j + 1) & (nc - 1);
				ns[j] = (*set)[i];
			}
		free(*set);
		*set = ns;
		*cap = nc;
	}
	for (i = ((uintptr_t)u >> 4) & (*cap - 1); (*set)[i]; i = (i + 1) & (*cap - 1))
		if ((*set)[i] == u)
			return 0;
	(*set)[i] = u;
	(*n)++;
	for (k = 0; k < u->nsrc; k++)
		if (count(u->src[k], set, n, cap, depth + 1) < 0)
			return -1;
	return 0;
}

static void
prog_free(Prog *p)
{
	free(p->ins);
	free(p->vars);
	free(p->seen);
	free(p->slot);
}

static int
prog_make(Prog *p, const UOp *const *roots, int nroots, int *out, Err *e)
{
	const UOp **set = NULL;
	size_t n = 0, cap = 0;
	int i;

	memset(p, 0, sizeof *p);
	for (i = 0; i < nroots; i++)
		if (count(roots[i], &set, &n, &cap, 0) < 0) {
			free(set);
			return err_set(e, "eval: the expression is too deep or memory ran out");
		}
	free(set);
	for (p->nseen = 64; p->nseen < 2 * n + 2; p->nseen *= 2)
		;
	p->seen = calloc(p->nseen, sizeof *p->seen);
	p->slot = calloc(p->nseen, sizeof *p->slot);
	if (!p->seen || !p->slot) {
		prog_free(p);
		return err_set(e, "eval: out of memory");
	}
	for (i = 0; i < nroots; i++)
		if ((out[i] = compile(p, roots[i], 0, e)) < 0) {
			prog_free(p);
			return -1;
		}
	return 0;
}

/* Run the program with the variables' values in val[]; results in r[]. */
static int
run(const Prog *p, const int64_t *val, int64_t *r, Err *e)
{
	int i, k;
	int64_t v[3], lo, hi, x;

	for (i = 0; i < p->n; i++) {
		const Inst *in = &p->ins[i];
		const UOp *u = in->u;
		for (k = 0; k < u->nsrc; k++)
			v[k] = r[in->src[k]];
		switch (u->op) {
		case OP_CONST:
			r[i] = u->arg[0];
			continue;
		case OP_VAR:
			r[i] = val[in->var];
			continue;
		case OP_CAST:
			x = v[0];
			if (u->dtype == DT_BOOL)
				x = x != 0;
			else if (u->dtype == DT_INT32)
				x = (int64_t)(int32_t)(uint32_t)(uint64_t)x;   /* wraps, as C's cast */
			r[i] = x;
			continue;
		case OP_WHERE:
			r[i] = v[0] ? v[1] : v[2];
			continue;
		default:
			break;
		}
		if (uop_fold((Op)u->op, (DType)u->dtype, v, u->nsrc, &r[i]) < 0) {
			Buf b;
			buf_init(&b);
			uop_print(&b, u, D_INFIX);
			dtype_range((DType)u->dtype, &lo, &hi);
			if ((u->op == OP_IDIV || u->op == OP_MOD) && v[1] == 0)
				err_set(e, "eval: division by zero in %s", b.s ? b.s : "?");
			else if ((u->op == OP_SHL || u->op == OP_SHR) && (v[1] < 0 || v[1] > 63))
				err_set(e, "eval: shift by %lld in %s", (long long)v[1], b.s ? b.s : "?");
			else
				err_set(e, "eval: %s overflows %s at %lld and %lld", b.s ? b.s : "?",
				        dtype_name((DType)u->dtype), (long long)v[0], (long long)v[1]);
			buf_free(&b);
			return -1;
		}
	}
	return 0;
}

struct UProg {
	Prog p;
	int *root;      /* nroots slots of the program */
	int nroots;
	int *at;        /* variable i of the program is bind[at[i]] */
	int64_t *val;   /* the variables' values at the point being run */
	int64_t *r;     /* every slot's value */
};

void
uop_prog_free(UProg *q)
{
	if (!q)
		return;
	prog_free(&q->p);
	free(q->root);
	free(q->at);
	free(q->val);
	free(q->r);
	free(q);
}

UProg *
uop_prog_new(const UOp *const *roots, int nroots, const UBind *bind, int nbind, Err *e)
{
	UProg *q;
	int i, k;

	for (i = 0; i < nroots; i++)
		if (!roots[i]) {
			err_set(e, "eval: no expression");
			return NULL;
		}
	if (!(q = calloc(1, sizeof *q)) || !(q->root = calloc((size_t)nroots + 1, sizeof *q->root))) {
		free(q);
		err_set(e, "eval: out of memory");
		return NULL;
	}
	q->nroots = nroots;
	if (prog_make(&q->p, roots, nroots, q->root, e) < 0) {
		free(q->root);
		free(q);
		return NULL;
	}
	q->at = calloc((size_t)q->p.nvars + 1, sizeof *q->at);
	q->val = calloc((size_t)q->p.nvars + 1, sizeof *q->val);
	q->r = calloc((size_t)q->p.n + 1, sizeof *q->r);
	if (!q->at || !q->val || !q->r) {
		uop_prog_free(q);
		err_set(e, "eval: out of memory");
		return NULL;
	}
	for (i = 0; i < q->p.nvars; i++) {
		for (k = 0; k < nbind && strcmp(bind[k].name, q->p.vars[i]->name) != 0; k++)
			;
		if (k == nbind) {
			err_set(e, "eval: no value for variable %s", q->p.vars[i]->name);
			uop_prog_free(q);
			return NULL;
		}
		q->at[i] = k;
	}
	return q;
}

int
uop_prog_run(UProg *q, const UBind *bind, int64_t *out, Err *e)
{
	int i;

	for (i = 0; i < q->p.nvars; i++) {
		const UOp *v = q->p.vars[i];
		int64_t x = bind[q->at[i]].value;

		if (x < v->arg[0] || x > v->arg[1])
			return err_set(e, "eval: %s = %lld is outside its range [%lld, %lld]", v->name,
			               (long long)x, (long long)v->arg[0], (long long)v->arg[1]);
		q->val[i] = x;
	}
	if (run(&q->p, q->val, q->r, e) < 0)
		return -1;
	for (i = 0; i < q->nroots; i++)
		out[i] = q->r[q->root[i]];
	return 0;
}

int
uop_eval(const UOp *u, const UBind *bind, int nbind, int64_t *out, Err *e)
{
	UProg *q;
	int rc;

	if (!u)
		return err_set(e, "eval: no expression");
	if (!(q = uop_prog_new(&u, 1, bind, nbind, e)))
		return -1;
	rc = uop_prog_run(q, bind, out, e);
	uop_prog_free(q);
	return rc;
}

/* The slot of each of q's variables in p's variable table (matched by name). */
static void
varmap(const Prog *p, const Prog *q, int *map)
{
	int i, k;

	for (i = 0; i < q->nvars; i++) {
		for (k = 0; k < p->nvars && strcmp(p->vars[k]->name, q->vars[i]->name) != 0; k++)
			;
		map[i] = k;
	}
}

int
uop_equivalent(const UOp *a, const UOp *b, int64_t limit, int *equal,
               Buf *cex, UBind *bind, int *nbind, Err *e)
{
	const UOp *roots[2] = { a, b };
	int root[2], i, rc = 0, ea, eb, ra_i, rb_i, *ma = NULL, *mb = NULL;
	int64_t *val = NULL, *va = NULL, *vb = NULL, *r = NULL, points = 1, n, ra = 0, rb = 0, iter = 0;
	Prog p, pa, pb;
	Err e1, e2;

	*equal = 0;
	if (nbind)
		*nbind = 0;
	if (!a || !b)
		return err_set(e, "equivalent: no expression");
	/* p has the union of the variables (and checks their ranges agree);
	** pa and pb run separately, so that an error in one is not the other's */
	if (prog_make(&p, roots, 2, root, e) < 0)
		return -1;
	if (prog_make(&pa, &a, 1, &ra_i, e) < 0) {
		prog_free(&p);
		return -1;
	}
	if (prog_make(&pb, &b, 1, &rb_i, e) < 0) {
		prog_free(&p);
		prog_free(&pa);
		return -1;
	}
	for (i = 0; i < p.nvars; i++) {
		const UOp *v = p.vars[i];
		if (uck_sub(v->arg[1], v->arg[0], &n) < 0 || uck_add(n, 1, &n) < 0
		|| uck_mul(points, n, &points) < 0 || points > limit) {
			rc = err_set(e, "equivalent: more than %lld points to check (variables' ranges "
			             "too large); narrow the ranges, or raise the limit (tessel.limits"
			             "{check_elems = N}, or the limit argument)", (long long)limit);
			goto out;
		}
	}
	val = calloc(p.nvars + 1, sizeof *val);
	va = calloc(pa.nvars + 1, sizeof *va);
	vb = calloc(pb.nvars + 1, sizeof *vb);
	ma = calloc(pa.nvars + 1, sizeof *ma);
	mb = calloc(pb.nvars + 1, sizeof *mb);
	r = calloc(p.n + 1, sizeof *r);
	if (!val || !va || !vb || !ma || !mb || !r) {
		rc = err_set(e, "equivalent: out of memory");
		goto out;
	}
	varmap(&p, &pa, ma);
	varmap(&p, &pb, mb);
	for (i = 0; i < p.nvars; i++)
		val[i] = p.vars[i]->arg[0];
	for (;;) {
		for (i = 0; i < pa.nvars; i++)
			va[i] = val[ma[i]];
		for (i = 0; i < pb.nvars; i++)
			vb[i] = val[mb[i]];
		/* an error (division by zero, overflow) counts as a value of its own */
		ea = run(&pa, va, r, &e1) == 0;
		if (ea)
			ra = r[ra_i];
		eb = run(&pb, vb, r, &e2) == 0;
		if (eb)
			rb = r[rb_i];
		if (ea != eb || (ea && ra != rb)) {
			if (cex) {
				for (i = 0; i < p.nvars; i++)
					emit(cex, "%s%s=%lld", i ? ", " : "", p.vars[i]->name, (long long)val[i]);
				emit(cex, "%s", p.nvars ? ": " : "");
				if (ea)
					emit(cex, "a = %lld, ", (long long)ra);
				else
					emit(cex, "a fails (%s), ", e1.msg);
				if (eb)
					emit(cex, "b = %lld", (long long)rb);
				else
					emit(cex, "b fails (%s)", e2.msg);
			}
			for (i = 0; bind && i < p.nvars && i < 16; i++) {
				bind[i].name = p.vars[i]->name;
				bind[i].value = val[i];
			}
			if (nbind)
				*nbind = p.nvars < 16 ? p.nvars : 16;
			goto out;
		}
		/* next point, first variable fastest; Ctrl-C every 2^16 points */
		if ((++iter & 0xffff) == 0 && (rc = limits_poll(e)) < 0)
			goto out;
		for (i = 0; i < p.nvars; i++) {
			if (val[i] < p.vars[i]->arg[1]) {
				val[i]++;
				break;
			}
			val[i] = p.vars[i]->arg[0];
		}
		if (i == p.nvars)
			break;
	}
	*equal = 1;
out:
	free(val);
	free(va);
	free(vb);
	free(ma);
	free(mb);
	free(r);
	prog_free(&p);
	prog_free(&pa);
	prog_free(&pb);
	return rc;
}
