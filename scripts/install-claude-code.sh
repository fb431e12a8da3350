#!/usr/bin/env bash
# Install a Claude Code CLI release, the oracle of the agent fidelity tests (tests/fidelity) and
# of scripts/agent-diff.sh, into a cache directory reused between runs:
#   ${MEMDIR_E2E_CACHE:-~/.cache/memdir-e2e}/claude-code/VERSION
# npm installs `@anthropic-ai/claude-code@VERSION`; its optional dependency for this platform
# (`@anthropic-ai/claude-code-linux-x64`, about 370 MB) carries a self-contained binary, which the
# tests run directly (Node is needed only by npm, not by the binary).
#
# Idempotent: a finished install writes a marker naming its version; a later run skips the
# install when the marker, the binary and its `--version` agree. An install made by hand (binary
# present and right, no marker) is adopted. A half-finished one is redone from scratch.
#
# Usage: scripts/install-claude-code.sh [VERSION]     (default: the pinned release)
# Prints the binary's path on stdout. Exit 3 when npm is missing (callers skip the tests then).
set -euo pipefail

# The pinned release is named once: the release memdir's default target reproduces.
PINNED_VERSION=$(sed -n 's/^VERIFIED_AGENT_VERSION = "\(.*\)"$/\1/p' "$(dirname "$0")/../memory/memdir/target.py")
[ -n "$PINNED_VERSION" ] || { echo "[install-claude-code] no VERIFIED_AGENT_VERSION in memory/memdir/target.py" >&2; exit 1; }
VERSION=${1:-$PINNED_VERSION}

CACHE=${MEMDIR_E2E_CACHE:-$HOME/.cache/memdir-e2e}
DIR=$CACHE/claude-code/$VERSION

log() { printf '[install-claude-code] %s\n' "$*" >&2; }

# shellcheck source=lib/platform.sh
. "$(dirname "$0")/lib/platform.sh"
platform=$(npm_platform) || {
  log "no Claude Code binary package for $(uname -s) $(uname -m)"
  exit 1
}
if [ "$(uname -s)" = Linux ] && ls /lib/ld-musl-* >/dev/null 2>&1; then
  platform=$platform-musl
fi
BIN=$DIR/node_modules/@anthropic-ai/claude-code-$platform/claude

# A step counts as done only when its marker names the version.
done_marker() { [ -f "$1/.memdir-installed" ] && [ "$(cat "$1/.memdir-installed")" = "$2" ]; }
mark_done() { printf '%s' "$2" >"$1/.memdir-installed"; }
# The binary runs with nothing of the caller's environment but a search path and a home.
version_ok() {
  [ -x "$BIN" ] && [ "$(env -i PATH=/usr/bin:/bin HOME="$DIR" "$BIN" --version 2>/dev/null)" = "$VERSION (Claude Code)" ]
}

if done_marker "$DIR" "$VERSION" && version_ok; then
  log "Claude Code $VERSION present"
elif ! done_marker "$DIR" "$VERSION" && version_ok; then
  log "adopting the Claude Code $VERSION already installed in $DIR"
  mark_done "$DIR" "$VERSION"
else
  command -v npm >/dev/null || {
    log "npm not found: cannot install Claude Code $VERSION (install Node.js and npm)"
    exit 3
  }
  log "installing @anthropic-ai/claude-code@$VERSION (about 370 MB)"
  rm -rf "$DIR" && mkdir -p "$DIR"
  (cd "$DIR" && echo '{"name":"memdir-e2e-claude-code","private":true}' >package.json &&
    npm install --no-audit --no-fund --loglevel=error --save-exact "@anthropic-ai/claude-code@$VERSION")
  [ -x "$BIN" ] || {
    log "npm installed no binary at $BIN (was the optional dependency for $platform skipped?)"
    exit 1
  }
  version_ok || {
    log "$BIN --version did not print '$VERSION (Claude Code)'"
    exit 1
  }
  mark_done "$DIR" "$VERSION"
fi
echo "$BIN"
