"""memdir's memory tool against the anthropic SDK's own, command for command.

The API's memory tool (``memory_20250818``) runs on the client; the SDK's
``BetaLocalFilesystemMemoryTool`` is the reference implementation of its result and error
strings. memdir's dispatcher (:mod:`memdir.writing.memory_tool`) does not use the SDK, so this test
keeps it exact: one script of commands (every success and every error the SDK words) runs through
both tools on twin directories, and each result, and at the end each tree, must be the same.

Where memdir deliberately differs, :data:`DIFFERENCES` says how and why, each case on fresh
twins: memdir's result is asserted, and so is the SDK's, so that the day the SDK changes, the
list (and docs/cli.md's "Where memdir differs from the API's tool", which lists the same) is
checked again. Skipped without the SDK; it is in the dev extra, so CI runs it.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from memdir.config import Settings
from memdir.writing.memory_tool import MemdirMemoryTool, ToolResult

sdk_memory = pytest.importorskip("anthropic.tools.memory")
sdk_tools = pytest.importorskip("anthropic.lib.tools")

#: Prefetch mode and files without frontmatter: memdir maintains no index and stamps nothing
#: (the two deliberate differences in the tree, checked in the last test).
PREFETCH = Settings(recall_mode="prefetch")
#: A file past the API's 999,999-line view limit (1 MB of newlines).
MANY_LINES = "\n" * 1_000_000


def populate(root: Path, outside: Path) -> None:
    """The same tree on both sides: nested folders past the listing's two levels, an empty file,
    CRLF lines, a hidden file, a FIFO, a link inside and a link leading out."""
    (root / "team" / "sub" / "deep").mkdir(parents=True)
    (root / "notes.md").write_text("one\ntwo\nthree\n", encoding="utf-8")
    (root / "crlf.md").write_bytes(b"first\r\nsecond\r\n")
    (root / "empty.md").write_text("", encoding="utf-8")
    (root / "long.md").write_text(MANY_LINES, encoding="utf-8")
    (root / "team" / "ana.md").write_text("Ana leads the team\n", encoding="utf-8")
    (root / "team" / "sub" / "bo.md").write_text("Bo\n", encoding="utf-8")
    (root / "team" / "sub" / "deep" / "cy.md").write_text("Cy\n", encoding="utf-8")
    (root / ".hidden.md").write_text("not listed\n", encoding="utf-8")
    os.mkfifo(root / "pipe.md")
    (root / "link.md").symlink_to("team/ana.md")
    (root / "out").symlink_to(outside)


@dataclass
class Twins:
    sdk: Any  # BetaLocalFilesystemMemoryTool
    sdk_root: Path
    ours: MemdirMemoryTool
    our_root: Path

    def sdk_run(self, command: dict[str, Any]) -> ToolResult:
        try:
            text = self.sdk.call(command)
        except sdk_tools.ToolError as exc:
            return ToolResult(str(exc.content), is_error=True)
        except Exception as exc:  # what the SDK does not word: its tool runner shows the repr
            return ToolResult(f"raised {type(exc).__name__}", is_error=True)
        assert isinstance(text, str)
        return ToolResult(text)


@pytest.fixture
def twins(tmp_path: Path) -> Twins:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.md").write_text("outside\n", encoding="utf-8")
    sdk = sdk_memory.BetaLocalFilesystemMemoryTool(str(tmp_path / "sdk"))
    sdk_root = tmp_path / "sdk" / "memories"
    our_root = tmp_path / "memdir"
    our_root.mkdir()
    for root in (sdk_root, our_root):
        populate(root, outside)
    return Twins(sdk, sdk_root, MemdirMemoryTool(our_root, settings=PREFETCH), our_root)


def view(path: str, view_range: list[int] | None = None) -> dict[str, Any]:
    command: dict[str, Any] = {"command": "view", "path": path}
    if view_range is not None:
        command["view_range"] = view_range
    return command


def create(path: str, text: str = "x\n") -> dict[str, Any]:
    return {"command": "create", "path": path, "file_text": text}


def replace(path: str, old: str, new: str) -> dict[str, Any]:
    return {"command": "str_replace", "path": path, "old_str": old, "new_str": new}


def insert(path: str, line: int, text: str) -> dict[str, Any]:
    return {"command": "insert", "path": path, "insert_line": line, "insert_text": text}


def delete(path: str) -> dict[str, Any]:
    return {"command": "delete", "path": path}


def rename(old: str, new: str) -> dict[str, Any]:
    return {"command": "rename", "old_path": old, "new_path": new}


#: Every command the API words, successes and errors, in an order where each sees the last's
#: effect. Comments name the API's string each line checks.
SCRIPT: list[dict[str, Any]] = [
    # view: the listing (two levels, sizes, hidden items and links out left out), numbered lines
    view("/memories"),
    view("/memories/"),
    view("/memories/team"),
    view("/memories/notes.md"),
    view("/memories/notes.md", [2, -1]),
    view("/memories/notes.md", [0, 2]),  # a start below 1 is 1
    view("/memories/notes.md", [3, 1]),  # an empty range
    view("/memories/notes.md", [1, -2]),  # a negative end counts from the end
    view("/memories/notes.md", [9, 12]),  # past the end
    view("/memories/notes.md", [2]),  # not [start, end]: the whole file
    view("/memories/crlf.md"),  # a CR stays with its line
    view("/memories/empty.md"),
    view("/memories/link.md"),  # a link inside the dir is followed
    view("/memories/long.md"),  # "exceeds maximum line limit"
    view("/memories/pipe.md"),  # "Unsupported file type"
    view("/memories/missing.md"),  # "does not exist. Please provide a valid path."
    view("/memories/notes.md/x"),
    view("/memories/out"),  # "would escape /memories directory": a link leading out
    view("/memories/out/secret.md"),
    view("/memories/../sdk"),
    view("/etc/passwd"),  # "Path must start with /memories"
    view("memories"),
    # create: never over an existing file or folder, parents made
    create("/memories/notes.md"),  # "File ... already exists"
    create("/memories/team"),
    create("/memories"),
    create("/memories/new/deeper/n.md", "n\n"),
    create("/memories/out/x.md"),
    create("/memories/../escape.md"),
    # str_replace: the snippet, no match, several matches (their lines), not a file
    replace("/memories/notes.md", "two", "2"),
    replace("/memories/notes.md", "zzz", "y"),
    replace("/memories/notes.md", "e", "E"),
    replace("/memories/missing.md", "a", "b"),
    replace("/memories/team", "a", "b"),
    replace("/memories", "a", "b"),
    replace("/memories/pipe.md", "a", "b"),
    replace("/memories/crlf.md", "second", "2nd"),
    replace("/memories/team/ana.md", "leads", "runs"),
    # insert: line 0 to the line count, a trailing newline dropped, out of range
    insert("/memories/notes.md", 0, "zero"),
    insert("/memories/notes.md", 4, "four\n"),
    insert("/memories/notes.md", 42, "x"),  # "Invalid `insert_line` parameter"
    insert("/memories/notes.md", -1, "x"),
    insert("/memories/empty.md", 0, "first"),
    insert("/memories/crlf.md", 1, "middle"),
    insert("/memories/missing.md", 0, "x"),
    insert("/memories/team", 0, "x"),
    view("/memories/notes.md"),
    view("/memories/crlf.md"),
    # rename: never over an existing path, never the root, parents made
    rename("/memories/notes.md", "/memories/team/ana.md"),  # "The destination ... already exists"
    rename("/memories/missing.md", "/memories/x.md"),
    rename("/memories", "/memories/x"),  # "Cannot rename the /memories directory itself"
    rename("/memories/notes.md", "/memories"),
    rename("/memories/notes.md", "/memories/old/n.md"),
    rename("/memories/team", "/memories/people"),
    rename("/memories/old/n.md", "/memories/../n.md"),
    # delete: files and folders of memories, never the root
    delete("/memories"),  # "Cannot delete the /memories directory itself"
    delete("/memories/missing.md"),
    delete("/memories/old"),
    delete("/memories/people/sub"),
    delete("/memories/out"),
    delete("/memories/people/../../x"),
    view("/memories"),
]


def api(result: ToolResult) -> ToolResult:
    """memdir's result as the API's tool words it: without memdir's clause on MEMORY.md (its
    own test is in test_memory_tool.py)."""
    return ToolResult(result.api_text, result.is_error, result.warnings)


def test_the_script_gives_the_sdks_results_and_tree(twins: Twins) -> None:
    for command in SCRIPT:
        assert api(twins.ours.run(command)) == twins.sdk_run(command), command
    # The same files with the same bytes (memdir's lock and journal are outside the dir).
    for root in (twins.sdk_root, twins.our_root):
        (root / "out").unlink()
    assert tree(twins.our_root) == tree(twins.sdk_root)


def tree(root: Path) -> dict[str, bytes | None]:
    return {
        path.relative_to(root).as_posix(): path.read_bytes() if path.is_file() else None
        for path in sorted(root.rglob("*"))
        if not path.is_fifo()
    }


@dataclass(frozen=True)
class Difference:
    """One place memdir deliberately differs from the API's tool."""

    command: dict[str, Any]
    #: Why memdir differs (what docs/cli.md says).
    why: str
    #: memdir's result: its text, or a check of it.
    ours: str | Callable[[str], bool]
    #: What the SDK does instead.
    sdk: str | Callable[[str], bool]
    #: Set up both twins first.
    prepare: Callable[[Path], None] | None = None
    #: Whether memdir's result is an error (the SDK's, where it raises, is not worded at all).
    refused: bool = True


KEY = "sk-ant-api03-" + "a1B2c3D4e5" * 9 + "AA"

DIFFERENCES: list[Difference] = [
    Difference(
        create("/memories/.notes.md"),
        "names starting with '.' are memdir's temp files: never written, never read",
        "Invalid path /memories/.notes.md: names starting with '.' are reserved for memdir "
        "(.notes.md)",
        "File created successfully at: /memories/.notes.md",
    ),
    Difference(
        view("/memories/.hidden.md"),
        "the same for reads: a hidden name is memdir's",
        "Invalid path /memories/.hidden.md: names starting with '.' are reserved for memdir "
        "(.hidden.md)",
        lambda text: text.startswith("Here's the content of /memories/.hidden.md"),
    ),
    Difference(
        create("/memories/%2e%2e/x.md"),
        "a percent-encoding is how another tool turns a name into `..`: refused as an escape",
        "Path /memories/%2e%2e/x.md would escape /memories directory",
        "File created successfully at: /memories/%2e%2e/x.md",
    ),
    Difference(
        create("/memories/a\\b.md"),
        "a backslash is a folder separator on Windows",
        "Invalid path /memories/a\\b.md: backslashes are not allowed; separate folders with /",
        "File created successfully at: /memories/a\\b.md",
    ),
    Difference(
        create("/memories/a\u2215b.md"),
        "a look-alike of / or . (here the division slash) reads as another path",
        "Path /memories/a\u2215b.md would escape /memories directory",
        "File created successfully at: /memories/a\u2215b.md",
    ),
    Difference(
        create("/memories/NOTES.md"),
        "on macOS and Windows it is the same file as notes.md",
        lambda text: text.startswith(
            "Invalid path /memories/NOTES.md: 'NOTES.md' and 'notes.md', which exists, are one "
            "name on macOS and Windows"
        ),
        "File created successfully at: /memories/NOTES.md",
    ),
    Difference(
        create("/memories/con.md"),
        "no file can have a Windows device name there",
        lambda text: text.startswith("Invalid path /memories/con.md: 'con.md' is no portable name"),
        "File created successfully at: /memories/con.md",
    ),
    Difference(
        view("/memoriesx"),
        "the API's tool reads /memoriesx as /memories/x",
        "Path must start with /memories, got: /memoriesx",
        "The path /memoriesx does not exist. Please provide a valid path.",
    ),
    Difference(
        create("/memories/notes.md/x.md"),
        "worded where the SDK raises NotADirectoryError",
        "Error: notes.md in notes.md/x.md is a file, not a folder",
        "raised NotADirectoryError",
    ),
    Difference(
        rename("/memories/team", "/memories/team/sub/t"),
        "worded where the SDK raises OSError",
        "Error: cannot move team into itself",
        "raised OSError",
    ),
    Difference(
        view("/memories/bin.md"),
        "worded where the SDK raises UnicodeDecodeError",
        "The file /memories/bin.md is not valid UTF-8 text.",
        "raised UnicodeDecodeError",
        lambda root: (root / "bin.md").write_bytes(b"\xff\xfe"),
    ),
    Difference(
        replace("/memories/bin.md", "a", "b"),
        "the same for an edit",
        "Error: bin.md is not UTF-8 text; memdir will not edit it",
        "raised UnicodeDecodeError",
        lambda root: (root / "bin.md").write_bytes(b"\xff\xfe"),
    ),
    Difference(
        replace("/memories/notes.md", "", "x"),
        "an empty old_str matches nowhere (the SDK lists every character's line)",
        "No replacement was performed, old_str `` did not appear verbatim in /memories/notes.md.",
        lambda text: text.startswith("No replacement was performed. Multiple occurrences"),
    ),
    Difference(
        replace("/memories/empty.md", "", "x"),
        "the same in an empty file (where the SDK replaces the whole file)",
        "No replacement was performed, old_str `` did not appear verbatim in /memories/empty.md.",
        lambda text: text.startswith("The memory file has been edited."),
    ),
    Difference(
        delete("/memories/link.md"),
        "a link is deleted, not the file it points to",
        "Successfully deleted /memories/link.md",
        # The same words, but the SDK's tree loses team/ana.md: see the next test.
        "Successfully deleted /memories/link.md",
        refused=False,
    ),
    Difference(
        delete("/memories/team"),
        "a folder is deleted only when it holds nothing but memory files",
        lambda text: text.startswith("Error: refusing to delete the folder team: it holds"),
        "Successfully deleted /memories/team",
        lambda root: (root / "team" / "data.json").write_text("{}", encoding="utf-8"),
    ),
    Difference(
        delete("/memories/MEMORY.md"),
        "MEMORY.md is the index every session loads: never deleted by the tool",
        lambda text: text.startswith("Error: refusing to delete MEMORY.md"),
        "Successfully deleted /memories/MEMORY.md",
        lambda root: (root / "MEMORY.md").write_text("- [Notes](notes.md)\n", encoding="utf-8"),
    ),
    Difference(
        rename("/memories/MEMORY.md", "/memories/old-index.md"),
        "nor renamed away",
        lambda text: text.startswith("Error: refusing to rename MEMORY.md"),
        "Successfully renamed /memories/MEMORY.md to /memories/old-index.md",
        lambda root: (root / "MEMORY.md").write_text("- [Notes](notes.md)\n", encoding="utf-8"),
    ),
    Difference(
        create("/memories/key.md", f"the key is {KEY}\n"),
        "memories are injected into later conversations: no credential is stored",
        lambda text: text.startswith(
            "Error: refused: the file as it would be after this write holds what looks like a "
            "secret (Anthropic API key)"
        ),
        "File created successfully at: /memories/key.md",
    ),
    Difference(
        create("/memories/big.md", "x" * (4 * 1024 * 1024 + 1)),
        "a memory is a page: no write makes a file over 4 MiB",
        lambda text: text.startswith(
            "Error: refusing to write big.md: it would be 4,194,305 bytes"
        ),
        "File created successfully at: /memories/big.md",
    ),
]


@pytest.mark.parametrize(
    "difference", DIFFERENCES, ids=[f"{d.command['command']}-{d.why[:40]}" for d in DIFFERENCES]
)
def test_each_deliberate_difference(twins: Twins, difference: Difference) -> None:
    if difference.prepare is not None:
        difference.prepare(twins.sdk_root)
        difference.prepare(twins.our_root)
    ours = api(twins.ours.run(difference.command))
    theirs = twins.sdk_run(difference.command)
    for result, expected in ((ours, difference.ours), (theirs, difference.sdk)):
        if isinstance(expected, str):
            assert result.text == expected, difference.why
        else:
            assert expected(result.text), (difference.why, result.text)
    assert ours.is_error == difference.refused


def test_a_link_is_deleted_not_its_target(twins: Twins) -> None:
    twins.ours.run(delete("/memories/link.md"))
    twins.sdk_run(delete("/memories/link.md"))
    assert (twins.our_root / "team" / "ana.md").is_file()
    assert not (twins.our_root / "link.md").is_symlink()
    assert not (twins.sdk_root / "team" / "ana.md").exists()  # the SDK deleted the target


def test_in_index_mode_memdir_keeps_the_index_and_stamps(twins: Twins) -> None:
    """The results read the same; the tree differs where memdir keeps MEMORY.md and the
    ``modified`` stamp, as the agent does (index mode, files with frontmatter)."""
    ours = MemdirMemoryTool(twins.our_root, settings=Settings(recall_mode="index"))
    text = "---\nname: pnpm\ndescription: the user prefers pnpm\ntype: user\n---\nBody\n"
    for command in (
        create("/memories/pnpm.md", text),
        insert("/memories/pnpm.md", 6, "More"),
    ):
        assert api(ours.run(command)) == twins.sdk_run(command)
    assert "pnpm.md" in (twins.our_root / "MEMORY.md").read_text(encoding="utf-8")
    assert not (twins.sdk_root / "MEMORY.md").exists()
    assert "modified: " in (twins.our_root / "pnpm.md").read_text(encoding="utf-8")
    assert "modified: " not in (twins.sdk_root / "pnpm.md").read_text(encoding="utf-8")
