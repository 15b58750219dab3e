#!/bin/sh
# run.sh SECONDS NAME... - run each libFuzzer harness build/fuzz/fuzz_NAME for SECONDS seconds
# (libFuzzer's fork mode: a crash is saved and fuzzing goes on), from its seed corpus
# fuzz/corpus/NAME (left untouched) into a working corpus build/fuzz/corpus/NAME that later
# runs start from, with its dictionary fuzz/NAME.dict. Each saved input is then run again
# and its report matched against fuzz/known.txt: a finding listed there (reported, fixed
# elsewhere, see fuzz/FINDINGS.md) is shown; any other fails the run.
# FUZZ_JOBS=N runs N fuzzing processes per harness (default 1); FUZZ_FLAGS adds flags.
set -u
cd "$(dirname "$0")/.."
secs=$1
shift
B=build/fuzz
jobs=${FUZZ_JOBS:-1}
mkdir -p $B/findings
# Graphviz's known leaks; UBSan reports stop the input with a stack
export LSAN_OPTIONS="suppressions=$PWD/tests/lsan.supp:print_suppressions=0"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1:${UBSAN_OPTIONS:-}"
FLAGS="-timeout=20 -rss_limit_mb=2560 -max_len=4096"

# known NAME REPORT: the id of the known finding whose pattern the report matches, or nothing
known() {
	grep -v '^#' fuzz/known.txt | while read -r h id pat; do
		[ "$h" = "$1" ] || [ "$h" = "*" ] || continue
		if grep -qE "$pat" "$2"; then
			echo "$id"
			break
		fi
	done
}

failed=""
for name in "$@"; do
	mkdir -p $B/corpus/$name $B/findings/$name
	log=$B/fuzz_$name.log
	printf '== fuzz %-9s %5ss x%s ' "$name" "$secs" "$jobs"
	before=$(ls $B/findings/$name | wc -l)
	# shellcheck disable=SC2086
	$B/fuzz_$name -fork="$jobs" -ignore_crashes=1 -ignore_timeouts=1 -ignore_ooms=1 \
		-max_total_time="$secs" $FLAGS -dict=fuzz/$name.dict \
		-artifact_prefix=$B/findings/$name/ ${FUZZ_FLAGS:-} \
		$B/corpus/$name fuzz/corpus/$name >"$log" 2>&1
	rc=$?
	execs=$(grep -oE '^#[0-9]+' "$log" | tail -n 1 | tr -d '#')
	cov=$(grep -oE 'cov: [0-9]+' "$log" | tail -n 1)
	after=$(ls $B/findings/$name | wc -l)
	echo "${execs:-?} executions, $cov, $((after - before)) new saved inputs (exit $rc)"
	# fork mode exits non-zero after an ignored crash; with nothing saved it did not run
	if [ $rc -ne 0 ] && [ "$after" -eq "$before" ]; then
		tail -n 5 "$log" | sed 's/^/   /'
		failed="$failed $name"
	fi
	# each saved input once: its report is kept next to it
	knownids=""
	fixed=0
	for f in $B/findings/$name/*; do
		[ -f "$f" ] || continue
		# slow units are a busy machine's, not findings: timeouts are
		case ${f##*/} in crash-* | leak-* | timeout-* | oom-* | minimized-*) ;; *) continue ;; esac
		case $f in *.report) continue ;; esac
		rep=$f.report
		# run it again when the harness was rebuilt since (the bug may be fixed)
		[ "$rep" -nt "$B/fuzz_$name" ] || $B/fuzz_$name $FLAGS "$f" >"$rep" 2>&1
		id=$(known "$name" "$rep")
		if ! grep -qE 'ERROR: |runtime error|invariant failed|deadly signal' "$rep"; then
			fixed=$((fixed + 1))
		elif [ -n "$id" ]; then
			knownids="$knownids $id"
		else
			echo "   NEW FINDING: $f"
			grep -m1 -E 'ERROR: |runtime error|invariant failed' "$rep" | sed 's/^/     /'
			grep -m3 -E '^ +#[0-9]+ .* in [a-z_0-9]+ /' "$rep" | grep -v -E 'fuzzer::|__sanitizer|LLVMFuzzer' \
				| sed 's/^/     /'
			failed="$failed $name"
		fi
	done
	# fixed since, or (rarely: the harnesses scribble the stack so that garbage is the same in
	# every process) a crash that needs what earlier inputs of the fuzzing process left
	[ $fixed -eq 0 ] || echo "   $fixed saved inputs do not fail when run again alone"
	for id in $(echo $knownids | tr ' ' '\n' | sort -u); do
		echo "   known $id (fuzz/FINDINGS.md): $(echo $knownids | tr ' ' '\n' | grep -cx "$id") saved inputs"
	done
done
if [ -n "$failed" ]; then
	echo "fuzz: new findings in:$failed (docs/reliability.md: reproduce, minimize, add a test)"
	exit 1
fi
echo "fuzz: no new findings"
