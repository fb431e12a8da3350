"""``memory/search`` with a catastrophic pattern: a clear error, and the server answers meanwhile.

Python's ``re`` holds the GIL while it backtracks, so a search run in a thread of the server used
to stop every other request for minutes. The pattern below runs for minutes on the rule line.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from lsp_helpers import Workspace, request
from pygls.exceptions import JsonRpcInvalidParams
from pytest_lsp import LanguageClient

RULE = "-" * 32


async def test_a_slow_search_leaves_the_server_answering(
    client: LanguageClient, workspace: Workspace
) -> None:
    workspace.path("rules.md").write_text(
        f"---\nname: rules\ndescription: d\ntype: project\n---\nIntro\n{RULE}\nMore\n"
    )
    answered: list[str] = []

    async def timed(name: str, method: str, params: Any) -> Any:
        try:
            return await client.protocol.send_request_async(method, params)
        finally:
            answered.append(name)

    search = asyncio.ensure_future(timed("search", "memory/search", {"pattern": "(-+)+x"}))
    index = await timed("index", "memory/index", {})
    assert index.entries == 4
    with pytest.raises(JsonRpcInvalidParams) as raised:
        await search
    assert answered == ["index", "search"]
    assert raised.value.message == (
        "`pattern`: the pattern took longer than 2 s on rules.md; simplify it or search literally"
    )
    # The same server still searches (a pattern that can backtrack, so in the child again).
    found = await request(client, "memory/search", {"pattern": "^-{5,}$"})
    assert [(m["path"], m["line"]) for m in found["matches"]] == [("rules.md", 6)]


@pytest.mark.parametrize(
    ("pattern", "message"),
    [
        ("a{99999999999}", "a repetition count is too large"),
        ("(" * 5000 + ")" * 5000, "the pattern nests too deeply"),
    ],
)
async def test_patterns_that_cannot_compile_are_invalid_params(
    client: LanguageClient, workspace: Workspace, pattern: str, message: str
) -> None:
    with pytest.raises(JsonRpcInvalidParams) as raised:
        await client.protocol.send_request_async("memory/search", {"pattern": pattern})
    assert raised.value.message == f"`pattern` is not a valid regular expression: {message}"
