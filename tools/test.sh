#!/usr/bin/env bash
# The README's test command: set up (if needed) and run the whole test suite.
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/setup.sh
# Chromium renders report.html in one test (which skips without it) and drives the serve page through
# chromedriver in another (which fails without them); install both where we can (Debian, root).
if { ! command -v chromium >/dev/null 2>&1 || ! command -v chromedriver >/dev/null 2>&1; } \
        && command -v apt-get >/dev/null 2>&1 && [ "$(id -u)" = 0 ]; then
    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium chromium-driver) >/dev/null 2>&1 \
        || echo "note: could not install chromium and chromium-driver; the report and serve page tests need them"
fi
. .venv/bin/activate
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 TOKENIZERS_PARALLELISM=false
exec python -m pytest -q "$@"
