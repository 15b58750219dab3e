/* limits.h - resource limits a user can change (tessel.limits{...}) and the Ctrl-C flag. */
#ifndef TESSEL_LIMITS_H
#define TESSEL_LIMITS_H

#include <stdint.h>

#include "buf.h"

/*
** What one operation may use before it stops with an error that names the limit and
** how to raise it, instead of exhausting memory or running for hours. One line per
** limit: the enum name, the Limits field (also the key of tessel.limits{...}), the
** default, the unit, and what it bounds.
*/
#define LIMITS(X) \
	X(TENSOR_BYTES, tensor_bytes, (int64_t)4 << 30, "bytes", \
	  "bytes of realized tensors (tensor:realize) and of a kernel run's buffers") \
	X(STEPS, steps, (int64_t)1000000000, "instructions", \
	  "instructions the kernel interpreter runs in one run") \
	X(CHECK_ELEMS, check_elems, (int64_t)1 << 22, "elements", \
	  "elements a check enumerates (equivalence, bijectivity, Axe enumerations)") \
	X(PIXELS, pixels, (int64_t)1 << 25, "pixels", \
	  "pixels of a rendered picture, and cells of a scene") \
	X(CODE_BYTES, code_bytes, (int64_t)64 << 20, "bytes", \
	  "bytes of emitted code (expressions printed as C, CUDA, OpenCL, Python, Lua)")

enum {
#define X(E, f, d, u, w) LIMIT_##E,
	LIMITS(X)
#undef X
	LIMIT_COUNT
};

typedef struct Limits {
#define X(E, f, d, u, w) int64_t f;
	LIMITS(X)
#undef X
} Limits;

/*
** The limits in force. They belong to the thread, as a process's ulimits belong to
** the process: the Lua states that run on one thread share them (a state and the C
** calls it makes run on one thread); another thread starts from the defaults.
*/
const Limits *limits_get(void);
/* Set them all; every value must be >= 1 (else -1 with a message, nothing changed). */
int limits_set(const Limits *l, Err *e);
void limits_default(Limits *l);
/* By index (LIMIT_*): the field's name, unit, description, current and default values;
** limits_index is the index of a name, or -1. */
const char *limits_name(int which);
const char *limits_unit(int which);
const char *limits_what(int which);
int64_t limits_value(int which);
int64_t limits_default_value(int which);
int limits_index(const char *name);
/*
** 0 when amount <= the limit, else -1 with
**   "<name> limit: <what> needs <amount> <unit>, more than the limit of <max>
**    (raise it with tessel.limits{<name> = N})"
*/
int limits_check(int which, int64_t amount, const char *what, Err *e);

/*
** Ctrl-C. A SIGINT handler (the REPL's) calls limits_interrupt; long loops in C call
** limits_poll where they check their limits, and stop with "interrupted" when it
** returns -1. The flag stays set, so that every loop on the way out stops too, until
** limits_clear_interrupt (the REPL's, when the interrupted call has returned). The
** flag is the process's, as the signal is.
*/
void limits_interrupt(void);          /* async-signal-safe */
int limits_poll(Err *e);              /* 0, or -1 with "interrupted" */
void limits_clear_interrupt(void);

#endif
