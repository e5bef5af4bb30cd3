#!/usr/bin/env bash
# test_openai_client: runs openai_client.test.mjs with node's test runner in
# DIR (the build folder where tools/dev.sh test ran `npm ci`). Exit 77
# (skipped, with the reason) without node, without the installed package or
# without the fixture model.
#   run.sh DIR CAIRN_CLI MODEL.gguf
set -euo pipefail
dir="$1" cli="$2" model="$3"
skip() { echo "SKIPPED: $*"; exit 77; }
command -v node > /dev/null || skip "node is not installed (Debian package nodejs)"
[ -f "$dir/node_modules/openai/package.json" ] ||
  skip "the openai npm package is not installed: run 'npm ci' in $dir (tools/dev.sh test does)"
[ -f "$model" ] || skip "fixture model $model not found (CAIRN_SHARED_DIR)"
cd "$dir"
exec node openai_client.test.mjs "$cli" "$model"
