"""memdir.memory_tool: the API memory tool over a memdir, with the API's exact strings.

The reference for "exact" is the anthropic SDK's own local-filesystem memory tool: the same
command sequence runs on both and must print the same text, except where memdir deliberately
differs (stricter paths, index maintenance and ``modified`` stamps, which the side-by-side run
switches off by using prefetch mode and files without frontmatter).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from anthropic.tools.memory import BetaLocalFilesystemMemoryTool
from memdir.config import Settings
from memdir.memory_tool import InvalidCommandError, MemdirMemoryTool, ToolResult, parse_command

PREFETCH = Settings(recall_mode="prefetch")

SEQUENCE: list[dict[str, Any]] = [
    {"command": "view", "path": "/memories"},
    {"command": "create", "path": "/memories/notes.md", "file_text": "one\ntwo\nthree\n"},
    {"command": "create", "path": "/memories/notes.md", "file_text": "again\n"},
    {"command": "create", "path": "/memories/team/ana.md", "file_text": "Ana\n"},
    {"command": "view", "path": "/memories"},
    {"command": "view", "path": "/memories/notes.md"},
    {"command": "view", "path": "/memories/notes.md", "view_range": [2, -1]},
    {"command": "view", "path": "/memories/missing.md"},
    {"command": "str_replace", "path": "/memories/notes.md", "old_str": "two", "new_str": "2"},
    {"command": "str_replace", "path": "/memories/notes.md", "old_str": "zzz", "new_str": "y"},
    {"command": "str_replace", "path": "/memories/notes.md", "old_str": "e", "new_str": "E"},
    {"command": "str_replace", "path": "/memories/missing.md", "old_str": "a", "new_str": "b"},
    {"command": "str_replace", "path": "/memories/team", "old_str": "a", "new_str": "b"},
    {"command": "insert", "path": "/memories/notes.md", "insert_line": 0, "insert_text": "zero"},
    {"command": "insert", "path": "/memories/notes.md", "insert_line": 4, "insert_text": "four\n"},
    {"command": "insert", "path": "/memories/notes.md", "insert_line": 42, "insert_text": "x"},
    {"command": "insert", "path": "/memories/missing.md", "insert_line": 0, "insert_text": "x"},
    {"command": "view", "path": "/memories/notes.md"},
    {"command": "rename", "old_path": "/memories/notes.md", "new_path": "/memories/team/ana.md"},
    {"command": "rename", "old_path": "/memories/missing.md", "new_path": "/memories/x.md"},
    {"command": "rename", "old_path": "/memories", "new_path": "/memories/x"},
    {"command": "rename", "old_path": "/memories/notes.md", "new_path": "/memories/old/n.md"},
    {"command": "delete", "path": "/memories"},
    {"command": "delete", "path": "/memories/missing.md"},
    {"command": "delete", "path": "/memories/old"},
    {"command": "view", "path": "/memories"},
    {"command": "view", "path": "/etc/passwd"},
    {"command": "view", "path": "/memories/../secret.md"},
    {"command": "create", "path": "/memories/../escape.md", "file_text": "x"},
    {"command": "delete", "path": "/memories/team/../../x"},
]


def sdk_result(tool: BetaLocalFilesystemMemoryTool, command: dict[str, Any]) -> ToolResult:
    from anthropic.lib.tools import ToolError

    try:
        text = tool.call(command)
    except ToolError as exc:
        return ToolResult(str(exc.content), is_error=True)
    assert isinstance(text, str)
    return ToolResult(text)


def test_same_strings_as_the_sdk_tool(tmp_path: Path) -> None:
    reference = BetaLocalFilesystemMemoryTool(str(tmp_path / "sdk"))
    memory = tmp_path / "memdir"
    memory.mkdir()
    ours = MemdirMemoryTool(memory, settings=PREFETCH)
    for command in SEQUENCE:
        expected = sdk_result(reference, command)
        assert ours.run(command) == expected, command
    # Same tree on both sides (memdir's lock and journal are not in the memory dir).
    sdk_files = sorted(
        p.relative_to(tmp_path / "sdk" / "memories")
        for p in (tmp_path / "sdk" / "memories").rglob("*")
    )
    our_files = sorted(p.relative_to(memory) for p in memory.rglob("*"))
    assert our_files == sdk_files


def test_the_api_strings_verbatim(tmp_path: Path) -> None:
    tool = MemdirMemoryTool(tmp_path, settings=PREFETCH)
    run = tool.run
    assert run(
        {"command": "create", "path": "/memories/a.md", "file_text": "x\ny\n"}
    ) == ToolResult("File created successfully at: /memories/a.md")
    assert run({"command": "create", "path": "/memories/a.md", "file_text": ""}) == ToolResult(
        "File /memories/a.md already exists", True
    )
    assert run({"command": "view", "path": "/memories/a.md"}).text == (
        "Here's the content of /memories/a.md with line numbers:\n     1\tx\n     2\ty\n     3\t"
    )
    assert run(
        {"command": "str_replace", "path": "/memories/a.md", "old_str": "y", "new_str": "z"}
    ) == (
        ToolResult(
            "The memory file has been edited. Here is the snippet showing the change (with line "
            "numbers):\n     1\tx\n     2\tz\n     3\t"
        )
    )
    assert run(
        {"command": "insert", "path": "/memories/a.md", "insert_line": 1, "insert_text": "w"}
    ) == (ToolResult("The file /memories/a.md has been edited."))
    assert run(
        {"command": "rename", "old_path": "/memories/a.md", "new_path": "/memories/b.md"}
    ) == (ToolResult("Successfully renamed /memories/a.md to /memories/b.md"))
    assert run({"command": "delete", "path": "/memories/b.md"}) == ToolResult(
        "Successfully deleted /memories/b.md"
    )
    assert run({"command": "delete", "path": "/memories"}) == ToolResult(
        "Cannot delete the /memories directory itself", True
    )
    assert run({"command": "rename", "old_path": "/memories", "new_path": "/memories/x"}) == (
        ToolResult("Cannot rename the /memories directory itself", True)
    )
    assert run({"command": "view", "path": "/tmp"}) == ToolResult(
        "Path must start with /memories, got: /tmp", True
    )


@pytest.mark.parametrize(
    ("path", "message"),
    [
        ("/memories/../x.md", "Path /memories/../x.md would escape /memories directory"),
        ("/memories/%2e%2e/x.md", "Path /memories/%2e%2e/x.md would escape /memories directory"),
        (
            "/memories/%252e%252e/x.md",
            "Path /memories/%252e%252e/x.md would escape /memories directory",
        ),
        (
            "/memories/\uff0e\uff0e/x.md",
            "Path /memories/\uff0e\uff0e/x.md would escape /memories directory",
        ),
        ("/memories/a\u2215b.md", "Path /memories/a\u2215b.md would escape /memories directory"),
        ("/memories/out/x.md", "Path would escape /memories directory via symlink"),
        ("/memoriesx/a.md", "Path must start with /memories, got: /memoriesx/a.md"),
        ("/memories/a\x00.md", "Invalid path /memories/a\x00.md: it contains a NUL byte"),
        (
            "/memories/.memdir.lock",
            "Invalid path /memories/.memdir.lock: "
            "names starting with '.' are reserved for memdir (.memdir.lock)",
        ),
    ],
)
def test_hostile_paths_get_error_results(tmp_path: Path, path: str, message: str) -> None:
    memory = tmp_path / "memory"
    memory.mkdir()
    (tmp_path / "outside").mkdir()
    (memory / "out").symlink_to("../outside")
    tool = MemdirMemoryTool(memory, settings=PREFETCH)
    for command in (
        {"command": "create", "path": path, "file_text": "x"},
        {"command": "view", "path": path},
    ):
        assert tool.run(command) == ToolResult(message, is_error=True)
    assert list((tmp_path / "outside").iterdir()) == []
    assert tool.changes == []


def test_mutations_go_through_memdir_write(tmp_path: Path) -> None:
    tool = MemdirMemoryTool(tmp_path, settings=Settings())
    text = "---\nname: pnpm\ndescription: the user prefers pnpm over npm\ntype: user\n---\nBody\n"
    tool.run({"command": "create", "path": "/memories/pnpm.md", "file_text": text})
    assert (tmp_path / "MEMORY.md").read_text(encoding="utf-8") == (
        "- [Pnpm](pnpm.md) — the user prefers pnpm over npm\n"
    )
    tool.run(
        {"command": "str_replace", "path": "/memories/pnpm.md", "old_str": "Body", "new_str": "B"}
    )
    assert "modified: " in (tmp_path / "pnpm.md").read_text(encoding="utf-8")
    tool.run({"command": "delete", "path": "/memories/pnpm.md"})
    assert (tmp_path / "MEMORY.md").read_text(encoding="utf-8") == ""
    assert [(c.kind, c.path) for c in tool.changes] == [
        ("created", "pnpm.md"),
        ("created", "MEMORY.md"),
        ("changed", "pnpm.md"),
        ("deleted", "pnpm.md"),
        ("changed", "MEMORY.md"),
    ]


def test_view_hides_memdirs_own_files(tmp_path: Path) -> None:
    tool = MemdirMemoryTool(tmp_path, settings=PREFETCH)
    tool.run({"command": "create", "path": "/memories/a.md", "file_text": "x"})
    (tmp_path / ".memdir.lock").write_text("")  # an older memdir's, or planted
    listing = tool.run({"command": "view", "path": "/memories"}).text
    assert ".memdir" not in listing
    assert listing.endswith("\t/memories/a.md")


def test_md_only_and_clear_all_are_refused(tmp_path: Path) -> None:
    tool = MemdirMemoryTool(tmp_path, settings=PREFETCH, md_only=True)
    result = tool.run({"command": "create", "path": "/memories/x.sh", "file_text": "rm -rf /"})
    assert result.is_error
    assert not (tmp_path / "x.sh").exists()
    (tmp_path / "keep.md").write_text("keep", encoding="utf-8")
    from anthropic.lib.tools import ToolError

    with pytest.raises(ToolError):
        tool.clear_all_memory()
    assert (tmp_path / "keep.md").exists()


def test_non_utf8_files_are_errors_not_crashes(tmp_path: Path) -> None:
    (tmp_path / "bin.md").write_bytes(b"\xff\xfe")
    tool = MemdirMemoryTool(tmp_path, settings=PREFETCH)
    assert tool.run({"command": "view", "path": "/memories/bin.md"}).is_error
    result = tool.run(
        {"command": "str_replace", "path": "/memories/bin.md", "old_str": "a", "new_str": "b"}
    )
    assert result.is_error
    assert (tmp_path / "bin.md").read_bytes() == b"\xff\xfe"


@pytest.mark.parametrize(
    "data",
    [
        [],
        "view",
        {"command": "frobnicate"},
        {"path": "/memories"},
        {"command": "insert", "path": "/memories/a.md"},
        {"command": "create", "path": "/memories/a.md", "file_text": 3},
    ],
)
def test_malformed_input(tmp_path: Path, data: object) -> None:
    with pytest.raises(InvalidCommandError):
        parse_command(data)
    result = MemdirMemoryTool(tmp_path, settings=PREFETCH).run(data)
    assert result.is_error
    assert result.text.startswith("Error: ")


def test_tool_definition_and_result_block(tmp_path: Path) -> None:
    tool = MemdirMemoryTool(tmp_path)
    assert tool.to_dict() == {"type": "memory_20250818", "name": "memory"}
    assert tool.name == "memory"
    assert ToolResult("boom", True).to_block("toolu_1") == {
        "type": "tool_result",
        "tool_use_id": "toolu_1",
        "content": "boom",
        "is_error": True,
    }
    assert "is_error" not in ToolResult("ok").to_block("toolu_2")


async def test_arun_runs_off_the_event_loop(tmp_path: Path) -> None:
    tool = MemdirMemoryTool(tmp_path, settings=PREFETCH)
    result = await tool.arun({"command": "create", "path": "/memories/a.md", "file_text": "x"})
    assert result == ToolResult("File created successfully at: /memories/a.md")


def test_works_with_the_sdks_tool_runner(tmp_path: Path) -> None:
    """An app using ``client.beta.messages.tool_runner`` can point it at a memdir."""
    import json

    import anthropic
    import httpx2

    bodies: list[dict[str, Any]] = []

    def handle(request: httpx2.Request) -> httpx2.Response:
        bodies.append(json.loads(request.content))
        if len(bodies) == 1:
            content: list[dict[str, Any]] = [
                {
                    "type": "tool_use",
                    "id": "t1",
                    "name": "memory",
                    "input": {"command": "create", "path": "/memories/a.md", "file_text": "hi\n"},
                },
                {
                    "type": "tool_use",
                    "id": "t2",
                    "name": "memory",
                    "input": {"command": "create", "path": "/memories/../x.md", "file_text": "x"},
                },
            ]
        else:
            content = [{"type": "text", "text": "done"}]
        return httpx2.Response(
            200,
            json={
                "id": "msg",
                "type": "message",
                "role": "assistant",
                "model": "m",
                "content": content,
                "stop_reason": "tool_use" if len(bodies) == 1 else "end_turn",
                "stop_sequence": None,
                "usage": {"input_tokens": 1, "output_tokens": 1},
            },
        )

    client = anthropic.Anthropic(
        api_key="test",
        base_url="http://fake-api.test",
        max_retries=0,
        http_client=httpx2.Client(transport=httpx2.MockTransport(handle)),
    )
    runner = client.beta.messages.tool_runner(
        model="m",
        max_tokens=100,
        tools=[MemdirMemoryTool(tmp_path, settings=PREFETCH)],
        messages=[{"role": "user", "content": "remember hi"}],
    )
    runner.until_done()
    assert bodies[0]["tools"] == [{"type": "memory_20250818", "name": "memory"}]
    created, escaped = bodies[1]["messages"][-1]["content"]
    assert created["content"] == "File created successfully at: /memories/a.md"
    assert escaped == {
        "type": "tool_result",
        "tool_use_id": "t2",
        "content": "Path /memories/../x.md would escape /memories directory",
        "is_error": True,
    }
    assert (tmp_path / "a.md").read_text(encoding="utf-8") == "hi\n"
    assert not (tmp_path.parent / "x.md").exists()


def test_a_write_holding_a_secret_is_refused_for_every_face(tmp_path: Path) -> None:
    # The core tool refuses it, so the CLI, the language server, extraction and MCP all do.
    key = "sk-ant-api03-" + "a1B2c3D4e5" * 9 + "AA"
    result = MemdirMemoryTool(tmp_path).run(
        {"command": "create", "path": "/memories/k.md", "file_text": f"the key is {key}\n"}
    )
    assert result.is_error and "looks like a secret (Anthropic API key)" in result.text
    assert key not in result.text and not (tmp_path / "k.md").exists()
