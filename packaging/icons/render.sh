#!/usr/bin/env bash
# Renders the PNG sizes of the application icon from the SVG (run by hand after
# editing the SVG; the PNGs are committed, so building needs no renderer).
# Needs rsvg-convert (Debian: librsvg2-bin).
set -euo pipefail
cd "$(dirname "$0")"
id=io.github.cairn_chat.Cairn
for size in 48 128 256; do
  mkdir -p "${size}x${size}"
  rsvg-convert -w "$size" -h "$size" "$id.svg" -o "${size}x${size}/$id.png"
done
