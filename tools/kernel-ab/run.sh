#!/usr/bin/env bash
# In-process A/B of the AVX-512 K-format decode kernels at two revisions
# (kernel_ab.cpp says what it measures). Needs a build (tools/dev.sh test or
# cmake) in BUILD_DIR (default build) for the engine's libraries.
#   tools/kernel-ab/run.sh REV_A REV_B [Q2_K|Q3_K|Q4_K|Q5_K|Q6_K]   (REV: a commit, or WORKTREE for the files on disk)
set -euo pipefail
cd "$(dirname "$0")/../.."
[[ $# -ge 2 ]] || { echo "usage: $0 REV_A REV_B [Q2_K|Q3_K|Q4_K|Q5_K|Q6_K]" >&2; exit 2; }
build="${BUILD_DIR:-build}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
src=engine/tensor/kernels_avx512.cpp
for side in A B; do
  rev="$1"; shift
  if [[ "$rev" == WORKTREE ]]; then cp "$src" "$work/$side.cpp"; else git show "$rev:$src" > "$work/$side.cpp"; fi
done
libs=$(find "$build/engine" -name 'lib*.a' -not -path '*cross*')
g++ -std=c++20 -O3 -mavx2 -mfma -mf16c -mbmi2 -mavx512f -mavx512bw -mavx512vl -mavx512dq -mavx512vnni \
  -Iengine -Iengine/include -DKERNELS_A="\"$work/A.cpp\"" -DKERNELS_B="\"$work/B.cpp\"" \
  tools/kernel-ab/kernel_ab.cpp -o "$work/kernel_ab" -Wl,--start-group $libs -Wl,--end-group -lpthread
"$work/kernel_ab" "${1:-Q6_K}"
