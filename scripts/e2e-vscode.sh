#!/usr/bin/env bash
# End-to-end test of the VS Code extension in a real VS Code: code-server in headless Chromium,
# driven by Playwright (client-vscode/e2e/scenario.js).
#
#   scripts/e2e-vscode.sh [--update-docs]
#
# 1. installs the toolchain (scripts/install-vscode-e2e.sh; cached in $MEMDIR_E2E_CACHE or
#    ~/.cache/memdir-e2e, so only the first run on a machine takes minutes),
# 2. builds client-vscode into a .vsix (which bundles memdir-lsp: scripts/bundle-vscode-server.sh)
#    and installs it into a fresh code-server user-data and extensions dir under
#    test-output/vscode-e2e/,
# 3. copies the fixture memory dir (client-vscode/e2e/fixtures/memory) as the workspace, starts
#    code-server on 127.0.0.1 without auth, and runs the scenario against it. The server's Python
#    is a fresh venv with nothing installed (checked: it cannot import memdir): the scenario runs
#    on the server the .vsix carries. A later step switches to memdir.importStrategy
#    fromEnvironment with the repository's .venv (memdir with the [mcp] extra), where VS Code
#    starts the offered `memdir mcp` server (the bundle has no MCP SDK); the freshness steps
#    then open a second window on a git project made here, through a test-only driver extension
#    (client-vscode/e2e/driver) that calls the VS Code API,
# 4. always stops code-server (and with it the extension host and memdir-lsp) at the end.
#
# Screenshots, the scenario report (report.json) and every log land in test-output/vscode-e2e/.
# --update-docs copies the documentation screenshots to docs/images/ after a passing run.
# The exit code is non-zero when any step of the scenario fails.
set -euo pipefail

REPO=$(cd "$(dirname "$0")/.." && pwd)
OUT=$REPO/test-output/vscode-e2e
UPDATE_DOCS=0
for arg in "$@"; do
  case $arg in
    --update-docs) UPDATE_DOCS=1 ;;
    -h | --help) sed -n '2,23p' "$0"; exit 0 ;;
    *) echo "e2e-vscode: unknown argument $arg" >&2; exit 2 ;;
  esac
done

log() { printf '[e2e-vscode] %s\n' "$*" >&2; }

# --- 1. toolchain ------------------------------------------------------------------------------
# The installer prints KEY=VALUE lines (paths into its cache) on stdout; everything else on stderr.
# Captured in a file first so that a failing install stops this script (set -e).
paths_file=$(mktemp)
bash "$REPO/scripts/install-vscode-e2e.sh" >"$paths_file"
eval "$(grep -E '^[A-Z0-9_]+=' "$paths_file")"
rm -f "$paths_file"
export PATH=$NODE24_BIN:$PATH
export npm_config_nodedir=${NODE24_BIN%/bin}

PYTHON=${MEMDIR_E2E_PYTHON:-}
if [ -z "$PYTHON" ]; then
  if [ -x "$REPO/.venv/bin/python" ]; then PYTHON=$REPO/.venv/bin/python; else PYTHON=$(command -v python3); fi
fi
# mcp: in the scenario's last step VS Code itself starts the `memdir mcp` server the extension
# offers from this Python's environment. It also builds the bundle (pip).
"$PYTHON" -c 'import memdir_lsp, mcp' 2>/dev/null || {
  log "$PYTHON cannot import memdir_lsp and mcp: run scripts/test.sh (or pip install -e '.[mcp]') first"
  exit 1
}

rm -rf "$OUT"
mkdir -p "$OUT"
CSH=$OUT/code-server
mkdir -p "$CSH/user-data/User" "$CSH/user-data/Machine" "$CSH/extensions" "$CSH/xdg/config" "$CSH/xdg/data" "$CSH/xdg/cache" "$CSH/xdg/state"

# The Python a user has: 3.11, nothing pip-installed (a venv of the same base interpreter, without
# even pip). The extension must bring everything else.
BARE=$OUT/bare-python
"$PYTHON" -m venv --without-pip "$BARE"
BARE_PYTHON=$BARE/bin/python
for module in memdir memdir_lsp pygls Stemmer yaml mcp; do
  if "$BARE_PYTHON" -c "import $module" 2>/dev/null; then
    log "$BARE_PYTHON can import $module: the e2e needs a Python without memdir or its dependencies"
    exit 1
  fi
done

# --- 2. the .vsix ------------------------------------------------------------------------------
log "building the extension"
# The user's command (docs/editors/vscode.md), with this Python's pip for the bundle.
MEMDIR_BUNDLE_PYTHON=$PYTHON bash "$REPO/scripts/package-vscode.sh" "$OUT/memdir.vsix" >/dev/null
# What the .vsix carries: the launchers and the bundled server, and no compiled file.
"$PYTHON" - "$OUT/memdir.vsix" <<'EOF' >&2
import sys, zipfile
names = zipfile.ZipFile(sys.argv[1]).namelist()
need = ["extension/bundled/tool/memdir_lsp_bundled.py", "extension/bundled/tool/probe.py",
        "extension/bundled/libs/memdir/__init__.py", "extension/bundled/libs/memdir_lsp/__main__.py",
        "extension/bundled/libs/pygls/__init__.py", "extension/bundled/libs/snowballstemmer/__init__.py"]
missing = [n for n in need if n not in names]
compiled = [n for n in names if n.endswith((".so", ".pyd", ".dll", ".dylib")) or "__pycache__" in n]
if missing or compiled:
    sys.exit(f"e2e-vscode: the .vsix lacks {missing} or carries {compiled}")
libs = {n.split("/")[3] for n in names if n.startswith("extension/bundled/libs/") and n.count("/") > 3}
print(f"[e2e-vscode] the .vsix has {len(names)} files; bundled/libs: {' '.join(sorted(libs))}")
EOF
log "packaged $(du -h "$OUT/memdir.vsix" | cut -f1) $OUT/memdir.vsix"

# code-server writes config and logs under XDG dirs on any invocation: keep them in test-output.
export XDG_CONFIG_HOME=$CSH/xdg/config XDG_DATA_HOME=$CSH/xdg/data XDG_CACHE_HOME=$CSH/xdg/cache XDG_STATE_HOME=$CSH/xdg/state
"$CODE_SERVER" --user-data-dir "$CSH/user-data" --extensions-dir "$CSH/extensions" \
  --install-extension "$OUT/memdir.vsix" >"$OUT/install-extension.log" 2>&1 || {
  cat "$OUT/install-extension.log" >&2
  exit 1
}
grep -q 'successfully installed' "$OUT/install-extension.log" || { cat "$OUT/install-extension.log" >&2; exit 1; }
# The test-only driver (client-vscode/e2e/driver): the scenario's freshness steps ask the VS Code
# API through it. A .vsix is a zip with the extension under extension/.
"$PYTHON" - "$REPO/client-vscode/e2e/driver" "$OUT/memdir-e2e-driver.vsix" <<'DRIVER'
import pathlib, sys, zipfile
src, dest = pathlib.Path(sys.argv[1]), sys.argv[2]
types = ('<?xml version="1.0" encoding="utf-8"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">'
         '<Default Extension=".json" ContentType="application/json"/><Default Extension=".js" ContentType="application/javascript"/>'
         '<Default Extension=".vsixmanifest" ContentType="text/xml"/></Types>')
manifest = ('<?xml version="1.0" encoding="utf-8"?><PackageManifest Version="2.0.0" xmlns="http://schemas.microsoft.com/developer/vsx-schema/2011">'
            '<Metadata><Identity Language="en-US" Id="memdir-e2e-driver" Version="0.0.1" Publisher="memdir-e2e"/>'
            '<DisplayName>memdir e2e driver</DisplayName><Description xml:space="preserve">test only</Description>'
            '<Properties><Property Id="Microsoft.VisualStudio.Code.Engine" Value="^1.101.0"/></Properties></Metadata>'
            '<Installation><InstallationTarget Id="Microsoft.VisualStudio.Code"/></Installation><Dependencies/>'
            '<Assets><Asset Type="Microsoft.VisualStudio.Code.Manifest" Path="extension/package.json" Addressable="true"/></Assets>'
            '</PackageManifest>')
with zipfile.ZipFile(dest, "w") as z:
    z.writestr("[Content_Types].xml", types)
    z.writestr("extension.vsixmanifest", manifest)
    for name in ("package.json", "extension.js"):
        z.write(src / name, f"extension/{name}")
DRIVER
"$CODE_SERVER" --user-data-dir "$CSH/user-data" --extensions-dir "$CSH/extensions" \
  --install-extension "$OUT/memdir-e2e-driver.vsix" >"$OUT/install-driver.log" 2>&1 || {
  cat "$OUT/install-driver.log" >&2
  exit 1
}
grep -q 'successfully installed' "$OUT/install-driver.log" || { cat "$OUT/install-driver.log" >&2; exit 1; }

# Quiet, deterministic VS Code; the lexical selector keeps the recall preview offline.
cat >"$CSH/user-data/User/settings.json" <<EOF
{
  "workbench.startupEditor": "none",
  "workbench.tips.enabled": false,
  "workbench.enableExperiments": false,
  "workbench.colorTheme": "Default Dark Modern",
  "security.workspace.trust.enabled": false,
  "telemetry.telemetryLevel": "off",
  "extensions.autoCheckUpdates": false,
  "extensions.autoUpdate": "off",
  "extensions.ignoreRecommendations": true,
  "update.mode": "none",
  "chat.disableAIFeatures": true,
  "files.autoSave": "off",
  "window.commandCenter": false,
  "git.openRepositoryInParentFolders": "never",
  "workbench.secondarySideBar.defaultVisibility": "hidden",
  "memdir.selector": "lexical",
  "memdir.trace.server": "messages"
}
EOF
# memdir.server.python is machine-scoped (which interpreter exists is a fact of the machine that
# runs the extension host); code-server reads such settings from the Machine settings file.
cat >"$CSH/user-data/Machine/settings.json" <<EOF
{
  "memdir.server.python": "$BARE_PYTHON"
}
EOF

# --- 3. workspace and code-server --------------------------------------------------------------
WORKSPACE=$OUT/workspace
cp -r "$REPO/client-vscode/e2e/fixtures/memory" "$WORKSPACE"
# A throwaway agent config dir: the server also looks for the project's auto-memory dir, and the
# test must neither read nor create anything under the real ~/.claude.
mkdir -p "$OUT/claude-config"
# The freshness steps' window: a project (a git repository with a committed rename and deletion)
# and its agent memory dir under that config dir, where `memdir where` says the agent keeps it.
PROJECT=$OUT/project
mkdir -p "$PROJECT/src"
printf 'def charge(card):\n    return card\n' >"$PROJECT/src/app.py"
printf 'def retry_payment(charge):\n    return charge\n' >"$PROJECT/src/util.py"
printf 'REFUNDS = 1\n' >"$PROJECT/src/old_refunds.py"
git_() {
  env GIT_AUTHOR_NAME=e2e GIT_AUTHOR_EMAIL=e2e@example.com GIT_COMMITTER_NAME=e2e GIT_COMMITTER_EMAIL=e2e@example.com \
    GIT_CONFIG_GLOBAL=/dev/null GIT_CONFIG_SYSTEM=/dev/null git -C "$PROJECT" "$@" >/dev/null
}
git_ init -q -b main
git_ add -A
git_ commit -q -m start
git_ mv src/app.py src/payments.py
git_ rm -q src/old_refunds.py
git_ commit -q -m 'rename app.py, drop the old refunds job'
PROJECT_MEMORY=$(CLAUDE_CONFIG_DIR="$OUT/claude-config" "$PYTHON" -m memdir where "$PROJECT")
mkdir -p "$PROJECT_MEMORY"
cp "$REPO/client-vscode/e2e/fixtures/project-memory/"*.md "$PROJECT_MEMORY/"
# The citation and deadline rules the freshness steps check are preview rules: this memory dir
# turns them on (VS Code sends memdir.preview only when a user sets it).
printf 'preview = true\n' >"$PROJECT_MEMORY/memdir.toml"

PORT=${MEMDIR_E2E_PORT:-$("$PYTHON" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')}
log "starting code-server on 127.0.0.1:$PORT"
# setsid: code-server, its extension host and memdir-lsp share one new process group, which the
# cleanup stops by its id; nothing else on the machine is touched.
setsid env -u ANTHROPIC_API_KEY -u ANTHROPIC_AUTH_TOKEN CLAUDE_CONFIG_DIR="$OUT/claude-config" MEMDIR_E2E_DRIVER_DIR="$OUT/driver" \
  "$CODE_SERVER" --bind-addr "127.0.0.1:$PORT" --auth none \
  --disable-telemetry --disable-update-check --disable-workspace-trust --disable-getting-started-override \
  --user-data-dir "$CSH/user-data" --extensions-dir "$CSH/extensions" \
  "$WORKSPACE" >"$OUT/code-server.log" 2>&1 &
CS_PID=$!

group_alive() { pgrep -g "$CS_PID" >/dev/null 2>&1; }
cleanup() {
  group_alive || return 0
  kill -TERM -- "-$CS_PID" 2>/dev/null || true
  # SIGTERM takes the whole tree down within a couple of seconds (extension host, memdir-lsp).
  for _ in $(seq 1 50); do
    group_alive || return 0
    sleep 0.2
  done
  log "code-server's process group $CS_PID ignored SIGTERM: killing it"
  kill -KILL -- "-$CS_PID" 2>/dev/null || true
  for _ in $(seq 1 25); do
    group_alive || return 0
    sleep 0.2
  done
}
trap cleanup EXIT

for _ in $(seq 1 150); do
  if "$PYTHON" -c "import urllib.request,sys; urllib.request.urlopen('http://127.0.0.1:$PORT/healthz', timeout=1)" 2>/dev/null; then
    break
  fi
  kill -0 "$CS_PID" 2>/dev/null || { log "code-server exited:"; cat "$OUT/code-server.log" >&2; exit 1; }
  sleep 0.2
done

# --- 4. the scenario ---------------------------------------------------------------------------
status=0
NODE_PATH=$PLAYWRIGHT_NODE_PATH node "$REPO/client-vscode/e2e/scenario.js" \
  --url "http://127.0.0.1:$PORT" --workspace "$WORKSPACE" --out "$OUT" \
  --user-data "$CSH/user-data" --chromium "$CHROMIUM" \
  --bare-python "$BARE_PYTHON" --env-python "$PYTHON" \
  --project "$PROJECT" --project-memory "$PROJECT_MEMORY" --driver-dir "$OUT/driver" || status=$?

cleanup
trap - EXIT
if group_alive; then
  log "processes of code-server's group $CS_PID are still running"
  status=1
fi

if [ "$status" -eq 0 ] && [ "$UPDATE_DOCS" -eq 1 ]; then
  mkdir -p "$REPO/docs/images"
  for shot in vscode-memories-view vscode-status-bar vscode-recall-preview vscode-recall-preview-truncated vscode-problems vscode-freshness; do
    cp "$OUT/$shot.png" "$REPO/docs/images/$shot.png"
  done
  log "updated docs/images/"
fi
log "screenshots and logs: $OUT"
exit "$status"
