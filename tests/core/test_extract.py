"""memdir.extract.loop and memdir.extract.transcript: the extraction agent through the real
anthropic SDK.

The API is a scripted fake behind ``httpx2.MockTransport``: each request gets the next scripted
response (a function of the request body), and every request body is kept so the tests can check
what was sent (tools, system prompt, tool results). No network, no sleeps.
"""

from __future__ import annotations

import json
import multiprocessing
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anthropic
import fake_anthropic
import httpx2
import pytest
from memdir.agent.topic import load_topic
from memdir.config import Settings
from memdir.extract import loop as extract_module
from memdir.extract.loop import run_extraction
from memdir.extract.prompt import DO_NOT_SAVE, MEMORY_TYPE_GUIDE
from memdir.extract.results import ExtractionProgress, dumps, format_result, merge_changes
from memdir.extract.sandbox import (
    DRY_RUN_PREFIX,
    EXTRACT_LOCK_NAME,
    extraction_lock,
    sweep_dry_run_leftovers,
)
from memdir.extract.tools import ProjectTools
from memdir.extract.transcript import (
    parse_transcript,
    read_transcript,
    recent_memory_writes,
    shell_write_target,
)
from memdir.lint import lint_directory
from memdir.writing.journal import dir_state
from memdir.writing.results import FileChange
from memhelpers import sdk_answered_by, topic

Body = dict[str, Any]
Step = Callable[[Body], httpx2.Response]


def message(*content: dict[str, Any], stop: str | None = None) -> httpx2.Response:
    return httpx2.Response(200, json=fake_anthropic.message(*content, stop=stop))


def text(value: str) -> dict[str, Any]:
    return {"type": "text", "text": value}


def use(name: str, data: dict[str, Any], ident: str = "toolu_1") -> dict[str, Any]:
    return {"type": "tool_use", "id": ident, "name": name, "input": data}


def memory(ident: str = "toolu_1", **data: Any) -> dict[str, Any]:
    return use("memory", data, ident)


class FakeAPI:
    """Answers each request with the next step of a script; keeps every request body."""

    def __init__(self, *steps: Step | httpx2.Response) -> None:
        self.steps = list(steps)
        self.requests: list[Body] = []
        self.paths: list[str] = []

    def handle(self, request: httpx2.Request) -> httpx2.Response:
        body: Body = json.loads(request.content)
        self.requests.append(body)
        self.paths.append(request.url.path)
        if len(self.requests) > len(self.steps):
            return httpx2.Response(
                500,
                json={
                    "type": "error",
                    "error": {"type": "api_error", "message": "script exhausted"},
                },
            )
        step = self.steps[len(self.requests) - 1]
        return step if isinstance(step, httpx2.Response) else step(body)

    def client(self) -> anthropic.AsyncAnthropic:
        return anthropic.AsyncAnthropic(
            api_key="test",
            base_url="http://fake-api.test",
            max_retries=0,
            http_client=httpx2.AsyncClient(transport=httpx2.MockTransport(self.handle)),
        )

    def tool_results(self, request: int) -> list[dict[str, Any]]:
        """The tool_result blocks the agent sent with request number ``request`` (0-based)."""
        last = self.requests[request]["messages"][-1]
        assert last["role"] == "user"
        return [b for b in last["content"] if b["type"] == "tool_result"]


def record(kind: str, content: object, **extra: Any) -> str:
    return json.dumps({"type": kind, "message": {"role": kind, "content": content}, **extra})


@pytest.fixture
def dirs(tmp_path: Path) -> tuple[Path, Path, Path]:
    """(memory dir, project dir, transcript) with one existing memory and a plain conversation."""
    memory_dir = tmp_path / "memory"
    memory_dir.mkdir()
    (memory_dir / "release-freeze.md").write_text(
        topic("release-freeze", "trunk is frozen during app-store review"), encoding="utf-8"
    )
    (memory_dir / "MEMORY.md").write_text(
        "- [Release freeze](release-freeze.md) — trunk is frozen during app-store review\n",
        encoding="utf-8",
    )
    project = tmp_path / "project"
    (project / "src").mkdir(parents=True)
    (project / "src" / "app.py").write_text("def main():\n    return 'pnpm'\n", encoding="utf-8")
    transcript = tmp_path / "session.jsonl"
    transcript.write_text(
        "\n".join(
            [
                record("user", "Always use pnpm, never npm, in this repo.", cwd=str(project)),
                record("assistant", [text("Understood, I will use pnpm.")]),
            ]
        )
        + "\n",
        encoding="utf-8",
    )
    return memory_dir, project, transcript


@pytest.fixture
def scratch(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The temp dir of this process (outside ``tmp_path``, whose tree the tests compare)."""
    scratch = tmp_path_factory.mktemp("scratch")
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))
    return scratch


#: In the layout the prompt teaches (Claude Code's): ``type`` under ``metadata``.
PNPM = (
    "---\nname: use-pnpm\ndescription: the user wants pnpm, never npm\n"
    "metadata:\n  type: feedback\n---\n"
    "Use pnpm.\n**Why:** the user said so.\n"
)


def tree(top: Path) -> dict[str, bytes]:
    return {
        p.relative_to(top).as_posix(): p.read_bytes()
        for p in sorted(top.rglob("*"))
        if p.is_file() and not p.name.endswith(".lock")
    }


# --- the loop ----------------------------------------------------------------------------------


async def test_views_then_creates_a_memory(dirs: tuple[Path, Path, Path]) -> None:
    memory_dir, _project, transcript = dirs
    api = FakeAPI(
        lambda _body: message(text("Let me look first."), memory(command="view", path="/memories")),
        lambda _body: message(
            memory(command="create", path="/memories/use-pnpm.md", file_text=PNPM)
        ),
        lambda _body: message(text("Saved one feedback memory.")),
    )
    events: list[ExtractionProgress] = []

    async def on_progress(event: ExtractionProgress) -> None:
        events.append(event)

    result = await run_extraction(
        transcript,
        memory_dir,
        client=api.client(),
        settings=Settings(),
        model="claude-test",
        on_progress=on_progress,
    )
    assert result.status == "completed", result.reason
    assert result.turns == 3
    assert result.stop_reason == "end_turn"
    assert result.created == ["use-pnpm.md"]
    assert result.changed == ["MEMORY.md"]
    assert result.summary == "Saved one feedback memory."
    assert (memory_dir / "use-pnpm.md").read_text(encoding="utf-8") == PNPM
    assert "- [Use pnpm](use-pnpm.md) — the user wants pnpm, never npm" in (
        memory_dir / "MEMORY.md"
    ).read_text(encoding="utf-8")
    assert result.usage == {"input_tokens": 300, "output_tokens": 60}
    assert [e.stage for e in events] == [
        "started",
        "turn",
        "tool",
        "turn",
        "tool",
        "turn",
        "finished",
    ]

    # What was sent: only the four tools, the prompt's rules and manifest, the conversation.
    first = api.requests[0]
    assert api.paths == ["/v1/messages"] * 3
    assert first["model"] == "claude-test"
    assert sorted(t["name"] for t in first["tools"]) == ["glob", "grep", "memory", "read"]
    assert {"type": "memory_20250818", "name": "memory"} in first["tools"]
    system = first["system"]
    for name in MEMORY_TYPE_GUIDE:
        assert f"`{name}`" in system
    for item in DO_NOT_SAVE:
        assert item in system
    assert "Read before you write" in system
    assert "- [project] release-freeze.md (" in system
    assert "trunk is frozen during app-store review" in system
    assert "MEMORY.md is the index and is maintained for you" in system
    # Claude Code's memory rules, in memdir's words (docs/agent.md).
    assert "  metadata:\n    type: <user|feedback|project|reference>\n" in system
    assert "ASCII letters, digits and hyphens only" in system
    assert "Work from the conversation alone" in system
    assert "no grepping source files, no git history" in system
    assert "Delete a memory that turns out to be wrong" in system
    assert "Linking to a memory nobody has written yet is fine" in system
    assert "even when the user asks you to remember one of these things" in system
    assert "turn relative dates into absolute ones" in MEMORY_TYPE_GUIDE["project"]
    assert "the approaches they confirmed" in MEMORY_TYPE_GUIDE["feedback"]
    assert "KB" not in system  # the size rule is path B's
    assert "Always use pnpm, never npm" in first["messages"][0]["content"]
    # The view's listing went back as the tool result of the first call.
    (listing,) = api.tool_results(1)
    assert listing["tool_use_id"] == "toolu_1"
    assert listing["content"].startswith(
        "Here're the files and directories up to 2 levels deep in /memories"
    )
    assert "/memories/release-freeze.md" in listing["content"]
    assert "is_error" not in listing
    (created,) = api.tool_results(2)
    assert created["content"] == (
        "File created successfully at: /memories/use-pnpm.md; indexed in MEMORY.md at line 2 "
        "(no need to add a line)"
    )


async def test_writes_outside_the_memory_dir_are_refused(
    dirs: tuple[Path, Path, Path], tmp_path: Path
) -> None:
    memory_dir, project, transcript = dirs
    before = tree(tmp_path)
    attempts = [
        memory("t1", command="create", path="/memories/../escape.md", file_text="x"),
        memory("t2", command="create", path="/etc/evil.md", file_text="x"),
        memory("t3", command="create", path="/memories/%2e%2e/escape.md", file_text="x"),
        memory("t4", command="create", path="/memories/notes.sh", file_text="x"),
        memory(
            "t5",
            command="rename",
            old_path="/memories/release-freeze.md",
            new_path="/memories/../x.md",
        ),
        memory("t6", command="delete", path="/memories"),
        use("read", {"path": "../memory/release-freeze.md"}, "t7"),
        use("write_file", {"path": "/tmp/x", "content": "x"}, "t8"),
        use("read", {"path": str(tmp_path / "session.jsonl")}, "t9"),
    ]
    api = FakeAPI(lambda _body: message(*attempts), lambda _body: message(text("Done.")))
    result = await run_extraction(
        transcript, memory_dir, project_root=project, client=api.client(), settings=Settings()
    )
    assert result.status == "completed"
    results = api.tool_results(1)
    assert [r["tool_use_id"] for r in results] == [f"t{i}" for i in range(1, 10)]
    assert all(r.get("is_error") is True for r in results), results
    assert results[0]["content"] == "Path /memories/../escape.md would escape /memories directory"
    assert results[1]["content"] == "Path must start with /memories, got: /etc/evil.md"
    assert results[5]["content"] == "Cannot delete the /memories directory itself"
    assert "outside the project" in results[6]["content"]
    assert "no tool named 'write_file'" in results[7]["content"]
    assert tree(tmp_path) == before
    assert result.changes == ()
    assert all(call.is_error for call in result.tool_calls)


async def test_the_loop_stops_after_five_turns(dirs: tuple[Path, Path, Path]) -> None:
    memory_dir, _project, transcript = dirs
    api = FakeAPI(*[lambda _body: message(memory(command="view", path="/memories"))] * 9)
    result = await run_extraction(
        transcript, memory_dir, client=api.client(), settings=Settings(), max_turns=50
    )
    assert len(api.requests) == 5
    assert result.turns == 5
    assert result.stop_reason == "max_turns"
    assert result.status == "completed"
    assert len(result.tool_calls) == 5  # the fifth turn's tools ran; no sixth call followed


@pytest.mark.parametrize(
    "last_turn",
    [
        [record("assistant", [use("Write", {"file_path": "{memory}/x.md", "content": "x"})])],
        [
            record(
                "assistant",
                [use("Edit", {"file_path": "x.md", "old_string": "a", "new_string": "b"})],
                cwd="{memory}",
            )
        ],
        [
            record(
                "assistant", [use("MultiEdit", {"file_path": "{memory}/sub/../x.md", "edits": []})]
            )
        ],
        [
            record(
                "assistant",
                [use("memory", {"command": "create", "path": "/memories/x.md", "file_text": "x"})],
            )
        ],
    ],
    ids=["Write", "Edit-relative", "MultiEdit", "memory-tool"],
)
async def test_a_transcript_that_wrote_memory_is_skipped(
    dirs: tuple[Path, Path, Path], last_turn: list[str]
) -> None:
    memory_dir, _project, transcript = dirs
    lines = [line.replace("{memory}", str(memory_dir)) for line in last_turn]
    with transcript.open("a", encoding="utf-8") as handle:
        handle.write(record("user", "remember that", cwd="/somewhere") + "\n")
        handle.write("\n".join(lines) + "\n")
    api = FakeAPI()
    result = await run_extraction(transcript, memory_dir, client=api.client(), settings=Settings())
    assert result.status == "skipped"
    assert "already wrote memory" in (result.reason or "")
    assert len(result.recent_writes) == 1
    assert api.requests == []


async def test_a_memory_write_in_an_earlier_turn_does_not_skip(
    dirs: tuple[Path, Path, Path],
) -> None:
    memory_dir, _project, transcript = dirs
    old = record(
        "assistant", [use("Write", {"file_path": str(memory_dir / "x.md"), "content": "x"})]
    )
    transcript.write_text(
        "\n".join(
            [
                record("user", "first"),
                old,
                record("user", "second"),
                record("assistant", [text("ok")]),
            ]
        )
        + "\n",
        encoding="utf-8",
    )
    api = FakeAPI(lambda _body: message(text("Nothing to save.")))
    result = await run_extraction(transcript, memory_dir, client=api.client(), settings=Settings())
    assert result.status == "completed"
    assert len(api.requests) == 1
    assert format_result(result).startswith("nothing saved")


@pytest.mark.parametrize(
    ("status", "kind", "label"),
    [
        (429, "rate_limit_error", "RateLimitError (HTTP 429)"),
        (500, "api_error", "InternalServerError (HTTP 500)"),
    ],
)
async def test_api_errors_end_the_run_cleanly(
    dirs: tuple[Path, Path, Path], status: int, kind: str, label: str
) -> None:
    memory_dir, _project, transcript = dirs
    failure = httpx2.Response(
        status, json={"type": "error", "error": {"type": kind, "message": "try later"}}
    )
    api = FakeAPI(
        lambda _body: message(
            memory(command="create", path="/memories/use-pnpm.md", file_text=PNPM)
        ),
        failure,
    )
    result = await run_extraction(transcript, memory_dir, client=api.client(), settings=Settings())
    assert result.status == "error"
    assert result.reason is not None
    assert result.reason.startswith(label)
    assert "try later" in result.reason
    # The write made before the error stays, and is reported.
    assert result.created == ["use-pnpm.md"]
    assert (memory_dir / "use-pnpm.md").exists()
    assert format_result(result).startswith(f"error: {label}")


async def test_a_connection_error_and_missing_credentials_are_recorded(
    dirs: tuple[Path, Path, Path],
) -> None:
    memory_dir, _project, transcript = dirs

    def refuse(request: httpx2.Request) -> httpx2.Response:
        raise httpx2.ConnectError("connection refused", request=request)

    client = anthropic.AsyncAnthropic(
        api_key="test",
        base_url="http://fake-api.test",
        max_retries=0,
        http_client=httpx2.AsyncClient(transport=httpx2.MockTransport(refuse)),
    )
    result = await run_extraction(transcript, memory_dir, client=client, settings=Settings())
    assert result.status == "error"
    assert (result.reason or "").startswith("APIConnectionError")


async def test_dry_run_writes_nothing_and_shows_the_writes(
    dirs: tuple[Path, Path, Path], tmp_path: Path, scratch: Path
) -> None:
    memory_dir, _project, transcript = dirs
    before = tree(tmp_path)
    api = FakeAPI(
        lambda _body: message(
            memory(command="create", path="/memories/use-pnpm.md", file_text=PNPM)
        ),
        lambda _body: message(
            memory("a", command="view", path="/memories/use-pnpm.md"),
            memory(
                "b",
                command="str_replace",
                path="/memories/release-freeze.md",
                old_str="Body.",
                new_str="Body, updated.",
            ),
        ),
        lambda _body: message(text("Done.")),
    )
    result = await run_extraction(
        transcript, memory_dir, client=api.client(), settings=Settings(), dry_run=True
    )
    assert result.status == "completed"
    assert result.dry_run
    assert tree(tmp_path) == before
    assert list(scratch.iterdir()) == []  # the sandbox copy is gone
    # The model saw its own (sandboxed) write when it looked again.
    view, edit = api.tool_results(2)
    assert "Use pnpm." in view["content"]
    assert edit["content"].startswith("The memory file has been edited.")
    assert result.created == ["use-pnpm.md"]
    assert sorted(result.changed) == ["MEMORY.md", "release-freeze.md"]
    diffs = {c.path: c.diff for c in result.changes}
    assert "+name: use-pnpm" in diffs["use-pnpm.md"]
    assert "-Body." in diffs["release-freeze.md"]
    assert "+Body, updated." in diffs["release-freeze.md"]
    report = format_result(result)
    assert "would create use-pnpm.md" in report
    assert "dry run: nothing written" in report


def _hold_lock(memory_dir: str, held: Any, release: Any) -> None:
    with extraction_lock(Path(memory_dir)):
        held.set()
        release.wait()


@pytest.mark.processes
async def test_one_extraction_at_a_time_across_processes(dirs: tuple[Path, Path, Path]) -> None:
    memory_dir, _project, transcript = dirs
    context = multiprocessing.get_context("spawn")
    held, release = context.Event(), context.Event()
    holder = context.Process(target=_hold_lock, args=(str(memory_dir), held, release))
    holder.start()
    try:
        assert held.wait(60)
        api = FakeAPI()
        result = await run_extraction(
            transcript, memory_dir, client=api.client(), settings=Settings()
        )
        assert result.status == "busy"
        assert api.requests == []
    finally:
        release.set()
        holder.join()
    assert holder.exitcode == 0
    api = FakeAPI(lambda _body: message(text("Nothing to save.")))
    result = await run_extraction(transcript, memory_dir, client=api.client(), settings=Settings())
    assert result.status == "completed"


async def test_busy_within_one_process(dirs: tuple[Path, Path, Path]) -> None:
    memory_dir, _project, transcript = dirs
    with extraction_lock(memory_dir):
        result = await run_extraction(
            transcript, memory_dir, client=FakeAPI().client(), settings=Settings()
        )
    assert result.status == "busy"
    assert (dir_state(memory_dir) / EXTRACT_LOCK_NAME).exists()
    assert not list(memory_dir.glob(".memdir*"))  # nothing of memdir's in the memory dir


async def test_the_taught_layout_stays_valid_through_edits(dirs: tuple[Path, Path, Path]) -> None:
    memory_dir, _project, transcript = dirs
    api = FakeAPI(
        lambda _body: message(
            memory(command="create", path="/memories/use-pnpm.md", file_text=PNPM)
        ),
        lambda _body: message(
            memory(
                command="str_replace",
                path="/memories/use-pnpm.md",
                old_str="Use pnpm.",
                new_str="Use pnpm everywhere.",
            )
        ),
        lambda _body: message(text("Done.")),
    )
    result = await run_extraction(transcript, memory_dir, client=api.client(), settings=Settings())
    assert result.created == ["use-pnpm.md"], result.tool_calls
    saved = load_topic(memory_dir / "use-pnpm.md", memory_dir)
    assert (saved.name, saved.type, saved.problems) == ("use-pnpm", "feedback", ())
    assert "Use pnpm everywhere." in saved.body
    assert saved.modified is not None  # the edit stamped it, beside the nested type
    assert [
        d for d in lint_directory(memory_dir, Settings()).diagnostics if d.rel_path == "use-pnpm.md"
    ] == []


async def test_prefetch_mode_prompt_and_no_index(dirs: tuple[Path, Path, Path]) -> None:
    memory_dir, _project, transcript = dirs
    api = FakeAPI(
        lambda _body: message(
            memory(command="create", path="/memories/use-pnpm.md", file_text=PNPM)
        ),
        lambda _body: message(text("Done.")),
    )
    index_before = (memory_dir / "MEMORY.md").read_text(encoding="utf-8")
    result = await run_extraction(
        transcript, memory_dir, client=api.client(), settings=Settings(recall_mode="prefetch")
    )
    assert result.created == ["use-pnpm.md"]
    assert "relevance prefetch" in api.requests[0]["system"]
    assert "keep each file under 4 KB, frontmatter included" in api.requests[0]["system"]
    assert "its description to one specific line" in api.requests[0]["system"]
    assert (memory_dir / "MEMORY.md").read_text(encoding="utf-8") == index_before


async def test_project_tools_answer_the_model(dirs: tuple[Path, Path, Path]) -> None:
    # No project_root: it defaults to the transcript's working directory.
    memory_dir, _project, transcript = dirs
    api = FakeAPI(
        lambda _body: message(
            use("read", {"path": "src/app.py"}, "r"),
            use("grep", {"pattern": "pnpm", "glob": "*.py"}, "g"),
            use("glob", {"pattern": "**/*.py"}, "l"),
        ),
        lambda _body: message(text("Nothing to save.")),
    )
    result = await run_extraction(transcript, memory_dir, client=api.client(), settings=Settings())
    assert result.status == "completed"
    read, grep, glob = api.tool_results(1)
    assert read["content"] == "     1\tdef main():\n     2\t    return 'pnpm'"
    assert grep["content"] == "src/app.py:2:     return 'pnpm'"
    assert glob["content"] == "src/app.py"


async def test_broken_and_unknown_transcript_lines_are_tolerated(
    dirs: tuple[Path, Path, Path],
) -> None:
    memory_dir, _project, transcript = dirs
    with transcript.open("a", encoding="utf-8") as handle:
        handle.write('{"type": "file-history-snapshot", "snapshot": {}}\n')
        handle.write('{"type": "summary", "summary": "earlier work", "leafUuid": "x"}\n')
        handle.write("[1, 2]\n")
        handle.write('{"type": "user", "message": {"role": "user", "content": "truncat')
    api = FakeAPI(lambda _body: message(text("Nothing to save.")))
    result = await run_extraction(transcript, memory_dir, client=api.client(), settings=Settings())
    assert result.status == "completed"
    assert len(result.warnings) == 2
    assert "Always use pnpm" in api.requests[0]["messages"][0]["content"]


async def test_empty_transcript_and_missing_files(tmp_path: Path) -> None:
    memory_dir = tmp_path / "memory"
    memory_dir.mkdir()
    empty = tmp_path / "empty.jsonl"
    empty.write_text("", encoding="utf-8")
    api = FakeAPI()
    result = await run_extraction(empty, memory_dir, client=api.client(), settings=Settings())
    assert result.status == "skipped"
    result = await run_extraction(tmp_path / "absent.jsonl", memory_dir, client=api.client())
    assert result.status == "error"
    assert api.requests == []


# --- transcripts -------------------------------------------------------------------------------


def test_transcript_turns_and_writes(tmp_path: Path) -> None:
    memory_dir = tmp_path / "memory"
    lines = [
        record("user", "hi", cwd=str(tmp_path)),
        record(
            "assistant",
            [text("hello"), use("Write", {"file_path": "memory/a.md", "content": "x"})],
            cwd=str(tmp_path),
        ),
        record("user", [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "ok"}]),
        record("user", "meta", isMeta=True),
        record("assistant", [use("Write", {"file_path": "/elsewhere/a.md", "content": "x"})]),
        record("user", "next question"),
        record("assistant", [use("memory", {"command": "view", "path": "/memories"})]),
    ]
    transcript = parse_transcript(lines)
    assert [len(t) for t in transcript.turns()] == [5, 2]
    assert recent_memory_writes(transcript, memory_dir) == []
    writes = recent_memory_writes(transcript, memory_dir, turn_count=2)
    assert [(w.tool, w.path, w.line) for w in writes] == [("Write", "memory/a.md", 2)]


MEM = "/home/u/.claude/projects/p/memory"


@pytest.mark.parametrize(
    ("command", "written"),
    [
        (f"echo hi > {MEM}/a.md", f"{MEM}/a.md"),
        (f"printf '%s' x >>{MEM}/a.md", f"{MEM}/a.md"),
        ("echo x >> memory/b.md", "memory/b.md"),
        (f"sed -i 's/old/new/' {MEM}/a.md", f"{MEM}/a.md"),
        (f"perl -pi -e 's/a/b/' {MEM}/a.md", f"{MEM}/a.md"),
        (f"cd /tmp && cp notes.md {MEM}/", f"{MEM}/"),
        (f"ls\ncp notes.md {MEM}/n.md", f"{MEM}/n.md"),
        (f"cat > {MEM}/h.md <<'EOF'\nbody\nEOF", f"{MEM}/h.md"),
        (f"git log | tee {MEM}/log.md", f"{MEM}/log.md"),
        (f"rm -f {MEM}/old.md", f"{MEM}/old.md"),
        (f"FOO=1 sudo mv /tmp/x.md {MEM}/x.md", f"{MEM}/x.md"),
        (f"dd if=/dev/zero of={MEM}/z.md count=1", f"{MEM}/z.md"),
        (f"echo 'unclosed > {MEM}/a.md", f"{MEM}/a.md"),
        (f"cat {MEM}/a.md", None),
        (f"grep -rn deploy {MEM} | head", None),
        (f"sed -n 1,5p {MEM}/a.md", None),
        (f"ls {MEM} 2>/dev/null", None),
        (f"cp {MEM}/a.md /tmp/backup.md", None),
        (f'echo "a>b" {MEM}/a.md', None),
        ("echo hi > /tmp/memory/a.md", None),
    ],
)
def test_shell_commands_that_write_into_the_memory_dir(command: str, written: str | None) -> None:
    assert shell_write_target(command, "/home/u/.claude/projects/p", [MEM]) == written


def test_a_bash_write_counts_as_the_turn_writing_memory(tmp_path: Path) -> None:
    memory_dir = tmp_path / "memory"
    lines = [
        record("user", "remember that staging resets nightly", cwd=str(tmp_path)),
        record(
            "assistant",
            [use("Bash", {"command": "cat >> memory/staging.md <<'EOF'\nResets nightly\nEOF"})],
            cwd=str(tmp_path),
        ),
        record("user", "and read it back"),
        record("assistant", [use("Bash", {"command": f"cat {memory_dir}/staging.md"})]),
    ]
    transcript = parse_transcript(lines)
    assert recent_memory_writes(transcript, memory_dir) == []
    writes = recent_memory_writes(transcript, memory_dir, turn_count=2)
    assert [(w.tool, w.path, w.line) for w in writes] == [("Bash", "memory/staging.md", 2)]


def test_read_transcript_replaces_bad_bytes(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    path.write_bytes(
        record("user", "caf\u00e9").encode()
        + b"\n"
        + b'{"type": "user", "message": {"role": "user", "content": "\xff"}}\n'
    )
    transcript = read_transcript(path)
    assert [r.text for r in transcript.records] == ["caf\u00e9", "\ufffd"]


def test_merge_changes() -> None:
    merged = merge_changes(
        [
            FileChange("created", "a.md", after="1\n"),
            FileChange("changed", "a.md", before="1\n", after="2\n"),
            FileChange("created", "tmp.md", after="x"),
            FileChange("deleted", "tmp.md", before="x"),
            FileChange("changed", "b.md", before="old\n", after="mid\n"),
            FileChange("changed", "b.md", before="mid\n", after="new\n"),
            FileChange("renamed", "b.md", new_path="c.md"),
            FileChange("changed", "d.md", before="d\n", after="e\n"),
            FileChange("deleted", "d.md", before="e\n"),
        ]
    )
    assert [(c.kind, c.path, c.new_path) for c in merged] == [
        ("created", "a.md", None),
        ("renamed", "b.md", "c.md"),
        ("deleted", "d.md", None),
    ]
    assert "+2" in merged[0].diff
    assert "-old" in merged[1].diff and "+new" in merged[1].diff
    assert "-d" in merged[2].diff


# --- read-only project tools ---------------------------------------------------------------------


def test_project_tools_are_confined_and_capped(tmp_path: Path) -> None:
    project = tmp_path / "project"
    (project / "pkg").mkdir(parents=True)
    (project / ".git").mkdir()
    (project / ".git" / "config").write_text("needle\n", encoding="utf-8")
    (project / "pkg" / "big.txt").write_text(
        "".join(f"needle {i}\n" for i in range(3000)), encoding="utf-8"
    )
    (project / "bin.dat").write_bytes(b"\x00needle")
    (tmp_path / "secret.txt").write_text("needle\n", encoding="utf-8")
    (project / "out.txt").symlink_to(tmp_path / "secret.txt")
    tools = ProjectTools(project)

    refused = [
        tools.call("read", {"path": "../secret.txt"}),
        tools.call("read", {"path": "out.txt"}),
        tools.call("read", {"path": str(tmp_path / "secret.txt")}),
        tools.call("grep", {"pattern": "needle", "path": ".."}),
        tools.call("glob", {"pattern": "../*"}),
        tools.call("read", {"path": "bin.dat"}),
        tools.call("grep", {"pattern": "("}),
        tools.call("read", {"path": 3}),
    ]
    assert all(r.is_error for r in refused), refused

    page = tools.call("read", {"path": "pkg/big.txt", "offset": 10, "limit": 5}).text
    assert page.splitlines()[0] == "    10\tneedle 9"
    assert page.endswith("[lines 15-3000 not shown; use offset]")
    assert (
        len(tools.call("read", {"path": "pkg/big.txt", "limit": 100_000}).text.splitlines()) <= 2001
    )

    grep = tools.call("grep", {"pattern": "needle"}).text
    assert "more than 100 matches" in grep
    assert ".git" not in grep and "secret" not in grep and "bin.dat" not in grep

    assert tools.call("glob", {"pattern": "**/*.txt"}).text == "pkg/big.txt"
    assert tools.call("glob", {"pattern": "*.{dat,txt}"}).text.split("\n") == ["bin.dat"]
    assert tools.call("glob", {"pattern": "*.nothing"}).text == "No files found."


# --- secrets: redaction and the dry-run copy -----------------------------------------------------

#: A key the fake endpoint echoes back; no provider's format, so only knowing it can redact it.
ECHOED_KEY = "local-test-key-4f9a8b7c6d5e"
PROVIDER_TOKEN = "npm_aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3zA5"


def echoing_client(handle: Callable[[httpx2.Request], httpx2.Response]) -> anthropic.AsyncAnthropic:
    return anthropic.AsyncAnthropic(
        api_key=ECHOED_KEY,
        base_url="http://fake-api.test",
        max_retries=0,
        http_client=httpx2.AsyncClient(transport=httpx2.MockTransport(handle)),
    )


def echo_the_key(request: httpx2.Request) -> httpx2.Response:
    key = request.headers.get("x-api-key") or request.headers["authorization"].split()[-1]
    message = f"invalid x-api-key: {key} (with {PROVIDER_TOKEN})"
    return httpx2.Response(
        401, json={"type": "error", "error": {"type": "authentication_error", "message": message}}
    )


async def test_an_error_echoing_the_key_is_redacted_everywhere(
    dirs: tuple[Path, Path, Path], caplog: pytest.LogCaptureFixture
) -> None:
    memory_dir, project, transcript = dirs
    (project / "notes.txt").write_text(f"publish token {PROVIDER_TOKEN}\n", encoding="utf-8")
    calls = 0

    def handle(request: httpx2.Request) -> httpx2.Response:
        nonlocal calls
        calls += 1
        if calls == 1:  # a project file holding a token: its preview reaches the progress
            return message(use("read", {"path": "notes.txt"}))
        return echo_the_key(request)

    events: list[ExtractionProgress] = []
    caplog.set_level("DEBUG", logger="memdir")
    result = await run_extraction(
        transcript,
        memory_dir,
        client=echoing_client(handle),
        settings=Settings(),
        on_progress=events.append,
    )
    assert result.status == "error"
    assert result.reason is not None and result.reason.startswith("AuthenticationError (HTTP 401)")
    assert "invalid x-api-key: [redacted] (with [redacted])" in result.reason
    shown = [
        format_result(result),
        json.dumps(result.to_json()),
        *(e.message for e in events),
        caplog.text,
    ]
    assert "[redacted]" in caplog.text and any("[redacted]" in e.message for e in events)
    for text_ in shown:
        assert ECHOED_KEY not in text_ and PROVIDER_TOKEN not in text_


def test_the_cli_never_prints_an_echoed_key(
    dirs: tuple[Path, Path, Path],
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from memdir.faces.cli import main

    memory_dir, _project, transcript = dirs
    monkeypatch.setenv("ANTHROPIC_API_KEY", ECHOED_KEY)
    # As the CLI makes it: credentials from the environment, the fake endpoint as transport.
    sdk_answered_by(monkeypatch, echo_the_key)
    for extra in ([], ["--json"], ["--dry-run"]):
        assert main(["extract", str(transcript), "--dir", str(memory_dir), *extra]) == 1
        captured = capsys.readouterr()
        assert "[redacted]" in captured.out
        assert ECHOED_KEY not in captured.out + captured.err
        assert PROVIDER_TOKEN not in captured.out + captured.err


async def test_tool_call_inputs_are_reported_redacted_and_run_raw(
    dirs: tuple[Path, Path, Path],
) -> None:
    """The model quotes a token it read: the reported inputs never show it, while the tools
    ran on the raw input (the edit that removes the token matched it; the create holding it
    was refused by the memory tool, as before)."""
    memory_dir, _project, transcript = dirs
    (memory_dir / "publish.md").write_text(
        topic("publish", "how releases are published", body=f"token {PROVIDER_TOKEN}\n"),
        encoding="utf-8",
    )
    api = FakeAPI(
        lambda _body: message(
            memory(
                "toolu_1",
                command="str_replace",
                path="/memories/publish.md",
                old_str=f"token {PROVIDER_TOKEN}",
                new_str="token: in the NPM_TOKEN environment variable",
            ),
            memory(
                "toolu_2",
                command="create",
                path="/memories/npm.md",
                file_text=topic("npm", "the npm token", body=f"{PROVIDER_TOKEN}\n"),
            ),
        ),
        lambda _body: message(text("Done.")),
    )
    result = await run_extraction(transcript, memory_dir, client=api.client(), settings=Settings())
    assert result.status == "completed"
    assert [(c.name, c.is_error) for c in result.tool_calls] == [
        ("memory", False),
        ("memory", True),
    ]
    assert result.tool_calls[0].input["old_str"] == "token [redacted]"
    assert result.tool_calls[1].input["command"] == "create"
    assert "[redacted]" in result.tool_calls[1].input["file_text"]
    assert PROVIDER_TOKEN not in dumps(result) + format_result(result)
    # What was written came from the raw input: the token is gone from the file it was in.
    assert "publish.md" in result.changed and not (memory_dir / "npm.md").exists()
    saved = (memory_dir / "publish.md").read_text(encoding="utf-8")
    assert saved.endswith("token: in the NPM_TOKEN environment variable\n")


def modes(top: Path) -> dict[str, int]:
    found = {".": top.stat().st_mode & 0o777}
    for path in top.rglob("*"):
        if not path.is_symlink():
            found[path.relative_to(top).as_posix()] = path.stat().st_mode & 0o777
    return found


async def test_the_dry_run_copy_is_private_and_removed_on_an_exception(
    dirs: tuple[Path, Path, Path], scratch: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    memory_dir, _project, transcript = dirs
    (memory_dir / "team").mkdir(mode=0o755)
    (memory_dir / "team" / "keys.md").write_text(topic("keys", "where keys live"), "utf-8")
    for path in memory_dir.rglob("*.md"):
        path.chmod(0o644)
    seen: list[dict[str, int]] = []

    def look(_body: Body) -> httpx2.Response:
        [copy] = scratch.iterdir()  # while the run goes on
        seen.append(modes(copy))
        return message(text("Nothing to save."))

    api = FakeAPI(look)
    result = await run_extraction(
        transcript, memory_dir, client=api.client(), settings=Settings(), dry_run=True
    )
    assert result.status == "completed"
    [copy_modes] = seen
    assert copy_modes["memory/team/keys.md"] == 0o600
    assert {mode for rel, mode in copy_modes.items() if rel.endswith(".md")} == {0o600}
    assert {mode for rel, mode in copy_modes.items() if not rel.endswith(".md")} == {0o700}
    assert list(scratch.iterdir()) == []

    def crash(*_args: Any) -> Any:
        raise RuntimeError("the agent loop broke")

    monkeypatch.setattr(extract_module, "_agent_loop", crash)
    with pytest.raises(RuntimeError):
        await run_extraction(
            transcript, memory_dir, client=api.client(), settings=Settings(), dry_run=True
        )
    assert list(scratch.iterdir()) == []


KILLED_RUN = """
import asyncio, os, signal, sys
import anthropic, httpx2
from memdir.config import Settings
from memdir.extract.loop import run_extraction

def die(_request):
    os.kill(os.getpid(), signal.SIGKILL)  # mid-run, with the copy made

client = anthropic.AsyncAnthropic(
    api_key="k", base_url="http://fake-api.test", max_retries=0,
    http_client=httpx2.AsyncClient(transport=httpx2.MockTransport(die)),
)
asyncio.run(run_extraction(
    sys.argv[1], sys.argv[2], client=client, settings=Settings(), dry_run=True
))
"""


@pytest.mark.processes
async def test_a_killed_dry_run_leaves_a_private_copy_the_next_run_removes(
    dirs: tuple[Path, Path, Path], scratch: Path
) -> None:
    import os
    import signal
    import subprocess
    import sys

    memory_dir, _project, transcript = dirs
    (memory_dir / "release-freeze.md").chmod(0o644)
    env = {**os.environ, "TMPDIR": str(scratch)}
    done = subprocess.run(
        [sys.executable, "-c", KILLED_RUN, str(transcript), str(memory_dir)],
        env=env,
        capture_output=True,
        timeout=120,
    )
    assert done.returncode == -signal.SIGKILL, done.stderr
    [left] = scratch.iterdir()
    assert left.name.startswith(DRY_RUN_PREFIX)
    left_modes = modes(left)
    assert left_modes["."] == 0o700  # nobody else can reach what is inside
    assert left_modes["memory/release-freeze.md"] == 0o600
    # The next dry run (in this process: ``scratch`` is its temp dir) sweeps it (its process is
    # gone), then cleans up after itself.
    api = FakeAPI(lambda _body: message(text("Nothing to save.")))
    result = await run_extraction(
        transcript, memory_dir, client=api.client(), settings=Settings(), dry_run=True
    )
    assert result.status == "completed"
    assert list(scratch.iterdir()) == []


def test_the_sweep_keeps_copies_of_live_runs_and_others(tmp_path: Path) -> None:
    import os

    live = tmp_path / f"{DRY_RUN_PREFIX}{os.getpid()}-abc"
    live.mkdir()
    unrelated = tmp_path / f"{DRY_RUN_PREFIX}notapid"
    unrelated.mkdir()
    assert sweep_dry_run_leftovers(str(tmp_path)) == []
    assert live.is_dir() and unrelated.is_dir()
