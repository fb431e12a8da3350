"""``memdir hook user-prompt-submit`` in the real Claude Code CLI's settings, run offline.

The scratch ``~/.claude/settings.json`` registers the hook; the agent runs it for the prompt with
its own environment, memdir finds the memory dir the agent uses for the project and recalls, and
the agent's request to the fake API carries memdir's answer as the hook's additional context.
Skipped when the pinned release is not installed (scripts/install-claude-code.sh).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from fake_anthropic import Body, message, text, tool_results
from fidelity.agent import SELECTOR_PROMPT_START, main_request, run_agent
from memdir.agent.paths import locate_memory_dir
from memdir.recall.prefetch import recall
from memdir.recall.surface import Session
from memhelpers import DEPLOY_MEMORY, DEPLOY_QUERY

#: How the agent introduces a UserPromptSubmit hook's additionalContext to the model.
HOOK_CONTEXT = "UserPromptSubmit hook additional context: "
TEA = (
    "---\nname: tea\ndescription: the user drinks green tea in the afternoon\n"
    "metadata:\n  type: user\n---\nGreen tea, no sugar.\n"
)


def texts(body: Body) -> list[str]:
    """Every text block of the user messages, in order."""
    found: list[str] = []
    for msg in body.get("messages", []):
        content = msg.get("content")
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
        found += [
            b["text"] for b in blocks or [] if isinstance(b, dict) and b.get("type") == "text"
        ]
    return found


def hook_context(body: Body) -> str | None:
    """What follows the hook-context prefix in its text block (the agent's later sections too)."""
    for block in texts(body):
        start = block.find(HOOK_CONTEXT)
        if start >= 0:
            return block[start + len(HOOK_CONTEXT) :]
    return None


def scratch_project(tmp_path: Path) -> tuple[Path, Path, Path]:
    """(home, project, memory dir): two memories where the agent looks, the hook registered."""
    home, project = tmp_path / "home", tmp_path / "project"
    (home / ".claude").mkdir(parents=True)
    project.mkdir()
    subprocess.run(["git", "init", "-q"], cwd=project, check=True, capture_output=True)
    # The memory dir the agent uses for this project (its environment has no CLAUDE_* variable).
    memory = locate_memory_dir(project, env={}, home=home).memory_dir
    assert memory is not None
    memory.mkdir(parents=True)
    (memory / "MEMORY.md").write_text("- [Deploy](deploy.md) — staging first\n- [Tea](tea.md)\n")
    (memory / "deploy.md").write_text(DEPLOY_MEMORY)
    (memory / "tea.md").write_text(TEA)
    # The offline selector: the agent's environment has an API key (for the fake), and memdir
    # must not send its selector request there.
    (memory / "memdir.toml").write_text('selector = "lexical"\n')
    # The agent runs hooks with its own environment: this interpreter has memdir installed.
    command = f"{sys.executable} -m memdir hook user-prompt-submit"
    settings = {
        "hooks": {"UserPromptSubmit": [{"hooks": [{"type": "command", "command": command}]}]}
    }
    (home / ".claude" / "settings.json").write_text(json.dumps(settings))
    return home, project, memory


def test_claude_code_gives_the_model_memdirs_recall(claude_code: Path, tmp_path: Path) -> None:
    home, project, memory = scratch_project(tmp_path)
    expected = recall(DEPLOY_QUERY, memory, Session()).attachment
    assert "Deploys go through the staging cluster first." in expected
    assert "Green tea" not in expected

    run = run_agent(claude_code, home=home, cwd=project, prompt=DEPLOY_QUERY, timeout=120.0)
    assert run.returncode == 0, f"the agent failed ({run.returncode}):\n{run.stderr[-2000:]}"
    request = main_request(run)
    context = hook_context(request)
    log = home / ".local" / "state" / "memdir" / "hook.log"
    assert context is not None, (
        "no hook context in the agent's request; hook log: "
        + (log.read_text() if log.exists() else "(none)")
        + "\n"
        + "\n---\n".join(texts(request))[-3000:]
    )
    # The agent appends its next section after a blank line (2.1.328: today's date).
    assert context.startswith(expected), context[:3000]
    assert context[len(expected) :].startswith("\n\n") or context == expected
    assert "Green tea" not in context
    assert not log.exists()
    # The hook kept the session under the agent's session id: the file is marked surfaced.
    sessions = list((home / ".local" / "state" / "memdir" / "hook-sessions").glob("*.json"))
    assert len(sessions) == 1
    assert str((memory / "deploy.md").resolve()) in Session.load(sessions[0]).surfaced


def test_one_agent_session_never_gets_a_memory_twice(claude_code: Path, tmp_path: Path) -> None:
    home, project, _ = scratch_project(tmp_path)
    prompts = [DEPLOY_QUERY, "and do deploys to the staging cluster happen on Fridays?"]
    prompts.append("what tea does the user drink in the afternoon?")
    run = run_agent(claude_code, home=home, cwd=project, prompt=prompts, timeout=180.0)
    assert run.returncode == 0, f"the agent failed ({run.returncode}):\n{run.stderr[-2000:]}"
    turns = [r for r in run.requests if r.get("tools")]
    assert turns, f"no main request; stderr: {run.stderr[-2000:]}"
    everything = "\n".join(texts(turns[-1]))
    # Three prompts, two hook contexts: the second prompt's memory had already been given.
    assert everything.count(HOOK_CONTEXT) == 2, everything[-3000:]
    assert everything.count("Deploys go through the staging cluster first.") == 1
    assert everything.count("Green tea, no sugar.") == 1
    sessions = list((home / ".local" / "state" / "memdir" / "hook-sessions").glob("*.json"))
    assert len(sessions) == 1, "the agent's turns share one session id"


def test_a_memory_the_agent_read_is_not_given(claude_code: Path, tmp_path: Path) -> None:
    home, project, memory = scratch_project(tmp_path)
    deploy = str(memory / "deploy.md")
    asked: list[Body] = []

    def respond(body: Body) -> Body:
        """The first main request reads deploy.md with the agent's Read tool; then done."""
        if not body.get("tools"):
            return message(text("ok"))  # side requests: titles, summaries
        asked.append(body)
        if len(asked) == 1:
            use = {"type": "tool_use", "id": "toolu_read_1", "name": "Read"}
            return message({**use, "input": {"file_path": deploy}})
        return message(text("Done."))

    prompts = ["look at the memory files please", "how do deploys to the staging cluster work?"]
    run = run_agent(
        claude_code,
        home=home,
        cwd=project,
        prompt=prompts,
        responder=respond,
        timeout=180.0,
        args=["--allowedTools", "Read"],
    )
    assert run.returncode == 0, f"the agent failed ({run.returncode}):\n{run.stderr[-2000:]}"
    last = json.dumps(asked[-1].get("messages", []), ensure_ascii=False)
    assert "toolu_read_1" in last and "Deploys go through the staging cluster first." in last
    everything = "\n".join(texts(asked[-1]))
    # The deploy memory reached the model through Read, so the hook does not give it again.
    assert HOOK_CONTEXT not in everything, everything[-3000:]
    sessions = list((home / ".local" / "state" / "memdir" / "hook-sessions").glob("*.json"))
    assert str((memory / "deploy.md").resolve()) in Session.load(sessions[0]).read


# --- one session across the hook and `memdir mcp` -----------------------------------------------

#: The name the user gave memdir's server: any name works (the tools are `mcp__notes__…`).
SERVER = "notes"
MEMORY_TOOL = f"mcp__{SERVER}__memory"
RECALL_TOOL = f"mcp__{SERVER}__memory_recall"
WINDOW = (
    "---\nname: deploy window\ndescription: the staging cluster deploy window is friday "
    "morning\nmetadata:\n  type: project\n---\nDeploys to the staging cluster: Friday 9-11.\n"
)


def with_mcp(tmp_path: Path, memory: Path, env: dict[str, str] | None = None) -> list[str]:
    """``memdir mcp`` registered as the docs say (stdio, the project's memory dir) under the
    name :data:`SERVER`, its tools allowed: the agent's arguments."""
    config = tmp_path / "mcp.json"
    server: dict[str, object] = {
        "command": sys.executable,
        "args": ["-m", "memdir", "mcp", "--dir", str(memory)],
    }
    if env:
        server["env"] = env
    config.write_text(json.dumps({"mcpServers": {SERVER: server}}))
    return ["--mcp-config", str(config), "--allowedTools", f"{MEMORY_TOOL},{RECALL_TOOL}"]


def test_a_memory_written_or_viewed_over_mcp_is_not_given_next_prompt(
    claude_code: Path, tmp_path: Path
) -> None:
    home, project, memory = scratch_project(tmp_path)
    question = "how do deploys to the staging cluster work, and what is the deploy window?"
    # Had the agent not seen one of them, the hook would give it with the second prompt.
    (memory / "window.md").write_text(WINDOW)
    for seen, unseen in [("deploy.md", "window.md"), ("window.md", "deploy.md")]:
        session = Session()
        session.mark_read([memory / seen])
        assert [m.rel_path for m in recall(question, memory, session).surfaced] == [unseen]
    (memory / "window.md").unlink()
    calls = [
        ("toolu_create", {"command": "create", "path": "/memories/window.md", "file_text": WINDOW}),
        ("toolu_view", {"command": "view", "path": "/memories/deploy.md"}),
    ]
    asked: list[Body] = []

    def respond(body: Body) -> Body:
        """The first turn writes window.md and views deploy.md over MCP; then plain answers."""
        if MEMORY_TOOL not in {t.get("name") for t in body.get("tools") or []}:
            return message(text("ok"))  # side requests: titles, summaries
        asked.append(body)
        if calls:
            ident, data = calls.pop(0)
            return message({"type": "tool_use", "id": ident, "name": MEMORY_TOOL, "input": data})
        return message(text("Noted."))

    run = run_agent(
        claude_code,
        home=home,
        cwd=project,
        env_extra={"ENABLE_TOOL_SEARCH": "false"},
        # One word: the hook recalls nothing for it (the multilingual trigger's rule).
        prompt=["go", question],
        responder=respond,
        timeout=180.0,
        # The server keeps its sessions apart from the hook's, so that the hook learns what the
        # model saw from the transcript alone (as with a server started some other way).
        args=with_mcp(tmp_path, memory, {"XDG_STATE_HOME": str(tmp_path / "server-state")}),
    )
    assert run.returncode == 0, f"the agent failed ({run.returncode}):\n{run.stderr[-2000:]}"
    assert list((tmp_path / "server-state" / "memdir" / "hook-sessions").glob("*.json"))
    results = tool_results(asked[-1])
    # scratch_project's MEMORY.md has two lines: memdir indexes the new memory on the third.
    assert results["toolu_create"] == (
        "File created successfully at: /memories/window.md; indexed in MEMORY.md at line 3 "
        "(no need to add a line)"
    )
    assert "Deploys go through the staging cluster first." in results["toolu_view"]
    assert (memory / "window.md").read_text() == WINDOW
    # The second prompt's hook gave neither: the model has both from memdir's MCP tools.
    everything = "\n".join(texts(asked[-1]))
    assert everything.count(question) == 1
    assert HOOK_CONTEXT not in everything, everything[-3000:]
    sessions = list((home / ".local" / "state" / "memdir" / "hook-sessions").glob("*.json"))
    assert len(sessions) == 1
    read = Session.load(sessions[0]).read
    assert read == {str((memory / name).resolve()) for name in ("deploy.md", "window.md")}
    log = home / ".local" / "state" / "memdir" / "hook.log"
    assert not log.exists(), log.read_text()


def test_the_hook_and_mcp_recall_share_the_agents_session(
    claude_code: Path, tmp_path: Path
) -> None:
    """The hook gives the deploy memory with the prompt; the model then asks memdir's recall
    over MCP for the same question: it is not given again. Then under ``claude --continue``,
    whose MCP servers start with a fresh session id: the hook's note of the session it
    resumed keeps the two together."""
    home, project, memory = scratch_project(tmp_path)
    asked: list[Body] = []

    def respond(body: Body) -> Body:
        if RECALL_TOOL not in {t.get("name") for t in body.get("tools") or []}:
            return message(text("ok"))
        asked.append(body)
        if not tool_results(body).get(f"toolu_recall_{runs}"):
            use = {"type": "tool_use", "id": f"toolu_recall_{runs}", "name": RECALL_TOOL}
            return message({**use, "input": {"query": DEPLOY_QUERY}})
        return message(text("Done."))

    sessions = home / ".local" / "state" / "memdir" / "hook-sessions"
    for runs, extra in enumerate([[], ["--continue"]]):
        if runs:
            # A new question for the continued session: the deploy memory is new to it.
            for path in sessions.glob("*.json"):
                path.unlink()
        run = run_agent(
            claude_code,
            home=home,
            cwd=project,
            env_extra={"ENABLE_TOOL_SEARCH": "false"},
            prompt=DEPLOY_QUERY,
            responder=respond,
            timeout=120.0,
            args=[*with_mcp(tmp_path, memory), *extra],
        )
        assert run.returncode == 0, f"the agent failed ({run.returncode}):\n{run.stderr[-2000:]}"
        given = hook_context(asked[-1])
        assert given is not None and "Deploys go through the staging cluster first." in given
        answer = tool_results(asked[-1])[f"toolu_recall_{runs}"]
        assert answer == "No memories recalled: none relevant that this session has not seen."
    log = home / ".local" / "state" / "memdir" / "hook.log"
    assert not log.exists(), log.read_text()


def test_the_hook_asks_no_model_with_the_agents_key(claude_code: Path, tmp_path: Path) -> None:
    """Claude Code gives its hooks its own API key (and base URL): with no selector named in
    ``memdir.toml`` the hook recalls offline, and memdir sends the API nothing."""
    home, project, memory = scratch_project(tmp_path)
    (memory / "memdir.toml").unlink()
    expected = recall(DEPLOY_QUERY, memory, Session()).attachment
    run = run_agent(claude_code, home=home, cwd=project, prompt=DEPLOY_QUERY, timeout=120.0)
    assert run.returncode == 0, f"the agent failed ({run.returncode}):\n{run.stderr[-2000:]}"
    context = hook_context(main_request(run))
    assert context is not None and context.startswith(expected)
    systems = [json.dumps(r.get("system", "")) for r in run.requests]
    assert not any(SELECTOR_PROMPT_START in s for s in systems), "memdir asked the model"
    log = home / ".local" / "state" / "memdir" / "hook.log"
    assert not log.exists(), log.read_text()


# --- the whole loop: the hook, the PostToolUse hook and `memdir mcp` in one session -------------

LAUNCH = (
    "---\nname: launch date\ndescription: the product launch is due on March 3\n"
    "type: project\n---\nThe product launch is due on March 3.\n"
)
#: The line the model adds to MEMORY.md itself, as Claude Code's prompt tells it to.
AGENTS_LAUNCH_LINE = "- [Launch](launch.md) — due March 3, agreed with sales"
LAUNCH_QUESTION = "when is the product launch due?"


def test_one_session_the_model_memdir_and_the_hooks_agree(
    claude_code: Path, tmp_path: Path
) -> None:
    """Issue 29's loop, with the prompt hook, the PostToolUse hook and ``memdir mcp`` all set up
    as the docs say: the model creates a memory over MCP and adds its own index line with Edit
    (one entry stays: its own), moves the date under that hand-written line (the line is kept,
    and lint reports the hook's stale date), and the next prompt's hook gives nothing the model
    wrote this session. The first model request already carries memdir's tools."""
    home, project, memory = scratch_project(tmp_path)
    index = memory / "MEMORY.md"
    settings = json.loads((home / ".claude" / "settings.json").read_text())
    post = f"{sys.executable} -m memdir hook post-tool-use"
    settings["hooks"]["PostToolUse"] = [
        {"matcher": "Write|Edit|MultiEdit", "hooks": [{"type": "command", "command": post}]}
    ]
    (home / ".claude" / "settings.json").write_text(json.dumps(settings))

    def use(ident: str, name: str, data: dict[str, object]) -> Body:
        return message({"type": "tool_use", "id": ident, "name": name, "input": data})

    launch = "/memories/launch.md"
    edit = {
        "file_path": str(index),
        "old_string": "- [Tea](tea.md)\n",
        "new_string": f"- [Tea](tea.md)\n{AGENTS_LAUNCH_LINE}\n",
    }
    moved = ("the product launch is due on March 3", "the product launch is due on May 5")
    body_moved = ("The product launch is due on March 3.", "The product launch is due on May 5.")
    script: list[Body] = [
        # Prompt 1: write the memory through memdir, then index it as Claude Code says.
        use("toolu_create", MEMORY_TOOL,
            {"command": "create", "path": launch, "file_text": LAUNCH}),
        use("toolu_read", "Read", {"file_path": str(index)}),
        use("toolu_edit", "Edit", edit),
        message(text("Saved.")),
        # Prompt 2: the date moved.
        use("toolu_desc", MEMORY_TOOL, {"command": "str_replace", "path": launch,
                                        "old_str": moved[0], "new_str": moved[1]}),
        use("toolu_body", MEMORY_TOOL, {"command": "str_replace", "path": launch,
                                        "old_str": body_moved[0], "new_str": body_moved[1]}),
        message(text("Updated.")),
        # Prompt 3: a question the launch memory answers.
        message(text("May 5.")),
    ]  # fmt: skip
    asked: list[Body] = []

    def respond(body: Body) -> Body:
        if not body.get("tools"):
            return message(text("ok"))  # side requests: titles, summaries
        asked.append(body)
        return script.pop(0) if script else message(text("Done."))

    run = run_agent(
        claude_code,
        home=home,
        cwd=project,
        env_extra={"ENABLE_TOOL_SEARCH": "false"},
        prompt=[
            "remember that the product launch is due on March 3",
            "the product launch moved to May 5, update the memory",
            LAUNCH_QUESTION,
        ],
        responder=respond,
        timeout=240.0,
        args=[
            *with_mcp(tmp_path, memory),
            "--permission-mode",
            "acceptEdits",
        ],
    )
    assert run.returncode == 0, f"the agent failed ({run.returncode}):\n{run.stderr[-2000:]}"
    assert not script, f"the agent stopped early: {len(script)} scripted answers left"
    # The first model request already lists memdir's tools (tool search off).
    first = {t.get("name") for t in asked[0].get("tools") or []}
    assert {MEMORY_TOOL, RECALL_TOOL} <= first
    results = tool_results(asked[-1])
    # memdir indexed the memory and said so; the model's own line then replaced memdir's.
    assert results["toolu_create"] == (
        "File created successfully at: /memories/launch.md; indexed in MEMORY.md at line 3 "
        "(no need to add a line)"
    )
    entries = [line for line in index.read_text().splitlines() if "(launch.md)" in line]
    assert entries == [AGENTS_LAUNCH_LINE]
    # The description moved under the hand-written line: kept, and the result says so ...
    assert results["toolu_desc"].endswith(
        "\nmemdir: MEMORY.md line 3 kept (written by hand; its hook may now disagree with the "
        "new description)."
    ), results["toolu_desc"]
    assert "May 5" in (memory / "launch.md").read_text()
    # ... and lint reports that the line's date disagrees with the description.
    lint = subprocess.run(
        [sys.executable, "-m", "memdir", "lint", "--format", "json", str(memory)],
        capture_output=True,
        text=True,
        check=False,
    )
    found = [d for d in json.loads(lint.stdout) if d["code"] == "MEM129"]
    assert [(d["path"], d["line"]) for d in found] == [("MEMORY.md", 3)], lint.stdout
    assert "says 3 where the description of launch.md says 5" in found[0]["message"]
    # The last prompt's hook gives nothing the model wrote through memdir this session, though
    # a fresh session would be given the launch memory for that question.
    assert "launch.md" in {m.rel_path for m in recall(LAUNCH_QUESTION, memory, Session()).surfaced}
    last = "\n".join(texts(asked[-1]))
    assert last.count(LAUNCH_QUESTION) == 1
    given = hook_context(asked[-1]) or ""
    assert "The product launch is due" not in given, given[:2000]
    # The hooks' log holds the one thing the PostToolUse hook did, and no failure.
    log = (home / ".local" / "state" / "memdir" / "hook.log").read_text()
    assert [line.split(" ", 2)[2] for line in log.splitlines()] == [
        "dropped memdir's line for launch.md"
    ], log
