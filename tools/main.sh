#!/usr/bin/env bash
# The README's main command: set up (if needed), then reproduce the three papers' analyses end to end on the
# packaged models and the datasets (data home, else ../shared/data), writing runs/main/report.md and report.html.
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/setup.sh
. .venv/bin/activate
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 TOKENIZERS_PARALLELISM=false
# set-up, once: SmolLM2's GGUF file dequantised into the cache (20-70 s the first time, nothing afterwards)
python -c "from lexprobe.sources.models import resolve_model; resolve_model('smollm2')"
exec lexprobe run all --out "${1:-runs/main}"
