/* help.h - help texts for functions, types and topics. */
#ifndef TESSEL_HELP_H
#define TESSEL_HELP_H

#include <lua.h>

/*
** The texts live in a table in the Lua registry, so two states never share
** them. The first line of a text is its synopsis: lists show it beside the
** name, so it should read well alone ("composition(A, B): the layout A o B").
**
** A value registered under several names (a function that is both cute.size
** and a method) shows the text of the first name it was registered under.
** A type's help is the topic named by its metatable's __name ("cute.Layout").
*/

/* Attach text to the function, table or userdata at stack index idx; name is
** how users write it, e.g. "cute.composition". Raises an error when the value
** cannot carry help (nil, a string, a number...). */
void help_add(lua_State *L, int idx, const char *name, const char *text);

/* A function of a binding with its help text; lists end with a NULL name. */
typedef struct HelpReg {
	const char *name;
	lua_CFunction f;
	const char *help;
} HelpReg;

/* Set each function of r into the table on top of the stack, its help
** registered as prefix..name ("cute." or "lego.Layout:"). */
void help_setfuncs(lua_State *L, const HelpReg *r, const char *prefix);

/* A named topic: help "layouts". */
void help_topic(lua_State *L, const char *topic, const char *text);

/* The Lua function help(x): prints to stdout and returns nothing. */
int help_lua(lua_State *L);

#endif
