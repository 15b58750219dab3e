/* repl.c - the read-eval-print loop: readline, completion, history and Ctrl-C, after lua.c. */
#include <errno.h>
#include <fcntl.h>
#include <lauxlib.h>
#include <lua.h>
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/select.h>
#include <unistd.h>

#include <readline/history.h>
#include <readline/readline.h>

#include "../util/limits.h"
#include "repl.h"

#define PROMPT		"> "
#define PROMPT2		">> "
#define HISTFILE	".tessel_history"
#define BANNER		"tessel " TESSEL_VERSION " (" LUA_VERSION ")" \
			" - type help() for help, Ctrl-D to exit"

/* An input that ends in a syntax error at this mark is incomplete. */
#define EOFMARK		"<eof>"
#define MARKLEN		(sizeof(EOFMARK) - 1)

/* Completion breaks words at these, but not at '.' and ':', so that the
** word is a whole path such as string.for or s:up. */
#define WORDBREAK	" \t\n\"'`\\@$><=;|&{}()[],+-*/%^~#!"

enum {
	HISTMAX = 1000,	/* entries kept in memory, lines kept in the file */
	MAXCHAIN = 16	/* __index tables followed, so a cycle ends */
};

/* How reading input can end besides a Lua status. */
enum { INPUT_EOF = -1, INPUT_INTERRUPTED = -2 };

/*
** Signal handlers and readline's callbacks take no argument that could
** carry a state, so what they act on is kept here, as lua.c keeps globalL.
** A process runs one REPL at a time, and readline itself is global.
*/
static lua_State *globalL;		/* the state that Ctrl-C stops and completion reads */
static volatile sig_atomic_t gotint;	/* Ctrl-C while no Lua code runs */
static volatile sig_atomic_t gotwinch;	/* the terminal was resized */
static char *rlline;			/* the line readline handed to online() */
static int rldone;			/* ...once it has */

/* Completion candidates: v[1..n] are the words, v[0] is left for their
** common prefix and v[n+1] for the NULL that readline expects. */
typedef struct Matches {
	const char *text;
	char **v;
	size_t n, cap;
} Matches;

static const char *const keywords[] = {
	"and", "break", "do", "else", "elseif", "end", "false", "for",
	"function", "goto", "if", "in", "local", "nil", "not", "or",
	"repeat", "return", "then", "true", "until", "while", NULL
};

/* No SA_RESTART: a read blocked at the prompt must return on Ctrl-C. */
static void
setsignal(int sig, void (*handler)(int), struct sigaction *old)
{
	struct sigaction sa;

	sa.sa_handler = handler;
	sa.sa_flags = 0;
	sigemptyset(&sa.sa_mask);
	sigaction(sig, &sa, old);
}

static void
lstop(lua_State *L, lua_Debug *ar)
{
	(void)ar;
	lua_sethook(L, NULL, 0, 0);
	luaL_error(L, "interrupted!");
}

/*
** Ctrl-C while Lua code runs. Only a hook can stop Lua at a safe point,
** and lua_sethook may be called from a signal handler; the long loops in C
** (enumeration, evaluation, interpretation) poll limits_poll and stop with
** "interrupted". Another Ctrl-C before either happens (a C loop that does not
** poll) ends the process, as if we had not been there.
*/
static void
laction(int sig)
{
	limits_interrupt();
	setsignal(sig, SIG_DFL, NULL);
	lua_sethook(globalL, lstop,
	            LUA_MASKCALL | LUA_MASKRET | LUA_MASKLINE | LUA_MASKCOUNT, 1);
}

static void
onint(int sig)
{
	gotint = 1;
}

static void
onwinch(int sig)
{
	gotwinch = 1;
}

/* Message handler of scripts: the message and a traceback. */
static int
msghandler(lua_State *L)
{
	const char *msg = lua_tostring(L, 1);

	if (msg == NULL) {
		if (luaL_callmeta(L, 1, "__tostring") && lua_type(L, -1) == LUA_TSTRING)
			return 1;
		msg = lua_pushfstring(L, "(error object is a %s value)", luaL_typename(L, 1));
	}
	luaL_traceback(L, L, msg, 1);
	return 1;
}

/* Message handler of REPL lines: the message alone, as the traceback of a
** line typed a moment ago only repeats its position. */
static int
msgline(lua_State *L)
{
	if (lua_tostring(L, 1) != NULL)
		return 1;
	if (luaL_callmeta(L, 1, "__tostring") && lua_type(L, -1) == LUA_TSTRING)
		return 1;
	lua_pushfstring(L, "(error object is a %s value)", luaL_typename(L, 1));
	return 1;
}

static int
docall(lua_State *L, int nargs, int nresults, lua_CFunction handler)
{
	struct sigaction old;
	int status, base = lua_gettop(L) - nargs;

	lua_pushcfunction(L, handler);
	lua_insert(L, base);
	globalL = L;
	limits_clear_interrupt();
	setsignal(SIGINT, laction, &old);
	status = lua_pcall(L, nargs, nresults, base);
	sigaction(SIGINT, &old, NULL);
	limits_clear_interrupt();
	/* A Ctrl-C that came after the code ended must not stop the next call. */
	if (lua_gethook(L) == lstop)
		lua_sethook(L, NULL, 0, 0);
	lua_remove(L, base);
	return status;
}

int
repl_docall(lua_State *L, int nargs, int nresults)
{
	return docall(L, nargs, nresults, msghandler);
}

int
repl_report(lua_State *L, const char *progname, int status)
{
	const char *msg;

	if (status != LUA_OK) {
		msg = lua_tostring(L, -1);
		if (msg == NULL)
			msg = "(error object is not a string)";
		if (progname)
			lua_writestringerror("%s: ", progname);
		lua_writestringerror("%s\n", msg);
		lua_pop(L, 1);
	}
	return status;
}

static int
isletter(int c)
{
	return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

/* Whether the first len bytes of s are a Lua name, which keywords are not. */
static int
isname(const char *s, size_t len)
{
	const char *const *k;
	size_t i;

	if (len == 0 || !isletter(s[0]))
		return 0;
	for (i = 1; i < len; i++)
		if (!isletter(s[i]) && !(s[i] >= '0' && s[i] <= '9'))
			return 0;
	for (k = keywords; *k; k++)
		if (strlen(*k) == len && memcmp(*k, s, len) == 0)
			return 0;
	return 1;
}

/* Add the word text[0..plen) followed by key. Out of memory, the word is
** left out: completion offers less, nothing breaks. */
static void
addmatch(Matches *m, size_t plen, const char *key, size_t klen)
{
	char **v, *s;
	size_t cap;

	if (m->n + 3 > m->cap) {
		cap = m->cap ? 2 * m->cap : 16;
		if ((v = realloc(m->v, cap * sizeof *v)) == NULL)
			return;
		m->v = v;
		m->cap = cap;
	}
	if ((s = malloc(plen + klen + 1)) == NULL)
		return;
	memcpy(s, m->text, plen);
	memcpy(s + plen, key, klen);
	s[plen + klen] = '\0';
	m->v[++m->n] = s;
}

/* Add the names among the keys of the table on top that begin with the
** rest of the word after plen; only those of functions when methods is set. */
static void
addfields(lua_State *L, Matches *m, size_t plen, int methods)
{
	const char *part = m->text + plen, *k;
	size_t partlen = strlen(part), klen;
	int t = lua_gettop(L);

	for (lua_pushnil(L); lua_next(L, t); lua_pop(L, 1)) {
		if (lua_type(L, -2) != LUA_TSTRING
		|| (methods && lua_type(L, -1) != LUA_TFUNCTION))
			continue;
		k = lua_tolstring(L, -2, &klen);
		if (klen >= partlen && memcmp(k, part, partlen) == 0 && isname(k, klen))
			addmatch(m, plen, k, klen);
	}
}

/*
** Replace the value on top by the table its field reads fall back to, its
** metatable's __index, and return 1. When that is a function (a type whose
** fields are computed, as a kernel's buffers are), its metatable's methods
** table stands in; otherwise pop the value and return 0: a function could do
** anything, and completion must run no code.
*/
static int
fallback(lua_State *L)
{
	if (lua_getmetatable(L, -1)) {
		lua_pushliteral(L, "__index");
		if (lua_rawget(L, -2) == LUA_TTABLE) {
			lua_replace(L, -3);
			lua_pop(L, 1);
			return 1;
		}
		lua_pop(L, 1);
		lua_pushliteral(L, "methods");
		if (lua_rawget(L, -2) == LUA_TTABLE) {
			lua_replace(L, -3);
			lua_pop(L, 1);
			return 1;
		}
		lua_pop(L, 2);
	}
	lua_pop(L, 1);
	return 0;
}

/* Replace the value on top by its field k as a read would find it, with
** raw reads along the __index tables. Pops it and returns 0 if not found. */
static int
rawfield(lua_State *L, const char *k, size_t klen)
{
	int i;

	for (i = 0; i < MAXCHAIN; i++) {
		if (lua_istable(L, -1)) {
			lua_pushlstring(L, k, klen);
			if (lua_rawget(L, -2) != LUA_TNIL) {
				lua_remove(L, -2);
				return 1;
			}
			lua_pop(L, 1);
		}
		if (!fallback(L))
			return 0;
	}
	lua_pop(L, 1);
	return 0;
}

/* Add the fields of the value on top and of its __index tables; pops it. */
static void
addchain(lua_State *L, Matches *m, size_t plen, int methods)
{
	int i;

	for (i = 0; i < MAXCHAIN; i++) {
		if (lua_istable(L, -1))
			addfields(L, m, plen, methods);
		if (!fallback(L))
			return;
	}
	lua_pop(L, 1);
}

/*
** Collect the completions of m->text: a global or keyword, a field after
** a.b., a method after a.b:. Run by lua_pcall, as Lua raises on memory
** errors and a longjmp must not cross readline.
*/
static int
collect(lua_State *L)
{
	Matches *m = lua_touserdata(L, 1);
	const char *text = m->text, *sep = NULL, *p, *e;
	const char *const *k;
	size_t len = strlen(text);

	for (p = text; *p; p++)
		if (*p == '.' || *p == ':')
			sep = p;
	lua_rawgeti(L, LUA_REGISTRYINDEX, LUA_RIDX_GLOBALS);
	if (sep == NULL) {
		for (k = keywords; *k; k++)
			if (strncmp(*k, text, len) == 0)
				addmatch(m, 0, *k, strlen(*k));
		addchain(L, m, 0, 0);
		return 0;
	}
	for (p = text; ; p = e + 1) {	/* every name of the path up to sep */
		for (e = p; e < sep && *e != '.'; e++)
			;
		if (!isname(p, e - p) || !rawfield(L, p, e - p))
			return 0;
		if (e == sep)
			break;
	}
	addchain(L, m, sep - text + 1, *sep == ':');
	return 0;
}

/* readline's attempted completion function. */
static char **
complete(const char *text, int start, int end)
{
	lua_State *L = globalL;
	Matches m = { text, NULL, 0, 0 };
	size_t i, j, n;

	rl_attempted_completion_over = 1;	/* never fall back to file names */
	rl_completion_append_character = '\0';
	if (!lua_checkstack(L, 2))
		return NULL;
	lua_pushcfunction(L, collect);
	lua_pushlightuserdata(L, &m);
	if (lua_pcall(L, 1, 0, 0) != LUA_OK)
		lua_pop(L, 1);
	if (m.n == 0) {
		free(m.v);
		return NULL;
	}
	/* v[0] is what replaces the word: the common prefix of all. */
	n = strlen(m.v[1]);
	for (i = 2; i <= m.n; i++) {
		for (j = 0; j < n && m.v[i][j] == m.v[1][j]; j++)
			;
		n = j;
	}
	if (m.n == 1) {
		m.v[0] = m.v[1];
		m.v[1] = NULL;
	} else if ((m.v[0] = strndup(m.v[1], n)) == NULL) {
		for (i = 1; i <= m.n; i++)
			free(m.v[i]);
		free(m.v);
		return NULL;
	} else
		m.v[m.n + 1] = NULL;
	return m.v;
}

/* readline's line handler in callback mode. */
static void
online(char *line)
{
	rlline = line;
	rldone = 1;
	/* Else readline prepares the terminal for another line at once. */
	rl_callback_handler_remove();
}

/*
** Waiting for keys. readline's own rl_getc waits in pselect with the signal
** mask it recorded when rlread had SIGINT blocked, so a Ctrl-C that flushes
** the keys readline was about to read left it waiting, deaf to SIGINT, for
** another key. tessel reads the keys itself: it waits with SIGINT and
** SIGWINCH deliverable and reads without blocking (from a second,
** non-blocking descriptor of the terminal), and on Ctrl-C it leaves
** readline for rlread, which cleans up as readline's own handler would.
*/
static sigset_t rlwait;		/* the mask to wait with: SIGINT deliverable */
static sigjmp_buf rlescape;	/* back to rlread on Ctrl-C */
static int rlreading;		/* rlescape is set */
static int nbfd = -1;		/* the terminal, O_NONBLOCK, or -1 */

static int
rlgetc(FILE *f)
{
	int fd = fileno(f), avail;
	unsigned char c;
	fd_set fds;
	ssize_t n;

	for (;;) {
		if (gotint && rlreading)
			siglongjmp(rlescape, 1);
		if (gotwinch) {
			gotwinch = 0;
			rl_resize_terminal();
		}
		FD_ZERO(&fds);
		FD_SET(fd, &fds);
		if (pselect(fd + 1, &fds, NULL, NULL, NULL, &rlwait) < 0) {
			if (errno == EINTR)
				continue;
			return EOF;
		}
		if (nbfd >= 0) {
			n = read(nbfd, &c, 1);
		} else {
			/* no second descriptor: read only what is there */
			if (ioctl(fd, FIONREAD, &avail) == 0 && avail == 0)
				continue;
			n = read(fd, &c, 1);
		}
		if (n == 1)
			return c;
		if (n == 0)
			return EOF;
		if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
			return EOF;
	}
}

/*
** Read a line with readline's callback interface: readline() cannot be
** left on Ctrl-C. SIGINT and SIGWINCH stay blocked but while waiting for
** a key, so none is lost between the test of its flag and the wait.
** Returns LUA_OK with the line in *line (NULL at end of input), or
** INPUT_INTERRUPTED when Ctrl-C discarded the line.
*/
static int
rlread(const char *prompt, char **line)
{
	sigset_t block, old;
	int status = LUA_OK;

	sigemptyset(&block);
	sigaddset(&block, SIGINT);
	sigaddset(&block, SIGWINCH);
	sigprocmask(SIG_BLOCK, &block, &old);
	rlwait = old;
	sigdelset(&rlwait, SIGINT);
	sigdelset(&rlwait, SIGWINCH);
	gotint = 0;
	rldone = 0;
	rlline = NULL;
	/* readline() clears this for each line, the callback interface never
	** does: after one Ctrl-D on a continuation line, every line would end
	** in an extra newline. */
	rl_eof_found = 0;
	rl_callback_handler_install(prompt, online);
	if (sigsetjmp(rlescape, 0) == 0) {
		rlreading = 1;
		/* rlgetc waits for each key, and leaves at once on Ctrl-C */
		while (!rldone && !gotint)
			rl_callback_read_char();
	}
	rlreading = 0;
	if (gotint && !rldone) {
		/* What readline does when it handles SIGINT itself. */
		rl_free_line_state();
		rl_callback_sigcleanup();
		rl_echo_signal_char(SIGINT);
		rl_cleanup_after_signal();
		rl_callback_handler_remove();
		fputs("\n", rl_outstream);
		fflush(rl_outstream);
		status = INPUT_INTERRUPTED;
	}
	sigprocmask(SIG_SETMASK, &rlwait, NULL);
	*line = rlline;
	return status;
}

/* Read a line from a stdin that is no terminal (tessel -i < file). */
static int
plainread(const char *prompt, char **line)
{
	size_t cap = 0;
	ssize_t n;

	fputs(prompt, stdout);
	fflush(stdout);
	*line = NULL;
	gotint = 0;
	if ((n = getline(line, &cap, stdin)) < 0) {
		free(*line);
		*line = NULL;
		if (gotint && ferror(stdin)) {
			clearerr(stdin);
			fputs("\n", stdout);
			return INPUT_INTERRUPTED;
		}
		return LUA_OK;
	}
	if (n > 0 && (*line)[n-1] == '\n')
		(*line)[n-1] = '\0';
	return LUA_OK;
}

/* Push the next line, prompting with _PROMPT or _PROMPT2 when they are
** strings, as lua.c does. Returns LUA_OK or an INPUT_ status. */
static int
pushline(lua_State *L, int firstline, int tty)
{
	char *line;
	int status;

	lua_rawgeti(L, LUA_REGISTRYINDEX, LUA_RIDX_GLOBALS);
	lua_pushstring(L, firstline ? "_PROMPT" : "_PROMPT2");
	if (lua_rawget(L, -2) != LUA_TSTRING) {
		lua_pop(L, 1);
		lua_pushstring(L, firstline ? PROMPT : PROMPT2);
	}
	lua_remove(L, -2);
	status = tty ? rlread(lua_tostring(L, -1), &line)
	             : plainread(lua_tostring(L, -1), &line);
	lua_pop(L, 1);
	if (status != LUA_OK)
		return status;
	if (line == NULL)
		return INPUT_EOF;
	lua_pushstring(L, line);
	free(line);
	return LUA_OK;
}

/* Whether status is a syntax error at the end of the input, so that the
** statement may go on in the next line. */
static int
incomplete(lua_State *L, int status)
{
	const char *msg;
	size_t len;

	if (status != LUA_ERRSYNTAX)
		return 0;
	msg = lua_tolstring(L, -1, &len);
	return len >= MARKLEN && strcmp(msg + len - MARKLEN, EOFMARK) == 0;
}

/* Compile the line on top as "return line", so that an expression prints
** its value. On success the function is pushed above the line. */
static int
addreturn(lua_State *L)
{
	const char *retline = lua_pushfstring(L, "return %s;", lua_tostring(L, -1));
	int status = luaL_loadbuffer(L, retline, strlen(retline), "=stdin");

	if (status == LUA_OK)
		lua_remove(L, -2);
	else
		lua_pop(L, 2);
	return status;
}

/* Compile the code on top as a statement, reading more lines while it is
** incomplete. Ctrl-D on a continuation line ends the statement as it is,
** reporting why it is incomplete. The function or the error message is
** pushed above the code. */
static int
multiline(lua_State *L, int tty)
{
	const char *code;
	size_t len;
	int status, input;

	for (;;) {
		code = lua_tolstring(L, -1, &len);
		status = luaL_loadbuffer(L, code, len, "=stdin");
		if (!incomplete(L, status))
			return status;
		if ((input = pushline(L, 0, tty)) == INPUT_EOF)
			return status;
		if (input != LUA_OK)
			return input;
		lua_remove(L, -2);	/* the error message */
		lua_pushliteral(L, "\n");
		lua_insert(L, -2);
		lua_concat(L, 3);
	}
}

/* Add a statement to the history and append it to the history file at
** once, so that a crash loses nothing and sessions interleave their
** entries. Errors on the file are ignored: history is a convenience. */
static void
saveline(const char *line, const char *hist)
{
	HIST_ENTRY *last;

	if (line[strspn(line, " \t\n")] == '\0')
		return;
	last = history_get(history_base + history_length - 1);
	if (last != NULL && strcmp(last->line, line) == 0)
		return;
	add_history(line);
	if (hist != NULL && append_history(1, hist) != 0)
		write_history(hist);	/* append_history does not create the file */
}

/* Read and compile one statement, leaving its function (or the error
** message) on top. Returns its status or an INPUT_ status. */
static int
loadline(lua_State *L, int tty, const char *hist)
{
	int status;

	if ((status = pushline(L, 1, tty)) != LUA_OK)
		return status;
	if ((status = addreturn(L)) != LUA_OK)
		status = multiline(L, tty);
	if (status == INPUT_INTERRUPTED)
		return status;
	if (tty)
		saveline(lua_tostring(L, -2), hist);
	lua_remove(L, -2);
	return status;
}

/*
** How the REPL shows a plain table (one with no __tostring or __name), which
** print would show as an address: its contents as a Lua constructor, the
** sequence first, then the other keys sorted, strings quoted, nested tables
** to a depth of 6 and 100 entries each (then "..."), a cycle as {...}. It is
** Lua, as it walks tables with next and calls __tostring; only REPL results
** use it, never print itself, so scripts print what lua prints.
*/
static const char reprsrc[] =
	"local MAXDEPTH, MAXITEMS = 6, 100\n"
	"local kw = {}\n"
	"for w in ('and break do else elseif end false for function goto if in local nil not or '\n"
	"  .. 'repeat return then true until while'):gmatch('%a+') do kw[w] = true end\n"
	"local function plain(t)\n"
	"  local mt = getmetatable(t)\n"
	"  return mt == nil or type(mt) == 'table' and rawget(mt, '__tostring') == nil\n"
	"    and rawget(mt, '__name') == nil\n"
	"end\n"
	"local order = {number = 1, string = 2}\n"
	"local function before(a, b)\n"
	"  local ta, tb = order[type(a)] or 3, order[type(b)] or 3\n"
	"  if ta ~= tb then return ta < tb end\n"
	"  if ta == 3 then return tostring(a) < tostring(b) end\n"
	"  return a < b\n"
	"end\n"
	"local repr\n"
	"local function key(k, seen, depth)\n"
	"  if type(k) == 'string' and k:match('^[%a_][%w_]*$') and not kw[k] then return k end\n"
	"  return '[' .. repr(k, seen, depth) .. ']'\n"
	"end\n"
	"function repr(v, seen, depth)\n"
	"  if type(v) == 'string' then return (('%q'):format(v):gsub('\\\\\\n', '\\\\n')) end\n"
	"  if type(v) ~= 'table' or not plain(v) then return tostring(v) end\n"
	"  if seen[v] or depth >= MAXDEPTH then return '{...}' end\n"
	"  seen[v] = true\n"
	"  local out, n, keys = {}, rawlen(v), {}\n"
	"  for i = 1, math.min(n, MAXITEMS + 1) do out[#out + 1] = repr(rawget(v, i), seen, depth + 1) end\n"
	"  for k in next, v do\n"
	"    if math.type(k) ~= 'integer' or k < 1 or k > n then keys[#keys + 1] = k end\n"
	"  end\n"
	"  table.sort(keys, before)\n"
	"  for _, k in ipairs(keys) do\n"
	"    if #out > MAXITEMS then break end\n"
	"    out[#out + 1] = key(k, seen, depth + 1) .. ' = ' .. repr(rawget(v, k), seen, depth + 1)\n"
	"  end\n"
	"  seen[v] = nil\n"
	"  if #out > MAXITEMS then\n"
	"    for i = #out, MAXITEMS + 1, -1 do out[i] = nil end\n"
	"    out[#out + 1] = '...'\n"
	"  end\n"
	"  return '{' .. table.concat(out, ', ') .. '}'\n"
	"end\n"
	"return function(v)\n"
	"  if type(v) == 'table' and plain(v) then return repr(v, {}, 0) end\n"
	"  return v\n"
	"end\n";

/* Print the values above base through the global print, as lua.c does,
** plain tables shown by reprsrc. */
static int
printall(lua_State *L)
{
	int i, n = lua_gettop(L);

	if (luaL_loadbuffer(L, reprsrc, sizeof reprsrc - 1, "=repr") != LUA_OK)
		lua_error(L);
	lua_call(L, 0, 1);
	for (i = 1; i <= n; i++) {
		if (!lua_istable(L, i))
			continue;
		lua_pushvalue(L, -1);
		lua_pushvalue(L, i);
		lua_call(L, 1, 1);
		lua_replace(L, i);
	}
	lua_pop(L, 1);
	lua_getglobal(L, "print");
	lua_insert(L, 1);
	lua_call(L, n, 0);
	return 0;
}

static void
printresults(lua_State *L, int base)
{
	int n = lua_gettop(L) - base;

	if (n == 0)
		return;
	if (!lua_checkstack(L, LUA_MINSTACK)) {
		lua_settop(L, base);
		lua_writestringerror("%s\n", "too many results to print");
		return;
	}
	lua_pushcfunction(L, printall);
	lua_insert(L, base + 1);
	if (docall(L, n, 0, msgline) != LUA_OK) {
		lua_writestringerror("error calling 'print' (%s)\n", lua_tostring(L, -1));
		lua_pop(L, 1);
	}
}

/* Push the history file's name, or nil: $TESSEL_HISTORY (empty for none),
** else ~/.tessel_history. */
static void
pushhistfile(lua_State *L)
{
	const char *s = getenv("TESSEL_HISTORY");

	if (s != NULL) {
		if (*s)
			lua_pushstring(L, s);
		else
			lua_pushnil(L);
	} else if ((s = getenv("HOME")) != NULL && *s)
		lua_pushfstring(L, "%s/%s", s, HISTFILE);
	else
		lua_pushnil(L);
}

static void
initreadline(const char *hist)
{
	rl_readline_name = "tessel";	/* for $if tessel in ~/.inputrc */
	rl_instream = stdin;
	rl_outstream = stdout;
	rl_catch_signals = 0;		/* SIGINT and SIGWINCH are ours: see rlread */
	rl_catch_sigwinch = 0;
	rl_getc_function = rlgetc;
	if (nbfd < 0 && ttyname(STDIN_FILENO) != NULL)
		nbfd = open(ttyname(STDIN_FILENO), O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	rl_attempted_completion_function = complete;
	rl_basic_word_break_characters = WORDBREAK;
	/* Timestamps, written as comment lines, delimit the entries in the
	** file, so that a statement of several lines comes back as one. */
	history_comment_char = '#';
	history_write_timestamps = 1;
	history_multiline_entries = 1;
	stifle_history(HISTMAX);
	if (hist != NULL)
		read_history(hist);
}

void
repl_run(lua_State *L)
{
	struct sigaction oldint, oldwinch;
	const char *hist;
	int tty = isatty(STDIN_FILENO), base, status;

	globalL = L;
	lua_writestring(BANNER "\n", strlen(BANNER "\n"));
	fflush(stdout);
	if (tty)
		pushhistfile(L);
	else
		lua_pushnil(L);
	base = lua_gettop(L);
	hist = lua_tostring(L, base);	/* anchored at base until the end */
	if (tty) {
		initreadline(hist);
		setsignal(SIGWINCH, onwinch, &oldwinch);
	}
	setsignal(SIGINT, onint, &oldint);
	for (;;) {
		lua_settop(L, base);
		status = loadline(L, tty, hist);
		if (status == INPUT_EOF)
			break;
		if (status == INPUT_INTERRUPTED)
			continue;
		if (status == LUA_OK)
			status = docall(L, 0, LUA_MULTRET, msgline);
		if (status == LUA_OK)
			printresults(L, base);
		else
			repl_report(L, NULL, status);
	}
	sigaction(SIGINT, &oldint, NULL);
	if (tty) {
		sigaction(SIGWINCH, &oldwinch, NULL);
		if (hist != NULL)
			history_truncate_file(hist, HISTMAX);
		clear_history();
	}
	lua_settop(L, base - 1);
	lua_writeline();
}
