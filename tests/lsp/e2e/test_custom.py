"""The memory/* protocol: index, manifest, list, read, search, recall, prefetch, sessions."""

from __future__ import annotations

from typing import Any

import pytest
from lsp_helpers import INDEX, Workspace, check_schema, request
from memdir_lsp.memory_protocol.converter import plain
from pygls.exceptions import JsonRpcInvalidParams
from pytest_lsp import LanguageClient


async def test_index_is_the_path_a_text(client: LanguageClient, workspace: Workspace) -> None:
    result = await request(client, "memory/index", {"directory": workspace.uri})
    assert result["text"] == INDEX.strip()
    assert result["lines"] == 9 and result["maxLines"] == 200
    assert result["truncated"] is False and result["cutEntries"] == []
    assert result["entries"] == 4


async def test_index_reports_cut_entries(client: LanguageClient, workspace: Workspace) -> None:
    lines = [f"- [Entry {n}](e{n}.md) — hook {n}" for n in range(205)]
    workspace.path("MEMORY.md").write_text("\n".join(lines) + "\n")
    result = await request(client, "memory/index", {})
    assert result["truncated"] is True
    assert result["loadedLines"] == 200
    assert [e["path"] for e in result["cutEntries"]] == [f"e{n}.md" for n in range(200, 205)]
    assert "WARNING: MEMORY.md is 205 lines" in result["text"]


async def test_manifest_and_list(client: LanguageClient, workspace: Workspace) -> None:
    manifest = await request(client, "memory/manifest", {})
    # Newest first: the fixture gives later files later mtimes.
    assert [c["path"] for c in manifest["candidates"]] == [
        "orphan.md",
        "data-retention.md",
        "user-role.md",
        "release-freeze.md",
    ]
    assert manifest["manifest"].splitlines()[0] == (
        "- [project] orphan.md (2023-11-14T22:17:20.000Z): "
        "oncall escalation goes through PagerDuty core-platform"
    )
    listing = await request(client, "memory/list", {})
    by_path = {m["path"]: m for m in listing["memories"]}
    assert by_path["orphan.md"]["visibility"]["inIndex"] is False
    assert by_path["orphan.md"]["visibility"]["index"] == "missing"
    assert by_path["user-role.md"]["visibility"]["index"] == "loaded"
    assert by_path["user-role.md"]["visibility"]["inWindow"] is True
    assert by_path["user-role.md"]["visibility"]["injection"] == "whole"
    assert by_path["user-role.md"]["type"] == "user"


async def test_read_is_what_path_b_injects(client: LanguageClient, workspace: Workspace) -> None:
    workspace.path("big.md").write_text(
        "---\nname: big\ndescription: d\ntype: project\n---\n" + "x" * 5000 + "\n"
    )
    small = await request(client, "memory/read", {"path": "user-role.md"})
    assert small["truncated"] is False
    # The default target, Claude Code 2.1.328: an old memory's staleness note, then the header.
    assert small["text"].startswith("This memory is ")
    assert f"\n\nMemory: {workspace.path('user-role.md')}:\n\n" in small["text"]
    big = await request(client, "memory/read", {"path": "big.md"})
    assert big["truncated"] is True and big["bytes"] <= 4096
    assert "This memory file was truncated" in big["text"]


@pytest.mark.parametrize(
    ("method", "params", "message"),
    [
        ("memory/read", {"path": "../outside.md"}, "outside the memory directory"),
        ("memory/read", {"path": "/etc/passwd"}, "outside the memory directory"),
        ("memory/read", {}, "`path` is required"),
        ("memory/read", {"path": 3}, "`path` must be a string"),
        ("memory/read", {"path": "MEMORY.md"}, "MEMORY.md is the index"),
        ("memory/read", {"path": "nope.md"}, "no such memory"),
        ("memory/search", {"pattern": "("}, "not a valid regular expression"),
        ("memory/recall", {"query": 42}, "`query` must be a string"),
        ("memory/prefetch", {"query": "how do deploys work"}, "`sessionId` is required"),
        ("memory/index", {"directory": "file:///nowhere"}, "not a known memory directory"),
        ("memory/index", {"directory": "https://x"}, "must be a file URI"),
        ("memory/list", [1, 2], "params must be an object"),
        ("memory/search", {"pattern": "x", "glob": "[z-a]x]"}, "`glob`"),
        ("memory/recall", {"query": "q", "recentTools": "Bash"}, "`recentTools` must be an array"),
        ("memory/tool", {"command": "explode"}, "`command` must be one of"),
    ],
)
async def test_bad_params_are_invalid_params_errors(
    client: LanguageClient, workspace: Workspace, method: str, params: Any, message: str
) -> None:
    with pytest.raises(JsonRpcInvalidParams) as raised:
        await client.protocol.send_request_async(method, params)
    assert message in raised.value.message
    # The server is still alive and answering.
    assert (await request(client, "memory/index", {}))["entries"] == 4


@pytest.mark.parametrize("params", [None, []])
async def test_requests_without_params_take_none_or_an_empty_array(
    client: LanguageClient, workspace: Workspace, params: Any
) -> None:
    """Neovim sends ``[]`` for an empty table (``vim.empty_dict()`` aside)."""
    assert (await request(client, "memory/index", params))["entries"] == 4
    assert (await request(client, "memdir/status", params))["directories"]


async def test_search(client: LanguageClient, workspace: Workspace) -> None:
    result = await request(client, "memory/search", {"pattern": "backend"})
    found = {(m["path"], m["line"]) for m in result["matches"]}
    assert found == {("MEMORY.md", 3), ("user-role.md", 2)}
    only_topics = await request(
        client, "memory/search", {"pattern": "BACKEND", "glob": "user-*.md", "ignoreCase": True}
    )
    assert [m["path"] for m in only_topics["matches"]] == ["user-role.md"]


async def test_recall_selects_and_respects_the_session(
    client: LanguageClient, workspace: Workspace
) -> None:
    query = "who handles the pagerduty oncall escalation?"
    result = await request(client, "memory/recall", {"query": query, "sessionId": "s1"})
    assert result["triggered"] is True
    assert "orphan.md" in result["selectedMemories"]
    assert [s["path"] for s in result["surfaced"]] == result["selectedMemories"]
    assert result["budget"]["used"] > 0
    # Same session: already surfaced, so it does not surface again.
    again = await request(client, "memory/recall", {"query": query, "sessionId": "s1"})
    assert "orphan.md" not in [s["path"] for s in again["surfaced"]]
    # After compaction it may surface again.
    client.protocol.notify("memory/compacted", {"sessionId": "s1"})
    after = await request(client, "memory/recall", {"query": query, "sessionId": "s1"})
    assert "orphan.md" in [s["path"] for s in after["surfaced"]]
    # A one-word message does not trigger.
    quiet = await request(client, "memory/recall", {"query": "thanks"})
    assert quiet["triggered"] is False and quiet["surfaced"] == []


async def test_prefetch_answers_at_once_then_notifies(
    client: LanguageClient, workspace: Workspace
) -> None:
    notified = client.wait_for_notification("memory/relevantMemories")
    started = await request(
        client,
        "memory/prefetch",
        {"query": "who handles the pagerduty oncall escalation?", "sessionId": "chat-1"},
    )
    assert started["triggered"] is True and started["id"]
    payload = plain(await notified)
    check_schema("memory/relevantMemories", payload, "params")
    assert payload["id"] == started["id"]
    assert payload["sessionId"] == "chat-1"
    assert "orphan.md" in payload["selectedMemories"]
    surfaced = {s["path"]: s for s in payload["surfaced"]}
    assert set(surfaced["orphan.md"]) == {"path", "text", "bytes", "truncated", "truncationNote"}
    assert surfaced["orphan.md"]["truncationNote"] is None
    assert payload["budget"]["used"] == sum(s["bytes"] for s in payload["surfaced"])


async def test_did_read_files_never_surface(client: LanguageClient, workspace: Workspace) -> None:
    client.protocol.notify("memory/didRead", {"sessionId": "s2", "paths": ["orphan.md"]})
    # Bad notifications are logged, never fatal.
    client.protocol.notify("memory/didRead", {"sessionId": 5})
    client.protocol.notify("memory/didRead", {"sessionId": "s2", "paths": ["../../etc/x.md"]})
    result = await request(
        client,
        "memory/recall",
        {"query": "who handles the pagerduty oncall escalation?", "sessionId": "s2"},
    )
    assert "orphan.md" not in result["selectedMemories"]
    status = await request(client, "memdir/status", {"sessionId": "s2"})
    session = status["directories"][0]["session"]
    assert session["read"] == [str(workspace.path("orphan.md").resolve())]
    warnings = [m.message for m in client.log_messages if "memory/didRead" in m.message]
    assert any("`sessionId` must be a string" in w for w in warnings)
    assert any("outside the memory directory" in w for w in warnings)


async def test_prefetch_not_triggered_for_single_word(
    client: LanguageClient, workspace: Workspace
) -> None:
    result = await request(client, "memory/prefetch", {"query": "ok", "sessionId": "s3"})
    assert result["triggered"] is False and result["reason"]
