/* test_gv.c - cmocka tests of DOT text (golden files), Graphviz output (SVG, PNG, PDF) and DAG scenes. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../viz/gv.h"

/* One Graphviz context for the whole group, as a session has one. */
static GvCtx *gv;

static int
group_setup(void **state)
{
	Err e;

	gv = gv_open(&e);
	if (!gv)
		fprintf(stderr, "gv_open: %s\n", e.msg);
	return gv ? 0 : -1;
}

static int
group_teardown(void **state)
{
	gv_close(gv);
	gv = NULL;
	return 0;
}

static Layout
L(const char *s)
{
	Layout l;
	Err e;

	if (cute_parse(s, &l, &e) < 0)
		fail_msg("cute_parse %s: %s", s, e.msg);
	return l;
}

static int
count(const char *s, size_t n, const char *sub)
{
	size_t k = strlen(sub), i;
	int c = 0;

	for (i = 0; i + k <= n; i++)
		if (memcmp(s + i, sub, k) == 0)
			c++;
	return c;
}

/* Compare with tests/golden/NAME, or write it when TESSEL_GOLDEN_UPDATE is set. */
static void
golden(const char *name, const char *got)
{
	char path[256], *want;
	FILE *f;
	long n;

	snprintf(path, sizeof path, "tests/golden/%s", name);
	if (getenv("TESSEL_GOLDEN_UPDATE")) {
		f = fopen(path, "wb");
		assert_non_null(f);
		fputs(got, f);
		fclose(f);
		return;
	}
	f = fopen(path, "rb");
	if (!f)
		fail_msg("%s is missing (run with TESSEL_GOLDEN_UPDATE=1 to write it)", path);
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	fseek(f, 0, SEEK_SET);
	want = malloc((size_t)n + 1);
	assert_non_null(want);
	assert_int_equal(fread(want, 1, (size_t)n, f), (size_t)n);
	want[n] = '\0';
	fclose(f);
	if (strcmp(want, got) != 0) {
		free(want);
		fail_msg("DOT text differs from %s:\n%s", path, got);
	}
	free(want);
}

static char *
dot_of(Scene *s)
{
	Buf b;
	Err e;

	buf_init(&b);
	if (dot_render(&b, s, &e) < 0)
		fail_msg("dot_render: %s", e.msg);
	return buf_take(&b);
}

static void
test_golden_layout(void **state)
{
	Layout l = L("(4,2):(1,4)");
	Scene s;
	Err e;
	char *d;

	assert_int_equal(cute_scene_layout(&s, &l, NULL, &e), 0);
	d = dot_of(&s);
	golden("layout_4x2.dot", d);
	/* the picture's cells: 8 values, with CuTe's greys; 3 and 7 on dark fills in white */
	assert_non_null(strstr(d, "<TD BGCOLOR=\"#4d4d4d\"><FONT COLOR=\"#ffffff\">7</FONT></TD>"));
	free(d);
	scene_free(&s);
}

static void
test_golden_tv(void **state)
{
	Layout tv = L("(2,2):(1,2)");
	Scene s;
	Err e;
	char *d;

	assert_int_equal(cute_scene_tv(&s, &tv, 2, 2, NULL, &e), 0);
	d = dot_of(&s);
	golden("tv_2x2.dot", d);
	assert_int_equal(count(d, strlen(d), "T1<BR/>V0"), 1);
	free(d);
	scene_free(&s);
}

static void
test_golden_composed(void **state)
{
	Composed c;
	Scene s;
	Err e;
	VizOpts o;
	char *d;

	assert_int_equal(composed_parse("Sw<1,0,1> o 0 o (2,4):(4,1)", &c, &e), 0);
	viz_opts_default(&o);
	o.elem_bytes = 4;
	assert_int_equal(cute_scene_composed(&s, &c, &o, &e), 0);
	d = dot_of(&s);
	golden("composed_bank.dot", d);
	assert_non_null(strstr(d, "banks: reading rows"));
	free(d);
	scene_free(&s);
}

/* A small DAG: text, record and HTML nodes, ports, labels, a dashed edge. */
static void
dag(Scene *s)
{
	Err e;
	int a, b, c;

	scene_init(s);
	scene_note(&s->title, "x*4 + y");
	assert_true((a = scene_node(s, VIZ_NODE_TEXT, "x\ni32 [0,7]", &e)) >= 0);
	assert_true((b = scene_node(s, VIZ_NODE_RECORD, "{<l>a|MUL|<r>b}", &e)) >= 0);
	assert_true((c = scene_node(s, VIZ_NODE_HTML, "<B>ADD</B> \"sum\"", &e)) >= 0);
	s->node[a].fill = 0xafafff;
	assert_int_equal(scene_edge(s, a, NULL, b, "l", "src 0", &e), 0);
	assert_int_equal(scene_edge(s, b, "", c, NULL, NULL, &e), 0);
	s->edge[1].dashed = 1;
}

static void
test_golden_dag(void **state)
{
	Scene s;
	char *d;

	dag(&s);
	d = dot_of(&s);
	golden("dag.dot", d);
	free(d);
	scene_free(&s);
}

/*
** A small XML well-formedness check: tags nest and close, attributes are
** quoted, comments, declarations and processing instructions are skipped.
** Returns the number of elements, or -1.
*/
static int
xml_elements(const char *s)
{
	const char *stack[256];
	size_t len[256];
	int depth = 0, n = 0;

	while ((s = strchr(s, '<'))) {
		if (strncmp(s, "<!--", 4) == 0) {
			if (!(s = strstr(s, "-->")))
				return -1;
			continue;
		}
		if (s[1] == '?' || s[1] == '!') {
			if (!(s = strchr(s, '>')))
				return -1;
			continue;
		}
		if (s[1] == '/') {
			size_t k = strcspn(s + 2, " \t\n>");
			if (depth == 0 || k != len[depth - 1] || strncmp(s + 2, stack[depth - 1], k) != 0)
				return -1;
			depth--;
			s = strchr(s, '>');
			if (!s)
				return -1;
			continue;
		}
		{
			const char *name = s + 1, *p;
			size_t k = strcspn(name, " \t\n/>");

			if (k == 0)
				return -1;
			for (p = name + k; *p && *p != '>'; p++) {
				if (*p == '"' || *p == '\'') {
					const char *q = strchr(p + 1, *p);
					if (!q)
						return -1;
					p = q;
				}
			}
			if (!*p)
				return -1;
			n++;
			if (p[-1] != '/') {
				if (depth == 256)
					return -1;
				stack[depth] = name;
				len[depth++] = k;
			}
			s = p;
		}
	}
	return depth == 0 ? n : -1;
}

static void
render(Scene *s, int format, Buf *out)
{
	Err e;

	buf_init(out);
	if (gv_render_scene(gv, s, format, out, &e) < 0)
		fail_msg("gv_render_scene %s: %s", gv_format_name(format), e.msg);
}

static void
test_svg(void **state)
{
	Layout l = L("(4,2):(1,4)");
	Scene s;
	Buf out;
	Err e;

	assert_int_equal(cute_scene_layout(&s, &l, NULL, &e), 0);
	render(&s, GV_SVG, &out);
	assert_true(xml_elements(out.s) > 10);
	/* text items: the title, 2 column and 4 row indices, 8 cells */
	assert_int_equal(count(out.s, out.len, "<text "), 1 + 2 + 4 + 8);
	assert_non_null(strstr(out.s, ">7</text>"));
	/* the 8 filled cells: every grey of CuTe's palette once */
	assert_int_equal(count(out.s, out.len, "fill=\"#4d4d4d\""), 1);
	assert_int_equal(count(out.s, out.len, "fill=\"#e6e6e6\""), 1);
	buf_free(&out);
	scene_free(&s);

	dag(&s);
	render(&s, GV_SVG, &out);
	assert_true(xml_elements(out.s) > 0);
	assert_int_equal(count(out.s, out.len, "class=\"node\""), 3);
	assert_int_equal(count(out.s, out.len, "class=\"edge\""), 2);
	assert_non_null(strstr(out.s, "stroke-dasharray"));
	buf_free(&out);
	scene_free(&s);
}

static void
test_png_pdf_dot(void **state)
{
	Layout l = L("(8,8):(8,1)");
	Scene s;
	Buf out;
	Err e;

	assert_int_equal(cute_scene_layout(&s, &l, NULL, &e), 0);
	render(&s, GV_PNG, &out);
	assert_true(out.len > 1000);
	assert_memory_equal(out.s, "\x89PNG\r\n\x1a\n", 8);
	buf_free(&out);
	render(&s, GV_PDF, &out);
	assert_true(out.len > 1000);
	assert_memory_equal(out.s, "%PDF-", 5);
	buf_free(&out);
	render(&s, GV_DOT, &out);
	assert_memory_equal(out.s, "digraph tessel {", 16);
	buf_free(&out);
	scene_free(&s);
}

static void
test_formats(void **state)
{
	assert_int_equal(gv_format_of_path("a/b.svg"), GV_SVG);
	assert_int_equal(gv_format_of_path("x.png"), GV_PNG);
	assert_int_equal(gv_format_of_path("x.pdf"), GV_PDF);
	assert_int_equal(gv_format_of_path("x.gv"), GV_DOT);
	assert_int_equal(gv_format_of_path("x.dot"), GV_DOT);
	assert_int_equal(gv_format_of_path("x.jpeg"), -1);
	assert_int_equal(gv_format_of_path("dir.svg/x"), -1);
	assert_int_equal(gv_format_of_path("noext"), -1);
	assert_int_equal(gv_format_of_path(NULL), -1);
	assert_string_equal(gv_format_name(GV_PDF), "pdf");
}

static void
test_graphviz_errors(void **state)
{
	Buf out;
	Err e;

	buf_init(&out);
	assert_int_equal(gv_render(gv, "digraph { a -> ", GV_SVG, &out, &e), -1);
	assert_non_null(strstr(e.msg, "viz: Graphviz could not read the DOT text"));
	assert_non_null(strstr(e.msg, "syntax error"));
	assert_int_equal(out.len, 0);
	/* a malformed HTML label: Graphviz recovers and draws text, tessel refuses */
	assert_int_equal(gv_render(gv, "digraph { a [label=<<TABLE><TR></TABLE>>] }", GV_SVG, &out, &e), -1);
	assert_non_null(strstr(e.msg, "viz: Graphviz layout failed"));
	assert_int_equal(out.len, 0);
	assert_int_equal(gv_render(gv, "digraph { a }", 99, &out, &e), -1);
	assert_string_equal(e.msg, "viz: unknown output format 99");
	/* and the context still works afterwards */
	assert_int_equal(gv_render(gv, "digraph { a -> b }", GV_SVG, &out, &e), 0);
	assert_true(xml_elements(out.s) > 0);
	buf_free(&out);
}

static void
test_too_large(void **state)
{
	Layout l = L("(300,2):(1,300)");
	VizOpts o;
	Scene s;
	Buf out;
	Err e;

	viz_opts_default(&o);
	o.max_rows = 300;
	assert_int_equal(cute_scene_layout(&s, &l, &o, &e), 0);
	buf_init(&out);
	assert_int_equal(gv_render_scene(gv, &s, GV_SVG, &out, &e), -1);
	assert_string_equal(e.msg, "viz.render: panel 0 is a 300x2 grid; Graphviz pictures show at most "
	                    "256x256 cells (pass max_rows and max_cols of at most 256)");
	assert_int_equal(out.len, 0);
	scene_free(&s);
	/* at 256 it is elided, and the caption says so */
	o.max_rows = VIZ_GV_MAX_DIM;
	assert_int_equal(cute_scene_layout(&s, &l, &o, &e), 0);
	assert_non_null(strstr(s.grid[0].caption.s, "showing 256 of 300 rows"));
	assert_int_equal(dot_render(&out, &s, &e), 0);
	buf_free(&out);
	scene_free(&s);
}

static void
test_dag_api(void **state)
{
	Scene s;
	Err e;
	Buf b;
	int i;

	scene_init(&s);
	assert_int_equal(scene_node(&s, 7, "x", &e), -1);
	assert_string_equal(e.msg, "scene: unknown node kind 7");
	assert_int_equal(scene_node(&s, VIZ_NODE_TEXT, "a", &e), 0);
	assert_int_equal(scene_edge(&s, 0, NULL, 1, NULL, NULL, &e), -1);
	assert_string_equal(e.msg, "scene: edge 0 -> 1 names a node outside 0..0");
	for (i = 1; i < VIZ_GV_MAX_NODES; i++)
		assert_int_equal(scene_node(&s, VIZ_NODE_TEXT, "n", &e), i);
	assert_int_equal(scene_node(&s, VIZ_NODE_TEXT, "one too many", &e), -1);
	assert_string_equal(e.msg, "scene: more than 4096 nodes");
	scene_free(&s);
	scene_free(&s);

	/* the terminal lists a DAG */
	dag(&s);
	buf_init(&b);
	assert_int_equal(term_render(&b, &s, NULL, &e), 0);
	assert_string_equal(b.s, "x*4 + y\n3 nodes, 2 edges (viz.render draws the graph)\n"
	                    "  n0  x  i32 [0,7]  -> n1:l [src 0]\n  n1  {<l>a|MUL|<r>b}  -> n2\n"
	                    "  n2  <B>ADD</B> \"sum\"\n");
	buf_free(&b);
	scene_free(&s);
}

/* A grid drawn as a DAG node, with an edge into one of its cells' ports. */
static void
test_grid_node(void **state)
{
	Layout l = L("(2,2):(1,2)");
	Scene s;
	Err e;
	int k;
	char *d;

	assert_int_equal(cute_scene_layout(&s, &l, NULL, &e), 0);
	snprintf(scene_cell(&s.grid[0], 1, 1)->port, VIZ_PORT, "c11");
	assert_true((k = scene_node(&s, VIZ_NODE_TEXT, "ptr", &e)) >= 0);
	assert_true(scene_node(&s, VIZ_NODE_TEXT, "", &e) == k + 1);
	s.node[k + 1].grid = 0;
	assert_int_equal(scene_edge(&s, k, NULL, k + 1, "c11", NULL, &e), 0);
	d = dot_of(&s);
	assert_null(strstr(d, "panels ["));
	assert_non_null(strstr(d, "PORT=\"c11\""));
	assert_non_null(strstr(d, "n0 -> n1:\"c11\";"));
	free(d);
	scene_free(&s);
}

static int
checker(void *ctx, const Grid *g, int r, int c, const Cell *cell, int32_t *rgb, Err *e)
{
	int *calls = ctx;

	(*calls)++;
	if (cell->value == 99)
		return err_set(e, "value 99");
	*rgb = (r + c) % 2 ? 0x000000 : 0xffcc00;
	return 0;
}

static void
test_schemes(void **state)
{
	Layout l = L("(4,16):(16,1)"), tv = L("(64,1):(1,0)");
	VizOpts o;
	Scene s;
	Err e;
	int calls = 0;

	viz_opts_default(&o);
	o.scheme = VIZ_SCHEME_WARP;
	assert_int_equal(cute_scene_layout(&s, &l, &o, &e), 0);
	/* value 33 (row 2, column 1) is in warp 1 */
	assert_int_equal(scene_cell(&s.grid[0], 2, 1)->color, 1);
	assert_int_equal(scene_cell(&s.grid[0], 1, 15)->color, 0);
	assert_int_equal(scene_colorize(&s, checker, &calls, &e), 0);
	assert_int_equal(calls, 64);
	assert_int_equal(s.grid[0].scheme, VIZ_SCHEME_RGB);
	assert_int_equal(scene_rgb(VIZ_SCHEME_RGB, scene_cell(&s.grid[0], 0, 0)->color), 0xffcc00);
	assert_int_equal(scene_rgb(VIZ_SCHEME_RGB, scene_cell(&s.grid[0], 0, 1)->color), 0);
	scene_cell(&s.grid[0], 3, 3)->value = 99;
	assert_int_equal(scene_colorize(&s, checker, &calls, &e), -1);
	assert_string_equal(e.msg, "value 99");
	scene_free(&s);

	o.scheme = VIZ_SCHEME_DEVICE;
	assert_int_equal(cute_scene_tv(&s, &tv, 8, 8, &o, &e), 0);
	assert_int_equal(scene_cell(&s.grid[0], 3, 1)->color, 11 % 8);
	assert_int_equal(scene_rgb(VIZ_SCHEME_DEVICE, 0), 0x9ecae1);
	scene_free(&s);
	o.scheme = VIZ_SCHEME_WARP;
	assert_int_equal(cute_scene_tv(&s, &tv, 8, 8, &o, &e), 0);
	assert_int_equal(scene_cell(&s.grid[0], 7, 7)->color, 1);   /* thread 63 */
	scene_free(&s);

	assert_int_equal(viz_scheme_parse("bank"), VIZ_SCHEME_BANK);
	assert_int_equal(viz_scheme_parse("rgb"), -1);
	assert_string_equal(viz_scheme_name(VIZ_SCHEME_DEVICE), "device");
	assert_int_equal(viz_dtype_bytes("bf16"), 2);
	assert_int_equal(viz_dtype_bytes("f64"), 8);
	assert_int_equal(viz_dtype_bytes("f17"), -1);
}

static void
test_copy(void **state)
{
	Layout src = L("((8,4),4):((1,32),8)"), dst = L("((2,16),4):((4,8),1)"), bad = L("8:2"),
	       ok8 = L("8:1");
	Scene s;
	Err e;

	assert_int_equal(cute_scene_copy(&s, &src, &dst, 8, 16, NULL, &e), 0);
	assert_int_equal(s.ngrid, 2);
	assert_int_equal(s.grid[0].pcol, 0);
	assert_int_equal(s.grid[1].pcol, 1);
	/* (thr,val) = (5,2): source index 5 + 8*2 (row 5, column 2); destination 4 + 2 + 8*2 */
	assert_int_equal(scene_cell(&s.grid[0], 5, 2)->value, 5);
	assert_int_equal(scene_cell(&s.grid[0], 5, 2)->aux, 2);
	assert_int_equal(scene_cell(&s.grid[1], 6, 2)->value, 5);
	assert_int_equal(scene_cell(&s.grid[1], 6, 2)->aux, 2);
	scene_free(&s);
	assert_int_equal(cute_scene_copy(&s, &src, &bad, 8, 16, NULL, &e), 0);
	assert_non_null(strstr(s.grid[1].caption.s, "120 cells are not mapped"));
	scene_free(&s);
	assert_int_equal(cute_scene_copy(&s, &ok8, &bad, 2, 4, NULL, &e), -1);
	assert_string_equal(e.msg, "viz.copy: destination layout 8:2 maps (thr,val) = (4,0) to index 8, "
	                    "outside the 2x4 tile");
	assert_int_equal(s.ngrid, 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_golden_layout),
		cmocka_unit_test(test_golden_tv),
		cmocka_unit_test(test_golden_composed),
		cmocka_unit_test(test_golden_dag),
		cmocka_unit_test(test_svg),
		cmocka_unit_test(test_png_pdf_dot),
		cmocka_unit_test(test_formats),
		cmocka_unit_test(test_graphviz_errors),
		cmocka_unit_test(test_too_large),
		cmocka_unit_test(test_dag_api),
		cmocka_unit_test(test_grid_node),
		cmocka_unit_test(test_schemes),
		cmocka_unit_test(test_copy),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
