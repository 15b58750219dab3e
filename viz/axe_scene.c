/* axe_scene.c - scenes from Axe layouts: the logical grid labelled by thread and device coordinates. */
#include "viz.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int
shown(int64_t full, int max)
{
	return full < max ? (int)full : max;
}

static int
fail(Scene *s, const char *op, Err *e)
{
	scene_free(s);
	(void)op;
	(void)e;
	return -1;
}

/* The axes the cells show: every non-memory axis, or all axes when there are none. */
static void
label_axes(const AxeLayout *l, AxeAxes *lab)
{
	AxeAxes ax;
	int i;

	axe_axes(l, &ax);
	lab->n = 0;
	for (i = 0; i < ax.n; i++)
		if (axe_axis_kind(ax.name[i]) != AXE_MEMORY)
			axe_axes_add(lab, ax.name[i], NULL);
	if (lab->n == 0)
		*lab = ax;
}

/* "+4@warp" or "+(1@lane,4@warp)" for replica j. */
static void
replica_text(Buf *b, const AxeLayout *l, int64_t j)
{
	AxeAxes ax;
	int64_t v[AXE_AXES] = {0};
	int i, k, n = 0;

	axe_axes(l, &ax);
	for (i = l->nr - 1; i >= 0; i--) {
		int64_t d = j % l->r[i].e;
		j /= l->r[i].e;
		v[axe_axes_index(&ax, l->r[i].axis)] += d * l->r[i].s;
	}
	for (i = 0; i < ax.n; i++)
		n += v[i] != 0;
	emit(b, n > 1 ? "+(" : "+");
	for (i = 0, k = 0; i < ax.n; i++)
		if (v[i] != 0)
			emit(b, "%s%lld@%s", k++ ? "," : "", (long long)v[i], ax.name[i]);
	if (n > 1)
		emit(b, ")");
	if (n == 0)
		emit(b, "0");
}

/* For layouts with device axes: which device holds which block of the grid. */
static int
device_notes(Scene *s, const AxeLayout *l, int64_t rows, int64_t cols, Err *e)
{
	enum { MAXDEV = 16 };
	AxeAxes ax;
	int dev[AXE_AXES], nd = 0, i, k, ndev = 0, more = 0;
	struct {
		int64_t key[AXE_AXES], r0, r1, c0, c1, count;
	} d[MAXDEV];
	int64_t size = axe_size(l), x, nrep = axe_nreplicas(l);
	AxeCoord *c;
	int n;

	axe_axes(l, &ax);
	for (i = 0; i < ax.n; i++)
		if (axe_axis_kind(ax.name[i]) == AXE_DEVICE)
			dev[nd++] = i;
	if (nd == 0)
		return 0;
	if (size > AXE_ENUM_LIMIT / nrep) {
		scene_note(&s->caption, "devices not listed: %lld elements are too many", (long long)size);
		return 0;
	}
	if (!(c = malloc((size_t)nrep * sizeof *c)))
		return err_set(e, "axe.show: out of memory");
	for (x = 0; x < size; x++) {
		if (axe_apply(l, x, c, (int)nrep, &n, e) < 0) {
			free(c);
			return -1;
		}
		for (k = 0; k < n; k++) {
			int j, hit = -1;
			for (j = 0; j < ndev && hit < 0; j++) {
				int same = 1;
				for (i = 0; i < nd && same; i++)
					same = d[j].key[i] == c[k].v[dev[i]];
				if (same)
					hit = j;
			}
			if (hit < 0) {
				if (ndev == MAXDEV) {
					more = 1;
					continue;
				}
				hit = ndev++;
				for (i = 0; i < nd; i++)
					d[hit].key[i] = c[k].v[dev[i]];
				d[hit].r0 = d[hit].r1 = x / cols;
				d[hit].c0 = d[hit].c1 = x % cols;
				d[hit].count = 0;
			}
			d[hit].count++;
			if (x / cols < d[hit].r0) d[hit].r0 = x / cols;
			if (x / cols > d[hit].r1) d[hit].r1 = x / cols;
			if (x % cols < d[hit].c0) d[hit].c0 = x % cols;
			if (x % cols > d[hit].c1) d[hit].c1 = x % cols;
		}
	}
	free(c);
	for (k = 0; k < ndev; k++) {
		Buf b;
		buf_init(&b);
		for (i = 0; i < nd; i++)
			emit(&b, "%s%s=%lld", i ? " " : "", ax.name[dev[i]], (long long)d[k].key[i]);
		if (rows > 1)
			scene_note(&s->caption, "%s holds %lld elements in rows %lld-%lld, columns %lld-%lld",
			           b.s ? b.s : "", (long long)d[k].count, (long long)d[k].r0,
			           (long long)d[k].r1, (long long)d[k].c0, (long long)d[k].c1);
		else
			scene_note(&s->caption, "%s holds %lld elements in %lld-%lld", b.s ? b.s : "",
			           (long long)d[k].count, (long long)d[k].c0, (long long)d[k].c1);
		buf_free(&b);
	}
	if (more)
		scene_note(&s->caption, "(more than %d devices; the first %d are listed)", MAXDEV, MAXDEV);
	return 0;
}

int
axe_scene_layout(Scene *s, const AxeLayout *l, const AxeShape *sh, const char *color_axis,
                 const AxeAxes *labels, const VizOpts *o, Err *e)
{
	const char *op = "axe.show";
	VizOpts d;
	AxeAxes ax, lab;
	int64_t rows, cols, size, v[AXE_AXES];
	int r, c, i, col = -1, scheme;
	Grid *g;
	Buf t;

	if (!s)
		return err_set(e, "%s: no scene", op);
	scene_init(s);
	if (!l)
		return err_set(e, "%s: no layout", op);
	if (o) {
		if (viz_opts_check(o, op, e) < 0)
			return -1;
	} else {
		viz_opts_default(&d);
		o = &d;
	}
	if (axe_check(l, e) < 0)
		return -1;
	size = axe_size(l);
	if (sh) {
		int64_t p = 1;
		for (i = 0; i < sh->n; i++)
			p *= sh->v[i];
		if (sh->n < 1 || p != size)
			return err_set(e, "%s: the shape's size is not the layout's %lld", op, (long long)size);
		rows = sh->n >= 2 ? sh->v[0] : 1;
		cols = size / rows;
	} else {
		rows = 1;
		cols = size;
	}
	axe_axes(l, &ax);
	if (labels && labels->n > 0) {
		lab = *labels;
		for (i = 0; i < lab.n; i++)
			if (axe_axes_index(&ax, lab.name[i]) < 0)
				return err_set(e, "%s: the layout has no axis %s to label with", op, lab.name[i]);
	} else {
		label_axes(l, &lab);
	}
	if (color_axis && *color_axis) {
		if ((col = axe_axes_index(&ax, color_axis)) < 0)
			return err_set(e, "%s: the layout has no axis %s to colour by", op, color_axis);
	} else {
		for (i = 0; i < ax.n && col < 0; i++)
			if (axe_axis_kind(ax.name[i]) != AXE_MEMORY)
				col = i;
	}
	scheme = o->scheme == VIZ_SCHEME_NONE || col < 0 ? VIZ_SCHEME_NONE : VIZ_SCHEME_THREAD;
	axe_print(&s->title, l);
	if (sh) {
		emit(&s->title, "  shape ");
		axe_shape_print(&s->title, sh);
	}
	buf_init(&t);
	for (i = 0; i < lab.n; i++)
		emit(&t, "%s%s", i ? (i < 3 ? " / " : ",") : "", lab.name[i]);
	scene_note(&s->title, "cells: %s%s%s%s", t.s ? t.s : "",
	           l->nr ? " of replica 0" : "", col >= 0 ? "; colour: " : "", col >= 0 ? ax.name[col] : "");
	buf_free(&t);
	if (!(g = scene_grid(s, shown(rows, o->max_rows), shown(cols, o->max_cols), 0, 0, e)))
		return fail(s, op, e);
	g->nrows = rows;
	g->ncols = cols;
	g->scheme = scheme;
	g->align = VIZ_ALIGN_CENTER;
	for (r = 0; r < g->rows; r++)
		for (c = 0; c < g->cols; c++) {
			Cell *cell = scene_cell(g, r, c);
			char line[VIZ_LABEL];
			int n = 0;
			if (axe_base(l, r * cols + c, &ax, v, e) < 0)
				return fail(s, op, e);
			for (i = 0; i < lab.n; i++) {
				int64_t val = v[axe_axes_index(&ax, lab.name[i])];
				if (i < VIZ_LINES - 1 || lab.n == VIZ_LINES) {
					scene_label(cell, "%lld", (long long)val);
				} else {
					/* the last line carries every remaining axis */
					n += snprintf(line + n, sizeof line - (size_t)n, "%s%lld", n ? "," : "",
					              (long long)val);
					if (n >= (int)sizeof line)
						n = (int)sizeof line - 1;
				}
			}
			if (lab.n > VIZ_LINES)
				scene_label(cell, "%s", line);
			if (col >= 0) {
				cell->value = v[col];
				if (scheme != VIZ_SCHEME_NONE)
					cell->color = (int)(((v[col] % 8) + 8) % 8);
			}
		}
	if (sh && sh->n >= 3)
		scene_note(&g->caption, "rank %d: modes 1..%d grouped into the columns (%lld columns)", sh->n,
		           sh->n - 1, (long long)cols);
	if (g->rows < rows || g->cols < cols)
		scene_note(&g->caption, "elided: showing %d of %lld rows and %d of %lld columns", g->rows,
		           (long long)rows, g->cols, (long long)cols);
	if (l->nr) {
		int64_t nrep = axe_nreplicas(l), j;
		Buf b;
		buf_init(&b);
		for (j = 1; j < nrep && j < 9; j++) {
			emit(&b, "%s", j > 1 ? ", " : "");
			replica_text(&b, l, j);
		}
		scene_note(&s->caption, "replicas: every element is also held at %s%s (R = ", b.s ? b.s : "",
		           nrep > 9 ? ", ..." : "");
		buf_free(&b);
		{
			AxeLayout ronly = *l;
			Buf rb;
			buf_init(&rb);
			ronly.nd = 0;
			ronly.no = 0;
			axe_print(&rb, &ronly);
			/* "S[1:1] + R[...]": keep the R part */
			emit(&s->caption, "%s)", rb.s && strstr(rb.s, "R[") ? strstr(rb.s, "R[") : "");
			buf_free(&rb);
		}
	}
	if (device_notes(s, l, rows, cols, e) < 0)
		return fail(s, op, e);
	if (scene_oom(s)) {
		scene_free(s);
		return err_set(e, "%s: out of memory", op);
	}
	return 0;
}

int
viz_show_axe(Buf *out, const AxeLayout *l, const AxeShape *sh, const char *color_axis,
             const AxeAxes *labels, const VizOpts *o, Err *e)
{
	Scene s;
	int r;

	if (axe_scene_layout(&s, l, sh, color_axis, labels, o, e) < 0)
		return -1;
	r = term_render(out, &s, o, e);
	scene_free(&s);
	return r;
}
