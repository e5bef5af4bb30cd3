#!/usr/bin/env bash
# Runs CI as a brand-new machine would: builds a minimal Debian 12 root
# (debootstrap --variant=minbase bookworm), clones this repository's HEAD into
# it with a read-only copy of ../shared beside it, and runs `bash .ci/run` in
# a chroot with CI=true and no standard input. Prints CTest's summary and the
# wall time. Not part of the test suite: it takes minutes and needs root.
#
#   sudo tools/fresh-check.sh [--keep] [ROOT]
#
# ROOT defaults to /var/tmp/cairn-fresh (removed first, and afterwards unless
# --keep). The package mirror is the one this machine's apt uses; the chroot
# reaches nothing else this machine does not. See CONTRIBUTING.md for when to
# run it.
set -euo pipefail
keep=0
if [ "${1:-}" = "--keep" ]; then keep=1; shift; fi
root="${1:-/var/tmp/cairn-fresh}"
src="$(cd "$(dirname "$0")/.." && pwd)"
shared="$(cd "$src/.." && pwd)/shared"

[ "$(id -u)" -eq 0 ] || { echo "fresh-check: needs root (debootstrap, chroot)" >&2; exit 1; }
[ -d "$shared" ] || { echo "fresh-check: no shared folder at $shared" >&2; exit 1; }
command -v debootstrap > /dev/null || {
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends debootstrap
}

# The mirror this machine's apt already uses (deb822 sources first, then the
# one-line format), so the check needs no host name of its own.
mirror="$(sed -n 's/^URIs: *\([^ ]*\).*/\1/p' /etc/apt/sources.list.d/*.sources 2>/dev/null | grep -v security | head -n 1)"
[ -n "$mirror" ] || mirror="$(awk '$1 == "deb" && $0 !~ /security/ { print $2; exit }' /etc/apt/sources.list 2>/dev/null)"
[ -n "$mirror" ] || { echo "fresh-check: no Debian mirror found in /etc/apt" >&2; exit 1; }

# Unmounts whatever an earlier or this run bound under ROOT; removal never
# crosses into a mount (--one-file-system), so the host's /dev is safe.
unmount_all() {
  local m
  for m in $(findmnt -rn -o TARGET | grep -F "$root/" | sort -r); do umount -l "$m" || true; done
}
cleanup() {
  unmount_all
  if [ "$keep" -eq 0 ]; then rm -rf --one-file-system "$root"; fi
}
trap cleanup EXIT

start=$(date +%s)
unmount_all
rm -rf --one-file-system "$root"
echo "fresh-check: debootstrap minbase bookworm into $root"
debootstrap --variant=minbase bookworm "$root" "$mirror" > "$root.debootstrap.log" 2>&1 ||
  { tail -n 20 "$root.debootstrap.log"; exit 1; }
# The same suites as this machine (updates and security), nothing installed.
rm -f "$root/etc/apt/sources.list"
for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.sources /etc/apt/sources.list.d/*.list; do
  [ -f "$f" ] && grep -q debian "$f" && install -D -m 644 "$f" "$root$f"
done
cp /etc/resolv.conf "$root/etc/resolv.conf"

for m in proc sys dev dev/pts dev/shm; do
  mkdir -p "$root/$m"
  mount --bind "/$m" "$root/$m"
done

mkdir -p "$root/work"
git clone -q "$src" "$root/work/cairn"
commit="$(git -C "$root/work/cairn" rev-parse --short HEAD)"
cp -r "$shared" "$root/work/shared"
chmod -R a-w "$root/work/shared"   # as CI lays it: without write bits
echo "fresh-check: root ready after $(($(date +%s) - start)) s; running .ci/run (log: $root.ci.log)"

# npm's extra CAs as this machine has them (a TLS-intercepting proxy's CA set
# in NODE_EXTRA_CA_CERTS): without it `npm ci` fails in the root with
# SELF_SIGNED_CERT_IN_CHAIN and test_openai_client skips itself.
extra_env=()
if [ -n "${NODE_EXTRA_CA_CERTS:-}" ] && [ -f "$NODE_EXTRA_CA_CERTS" ]; then
  install -D -m 644 "$NODE_EXTRA_CA_CERTS" "$root/etc/fresh-check/node-extra-ca.crt"
  extra_env=(NODE_EXTRA_CA_CERTS=/etc/fresh-check/node-extra-ca.crt)
fi

ci_start=$(date +%s)
status=0
chroot "$root" /usr/bin/env -i CI=true HOME=/root LANG=C.UTF-8 "${extra_env[@]}" \
  PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
  bash -c 'cd /work/cairn && bash .ci/run' < /dev/null > "$root.ci.log" 2>&1 || status=$?
end=$(date +%s)

grep -E "tests passed|tests failed|\(Failed\)|\(Not Run\)|\*\*\*Skipped|Total Test time" "$root.ci.log" || tail -n 30 "$root.ci.log"
echo "fresh-check: .ci/run exit $status; .ci/run $((end - ci_start)) s, $((end - start)) s in all (commit $commit)"
exit "$status"
