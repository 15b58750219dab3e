#!/bin/sh
# startup.sh - start-up time of tessel against lua5.4 (the peer) in the same run.
# Usage: bench/startup.sh PTYTIME [TESSEL] [RUNS]   (make bench builds PTYTIME)
set -eu
ptytime=$1
tessel=${2:-./tessel}
runs=${3:-100}

# mean wall time of a command in microseconds over $runs runs
mean_us() {
	start=$(date +%s%N)
	i=0
	while [ $i -lt "$runs" ]; do
		"$@" >/dev/null 2>&1 </dev/null
		i=$((i + 1))
	done
	end=$(date +%s%N)
	echo $(((end - start) / runs / 1000))
}

t_e=$(mean_us "$tessel" -e '')
l_e=$(mean_us lua5.4 -e '')
# the REPL in a pseudo-terminal, from exec to its first prompt
t_r=$("$ptytime" "$runs" "$tessel")
l_r=$("$ptytime" "$runs" lua5.4)

printf '%-34s %10s %10s %8s\n' "start-up ($runs runs, mean)" "tessel" "lua5.4" "ratio"
printf '%-34s %8s us %7s us %8s\n' "-e ''" "$t_e" "$l_e" "$(awk "BEGIN{printf \"%.2f\", $t_e/$l_e}")"
printf '%-34s %8s us %7s us %8s\n' "REPL to its prompt (pty)" "$t_r" "$l_r" "$(awk "BEGIN{printf \"%.2f\", $t_r/$l_r}")"
