#!/bin/sh
# bench/dist/run.sh - the multi-GPU bench in one command (docs/distributed.md). Where ./tessel runs it
# exports (bench/dist/export.lua); where the GPUs, nvcc and NCCL are it builds every export, runs
# `./dist check` of each against the CPU simulation, `./dist time` of each, then bench/dist/ref.cu
# (tessel's GEMM + reduce_scatter and allgather + GEMM, whole and overlapped in parts, against cuBLAS
# and NCCL unfused, in one harness) and, when
# bench/dist/nccl-tests holds NVIDIA's nccl-tests (source or built bin/), their reduce_scatter,
# allgather and allreduce at the same sizes. The tables come last.
# Run from the repository root: sh bench/dist/run.sh [dir [n]]
# n, the GPUs the programs span, defaults to every GPU here (2 where there are fewer); an export
# carried from elsewhere keeps the n it was exported for.
set -e
dir=${1:-bench/dist/out}
ngpu=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU' || true)
n=${2:-$ngpu}
[ "${n:-0}" -ge 2 ] || n=2
if [ -x ./tessel ] && ./tessel -e 'return 1' >/dev/null 2>&1; then
	./tessel bench/dist/export.lua "$dir" "$n" >/dev/null
	echo "run.sh: exported to $dir for $n GPUs"
elif [ ! -d "$dir" ]; then
	echo "run.sh: ./tessel does not run here and $dir is empty: build tessel (make) or carry the export" >&2
	exit 1
else
	n=$(sed -n 's/^enum { TESSEL_NDEV = \([0-9]*\),.*/\1/p' "$dir"/gemm_rs_check/dist.cu 2>/dev/null | head -1)
	echo "run.sh: using the export in $dir (for ${n:-?} GPUs)"
fi
if [ "${ngpu:-0}" -lt "${n:-2}" ]; then
	echo "run.sh: $ngpu GPUs here, the programs span ${n:-2}: exported to $dir; run this script where they are"
	exit 0
fi
export PATH="$PATH:/usr/local/cuda/bin"
# no NVLink multicast: NCCL, PyTorch and NVSHMEM
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
# NCCL: system-wide, in the CUDA toolkit, or PyTorch's wheel
if [ -z "$NCCL_HOME" ]; then
	for d in /usr/local/cuda /usr/local/cuda-13.0 /usr \
	         "$(python3 -c 'import nvidia.nccl, os; print(os.path.dirname(nvidia.nccl.__file__))' 2>/dev/null)"; do
		if [ -n "$d" ] && [ -f "$d/include/nccl.h" ]; then NCCL_HOME=$d; break; fi
	done
fi
echo "run.sh: NCCL from ${NCCL_HOME:-the compiler's default paths}"
export NCCL_HOME
lib=""
[ -n "$NCCL_HOME" ] && lib="-I$NCCL_HOME/include -L$NCCL_HOME/lib -L$NCCL_HOME/lib64 -Xlinker -rpath=$NCCL_HOME/lib"
log=$(mktemp)
# every export built at once (nvcc takes most of the time; the GPU machines have the cores)
benches=$(ls -d "$dir"/gemm_rs_*_*_* "$dir"/ag_gemm_*_*_* 2>/dev/null | grep -v _check || true)
all="$(ls -d "$dir"/examples/* "$dir"/redistributions/* "$dir"/*_check) $benches"
echo "run.sh: building $(echo $all | wc -w) exports and $(echo $benches | wc -w) references"
for d in $all; do
	make -s -C "$d" dist >"$d/build.log" 2>&1 &
done
for d in $benches; do
	# shellcheck disable=SC2086
	# sm_90a: the local GEMM is a wgmma kernel
	nvcc -O3 -std=c++17 -gencode=arch=compute_90a,code=sm_90a -I"$d" $lib -o "$d/ref" bench/dist/ref.cu \
		-lcublas -lnccl -lpthread >"$d/ref.log" 2>&1 &
done
wait
for d in $all; do
	[ -x "$d/dist" ] || { echo "run.sh: $d did not build:" >&2; cat "$d/build.log" >&2; exit 1; }
done
for d in $benches; do
	[ -x "$d/ref" ] || { echo "run.sh: $d/ref did not build:" >&2; cat "$d/ref.log" >&2; exit 1; }
done
for d in "$dir"/examples/* "$dir"/redistributions/* "$dir"/*_check; do
	echo "== $d"
	(cd "$d" && ./dist check && ./dist time 20) | tee -a "$log"
done
for d in $benches; do
	# gemm_rs_8192_8192_8192, gemm_rs_ov4_8192_8192_8192, ag_gemm_8192_8192_8192, ag_gemm_ov4_...
	b=$(basename "$d")
	mode=rs
	case $b in ag_*) mode=ag ;; esac
	parts=$(echo "$b" | sed -n 's/.*_ov\([0-9]*\)_.*/\1/p')
	set -- $(echo "$b" | tr '_' ' ' | awk '{print $(NF-2), $(NF-1), $NF}')
	echo "== $d: ./dist time, then ref $mode $1 $2 $3 ${parts:-1}"
	(cd "$d" && ./dist time 20)
	"$d/ref" $mode "$1" "$2" "$3" "${parts:-1}" 30 >"$d/ref.txt"
done
nt=bench/dist/nccl-tests
if [ -d "$nt" ]; then
	if ! "$nt/bin/reduce_scatter_perf" -h >/dev/null 2>&1; then
		echo "== building nccl-tests"
		make -s -C "$nt" -j16 CUDA_HOME=/usr/local/cuda NCCL_HOME="${NCCL_HOME:-/usr}" \
			NVCC_GENCODE="-gencode=arch=compute_90,code=sm_90" src.build BUILDDIR="$PWD/$nt/bin" >/dev/null
	fi
	for t in reduce_scatter all_gather all_reduce; do
		echo "== nccl-tests ${t}_perf, float16 sum, $n GPUs, 32 MiB to 256 MiB"
		"$nt/bin/${t}_perf" -b 32M -e 256M -f 2 -g "$n" -d half -o sum -w 5 -n 20 | grep -v '^#  Rank\|^# Using\|^#$' | tail -8
	done
fi
echo
echo "== the tables"
for d in $benches; do
	grep -v '^TABLE' "$d/ref.txt"
	echo
done
echo "| GPUs | program | size | tessel ms | unfused ms | ratio | cuBLAS alone | collective alone |"
echo "|---|---|---|---|---|---|---|---|"
for d in $benches; do
	sed -n 's/^TABLE //p' "$d/ref.txt"
done
rm -f "$log"
