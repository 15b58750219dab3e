/* main.c - the tessel command line: scripts, -e chunks and the REPL, after lua.c. */
#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "repl.h"
#include "tessel.h"

#define PROGNAME	"tessel"

#define USAGE \
	"usage: " PROGNAME " [options] [script [args]]\n" \
	"Options:\n" \
	"  -e code        run the Lua code (may be repeated)\n" \
	"  -l name        require library 'name' into global 'name'\n" \
	"  -i             enter the REPL after running the script\n" \
	"  -v, --version  print the version and exit\n" \
	"  -h, --help     print this help and exit\n" \
	"  --             stop handling options\n" \
	"  -              stop handling options and run stdin\n" \
	"With no script, stdin is read: the REPL on a terminal, else a script.\n"

/* Options seen by collectargs. */
enum { HAS_ERROR = 1, HAS_E = 2, HAS_I = 4, HAS_V = 8, HAS_H = 16 };

static void
usage(const char *badoption)
{
	if ((badoption[1] == 'e' || badoption[1] == 'l') && badoption[2] == '\0')
		fprintf(stderr, "%s: '%s' needs an argument\n", PROGNAME, badoption);
	else
		fprintf(stderr, "%s: unrecognized option '%s'\n", PROGNAME, badoption);
	fputs(USAGE, stderr);
}

/*
** Scan the options, which end at the first argument that is not one: the
** script. *first is the index of the script, argc when there is none, or
** of the bad option when the result is HAS_ERROR.
*/
static int
collectargs(char **argv, int *first)
{
	int args = 0, i;

	for (i = 1; argv[i] != NULL; i++) {
		*first = i;
		if (argv[i][0] != '-')
			return args;
		switch (argv[i][1]) {
		case '-':
			if (argv[i][2] == '\0') {
				*first = i + 1;
				return args;
			}
			if (strcmp(argv[i], "--help") == 0)
				args |= HAS_H;
			else if (strcmp(argv[i], "--version") == 0)
				args |= HAS_V;
			else
				return HAS_ERROR;
			break;
		case '\0':
			return args;	/* "-" is the script: stdin */
		case 'h':
		case 'i':
		case 'v':
			if (argv[i][2] != '\0')
				return HAS_ERROR;
			args |= argv[i][1] == 'h' ? HAS_H : argv[i][1] == 'i' ? HAS_I : HAS_V;
			break;
		case 'e':
			args |= HAS_E;
			/* FALLTHROUGH */
		case 'l':
			if (argv[i][2] == '\0' && argv[i + 1] == NULL)
				return HAS_ERROR;
			if (argv[i][2] == '\0')
				i++;
			break;
		default:
			return HAS_ERROR;
		}
	}
	*first = i;
	return args;
}

/*
** The global arg: the script at 0, its arguments at 1, 2, ... and the
** interpreter and its options at negative indices, as lua.c does. With no
** script, arg[0] is the interpreter.
*/
static void
createargtable(lua_State *L, char **argv, int argc, int script)
{
	int i;

	if (script == argc)
		script = 0;
	lua_createtable(L, argc - script - 1, script + 1);
	for (i = 0; i < argc; i++) {
		lua_pushstring(L, argv[i]);
		lua_rawseti(L, -2, i - script);
	}
	lua_setglobal(L, "arg");
}

static int
dochunk(lua_State *L, int status)
{
	if (status == LUA_OK)
		status = repl_docall(L, 0, 0);
	return repl_report(L, PROGNAME, status);
}

static int
dostring(lua_State *L, const char *s, const char *name)
{
	return dochunk(L, luaL_loadbuffer(L, s, strlen(s), name));
}

/* -l name: name = require "name". */
static int
dolibrary(lua_State *L, const char *name)
{
	int status;

	lua_getglobal(L, "require");
	lua_pushstring(L, name);
	status = repl_docall(L, 1, 1);
	if (status == LUA_OK)
		lua_setglobal(L, name);
	return repl_report(L, PROGNAME, status);
}

/* Run the -e and -l options in their order; 0 on the first error. */
static int
runargs(lua_State *L, char **argv, int n)
{
	const char *extra;
	int i, opt, status;

	for (i = 1; i < n; i++) {
		opt = argv[i][1];
		if (opt != 'e' && opt != 'l')
			continue;
		extra = argv[i] + 2;
		if (*extra == '\0')
			extra = argv[++i];
		status = opt == 'e' ? dostring(L, extra, "=(command line)")
		                    : dolibrary(L, extra);
		if (status != LUA_OK)
			return 0;
	}
	return 1;
}

/* Push the script's arguments, arg[1..#arg], for its "...". */
static int
pushargs(lua_State *L)
{
	int i, n;

	if (lua_getglobal(L, "arg") != LUA_TTABLE)
		luaL_error(L, "'arg' is not a table");
	n = (int)luaL_len(L, -1);
	luaL_checkstack(L, n + 3, "too many arguments to script");
	for (i = 1; i <= n; i++)
		lua_rawgeti(L, -i, i);
	lua_remove(L, -i);
	return n;
}

static int
handlescript(lua_State *L, char **argv)
{
	const char *fname = argv[0];
	int status;

	/* "-" is stdin, unless it follows "--": then it is a file named "-". */
	if (strcmp(fname, "-") == 0 && strcmp(argv[-1], "--") != 0)
		fname = NULL;
	status = luaL_loadfile(L, fname);
	if (status == LUA_OK)
		status = repl_docall(L, pushargs(L), 0);
	return repl_report(L, PROGNAME, status);
}

/* Load the libraries and tessel, then do what the arguments say. Runs in
** protected mode, so that any error, even out of memory, is reported. */
static int
pmain(lua_State *L)
{
	int argc = (int)lua_tointeger(L, 1);
	char **argv = lua_touserdata(L, 2);
	int script = argc, args = collectargs(argv, &script);

	luaL_checkversion(L);
	if (args == HAS_ERROR) {
		usage(argv[script]);
		return 0;
	}
	if (args & HAS_H) {
		fputs(USAGE, stdout);
		lua_pushboolean(L, 1);
		return 1;
	}
	if (args & HAS_V) {
		fputs(PROGNAME " " TESSEL_VERSION " (" LUA_RELEASE ")\n", stdout);
		lua_pushboolean(L, 1);
		return 1;
	}
	luaL_openlibs(L);
	tessel_open_globals(L);
	createargtable(L, argv, argc, script);
	lua_gc(L, LUA_GCGEN, 0, 0);
	if (!runargs(L, argv, script))
		return 0;
	if (script < argc && handlescript(L, argv + script) != LUA_OK)
		return 0;
	if (args & HAS_I)
		repl_run(L);
	else if (script == argc && !(args & HAS_E)) {
		if (isatty(STDIN_FILENO))
			repl_run(L);
		else if (dochunk(L, luaL_loadfile(L, NULL)) != LUA_OK)
			return 0;
	}
	lua_pushboolean(L, 1);
	return 1;
}

int
main(int argc, char **argv)
{
	static char *noargs[] = { PROGNAME, NULL };
	lua_State *L;
	int status, ok;

	if (argc < 1) {
		argc = 1;
		argv = noargs;
	}
	if ((L = luaL_newstate()) == NULL) {
		fprintf(stderr, "%s: cannot create state: not enough memory\n", PROGNAME);
		return EXIT_FAILURE;
	}
	lua_pushcfunction(L, pmain);
	lua_pushinteger(L, argc);
	lua_pushlightuserdata(L, argv);
	status = lua_pcall(L, 2, 1, 0);
	ok = lua_toboolean(L, -1);
	repl_report(L, PROGNAME, status);
	lua_close(L);
	return ok && status == LUA_OK ? EXIT_SUCCESS : EXIT_FAILURE;
}
