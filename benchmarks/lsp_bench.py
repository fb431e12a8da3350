"""Benchmark the language server against vscode-markdown-languageserver on the same dirs.

Both servers are started as an editor starts them (a process speaking LSP on stdio) and driven
by the small raw client below, over directories made by :mod:`gen_memdir` (2,000 and 20,000
topic files by default, under ``benchmarks/data/``). For each server and size it prints:

* **initialize**: process start until the ``initialize`` answer arrives (the median of
  ``--repeat`` starts); for memdir next to the *import floor*, a fresh interpreter that only
  imports pygls and lsprotocol (the median of as many runs; the goal is within 1.3x of it);
* **first diagnostics**: ``didOpen(MEMORY.md)`` sent right after ``initialized``, then a
  ``textDocument/diagnostic`` pull (as VS Code does); the time until its answer, and until
  every finding (memdir answers with the file's own findings while its first check reads the
  directory, then asks for a new pull: the time until that pull's answer);
* **edit compute**: an edit of MEMORY.md (its last line becomes an entry to a missing file, a
  different one each time, so every answer differs), pulled at once: the server's compute
  time, p50 and p95 of ``--edits`` edits. A pull skips the debounce, so memdir's latency as a
  push client sees it is this plus ``memdir.diagnostics.debounce`` (printed beside it);
* **topic edit**: the same for an open topic file (its body gains a line);
* **RSS** of the server process after the edits (``/proc``, Linux).

vscode-markdown-languageserver checks links only (its defaults are off; the client turns file,
fragment and reference link checks on); memdir runs every rule. It asks its client to parse
Markdown (``markdown/parse``) and to read the workspace (``markdown/fs/*``): this client
answers from the disk, with a minimal token list (fenced code blocks). The npm package is
installed into ``$MEMDIR_E2E_CACHE`` (default ``~/.cache/memdir-e2e``)/``markdown-ls``;
``--no-peer`` skips it. Nothing is written to the generated dirs: edits stay in the editor.

Usage::

    .venv/bin/python benchmarks/lsp_bench.py                  # 2000 and 20000
    .venv/bin/python benchmarks/lsp_bench.py --sizes 2000 --edits 40 --no-peer
"""

from __future__ import annotations

import argparse
import json
import os
import queue
import re
import shutil
import statistics
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(HERE))

import gen_memdir  # noqa: E402

PEER_PACKAGE = "vscode-markdown-languageserver@0.3.0"
PEER_MAIN = "node_modules/vscode-markdown-languageserver/out/node/main.js"
IMPORT_FLOOR = "import pygls.lsp.server, lsprotocol.types"
#: Commands run as an installed tool runs: with bytecode caching on (see lint_bench.py).
ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
TIMEOUT = 600.0


def uri(path: Path) -> str:
    return path.resolve().as_uri()


def path_of(text: str) -> Path:
    return Path(unquote(urlparse(text).path))


class Client:
    """A raw LSP client on a subprocess's stdio: requests, notifications, answers to the
    server's requests (``on_request``), and the time every message arrived."""

    def __init__(self, argv: list[str], on_request: Callable[[str, Any], Any]) -> None:
        self.started = time.perf_counter()
        self.proc = subprocess.Popen(
            argv,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=ENV,
        )
        self.on_request = on_request
        #: Set when the server asks for a fresh pull (``workspace/diagnostic/refresh``).
        self.refreshed = threading.Event()
        self.next_id = 0
        self.answers: dict[int, queue.Queue[tuple[float, Any]]] = {}
        self.lock = threading.Lock()
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _send(self, message: dict[str, Any]) -> None:
        body = json.dumps({"jsonrpc": "2.0", **message}).encode()
        assert self.proc.stdin is not None
        with self.lock:
            self.proc.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
            self.proc.stdin.flush()

    def _read(self) -> None:
        stream = self.proc.stdout
        assert stream is not None
        while True:
            length = 0
            while True:
                line = stream.readline()
                if not line:
                    return
                if line in (b"\r\n", b"\n"):
                    break
                name, _, value = line.decode().partition(":")
                if name.lower() == "content-length":
                    length = int(value)
            message = json.loads(stream.read(length))
            arrived = time.perf_counter()
            if "method" in message and "id" in message:
                if message["method"] == "workspace/diagnostic/refresh":
                    self.refreshed.set()
                try:
                    result = self.on_request(message["method"], message.get("params"))
                    self._send({"id": message["id"], "result": result})
                except Exception as exc:  # the benchmark's own bug: tell the server
                    self._send(
                        {"id": message["id"], "error": {"code": -32603, "message": str(exc)}}
                    )
            elif "id" in message:
                waiting = self.answers.get(message["id"])
                if waiting is not None:
                    waiting.put((arrived, message))

    def request(self, method: str, params: Any) -> tuple[float, Any]:
        """Send a request and wait; (seconds until the answer, the answer's result)."""
        self.next_id += 1
        waiting: queue.Queue[tuple[float, Any]] = queue.Queue()
        self.answers[self.next_id] = waiting
        sent = time.perf_counter()
        self._send({"id": self.next_id, "method": method, "params": params})
        arrived, message = waiting.get(timeout=TIMEOUT)
        del self.answers[self.next_id]
        if "error" in message:
            raise RuntimeError(f"{method}: {message['error']}")
        return arrived - sent, message.get("result")

    def notify(self, method: str, params: Any) -> None:
        self._send({"method": method, "params": params})

    def rss_mb(self) -> float:
        status = Path(f"/proc/{self.proc.pid}/status").read_text()
        match = re.search(r"VmRSS:\s+(\d+) kB", status)
        return int(match.group(1)) / 1024 if match else float("nan")

    def close(self) -> None:
        try:
            self.request("shutdown", None)
            self.notify("exit", None)
            self.proc.wait(timeout=10)
        except Exception:
            self.proc.kill()
            self.proc.wait()


CAPABILITIES: dict[str, Any] = {
    "textDocument": {
        "synchronization": {"didSave": True},
        "diagnostic": {"dynamicRegistration": False, "relatedDocumentSupport": True},
        "publishDiagnostics": {"versionSupport": True},
    },
    "workspace": {
        "workspaceFolders": True,
        "configuration": True,
        "diagnostics": {"refreshSupport": True},
        "didChangeWatchedFiles": {"dynamicRegistration": True},
    },
    "window": {"workDoneProgress": True},
}

PEER_SETTINGS = {
    "markdown": {
        "validate": {
            "enabled": True,
            "fileLinks": {"enabled": "warning", "markdownFragmentLinks": "inherit"},
            "fragmentLinks": {"enabled": "warning"},
            "referenceLinks": {"enabled": "warning"},
            "unusedLinkDefinitions": {"enabled": "hint"},
            "duplicateLinkDefinitions": {"enabled": "warning"},
            "ignoredLinks": [],
        },
        "preferredMdPathExtensionStyle": "auto",
        "occurrencesHighlight": {"enabled": False},
        "suggest": {"paths": {"enabled": False}},
    }
}

FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")


def fences(text: str) -> list[dict[str, Any]]:
    """The markdown-it tokens the peer uses to skip links in code: fenced blocks only."""
    tokens: list[dict[str, Any]] = []
    opened: tuple[int, str] | None = None
    for number, line in enumerate(text.split("\n")):
        match = FENCE.match(line)
        if match is None:
            continue
        if opened is None:
            opened = (number, match.group(1)[0])
        elif match.group(1)[0] == opened[1]:
            tokens.append({"type": "fence", "map": [opened[0], number + 1]})
            opened = None
    return tokens


def peer_answers(root: Path, open_texts: dict[str, str]) -> Callable[[str, Any], Any]:
    """What vscode-markdown-languageserver asks its client, answered from the disk."""

    def answer(method: str, params: Any) -> Any:
        if method == "markdown/parse":
            text = open_texts.get(params["uri"])
            if text is None:
                text = path_of(params["uri"]).read_text(encoding="utf-8", errors="replace")
            return fences(text)
        if method == "markdown/findMarkdownFilesInWorkspace":
            return [uri(p) for p in sorted(root.rglob("*.md"))]
        if method == "markdown/fs/readFile":
            return list(path_of(params["uri"]).read_bytes())
        if method == "markdown/fs/stat":
            target = path_of(params["uri"])
            return {"isDirectory": target.is_dir()} if target.exists() else None
        if method == "markdown/fs/readDirectory":
            folder = path_of(params["uri"])
            return [[p.name, {"isDirectory": p.is_dir()}] for p in sorted(folder.iterdir())]
        if method == "workspace/configuration":
            return [PEER_SETTINGS.get(item.get("section", "")) for item in params["items"]]
        return None  # registrations, progress, watchers

    return answer


def memdir_answers(debounce: float | None) -> Callable[[str, Any], Any]:
    section: dict[str, Any] = {}
    if debounce is not None:
        section["diagnostics"] = {"debounce": int(debounce * 1000)}

    def answer(method: str, params: Any) -> Any:
        if method == "workspace/configuration":
            return [section for _ in params["items"]]
        return None

    return answer


@dataclass
class Figures:
    initialize: float = 0.0
    first: float = 0.0
    #: Until the findings of every rule (memdir answers an open file's own findings first).
    complete: float = 0.0
    edits: list[float] = field(default_factory=list)
    topic_edits: list[float] = field(default_factory=list)
    rss: float = 0.0
    notes: list[str] = field(default_factory=list)


def initialize(client: Client, root: Path) -> float:
    """Send ``initialize``; seconds from the process's start until its answer."""
    client.request(
        "initialize",
        {
            "processId": os.getpid(),
            "rootUri": uri(root),
            "workspaceFolders": [{"uri": uri(root), "name": root.name}],
            "capabilities": CAPABILITIES,
            "initializationOptions": {},
        },
    )
    return time.perf_counter() - client.started


def startups(
    argv: list[str], answers: Callable[[str, Any], Any], root: Path, runs: int
) -> list[float]:
    """``initialize`` timed in ``runs`` fresh processes (one start is too noisy to compare
    with the import floor's median)."""
    times = []
    for _ in range(runs):
        client = Client(argv, answers)
        try:
            times.append(initialize(client, root))
        finally:
            client.close()
    return times


def drive(
    client: Client, root: Path, topic: Path, edits: int, peer: bool, texts: dict[str, str]
) -> Figures:
    figures = Figures()
    figures.initialize = initialize(client, root)
    client.notify("initialized", {})
    if peer:
        client.notify("workspace/didChangeConfiguration", {"settings": PEER_SETTINGS})
    index = root / "MEMORY.md"
    index_uri = uri(index)
    text = index.read_text(encoding="utf-8")
    texts[index_uri] = text
    opened = time.perf_counter()
    client.notify(
        "textDocument/didOpen",
        {"textDocument": {"uri": index_uri, "languageId": "markdown", "version": 1, "text": text}},
    )
    _, result = client.request("textDocument/diagnostic", {"textDocument": {"uri": index_uri}})
    figures.first = time.perf_counter() - opened
    first_count = len(result.get("items", []))
    figures.complete = figures.first
    if not peer and client.refreshed.wait(TIMEOUT):
        # The directory's first check is done: the complete answer is one pull away.
        _, result = client.request("textDocument/diagnostic", {"textDocument": {"uri": index_uri}})
        figures.complete = max(figures.first, time.perf_counter() - opened)
    figures.notes.append(
        f"{first_count} findings in MEMORY.md first, {len(result.get('items', []))} in all"
    )
    lines = text.rstrip("\n").split("\n")
    last = len(lines)
    previous = ""
    for number in range(edits):
        # The last line becomes an entry to a missing file (empty before the first edit).
        entry = f"- [Missing {number}](missing-{number}.md) — an entry to a file not written yet"
        change = {
            "range": {
                "start": {"line": last, "character": 0},
                "end": {"line": last, "character": len(previous)},
            },
            "text": entry,
        }
        previous = entry
        texts[index_uri] = "\n".join([*lines, entry]) + "\n"
        client.notify(
            "textDocument/didChange",
            {"textDocument": {"uri": index_uri, "version": number + 2}, "contentChanges": [change]},
        )
        took, _ = client.request("textDocument/diagnostic", {"textDocument": {"uri": index_uri}})
        figures.edits.append(took)
    topic_uri = uri(topic)
    topic_text = topic.read_text(encoding="utf-8")
    texts[topic_uri] = topic_text
    client.notify(
        "textDocument/didOpen",
        {
            "textDocument": {
                "uri": topic_uri,
                "languageId": "markdown",
                "version": 1,
                "text": topic_text,
            }
        },
    )
    client.request("textDocument/diagnostic", {"textDocument": {"uri": topic_uri}})
    end_line = topic_text.count("\n")
    for number in range(edits):
        added = f"Another line of notes, number {number}; see [the index](MEMORY.md).\n"
        texts[topic_uri] = topic_text = topic_text + added
        client.notify(
            "textDocument/didChange",
            {
                "textDocument": {"uri": topic_uri, "version": number + 2},
                "contentChanges": [
                    {
                        "range": {
                            "start": {"line": end_line, "character": 0},
                            "end": {"line": end_line, "character": 0},
                        },
                        "text": added,
                    }
                ],
            },
        )
        end_line += 1
        took, _ = client.request("textDocument/diagnostic", {"textDocument": {"uri": topic_uri}})
        figures.topic_edits.append(took)
    figures.rss = client.rss_mb()
    return figures


def memdir_argv() -> list[str]:
    return [sys.executable, "-m", "memdir_lsp", "--stdio"]


def import_floor(repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        subprocess.run([sys.executable, "-c", IMPORT_FLOOR], check=True, env=ENV)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def ensure_peer(skip: bool) -> Path | None:
    """The peer's entry point, installed into the npm cache when missing; None: skipped."""
    if skip:
        return None
    if shutil.which("node") is None or shutil.which("npm") is None:
        print("node/npm not found: vscode-markdown-languageserver skipped", file=sys.stderr)
        return None
    cache = Path(os.environ.get("MEMDIR_E2E_CACHE", Path.home() / ".cache" / "memdir-e2e"))
    folder = cache / "markdown-ls"
    marker = folder / ".memdir-installed"
    if not (
        marker.exists() and marker.read_text() == PEER_PACKAGE and (folder / PEER_MAIN).exists()
    ):
        shutil.rmtree(folder, ignore_errors=True)
        folder.mkdir(parents=True)
        (folder / "package.json").write_text('{"name":"memdir-cache","private":true}')
        subprocess.run(
            ["npm", "install", "--no-audit", "--no-fund", "--loglevel=error", PEER_PACKAGE],
            cwd=folder,
            check=True,
            stdout=sys.stderr,
        )
        marker.write_text(PEER_PACKAGE)
    return folder / PEER_MAIN


def topic_of(root: Path) -> Path:
    """A plain topic file (no planted problem) at the top level."""
    planted = {p["path"] for p in json.loads((root / "PLANTED.json").read_text())}
    for candidate in sorted(root.glob("project-*.md")):
        if candidate.name not in planted:
            return candidate
    raise SystemExit(f"no plain topic file in {root}")


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else float("nan")


def report(name: str, figures: Figures, floor: float | None, debounce: float | None) -> None:
    ms = 1000
    extra = f" ({figures.initialize / floor:.2f}x the import floor)" if floor else ""
    print(f"  {name}")
    print(f"    initialize answered        {figures.initialize * ms:8.0f} ms{extra}")
    print(f"    didOpen -> diagnostics     {figures.first * ms:8.0f} ms")
    print(f"    didOpen -> every finding   {figures.complete * ms:8.0f} ms")
    edit = (
        f"p50 {pct(figures.edits, 0.5) * ms:6.1f} ms  p95 {pct(figures.edits, 0.95) * ms:6.1f} ms"
    )
    if debounce is not None:
        edit += f"  (+ debounce {debounce * ms:.0f} ms when pushed)"
    print(f"    MEMORY.md edit compute     {edit}")
    topics = figures.topic_edits
    topic = f"p50 {pct(topics, 0.5) * ms:6.1f} ms  p95 {pct(topics, 0.95) * ms:6.1f} ms"
    print(f"    topic edit compute         {topic}")
    print(f"    RSS after the edits        {figures.rss:8.0f} MB")
    for note in figures.notes:
        print(f"    ({note})")


def bench_size(
    files: int, edits: int, peer: Path | None, floor: float, debounce: float | None, repeat: int
) -> None:
    root = HERE / "data" / f"bench-{files}"
    if not (root / "MEMORY.md").exists() or not (root / "PLANTED.json").exists():
        gen_memdir.generate(root, files, seed=1, invalid_files=False)
    topic = topic_of(root)
    print(f"{files} files ({root})")
    client = Client(memdir_argv(), memdir_answers(debounce))
    try:
        ours = drive(client, root, topic, edits, False, {})
    finally:
        client.close()
    starts = [ours.initialize, *startups(memdir_argv(), memdir_answers(debounce), root, repeat - 1)]
    ours.initialize = statistics.median(starts)
    report("memdir-lsp", ours, floor, effective_debounce(debounce))
    if peer is None:
        return
    texts: dict[str, str] = {}
    peer_argv = ["node", str(peer), "--stdio"]
    client = Client(peer_argv, peer_answers(root, texts))
    try:
        theirs = drive(client, root, topic, edits, True, texts)
    finally:
        client.close()
    starts = [theirs.initialize, *startups(peer_argv, peer_answers(root, {}), root, repeat - 1)]
    theirs.initialize = statistics.median(starts)
    report("vscode-markdown-languageserver (links only)", theirs, None, None)
    print(
        f"  ratios memdir / peer: first diagnostics {ours.first / theirs.first:.2f}, "
        f"every finding {ours.complete / theirs.complete:.2f}, "
        f"edit p50 {pct(ours.edits, 0.5) / pct(theirs.edits, 0.5):.2f}, "
        f"topic edit p50 {pct(ours.topic_edits, 0.5) / pct(theirs.topic_edits, 0.5):.2f}, "
        f"RSS {ours.rss / theirs.rss:.2f}"
    )


def effective_debounce(debounce: float | None) -> float:
    if debounce is not None:
        return debounce
    from memdir_lsp.settings import DEFAULT_DEBOUNCE_MS

    return DEFAULT_DEBOUNCE_MS / 1000


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[2000, 20000])
    parser.add_argument("--edits", type=int, default=20, help="edits of each file (default 20)")
    parser.add_argument(
        "--repeat", type=int, default=5, help="runs of the import floor and of each start"
    )
    parser.add_argument(
        "--no-peer", action="store_true", help="skip vscode-markdown-languageserver"
    )
    parser.add_argument(
        "--debounce-ms",
        type=int,
        help="memdir.diagnostics.debounce for the run (default: its default)",
    )
    args = parser.parse_args(argv)
    peer = ensure_peer(args.no_peer)
    debounce = args.debounce_ms / 1000 if args.debounce_ms is not None else None
    floor = import_floor(args.repeat)
    print(f"import floor (python -c '{IMPORT_FLOOR}'): {floor * 1000:.0f} ms")
    for files in args.sizes:
        bench_size(files, args.edits, peer, floor, debounce, args.repeat)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
