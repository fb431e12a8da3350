"""``memdir-lsp`` on the raw wire: messages clients really send, and what lands on stderr.

pytest-lsp always sends well-formed params; Neovim does not: ``nil`` params leave the field
out, ``{}`` goes out as ``[]``. Clients also file the server's stderr in their log (Neovim as
errors), so a routine session, refused requests included, must write nothing there.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from lsp_helpers import start_wire

Answers = dict[str, dict[str, Any]]


async def session(tmp_path: Path, *args: str) -> tuple[Answers, list[dict[str, Any]], str]:
    """One session of odd but legal (and some refused) messages.

    Returns the answers by name, the server's notifications, and its stderr.
    """
    memory = tmp_path / "memory"
    wire = await start_wire(tmp_path, *args, stderr=asyncio.subprocess.PIPE, timeout=10)
    proc = wire.proc
    answers: Answers = {"initialize": await wire.initialize(memory)}
    answers["index without params"] = await wire.request("memory/index")
    answers["index with null"] = await wire.request("memory/index", params=None)
    answers["index with []"] = await wire.request("memory/index", params=[])
    answers["status without params"] = await wire.request("memdir/status")
    answers["read without path"] = await wire.request("memory/read", params={})
    answers["hover without params"] = await wire.request("textDocument/hover")
    answers["hover with a bad position"] = await wire.request(
        "textDocument/hover",
        params={"textDocument": {"uri": memory.joinpath("MEMORY.md").as_uri()}, "position": 3},
    )
    answers["unknown method"] = await wire.request("memory/nothingHere", params={})
    wire.notify("$/cancelRequest", params={"id": 1})  # long answered: routine
    wire.notify("memory/compacted")  # no params: a warning to the client, not a crash
    answers["still alive"] = await wire.request("memory/index", params={})
    answers["shutdown"] = await wire.request("shutdown")
    wire.notify("exit")
    assert proc.stderr is not None
    stderr = (await asyncio.wait_for(proc.stderr.read(), 10)).decode()
    assert await asyncio.wait_for(proc.wait(), 10) == 0, stderr
    return answers, wire.notifications, stderr


async def test_requests_without_params_and_refused_requests(tmp_path: Path) -> None:
    answers, notifications, stderr = await session(tmp_path)
    memory = str(tmp_path / "memory")
    for name in ("index without params", "index with null", "index with []", "still alive"):
        assert answers[name]["result"]["directory"] == memory, answers[name]
    assert answers["status without params"]["result"]["directories"][0]["path"] == memory

    def error(name: str) -> tuple[int, str]:
        return answers[name]["error"]["code"], answers[name]["error"]["message"]

    assert error("read without path") == (-32602, "`path` is required")
    code, message = error("hover without params")
    assert code == -32602 and message.startswith("invalid params for textDocument/hover")
    code, message = error("hover with a bad position")
    assert code == -32602 and "position" in message
    assert error("unknown method")[0] == -32601
    assert "result" in answers["shutdown"]

    # Nothing on stderr: no traceback, no routine INFO line that a client would file as an error.
    assert stderr == ""
    # The client's log has each refusal once, as information.
    logged = [
        (n["params"]["type"], n["params"]["message"].split(":")[0])
        for n in notifications
        if n["method"] == "window/logMessage" and "refused" in n["params"]["message"]
    ]
    assert logged == [(3, "request refused")] * 4


async def test_verbose_log_has_one_line_per_refused_request(tmp_path: Path) -> None:
    _answers, _notifications, stderr = await session(tmp_path, "-v")
    assert "Traceback" not in stderr
    refused = [line for line in stderr.splitlines() if "request refused" in line]
    # memory/read, the two hovers and the unknown method: one line each, at INFO.
    assert len(refused) == 4, stderr
    assert all(" INFO " in line for line in refused)
    assert " ERROR " not in stderr


async def test_exit_during_the_first_check_ends_the_server(tmp_path: Path) -> None:
    """An editor that closes while the directory's first check may still run, with an edit
    pending: the server exits, code 0, whatever it still had to send. (A send that fails is
    logged, not reported to the client without end: test_logging.py.)"""
    wire = await start_wire(tmp_path, stderr=asyncio.subprocess.PIPE, timeout=30)
    memory = tmp_path / "memory"
    for n in range(1500):
        (memory / f"note-{n}.md").write_text(
            f"---\nname: note {n}\ndescription: note number {n}\ntype: user\n---\nBody {n}.\n",
            encoding="utf-8",
        )
    await wire.initialize(memory)
    index = memory / "MEMORY.md"
    uri = index.as_uri()
    text = index.read_text(encoding="utf-8")
    wire.notify(
        "textDocument/didOpen",
        params={"textDocument": {"uri": uri, "languageId": "markdown", "version": 1, "text": text}},
    )
    wire.notify(
        "textDocument/didChange",
        params={
            "textDocument": {"uri": uri, "version": 2},
            "contentChanges": [{"text": text + "- [Gone](gone.md) — not written\n"}],
        },
    )
    await wire.request("shutdown")
    wire.notify("exit")
    assert wire.proc.stdin is not None
    wire.proc.stdin.close()
    assert wire.proc.stdout is not None
    await asyncio.wait_for(wire.proc.stdout.read(), 60)  # whatever it sent before it ended
    assert await asyncio.wait_for(wire.proc.wait(), 60) == 0
