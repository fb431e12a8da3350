"""Fuzz ``memdir mcp``'s tool arguments, in process with the SDK's own client.

Properties: every call is answered (a result, an error result, or a JSON-RPC error that is not
InternalError); no tool crashes on bad arguments (the SDK's bare "Error executing tool X" is
its crash answer); no answer carries a traceback or an install path; and the server keeps
serving (a valid call after each example answers).
"""

from __future__ import annotations

import asyncio
import json
import sys
from typing import Any

import pytest
from fuzz.strategies import FUZZ, HOSTILE_STRINGS, json_values, mutated, schema_object, strings
from hypothesis import given
from hypothesis import strategies as st
from mcp import Client, MCPError
from mcp.types import CallToolResult, TextContent
from memdir.faces.mcp_server import build_server
from memhelpers import write_files

INDEX = "# Memory index\n\n- [Deploy](deploy.md) — staging first\n"
TOPIC = "---\nname: deploy\ndescription: how deploys reach staging\ntype: project\n---\nBody.\n"
TOOLS = ("memory", "memory_recall", "memory_search", "memory_lint", "memory_index")
#: The memory dir both fuzzers serve (the offline selector: recall the same everywhere).
FILES: dict[str, str | bytes] = {
    "MEMORY.md": INDEX,
    "deploy.md": TOPIC,
    "memdir.toml": 'selector = "lexical"\n',
}

#: Paths for the memory tool: its namespace with hostile names (none leaves the test's dir).
TOOL_PATHS = st.one_of(
    st.sampled_from(["/memories", "/memories/deploy.md", "/memories/MEMORY.md", "/memories/n.md"]),
    st.sampled_from(HOSTILE_STRINGS).map(lambda s: "/memories/" + s),
    strings,
)


@st.composite
def arguments(draw: st.DrawFn, schema: dict[str, Any]) -> Any:
    args = draw(
        schema_object(schema, lambda name: TOOL_PATHS if name.endswith("path") else strings)
    )
    drawn = draw(mutated(args, json_values))
    # The SDK's client sends only an object; anything else becomes an unknown argument.
    return drawn if isinstance(drawn, dict) else {"unknown": drawn}


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> tuple[Any, dict[str, Any]]:
    memory = tmp_path_factory.mktemp("fuzz-mcp") / "memory"
    write_files(memory, FILES)
    server = build_server(memory)

    async def schemas() -> dict[str, Any]:
        async with Client(server) as client:
            return {t.name: t.input_schema for t in (await client.list_tools()).tools}

    return server, asyncio.run(schemas())


def test_every_tool_is_fuzzed(world: tuple[Any, dict[str, Any]]) -> None:
    assert set(world[1]) == set(TOOLS)


def text_of(result: CallToolResult) -> str:
    return "".join(b.text for b in result.content if isinstance(b, TextContent))


@pytest.mark.parametrize("tool", TOOLS)
@FUZZ
@given(data=st.data())
def test_every_call_is_answered_and_the_server_keeps_serving(
    world: tuple[Any, dict[str, Any]], data: st.DataObject, tool: str
) -> None:
    server, schemas = world
    args = data.draw(arguments(schemas[tool]), label="arguments")
    said = f"{tool} {json.dumps(args)[:300]}"

    async def call() -> tuple[CallToolResult | MCPError, CallToolResult]:
        async with Client(server) as client:
            try:
                answer: CallToolResult | MCPError = await client.call_tool(tool, args)
            except MCPError as exc:
                answer = exc
            return answer, await client.call_tool("memory_index", {})

    answer, after = asyncio.run(call())
    if isinstance(answer, MCPError):
        assert answer.error.code != -32603, f"{said} -> {answer.error}"
        text = answer.error.message
    else:
        text = text_of(answer)
        assert text != f"Error executing tool {tool}", f"{said}: the tool crashed"
    assert "Traceback" not in text and "site-packages" not in text, f"{said} -> {text[:500]}"
    assert sys.prefix not in text, f"{said} -> {text[:500]}"
    assert not after.is_error, text_of(after)


@pytest.mark.parametrize("directory", ["x\x00y", "\ud800", "/" + "a" * 300 + "/b"])
def test_a_directory_the_file_system_refuses_is_named(
    world: tuple[Any, dict[str, Any]], directory: str
) -> None:
    async def call() -> CallToolResult:
        async with Client(world[0]) as client:
            return await client.call_tool("memory_index", {"directory": directory})

    result = asyncio.run(call())
    assert result.is_error and "`directory`" in text_of(result), text_of(result)
