#!/bin/sh
# bench/neptune/run.sh - Neptune's attention benchmark in one command: export tessel's Triton
# kernels for the ten operators (where ./tessel runs), then check and time them against
# FlexAttention, SDPA and the unfused PyTorch expression (where a GPU is). The tables are printed
# last. Run from the repository root: sh bench/neptune/run.sh [dir [pattern]]
# (pattern, a Python regular expression, is passed to bench.py: it keeps the cases it matches).
set -e
dir=${1:-bench/neptune/out}
if [ -x ./tessel ] && ./tessel -e 'return 1' >/dev/null 2>&1 && [ -f bench/neptune/export.lua ]; then
	./tessel bench/neptune/export.lua "$dir"
elif [ -d "$dir" ]; then
	echo "run.sh: ./tessel or bench/neptune/export.lua is missing here: using the kernels already exported in $dir"
else
	echo "run.sh: ./tessel does not run here (or bench/neptune/export.lua is missing) and $dir is empty: build tessel (make) or carry the export" >&2
	exit 1
fi
if ! command -v nvidia-smi >/dev/null 2>&1 || ! nvidia-smi -L >/dev/null 2>&1; then
	echo "run.sh: no CUDA GPU here: the kernels are in $dir; run this script where one is, or check"
	echo "        correctness here with: python3 bench/neptune/bench.py --cpu $dir"
	exit 0
fi
python3 bench/neptune/bench.py "$dir" ${2:+"$2"}
