/* buf.c - growable text buffers and error records. */
#include "buf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int
err_set(Err *e, const char *fmt, ...)
{
	va_list ap;

	if (e) {
		va_start(ap, fmt);
		vsnprintf(e->msg, sizeof e->msg, fmt, ap);
		va_end(ap);
	}
	return -1;
}

void
buf_init(Buf *b)
{
	b->s = NULL;
	b->len = b->cap = 0;
	b->oom = 0;
}

void
buf_free(Buf *b)
{
	free(b->s);
	buf_init(b);
}

void
buf_reset(Buf *b)
{
	b->len = 0;
	if (b->s)
		b->s[0] = '\0';
}

static int
reserve(Buf *b, size_t extra)
{
	size_t need, cap;
	char *s;

	if (b->oom)
		return -1;
	need = b->len + extra + 1;
	if (need <= b->cap)
		return 0;
	cap = b->cap ? b->cap : 64;
	while (cap < need)
		cap *= 2;
	s = realloc(b->s, cap);
	if (!s) {
		b->oom = 1;
		return -1;
	}
	b->s = s;
	b->cap = cap;
	return 0;
}

void
emitn(Buf *b, const char *s, size_t n)
{
	if (reserve(b, n) < 0)
		return;
	memcpy(b->s + b->len, s, n);
	b->len += n;
	b->s[b->len] = '\0';
}

void
vemit(Buf *b, const char *fmt, va_list ap)
{
	va_list aq;
	int n;

	va_copy(aq, ap);
	n = vsnprintf(NULL, 0, fmt, aq);
	va_end(aq);
	if (n < 0 || reserve(b, (size_t)n) < 0)
		return;
	vsnprintf(b->s + b->len, (size_t)n + 1, fmt, ap);
	b->len += (size_t)n;
}

void
emit(Buf *b, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vemit(b, fmt, ap);
	va_end(ap);
}

char *
buf_take(Buf *b)
{
	char *s;

	if (!b->s && reserve(b, 0) < 0)
		return NULL;
	s = b->s;
	buf_init(b);
	return s;
}

int
num_digits(int64_t v)
{
	int n = v < 0 ? 2 : 1;

	while (v >= 10 || v <= -10) {
		v /= 10;
		n++;
	}
	return n;
}
