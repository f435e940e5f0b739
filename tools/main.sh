#!/usr/bin/env bash
# The README's main command: set up (if needed), then reproduce the three papers' analyses end to end on the
# packaged models and the datasets (data home, else ../shared/data), writing runs/main/report.md and report.html.
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/setup.sh
. .venv/bin/activate
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 TOKENIZERS_PARALLELISM=false
exec lexprobe run all --out "${1:-runs/main}"
