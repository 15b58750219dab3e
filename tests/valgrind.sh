#!/bin/sh
# tests/valgrind.sh - REPL sessions that drive every module, under valgrind's memcheck: the tour,
# and the `> ` inputs of README.md and docs/*.md, each page one session (make valgrind).
# Leaks inside Graphviz, fontconfig and pango are suppressed by name (tests/valgrind.supp);
# any other leak, and any invalid access or use of uninitialized memory, fails.
set -eu
TESSEL=${TESSEL:-./tessel}
supp=$(pwd)/tests/valgrind.supp
dir=$(mktemp -d "${TMPDIR:-/tmp}/tessel-valgrind.XXXXXX")
trap 'rm -rf "$dir"' EXIT
vg() {
	what=$1
	shift
	valgrind --quiet --suppressions="$supp" --leak-check=full \
	  --show-leak-kinds=definite,indirect --errors-for-leak-kinds=definite,indirect \
	  --error-exitcode=9 --log-file="$dir/vg.log" "$@" >/dev/null 2>&1 || {
		echo "valgrind: $what: errors or leaks:"; cat "$dir/vg.log"; exit 1; }
	echo "clean: $what"
}
vg scripts/tour.lua "$TESSEL" scripts/tour.lua
for f in README.md docs/*.md; do
	# the inputs of the fenced examples: "> " starts one, ">> " continues it
	awk '/^```/ { fence = !fence; next } fence && /^> / { print substr($0, 3); next }
	     fence && /^>> / { print substr($0, 4) }' "$f" > "$dir/in.lua"
	[ -s "$dir/in.lua" ] || continue
	# export.md writes exports under $TMPDIR (or /tmp) and compiles: its session runs in a
	# scratch directory
	(cd "$dir" && vg "$f (REPL)" "$OLDPWD/$TESSEL" -i < "$dir/in.lua") || exit 1
done
