#!/usr/bin/env bash
# Fill client-vscode/bundled/libs with memdir and its pure-Python dependencies, so the .vsix
# carries its own language server (as Microsoft's Python tool extensions do: pip install --target,
# and a launcher in bundled/tool that puts the folder first on sys.path).
#
#   scripts/bundle-vscode-server.sh
#
# Run by the extension's vscode:prepublish script, so every `vsce package` (and so
# scripts/e2e-vscode.sh) bundles the repository as it is. The Python that runs pip is
# $MEMDIR_BUNDLE_PYTHON, else the repository's .venv, else python3 (3.11+, with pip).
#
# 1. memdir from this repository (its wheel, built by pip) without dependencies,
# 2. the pinned dependencies of client-vscode/bundled/requirements.txt, pure-Python wheels only,
#    and PyYAML's wheel without its compiled LibYAML binding,
# 3. checks: no compiled file at all (.so/.pyd/.dll/.dylib), every requirement of every bundled
#    package met by the bundle (PyStemmer by snowballstemmer), and the bundled server importing,
#    running the memory tool and answering --version from the bundle alone (python -I -S: no
#    site-packages).
set -euo pipefail

REPO=$(cd "$(dirname "$0")/.." && pwd)
EXT=$REPO/client-vscode
LIBS=$EXT/bundled/libs
REQUIREMENTS=$EXT/bundled/requirements.txt
# The one compiled dependency installed from its platform wheel; its compiled parts are deleted.
PYYAML=PyYAML==6.0.4

log() { printf '[bundle-vscode-server] %s\n' "$*" >&2; }

PYTHON=${MEMDIR_BUNDLE_PYTHON:-}
if [ -z "$PYTHON" ]; then
  if [ -x "$REPO/.venv/bin/python" ]; then PYTHON=$REPO/.venv/bin/python; else PYTHON=$(command -v python3); fi
fi
"$PYTHON" -c 'import sys; assert sys.version_info >= (3, 11)' 2>/dev/null || {
  log "$PYTHON is not Python 3.11+: set MEMDIR_BUNDLE_PYTHON"
  exit 1
}

rm -rf "$LIBS"
mkdir -p "$LIBS"
pip_target() {
  "$PYTHON" -m pip install --quiet --disable-pip-version-check --no-input --target "$LIBS" \
    --no-deps --no-compile --upgrade "$@"
}

log "memdir from $REPO"
pip_target "$REPO"
log "dependencies from ${REQUIREMENTS#"$REPO"/}"
# --implementation py: a wheel tagged for any Python, never one with a compiled module.
pip_target --only-binary=:all: --implementation py --python-version 3.11 -r "$REQUIREMENTS"
pip_target --only-binary=:all: "$PYYAML"

# What pip --target leaves that a bundle must not carry: console scripts pointing at this build's
# Python, and PyYAML's LibYAML binding (yaml/__init__.py falls back to pure Python when
# it cannot import it). The dist-info RECORDs lose the deleted files' lines.
rm -rf "$LIBS/bin" "$LIBS/_yaml"
# Where this machine built memdir from (PEP 610): not the user's install. INSTALLER (PEP 376)
# names the bundle instead of pip, so memdir can tell it runs from the extension's bundle.
rm -f "$LIBS"/memdir-*.dist-info/direct_url.json
printf 'memdir-vscode-bundle\n' >"$(echo "$LIBS"/memdir-*.dist-info)/INSTALLER"
find "$LIBS" -type f \( -name '*.so' -o -name '*.pyd' -o -name '*.dll' -o -name '*.dylib' \) -path "$LIBS/yaml/*" -delete
"$PYTHON" - "$LIBS" <<'EOF'
import csv, io, pathlib, sys
libs = pathlib.Path(sys.argv[1])
for record in libs.glob("*.dist-info/RECORD"):
    rows = list(csv.reader(io.StringIO(record.read_text(encoding="utf-8"))))
    kept = [r for r in rows if r and (libs / r[0]).exists() or (r and r[0].endswith("RECORD"))]
    if len(kept) != len(rows):
        out = io.StringIO()
        csv.writer(out, lineterminator="\n").writerows(kept)
        record.write_text(out.getvalue(), encoding="utf-8")
EOF

# --- checks ------------------------------------------------------------------------------------
compiled=$(find "$LIBS" -type f \( -name '*.so' -o -name '*.so.*' -o -name '*.pyd' -o -name '*.dll' -o -name '*.dylib' \))
if [ -n "$compiled" ]; then
  log "compiled files in the bundle (a .vsix must serve every platform):"
  printf '%s\n' "$compiled" >&2
  exit 1
fi

# Every requirement (markers evaluated for the running Python, extras ignored) of every bundled
# distribution is met by a bundled one; the compiled PyStemmer counts as met by snowballstemmer.
"$PYTHON" -B - "$LIBS" <<'EOF' | while read -r line; do log "bundled: $line"; done
import sys
from importlib import metadata
from pip._vendor.packaging.requirements import Requirement
from pip._vendor.packaging.utils import canonicalize_name

REPLACED = {"pystemmer": "snowballstemmer"}
dists = {canonicalize_name(d.metadata["Name"]): d for d in metadata.distributions(path=[sys.argv[1]])}
problems = []
for name, dist in sorted(dists.items()):
    for text in dist.requires or []:
        req = Requirement(text)
        if req.marker is not None and not req.marker.evaluate({"extra": ""}):
            continue
        wanted = canonicalize_name(req.name)
        if wanted in REPLACED:
            if REPLACED[wanted] not in dists:
                problems.append(f"{name} needs {text}: its pure replacement {REPLACED[wanted]} is not bundled")
            continue
        found = dists.get(wanted)
        if found is None:
            problems.append(f"{name} needs {text}: not bundled")
        elif not req.specifier.contains(found.version, prereleases=True):
            problems.append(f"{name} needs {text}: bundled {found.version}")
if problems:
    sys.exit("bundle-vscode-server: unmet requirements:\n  " + "\n  ".join(problems))
print(" ".join(f"{d.metadata['Name']}=={d.version}" for _, d in sorted(dists.items())))
EOF

# The bundle alone: -I -S keeps this Python's site-packages (where PyStemmer and libyaml may be)
# off the path, as on a user's bare interpreter. The memory tool (VS Code's memdir_memory) runs
# from it: a create and a view in a scratch dir, with memdir's state dir there too.
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
XDG_STATE_HOME=$scratch/state "$PYTHON" -B -I -S - "$LIBS" "$scratch/memory" <<'EOF'
import os, sys
sys.path.insert(0, sys.argv[1])
import memdir_lsp.server, memdir.faces.cli, yaml
from memdir.recall import lexical
from memdir.writing.memory_tool import MemdirMemoryTool
assert not yaml.__with_libyaml__, "yaml imported its compiled binding"
assert lexical.tokenize("running tests") == ["run", "test"], lexical.tokenize("running tests")
os.mkdir(sys.argv[2])
tool = MemdirMemoryTool(sys.argv[2])
text = "---\nname: bundle\ndescription: written by the bundled memory tool\ntype: project\n---\nok\n"
made = tool.run({"command": "create", "path": "/memories/bundle.md", "file_text": text})
# The API's words, then what memdir did to the index (no MEMORY.md here: it makes one).
assert made.text.startswith("File created successfully at: /memories/bundle.md; indexed in "), made
shown = tool.run({"command": "view", "path": "/memories/bundle.md", "view_range": [6, 6]})
assert shown.text.endswith("     6\tok"), shown
for heavy in ("anthropic", "mcp", "pydantic", "Stemmer"):
    assert heavy not in sys.modules, heavy + " was imported"
EOF
version=$("$PYTHON" -B -E -s -S "$EXT/bundled/tool/memdir_lsp_bundled.py" --version)
# Byte code is written by the interpreter that runs the bundle, for its own version.
find "$LIBS" "$EXT/bundled/tool" -name __pycache__ -type d -prune -exec rm -rf {} +
log "bundled $version: $(du -sh "$LIBS" | cut -f1), $(find "$LIBS" -type f | wc -l) files in ${LIBS#"$REPO"/}"
