#!/usr/bin/env bash
# Rebuilds the demo models, their oracles and the evaluation from scratch.
#   tools/demo-model/run_all.sh [WORK_DIR]   (default /work/tmp-demo; nothing large goes into the repo)
# Needs Debian's python3-torch python3-numpy python3-sentencepiece libopenblas0-pthread.
# Training runs niced, both models at once on one thread each; see README.md for the figures.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
work=${1:-/work/tmp-demo}
py=/usr/bin/python3  # Debian's interpreter, which sees the Debian packages
mkdir -p "$work"
cd "$here"
$py make_corpus.py "$work"
$py train_tokenizer.py "$work"
nice -n 5 $py train.py "$work" llama --steps 2000 --budget 4000 > "$work/train-llama.out" 2>&1 &
llama=$!
nice -n 5 $py train.py "$work" mamba --steps 1000 --budget 3000 > "$work/train-mamba.out" 2>&1 &
mamba=$!
wait $llama $mamba
nice -n 5 $py export_gguf.py "$work" llama "$repo/resources/models/cairn-demo-transformer.gguf" \
    "$repo/tests/data/demo-oracle/transformer.json"
nice -n 5 $py export_gguf.py "$work" mamba "$repo/resources/models/cairn-demo-mamba.gguf" \
    "$repo/tests/data/demo-oracle/mamba.json"
nice -n 5 $py evaluate.py "$work" llama --per-kind 25 | tee "$work/eval-llama.txt"
