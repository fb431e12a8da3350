"""One search, every face, one numbering: lines and columns count from 1 wherever people (and
models) read them; only the ``memory/*`` protocol counts from 0, as LSP positions do.

The same search runs through ``memdir search --json``, the MCP tool (its text and its structured
content, which is what Claude Code shows the model) and the language server's ``memory/search``;
the memory tool's ``view`` of the line found must show that very line.
"""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from lsp_helpers import Workspace, request
from mcp import Client
from mcp.types import TextContent
from memdir.faces.cli import main
from memdir.faces.mcp_server import build_server
from pytest_lsp import LanguageClient

#: Alternation: the pattern runs in the search's child process, as a model's patterns often do.
PATTERN = "backend|90 天"
GREP_LINE = re.compile(r"^(?P<path>[^:]+):(?P<line>\d+):(?P<column>\d+): (?P<text>.*)$")

Match = tuple[str, int, int, str]


def _text(result: Any) -> str:
    [block] = result.content
    assert isinstance(block, TextContent)
    return block.text


async def test_search_counts_lines_alike_in_the_cli_mcp_and_the_server(
    client: LanguageClient, workspace: Workspace, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["search", PATTERN, "--dir", str(workspace.root), "--json"]) == 0
    cli: list[Match] = [
        (m["path"], m["line"], m["character"], m["text"])
        for m in json.loads(capsys.readouterr().out)["matches"]
    ]

    async with Client(build_server(workspace.root)) as mcp:
        found = await mcp.call_tool("memory_search", {"pattern": PATTERN})
        assert found.structured_content is not None
        structured: list[Match] = [
            (m["path"], m["line"], m["character"], m["text"])
            for m in found.structured_content["matches"]
        ]
        text: list[Match] = []
        for line in _text(found).splitlines():
            parsed = GREP_LINE.match(line)
            assert parsed is not None, line
            numbers = int(parsed["line"]), int(parsed["column"])
            text.append((parsed["path"], *numbers, parsed["text"]))
        # The memory tool's view numbers lines as the search does.
        path, number, _, line_text = cli[0]
        viewed = await mcp.call_tool(
            "memory",
            {"command": "view", "path": f"/memories/{path}", "view_range": [number, number]},
        )
        assert _text(viewed).splitlines()[-1] == f"{number:6d}\t{line_text}"

    searched = await request(client, "memory/search", {"pattern": PATTERN})
    # LSP counts from 0: the server's positions are one less than what people are shown.
    server: list[Match] = [
        (m["path"], m["line"] + 1, m["character"] + 1, m["text"]) for m in searched["matches"]
    ]

    # MEMORY.md's fourth and fifth lines, then the topic files' descriptions (line 3).
    assert cli == [
        (
            "MEMORY.md",
            4,
            32,
            "- [Ana's role](user-role.md) — backend engineer new to React; explain UI in "
            "backend terms",
        ),
        ("MEMORY.md", 5, 41, "- [数据保留策略](data-retention.md) — 行为日志只保留 90 天"),
        ("data-retention.md", 3, 22, "description: 行为日志只保留 90 天，新表要配清理任务"),
        (
            "user-role.md",
            3,
            23,
            "description: Ana is a backend engineer (Go, Postgres) new to React",
        ),
    ]
    assert structured == cli
    assert text == cli
    assert server == cli
