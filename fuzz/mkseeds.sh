#!/bin/sh
# mkseeds.sh - rebuild the seed corpora in fuzz/corpus/<harness>/ from the notation that
# docs/, tests/ and scripts/ use, one file per distinct string (named by its hash).
# The lua_api corpus is not made here: its inputs are bytes of the harness's grammar, 600
# files of a corpus merged (-merge=1) after the runs of docs/reliability.md.
set -eu
cd "$(dirname "$0")/.."
SRC="docs/*.md tests/*.c tests/lua/*.lua scripts/*.lua"

# seed NAME: the lines on stdin (at most 300 distinct ones) become NAME's corpus
seed() {
	d=fuzz/corpus/$1
	rm -rf "$d"
	mkdir -p "$d"
	sort -u | head -n 300 | while IFS= read -r line; do
		[ -n "$line" ] || continue
		printf '%s' "$line" > "$d/$(printf '%s' "$line" | sha1sum | cut -c1-16)"
	done
	echo "$1: $(ls "$d" | wc -l) seeds"
}

# shellcheck disable=SC2086
quoted() { grep -ohE "$1" $SRC | sed -e 's/^["'\'']//' -e 's/["'\'']$//'; }

quoted '"[-_0-9(), :]+"' | grep -E '[0-9]' | seed cute
{ quoted '"[-_0-9(), :]+"' | grep -E '[(]'; quoted '"[(][-_0-9(), :]*[_:][-_0-9(), :]*[)]"'; } | seed tiler
quoted '"Sw<[^"]*"' | seed composed
{ quoted '"S\[[^"]*"'; quoted "'S\[[^']*'"; printf '%s\n' 'S[(4,8):(8,1)]|(32)' 'S[(8,2,4,2):(4@lane,1@warp,1@lane,1@reg)]|(2,2,4,2,2)' \
  'S[64:1]|(8,8)' 'S[(4,4):(1@lane,4@lane)] + R[2:4@warp]|(2,8)'; } | seed axe
printf '%s\n' bool int8 int16 int32 int64 uint8 uint16 uint32 uint64 float16 bfloat16 float32 float64 \
  index void infix c cuda opencl python triton lua GLOBAL LOCAL WARP THREAD LOOP REDUCE GROUP_REDUCE \
  UPCAST UNROLL G L R U block.x block.y thread.x threadIdx.x blockIdx.z warp lane global shared local \
  register reg thread warpgroup cta kernel value bank device none fp8 e4m3 tf32 half \
  SM80_16x8x16_F32F16F16F32_TN SM80_16x8x8_F32TF32TF32F32_TN SM90_64x128x16_F32F16F16_SS m gpuid P F \
  | seed names
grep -ohE "lego\.(GroupBy|OrderBy|RegP|GenP|Row|Col|TileBy|TileOrderBy|ExpandBy|from_cute)\(.*\)" \
  docs/lego.md tests/lua/test_lego.lua tests/lua/test_lego_robust.lua scripts/lego_tour.lua | seed lego
