/* gv.c - Graphviz pictures: DOT text laid out by dot and rendered by gvc, errors caught as messages. */
#include "gv.h"

#include <graphviz/cgraph.h>
#include <graphviz/graphviz_version.h>
#include <graphviz/gvc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../util/limits.h"

struct GvCtx {
	GVC_t *gvc;
};

static const char *const names[GV_NFORMAT] = { "svg", "png", "pdf", "dot" };

int
gv_format(const char *name)
{
	int i;

	if (!name)
		return -1;
	if (strcmp(name, "gv") == 0)
		return GV_DOT;
	for (i = 0; i < GV_NFORMAT; i++)
		if (strcmp(name, names[i]) == 0)
			return i;
	return -1;
}

int
gv_format_of_path(const char *path)
{
	const char *dot = path ? strrchr(path, '.') : NULL;

	if (!dot || strchr(dot, '/'))
		return -1;
	return gv_format(dot + 1);
}

const char *
gv_format_name(int format)
{
	return format >= 0 && format < GV_NFORMAT ? names[format] : "?";
}

GvCtx *
gv_open(Err *e)
{
	GvCtx *c = malloc(sizeof *c);

	if (!c)
		return err_set(e, "viz: out of memory for a Graphviz context"), NULL;
	if (!(c->gvc = gvContext())) {
		free(c);
		return err_set(e, "viz: Graphviz could not create a context (gvContext)"), NULL;
	}
	return c;
}

void
gv_close(GvCtx *c)
{
	if (!c)
		return;
	gvFreeContext(c->gvc);
	free(c);
}

/*
** Graphviz reports errors through one process-wide callback that takes no
** context (agseterrf), so the render in progress on this thread says where
** its messages go. This is the only mutable static of tessel, and it is
** set only for the duration of one gv_render.
*/
static _Thread_local Buf *sink;

static int
collect(char *msg)
{
	if (sink)
		emit(sink, "%s", msg);
	return 0;
}

/* Graphviz 2.42 (Debian 12) takes unsigned int *, 3.0 and later size_t *:
** the one place that knows. */
static int
render_data(GVC_t *gvc, Agraph_t *g, const char *format, char **data, size_t *len)
{
#if defined(GRAPHVIZ_VERSION_MAJOR) && GRAPHVIZ_VERSION_MAJOR >= 3
	return gvRenderData(gvc, g, format, data, len);
#else
	unsigned int n = 0;
	int rc = gvRenderData(gvc, g, format, data, &n);

	*len = n;
	return rc;
#endif
}

/*
** The picture's pixels at 96 dpi from the bounding box gvLayout leaves in the
** graph's bb attribute (points: "llx,lly,urx,ury"; the attribute, not GD_bb,
** as types.h is no longer public in later Graphviz), against the pixels limit.
*/
static int
check_pixels(Agraph_t *g, Err *e)
{
	const char *bb = agget(g, "bb");
	double x0, y0, x1, y1, w, h;

	if (!bb || sscanf(bb, "%lf%*[ ,]%lf%*[ ,]%lf%*[ ,]%lf", &x0, &y0, &x1, &y1) != 4)
		return 0;
	w = (x1 - x0) * 96 / 72 + 1;
	h = (y1 - y0) * 96 / 72 + 1;
	if (!(w * h < 9e18))
		return limits_check(LIMIT_PIXELS, INT64_MAX, "the picture", e);
	return limits_check(LIMIT_PIXELS, (int64_t)(w * h), "the picture", e);
}

/* Graphviz's messages as one line: "Error: " prefixes and newlines folded. */
static int
gv_fail(Err *e, const char *what, Buf *msgs)
{
	char *p, *q;

	for (p = msgs->s; p && (q = strchr(p, '\n')); p = q)
		*q = q[1] ? ' ' : '\0';
	p = msgs->s ? msgs->s : "";
	if (strncmp(p, "Error: ", 7) == 0)
		p += 7;
	err_set(e, "viz: Graphviz %s failed%s%s", what, *p ? ": " : "", p);
	buf_free(msgs);
	return -1;
}

/*
** Every path frees what it made, in reverse order of creation: the
** rendered data, the layout, the graph; the error callback is restored last.
*/
int
gv_render(GvCtx *c, const char *dot, int format, Buf *out, Err *e)
{
	agusererrf prev_f;
	agerrlevel_t prev_l;
	Agraph_t *g;
	Buf msgs;
	char *data = NULL;
	size_t len = 0;
	int rc = -1;

	if (!c || !dot || !out)
		return err_set(e, "viz: gv_render needs a context, DOT text and an output buffer");
	if (format < 0 || format >= GV_NFORMAT)
		return err_set(e, "viz: unknown output format %d", format);
	if (format == GV_DOT) {
		emit(out, "%s", dot);
		return out->oom ? err_set(e, "viz: out of memory") : 0;
	}
	buf_init(&msgs);
	sink = &msgs;
	prev_f = agseterrf(collect);
	prev_l = agseterr(AGWARN);
	agreseterrors();
	if (!(g = agmemread(dot))) {
		gv_fail(e, "could not read the DOT text", &msgs);
		goto restore;
	}
	if (gvLayout(c->gvc, g, "dot") != 0 || agreseterrors() >= AGERR) {
		gv_fail(e, "layout", &msgs);
		gvFreeLayout(c->gvc, g);
		agclose(g);
		goto restore;
	}
	if (check_pixels(g, e) < 0) {
		buf_free(&msgs);
		gvFreeLayout(c->gvc, g);
		agclose(g);
		goto restore;
	}
	if (render_data(c->gvc, g, names[format], &data, &len) != 0 || agreseterrors() >= AGERR) {
		gv_fail(e, "rendering", &msgs);
		if (data)
			gvFreeRenderData(data);
		gvFreeLayout(c->gvc, g);
		agclose(g);
		goto restore;
	}
	emitn(out, data, len);
	gvFreeRenderData(data);
	gvFreeLayout(c->gvc, g);
	agclose(g);
	buf_free(&msgs);
	rc = out->oom ? err_set(e, "viz: out of memory for a %zu-byte picture", len) : 0;
restore:
	agseterr(prev_l);
	agseterrf(prev_f);
	sink = NULL;
	return rc;
}

int
gv_render_scene(GvCtx *c, const Scene *s, int format, Buf *out, Err *e)
{
	Buf dot;
	int rc;

	buf_init(&dot);
	if (dot_render(&dot, s, e) < 0) {
		buf_free(&dot);
		return -1;
	}
	rc = gv_render(c, dot.s ? dot.s : "", format, out, e);
	buf_free(&dot);
	return rc;
}
