#!/usr/bin/env bash
# Build memdir's wheel and sdist into dist/ (or the directory given): what users install with
# pipx, uv tool or pip (docs/install.md). `build` makes the sdist first and the wheel from it, so
# a file the wheel needs but the sdist lacks fails here, not on a user's machine.
# Runs in .venv (made as scripts/demo.sh makes it), adding `build` (in the dev extra) if missing.
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-python3}
out=${1:-dist}
[ -x .venv/bin/python ] || "$PYTHON" -m venv .venv
if ! .venv/bin/python -c 'import build' 2>/dev/null; then
  .venv/bin/python -m pip install --quiet --disable-pip-version-check 'build>=1.2'
fi
.venv/bin/python -m build --outdir "$out" . >&2
version=$(.venv/bin/python -c 'import tomllib; print(tomllib.load(open("pyproject.toml", "rb"))["project"]["version"])')
ls -1 "$out/memdir-$version-py3-none-any.whl" "$out/memdir-$version.tar.gz"
