#!/usr/bin/env bash
# Set up .venv and run memdir's main job on the bundled example memory directory:
# lint it, show what path A injects of MEMORY.md, the manifest path B's selector sees,
# and what a recall would inject for a question.
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-python3}
[ -x .venv/bin/python ] || "$PYTHON" -m venv .venv
.venv/bin/python -m pip install --quiet --disable-pip-version-check -e .
dir=examples/memory
run() { printf '\n\033[1m$ %s\033[0m\n' "$*"; "$@"; }
run .venv/bin/memdir lint "$dir"
run .venv/bin/memdir index "$dir"
run .venv/bin/memdir manifest "$dir"
run .venv/bin/memdir recall "发布冻结期间可以合并代码吗" "$dir"
