"""One agent session across ``memdir mcp`` and the prompt hook: over stdio, a recall without
``session_id`` belongs to the Claude Code session that started the server, kept on disk with the
hook's, so neither gives a memory the other already gave in that session."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path

import pytest
from mcp import Client, StdioServerParameters
from mcp.types import CallToolResult, TextContent
from memdir.agent.paths import locate_memory_dir, state_dir
from memdir.faces.hook import user_prompt_submit
from memdir.faces.mcp_server import MemdirMCP
from memdir.recall.sessions import agent_pointer_path, process_start_ticks, session_path
from memdir.recall.surface import Session
from memhelpers import DEPLOY_FILES, DEPLOY_QUERY, write_files

DEPLOY_TEXT = "Deploys go through the staging cluster first."


class Agent:
    """A scratch home and project, the agent's memory dir for it, and the environment the agent
    gives its hooks and MCP servers (session ``sess-A``)."""

    def __init__(self, tmp_path: Path) -> None:
        self.home = tmp_path / "home"
        self.cwd = tmp_path / "project"
        self.cwd.mkdir(parents=True)
        self.env = {
            "XDG_STATE_HOME": str(tmp_path / "state"),
            "CLAUDE_CODE_SESSION_ID": "sess-A",
        }
        memory = locate_memory_dir(self.cwd, env=self.env, home=self.home).memory_dir
        assert memory is not None
        memory.mkdir(parents=True)
        write_files(memory, DEPLOY_FILES, 1_700_000_000.0)
        self.memory = memory
        self.states = state_dir(self.env, self.home)

    async def hook(self, session_id: str = "sess-A", **env: str) -> str | None:
        """One hook run for the deploy question; its additional context, or None (in a thread,
        as the hook is a process of its own: it runs its own event loop)."""
        return await asyncio.to_thread(self._hook, session_id, env)

    def _hook(self, session_id: str, env: dict[str, str]) -> str | None:
        stdin = {
            "session_id": session_id,
            "transcript_path": str(self.home / "none.jsonl"),  # nothing seen in a transcript
            "cwd": str(self.cwd),
            "hook_event_name": "UserPromptSubmit",
            "prompt": DEPLOY_QUERY,
        }
        outcome = user_prompt_submit(json.dumps(stdin), env={**self.env, **env}, home=self.home)
        assert outcome.log is None, outcome.log
        if outcome.output is None:
            return None
        specific = outcome.output["hookSpecificOutput"]
        assert isinstance(specific, dict)
        return str(specific["additionalContext"])

    def server(self, *, agent_sessions: bool = True) -> Client:
        memdir = MemdirMCP(
            [self.memory], agent_sessions=agent_sessions, environ=self.env, home=self.home
        )
        return Client(memdir.server())


@pytest.fixture
def agent(tmp_path: Path) -> Agent:
    return Agent(tmp_path)


def text_of(result: CallToolResult) -> str:
    block = result.content[0]
    assert isinstance(block, TextContent)
    return block.text


async def recall(client: Client, **extra: str) -> CallToolResult:
    result = await client.call_tool("memory_recall", {"query": DEPLOY_QUERY, **extra})
    assert not result.is_error, text_of(result)
    return result


async def test_a_memory_the_hook_gave_is_not_recalled_over_mcp(agent: Agent) -> None:
    given = await agent.hook()
    assert given is not None and DEPLOY_TEXT in given
    async with agent.server() as client:
        result = await recall(client)
    assert text_of(result).startswith("No memories recalled"), text_of(result)
    assert result.meta is not None
    assert result.meta["memdir/recall"]["agent_session"] == "sess-A"


async def test_a_memory_recalled_over_mcp_is_not_given_by_the_hook(agent: Agent) -> None:
    async with agent.server() as client:
        assert DEPLOY_TEXT in text_of(await recall(client))
    # The hook's transcript names nothing: the session file alone says it was given.
    assert await agent.hook() is None
    saved = Session.load(session_path(agent.states, "sess-A"))
    assert str((agent.memory / "deploy.md").resolve()) in saved.surfaced


async def test_the_hook_tells_the_server_a_new_session_after_clear(agent: Agent) -> None:
    """The server keeps the id it was started with; after ``/clear`` (or under ``claude
    --continue``) the agent is in another session, which its next hook run notes for it."""
    agent_pid = str(os.getppid())  # the server is this process: its agent is our parent
    async with agent.server() as client:
        given = await agent.hook("sess-B", CLAUDE_PID=agent_pid)
        assert given is not None and DEPLOY_TEXT in given
        result = await recall(client)
        assert text_of(result).startswith("No memories recalled"), text_of(result)
        assert result.meta is not None
        assert result.meta["memdir/recall"]["agent_session"] == "sess-B"
    assert not session_path(agent.states, "sess-A").exists()


@pytest.mark.parametrize(
    "data",
    [
        {"command": "view", "path": "/memories/deploy.md"},
        {
            "command": "str_replace",
            "path": "/memories/deploy.md",
            "old_str": "first",
            "new_str": "1st",
        },
    ],
)
async def test_a_memory_the_memory_tool_showed_is_seen_at_once(
    agent: Agent, data: dict[str, str]
) -> None:
    """Before any hook run reads the call from the transcript, recall and the hook skip it."""
    async with agent.server() as client:
        shown = await client.call_tool("memory", data)
        assert not shown.is_error, text_of(shown)
        assert text_of(await recall(client)).startswith("No memories recalled")
    assert await agent.hook() is None
    saved = Session.load(session_path(agent.states, "sess-A"))
    assert saved.read == {str((agent.memory / "deploy.md").resolve())}


async def test_a_failed_memory_command_shows_nothing(agent: Agent) -> None:
    async with agent.server() as client:
        missing = await client.call_tool("memory", {"command": "view", "path": "/memories/no.md"})
        assert missing.is_error
        assert DEPLOY_TEXT in text_of(await recall(client))
    assert not Session.load(session_path(agent.states, "sess-A")).read


@pytest.mark.parametrize("same_process", [True, False])
async def test_a_note_is_taken_only_from_the_servers_own_agent(
    agent: Agent, same_process: bool
) -> None:
    """A note left by another process that had the agent's pid (it started at another time) is
    not the agent's; the agent's own note is, even from before the server (re)started."""
    started = process_start_ticks(os.getppid())
    assert started is not None  # Linux: /proc
    pointer = agent_pointer_path(agent.states, os.getppid())
    pointer.parent.mkdir(parents=True)
    note = {"session_id": "sess-noted", "agent_start": started if same_process else started - 1}
    pointer.write_text(json.dumps(note), encoding="utf-8")
    os.utime(pointer, (1_700_000_000, 1_700_000_000))
    async with agent.server() as client:
        result = await recall(client)
    assert result.meta is not None
    expected = "sess-noted" if same_process else "sess-A"
    assert result.meta["memdir/recall"]["agent_session"] == expected


async def test_named_sessions_and_http_servers_keep_their_own(agent: Agent) -> None:
    assert await agent.hook() is not None
    # A session the client names is its own, kept in the server's memory.
    async with agent.server() as client:
        assert DEPLOY_TEXT in text_of(await recall(client, session_id="chat-7"))
    # A server of many clients (HTTP) serves no one agent session.
    async with agent.server(agent_sessions=False) as client:
        result = await recall(client)
    assert DEPLOY_TEXT in text_of(result)
    assert result.meta is not None and "agent_session" not in result.meta["memdir/recall"]


@pytest.mark.processes
async def test_memdir_mcp_over_stdio_shares_the_agents_session(agent: Agent) -> None:
    assert await agent.hook() is not None
    env = {**agent.env, "HOME": str(agent.home), "PATH": os.environ.get("PATH", "")}
    args = ["-m", "memdir", "mcp", "--dir", str(agent.memory)]
    async with Client(StdioServerParameters(command=sys.executable, args=args, env=env)) as c:
        result = await recall(c)
    assert text_of(result).startswith("No memories recalled"), text_of(result)
