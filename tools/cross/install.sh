#!/usr/bin/env bash
# Installs what the aarch64 cross check needs (Debian 12): the cross compiler,
# qemu-user, and the engine's libraries for arm64. PCRE2 and xxHash are
# multiarch packages (this adds the arm64 architecture to dpkg); Debian's
# sentencepiece package is not (its arm64 -dev would replace the native one),
# so its arm64 files are unpacked into /opt/cairn-cross/aarch64 with a
# pkg-config file of their own. CI runs this before the test command; without
# it the cross_aarch64_neon test reports itself skipped.
set -euo pipefail
libraries=(libpcre2-dev:arm64 libxxhash-dev:arm64)
prefix=/opt/cairn-cross/aarch64
case "${1:-}" in
  --list-libraries) echo "${libraries[*]}"; exit 0 ;;
  --prefix) echo "$prefix"; exit 0 ;;
esac
sudo=""
[ "$(id -u)" -ne 0 ] && sudo="sudo"
dpkg --print-foreign-architectures | grep -qx arm64 || $sudo dpkg --add-architecture arm64
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends \
  g++-aarch64-linux-gnu qemu-user "${libraries[@]}"

if [ ! -f "$prefix/pkgconfig/sentencepiece.pc" ]; then
  work="$(mktemp -d)"
  chmod 755 "$work"  # apt-get download runs as _apt
  (cd "$work" && apt-get download -qq libsentencepiece0:arm64 libsentencepiece-dev:arm64)
  $sudo mkdir -p "$prefix/pkgconfig"
  for deb in "$work"/*.deb; do $sudo dpkg-deb -x "$deb" "$prefix"; done
  rm -rf "$work"
  $sudo tee "$prefix/pkgconfig/sentencepiece.pc" > /dev/null <<PC
libdir=$prefix/usr/lib/aarch64-linux-gnu
includedir=$prefix/usr/include

Name: sentencepiece
Description: sentencepiece for aarch64 (unpacked for Cairn's cross check)
Version: 0.1.97
Libs: -L\${libdir} -lsentencepiece
Cflags: -I\${includedir}
PC
fi
