#!/usr/bin/env bash
# For a maintainer with a GPU: the main job's torch stages (token encoding, OTA, WNLaMPro probing) on the GPU
# against the CPU on the same inputs, answers equal within the stated tolerances, speed ratios printed
# (lexprobe.suite.gpu_check; --help for the options). Where torch sees no GPU it prints one line and exits 0.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ -z "${PYTHON:-}" ] && [ -f .venv/bin/activate ]; then
    . .venv/bin/activate
fi
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 TOKENIZERS_PARALLELISM=false
exec "${PYTHON:-python}" -m lexprobe.suite.gpu_check "$@"
