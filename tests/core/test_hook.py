"""Claude Code's UserPromptSubmit hook over memdir's recall: input parsing, the memory dir found
from ``cwd``, per-session dedupe and budget kept on disk, Chinese prompts, and failing open."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from fake_anthropic import FakeAnthropic, message, text
from memdir.agent.paths import locate_memory_dir, state_dir
from memdir.faces import hook
from memdir.faces.hook import (
    HookError,
    HookInput,
    parse_hook_input,
    user_prompt_submit,
)
from memdir.recall.sessions import (
    AGENTS_DIRNAME,
    SESSIONS_DIRNAME,
    agent_pointer_path,
    process_start_ticks,
    session_file_name,
    session_path,
)
from memdir.recall.surface import Session
from memhelpers import topic

NOW = 1_700_100_000.0
DEPLOY = topic(
    "deploy",
    "how to deploy the staging server with kubectl",
    body="Deploy staging with `make deploy-staging`; never on Fridays.\n",
)
TEA = topic("茶", "用户喜欢喝绿茶，不喜欢咖啡", "user", "用户每天下午喝绿茶。\n")
INDEX = "- [Deploy](deploy.md) — staging deploys\n- [茶](tea.md) — 绿茶\n"


class Project:
    """A scratch home with the agent's memory dir for a project, and the hook's input for it."""

    def __init__(self, tmp_path: Path) -> None:
        self.home = tmp_path / "home"
        self.cwd = tmp_path / "proj"
        self.cwd.mkdir(parents=True)
        self.env: dict[str, str] = {}
        found = locate_memory_dir(self.cwd, env=self.env, home=self.home).memory_dir
        assert found is not None
        self.memory = found

    def write(self, files: dict[str, str | bytes]) -> None:
        self.memory.mkdir(parents=True, exist_ok=True)
        for name, content in files.items():
            path = self.memory / name
            if isinstance(content, bytes):
                path.write_bytes(content)
            else:
                path.write_text(content, encoding="utf-8")

    def stdin(self, prompt: str, session_id: str = "sess-1", **extra: object) -> str:
        data = {
            "session_id": session_id,
            "transcript_path": str(self.home / "t.jsonl"),
            "cwd": str(self.cwd),
            "hook_event_name": "UserPromptSubmit",
            "prompt": prompt,
            **extra,
        }
        return json.dumps(data, ensure_ascii=False)

    def run(self, prompt: str, session_id: str = "sess-1") -> hook.HookOutcome:
        return user_prompt_submit(
            self.stdin(prompt, session_id), env=self.env, home=self.home, now=NOW
        )

    @property
    def states(self) -> Path:
        return state_dir(self.env, self.home)


@pytest.fixture
def project(tmp_path: Path) -> Project:
    made = Project(tmp_path)
    made.write({"MEMORY.md": INDEX, "deploy.md": DEPLOY, "tea.md": TEA})
    return made


def context_of(outcome: hook.HookOutcome) -> str:
    assert outcome.output is not None, outcome.log
    specific = outcome.output["hookSpecificOutput"]
    assert isinstance(specific, dict)
    assert specific["hookEventName"] == "UserPromptSubmit"
    text = specific["additionalContext"]
    assert isinstance(text, str)
    return text


# --- parsing -------------------------------------------------------------------------------------


def test_parse_reads_the_fields() -> None:
    raw = json.dumps(
        {
            "session_id": "abc",
            "transcript_path": "/t/x.jsonl",
            "cwd": "/work/p",
            "hook_event_name": "UserPromptSubmit",
            "prompt": "hi there",
            "permission_mode": "default",
        }
    ).encode()
    assert parse_hook_input(raw) == HookInput(
        "abc", "hi there", Path("/work/p"), Path("/t/x.jsonl")
    )


@pytest.mark.parametrize(
    ("raw", "reason"),
    [
        (b"", "stdin is empty"),
        (b"\xff\xfe{", "not UTF-8"),
        ("{not json", "not JSON"),
        ("[1, 2]", "not an object (list)"),
        ('{"prompt": "x", "cwd": "/p"}', "session_id must be a string (missing)"),
        ('{"session_id": 7, "prompt": "x", "cwd": "/p"}', "session_id must be a string (a int)"),
        ('{"session_id": " ", "prompt": "x", "cwd": "/p"}', "session_id is empty"),
        ('{"session_id": "s", "prompt": "x", "cwd": "rel/p"}', "absolute path"),
        ('{"session_id": "s", "cwd": "/p"}', "prompt must be a string (missing)"),
        (
            '{"session_id": "s", "prompt": "x", "cwd": "/p", "hook_event_name": "Stop"}',
            "handles 'UserPromptSubmit' only",
        ),
    ],
)
def test_parse_errors_are_values(raw: bytes | str, reason: str) -> None:
    parsed = parse_hook_input(raw)
    assert isinstance(parsed, HookError)
    assert reason in parsed.reason


def test_session_ids_become_safe_distinct_file_names() -> None:
    assert session_file_name("0b6c4c5e-1d2f-4a9e-9a53-1f0e7d2c3b4a") == (
        "0b6c4c5e-1d2f-4a9e-9a53-1f0e7d2c3b4a.json"
    )
    odd = ["../../etc/passwd", "a/b", "a_b", "会话", "x" * 300, "."]
    names = [session_file_name(s) for s in odd]
    assert len(set(names)) == len(names)
    for name in names:
        assert "/" not in name and not name.startswith(".") and len(name) < 120
        assert name.endswith(".json")


def test_state_dir_follows_xdg(tmp_path: Path) -> None:
    home = tmp_path / "h"
    assert state_dir({}, home) == home / ".local" / "state" / "memdir"
    assert state_dir({"XDG_STATE_HOME": "/s"}, home) == Path("/s/memdir")
    # A relative value is ignored, as the XDG spec says.
    assert state_dir({"XDG_STATE_HOME": "rel"}, home) == home / ".local" / "state" / "memdir"


# --- recall -------------------------------------------------------------------------------------


def test_recalls_the_relevant_memory_as_additional_context(project: Project) -> None:
    outcome = project.run("how do I deploy the staging server?")
    text = context_of(outcome)
    assert f"Memory: {project.memory / 'deploy.md'}:" in text
    assert "make deploy-staging" in text
    assert "绿茶" not in text
    assert outcome.log is None
    # Exactly the attachment path B would inject, and printed as one JSON line.
    assert outcome.result is not None and text == outcome.result.attachment
    assert json.loads(outcome.stdout()) == outcome.output


def test_dedupe_across_two_prompts_of_one_session(project: Project) -> None:
    first = project.run("how do I deploy the staging server?")
    assert "make deploy-staging" in context_of(first)
    again = project.run("deploy the staging server again please")
    assert again.output is None and again.stdout() == ""
    saved = Session.load(session_path(project.states, "sess-1"))
    assert list(saved.surfaced) == [str((project.memory / "deploy.md").resolve())]
    # Another session id has its own state: the memory surfaces there.
    other = project.run("how do I deploy the staging server?", session_id="sess-2")
    assert "make deploy-staging" in context_of(other)


def test_budget_is_kept_per_session(project: Project) -> None:
    path = session_path(project.states, "tight")
    path.parent.mkdir(parents=True)
    Session(budget_limit=10).save(path)
    # The budget is checked before each file: one memory goes out, then it is spent.
    assert "make deploy-staging" in context_of(project.run("deploy the staging server", "tight"))
    spent = project.run("用户喜欢喝什么茶", "tight")
    assert spent.output is None
    assert spent.result is not None and "budget spent" in spent.result.reason
    assert Session.load(path).spent


def test_chinese_prompt_without_spaces_is_recalled(project: Project) -> None:
    text = context_of(project.run("用户喜欢喝什么茶"))
    assert "用户每天下午喝绿茶。" in text
    assert "deploy" not in text


def test_memdir_toml_settings_are_honoured(project: Project) -> None:
    # The agent's own trigger rule skips a prompt without whitespace.
    project.write({"memdir.toml": 'trigger = "claude-code"\nselector = "lexical"\n'})
    outcome = project.run("用户喜欢喝什么茶")
    assert outcome.output is None
    assert outcome.result is not None and "single word" in outcome.result.reason


def test_auto_selector_is_lexical_without_a_key(project: Project) -> None:
    outcome = project.run("how do I deploy the staging server?")
    assert outcome.result is not None
    assert (outcome.result.selector, outcome.result.degraded) == ("lexical", None)


def test_nothing_relevant_prints_nothing_and_logs_nothing(project: Project) -> None:
    outcome = project.run("ok")
    assert (outcome.output, outcome.log, outcome.stdout()) == (None, None, "")


def tool_line(name: str, **data: object) -> str:
    use = {"type": "tool_use", "id": "toolu_1", "name": name, "input": data}
    message = {"role": "assistant", "content": [use]}
    return json.dumps({"type": "assistant", "message": message, "cwd": "/"}) + "\n"


@pytest.mark.parametrize("tool", ["Read", "Write"])
def test_files_the_agent_read_or_wrote_are_not_injected(project: Project, tool: str) -> None:
    transcript = project.home / "t.jsonl"  # the transcript_path of Project.stdin
    transcript.parent.mkdir(parents=True, exist_ok=True)
    deploy = str(project.memory / "deploy.md")
    extra = {} if tool == "Read" else {"content": "x"}
    lines = [
        json.dumps({"type": "user", "message": {"role": "user", "content": "hi"}}) + "\n",
        tool_line(tool, file_path=deploy, **extra),
        tool_line("Read", file_path="/elsewhere/deploy.md"),
    ]
    transcript.write_text("".join(lines), encoding="utf-8")
    outcome = project.run("how do I deploy the staging server?")
    assert outcome.output is None, outcome.log
    assert outcome.result is not None
    assert not outcome.result.surfaced
    saved = Session.load(session_path(project.states, "sess-1"))
    assert saved.read == {str((project.memory / "deploy.md").resolve())}


def test_a_read_is_found_in_a_memory_dir_with_a_non_ascii_path(tmp_path: Path) -> None:
    # The agent writes non-ASCII characters in its JSON as they are, not as \u escapes.
    project = Project(tmp_path / "José")
    project.write({"MEMORY.md": INDEX, "deploy.md": DEPLOY})
    transcript = project.home / "t.jsonl"
    use = {"type": "tool_use", "id": "t", "name": "Read"}
    use["input"] = {"file_path": str(project.memory / "deploy.md")}
    record = {"type": "assistant", "message": {"role": "assistant", "content": [use]}}
    transcript.write_text(json.dumps(record, ensure_ascii=False) + "\n", encoding="utf-8")
    outcome = project.run("how do I deploy the staging server?")
    assert outcome.output is None, outcome.log


def test_missing_transcript_names_nothing(project: Project) -> None:
    # The first prompt of a session may come before the agent writes its transcript.
    assert not (project.home / "t.jsonl").exists()
    assert "make deploy-staging" in context_of(project.run("how do I deploy the staging server?"))


def test_unreadable_transcript_is_logged_and_ignored(project: Project) -> None:
    (project.home / "t.jsonl").mkdir(parents=True)
    outcome = project.run("how do I deploy the staging server?")
    assert "make deploy-staging" in context_of(outcome)
    assert outcome.log is not None and "cannot read transcript" in outcome.log


# --- failing open -------------------------------------------------------------------------------


@pytest.mark.parametrize("raw", ["", "garbage", '{"session_id": 1}', "\x00\x01"])
def test_bad_input_prints_nothing_and_says_why(project: Project, raw: str) -> None:
    outcome = user_prompt_submit(raw, env=project.env, home=project.home, now=NOW)
    assert outcome.output is None and outcome.stdout() == ""
    assert outcome.log


def test_missing_memory_dir_prints_nothing(tmp_path: Path) -> None:
    empty = Project(tmp_path)
    outcome = empty.run("how do I deploy the staging server?")
    assert outcome.output is None
    assert outcome.log is not None and "no memory dir" in outcome.log
    assert not empty.states.exists()


def test_memory_switched_off_prints_nothing(project: Project) -> None:
    project.env["CLAUDE_CODE_DISABLE_AUTO_MEMORY"] = "1"
    outcome = project.run("how do I deploy the staging server?")
    assert outcome.output is None
    assert outcome.log is not None and "off" in outcome.log


def test_unreadable_memory_file_is_skipped(project: Project) -> None:
    project.write({"deploy.md": b"---\nname: deploy\ndescription: deploy staging\x00\xff\n"})
    outcome = project.run("how do I deploy the staging server?")
    assert outcome.output is None
    assert outcome.result is not None
    assert all(m.rel_path != "deploy.md" for m in outcome.result.surfaced)


def test_unreadable_session_file_starts_a_new_session(project: Project) -> None:
    path = session_path(project.states, "sess-1")
    path.mkdir(parents=True)  # a directory where the file should be
    outcome = project.run("how do I deploy the staging server?")
    assert "make deploy-staging" in context_of(outcome)
    assert outcome.log is not None and "unusable" in outcome.log and "cannot save" in outcome.log


def test_corrupt_session_file_starts_a_new_session(project: Project) -> None:
    path = session_path(project.states, "sess-1")
    path.parent.mkdir(parents=True)
    path.write_text("{not json", encoding="utf-8")
    outcome = project.run("how do I deploy the staging server?")
    assert "make deploy-staging" in context_of(outcome)
    assert outcome.log is not None and "unusable" in outcome.log
    assert Session.load(path).surfaced  # replaced by the new session, atomically


def test_unwritable_state_dir_still_answers(project: Project) -> None:
    project.states.parent.mkdir(parents=True)
    project.states.write_text("a file, not a directory", encoding="utf-8")
    outcome = project.run("how do I deploy the staging server?")
    assert "make deploy-staging" in context_of(outcome)
    assert outcome.log is not None and "cannot save session" in outcome.log


def test_log_appends_and_rotates(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(hook, "LOG_MAX_BYTES", 100)
    hook.append_log(tmp_path, "s1", "first\nline", now=NOW)
    hook.append_log(tmp_path, None, "second", now=NOW)
    log = tmp_path / hook.LOG_FILENAME
    assert log.read_text(encoding="utf-8").splitlines() == [
        "2023-11-16T02:00:00Z session=s1 first\\nline",
        "2023-11-16T02:00:00Z second",
    ]
    hook.append_log(tmp_path, None, "x" * 200, now=NOW)
    hook.append_log(tmp_path, None, "after", now=NOW)
    assert log.read_text(encoding="utf-8") == "2023-11-16T02:00:00Z after\n"
    assert (tmp_path / "hook.log.1").exists()
    # A log that cannot be written is no error.
    hook.append_log(log / "not-a-dir", None, "lost", now=NOW)


def test_old_session_files_are_pruned_when_a_session_starts(project: Project) -> None:
    stale = session_path(project.states, "old")
    stale.parent.mkdir(parents=True)
    Session().save(stale)
    os.utime(stale, (NOW - 40 * 86_400, NOW - 40 * 86_400))
    project.run("how do I deploy the staging server?")
    assert not stale.exists()
    assert session_path(project.states, "sess-1").exists()


# --- another agent's memory ------------------------------------------------------------------


def test_another_agents_memory_is_declined_with_the_notice(tmp_path: Path) -> None:
    """An OpenClaw workspace where the agent keeps its memory: nothing of it is injected as
    Claude Code's memories, and the log says why in the sentence every face uses."""
    from memdir.agent.formats import recognise_dir
    from other_formats import OPENCLAW, make_format_dir

    made = Project(tmp_path)
    make_format_dir(made.memory, {**OPENCLAW, "deploy.md": DEPLOY})
    outcome = made.run("how do I deploy the staging server?")
    assert outcome.output is None and outcome.stdout() == ""
    found = recognise_dir(made.memory)
    assert found is not None
    from memdir.agent.formats import notice

    assert outcome.log == f"{made.memory}: {notice(found)}"
    # Forced by the directory's setting, it is recalled as Claude Code's.
    made.write({"memdir.toml": "any_format = true\n"})
    assert "make deploy-staging" in context_of(made.run("how do I deploy the staging server?"))


# --- fast and free by default ----------------------------------------------------------------


@pytest.fixture
def api(project: Project, monkeypatch: pytest.MonkeyPatch) -> FakeAnthropic:
    """An API key in the hook's environment, as Claude Code gives hooks its own, and a fake
    Messages API on 127.0.0.1 that records every request (the SDK reads its URL from
    ``os.environ``)."""
    fake = FakeAnthropic.shared()
    fake.reset(responder=message(text('{"selected_memories": ["deploy.md"]}')))
    monkeypatch.setenv("ANTHROPIC_BASE_URL", fake.url)
    project.env["ANTHROPIC_API_KEY"] = "sk-ant-test-hook"
    return fake


@pytest.mark.parametrize("settings", [None, 'selector = "auto"\n'])
def test_a_key_in_the_environment_makes_no_model_call(
    project: Project, api: FakeAnthropic, settings: str | None
) -> None:
    if settings is not None:
        project.write({"memdir.toml": settings})
    outcome = project.run("how do I deploy the staging server?")
    assert "make deploy-staging" in context_of(outcome)
    assert outcome.result is not None
    assert (outcome.result.selector, outcome.result.requested_selector) == ("lexical", "lexical")
    assert api.requests == []


def test_a_model_selector_named_in_memdir_toml_is_asked(
    project: Project, api: FakeAnthropic
) -> None:
    project.write({"memdir.toml": 'selector = "anthropic"\n'})
    outcome = project.run("how do I deploy the staging server?")
    assert "make deploy-staging" in context_of(outcome)
    assert outcome.result is not None and outcome.result.selector == "anthropic", outcome.log
    assert len(api.requests) == 1
    assert any("sk-ant-test-hook" in value for value in api.headers[0].values())


# --- what memdir's MCP tools showed the model (the transcript as Claude Code 2.1.328 writes it) -


def mcp_call(
    ident: str, tool: str, data: dict[str, object], result: str, *, server: str | None = "memdir"
) -> str:
    """An MCP tool call and its result as two transcript lines: the tool named
    ``mcp__<server>__<tool>`` by the name the user gave the server, the result with the server's
    own name in ``mcpMeta`` (None: a result without it, as from an older server)."""
    use = {"type": "tool_use", "id": ident, "name": tool, "input": data}
    call = {"type": "assistant", "message": {"role": "assistant", "content": [use]}, "cwd": "/p"}
    content = [{"type": "text", "text": result}]
    block = {"tool_use_id": ident, "type": "tool_result", "content": content}
    record: dict[str, object] = {
        "type": "user",
        "message": {"role": "user", "content": [block]},
        "toolUseResult": content,
        "sourceToolAssistantUUID": "u-1",
    }
    if result.startswith("Error"):
        block["is_error"] = True
    if server is not None:
        info = {"name": server, "version": "0.1.0"}
        record["mcpMeta"] = {"_meta": {"io.modelcontextprotocol/serverInfo": info}}
    return json.dumps(call) + "\n" + json.dumps(record) + "\n"


VIEWED = "Here's the content of /memories/deploy.md with line numbers:\n     1\t---\n"


def recalled(project: Project) -> str:
    return (
        "Retrieved for possible relevance — use only if it actually applies to what the user "
        f"asked.\n\nMemory: {project.memory / 'deploy.md'}:\n\n---\nname: deploy\n---\nDeploy.\n"
    )


def seen_through(project: Project, *lines: str) -> hook.HookOutcome:
    transcript = project.home / "t.jsonl"  # the transcript_path of Project.stdin
    transcript.parent.mkdir(parents=True, exist_ok=True)
    prompt = {"type": "user", "message": {"role": "user", "content": "hi"}}
    transcript.write_text(json.dumps(prompt) + "\n" + "".join(lines), encoding="utf-8")
    return project.run("how do I deploy the staging server?")


@pytest.mark.parametrize(
    ("tool", "data", "result"),
    [
        ("mcp__memdir__memory", {"command": "view", "path": "/memories/deploy.md"}, VIEWED),
        ("mcp__notes__memory", {"command": "view", "path": "/memories/deploy.md"}, VIEWED),
        (
            "mcp__my_memory__memory",
            {"command": "create", "path": "/memories/deploy.md", "file_text": "x"},
            "File created successfully at: /memories/deploy.md",
        ),
        (
            "mcp__memdir__memory",
            {"command": "str_replace", "path": "/memories/deploy.md", "old_str": "a"},
            "The memory file has been edited.",
        ),
        (
            "mcp__memdir__memory",
            {"command": "insert", "path": "/memories/deploy.md", "insert_line": 0},
            "The file /memories/deploy.md has been edited.",
        ),
        (
            "mcp__memdir__memory",
            {
                "command": "rename",
                "old_path": "/memories/old.md",
                "new_path": "/memories/deploy.md",
            },
            "Successfully renamed /memories/old.md to /memories/deploy.md",
        ),
        (
            "mcp__memdir__memory",
            # The label `memdir mcp` gives the dir: its project folder's name.
            {"command": "view", "path": "/memories/deploy.md", "directory": "LABEL"},
            VIEWED,
        ),
        ("mcp__memdir__memory_recall", {"query": "deploys?"}, "RECALLED"),
    ],
)
def test_a_memory_memdirs_mcp_tools_showed_is_not_injected(
    project: Project, tool: str, data: dict[str, object], result: str
) -> None:
    result = recalled(project) if result == "RECALLED" else result
    if data.get("directory") == "LABEL":
        data = {**data, "directory": project.memory.parent.name}
    outcome = seen_through(project, mcp_call("toolu_1", tool, data, result))
    assert outcome.output is None, outcome.log
    saved = Session.load(session_path(project.states, "sess-1"))
    assert saved.read == {str((project.memory / "deploy.md").resolve())}


def test_a_call_whose_result_is_not_in_the_transcript_counts_by_its_input(
    project: Project,
) -> None:
    """The transcript's tail may start after the call's result, or hold a result without the
    server's name (an older server): the call still counts."""
    view = {"command": "view", "path": "/memories/deploy.md"}
    call = mcp_call("toolu_1", "mcp__memdir__memory", view, VIEWED).splitlines()[0] + "\n"
    assert seen_through(project, call).output is None
    unnamed = mcp_call("toolu_2", "mcp__memdir__memory", view, VIEWED, server=None)
    assert seen_through(project, unnamed).output is None


@pytest.mark.parametrize(
    ("tool", "data", "result", "server"),
    [
        # A failed call showed nothing.
        (
            "mcp__memdir__memory",
            {"command": "view", "path": "/memories/deploy.md"},
            "Error: the path /memories/deploy.md does not exist",
            "memdir",
        ),
        # Another server's tool that happens to be called `memory`.
        ("mcp__kg__memory", {"command": "view", "path": "/memories/deploy.md"}, VIEWED, "kg"),
        # A deleted memory, and a listing of the folder, show no memory's content.
        (
            "mcp__memdir__memory",
            {"command": "delete", "path": "/memories/deploy.md"},
            "File deleted",
            "memdir",
        ),
        ("mcp__memdir__memory", {"command": "view", "path": "/memories"}, "deploy.md", "memdir"),
        # Another served dir's file of the same name.
        (
            "mcp__memdir__memory",
            {"command": "view", "path": "/memories/deploy.md", "directory": "billing"},
            VIEWED,
            "memdir",
        ),
        (
            "mcp__memdir__memory",
            {"command": "view", "path": "/memories/deploy.md", "directory": "/elsewhere/memory"},
            VIEWED,
            "memdir",
        ),
        # memdir's search and lint show lines, not the memory as recall would inject it.
        ("mcp__memdir__memory_search", {"pattern": "deploy"}, "deploy.md:7:1: Deploy", "memdir"),
        # A recall of another memory dir.
        (
            "mcp__memdir__memory_recall",
            {"query": "deploys?"},
            "Memory: /elsewhere/memory/deploy.md:\n\nDeploy.\n",
            "memdir",
        ),
    ],
)
def test_mcp_calls_that_showed_no_memory_of_this_dir_are_not_counted(
    project: Project, tool: str, data: dict[str, object], result: str, server: str
) -> None:
    outcome = seen_through(project, mcp_call("toolu_1", tool, data, result, server=server))
    assert "make deploy-staging" in context_of(outcome)


# --- the agent's current session, noted for its MCP servers -------------------------------------


def test_the_hook_notes_the_agents_current_session(project: Project) -> None:
    agent = os.getpid()  # any live process stands for the agent
    project.env["CLAUDE_PID"] = str(agent)
    project.run("how do I deploy the staging server?", session_id="sess-1")
    pointer = agent_pointer_path(project.states, agent)
    note = json.loads(pointer.read_text(encoding="utf-8"))
    assert note == {"session_id": "sess-1", "agent_start": process_start_ticks(agent)}
    # After /clear the agent is in another session: the note follows.
    project.run("what tea do I like?", session_id="sess-2")
    assert json.loads(pointer.read_text(encoding="utf-8"))["session_id"] == "sess-2"


@pytest.mark.parametrize("pid", ["", "abc", "-1", "../x"])
def test_no_note_without_the_agents_pid(project: Project, pid: str) -> None:
    project.env["CLAUDE_PID"] = pid
    project.run("how do I deploy the staging server?")
    assert not (project.states / SESSIONS_DIRNAME / AGENTS_DIRNAME).exists()


def test_old_notes_are_pruned_with_old_sessions(project: Project) -> None:
    stale = agent_pointer_path(project.states, 4242)
    stale.parent.mkdir(parents=True)
    stale.write_text('{"session_id": "old", "agent_start": 1}', encoding="utf-8")
    os.utime(stale, (NOW - 40 * 86_400, NOW - 40 * 86_400))
    project.run("how do I deploy the staging server?")
    assert not stale.exists()
