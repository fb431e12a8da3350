"""Workspace builders and small helpers shared by the language-server tests."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from jsonschema import Draft202012Validator
from lsprotocol import types
from memdir_lsp.memory_protocol.converter import plain
from memdir_lsp.memory_protocol.schema import SCHEMA_PATH
from memhelpers import spawn_lsp, write_files
from pytest_lsp import LanguageClient

INDEX = """\
# Memory index

- [Release merge freeze](release-freeze.md) — trunk frozen from store submission until live
- [Ana's role](user-role.md) — backend engineer new to React; explain UI in backend terms
- [数据保留策略](data-retention.md) — 行为日志只保留 90 天
- [Gone](missing.md) — this file does not exist

Deploys go through the blue/green pipeline; never deploy on Fridays.
The staging database is reset every Monday at 06:00 UTC.
"""


def topic(name: str, description: str, type_: str = "project", body: str = "Body.\n") -> str:
    return f"---\nname: {name}\ndescription: {description}\ntype: {type_}\n---\n{body}"


FILES: dict[str, str] = {
    "MEMORY.md": INDEX,
    "release-freeze.md": topic(
        "release-freeze",
        "trunk is frozen from app-store submission until the release is live and stable",
        body="# Release merge freeze\n\nCheck [[release-calendar]] and ask [[user-role]].\n",
    ),
    "user-role.md": topic(
        "user-role", "Ana is a backend engineer (Go, Postgres) new to React", "user"
    ),
    "data-retention.md": topic("数据保留策略", "行为日志只保留 90 天，新表要配清理任务"),
    "orphan.md": topic("orphan", "oncall escalation goes through PagerDuty core-platform"),
}


@dataclass
class Workspace:
    root: Path

    @property
    def uri(self) -> str:
        return self.root.as_uri()

    def path(self, rel: str) -> Path:
        return self.root / rel

    def uri_of(self, rel: str) -> str:
        return (self.root / rel).as_uri()

    def text(self, rel: str) -> str:
        return (self.root / rel).read_text(encoding="utf-8")


def build(root: Path, files: dict[str, str]) -> None:
    root.mkdir(parents=True, exist_ok=True)
    # Distinct mtimes, newest last, so the prefetch order is deterministic.
    write_files(root, files, 1_700_000_000, step=60)


def open_doc(client: LanguageClient, ws: Workspace, rel: str, text: str | None = None) -> str:
    uri = ws.uri_of(rel)
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(
                uri=uri,
                language_id="markdown",
                version=1,
                text=text if text is not None else ws.text(rel),
            )
        )
    )
    return uri


def pos(line: int, character: int) -> types.Position:
    return types.Position(line=line, character=character)


def _offset(text: str, position: types.Position, encoding: str) -> int:
    """A client position (in ``encoding`` units) as a string index into ``text``."""
    lines = text.split("\n")
    offset = sum(len(line) + 1 for line in lines[: position.line])
    line = lines[position.line] if position.line < len(lines) else ""
    units = 0
    for index, char in enumerate(line):
        if units >= position.character:
            return offset + index
        if encoding == "utf-8":
            units += len(char.encode("utf-8"))
        elif encoding == "utf-16":
            units += 2 if ord(char) > 0xFFFF else 1
        else:
            units += 1
    return offset + len(line)


def apply_text_edits(text: str, edits: list[types.TextEdit], encoding: str) -> str:
    """Apply LSP text edits the way a client does: all ranges refer to the original text."""
    spans = sorted(
        (
            (
                _offset(text, e.range.start, encoding),
                _offset(text, e.range.end, encoding),
                e.new_text,
            )
            for e in edits
        ),
        key=lambda item: item[0],
        reverse=True,
    )
    for start, end, new_text in spans:
        text = text[:start] + new_text + text[end:]
    return text


def apply_workspace_edit(edit: types.WorkspaceEdit, encoding: str) -> None:
    """Write a WorkspaceEdit to disk, as an editor would after applying and saving it."""
    from pygls.uris import to_fs_path

    def path_of(uri: str) -> Path:
        return Path(to_fs_path(uri) or "")

    for change in edit.document_changes or []:
        if isinstance(change, types.CreateFile):
            target = path_of(change.uri)
            assert not target.exists() or (change.options and change.options.ignore_if_exists)
            if not target.exists():
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_text("", encoding="utf-8")
        elif isinstance(change, types.TextDocumentEdit):
            target = path_of(change.text_document.uri)
            text = target.read_text(encoding="utf-8")
            edits = [e for e in change.edits if isinstance(e, types.TextEdit)]
            target.write_text(apply_text_edits(text, edits, encoding), encoding="utf-8")
        elif isinstance(change, types.DeleteFile):
            path_of(change.uri).unlink()
        else:
            raise AssertionError(f"unexpected resource operation {change!r}")
    for uri, edits in (edit.changes or {}).items():
        target = path_of(uri)
        text = target.read_text(encoding="utf-8")
        target.write_text(apply_text_edits(text, list(edits), encoding), encoding="utf-8")


def encoding_of(client: LanguageClient) -> str:
    """The position encoding the server chose for this client (VS Code 1.65: utf-16)."""
    result: types.InitializeResult = client.init_result  # type: ignore[attr-defined]
    chosen = result.capabilities.position_encoding
    value = getattr(chosen, "value", chosen)
    return str(value or "utf-16")


def units(text: str, encoding: str) -> int:
    if encoding == "utf-8":
        return len(text.encode("utf-8"))
    if encoding == "utf-16":
        return len(text.encode("utf-16-le")) // 2
    return len(text)


# --- waiting for diagnostics, asking for fixes, custom requests ---------------------------

#: How long a test waits for the server to settle on a result (never a fixed sleep).
TIMEOUT = 10.0


def is_pull(client: LanguageClient) -> bool:
    return client.init_result.capabilities.diagnostic_provider is not None  # type: ignore[attr-defined]


async def diagnostics_for(client: LanguageClient, uri: str) -> list[types.Diagnostic]:
    """The current diagnostics of ``uri``: pulled, or the last pushed."""
    if is_pull(client):
        report = await client.text_document_diagnostic_async(
            types.DocumentDiagnosticParams(text_document=types.TextDocumentIdentifier(uri=uri))
        )
        assert isinstance(report, types.RelatedFullDocumentDiagnosticReport)
        return list(report.items)
    return list(client.diagnostics.get(uri, []))


async def wait_until(
    client: LanguageClient, uri: str, check: Any, timeout: float = TIMEOUT
) -> list[types.Diagnostic]:
    """Wait for diagnostics of ``uri`` satisfying ``check``: on each push, or by pulling."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while True:
        found = await diagnostics_for(client, uri)
        if check(found):
            return found
        if loop.time() > deadline:
            raise AssertionError(f"timed out; last diagnostics of {uri}: {found}")
        if is_pull(client):
            # The pull itself re-lints; a change on disk may need one more round.
            await asyncio.wait_for(client.protocol.send_request_async("memdir/status", {}), timeout)
        else:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(
                    client.wait_for_notification("textDocument/publishDiagnostics"),
                    deadline - loop.time(),
                )


def codes(found: list[types.Diagnostic]) -> list[str]:
    return sorted(str(d.code) for d in found)


async def quick_fixes(
    client: LanguageClient, uri: str, diagnostic: types.Diagnostic
) -> list[types.CodeAction]:
    """The code actions the server offers for one diagnostic."""
    result = await client.text_document_code_action_async(
        types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            range=diagnostic.range,
            context=types.CodeActionContext(diagnostics=[diagnostic]),
        )
    )
    return [a for a in result or [] if isinstance(a, types.CodeAction)]


SCHEMA = json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))


def check_schema(method: str, payload: Any, part: str = "result") -> None:
    """``payload`` is exactly what the protocol's schema says ``method`` sends."""
    (message,) = [m for m in SCHEMA["oneOf"] if m["title"] == method]
    schema = {**message["properties"][part], "$defs": SCHEMA["$defs"]}
    Draft202012Validator(schema).validate(payload)


async def request(client: LanguageClient, method: str, params: Any) -> Any:
    result = plain(await client.protocol.send_request_async(method, params))
    check_schema(method, result)
    return result


def pull_like_vscode(capabilities: types.ClientCapabilities) -> None:
    """pytest-lsp's VS Code is 1.65; the extension needs 1.101, which pulls and takes refreshes.

    With the "neovim" preset (push: it takes no refresh) both ways of delivering findings run.
    """
    if capabilities.text_document is None:
        capabilities.text_document = types.TextDocumentClientCapabilities()
    capabilities.text_document.diagnostic = types.DiagnosticClientCapabilities(
        dynamic_registration=True, related_document_support=False
    )
    if capabilities.workspace is None:
        capabilities.workspace = types.WorkspaceClientCapabilities()
    capabilities.workspace.diagnostics = types.DiagnosticWorkspaceClientCapabilities(
        refresh_support=True
    )


# --- the raw wire ------------------------------------------------------------------------------


class Wire:
    """A bare JSON-RPC client over the server's stdio that can also send raw bytes; what it
    reads while waiting for an answer (notifications, other answers) is kept in order."""

    def __init__(self, proc: asyncio.subprocess.Process, timeout: float) -> None:
        self.proc = proc
        self.timeout = timeout
        self.next_id = 0
        self.notifications: list[dict[str, Any]] = []

    def raw(self, data: bytes) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(data)

    def frame(self, body: bytes) -> None:
        self.raw(b"Content-Length: %d\r\n\r\n" % len(body) + body)

    def send(self, message: dict[str, Any]) -> None:
        self.frame(json.dumps({"jsonrpc": "2.0", **message}).encode())

    def notify(self, method: str, **params: Any) -> None:
        self.send({"method": method, **params})

    async def read(self) -> dict[str, Any]:
        assert self.proc.stdout is not None
        length = 0
        while (line := await self.proc.stdout.readline()).strip():
            name, _, value = line.decode().partition(":")
            if name.lower() == "content-length":
                length = int(value)
        message: dict[str, Any] = json.loads(await self.proc.stdout.readexactly(length))
        return message

    async def answer(self, msg_id: Any) -> dict[str, Any]:
        """The next response with ``msg_id``."""
        while True:
            message = await asyncio.wait_for(self.read(), self.timeout)
            if "method" not in message and "id" in message and message["id"] == msg_id:
                return message
            self.notifications.append(message)

    async def request(self, method: str, **params: Any) -> dict[str, Any]:
        """The response to ``method``; ``params=`` as given (absent when not passed)."""
        self.next_id += 1
        self.send({"id": self.next_id, "method": method, **params})
        return await self.answer(self.next_id)

    async def initialize(self, root: Path) -> dict[str, Any]:
        """The ``initialize`` answer for a client of no capabilities at ``root``; then
        ``initialized``."""
        answer = await self.request(
            "initialize", params={"processId": None, "rootUri": root.as_uri(), "capabilities": {}}
        )
        self.notify("initialized", params={})
        return answer


async def start_wire(tmp_path: Path, *args: str, stderr: int, timeout: float) -> Wire:
    """``memdir-lsp`` (with ``args``) over stdio, its agent config dir in ``tmp_path``; the
    memory dir ``tmp_path/memory`` holds :data:`FILES`."""
    build(tmp_path / "memory", FILES)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "CLAUDE_"))}
    env["CLAUDE_CONFIG_DIR"] = str(tmp_path / "claude")
    return Wire(await spawn_lsp(*args, env=env, stderr=stderr), timeout)


@contextlib.asynccontextmanager
async def serving_wire(tmp_path: Path, timeout: float) -> AsyncIterator[Wire]:
    """:func:`start_wire` (stderr dropped) initialized at ``tmp_path/memory``; at the end shut
    down, which it must survive: it exits with 0."""
    wire = await start_wire(tmp_path, stderr=asyncio.subprocess.DEVNULL, timeout=timeout)
    assert "result" in await wire.initialize(tmp_path / "memory")
    yield wire
    await wire.request("shutdown")
    wire.send({"method": "exit"})
    assert await asyncio.wait_for(wire.proc.wait(), timeout) == 0
