#!/usr/bin/env bash
# Cross-builds the engine for aarch64 and runs the NEON path checks
# (tests/cross/neon_paths_check.cpp) under qemu-user. CTest runs it as
# cross_aarch64_neon; exit 77 (skipped) when the cross toolchain is missing.
#   tools/cross/check-aarch64.sh SOURCE_DIR BUILD_DIR
set -euo pipefail
src="$1"
build="$2"

missing=()
command -v aarch64-linux-gnu-g++ > /dev/null || missing+=(g++-aarch64-linux-gnu)
command -v qemu-aarch64 > /dev/null || missing+=(qemu-user)
for p in $("$src/tools/cross/install.sh" --list-libraries); do
  dpkg-query -W -f='${Status}' "$p" 2> /dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ -f "$("$src/tools/cross/install.sh" --prefix)/pkgconfig/sentencepiece.pc" ] || missing+=(sentencepiece:arm64)
if [ ${#missing[@]} -gt 0 ]; then
  echo "skipped: the aarch64 cross check needs ${missing[*]} (tools/cross/install.sh installs them)"
  exit 77
fi

cmake -S "$src" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCAIRN_ENGINE_ONLY=ON \
  -DCMAKE_TOOLCHAIN_FILE="$src/tools/cross/aarch64-linux-gnu.cmake" > /dev/null
# One compile job: CTest runs the other tests beside this one. The build's
# output is shown only when it fails.
if ! cmake --build "$build" --target neon_paths_check --parallel 1 > "$build/build.log" 2>&1; then
  cat "$build/build.log"
  echo "the aarch64 cross build failed"
  exit 1
fi
cd "$build"
ctest --output-on-failure
