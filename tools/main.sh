#!/usr/bin/env bash
# The README's main command: set up (if needed), then run the end-to-end job on the packaged models and data.
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/setup.sh
. .venv/bin/activate
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 TOKENIZERS_PARALLELISM=false
start=$(date +%s)
lexprobe index words --vectors glove-6b-50d --name glove
lexprobe query neighbors --index glove king frog
lexprobe sql "select count(*) as words from words"
echo "main job finished in $(( $(date +%s) - start )) s"
