"""Fuzz ``memdir mcp`` over stdio with the same hostile arguments, as JSON lines on the wire.

``test_mcp_args`` calls the server in process, where a lone surrogate is just a Python string;
on the wire ``json.dumps`` writes it as an escape (``"\\ud800"``) that the SDK's strict parser
rejects, and the SDK's stdio reader used to drop the line: the request was never answered.
Properties: every request is answered, with its id, and the server keeps serving.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from fuzz.strategies import FUZZ
from fuzz.test_mcp_args import FILES, TOOLS, arguments
from hypothesis import given
from hypothesis import strategies as st
from memhelpers import McpStdio, mcp_stdio, write_files


@pytest.fixture(scope="module")
def wire(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[McpStdio, dict[str, Any]]]:
    memory = tmp_path_factory.mktemp("fuzz-mcp-stdio") / "memory"
    write_files(memory, FILES)
    with mcp_stdio(memory) as server:
        server.initialize("fuzz")
        _, listed = server.ask("tools/list", {})
        yield server, {t["name"]: t["inputSchema"] for t in listed["result"]["tools"]}


@pytest.mark.parametrize("tool", TOOLS)
@FUZZ
@given(data=st.data())
def test_every_request_on_the_wire_is_answered(
    wire: tuple[McpStdio, dict[str, Any]], data: st.DataObject, tool: str
) -> None:
    server, schemas = wire
    args = data.draw(arguments(schemas[tool]), label="arguments")
    request_id, answer = server.ask("tools/call", {"name": tool, "arguments": args})
    assert answer["id"] == request_id, answer
    assert "result" in answer or answer["error"]["code"] != -32603, answer
    after_id, after = server.ask("tools/call", {"name": "memory_index", "arguments": {}})
    assert after["id"] == after_id and not after["result"]["isError"], after
