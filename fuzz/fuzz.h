/* fuzz.h - what the libFuzzer harnesses share: the input as a C string, and invariant checks. */
#ifndef TESSEL_FUZZ_H
#define TESSEL_FUZZ_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../util/buf.h"

/* The input as a NUL-terminated string of exactly its bytes, cut at the first
** NUL (the parsers take C strings). Allocated to size, so that ASan sees a
** read past the terminator. Free it with free(). */
static inline char *
fuzz_cstr(const uint8_t *data, size_t size)
{
	size_t n = strnlen((const char *)data, size);
	char *s = malloc(n + 1);

	if (!s)
		abort();
	memcpy(s, data, n);
	s[n] = '\0';
	return s;
}

/* Fill n bytes of the stack below the caller with 0xbe before the input runs (every
** harness's LLVMFuzzerTestOneInput does, then calls its one()), so that a read of an
** uninitialized local sees the same garbage in every process: a crash found while fuzzing,
** where earlier inputs left their locals there, then reproduces alone. */
static inline void __attribute__((noinline))
fuzz_scribble(size_t n)
{
	unsigned char *p = __builtin_alloca(n);

	memset(p, 0xbe, n);
	__asm__ volatile("" : : "r"(p) : "memory");
}

/* A broken invariant is a finding: say which and stop, so libFuzzer saves the input. */
#define FUZZ_CHECK(cond, ...) do { \
	if (!(cond)) { \
		fprintf(stderr, "fuzz: %s:%d: invariant failed: %s\n  ", __FILE__, __LINE__, #cond); \
		fprintf(stderr, __VA_ARGS__); \
		fputc('\n', stderr); \
		abort(); \
	} \
} while (0)

/* A failure must leave a readable message: non-empty and terminated. */
#define FUZZ_ERRMSG(e, what) \
	FUZZ_CHECK((e)->msg[0] != '\0' && memchr((e)->msg, '\0', sizeof (e)->msg), \
	           "%s failed without a message", what)

#endif
