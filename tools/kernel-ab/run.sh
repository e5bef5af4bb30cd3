#!/usr/bin/env bash
# In-process A/B of the K-format decode kernels of one x86 path at two
# revisions (kernel_ab.cpp says what it measures). Needs a build (tools/dev.sh
# test or cmake) in BUILD_DIR (default build) for the engine's libraries.
#   [ISA=avx512|avx2|avx2-vnni] tools/kernel-ab/run.sh REV_A REV_B [Q2_K|Q3_K|Q4_K|Q5_K|Q6_K]
# REV: a commit, WORKTREE for the file on disk, or the path of a copy of the
# file (an experiment kept outside the tree). ISA (default avx512) picks the
# file and its compiler flags: engine/tensor/kernels_avx512.cpp, or
# kernels_avx2_impl.h with or without AVX-VNNI.
set -euo pipefail
cd "$(dirname "$0")/../.."
[[ $# -ge 2 ]] || { echo "usage: $0 REV_A REV_B [Q2_K|Q3_K|Q4_K|Q5_K|Q6_K]" >&2; exit 2; }
build="${BUILD_DIR:-build}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
isa="${ISA:-avx512}"
case "$isa" in
  avx512) flags="-mavx2 -mfma -mf16c -mbmi2 -mavx512f -mavx512bw -mavx512vl -mavx512dq -mavx512vnni" ;;
  avx2) flags="-mavx2 -mfma -mf16c -mbmi2 -DKERNEL_AB_AVX2" ;;
  avx2-vnni) flags="-mavx2 -mfma -mf16c -mbmi2 -mavxvnni -DCAIRN_AVX_VNNI=1 -DKERNEL_AB_AVX2" ;;
  *) echo "ISA must be avx512, avx2 or avx2-vnni" >&2; exit 2 ;;
esac
case "$isa" in
  avx512) src=engine/tensor/kernels_avx512.cpp ;;
  *) src=engine/tensor/kernels_avx2_impl.h ;;
esac
for side in A B; do
  rev="$1"; shift
  if [[ "$rev" == WORKTREE ]]; then cp "$src" "$work/$side.cpp"
  elif [[ -f "$rev" ]]; then cp "$rev" "$work/$side.cpp"
  else git show "$rev:$src" > "$work/$side.cpp"; fi
  sed -i 's/^#pragma once$//' "$work/$side.cpp"  # the two copies are included into one file
done
libs=$(find "$build/engine" -name 'lib*.a' -not -path '*cross*')
# shellcheck disable=SC2086  # $flags is a list of options
g++ -std=c++20 -O3 $flags \
  -Iengine -Iengine/include -DKERNELS_A="\"$work/A.cpp\"" -DKERNELS_B="\"$work/B.cpp\"" \
  tools/kernel-ab/kernel_ab.cpp -o "$work/kernel_ab" -Wl,--start-group $libs -Wl,--end-group -lpthread
"$work/kernel_ab" "${1:-Q6_K}"
