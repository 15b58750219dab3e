/* repl.h - the interactive loop, and the protected calls it shares with main.c. */
#ifndef TESSEL_REPL_H
#define TESSEL_REPL_H

#include <lua.h>

/* lua_pcall of the function below nargs arguments, with a traceback added
** to the message and Ctrl-C raising "interrupted!" in the running code. */
int repl_docall(lua_State *L, int nargs, int nresults);

/* If status is an error, print the message on top of the stack to stderr,
** after "progname: " when progname is not NULL, and pop it. Returns status. */
int repl_report(lua_State *L, const char *progname, int status);

/* Read, evaluate and print until end of input: readline with history and
** completion when stdin is a terminal, plain lines otherwise. */
void repl_run(lua_State *L);

#endif
