#!/usr/bin/env bash
# Cairn's two entry points (see README.md):
#   tools/dev.sh run    install missing Debian packages, build, start the app
#   tools/dev.sh test   install missing Debian packages, build, run every test
# Environment: BUILD_DIR (default build), CAIRN_SANITIZE=ON for an ASan+UBSan build.
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(
  build-essential cmake ninja-build pkg-config
  qt6-base-dev qt6-declarative-dev libgl-dev
  qml6-module-qtquick qml6-module-qtquick-controls qml6-module-qtquick-layouts
  qml6-module-qtquick-window qml6-module-qtquick-templates qml6-module-qtquick-dialogs
  qml6-module-qtqml-workerscript qml6-module-qttest qml6-module-qt-labs-platform qml6-module-qt-labs-folderlistmodel
  libsentencepiece-dev libpcre2-dev nlohmann-json3-dev libsqlite3-dev libxxhash-dev libcpp-httplib-dev
  qtkeychain-qt6-dev
  dpkg-dev desktop-file-utils appstream file python3 nodejs
)
# qtkeychain-qt6-dev: the remote endpoints' API keys in the desktop keyring (app/gui/secret_store.cpp).
# file: CPack's shlibdeps; python3: the conformance tests' compare.py;
# nodejs (and npm, below): the openai npm package's test (tests/openai_client).

# A package counts as installed only for this machine's architecture (or
# "all"): after tools/cross/install.sh, libpcre2-dev:arm64 must not stand in
# for the native libpcre2-dev.
native_arch="$(dpkg --print-architecture)"
installed_natively() {
  dpkg-query -W -f='${Architecture} ${Status}\n' "$1" 2>/dev/null |
    grep -Eq "^($native_arch|all) install ok installed$"
}

install_missing() {
  local missing=()
  for p in "${packages[@]}"; do
    installed_natively "$p" || missing+=("$p:$native_arch")
  done
  # Debian's nodejs comes without npm; other builds of nodejs (NodeSource's)
  # bundle it and conflict with Debian's npm package: ask for it only when missing.
  command -v npm > /dev/null || missing+=("npm")
  [ ${#missing[@]} -eq 0 ] && return 0
  echo "Installing missing packages: ${missing[*]}"
  local sudo=""
  if [ "$(id -u)" -ne 0 ]; then
    command -v sudo > /dev/null || { echo "missing packages and no sudo: install as root: apt-get install ${missing[*]}" >&2; exit 1; }
    sudo="sudo"
  fi
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
}

build() {
  local dir="${BUILD_DIR:-build}"
  cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCAIRN_SANITIZE="${CAIRN_SANITIZE:-OFF}"
  cmake --build "$dir" --parallel "$(nproc)"
}

# The openai npm package at the version package-lock.json pins, into the build
# tree (test_openai_client reports itself skipped without it).
install_node_modules() {
  local dir="${BUILD_DIR:-build}/tests/openai_client"
  [ "$dir/node_modules/.package-lock.json" -nt "$dir/package-lock.json" ] && return 0  # installed already
  (cd "$dir" && npm ci --no-audit --no-fund --loglevel=error) ||
    echo "npm ci failed in $dir: test_openai_client will report itself skipped" >&2
}

case "${1:-}" in
  run)
    install_missing
    build
    bin="${BUILD_DIR:-build}/bin"
    exec "$bin/cairn" "${@:2}"
    ;;
  test)
    install_missing
    build
    install_node_modules
    cd "${BUILD_DIR:-build}"
    exec ctest --output-on-failure --parallel "$(nproc)"
    ;;
  *)
    echo "usage: tools/dev.sh run|test" >&2
    exit 2
    ;;
esac
