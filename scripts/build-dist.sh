#!/usr/bin/env bash
# Build memdir's wheel and sdist into dist/ (or the directory given): what users install with
# pipx or uv tool (docs/install.md). `build` makes the sdist first and the wheel from it, so a
# file the wheel needs but the sdist lacks fails here, not on a user's machine.
# Needs the dev extra (`build`): .venv/bin/pip install -e '.[dev]' (scripts/test.sh does).
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-.venv/bin/python}
out=${1:-dist}
if ! "$PYTHON" -c 'import build' 2>/dev/null; then
  echo "build-dist.sh: $PYTHON has no 'build' module: .venv/bin/pip install -e '.[dev]'" >&2
  exit 2
fi
"$PYTHON" -m build --outdir "$out" . >&2
version=$("$PYTHON" -c 'import tomllib; print(tomllib.load(open("pyproject.toml", "rb"))["project"]["version"])')
ls -1 "$out/memdir-$version-py3-none-any.whl" "$out/memdir-$version.tar.gz"
