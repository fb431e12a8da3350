"""Issue 26, what may be written: the memory tool judges the file as it will be after a write,
and the names it creates, not the command's new text alone.

On main only the command's string values were checked: a token written in two halves (a create,
then a ``str_replace``) was stored for 52 of 71 kinds, and as a file name (which lands in
MEMORY.md) for 56. Every face (``memdir tool``, MCP ``memory``, LSP ``memory/tool``, VS Code's
tool, extraction) writes through :class:`memdir.writing.memory_tool.MemdirMemoryTool`, whose writer
asks
:func:`memdir.writing.memory_tool.refuse_secrets` before anything is touched.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from mcp import Client
from mcp.types import TextContent
from memdir.faces.cli import main
from memdir.faces.mcp_server import build_server
from memdir.writing.memory_tool import MemdirMemoryTool, parse_command
from sec_secrets_corpus import HEX, POSITIVES, Positive, rand

INDEX = "- [Deploy](deploy.md) — staging first\n"
DEPLOY = (
    "---\nname: deploy\ndescription: how deploys to the staging cluster work\n"
    "type: project\n---\nDeploys go through staging first.\n"
)


def memory_dir(tmp_path: Path) -> Path:
    root = tmp_path / "memory"
    root.mkdir()
    (root / "MEMORY.md").write_text(INDEX, encoding="utf-8")
    (root / "deploy.md").write_text(DEPLOY, encoding="utf-8")
    return root


def sample(positive: Positive) -> tuple[str, str]:
    text, value = positive.make(random.Random(f"writes/{positive.label}"))
    return text, value.removeprefix("https://")


def on_disk(root: Path) -> str:
    """Every name and every text in the memory dir, for a search."""
    parts = []
    for path in sorted(root.rglob("*")):
        parts.append(path.relative_to(root).as_posix())
        if path.is_file():
            parts.append(path.read_text(encoding="utf-8", errors="replace"))
    return "\n".join(parts)


@pytest.fixture
def tool(tmp_path: Path) -> MemdirMemoryTool:
    """The memory tool on a fresh memory dir."""
    return MemdirMemoryTool(memory_dir(tmp_path))


@pytest.fixture(params=POSITIVES, ids=lambda p: p.label)
def secret(request: pytest.FixtureRequest) -> tuple[str, str]:
    """Each kind of credential the detector knows, in a text: (the text, the credential)."""
    positive: Positive = request.param
    return sample(positive)


def assert_refused(text: str, value: str) -> None:
    assert text.startswith("Error: refused:"), text
    assert "looks like a secret (" in text
    assert value not in text and value[-10:] not in text


def test_a_credential_written_in_two_halves_is_refused_when_whole(
    tool: MemdirMemoryTool, secret: tuple[str, str]
) -> None:
    root = tool.memory_root
    text, value = secret
    cut = text.find(value) + len(value) // 2
    first = tool.run(
        {"command": "create", "path": "/memories/notes.md", "file_text": text[:cut] + "§\n"}
    )
    if not first.is_error:  # the first half alone may be recognisable already
        second = tool.run(
            {
                "command": "str_replace",
                "path": "/memories/notes.md",
                "old_str": "§",
                "new_str": text[cut:],
            }
        )
        assert second.is_error
        assert_refused(second.text, value)
    assert value not in on_disk(root)


def test_a_credential_in_a_file_name_never_reaches_the_dir_or_the_index(
    tool: MemdirMemoryTool, secret: tuple[str, str]
) -> None:
    root = tool.memory_root
    text, value = secret
    name = text if "\n" not in text else value.replace("\n", " ")
    for command in (
        {"command": "create", "path": f"/memories/{name}.md", "file_text": "Where it lives.\n"},
        {
            "command": "rename",
            "old_path": "/memories/deploy.md",
            "new_path": f"/memories/{name}.md",
        },
    ):
        result = tool.run(command)
        # Refused for the secret, naming only its kind, or for a character no name may hold.
        assert result.is_error, command
        if result.text.startswith("Error: refused"):
            assert_refused(result.text, value)
    assert value not in on_disk(root)
    assert (root / "deploy.md").exists()


def test_the_whole_file_is_judged_so_an_old_secret_must_go_first(tmp_path: Path) -> None:
    root = memory_dir(tmp_path)
    key = "api_key: " + rand(random.Random("old"), 40, HEX)
    # Planted by hand, or written before this check existed.
    (root / "deploy.md").write_text(DEPLOY + key + "\n", encoding="utf-8")
    tool = MemdirMemoryTool(root)
    edit = tool.run(
        {
            "command": "str_replace",
            "path": "/memories/deploy.md",
            "old_str": "first",
            "new_str": "1st",
        }
    )
    assert edit.is_error and "`api_key` value" in edit.text
    removed = tool.run(
        {
            "command": "str_replace",
            "path": "/memories/deploy.md",
            "old_str": key,
            "new_str": "The key is in the vault (API_KEY in the deploy environment).",
        }
    )
    assert not removed.is_error, removed.text
    assert key not in (root / "deploy.md").read_text(encoding="utf-8")


def test_forty_hex_digits_after_api_key_are_refused(tmp_path: Path) -> None:
    root = memory_dir(tmp_path)
    tool = MemdirMemoryTool(root)
    rng = random.Random("forty")
    for number in range(20):
        result = tool.run(
            {
                "command": "create",
                "path": f"/memories/k{number}.md",
                "file_text": f"api_key: {rand(rng, 40, HEX)}\n",
            }
        )
        assert result.is_error and "(`api_key` value)" in result.text
    assert sorted(p.name for p in root.glob("*.md")) == ["MEMORY.md", "deploy.md"]


def halves(value: str) -> list[dict[str, object]]:
    cut = len(value) // 2
    return [
        {"command": "create", "path": "/memories/bot.md", "file_text": f"token {value[:cut]}§\n"},
        {
            "command": "str_replace",
            "path": "/memories/bot.md",
            "old_str": "§",
            "new_str": value[cut:],
        },
    ]


TELEGRAM = next(p for p in POSITIVES if p.label == "Telegram bot token")


def test_a_parsed_command_is_checked_too(tmp_path: Path) -> None:
    # The CLI executes the command it parsed, not the raw input: the check is in the writer.
    root = memory_dir(tmp_path)
    _, value = sample(TELEGRAM)
    tool = MemdirMemoryTool(root)
    first, second = halves(value)
    assert not tool.execute(parse_command(first)).is_error
    refused = tool.execute(parse_command(second))
    assert refused.is_error and "Telegram bot token" in refused.text
    assert value not in refused.text and value not in on_disk(root)


def test_memdir_tool_refuses_the_halves(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = memory_dir(tmp_path)
    _, value = sample(TELEGRAM)
    first, second = halves(value)
    assert main(["tool", "--dir", str(root), json.dumps(first)]) == 0
    assert main(["tool", "--dir", str(root), json.dumps(second)]) == 1
    out = capsys.readouterr().out
    assert "looks like a secret (Telegram bot token)" in out and value not in out
    assert value not in on_disk(root)


async def test_mcp_memory_refuses_the_halves_and_secret_names(tmp_path: Path) -> None:
    root = memory_dir(tmp_path)
    _, value = sample(TELEGRAM)
    first, second = halves(value)
    rename = {
        "command": "rename",
        "old_path": "/memories/deploy.md",
        "new_path": f"/memories/{value}.md",
    }
    async with Client(build_server(root)) as client:
        assert not (await client.call_tool("memory", first)).is_error
        for command in (second, rename):
            result = await client.call_tool("memory", command)
            [block] = result.content
            assert result.is_error and isinstance(block, TextContent)
            assert "looks like a secret (Telegram bot token)" in block.text
            assert value not in block.text
    assert value not in on_disk(root) and (root / "deploy.md").exists()
