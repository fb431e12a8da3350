"""``memdir mcp`` over stdio answers every request, and never dies on a reply.

A JSON string may hold an escaped lone surrogate (``"\\ud800"``); the SDK's strict parser
rejects the line and its stdio transport dropped it, so the client waited for ever (5 of 5).
A file name that is not UTF-8 decodes to lone surrogates, and the SDK's stdout writer could not
encode a reply naming it: the server died on ``view /memories``. Raw JSON-RPC lines here, as a
hostile client writes them.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from memhelpers import McpStdio, mcp_stdio

TOPIC = "---\nname: deploy\ndescription: how deploys work\ntype: project\n---\nStaging first.\n"
#: Guards against a hang only: every answer comes at once.
DEADLINE = 30.0


@pytest.fixture(scope="module")
def stdio(tmp_path_factory: pytest.TempPathFactory) -> Iterator[McpStdio]:
    """One server for the module: each test must leave it serving anyway."""
    root = tmp_path_factory.mktemp("sec-mcp-stdio") / "memory"
    root.mkdir()
    (root / "MEMORY.md").write_text("- [Deploy](deploy.md) — how\n")
    (root / "deploy.md").write_text(TOPIC)
    (root / "memdir.toml").write_text('selector = "lexical"\n')
    # A memory whose name is not UTF-8 (Latin-1 "é"), as another tool may have written it.
    (root / "caf\udce9.md").write_text(TOPIC)
    with mcp_stdio(root, DEADLINE) as server:
        assert "result" in server.initialize()
        yield server


def call(request_id: int, tool: str, arguments: str) -> str:
    """A tools/call line with ``arguments`` as raw JSON text (escapes kept as written)."""
    return (
        f'{{"jsonrpc":"2.0","id":{request_id},"method":"tools/call",'
        f'"params":{{"name":"{tool}","arguments":{arguments}}}}}'
    )


def tools_answer(server: McpStdio, request_id: int) -> None:
    """The server is still up and serving."""
    answer = server.ask_line(f'{{"jsonrpc":"2.0","id":{request_id},"method":"tools/list"}}')
    assert answer["id"] == request_id
    assert {t["name"] for t in answer["result"]["tools"]} >= {"memory", "memory_recall"}


LONE = [
    ("memory_search", '{"pattern":"\\ud800"}', "params.arguments.pattern"),
    ("memory_recall", '{"query":"deploys to staging \\udfff now"}', "params.arguments.query"),
    (
        "memory",
        '{"command":"create","path":"/memories/x.md","file_text":"a\\ud83d b"}',
        "params.arguments.file_text",
    ),
    ("memory", '{"command":"view","path":"/memories/\\udce9.md"}', "params.arguments.path"),
    ("memory_lint", '{"directory":"\\ud800"}', "params.arguments.directory"),
    ("memory_index", '{"\\ud800":"x"}', "params.arguments.\ufffd"),
]


def test_a_lone_surrogate_in_arguments_is_an_error_naming_it(stdio: McpStdio) -> None:
    for n, (tool, arguments, where) in enumerate(LONE, start=1):
        answer = stdio.ask_line(call(n, tool, arguments))
        assert answer["id"] == n, answer
        assert answer["error"]["code"] == -32602
        message = answer["error"]["message"]
        assert message.startswith(f"Invalid params: `{where}` holds a lone surrogate (\\u"), message
        tools_answer(stdio, 100 + n)


def test_a_valid_pair_is_text(stdio: McpStdio) -> None:
    answer = stdio.ask_line(call(1, "memory_search", '{"pattern":"\\ud83d\\ude00"}'))
    assert answer["result"]["content"][0]["text"] == "No matches."


def test_lines_that_are_not_requests_are_answered(stdio: McpStdio) -> None:
    garbage = stdio.ask_line("this is not json")
    assert garbage["id"] is None and garbage["error"]["code"] == -32700
    shape = stdio.ask_line('{"jsonrpc":"2.0","id":7,"method":"tools/call","params":5}')
    assert shape["id"] == 7 and shape["error"]["code"] == -32600
    assert "`params`" in shape["error"]["message"]
    # A notification gets no answer, even a broken one: the next answer is the next request's.
    stdio.write('{"jsonrpc":"2.0","method":"notifications/x","params":{"a":"\\ud800"}}')
    stdio.write('{"jsonrpc":"2.0","method":"notifications/x","params":5}')
    tools_answer(stdio, 8)


def test_a_file_name_that_is_not_utf8_is_listed_and_read(stdio: McpStdio) -> None:
    view = stdio.ask_line(call(1, "memory", '{"command":"view","path":"/memories"}'))
    assert "/memories/caf\ufffd.md" in view["result"]["content"][0]["text"]
    listed = stdio.ask_line('{"jsonrpc":"2.0","id":2,"method":"resources/list"}')
    assert "memdir://memory/caf\ufffd.md" in {r["uri"] for r in listed["result"]["resources"]}
    found = stdio.ask_line(call(3, "memory_search", '{"pattern":"Staging"}'))
    assert "caf\ufffd.md:6:1: Staging first." in found["result"]["content"][0]["text"]
    tools_answer(stdio, 4)


def test_arguments_nested_too_deep_are_answered(stdio: McpStdio) -> None:
    for n, depth in enumerate((300, 100_000), start=1):
        answer = stdio.ask_line(
            call(n, "memory_lint", '{"directory":' + "[" * depth + "]" * depth + "}")
        )
        assert "recursion limit exceeded" in answer["error"]["message"]
        assert answer["id"] == (n if depth == 300 else None)  # past Python's own limit: unread
        tools_answer(stdio, 100 + n)
