/* buf.h - the room util/: growable text buffers and error records shared by every module. */
#ifndef TESSEL_BUF_H
#define TESSEL_BUF_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

/*
** The lowest room (docs/architecture.md): text buffers and error records
** (buf.c), resource limits (limits.h), a pointer map (pmap.h). It uses libc only.
*/

/* A caller-owned error record: functions that can fail on user input return a
** status and write a readable message here. They never exit or abort. */
typedef struct Err {
	char msg[512];
} Err;

/* Fill e->msg (printf-style). Always returns -1 so that callers can write
** `return err_set(e, ...);`. A NULL e is allowed and ignored. */
int err_set(Err *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* A growable, always NUL-terminated byte buffer. All printers and emitters
** write through emit() into one of these, never to stdout. A failed
** allocation sets oom and drops further output; the text stays valid. */
typedef struct Buf {
	char *s;
	size_t len, cap;
	int oom;
} Buf;

void buf_init(Buf *b);
void buf_free(Buf *b);
void buf_reset(Buf *b);
void emit(Buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void vemit(Buf *b, const char *fmt, va_list ap);
void emitn(Buf *b, const char *s, size_t n);
/* The number of characters of v in decimal, a minus sign included (CuTe's num_digits). */
int num_digits(int64_t v);
/* Hand the string over to the caller (free() it); b is left empty. */
char *buf_take(Buf *b);

#endif
