"""memdir.writing.memory_tool: the API memory tool over a memdir, with the API's exact strings.

The reference for "exact" is the anthropic SDK's own local-filesystem memory tool, which
test_memory_tool_sdk.py runs side by side with memdir's; the tests here need no SDK (a core
install runs the tool).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from memdir.config import Settings
from memdir.writing.memory_tool import (
    CreateCommand,
    InsertCommand,
    InvalidCommandError,
    MemdirMemoryTool,
    RenameCommand,
    ToolResult,
    ViewCommand,
    parse_command,
)

PREFETCH = Settings(recall_mode="prefetch")


def api(result: ToolResult) -> ToolResult:
    """The result as the API's tool words it: without memdir's clause on MEMORY.md."""
    return ToolResult(result.api_text, result.is_error, result.warnings)


def test_the_api_strings_verbatim(tmp_path: Path) -> None:
    tool = MemdirMemoryTool(tmp_path, settings=PREFETCH)

    def run(command: dict[str, object]) -> ToolResult:
        return api(tool.run(command))

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
        ("/memories/out/x.md", "Path /memories/out/x.md would escape /memories directory"),
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


def test_md_only_refuses_other_files(tmp_path: Path) -> None:
    tool = MemdirMemoryTool(tmp_path, settings=PREFETCH, md_only=True)
    result = tool.run({"command": "create", "path": "/memories/x.sh", "file_text": "rm -rf /"})
    assert result.is_error
    assert not (tmp_path / "x.sh").exists()


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
        {"command": "create", "path": None, "file_text": "x"},
        {"command": "insert", "path": "/memories/a.md", "insert_line": True, "insert_text": "x"},
        {"command": "insert", "path": "/memories/a.md", "insert_line": "1", "insert_text": "x"},
        {"command": "view", "path": "/memories", "view_range": [1, "2"]},
        {"command": "view", "path": "/memories", "view_range": "1-2"},
    ],
)
def test_malformed_input(tmp_path: Path, data: object) -> None:
    with pytest.raises(InvalidCommandError):
        parse_command(data)
    result = MemdirMemoryTool(tmp_path, settings=PREFETCH).run(data)
    assert result.is_error
    assert result.text.startswith("Error: ")


def test_parsed_commands_are_plain_values() -> None:
    assert parse_command({"command": "view", "path": "/memories", "view_range": [1, -1]}) == (
        ViewCommand("/memories", (1, -1))
    )
    # Fields a command does not take are ignored, as the API's tool ignores them.
    assert parse_command(
        {"command": "create", "path": "/memories/a.md", "file_text": "x", "old_str": "y"}
    ) == CreateCommand("/memories/a.md", "x")
    assert parse_command(
        {"command": "insert", "path": "/memories/a.md", "insert_line": 0, "insert_text": "x"}
    ) == InsertCommand("/memories/a.md", 0, "x")
    command = parse_command({"command": "rename", "old_path": "/memories/a", "new_path": "/b"})
    assert command == RenameCommand("/memories/a", "/b") and command.command == "rename"
    with pytest.raises(InvalidCommandError) as caught:
        parse_command({"command": "str_replace", "path": 1, "new_str": "x"})
    assert str(caught.value) == (
        "invalid str_replace command: path: must be a string; old_str: required"
    )


def test_a_parsed_command_runs_like_its_input(tmp_path: Path) -> None:
    tool = MemdirMemoryTool(tmp_path, settings=PREFETCH)
    assert api(tool.execute(CreateCommand("/memories/a.md", "x\n"))) == ToolResult(
        "File created successfully at: /memories/a.md"
    )
    assert tool.execute(ViewCommand("/memories/a.md")) == tool.run(
        {"command": "view", "path": "/memories/a.md"}
    )


def test_result_block(tmp_path: Path) -> None:
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
    assert api(result) == ToolResult("File created successfully at: /memories/a.md")


def test_a_write_holding_a_secret_is_refused_for_every_face(tmp_path: Path) -> None:
    # The core tool refuses it, so the CLI, the language server, extraction and MCP all do.
    key = "sk-ant-api03-" + "a1B2c3D4e5" * 9 + "AA"
    result = MemdirMemoryTool(tmp_path).run(
        {"command": "create", "path": "/memories/k.md", "file_text": f"the key is {key}\n"}
    )
    assert result.is_error and "looks like a secret (Anthropic API key)" in result.text
    assert key not in result.text and not (tmp_path / "k.md").exists()
