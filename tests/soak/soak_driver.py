"""The soak's machinery: a seeded random session against the real ``memdir-lsp``, checked
against the lint engine run in process on the same texts.

A session is a list of plain operations (:data:`Op`), generated from a seed against a model of
what the editor and the disk hold, and executed against a server: incremental edits of open
documents (multi-byte text, UTF-16 surrogate pairs, CRLF), opens, closes, saves, files written,
deleted and renamed on disk behind the editor's back (followed by ``didChangeWatchedFiles``) and
renames in the editor (``workspace/willRenameFiles``, the edit applied, ``didRenameFiles``). At
each checkpoint the findings the client holds (pulled like VS Code, or pushed as to Neovim) must
equal a fresh ``DirState`` lint of the directory with the open buffers' texts as overlays: the
one engine ``memdir lint`` runs.

Operations are data so that a failing session can be replayed, cut down to the operations the
failure needs (:func:`minimise`) and printed as a plain regression test.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import random
import re
import sys
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lsprotocol import types
from pygls.uris import to_fs_path
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities

# The e2e suite's helpers (apply an edit as a client does, VS Code's pull capabilities).
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "lsp" / "e2e"))
from lsp_helpers import apply_text_edits, pull_like_vscode, units

#: Shared by every server the soak starts: agent discovery never reads the real ~/.claude.
CONFIG_DIR = Path(tempfile.mkdtemp(prefix="memdir-soak-claude-"))
SERVER_ENV = {
    key: value for key, value in os.environ.items() if not key.startswith(("ANTHROPIC_", "CLAUDE_"))
}
SERVER_ENV["CLAUDE_CONFIG_DIR"] = str(CONFIG_DIR)
CONFIG = ClientServerConfig(
    server_command=[sys.executable, "-m", "memdir_lsp", "--stdio"], server_env=SERVER_ENV
)
PRESETS = ("visual_studio_code", "neovim")
#: How long a checkpoint waits for the server to agree before it is a mismatch (never a sleep:
#: the wait ends as soon as the findings match).
SETTLE_TIMEOUT = 15.0

#: One operation of a session (see :func:`generate`); plain data, printable as a test.
Op = tuple[Any, ...]

SEVERITIES = {"error": 1, "warning": 2, "info": 3, "hint": 4}

# Text the edits insert: index entries (to files that exist, are gone or appear twice),
# frontmatter pieces, wiki links, multi-byte text (CJK, combining marks, emoji outside the BMP:
# two UTF-16 units, four UTF-8 bytes), CRLF, tabs, secrets, dates, a long line.
SNIPPETS = (
    "- [{title}]({rel}) — {hook}\n",
    "- [{title}]({rel}) — {hook}\r\n",
    "- [Gone](gone-{n}.md) — not there\n",
    "---\n",
    "---\r\n",
    "name: {title}\n",
    "description: {hook}\n",
    "type: project\n",
    "type: opinion\n",
    "metadata:\n  type: user\n",
    "See [[{stem}]] and [[missing-{n}]].\n",
    "数据保留策略：行为日志只保留 90 天",
    "😀👩‍💻𝔘𝔫𝔦",
    "e\u0301 café ñ",
    "\t",
    "\r\n",
    "\n",
    " ",
    "x",
    "token ghp_{token}\n",
    "due 2020-01-31, next Friday\n",
    "# Heading {n}\n",
    "```\n- [Fenced]({rel}) — in a fence\n```\n",
    "{long}\n",
    "\ud800",
    "lone \udfff surrogate",
)
#: A lone surrogate: sent as is (JSON can carry one); the server takes U+FFFD in its place.
SURROGATE = re.compile("[\ud800-\udfff]")


def snap(text: str, offset: int) -> int:
    """A valid cursor offset: inside the text, never between the CR and LF of a CRLF."""
    offset = max(0, min(offset, len(text)))
    if 0 < offset < len(text) and text[offset - 1] == "\r" and text[offset] == "\n":
        offset -= 1
    return offset


def position(text: str, offset: int, encoding: str) -> types.Position:
    """The LSP position of a code-point offset (lines end at LF or CRLF; the soak writes no
    lone CR)."""
    line = text.count("\n", 0, offset)
    start = text.rfind("\n", 0, offset) + 1
    return types.Position(line=line, character=units(text[start:offset], encoding))


def client_range(lines: Sequence[str], span: Any, encoding: str) -> tuple[int, int, int, int]:
    """A core span (code-point columns) in client units, over the text's ``\\n`` lines; a
    column past the end of its line (the CR of a CRLF) is the line's end, as a client reads it."""

    def convert(line: int, col: int) -> tuple[int, int]:
        text = (lines[line] if line < len(lines) else "").removesuffix("\r")
        return line, units(text[:col], encoding)

    return (
        *convert(span.start_line, span.start_col),
        *convert(span.end_line, span.end_col),
    )


Finding = tuple[tuple[int, int, int, int], str, int, str]


def normal(diagnostic: types.Diagnostic, lines: Sequence[str], encoding: str) -> Finding:
    """A client's finding, with a character past its line's end (before a CR) clamped to it."""

    def clamp(p: types.Position) -> tuple[int, int]:
        text = (lines[p.line] if p.line < len(lines) else "").removesuffix("\r")
        return p.line, min(p.character, units(text, encoding))

    r = diagnostic.range
    severity = int(diagnostic.severity) if diagnostic.severity is not None else 0
    return ((*clamp(r.start), *clamp(r.end)), str(diagnostic.code), severity, diagnostic.message)


@dataclass
class Model:
    """What the editor holds (open buffers and their versions) over what is on disk."""

    root: Path
    open: dict[str, str] = field(default_factory=dict)
    versions: dict[str, int] = field(default_factory=dict)
    clock: int = 1_780_000_000

    def disk_files(self) -> list[str]:
        found = []
        for folder, _dirs, names in os.walk(self.root):
            for name in names:
                if name.endswith(".md"):
                    rel = os.path.relpath(os.path.join(folder, name), self.root)
                    found.append(rel.replace(os.sep, "/"))
        return sorted(found)

    def disk_text(self, rel: str) -> str:
        return (self.root / rel).read_bytes().decode("utf-8", errors="replace")

    def text(self, rel: str) -> str:
        return self.open[rel] if rel in self.open else self.disk_text(rel)

    def uri(self, rel: str) -> str:
        return (self.root / rel).as_uri()

    def rel(self, uri: str) -> str:
        return Path(to_fs_path(uri) or "").relative_to(self.root).as_posix()

    def write(self, rel: str, text: str) -> None:
        """Write to disk with a strictly later modification time (the state's caches key on it)."""
        path = self.root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        # A lone surrogate reaches the disk as a careless tool writes it: not valid UTF-8.
        path.write_bytes(text.encode("utf-8", errors="surrogatepass"))
        self.clock += 7
        os.utime(path, (self.clock, self.clock))


# --- generating a session ------------------------------------------------------------------


def _fill(rng: random.Random, template: str, files: list[str]) -> str:
    rel = rng.choice(files) if files else "x.md"
    stem = rel.rsplit("/", 1)[-1].removesuffix(".md")
    return template.format(
        title=rng.choice(("Release freeze", "数据保留", "Ana 😀", stem)),
        rel=rng.choice((rel, rel, f"new-{rng.randrange(9)}.md", "./" + rel)),
        hook=rng.choice(("trunk frozen", "行为日志", "emoji 👩‍💻 hook", "x" * 160)),
        stem=stem,
        n=rng.randrange(9),
        token="".join(rng.choice("abcdefghijklmnopqrstuvwxyz0123456789") for _ in range(36)),
        long="long " * rng.choice((20, 400)),
    )


def _topic_text(rng: random.Random, name: str) -> str:
    kind = rng.choice(("user", "feedback", "project", "reference", "bogus"))
    body = rng.choice(("Body.\n", "See [[release]].\n", "Ship it 😀 next Friday.\r\n", ""))
    text = f"---\nname: {name}\ndescription: what {name} is about 数据\ntype: {kind}\n---\n{body}"
    if rng.random() < 0.2:
        text = text.replace("\r\n", "\n").replace("\n", "\r\n")
    if rng.random() < 0.1:
        text = text[3:]  # no frontmatter
    return text


def _edit(rng: random.Random, text: str, files: list[str]) -> tuple[int, int, str]:
    start = snap(text, rng.randrange(len(text) + 1))
    if rng.random() < 0.5 and text:
        # Often at a line start, where Markdown structure is decided.
        start = text.rfind("\n", 0, start) + 1
    end = start
    if rng.random() < 0.45:
        end = snap(text, start + rng.choice((1, 2, 5, 20, 80)))
    new = "" if end > start and rng.random() < 0.5 else _fill(rng, rng.choice(SNIPPETS), files)
    return start, end, new


def generate(seed: int) -> Callable[[Model], Op]:
    """A generator of the next operation for the model's current state."""
    rng = random.Random(seed)
    counter = iter(range(10**9))

    def next_op(m: Model) -> Op:
        files = m.disk_files()
        topics = [f for f in files if f != "MEMORY.md"]
        closed = [f for f in topics if f not in m.open]
        roll = rng.random()
        if roll < 0.42 and m.open:
            rel = rng.choice(sorted(m.open))
            if rng.random() < 0.05:
                # Every other character: a lone CR is a line end to a client (LSP), left out.
                text = _fill(rng, rng.choice(SNIPPETS), files) + m.open[rel][::2]
                return ("full", rel, re.sub("\r(?!\n)", "", text))
            text = m.open[rel]
            edits = []
            for _ in range(rng.choice((1, 1, 1, 2, 3))):
                start, end, new = _edit(rng, text, files)
                edits.append((start, end, new))
                text = text[:start] + new + text[end:]
            return ("change", rel, tuple(edits))
        if roll < 0.52:
            candidates = [f for f in files if f not in m.open]
            if candidates:
                # MEMORY.md is opened more often than any one topic file.
                rel = "MEMORY.md" if "MEMORY.md" in candidates and rng.random() < 0.3 else None
                return ("open", rel or rng.choice(candidates))
        if roll < 0.58 and m.open:
            return ("close", rng.choice(sorted(m.open)))
        if roll < 0.66 and m.open:
            return ("save", rng.choice(sorted(m.open)))
        if roll < 0.74 and "MEMORY.md" not in files:
            entries = "".join(f"- [{f}]({f}) — about {f}\n" for f in topics[:: rng.choice((1, 2))])
            return ("disk_write", "MEMORY.md", "# Memory\n\n" + entries)
        if roll < 0.74:
            n = next(counter)
            folder = rng.choice(("", "", "notes/", "people/"))
            rel = f"{folder}soak-{seed}-{n}.md"
            return ("disk_write", rel, _topic_text(rng, f"soak-{n}"))
        if roll < 0.82 and files:
            rel = rng.choice(files)
            text = m.disk_text(rel)
            start, end, new = _edit(rng, text, files)
            return ("disk_write", rel, text[:start] + new + text[end:])
        if roll < 0.87 and closed:
            if "MEMORY.md" not in m.open and "MEMORY.md" in files and rng.random() < 0.1:
                return ("disk_delete", "MEMORY.md")  # the agent writes a new one later
            return ("disk_delete", rng.choice(closed))
        if roll < 0.91 and closed:
            old = rng.choice(closed)
            return ("disk_rename", old, f"renamed-{seed}-{next(counter)}.md")
        folders = sorted({f.rsplit("/", 1)[0] for f in closed if "/" in f})
        if roll < 0.93 and folders:
            old = rng.choice(folders)
            return ("folder_rename", old, f"{old}-{next(counter)}")
        if topics:
            old = rng.choice(topics)
            folder = rng.choice(("", "notes/"))
            return ("editor_rename", old, f"{folder}moved-{seed}-{next(counter)}.md")
        return ("noop",)

    return next_op


# --- running a session against a server ----------------------------------------------------


@dataclass
class Session:
    client: LanguageClient
    model: Model
    preset: str
    encoding: str
    pull: bool
    #: The workspace-pull view, as vscode-languageclient keeps it (pull clients only).
    view: dict[str, list[types.Diagnostic]] = field(default_factory=dict)
    result_ids: dict[str, str] = field(default_factory=dict)


async def start(preset: str, root: Path) -> Session:
    client = await CONFIG.start()
    assert isinstance(client, LanguageClient)

    @client.feature(types.CLIENT_REGISTER_CAPABILITY)
    def _register(params: types.RegistrationParams) -> None:
        return None

    @client.feature(types.CLIENT_UNREGISTER_CAPABILITY)
    def _unregister(params: types.UnregistrationParams) -> None:
        return None

    capabilities = client_capabilities(preset)
    if preset == "visual_studio_code":
        pull_like_vscode(capabilities)
    uri = root.as_uri()
    result = await client.initialize_session(
        types.InitializeParams(
            capabilities=capabilities,
            root_uri=uri,
            workspace_folders=[types.WorkspaceFolder(uri=uri, name="memory")],
        )
    )
    chosen = result.capabilities.position_encoding
    encoding = str(getattr(chosen, "value", chosen) or "utf-16")
    pull = result.capabilities.diagnostic_provider is not None
    return Session(client, Model(root), preset, encoding, pull)


async def stop(session: Session) -> None:
    try:
        await asyncio.wait_for(session.client.shutdown_session(), 10.0)
    finally:
        await session.client.stop()


def _did_change(s: Session, rel: str, changes: list[Any]) -> None:
    s.model.versions[rel] += 1
    s.client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(
                uri=s.model.uri(rel), version=s.model.versions[rel]
            ),
            content_changes=changes,
        )
    )


def _did_open(s: Session, rel: str, text: str) -> None:
    s.model.open[rel] = text
    s.model.versions[rel] = 1
    s.client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(
                uri=s.model.uri(rel), language_id="markdown", version=1, text=text
            )
        )
    )


def _did_close(s: Session, rel: str) -> None:
    del s.model.open[rel]
    del s.model.versions[rel]
    s.client.text_document_did_close(
        types.DidCloseTextDocumentParams(
            text_document=types.TextDocumentIdentifier(uri=s.model.uri(rel))
        )
    )


def _watched(s: Session, *events: tuple[str, types.FileChangeType]) -> None:
    s.client.workspace_did_change_watched_files(
        types.DidChangeWatchedFilesParams(
            changes=[types.FileEvent(uri=s.model.uri(rel), type=kind) for rel, kind in events]
        )
    )


def _valid_target(m: Model, rel: str) -> bool:
    return not (m.root / rel).exists() and rel not in m.open


async def execute(s: Session, op: Op) -> bool:
    """Apply one operation to the model, the disk and the server; False when it does not apply
    to the current state (a replay with operations left out)."""
    m = s.model
    kind = op[0]
    created, changed, deleted = (
        types.FileChangeType.Created,
        types.FileChangeType.Changed,
        types.FileChangeType.Deleted,
    )
    if kind == "change":
        _, rel, edits = op
        if rel not in m.open:
            return False
        text = m.open[rel]
        changes: list[Any] = []
        for start, end, new in edits:
            start, end = snap(text, start), snap(text, end)
            start, end = min(start, end), max(start, end)
            changes.append(
                types.TextDocumentContentChangePartial(
                    range=types.Range(
                        start=position(text, start, s.encoding),
                        end=position(text, end, s.encoding),
                    ),
                    text=new,
                )
            )
            text = text[:start] + SURROGATE.sub("\ufffd", new) + text[end:]
        m.open[rel] = text
        _did_change(s, rel, changes)
    elif kind == "full":
        _, rel, text = op
        if rel not in m.open:
            return False
        m.open[rel] = SURROGATE.sub("\ufffd", text)
        _did_change(s, rel, [types.TextDocumentContentChangeWholeDocument(text=text)])
    elif kind == "open":
        _, rel = op
        if rel in m.open or not (m.root / rel).is_file():
            return False
        _did_open(s, rel, m.disk_text(rel))
    elif kind == "close":
        _, rel = op
        if rel not in m.open:
            return False
        _did_close(s, rel)
    elif kind == "save":
        _, rel = op
        if rel not in m.open:
            return False
        m.write(rel, m.open[rel])
        s.client.text_document_did_save(
            types.DidSaveTextDocumentParams(
                text_document=types.TextDocumentIdentifier(uri=m.uri(rel))
            )
        )
        _watched(s, (rel, changed))
    elif kind == "disk_write":
        _, rel, text = op
        existed = (m.root / rel).exists()
        m.write(rel, text)
        _watched(s, (rel, changed if existed else created))
    elif kind == "disk_delete":
        _, rel = op
        if rel in m.open or not (m.root / rel).is_file():
            return False
        (m.root / rel).unlink()
        _watched(s, (rel, deleted))
    elif kind == "disk_rename":
        _, old, new = op
        if old in m.open or not (m.root / old).is_file() or not _valid_target(m, new):
            return False
        (m.root / new).parent.mkdir(parents=True, exist_ok=True)
        os.rename(m.root / old, m.root / new)
        _watched(s, (old, deleted), (new, created))
    elif kind == "folder_rename":
        # A folder moved by a shell or git: its watcher reports the folder, not each file.
        _, old, new = op
        inside = old + "/"
        if not (m.root / old).is_dir() or (m.root / new).exists():
            return False
        if any(rel.startswith(inside) for rel in m.open):
            return False
        os.rename(m.root / old, m.root / new)
        _watched(s, (old, deleted), (new, created))
    elif kind == "editor_rename":
        _, old, new = op
        if not (m.root / old).is_file() or not _valid_target(m, new):
            return False
        await _editor_rename(s, old, new)
    elif kind != "noop":
        raise AssertionError(f"unknown operation {op!r}")
    return True


async def _editor_rename(s: Session, old: str, new: str) -> None:
    """What VS Code does on a rename in its explorer: ask for the edit, apply it (open
    documents as changes, others on disk), move the file, reopen it under its new name."""
    m = s.model
    files = [types.FileRename(old_uri=m.uri(old), new_uri=m.uri(new))]
    edit = await s.client.workspace_will_rename_files_async(types.RenameFilesParams(files=files))
    for uri, edits in ((edit.changes or {}) if edit else {}).items():
        rel = m.rel(uri)
        if rel in m.open:
            text = apply_text_edits(m.open[rel], list(edits), s.encoding)
            m.open[rel] = text
            _did_change(s, rel, [types.TextDocumentContentChangeWholeDocument(text=text)])
        else:
            m.write(rel, apply_text_edits(m.disk_text(rel), list(edits), s.encoding))
            _watched(s, (rel, types.FileChangeType.Changed))
    assert not (edit and edit.document_changes), "the soak applies `changes` edits only"
    (m.root / new).parent.mkdir(parents=True, exist_ok=True)
    os.rename(m.root / old, m.root / new)
    if old in m.open:
        text = m.open[old]
        _did_close(s, old)
        _did_open(s, new, text)
    s.client.workspace_did_rename_files(types.RenameFilesParams(files=files))


# --- comparing with the lint engine --------------------------------------------------------


def expected(m: Model, encoding: str) -> dict[str, list[Finding]]:
    """What ``memdir lint`` finds in the directory, with the open buffers' texts, in client
    units, by file (files with findings only)."""
    from memdir.config import load_settings
    from memdir.lint.state import DirState

    state = DirState(m.root, load_settings(m.root), None)
    state.refresh()
    for rel, text in m.open.items():
        state.update(m.root / rel, text)
    found: dict[str, list[Finding]] = {}
    lines: dict[str, list[str]] = {}
    for d in state.lint().diagnostics:
        rel = d.rel_path
        if rel not in lines:
            lines[rel] = m.text(rel).split("\n")
        found.setdefault(rel, []).append(
            (client_range(lines[rel], d.span, encoding), d.code, SEVERITIES[d.severity], d.message)
        )
    return {rel: sorted(items) for rel, items in found.items()}


async def _pull(s: Session) -> dict[str, list[Finding]]:
    """One workspace pull, kept as vscode-languageclient keeps it, then each open document
    pulled (what VS Code shows for a file in an editor tab)."""
    client = s.client
    report = await client.workspace_diagnostic_async(
        types.WorkspaceDiagnosticParams(
            previous_result_ids=[
                types.PreviousResultId(uri=uri, value=value) for uri, value in s.result_ids.items()
            ]
        )
    )
    for item in report.items:
        if isinstance(item, types.WorkspaceFullDocumentDiagnosticReport):
            s.view[item.uri] = list(item.items)
        if item.result_id is not None:
            s.result_ids[item.uri] = item.result_id
    shown = dict(s.view)
    for rel in sorted(s.model.open):
        uri = s.model.uri(rel)
        pulled = await client.text_document_diagnostic_async(
            types.DocumentDiagnosticParams(text_document=types.TextDocumentIdentifier(uri=uri))
        )
        assert isinstance(pulled, types.RelatedFullDocumentDiagnosticReport), pulled
        shown[uri] = list(pulled.items)
    return _by_rel(s, shown)


def _by_rel(s: Session, shown: dict[str, Sequence[types.Diagnostic]]) -> dict[str, list[Finding]]:
    out: dict[str, list[Finding]] = {}
    for uri, items in shown.items():
        if items:
            rel = s.model.rel(uri)
            try:
                lines = s.model.text(rel).split("\n")
            except OSError:
                lines = []  # findings left on a file that is gone: a mismatch of their own
            out[rel] = sorted(normal(d, lines, s.encoding) for d in items)
    return out


async def observed(s: Session) -> dict[str, list[Finding]]:
    if s.pull:
        return await _pull(s)
    return _by_rel(s, dict(s.client.diagnostics))


async def settle(s: Session) -> tuple[dict[str, list[Finding]], dict[str, list[Finding]]]:
    """Wait until the client's findings equal the in-process lint's: on each push, or pulling
    again after a round trip. Returns (expected, last observed); they differ on a timeout."""
    want = expected(s.model, s.encoding)
    loop = asyncio.get_running_loop()
    deadline = loop.time() + SETTLE_TIMEOUT
    while True:
        got = await observed(s)
        if got == want or loop.time() > deadline:
            return want, got
        if s.pull:
            # Pending debounced re-lints run before the answer to a later request.
            await asyncio.wait_for(s.client.protocol.send_request_async("memdir/status", {}), 10)
        else:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(
                    s.client.wait_for_notification("textDocument/publishDiagnostics"),
                    max(0.01, deadline - loop.time()),
                )


def difference(want: dict[str, list[Finding]], got: dict[str, list[Finding]]) -> str:
    lines = []
    for rel in sorted(set(want) | set(got)):
        missing = [f for f in want.get(rel, []) if f not in got.get(rel, [])]
        extra = [f for f in got.get(rel, []) if f not in want.get(rel, [])]
        for f in missing:
            lines.append(f"  {rel}: lint finds, the server does not: {f}")
        for f in extra:
            lines.append(f"  {rel}: the server reports, lint does not: {f}")
    return "\n".join(lines)


@dataclass
class Outcome:
    ops: list[Op]
    #: Index of the operation after which the findings first differed, else None.
    failed_at: int | None = None
    diff: str = ""
    #: Findings compared at the checkpoints that agreed (a soak that compares nothing proves
    #: nothing).
    compared: int = 0


async def run_ops(
    preset: str,
    root: Path,
    ops: Sequence[Op] | None = None,
    *,
    seed: int = 0,
    steps: int = 0,
    every: int = 10,
    setup: Callable[[Path], None] | None = None,
) -> Outcome:
    """Run ``ops`` (or ``steps`` generated from ``seed``) against a fresh server on ``root``
    (built by ``setup``), comparing at every ``every`` operations and at the end."""
    if setup is not None:
        setup(root)
    s = await start(preset, root)
    outcome = Outcome([])
    try:
        # The first lint agrees too, and has read the directory before anything changes it:
        # a replay then does not depend on how far the server got on its own.
        want, got = await settle(s)
        if want != got:
            outcome.failed_at, outcome.diff = -1, difference(want, got)
            return outcome
        next_op = generate(seed) if ops is None else None
        total = len(ops) if ops is not None else steps
        for index in range(total):
            op = ops[index] if ops is not None else next_op(s.model)  # type: ignore[misc]
            if await execute(s, op):
                outcome.ops.append(op)
            last = index == total - 1
            if last or (index + 1) % every == 0:
                want, got = await settle(s)
                if want != got:
                    outcome.failed_at = len(outcome.ops) - 1
                    outcome.diff = difference(want, got)
                    return outcome
                outcome.compared += sum(map(len, want.values()))
    finally:
        await stop(s)
    return outcome


async def minimise(
    preset: str, make_root: Callable[[], Path], setup: Callable[[Path], None], ops: list[Op]
) -> Outcome:
    """The shortest sublist of ``ops`` found (delta debugging, one chunk at a time) that still
    ends in a mismatch; each trial runs a fresh server on a fresh directory, checked after every
    operation."""

    async def fails(candidate: list[Op]) -> Outcome | None:
        result = await run_ops(preset, make_root(), candidate, every=1, setup=setup)
        return result if result.failed_at is not None else None

    best = await fails(ops)
    if best is None:
        return Outcome(ops)  # did not reproduce (say so: the caller prints the full list)
    current = best.ops[: (best.failed_at or 0) + 1]
    chunk = max(1, len(current) // 2)
    while chunk >= 1:
        index = 0
        while index < len(current):
            trial = current[:index] + current[index + chunk :]
            found = await fails(trial) if trial else None
            if found is not None:
                best = found
                current = found.ops[: (found.failed_at or 0) + 1]
            else:
                index += chunk
        chunk //= 2
    return best


def as_test(preset: str, seed: int, files: int, outcome: Outcome) -> str:
    """The minimised session as the body of a plain regression test."""
    body = ",\n".join(f"        {op!r}" for op in outcome.ops)
    return (
        f"# preset {preset}, generated dir seed {seed}, {files} files\n"
        f"OPS = [\n{body},\n]\n# mismatch after the last operation:\n{outcome.diff}"
    )
