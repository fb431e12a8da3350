"""``memdir mcp`` registered with the real Claude Code CLI, run offline against the fake API.

The fake answers the agent's first main request with a ``tool_use`` of memdir's recall tool; the
agent runs ``memdir mcp`` as its MCP server, calls the tool, and its next request carries the
``tool_result``: the test checks that it holds exactly what memdir recalls for the message.
Skipped when the pinned release is not installed (scripts/install-claude-code.sh).
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path

from fake_anthropic import Body, message, result_text, text, tool_result_blocks
from fidelity.agent import AgentRun, agent_env, run_agent
from mcp import Client
from mcp.types import Tool
from memdir.faces.mcp_server import build_server
from memdir.recall.prefetch import recall
from memdir.recall.surface import Session
from memhelpers import DEPLOY_MEMORY, DEPLOY_QUERY

TOOL = "mcp__memdir__memory_recall"


def respond(body: Body) -> Body:
    """The main loop's first request (it offers memdir's tool) asks for a recall; then done."""
    names = {tool.get("name") for tool in body.get("tools") or []}
    if TOOL not in names:
        return message(text("ok"))  # side requests: titles, summaries
    if not tool_result_blocks(body):
        return message(
            {
                "type": "tool_use",
                "id": "toolu_recall_1",
                "name": TOOL,
                "input": {"query": DEPLOY_QUERY},
            }
        )
    return message(text("Done."))


def test_claude_code_calls_memdir_recall_over_mcp(claude_code: Path, tmp_path: Path) -> None:
    memory = tmp_path / "memory"
    memory.mkdir()
    (memory / "MEMORY.md").write_text("- [Deploy](deploy.md) — staging first\n")
    (memory / "deploy.md").write_text(DEPLOY_MEMORY)
    # The offline selector: the agent's environment has an API key (for the fake), and memdir
    # must not send its selector request there.
    (memory / "memdir.toml").write_text('selector = "lexical"\n')
    expected = recall(DEPLOY_QUERY, memory, Session()).attachment
    assert "Deploys go through the staging cluster first." in expected

    home, project = tmp_path / "home", tmp_path / "project"
    home.mkdir()
    project.mkdir()
    subprocess.run(["git", "init", "-q"], cwd=project, check=True, capture_output=True)
    config = tmp_path / "mcp.json"
    server = {"command": sys.executable, "args": ["-m", "memdir", "mcp", "--dir", str(memory)]}
    config.write_text(json.dumps({"mcpServers": {"memdir": server}}))

    run = run_agent(
        claude_code,
        home=home,
        cwd=project,
        # Without tool search the MCP tools are in `tools`, so the fake can call one at once.
        env_extra={"ENABLE_TOOL_SEARCH": "false"},
        prompt=DEPLOY_QUERY,
        responder=respond,
        timeout=120.0,
        args=["--mcp-config", str(config), "--allowedTools", TOOL],
    )
    assert run.returncode == 0, f"the agent failed ({run.returncode}):\n{run.stderr[-2000:]}"
    offered = [r for r in run.requests if TOOL in {t.get("name") for t in r.get("tools") or []}]
    assert offered, "memdir's recall tool never reached the model's tools"
    answered = [r for r in offered if tool_result_blocks(r)]
    assert answered, "the agent never sent the tool's result back"
    results = [
        b for b in tool_result_blocks(answered[0]) if b.get("tool_use_id") == "toolu_recall_1"
    ]
    assert len(results) == 1
    assert not results[0].get("is_error"), result_text(results[0])
    assert result_text(results[0]) == expected


def test_the_documented_registration_connects(claude_code: Path, tmp_path: Path) -> None:
    """docs/mcp.md's commands: `claude mcp add memdir -- memdir mcp`, then `claude mcp list`.

    `claude mcp list` starts each registered server and reports whether it answered; `memdir`
    is found on PATH as a pipx or uv tool install puts it there.
    """
    memory = tmp_path / "project-memory"
    memory.mkdir()
    (memory / "MEMORY.md").write_text("- [Deploy](deploy.md) — staging first\n")
    (memory / "deploy.md").write_text(DEPLOY_MEMORY)
    home, project = tmp_path / "home", tmp_path / "project"
    (home / "tmp").mkdir(parents=True)
    project.mkdir()
    subprocess.run(["git", "init", "-q"], cwd=project, check=True, capture_output=True)
    scripts = Path(sys.executable).parent  # where `memdir` is installed beside this Python
    env = agent_env(home, "http://127.0.0.1:9", {})
    env["PATH"] = f"{scripts}:{env['PATH']}"

    def claude(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [str(claude_code), *args],
            cwd=project,
            env=env,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )

    added = claude("mcp", "add", "memdir", "--", "memdir", "mcp", "--dir", str(memory))
    assert added.returncode == 0, added.stderr
    listed = claude("mcp", "list")
    assert listed.returncode == 0, listed.stderr
    line = next(x for x in listed.stdout.splitlines() if x.startswith("memdir:"))
    assert f"memdir mcp --dir {memory}" in line
    assert "Connected" in line and "Failed" not in line, listed.stdout


def _first_model_request(run: AgentRun) -> Body:
    """The first Messages request the agent sent (token counts are not model requests)."""
    for path, body in zip(run.paths, run.requests, strict=True):
        if path.startswith("/v1/messages") and not path.startswith("/v1/messages/count_tokens"):
            return body
    raise AssertionError(f"the agent sent no model request: {run.paths}")


def _listing(memory: Path) -> tuple[str, dict[str, Tool]]:
    """memdir's own instructions and tools, as its server lists them."""

    async def listed() -> tuple[str, dict[str, Tool]]:
        async with Client(build_server(memory)) as client:
            assert client.instructions is not None
            return client.instructions, {t.name: t for t in (await client.list_tools()).tools}

    return asyncio.run(listed())


def _one_turn(claude_code: Path, tmp_path: Path, memory: Path, env: dict[str, str]) -> AgentRun:
    home, project = tmp_path / "home", tmp_path / "project"
    home.mkdir(exist_ok=True)
    project.mkdir(exist_ok=True)
    subprocess.run(["git", "init", "-q"], cwd=project, check=True, capture_output=True)
    config = tmp_path / "mcp.json"
    server = {"command": sys.executable, "args": ["-m", "memdir", "mcp", "--dir", str(memory)]}
    config.write_text(json.dumps({"mcpServers": {"memdir": server}}))
    run = run_agent(
        claude_code,
        home=home,
        cwd=project,
        env_extra=env,
        prompt=DEPLOY_QUERY,
        timeout=120.0,
        args=["--mcp-config", str(config)],
    )
    assert run.returncode == 0, f"the agent failed ({run.returncode}):\n{run.stderr[-2000:]}"
    return run


def _instructions_shown(body: Body) -> list[str]:
    """The server instructions a request shows, by server: Claude Code puts them in a system
    message, under "# MCP Server Instructions", one "## <server>" section each."""
    shown = []
    for msg in body.get("messages", []):
        content = msg.get("content")
        blocks = [content] if isinstance(content, str) else content or []
        for block in blocks:
            block_text = block if isinstance(block, str) else block.get("text", "")
            if "# MCP Server Instructions\n" in block_text:
                assert msg.get("role") == "system", msg.get("role")
                shown.append(block_text.split("# MCP Server Instructions\n", 1)[1])
    return shown


def test_the_first_request_carries_memdirs_tools_as_written(
    claude_code: Path, tmp_path: Path
) -> None:
    """Tool search off: the first model request lists memdir's tools, each with the description
    and input schema memdir wrote, and shows its instructions word for word."""
    memory = tmp_path / "memory"
    memory.mkdir()
    (memory / "MEMORY.md").write_text("- [Deploy](deploy.md) — staging first\n")
    (memory / "deploy.md").write_text(DEPLOY_MEMORY)
    instructions, tools = _listing(memory)

    run = _one_turn(claude_code, tmp_path, memory, {"ENABLE_TOOL_SEARCH": "false"})
    first = _first_model_request(run)
    sent = {t["name"]: t for t in first.get("tools") or [] if t["name"].startswith("mcp__")}
    assert set(sent) == {f"mcp__memdir__{name}" for name in tools}
    for name, tool in tools.items():
        seen = sent[f"mcp__memdir__{name}"]
        assert seen["description"] == tool.description
        assert seen["input_schema"] == tool.input_schema
    [section] = _instructions_shown(first)
    assert f"\n## memdir\n{instructions}\n\n" in section
    # What tells the model when to recall, in both.
    when = "answering a question about the user, the project or past decisions"
    assert when in sent["mcp__memdir__memory_recall"]["description"]
    assert when in instructions


def test_with_tool_search_memdirs_tools_are_deferred_and_its_instructions_shown(
    claude_code: Path, tmp_path: Path
) -> None:
    """Tool search on (Claude Code's default): memdir's tools are only named for the tool search,
    not sent; its instructions are shown as with the search off."""
    memory = tmp_path / "memory"
    memory.mkdir()
    (memory / "MEMORY.md").write_text("")
    instructions, tools = _listing(memory)

    run = _one_turn(claude_code, tmp_path, memory, {})
    first = _first_model_request(run)
    assert not [t for t in first.get("tools") or [] if t["name"].startswith("mcp__memdir__")]
    [section] = _instructions_shown(first)
    assert f"\n## memdir\n{instructions}\n\n" in section
    named = json.dumps(first["messages"], ensure_ascii=False)
    for name in tools:
        assert f"mcp__memdir__{name}" in named
