#!/bin/sh
# repl_test.sh - drive the tessel REPL through a real terminal (tmux) and check what the user sees.
#
# Usage: TESSEL=./tessel sh tests/repl_test.sh
# It checks values, continuation lines, completion, errors, Ctrl-C, Ctrl-D
# and history, in a 120x40 pane of a private tmux server. Each check polls
# the pane every 0.05 s, TIMEOUT times at most; no fixed waits.

set -u
: "${TESSEL:?set TESSEL to the tessel binary}"
case $TESSEL in
/*) ;;
*) TESSEL=$(pwd)/$TESSEL ;;
esac
command -v tmux >/dev/null 2>&1 || { echo "repl_test: tmux is not installed" >&2; exit 1; }

TIMEOUT=100
TMPD=$(mktemp -d "${TMPDIR:-/tmp}/tessel-test.XXXXXX") || exit 1
passed=0

# A private server, whose socket goes away with the temporary directory.
tm() {
	tmux -S "$TMPD/tmux" -f /dev/null "$@"
}

cleanup() {
	tm kill-server >/dev/null 2>&1
	rm -rf "$TMPD"
}
trap cleanup EXIT
trap 'exit 2' HUP INT PIPE TERM

# The program runs with a private HOME and history file, and default
# readline settings.
export TESSEL TMPD
export HOME="$TMPD" TESSEL_HISTORY="$TMPD/history" INPUTRC=/dev/null SHELL=/bin/sh
unset TMUX

fail() {
	echo "repl_test: FAIL: $1" >&2
	echo "--- pane ---" >&2
	tm capture-pane -p -S - -t t >&2 2>/dev/null || echo "(no pane)" >&2
	echo "------------" >&2
	exit 1
}

# The shell around tessel writes its exit status to a file (tmux's own
# pane_dead_status is not always set in time). Ctrl-C reaches the shell
# too: it must survive it, and a trapped signal is reset for tessel.
start() {
	rm -f "$TMPD/rc"
	tm new-session -d -s t -x 120 -y 40 \
		'trap : INT; "$TESSEL"; echo $? >"$TMPD/rc"' ||
		fail "cannot start tessel in tmux"
}

# Ctrl-D on an empty line ends tessel with status 0.
quit() {
	expect_last '>'
	key C-d
	poll '[ -s "$TMPD/rc" ]' "tessel did not exit on Ctrl-D"
	[ "$(cat "$TMPD/rc")" = 0 ] || fail "tessel exited with status $(cat "$TMPD/rc")"
}

# The whole pane, scrollback included, and its last non-empty line.
pane() {
	tm capture-pane -p -S - -t t 2>/dev/null
}
lastline() {
	pane | grep -v '^$' | tail -n 1
}

# poll TEST DESCRIPTION: retry the shell command TEST until it succeeds.
# TEST sees the text to look for in $want.
poll() {
	i=0
	until eval "$1"; do
		i=$((i + 1))
		[ $i -ge $TIMEOUT ] && fail "$2"
		sleep 0.05
	done
}

# expect_line TEXT: some line of the pane is exactly TEXT.
expect_line() {
	want=$1
	poll 'pane | grep -qxF -- "$want"' "no line '$1' in the pane"
}

# expect_text TEXT: some line of the pane contains TEXT.
expect_text() {
	want=$1
	poll 'pane | grep -qF -- "$want"' "no text '$1' in the pane"
}

# expect_last TEXT: the line of the cursor is TEXT (trailing blanks cut).
# Waiting for the prompt before typing matters: before readline takes the
# terminal, the terminal itself would echo what we type.
expect_last() {
	want=$1
	poll '[ "$(lastline)" = "$want" ]' "the last line is not '$1'"
}

type_keys() {
	tm send-keys -t t -l -- "$1"
}

key() {
	tm send-keys -t t "$@"
}

# expect_after INPUT OUTPUT: the line after the input line "> INPUT" is
# OUTPUT, so the output belongs to that input and no blank line came between.
# awk reads both from the environment: -v would expand their backslashes.
AFTER='p == ENVIRON["A"] && $0 == ENVIRON["B"] { f = 1 } { p = $0 } END { exit !f }'
expect_after() {
	want="> $1"
	out=$2
	poll 'pane | A=$want B=$out awk "$AFTER"' "no line '$2' right after '> $1'"
}

# enter CODE: at a fresh prompt, type CODE and Enter.
enter() {
	expect_last '>'
	type_keys "$1"
	key Enter
}

# check CODE OUTPUT: CODE prints OUTPUT.
check() {
	enter "$1"
	expect_after "$1" "$2"
	passed=$((passed + 1))
}

# complete WORD COMPLETED REST OUTPUT: Tab turns WORD into COMPLETED, and
# the line completed with REST prints OUTPUT.
complete() {
	expect_last '>'
	type_keys "$1"
	key Tab
	expect_last "> $2"
	type_keys "$3"
	key Enter
	expect_after "$2$3" "$4"
	passed=$((passed + 1))
}

ok() {
	passed=$((passed + 1))
}

start
expect_text 'type help() for help'
ok

check '1+2' '3'
check 'return 1, nil, "two"' '1       nil     two'	# tabs, as the terminal shows them

# A plain table shows its contents (REPL results only); print shows the address, as lua's does.
check '{3, 1, name = "a b", {x = 1}}' '{3, 1, {x = 1}, name = "a b"}'
enter 'cyc = {1}; cyc.me = cyc'
check 'cyc' '{1, me = {...}}'
check 'type(tostring({}))' 'string'

# An error keeps the state.
enter 'x = 41'
check 'error("boom")' 'stdin:1: boom'
check 'x + 1' '42'

# Completion: a global, a table field, a method of a string and of a userdata.
enter 'zebra_count = 1234'
complete 'zebra_c' 'zebra_count' ' + 1' '1235'
complete 'string.for' 'string.format' '("<%d>", 5)' '<5>'
enter 's = "abc"'
complete 's:up' 's:upper' '()' 'ABC'
complete 'io.stdout:wri' 'io.stdout:write' '("w", "rote\n")' 'wrote'

# The layout areas: an error in one keeps every value; completion knows their tables and methods.
enter 'TC = axe.layout("S[(8,2,4,2):(4@lane,1@warp,1@lane,1@reg)] + R[2:4@warp] + 5@warp", {8, 16})'
check 'TC(9, 0)' 'stdin:1: axe.apply: coordinate 9 is outside mode 0 of shape (8,16)'
check '#TC, TC(3, 9)[2].warp' '128     10'
complete 'axe.tile_o' 'axe.tile_of' ' ~= nil' 'true'
enter 'G = lego.TileOrderBy({2,2}, {3,3}):GroupBy({6,6})'
complete 'G:inv_e' 'G:inv_expr' '() ~= nil' 'true'
check 'tostring((G:inv_expr()))' 'k//18*3 + k//3%3'
enter 'i = uop.var("i", 0, 63)'
check 'i // 0' 'stdin:1: uop //: division by zero (the divisor 0 is always 0)'
check '(i * 4 + 3) % 4' '(i*4 + 3)%4'
complete 'uop.equiv' 'uop.equivalent' '(i % 8, i & 7)' 'true'

# Kernels: a failed stage or run keeps the kernel; completion knows kernel and its methods.
enter 'K = kernel.lower(tensor.param("inp", {2, 4}):softmax(1))'
check 'K:run()' 'stdin:1: k:run: input inp is not bound (k:run{inp = tensor})'
check 'K:stage("s", function() error("boom") end)' 'stdin:1: boom'
check '#K:stages(), K:check()' '3       true'
complete 'kernel.redu' 'kernel.reduce' ' ~= nil' 'true'
complete 'K:coun' 'K:counts' '().threads' '3'

# The echo of a program with unbound params shows it and names them (printing never raises).
check 'tensor.param("p", {2}) * 2' '<Tensor float32 (2,) on CPU> (unbound param: p; bind it with t:realize{p = ...})'

# Ctrl-C stops a running loop; the state stays.
enter 'print("spin") while true do end'
expect_after 'print("spin") while true do end' 'spin'
key C-c
expect_text 'interrupted!'
ok
check 'x * 3' '123'

# Ctrl-C stops a long loop in C too (the kernel interpreter polls it): no second Ctrl-C needed.
enter 'S = kernel.new{grid = {1}, block = {1}}; SO = S:output("o", "int32", {1})'
enter 'S:stage("spin", function() for i in kernel.range(1 << 30) do SO[{0}] = SO[{0}] + 1 end end)'
enter 'print("cspin") S:run()'
expect_after 'print("cspin") S:run()' 'cspin'
key C-c
poll '[ "$(pane | grep -c interrupted)" -ge 2 ]' "one Ctrl-C did not stop S:run()"
ok
check 'x * 2' '82'

# Ctrl-C at the prompt discards the line, and a pending statement.
expect_last '>'
type_keys 'discarded'
expect_last '> discarded'
key C-c
check 'x - 1' '40'
enter 'for i = 1, 2 do'
expect_last '>>'
key C-c
check 'x - 2' '39'

# Ctrl-D on a continuation line ends the statement as it is.
enter 'if x then'
expect_last '>>'
key C-d
expect_text "'end' expected near <eof>"
check 'x - 3' '38'

# A statement over several lines, with continuation prompts.
enter 'for i = 1, 3 do'
expect_last '>>'
type_keys 'print("loop" .. i)'
key Enter
expect_last '>>'
type_keys 'end'
key Enter
expect_line 'loop3'
ok

quit
ok

# The history file has the statements, not the discarded line.
H=$TMPD/history
[ -f "$H" ] || fail "no history file $H"
for line in 'x = 41' 'error("boom")' 'for i = 1, 3 do' 'print("loop" .. i)' 'end'; do
	grep -qxF -- "$line" "$H" || fail "'$line' is not in the history file"
done
grep -qF discarded "$H" && fail "a discarded line is in the history file"
ok

# A new session reads it back: Up recalls the loop as one entry.
start
expect_last '>'
key Up
expect_last 'end'
key Enter
expect_line 'loop3'
ok
quit

echo "$passed passed, 0 failed"
