/* help.c - help texts registered by the bindings, and the Lua function help(). */
#include <ctype.h>
#include <lauxlib.h>
#include <lua.h>
#include <stdlib.h>
#include <string.h>

#include "help.h"

/*
** Everything lives in one table of the registry, under HELPKEY, whose array
** part holds the four tables below. NAMES has weak keys and VALUES weak
** values, so that help never keeps alive a value nobody else refers to.
** Light C functions are compared by pointer, so one C function registered
** as cute.size and reached again as a method finds its text.
*/
#define HELPKEY "tessel.help"

enum {
	TEXTS = 1,	/* name -> text */
	TOPICS,		/* topic -> text */
	NAMES,		/* value -> the first name it was registered under */
	VALUES,		/* name -> value, to list the members of a table */
	NTABLES = VALUES
};

enum {
	NAMEWIDTH = 22,	/* synopses in lists align on the longest name up to this */
	LINEWIDTH = 79	/* and are cut to keep a list line in this many bytes */
};

typedef struct Entry {
	const char *name, *text;
} Entry;

/* Push help table i, creating the help tables on first use. */
static void
pushtable(lua_State *L, int i)
{
	static const char *const mode[NTABLES + 1] = { NULL, NULL, NULL, "k", "v" };
	int j;

	if (!luaL_getsubtable(L, LUA_REGISTRYINDEX, HELPKEY)) {
		for (j = 1; j <= NTABLES; j++) {
			lua_newtable(L);
			if (mode[j]) {
				lua_createtable(L, 0, 1);
				lua_pushstring(L, mode[j]);
				lua_setfield(L, -2, "__mode");
				lua_setmetatable(L, -2);
			}
			lua_rawseti(L, -2, j);
		}
	}
	lua_rawgeti(L, -1, i);
	lua_remove(L, -2);
}

void
help_add(lua_State *L, int idx, const char *name, const char *text)
{
	int t;

	idx = lua_absindex(L, idx);
	t = lua_type(L, idx);
	if (t != LUA_TFUNCTION && t != LUA_TTABLE && t != LUA_TUSERDATA
	&& t != LUA_TLIGHTUSERDATA)
		luaL_error(L, "help_add: cannot attach help for '%s' to a %s value",
		           name, lua_typename(L, t));
	luaL_checkstack(L, 4, "help_add");
	pushtable(L, TEXTS);
	lua_pushstring(L, text);
	lua_setfield(L, -2, name);
	lua_pop(L, 1);
	pushtable(L, NAMES);
	lua_pushvalue(L, idx);
	if (lua_rawget(L, -2) == LUA_TNIL) {
		lua_pushvalue(L, idx);
		lua_pushstring(L, name);
		lua_rawset(L, -4);
	}
	lua_pop(L, 2);
	pushtable(L, VALUES);
	lua_pushvalue(L, idx);
	lua_setfield(L, -2, name);
	lua_pop(L, 1);
}

void
help_topic(lua_State *L, const char *topic, const char *text)
{
	luaL_checkstack(L, 2, "help_topic");
	pushtable(L, TOPICS);
	lua_pushstring(L, text);
	lua_setfield(L, -2, topic);
	lua_pop(L, 1);
}

static void
put(const char *s)
{
	lua_writestring(s, strlen(s));
}

/* A text ends in exactly one newline whatever its author wrote. */
static void
puttext(const char *s)
{
	size_t n = strlen(s);

	while (n > 0 && s[n-1] == '\n')
		n--;
	lua_writestring(s, n);
	put("\n");
}

/* The first line of text in at most room bytes (but at least 20): cut at
** a space, else before a UTF-8 character, and marked with "...". */
static void
putsynopsis(const char *text, size_t room)
{
	size_t n = strcspn(text, "\n"), cut;

	if (room < 20)
		room = 20;
	if (n <= room) {
		lua_writestring(text, n);
		return;
	}
	cut = room - 3;
	while (cut > room / 2 && text[cut] != ' ')
		cut--;
	if (text[cut] != ' ')
		for (cut = room - 3; cut > 0 && (text[cut] & 0xC0) == 0x80; cut--)
			;
	while (cut > 0 && text[cut-1] == ' ')
		cut--;
	lua_writestring(text, cut);
	put("...");
}

static int
cmpentry(const void *a, const void *b)
{
	return strcmp(((const Entry *)a)->name, ((const Entry *)b)->name);
}

/*
** Print lead and the list at idx (name -> text) sorted by name, one line
** per name with the first line of its text; nothing if the list is empty.
** The list has only string keys and values, which stay alive while it is
** on the stack; the array to sort is a userdata, so nothing leaks if Lua
** raises.
*/
static void
putlist(lua_State *L, int idx, const char *lead)
{
	size_t n, i, w, len;
	Entry *e;

	idx = lua_absindex(L, idx);
	n = 0;
	for (lua_pushnil(L); lua_next(L, idx); lua_pop(L, 1))
		n++;
	if (n == 0)
		return;
	e = lua_newuserdatauv(L, n * sizeof *e, 0);
	i = 0;
	for (lua_pushnil(L); lua_next(L, idx); lua_pop(L, 1)) {
		e[i].name = lua_tostring(L, -2);
		e[i].text = lua_tostring(L, -1);
		i++;
	}
	qsort(e, n, sizeof *e, cmpentry);
	w = 0;
	for (i = 0; i < n; i++)
		if ((len = strlen(e[i].name)) > w && len <= NAMEWIDTH)
			w = len;
	put(lead);
	for (i = 0; i < n; i++) {
		put("  ");
		put(e[i].name);
		for (len = strlen(e[i].name); len < w + 2; len++)
			put(" ");
		putsynopsis(e[i].text, 2 + len < LINEWIDTH ? LINEWIDTH - 2 - len : 0);
		put("\n");
	}
	lua_pop(L, 1);
}

/* Push a list (field -> text) of the registered values among the string
** keyed fields of the table at t. Returns their number. */
static int
pushmembers(lua_State *L, int t)
{
	int list, names, texts, n = 0;

	t = lua_absindex(L, t);
	lua_newtable(L);
	list = lua_gettop(L);
	pushtable(L, NAMES);
	names = lua_gettop(L);
	pushtable(L, TEXTS);
	texts = lua_gettop(L);
	for (lua_pushnil(L); lua_next(L, t); lua_pop(L, 1)) {
		if (lua_type(L, -2) != LUA_TSTRING)
			continue;
		lua_pushvalue(L, -1);
		if (lua_rawget(L, names) == LUA_TSTRING
		&& lua_rawget(L, texts) == LUA_TSTRING) {
			lua_pushvalue(L, -3);
			lua_insert(L, -2);
			lua_rawset(L, list);
			n++;
		} else
			lua_pop(L, 1);
	}
	lua_pop(L, 2);
	return n;
}

/* Print the help of a registered name: its text and, for a table, its
** registered members. Returns 0 when the name is not registered. */
static int
showname(lua_State *L, const char *name)
{
	pushtable(L, TEXTS);
	if (lua_getfield(L, -1, name) != LUA_TSTRING) {
		lua_pop(L, 2);
		return 0;
	}
	puttext(lua_tostring(L, -1));
	lua_pop(L, 2);
	pushtable(L, VALUES);
	if (lua_getfield(L, -1, name) == LUA_TTABLE) {
		pushmembers(L, -1);
		putlist(L, -1, "\n");
		lua_pop(L, 1);
	}
	lua_pop(L, 2);
	return 1;
}

/*
** Print the help of a type: the topic named like it, then the registered
** methods of the metatable that luaL_newmetatable keeps under that name.
** Only raw reads: help must not run metamethods. Returns 0 when there is
** nothing to say.
*/
static int
showtype(lua_State *L, const char *tname)
{
	int found = 0;

	pushtable(L, TOPICS);
	if (lua_getfield(L, -1, tname) == LUA_TSTRING) {
		puttext(lua_tostring(L, -1));
		found = 1;
	}
	lua_pop(L, 2);
	if (lua_getfield(L, LUA_REGISTRYINDEX, tname) == LUA_TTABLE) {
		lua_pushliteral(L, "__index");
		if (lua_rawget(L, -2) == LUA_TTABLE) {
			if (pushmembers(L, -1) > 0) {
				if (!found) {
					put(tname);
					put("\n");
				}
				putlist(L, -1, "\nMethods:\n");
				found = 1;
			}
			lua_pop(L, 1);	/* the list */
		}
		lua_pop(L, 1);	/* __index */
	}
	lua_pop(L, 1);	/* the metatable */
	return found;
}

/* The last component of a dotted name: "composition" for "cute.composition". */
static const char *
lastpart(const char *name)
{
	const char *p = name + strlen(name);

	while (p > name && p[-1] != '.' && p[-1] != ':')
		p--;
	return p;
}

/* Whether s contains sub, ignoring case. */
static int
contains(const char *s, const char *sub)
{
	size_t i;

	for (; *s; s++) {
		for (i = 0; sub[i] && tolower((unsigned char)s[i]) == tolower((unsigned char)sub[i]); i++)
			;
		if (sub[i] == '\0')
			return 1;
	}
	return 0;
}

/* Push a list of the names and topics that s may mean: those whose last
** component is s when bylast is set, else those containing s. Returns
** their number. */
static int
pushmatches(lua_State *L, const char *s, int bylast)
{
	static const int where[] = { TEXTS, TOPICS };
	int list, i, n = 0;
	const char *name;

	lua_newtable(L);
	list = lua_gettop(L);
	for (i = 0; i < 2; i++) {
		pushtable(L, where[i]);
		for (lua_pushnil(L); lua_next(L, -2); lua_pop(L, 1)) {
			name = lua_tostring(L, -2);
			if (bylast ? strcmp(lastpart(name), s) == 0 : contains(name, s)) {
				lua_pushvalue(L, -2);
				lua_pushvalue(L, -2);
				lua_rawset(L, list);
				n++;
			}
		}
		lua_pop(L, 1);
	}
	return n;
}

static void overview(lua_State *L);

/* help "name": a registered name, a type or topic, a unique last component
** ("composition"), else suggestions. */
static void
byname(lua_State *L, const char *s)
{
	int n;

	if (*s == '\0') {
		overview(L);
		return;
	}
	if (showname(L, s) || showtype(L, s))
		return;
	n = pushmatches(L, s, 1);
	if (n == 1) {
		lua_pushnil(L);
		lua_next(L, -2);
		s = lua_tostring(L, -2);
		if (!showname(L, s))
			showtype(L, s);
		lua_pop(L, 3);
		return;
	}
	if (n > 1) {
		put("'");
		put(s);
		put("' may mean:\n");
		putlist(L, -1, "");
		lua_pop(L, 1);
		return;
	}
	lua_pop(L, 1);
	put("no help for '");
	put(s);
	if (pushmatches(L, s, 0) > 0) {
		put("'; related:\n");
		putlist(L, -1, "");
	} else
		put("'; try help()\n");
	lua_pop(L, 1);
}

/* help(x) for a value: its registered name, else the help of its type. */
static void
byvalue(lua_State *L, int idx)
{
	const char *tname;
	int t;

	pushtable(L, NAMES);
	lua_pushvalue(L, idx);
	if (lua_rawget(L, -2) == LUA_TSTRING && showname(L, lua_tostring(L, -1))) {
		lua_pop(L, 2);
		return;
	}
	lua_pop(L, 2);
	t = luaL_getmetafield(L, idx, "__name");
	if (t == LUA_TSTRING) {
		tname = lua_tostring(L, -1);
		if (showtype(L, tname)) {
			lua_pop(L, 1);
			return;
		}
		put("no help for type '");
		put(tname);
		put("'; try help()\n");
		lua_pop(L, 1);
		return;
	}
	if (t != LUA_TNIL)
		lua_pop(L, 1);
	if (lua_isnil(L, idx))
		put("no help for nil (a misspelled name?); try help()\n");
	else {
		put("no help for this ");
		put(luaL_typename(L, idx));
		put("; try help()\n");
	}
}

static void
overview(lua_State *L)
{
	int names;

	put("help shows the help of tessel's functions, types and topics:\n"
	    "  help(cute.composition)  a function; help(cute) a module and its contents\n"
	    "  help(x)                 the type of the value x, e.g. a layout\n"
	    "  help \"composition\"      a function, type or topic by name\n");
	pushtable(L, TOPICS);
	putlist(L, -1, "\nTopics:\n");
	lua_pop(L, 1);
	lua_newtable(L);
	pushtable(L, NAMES);
	names = lua_gettop(L);
	pushtable(L, TEXTS);
	for (lua_pushnil(L); lua_next(L, names); lua_pop(L, 1)) {
		if (!lua_istable(L, -2))
			continue;
		lua_pushvalue(L, -1);
		if (lua_rawget(L, names + 1) == LUA_TSTRING) {
			lua_pushvalue(L, -2);
			lua_insert(L, -2);
			lua_rawset(L, names - 1);
		} else
			lua_pop(L, 1);
	}
	lua_pop(L, 2);
	putlist(L, -1, "\nModules:\n");
	lua_pop(L, 1);
}

int
help_lua(lua_State *L)
{
	int none = lua_isnone(L, 1);

	lua_settop(L, 1);
	luaL_checkstack(L, 24, "help");
	if (none)
		overview(L);
	else if (lua_type(L, 1) == LUA_TSTRING)
		byname(L, lua_tostring(L, 1));
	else
		byvalue(L, 1);
	fflush(stdout);
	return 0;
}

void
help_setfuncs(lua_State *L, const HelpReg *r, const char *prefix)
{
	for (; r->name; r++) {
		const char *name;

		lua_pushcfunction(L, r->f);
		name = lua_pushfstring(L, "%s%s", prefix, r->name);
		help_add(L, -2, name, r->help);
		lua_pop(L, 1);
		lua_setfield(L, -2, r->name);
	}
}
