"""``memdir mcp``: the MCP server with the SDK's own client, in process and over stdio."""

from __future__ import annotations

import shutil
import socket
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from mcp import Client, MCPError, StdioServerParameters
from mcp.types import CallToolResult, TextContent
from memdir.faces.cli import main
from memdir.faces.mcp_server import build_server
from memdir.recall.prefetch import prefetch
from memdir.recall.surface import Session
from memdir.writing.memory_tool import MemdirMemoryTool
from memhelpers import DEPLOY_FILES, DEPLOY_MEMORY, DEPLOY_QUERY, mcp_http

#: A realistic token (a run of one letter reads as a placeholder and is allowed).
SECRET = "sk-ant-api03-Xy7Qp2Lm9Rt4Vb8Nc3Kd6Hf1Gj5Ws0Ze7Ua2Io4Pq"
TOOLS = {"memory", "memory_recall", "memory_search", "memory_lint", "memory_index"}


@pytest.fixture
def memdir(make_dir: Callable[[dict[str, str | bytes]], Path]) -> Path:
    return make_dir(DEPLOY_FILES)


def connect(directory: Path, *, read_only: bool = False) -> Client:
    """In process (an async fixture would enter and leave the client in different tasks)."""
    return Client(build_server(directory, read_only=read_only))


def text_of(result: CallToolResult) -> str:
    assert len(result.content) == 1
    block = result.content[0]
    assert isinstance(block, TextContent)
    return block.text


# --- listing --------------------------------------------------------------------------------


async def test_tools_have_schemas_descriptions_and_annotations(memdir: Path) -> None:
    async with connect(memdir) as client:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
        assert set(tools) == TOOLS
        for tool in tools.values():
            assert tool.description and len(tool.description) > 40
            assert tool.input_schema["type"] == "object"
            assert tool.annotations is not None
            assert tool.annotations.read_only_hint is (tool.name != "memory")
        memory = tools["memory"]
        assert memory.annotations is not None
        assert memory.annotations.destructive_hint is True
        assert memory.annotations.idempotent_hint is False
        command = memory.input_schema["properties"]["command"]
        assert command["enum"] == ["view", "create", "str_replace", "insert", "delete", "rename"]
        assert memory.input_schema["required"] == ["command"]
        recall_schema = tools["memory_recall"].input_schema
        assert recall_schema["required"] == ["query"]
        assert {"query", "recent_tools", "session_id"} <= set(recall_schema["properties"])
        assert tools["memory_search"].input_schema["required"] == ["pattern"]
        assert tools["memory_lint"].annotations is not None
        assert tools["memory_lint"].annotations.idempotent_hint is True


# --- the memory tool: memdir's results and errors, verbatim ----------------------------------

SCRIPT: list[dict[str, Any]] = [
    {"command": "view", "path": "/memories"},
    {"command": "view", "path": "/memories/deploy.md", "view_range": [6, 6]},
    {"command": "create", "path": "/memories/pnpm.md", "file_text": "Use pnpm.\n"},
    {"command": "create", "path": "/memories/pnpm.md", "file_text": "again"},
    {"command": "str_replace", "path": "/memories/pnpm.md", "old_str": "pnpm", "new_str": "bun"},
    {"command": "str_replace", "path": "/memories/pnpm.md", "old_str": "npm", "new_str": "x"},
    {"command": "insert", "path": "/memories/pnpm.md", "insert_line": 9, "insert_text": "x\n"},
    {"command": "insert", "path": "/memories/pnpm.md", "insert_line": 0, "insert_text": "# T\n"},
    {"command": "rename", "old_path": "/memories/pnpm.md", "new_path": "/memories/bun.md"},
    {"command": "view", "path": "/memories/../etc/passwd"},
    {"command": "view", "path": "/etc/passwd"},
    {"command": "delete", "path": "/memories/bun.md"},
    {"command": "delete", "path": "/memories/bun.md"},
    {"command": "create", "path": "/memories/no-text.md"},
]


async def test_memory_tool_answers_as_memdir_tool_does(memdir: Path, tmp_path: Path) -> None:
    twin = tmp_path / "twin"
    shutil.copytree(memdir, twin)
    direct = MemdirMemoryTool(twin)
    async with Client(build_server(memdir)) as client:
        for command in SCRIPT:
            expected = direct.run(command)
            got = await client.call_tool("memory", command)
            shown = text_of(got).replace(str(memdir), str(twin))
            assert (shown, got.is_error) == (expected.text, expected.is_error), command
    assert sorted(p.name for p in memdir.iterdir()) == sorted(p.name for p in twin.iterdir())
    assert (memdir / "MEMORY.md").read_text() == (twin / "MEMORY.md").read_text()


async def test_the_models_own_index_line_replaces_memdirs_over_mcp(memdir: Path) -> None:
    """Claude Code tells the model to add the MEMORY.md line itself after writing a memory: the
    create says memdir did, and an insert of the model's own line leaves one entry, the model's."""
    note = (
        "---\nname: launch\ndescription: the launch is due on March 3\ntype: project\n---\n"
        "Due March 3.\n"
    )
    theirs = "- [Launch](launch.md) — ship date agreed with sales"
    async with connect(memdir) as client:
        created = await client.call_tool(
            "memory", {"command": "create", "path": "/memories/launch.md", "file_text": note}
        )
        lines = (memdir / "MEMORY.md").read_text(encoding="utf-8").split("\n")
        at = lines.index("- [Launch](launch.md) — the launch is due on March 3") + 1
        assert text_of(created) == (
            f"File created successfully at: /memories/launch.md; indexed in MEMORY.md at line "
            f"{at} (no need to add a line)"
        )
        inserted = await client.call_tool(
            "memory",
            {
                "command": "insert",
                "path": "/memories/MEMORY.md",
                "insert_line": len(lines) - 1,
                "insert_text": theirs,
            },
        )
    assert "dropped memdir's own MEMORY.md line for launch.md" in text_of(inserted)
    index = (memdir / "MEMORY.md").read_text(encoding="utf-8")
    assert index.count("(launch.md)") == 1 and theirs in index


async def test_a_write_with_a_secret_is_refused_naming_only_its_kind(memdir: Path) -> None:
    async with connect(memdir) as client:
        for command in (
            {"command": "create", "path": "/memories/key.md", "file_text": f"key: {SECRET}\n"},
            {
                "command": "str_replace",
                "path": "/memories/deploy.md",
                "old_str": "first.",
                "new_str": f"first with {SECRET}.",
            },
            {
                "command": "insert",
                "path": "/memories/deploy.md",
                "insert_line": 1,
                "insert_text": SECRET,
            },
        ):
            result = await client.call_tool("memory", command)
            assert result.is_error
            assert "Anthropic API key" in text_of(result)
            assert SECRET not in text_of(result) and "Xy7Qp" not in text_of(result)
        assert not (memdir / "key.md").exists()
        assert (memdir / "deploy.md").read_text() == DEPLOY_MEMORY


async def test_read_only_offers_view_and_refuses_writes(memdir: Path) -> None:
    async with Client(build_server(memdir, read_only=True)) as client:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
        assert set(tools) == TOOLS
        memory = tools["memory"]
        command = memory.input_schema["properties"]["command"]
        assert command.get("enum", [command.get("const")]) == ["view"]
        assert memory.annotations is not None and memory.annotations.read_only_hint is True
        view = await client.call_tool("memory", {"command": "view", "path": "/memories/deploy.md"})
        assert not view.is_error and "staging cluster" in text_of(view)
        create = {"command": "create", "path": "/memories/x.md", "file_text": "x"}
        refused = await client.call_tool("memory", create)
        assert refused.is_error
        assert text_of(refused) == (
            "Error: this memdir server is read-only; `create` is not available (only `view` is)"
        )
    assert not (memdir / "x.md").exists()


# --- recall, search, lint, index ------------------------------------------------------------


async def test_recall_returns_what_path_b_injects_once_per_session(memdir: Path) -> None:
    async with connect(memdir) as client:
        expected = (await prefetch(DEPLOY_QUERY, memdir, Session())).attachment
        assert "Deploys go through the staging cluster first." in expected
        first = await client.call_tool("memory_recall", {"query": DEPLOY_QUERY, "session_id": "s1"})
        assert not first.is_error
        assert text_of(first) == expected
        assert first.structured_content is None  # the text is the result (see memory_recall)
        assert first.meta is not None
        details = first.meta["memdir/recall"]
        assert [s["path"] for s in details["surfaced"]] == ["deploy.md"]
        assert details["budget"]["used"] > 0
        # The same session never sees a memory twice; another session does.
        again = await client.call_tool("memory_recall", {"query": DEPLOY_QUERY, "session_id": "s1"})
        assert text_of(again).startswith("No memories recalled")
        other = await client.call_tool(
            "memory_recall", {"query": DEPLOY_QUERY, "session_id": "s2", "recent_tools": ["Bash"]}
        )
        assert text_of(other) == expected


async def test_recall_of_a_single_word_says_why_nothing_came(memdir: Path) -> None:
    async with connect(memdir) as client:
        result = await client.call_tool("memory_recall", {"query": "thanks"})
        assert not result.is_error
        assert text_of(result).startswith("No memories recalled: ")
        assert result.meta is not None
        assert result.meta["memdir/recall"]["triggered"] is False


async def test_search_lint_and_index(memdir: Path) -> None:
    async with connect(memdir) as client:
        found = await client.call_tool("memory_search", {"pattern": "staging", "glob": "*.md"})
        assert text_of(found).splitlines() == [
            "MEMORY.md:1:25: - [Deploy](deploy.md) — staging first",
            "deploy.md:3:33: description: how deploys to the staging cluster work",
            "deploy.md:7:24: Deploys go through the staging cluster first.",
        ]
        assert found.structured_content is not None
        assert found.structured_content["truncated"] is False
        assert found.structured_content["matches"][2] == {
            "path": "deploy.md",
            "line": 7,
            "character": 24,
            "text": "Deploys go through the staging cluster first.",
        }
        none = await client.call_tool("memory_search", {"pattern": "staging", "glob": "*.txt"})
        assert text_of(none) == "No matches."

        lint = await client.call_tool("memory_lint", {})
        assert not lint.is_error
        assert lint.structured_content is not None
        assert lint.structured_content["files"] == 1
        assert isinstance(lint.structured_content["diagnostics"], list)

        index = await client.call_tool("memory_index", {})
        assert index.structured_content is not None
        assert index.structured_content["text"] == "- [Deploy](deploy.md) — staging first"
        assert index.structured_content["truncated"] is False
        assert index.structured_content["cut_entries"] == []
        assert text_of(index).endswith("- [Deploy](deploy.md) — staging first")


async def test_lint_findings_are_data(memdir: Path) -> None:
    async with connect(memdir) as client:
        await client.call_tool(
            "memory",
            {"command": "create", "path": "/memories/bare.md", "file_text": "No header.\n"},
        )
        lint = await client.call_tool("memory_lint", {})
        assert lint.structured_content is not None
        bare = [d for d in lint.structured_content["diagnostics"] if d["path"] == "bare.md"]
        assert {"path", "line", "column", "code", "severity", "message"} <= set(bare[0])
        assert any(d["code"] == "MEM101" for d in bare)
        assert "bare.md:1:1: error MEM101 no frontmatter" in text_of(lint)


async def test_lint_of_a_dir_read_by_instructions_says_so(
    tmp_path: Path, agent_config: Path
) -> None:
    project = tmp_path / "proj"
    (project / ".git").mkdir(parents=True)
    (project / "CLAUDE.md").write_text("Read `.claude/memory/` first.\n", encoding="utf-8")
    root = project / ".claude" / "memory"
    root.mkdir(parents=True)
    (root / "MEMORY.md").write_text("- [Bare](bare.md) — no header\n", encoding="utf-8")
    (root / "bare.md").write_text("No header.\n", encoding="utf-8")
    async with connect(root) as client:
        lint = await client.call_tool("memory_lint", {})
        assert text_of(lint).startswith("Note: read by the project's instructions (CLAUDE.md")
        assert lint.structured_content is not None
        assert lint.structured_content["diagnostics"] == []  # MEM101 is auto memory's


async def test_index_reports_entries_past_the_cap(
    make_dir: Callable[[dict[str, str | bytes]], Path],
) -> None:
    lines = "".join(f"- [Topic {n}](t{n}.md) — hook\n" for n in range(230))
    directory = make_dir({"MEMORY.md": lines, "memdir.toml": 'selector = "lexical"\n'})
    async with Client(build_server(directory)) as client:
        index = await client.call_tool("memory_index", {})
    assert index.structured_content is not None
    assert index.structured_content["truncated"] is True
    assert [e["path"] for e in index.structured_content["cut_entries"]][:2] == [
        "t200.md",
        "t201.md",
    ]
    # Counted from 1, as `memdir index --json` counts: t200.md is MEMORY.md's line 201.
    assert index.structured_content["cut_entries"][0]["line"] == 201
    assert "Cut, never shown to the agent: t200.md, t201.md" in text_of(index)


# --- bad arguments --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("tool", "arguments", "says"),
    [
        (
            "memory",
            {"command": "wipe"},
            "Invalid arguments for memory: `command`: Input should be 'view', 'create', "
            "'str_replace', 'insert', 'delete' or 'rename' (got 'wipe')",
        ),
        ("memory", {"command": "create", "path": "/memories/x.md"}, "file_text"),
        ("memory", {}, "Invalid arguments for memory: `command` is required"),
        ("memory_search", {"pattern": "("}, "`pattern` is not a valid regular expression"),
        ("memory_search", {}, "Invalid arguments for memory_search: `pattern` is required"),
        (
            "memory_search",
            {"pattern": "x", "ignore_case": "maybe"},
            "Invalid arguments for memory_search: `ignore_case`: Input should be a valid boolean",
        ),
        ("memory_recall", {"query": "   "}, "`query` must not be empty"),
        (
            "memory_recall",
            {"query": DEPLOY_QUERY, "recent_tools": "Bash"},
            "Invalid arguments for memory_recall: `recent_tools`: Input should be a valid list "
            "(got 'Bash')",
        ),
        (
            "memory_recall",
            {"qeury": DEPLOY_QUERY},
            "Invalid arguments for memory_recall: `query` is required; unknown `qeury` (it takes "
            "`directory`, `query`, `recent_tools`, `session_id`)",
        ),
        (
            "memory_lint",
            {"directory": "/nowhere"},
            "`directory` '/nowhere' is not served here; choose one of: ",
        ),
        ("memory_nope", {}, "Unknown tool: memory_nope"),
    ],
)
async def test_bad_arguments_are_errors_that_say_what_is_wrong(
    memdir: Path, tool: str, arguments: dict[str, Any], says: str
) -> None:
    async with connect(memdir) as client:
        result = await client.call_tool(tool, arguments)
        assert result.is_error
        assert says in text_of(result)
        assert "pydantic" not in text_of(result)
    assert not (memdir / "x.md").exists()


# --- several memory dirs ------------------------------------------------------------------


@pytest.fixture
def two_dirs(make_dir: Callable[[dict[str, str | bytes]], Path], tmp_path: Path) -> list[Path]:
    """Two projects' memory dirs, both named ``memory`` as the agent names them."""
    first = make_dir(DEPLOY_FILES)
    second = tmp_path / "-work-billing" / "memory"
    second.mkdir(parents=True)
    (second / "MEMORY.md").write_text("- [Invoices](invoices.md) — run on the 1st\n")
    (second / "invoices.md").write_text(
        "---\nname: invoices\ndescription: when the invoice batch job runs\n"
        "metadata:\n  type: project\n---\nThe invoice batch runs on the first of the month.\n"
    )
    (second / "memdir.toml").write_text('selector = "lexical"\n')
    return [first, second]


async def test_several_dirs_each_tool_takes_a_directory(two_dirs: list[Path]) -> None:
    first, second = two_dirs
    async with Client(build_server(two_dirs)) as client:
        instructions = client.instructions
        assert instructions is not None
        assert "`-work-billing`" in instructions and str(second) in instructions
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
        for tool in tools.values():
            assert "directory" in tool.input_schema["properties"]
        # The first dir is the default; the others by label or by path.
        default = await client.call_tool("memory", {"command": "view", "path": "/memories"})
        assert "deploy.md" in text_of(default) and "invoices.md" not in text_of(default)
        by_label = {"command": "view", "path": "/memories", "directory": "-work-billing"}
        assert "invoices.md" in text_of(await client.call_tool("memory", by_label))
        recall = await client.call_tool(
            "memory_recall",
            {"query": "when does the invoice batch job run?", "directory": str(second)},
        )
        assert "The invoice batch runs on the first of the month." in text_of(recall)
        found = await client.call_tool(
            "memory_search", {"pattern": "invoice", "directory": "-work-billing"}
        )
        assert "invoices.md:" in text_of(found)
        index = await client.call_tool("memory_index", {"directory": "-work-billing"})
        assert "Invoices" in text_of(index)
        create = {
            "command": "create",
            "path": "/memories/note.md",
            "file_text": "---\nname: note\ndescription: a note\ntype: user\n---\nx\n",
            "directory": "-work-billing",
        }
        assert not (await client.call_tool("memory", create)).is_error
        assert (second / "note.md").is_file() and not (first / "note.md").exists()


async def test_several_dirs_keep_sessions_apart(two_dirs: list[Path]) -> None:
    _first, _second = two_dirs
    async with Client(build_server(two_dirs)) as client:
        ask = {"query": DEPLOY_QUERY, "session_id": "s1"}
        assert "staging cluster first" in text_of(await client.call_tool("memory_recall", ask))
        again = await client.call_tool("memory_recall", ask)
        assert "none relevant that this session has not seen" in text_of(again)
        billing = {"query": "when does the invoice batch job run?", "session_id": "s1"}
        billing["directory"] = "-work-billing"
        assert "first of the month" in text_of(await client.call_tool("memory_recall", billing))


async def test_several_dirs_resources(two_dirs: list[Path]) -> None:
    first, _second = two_dirs
    async with Client(build_server(two_dirs)) as client:
        listed = {str(r.uri) for r in (await client.list_resources()).resources}
        label = first.parent.name  # the project folder above `memory`
        assert {
            "memdir://index",
            "memdir://memory/deploy.md",
            f"memdir://dir/{label}/memory/deploy.md",
            f"memdir://dir/{label}/index",
            "memdir://dir/-work-billing/index",
            "memdir://dir/-work-billing/memory/invoices.md",
        } <= listed
        read = await client.read_resource("memdir://dir/-work-billing/memory/invoices.md")
        assert "first of the month" in getattr(read.contents[0], "text", "")
        index = await client.read_resource("memdir://dir/-work-billing/index")
        assert getattr(index.contents[0], "text", "").startswith("- [Invoices]")
        with pytest.raises(MCPError):
            await client.read_resource("memdir://dir/nobody/index")


def test_labels_name_the_project_and_stay_unique(tmp_path: Path) -> None:
    from memdir.faces.mcp_server import served_dirs

    a = tmp_path / "a" / "proj" / "memory"
    b = tmp_path / "b" / "proj" / "memory"
    c = tmp_path / "notes"
    for d in (a, b, c):
        d.mkdir(parents=True)
    dirs = served_dirs([a, b, c, a])
    assert [(d.label, d.root) for d in dirs] == [("proj", a), ("proj-2", b), ("notes", c)]


@pytest.mark.processes
async def test_several_dirs_over_stdio(two_dirs: list[Path]) -> None:
    first, second = two_dirs
    args = ["-m", "memdir", "mcp", "--dir", str(first), "--dir", str(second), "--read-only"]
    async with Client(StdioServerParameters(command=sys.executable, args=args)) as client:
        view = {"command": "view", "path": "/memories", "directory": "-work-billing"}
        assert "invoices.md" in text_of(await client.call_tool("memory", view))


# --- resources ------------------------------------------------------------------------------


async def test_resources_are_the_index_and_each_file(memdir: Path) -> None:
    async with connect(memdir) as client:
        listed = {str(r.uri): r for r in (await client.list_resources()).resources}
        assert set(listed) == {"memdir://index", "memdir://memory/deploy.md"}
        assert listed["memdir://memory/deploy.md"].mime_type == "text/markdown"
        index = await client.read_resource("memdir://index")
        assert getattr(index.contents[0], "text", None) == DEPLOY_FILES["MEMORY.md"]
        topic = await client.read_resource("memdir://memory/deploy.md")
        assert getattr(topic.contents[0], "text", None) == DEPLOY_MEMORY
        for missing in ("memdir://memory/nope.md", "memdir://memory/../../etc/passwd"):
            with pytest.raises(MCPError):
                await client.read_resource(missing)


# --- the command: stdio, and without the extra ----------------------------------------------


async def test_over_stdio_as_a_subprocess(memdir: Path) -> None:
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "memdir", "mcp", "--dir", str(memdir)]
    )
    async with Client(params) as client:
        tools = {tool.name for tool in (await client.list_tools()).tools}
        assert tools == TOOLS
        result = await client.call_tool("memory_recall", {"query": DEPLOY_QUERY})
        assert "Deploys go through the staging cluster first." in text_of(result)
        view = await client.call_tool("memory", {"command": "view", "path": "/memories/nope"})
        assert view.is_error
        assert (
            text_of(view) == "The path /memories/nope does not exist. Please provide a valid path."
        )


def test_without_the_extra_the_command_names_the_install(memdir: Path) -> None:
    # None in sys.modules is how Python spells "not installed" (tests/install uses real venvs).
    code = (
        "import sys; sys.modules['mcp'] = None; from memdir.faces.cli import main; "
        "raise SystemExit(main(['mcp', '--dir', sys.argv[1]]))"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code, str(memdir)],
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=60,
        check=False,
    )
    assert proc.returncode == 2
    [line] = proc.stderr.strip().splitlines()
    assert line.startswith(
        "memdir mcp: error: the MCP server needs memdir's [mcp] extra "
        "(the mcp package is not installed); add it with: "
    )
    assert line.endswith("[mcp]'")  # this environment's pip, editable, from the clone


@pytest.mark.parametrize("value", ["0.0.0.0:8765", "192.168.1.5:80", "example.com:80", "8765"])
def test_http_refuses_hosts_that_are_not_loopback(
    memdir: Path, value: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["mcp", "--dir", str(memdir), "--http", value]) == 2
    error = capsys.readouterr().err
    assert error.startswith("memdir mcp: error: --http")


def test_http_on_a_port_in_use_is_one_line(
    memdir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with socket.create_server(("127.0.0.1", 0)) as taken:
        port = taken.getsockname()[1]
        assert main(["mcp", "--dir", str(memdir), "--http", f"127.0.0.1:{port}"]) == 2
    [line] = capsys.readouterr().err.strip().splitlines()
    assert line.startswith("memdir mcp: error: Address already in use"), line


@pytest.mark.processes
async def test_over_streamable_http_on_loopback(memdir: Path) -> None:
    with mcp_http("--dir", str(memdir), "--http", "127.0.0.1:0", "--read-only") as url:
        # Printed once the socket listens, with the port taken.
        assert url.startswith("http://127.0.0.1:") and url.endswith("/mcp"), url
        async with Client(url) as client:
            tools = {tool.name: tool for tool in (await client.list_tools()).tools}
            assert set(tools) == TOOLS
            annotations = tools["memory"].annotations
            assert annotations is not None and annotations.read_only_hint is True
            result = await client.call_tool("memory_recall", {"query": DEPLOY_QUERY})
            assert "Deploys go through the staging cluster first." in text_of(result)


# --- another agent's memory -----------------------------------------------------------------


async def test_another_agents_memory_is_declined_with_the_notice(tmp_path: Path) -> None:
    """A Hermes memory dir: recall, lint and the memory tool's writes decline, each with the
    sentence every face uses; reading (view, search, index) still works; nothing is written."""
    from memdir.agent.formats import notice, recognise_dir
    from other_formats import HERMES, make_format_dir, tree_bytes

    root = make_format_dir(tmp_path / "hermes", HERMES)
    found = recognise_dir(root)
    assert found is not None
    sentence = f"{root}: {notice(found)}"
    before = tree_bytes(tmp_path)
    async with connect(root) as client:
        recall = await client.call_tool("memory_recall", {"query": "when does staging reboot?"})
        assert not recall.is_error and text_of(recall) == f"No memories recalled: {sentence}"
        lint = await client.call_tool("memory_lint", {})
        assert text_of(lint) == sentence
        assert lint.structured_content == {"files": 0, "diagnostics": [], "notice": sentence}
        create = await client.call_tool(
            "memory", {"command": "create", "path": "/memories/x.md", "file_text": "hi\n"}
        )
        assert create.is_error and text_of(create) == f"Error: `create` declined: {sentence}"
        view = await client.call_tool("memory", {"command": "view", "path": "/memories"})
        assert not view.is_error and "USER.md" in text_of(view)
        found_lines = await client.call_tool("memory_search", {"pattern": "staging"})
        assert "MEMORY.md:1:" in text_of(found_lines)
    assert tree_bytes(tmp_path) == before


async def test_the_setting_lets_mcp_treat_it_as_claude_codes(tmp_path: Path) -> None:
    from other_formats import HERMES, make_format_dir

    root = make_format_dir(tmp_path / "hermes", {**HERMES, "memdir.toml": "any_format = true\n"})
    async with connect(root) as client:
        lint = await client.call_tool("memory_lint", {})
        assert lint.structured_content is not None and lint.structured_content["files"] == 1
        create = await client.call_tool(
            "memory", {"command": "create", "path": "/memories/x.md", "file_text": "hi\n"}
        )
        assert not create.is_error
    assert (root / "x.md").is_file()
