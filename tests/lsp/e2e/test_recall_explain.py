"""``explain`` on memory/recall and memory/prefetch: the same explanations as the CLI's."""

from __future__ import annotations

from lsp_helpers import Workspace, check_schema, request
from memdir.agent.scan import scan
from memdir.recall.explain import explain_recall
from memdir.recall.prefetch import prefetch
from memdir.recall.select import LexicalSelector
from memdir.recall.surface import Session
from memdir_lsp.memory_protocol.converter import plain
from pytest_lsp import LanguageClient

QUERY = "who handles the pagerduty oncall escalation?"


async def test_recall_explains_each_file(client: LanguageClient, workspace: Workspace) -> None:
    result = await request(
        client,
        "memory/recall",
        {"query": QUERY, "explain": ["orphan.md", workspace.uri_of("user-role.md"), "MEMORY.md"]},
    )
    check_schema("memory/recall", result, "result")
    chosen, other, index = result["explanations"]
    assert chosen["path"] == "orphan.md" and chosen["verdict"] == "surfaced"
    assert other["path"] == "user-role.md" and other["verdict"] == "not-selected"
    assert index["verdict"] == "not-a-candidate" and index["lexical"] is None
    # The same text the CLI prints, from the same engine call.
    local = await prefetch(QUERY, workspace.root, Session(), selector=LexicalSelector())
    (expected,) = explain_recall(local, scan(workspace.root), ["user-role.md"])
    assert other["lines"] == list(expected.lines)
    assert other["lexical"]["score"] == expected.lexical.score  # type: ignore[union-attr]
    assert set(other) >= {"hasDescription", "suggestionSelects"}


async def test_recall_without_explain_has_none(
    client: LanguageClient, workspace: Workspace
) -> None:
    result = await request(client, "memory/recall", {"query": QUERY})
    assert result["explanations"] == []


async def test_prefetch_delivers_explanations(client: LanguageClient, workspace: Workspace) -> None:
    notified = client.wait_for_notification("memory/relevantMemories")
    await request(
        client,
        "memory/prefetch",
        {"query": QUERY, "sessionId": "explain-1", "explain": ["orphan.md", "user-role.md"]},
    )
    payload = plain(await notified)
    check_schema("memory/relevantMemories", payload, "params")
    verdicts = {e["path"]: e["verdict"] for e in payload["explanations"]}
    assert verdicts == {"orphan.md": "surfaced", "user-role.md": "not-selected"}
