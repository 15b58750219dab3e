/* limits.c - resource limits a user can change and the Ctrl-C flag that stops long loops. */
#include "limits.h"

#include <signal.h>
#include <string.h>

static const struct {
	const char *name, *unit, *what;
	int64_t dflt;
} info[LIMIT_COUNT] = {
#define X(E, f, d, u, w) { #f, u, w, d },
	LIMITS(X)
#undef X
};

/* The thread's limits; set marks them initialized (a zero Limits is not a valid one). */
static _Thread_local Limits cur;
static _Thread_local int set;
/* Written by a signal handler, read by every loop that polls. */
static volatile sig_atomic_t interrupted;

void
limits_default(Limits *l)
{
#define X(E, f, d, u, w) l->f = d;
	LIMITS(X)
#undef X
}

const Limits *
limits_get(void)
{
	if (!set) {
		limits_default(&cur);
		set = 1;
	}
	return &cur;
}

static int64_t
field(const Limits *l, int which)
{
	switch (which) {
#define X(E, f, d, u, w) case LIMIT_##E: return l->f;
	LIMITS(X)
#undef X
	}
	return 0;
}

int
limits_set(const Limits *l, Err *e)
{
	int i;

	for (i = 0; i < LIMIT_COUNT; i++)
		if (field(l, i) < 1)
			return err_set(e, "tessel.limits: %s must be at least 1, not %lld", info[i].name,
			               (long long)field(l, i));
	cur = *l;
	set = 1;
	return 0;
}

const char *
limits_name(int which)
{
	return which >= 0 && which < LIMIT_COUNT ? info[which].name : "?";
}

const char *
limits_unit(int which)
{
	return which >= 0 && which < LIMIT_COUNT ? info[which].unit : "?";
}

const char *
limits_what(int which)
{
	return which >= 0 && which < LIMIT_COUNT ? info[which].what : "?";
}

int64_t
limits_value(int which)
{
	return field(limits_get(), which);
}

int64_t
limits_default_value(int which)
{
	return which >= 0 && which < LIMIT_COUNT ? info[which].dflt : 0;
}

int
limits_index(const char *name)
{
	int i;

	for (i = 0; i < LIMIT_COUNT; i++)
		if ((name ? strcmp(name, info[i].name) : 1) == 0)
			return i;
	return -1;
}

int
limits_check(int which, int64_t amount, const char *what, Err *e)
{
	int64_t max = limits_value(which);

	if (amount <= max)
		return 0;
	return err_set(e, "%s limit: %s needs %lld %s, more than the limit of %lld "
	               "(raise it with tessel.limits{%s = N})", limits_name(which), what,
	               (long long)amount, limits_unit(which), (long long)max, limits_name(which));
}

void
limits_interrupt(void)
{
	interrupted = 1;
}

int
limits_poll(Err *e)
{
	return interrupted ? err_set(e, "interrupted (Ctrl-C)") : 0;
}

void
limits_clear_interrupt(void)
{
	interrupted = 0;
}
