#!/usr/bin/env bash
# The fuzz harness, longer than in the test command: every reader on truncated, random, huge-line, NUL, BOM,
# non-finite, compressed and non-regular inputs, every CLI option and HTTP parameter on hostile values, each
# example under the tests' memory and time caps. Examples are derandomised: a run is repeatable.
# Usage: bash tools/fuzz.sh [EXAMPLES]   (default 500 per property; the test command runs 12 to 60)
set -euo pipefail
cd "$(dirname "$0")/.."
. .venv/bin/activate
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 TOKENIZERS_PARALLELISM=false
export LEXPROBE_FUZZ_EXAMPLES="${1:-500}"
exec nice -n 10 python -m pytest -q -p no:cacheprovider tests/cli/test_fuzz.py tests/cli/test_hostile_inputs.py
