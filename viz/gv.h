/* gv.h - Graphviz pictures of scenes: the one module that includes Graphviz (cgraph + gvc). */
#ifndef TESSEL_GV_H
#define TESSEL_GV_H

#include "viz.h"

/*
** Output formats, chosen by a file's extension or by name. GV_DOT is the
** DOT text of dot_render itself (the input Graphviz lays out), so a .dot
** file is what viz.dot returns and what the dot program would read.
*/
enum { GV_SVG, GV_PNG, GV_PDF, GV_DOT, GV_NFORMAT };

/* A Graphviz context (GVC_t with its plugins), one per session: opening
** one loads the plugins, which costs milliseconds. */
typedef struct GvCtx GvCtx;

/* gv.c */
/* The format named "svg", "png", "pdf", "dot" ("gv" is dot), or -1. */
int gv_format(const char *name);
/* The format of a path by its extension, or -1 (no extension, or unknown). */
int gv_format_of_path(const char *path);
const char *gv_format_name(int format);
/* A new context, or NULL with a message. gv_close is NULL-safe. */
GvCtx *gv_open(Err *e);
void gv_close(GvCtx *c);
/*
** Lay out DOT text with dot and append the picture in format to out
** (binary for PNG and PDF: out->len counts the bytes). 0, or -1 with
** Graphviz's own messages (nothing appended). Any Graphviz error, even one
** it recovers from (a malformed HTML label drawn as text), fails.
*/
int gv_render(GvCtx *c, const char *dot, int format, Buf *out, Err *e);
/* dot_render, then gv_render (or the text itself for GV_DOT). */
int gv_render_scene(GvCtx *c, const Scene *s, int format, Buf *out, Err *e);

#endif
