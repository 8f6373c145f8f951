#!/usr/bin/env bash
# Builds the fatbin fixtures (small nvcc 13 objects and shared libraries) and records,
# in fixtures.tsv, exactly which -gencode list produced each one: the ground truth
# the unit test (tests/unit/test_fatbin.cpp) and the cuobjdump comparison
# (tests/e2e/test_fatbin_cuobjdump.py) check the parser against.
#
# fixtures.tsv columns (tab separated, one fixture a line, '#' lines are comments):
#   file         the fixture, relative to this directory
#   section      the ELF section holding its fatbin (.nv_fatbin, or __nv_relfatbin
#                for -rdc objects)
#   compressed   which entries nvcc stores compressed: ptx (its default: PTX, and
#                cubins stay as they are) or all (a compress mode, -rdc, or -G)
#   gencode      the -gencode options in container order: for a linked library the
#                link step's own (nvcc device-link stub) first, then each object's
#
# The outputs are committed; rerun after changing this script: bash build.sh
# Deterministic: relative paths only, and the tmpxft_<pid> file symbol nvcc leaves in
# every object is renamed to the source's name. One exception: the -G object
# (debug_sm100.o) differs in 3 bytes of its compressed debug cubin from run to run.
set -euo pipefail
cd "$(dirname "$0")"

NVCC=${NVCC:-/usr/local/cuda/bin/nvcc}
CUDA_LIB=${CUDA_LIB:-/usr/local/cuda/lib64}
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT

declare -A GENCODE
TSV_LINES=()

# Renames the STT_FILE symbol nvcc names after its temporary file (tmpxft_<pid>_...).
fix_file_symbol() {
  local object=$1 source=$2 name
  for name in $(readelf -sW "$object" | awk '$4 == "FILE" && $8 ~ /^tmpxft_/ {print $8}'); do
    objcopy --redefine-sym "$name=$(basename "$source")" "$object"
  done
}

# compile OUT SOURCE SECTION COMPRESSED GENCODE [extra nvcc flags...]
compile() {
  local out=$1 source=$2 section=$3 compressed=$4 gencode=$5
  shift 5
  # shellcheck disable=SC2086  # the gencode list is split on purpose
  "$NVCC" -c "$source" -o "$out" -Xcompiler -fPIC $gencode "$@"
  fix_file_symbol "$out" "$source"
  GENCODE[$out]=$gencode
  TSV_LINES+=("$out	$section	$compressed	$gencode${*:+ $*}")
}

# object OUT SOURCE GENCODE [extra flags...]: an intermediate object for a library.
object() {
  local out=$1 source=$2 gencode=$3
  shift 3
  # shellcheck disable=SC2086
  "$NVCC" -c "$source" -o "$WORK/$out" -Xcompiler -fPIC $gencode "$@"
  fix_file_symbol "$WORK/$out" "$source"
  GENCODE[$out]=$gencode
}

# The cubins are stored as is, PTX compressed (nvcc's defaults).
# Entry order is nvcc's, not always the -gencode order: it groups the codes by
# virtual arch (compute_XX), and within a group the order depends on how the codes
# were spelled. The tests compare the gencode lists as sets and check order where
# it is fixed (one code per virtual arch, and containers in link order).
compile sm90a.o src/scale.cu .nv_fatbin "ptx" \
  "-gencode arch=compute_90a,code=sm_90a"
compile blackwell_variants.o src/scale.cu .nv_fatbin "ptx" \
  "-gencode arch=compute_100a,code=sm_100a -gencode arch=compute_100f,code=sm_100f -gencode arch=compute_103a,code=sm_103a -gencode arch=compute_120f,code=sm_120f -gencode arch=compute_121a,code=sm_121a -gencode arch=compute_120f,code=compute_120f -gencode arch=compute_100a,code=compute_100a"
# nvcc refuses sm_120 beside sm_120f in one object: the plain ones get their own.
compile blackwell_plain.o src/scale.cu .nv_fatbin "ptx" \
  "-gencode arch=compute_100,code=sm_100 -gencode arch=compute_120,code=sm_120 -gencode arch=compute_121,code=sm_121 -gencode arch=compute_120,code=compute_120"
# sgl-kernel's sm100 build: zstd for everything.
compile sgl_like_size.o src/scale.cu .nv_fatbin "all" \
  "-gencode arch=compute_100a,code=sm_100a -gencode arch=compute_120a,code=sm_120a -gencode arch=compute_120,code=compute_120" \
  --compress-mode=size
# The older LZ4 compression, and the code=[...] list syntax.
compile speed_all.o src/scale.cu .nv_fatbin "all" \
  "-gencode arch=compute_90,code=[sm_90,compute_90] -gencode arch=compute_100a,code=sm_100a" \
  --compress-mode=speed -Xfatbin=-compress-all
# A -G debug cubin: the debug flag, compressed by default, and a longer header that
# carries the object's name (its size depends on the name: 120 and 128 seen).
compile debug_sm100.o src/scale.cu .nv_fatbin "all" \
  "-gencode arch=compute_100,code=sm_100" -G
# LTO IR (kind 8) lives in __nv_relfatbin of an -rdc object, compressed by default.
compile lto.o src/scale.cu __nv_relfatbin "all" \
  "-gencode arch=compute_100,code=lto_100 -gencode arch=compute_120a,code=lto_120a" -rdc=true

# Libraries: one container per object, in link order.
object add_one.o src/add_one.cu \
  "-gencode arch=compute_100a,code=sm_100a -gencode arch=compute_120,code=compute_120"
object scale.o src/scale.cu "-gencode arch=compute_90a,code=sm_90a"

# Linked by g++ as torch.utils.cpp_extension and CMake do: no device-link stub.
g++ -shared -o two_objects.so "$WORK/add_one.o" "$WORK/scale.o" -L"$CUDA_LIB" -lcudart
TSV_LINES+=("two_objects.so	.nv_fatbin	ptx	${GENCODE[add_one.o]} ${GENCODE[scale.o]}")

# Linked by nvcc: its device-link step adds a container of its own first (one cubin
# per link -gencode, header size 96).
LINK_GENCODE="-gencode arch=compute_100a,code=sm_100a"
# shellcheck disable=SC2086
"$NVCC" -shared -o nvcc_linked.so "$WORK/add_one.o" "$WORK/scale.o" -cudart shared $LINK_GENCODE
TSV_LINES+=("nvcc_linked.so	.nv_fatbin	ptx	$LINK_GENCODE ${GENCODE[add_one.o]} ${GENCODE[scale.o]}")

{
  echo "# Written by build.sh with $("$NVCC" --version | tail -1). Columns: file, section, compressed, gencode."
  printf '%s\n' "${TSV_LINES[@]}"
} > fixtures.tsv
echo "fatbin fixtures: $(wc -c sm90a.o blackwell_variants.o sgl_like_size.o speed_all.o blackwell_plain.o debug_sm100.o lto.o two_objects.so nvcc_linked.so | tail -1)"
