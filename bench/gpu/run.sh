#!/bin/sh
# bench/gpu/run.sh - the GPU benchmark in one command: export the kernels of scripts/gpu/ (where
# ./tessel runs), then build, check and time them against PyTorch (where a GPU is). The table
# is printed last. Run from the repository root: sh bench/gpu/run.sh [dir]
set -e
dir=${1:-bench/gpu/out}
if [ -x ./tessel ] && ./tessel -e 'return 1' >/dev/null 2>&1; then
	./tessel bench/gpu/export.lua "$dir"
elif [ -d "$dir" ]; then
	echo "run.sh: ./tessel does not run here: using the kernels already exported in $dir"
else
	echo "run.sh: ./tessel does not run here and $dir is empty: build tessel (make) or carry the export" >&2
	exit 1
fi
if ! command -v nvidia-smi >/dev/null 2>&1 || ! nvidia-smi -L >/dev/null 2>&1; then
	echo "run.sh: no CUDA GPU here: exported to $dir; run this script where one is"
	exit 0
fi
export PATH="$PATH:/usr/local/cuda/bin"
python3 bench/gpu/bench.py "$dir"
