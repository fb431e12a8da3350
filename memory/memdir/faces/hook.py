"""Claude Code's ``UserPromptSubmit`` hook: recall memories for the prompt, as context.

The agent runs the hook command with a JSON object on stdin for every prompt; what the command
prints as ``hookSpecificOutput.additionalContext`` is given to the model with the prompt. This
module is path B (:func:`memdir.recall.prefetch.recall`) behind that interface: the memory dir is
the one the agent uses for the hook's ``cwd``, the settings are that dir's (the selector offline
unless they name a model), and the session (surfaced files, budget) lives in a state file per
session id (:mod:`memdir.recall.sessions`, shared with ``memdir mcp``), because each hook run is a
new process. The transcript tells which memory files the agent already read or wrote in the
session, or memdir's MCP tools showed it; as on path B, those are not injected. Nothing here raises
for bad input: :func:`user_prompt_submit` returns what to print (or nothing) and why, so the
command can fail open.

Everything the hook is given is untrusted and bounded: stdin (:data:`INPUT_MAX_BYTES`), the
prompt (:data:`memdir.constants.QUERY_MAX_CHARS` of it reach the selector), the transcript (its
tail, a regular file, never blocking; :func:`memdir.extract.transcript.read_transcript`) and the log
(escaped one-line entries, rotated). Concurrent runs of one session take turns on its state
(:func:`session_lock`), so each memory is injected once.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import stat as stat_module
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from memdir.agent.formats import declined
from memdir.agent.paths import locate_memory_dir, state_dir
from memdir.config import Settings, load_settings
from memdir.containment import relative_inside
from memdir.extract.transcript import mcp_memories_seen, memory_writes, read_transcript
from memdir.recall.choice import selector_from_settings
from memdir.recall.prefetch import RecallResult, recall
from memdir.recall.sessions import (
    SessionBusyError,
    open_session,
    record_agent_session,
    session_path,
)
from memdir.recall.surface import Session

EVENT: Final = "UserPromptSubmit"
LOG_FILENAME: Final = "hook.log"
#: Past this size the log is moved to ``hook.log.1`` (one old copy kept): a hook runs every
#: prompt, so an unbounded log would grow forever.
LOG_MAX_BYTES: Final = 1_000_000
#: The hook's stdin is read up to this much; more is refused (fail open). Claude Code sends the
#: prompt in it, so it holds a pasted file or log: 16 MiB is far beyond a real prompt.
INPUT_MAX_BYTES: Final = 16 * 1024 * 1024
#: A log message is cut to this many characters (before escaping, which at most makes each ten),
#: so one entry cannot make the log unbounded.
LOG_LINE_MAX_CHARS: Final = 2000


@dataclass(frozen=True)
class HookInput:
    """The fields of the hook's stdin this hook uses."""

    session_id: str
    prompt: str
    cwd: Path
    transcript_path: Path | None = None


@dataclass(frozen=True)
class HookError:
    """Why the input cannot be used: said once in the log, never to the agent."""

    reason: str


@dataclass(frozen=True)
class HookOutcome:
    """What one hook run prints (``None``: nothing) and what it logs (``None``: nothing)."""

    output: dict[str, object] | None = None
    log: str | None = None
    session_id: str | None = None
    memory_dir: Path | None = None
    result: RecallResult | None = None

    def stdout(self) -> str:
        """The exact stdout: the output as one JSON line, or empty."""
        if self.output is None:
            return ""
        return json.dumps(self.output, ensure_ascii=False) + "\n"


def parse_hook_input(raw: bytes | str) -> HookInput | HookError:
    """Validate the hook's stdin: a JSON object for ``UserPromptSubmit`` with a session id,
    a prompt and an absolute working directory."""
    if len(raw) > INPUT_MAX_BYTES:
        return HookError(f"stdin is over {INPUT_MAX_BYTES:,} bytes: not read")
    if isinstance(raw, bytes):
        try:
            raw = raw.decode("utf-8")
        except UnicodeDecodeError:
            return HookError("stdin is not UTF-8")
    if not raw.strip():
        return HookError("stdin is empty (expected the hook's JSON object)")
    try:
        data = json.loads(raw)
    except json.JSONDecodeError as exc:
        return HookError(f"stdin is not JSON: {exc.msg} at line {exc.lineno}")
    except RecursionError:
        return HookError("stdin is not JSON: nested too deeply")
    if not isinstance(data, dict):
        return HookError(f"stdin is JSON but not an object ({type(data).__name__})")
    event = data.get("hook_event_name", EVENT)
    if event != EVENT:
        return HookError(f"hook_event_name is {event!r}; this command handles {EVENT!r} only")
    for key in ("session_id", "prompt", "cwd"):
        if not isinstance(data.get(key), str):
            found = "missing" if key not in data else f"a {type(data[key]).__name__}"
            return HookError(f"{key} must be a string ({found})")
    if not data["session_id"].strip():
        return HookError("session_id is empty")
    cwd = Path(data["cwd"])
    if not cwd.is_absolute():
        return HookError(f"cwd must be an absolute path, got {data['cwd']!r}")
    transcript = data.get("transcript_path")
    return HookInput(
        session_id=data["session_id"],
        prompt=data["prompt"],
        cwd=cwd,
        transcript_path=Path(transcript) if isinstance(transcript, str) and transcript else None,
    )


#: The agent's tools that read a file named by ``file_path``.
_READ_TOOLS: Final = frozenset({"Read"})


#: Lines of the transcript parsed besides those naming the memory dir: memdir's MCP tool calls
#: (``mcp__<server>__memory``: their paths are ``/memories/…``) and MCP tool results (Claude Code
#: keeps the server's own name with them as ``mcpMeta``).
_MCP_NEEDLES: Final = ("mcp__", '"mcpMeta"')


def files_seen_in_transcript(transcript: Path, memory_dir: Path) -> list[str]:
    """Absolute paths in ``memory_dir`` the agent read or wrote in this session's transcript, or
    was shown by memdir's MCP tools (:func:`memdir.extract.transcript.mcp_memories_seen`): path B
    never surfaces those, and neither does the hook.

    Only the transcript's tail is read (:data:`memdir.extract.transcript.TAIL_MAX_BYTES`; what
    earlier prompts found is in the session file), and of it only lines naming the memory dir or
    an MCP tool are parsed. The transcript must be a regular file, and not a symlink: Claude Code
    writes a plain file under ``~/.claude/projects/`` (the directories above may be links). A
    missing transcript (the first prompt) names nothing; an unreadable one raises ``OSError``.
    """
    roots = dict.fromkeys((os.path.abspath(memory_dir), os.path.realpath(memory_dir)))
    # As the paths appear inside the JSON lines (quotes and backslashes escaped; non-ASCII
    # characters as they are, as the agent writes them, or as \u escapes).
    needles = {json.dumps(root, ensure_ascii=e)[1:-1] for root in roots for e in (True, False)}
    needles.update(_MCP_NEEDLES)
    try:
        records = read_transcript(transcript, follow_links=False, naming=sorted(needles)).records
    except FileNotFoundError:
        return []
    seen = [w.path for w in memory_writes(records, memory_dir) if os.path.isabs(w.path)]
    seen += mcp_memories_seen(records, memory_dir)
    for record in records:
        for use in record.tool_uses:
            path = use.input.get("file_path")
            if use.name in _READ_TOOLS and isinstance(path, str) and os.path.isabs(path):
                seen.append(path)
    return [p for p in seen if relative_inside(memory_dir, p, follow_links=False)]


def hook_output(context: str) -> dict[str, object]:
    return {"hookSpecificOutput": {"hookEventName": EVENT, "additionalContext": context}}


def user_prompt_submit(
    raw: bytes | str,
    *,
    env: Mapping[str, str] | None = None,
    home: Path | None = None,
    now: float | None = None,
) -> HookOutcome:
    """One hook run: parse, locate the memory dir, recall with the session kept on disk.

    Raises only for bugs; every expected failure (bad input, no memory dir, an unwritable state
    dir) is an outcome with nothing to print and a line to log.
    """
    env = os.environ if env is None else env
    home = home or Path.home()
    now = time.time() if now is None else now
    parsed = parse_hook_input(raw)
    if isinstance(parsed, HookError):
        return HookOutcome(log=parsed.reason)
    sid = parsed.session_id
    location = locate_memory_dir(parsed.cwd, env=env, home=home)
    directory = location.memory_dir
    if not location.enabled:
        why = "; ".join(location.notes) or "switched off"
        return HookOutcome(log=f"auto memory is off for {parsed.cwd}: {why}", session_id=sid)
    if directory is None or not directory.is_dir():
        shown = directory or location.prefix_pattern or location.slug
        return HookOutcome(
            log=f"no memory dir for {parsed.cwd} (looked for {shown})", session_id=sid
        )
    notes: list[str] = []
    settings: Settings = load_settings(directory, location.project_root)
    notes.extend(f"settings: {error}" for error in settings.errors)
    notice = declined(directory, settings.any_format)
    if notice is not None:
        # Another agent's memory: nothing of it is injected as Claude Code's memories.
        notes.append(f"{directory}: {notice}")
        return HookOutcome(None, "; ".join(notes), sid, directory)
    states = state_dir(env, home)
    record_agent_session(states, env, sid)
    path = session_path(states, parsed.session_id)
    try:
        with open_session(path, now, notes) as session:
            result = _recall_in_session(parsed, directory, settings, session, env, now, notes)
    except SessionBusyError as exc:
        notes.append(str(exc))
        return HookOutcome(None, "; ".join(notes), sid, directory)
    output = hook_output(result.attachment) if result.attachment else None
    return HookOutcome(output, "; ".join(notes) or None, sid, directory, result)


def _recall_in_session(
    parsed: HookInput,
    directory: Path,
    settings: Settings,
    session: Session,
    env: Mapping[str, str],
    now: float,
    notes: list[str],
) -> RecallResult:
    """Recall for the prompt in the session (held under its lock), after what the transcript
    shows the agent has seen."""
    if parsed.transcript_path is not None:
        try:
            session.mark_read(files_seen_in_transcript(parsed.transcript_path, directory))
        except OSError as exc:
            notes.append(f"cannot read transcript {parsed.transcript_path}: {exc.strerror or exc}")
    target = settings.agent_target
    # Fast and free unless asked: Claude Code gives hooks its own API key, and `auto` would make
    # that a paid, blocking model call before every prompt. `selector = "anthropic"` asks.
    selector = selector_from_settings(settings, env=env, target=target, auto_uses_key=False)
    result = recall(
        parsed.prompt,
        directory,
        session,
        selector=selector,
        settings=settings,
        trigger_rule=settings.trigger,
        target=target,
        now=now,
    )
    if result.degraded:
        notes.append(f"selector: {result.degraded}")
    return result


#: Characters a log line shows as escapes: C0 and C1 controls (newlines, ESC of ANSI
#: sequences), DEL, line and paragraph separators, and format characters (bidi overrides, tag
#: characters, zero-width ones), which would forge or hide text in a terminal or an editor.
_UNSAFE_IN_LOG = re.compile(
    "[\\\\\x00-\x1f\x7f-\x9f\u00ad\u061c\u115f\u1160\u180e\u200b-\u200f\u2028-\u202e"
    "\u2060-\u206f\ufeff\ufff9-\ufffb\U000e0000-\U000e0fff\ud800-\udfff]"
)


_SHORT_ESCAPES: Final = {"\\": "\\\\", "\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _escape_char(match: re.Match[str]) -> str:
    char = match.group()
    if char in _SHORT_ESCAPES:
        return _SHORT_ESCAPES[char]
    code = ord(char)
    return (
        f"\\x{code:02x}"
        if code < 0x100
        else f"\\u{code:04x}"
        if code < 0x10000
        else f"\\U{code:08x}"
    )


def escape_log(text: str) -> str:
    """``text`` as one safe line: backslashes doubled, control and invisible characters (a
    newline, an ANSI escape, a bidi override) written as ``\\xNN``/``\\uNNNN`` escapes."""
    return _UNSAFE_IN_LOG.sub(_escape_char, text)


def log_line(session_id: str | None, line: str, now: float | None = None) -> str:
    """One log entry: time, session id and message, each cut (the message to
    :data:`LOG_LINE_MAX_CHARS` characters, the id to 200) and escaped, ending in one newline."""
    moment = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(now))
    who = f" session={escape_log(session_id[:200])}" if session_id else ""
    if len(line) > LOG_LINE_MAX_CHARS:
        line = f"{line[:LOG_LINE_MAX_CHARS]} …[{len(line) - LOG_LINE_MAX_CHARS:,} more characters]"
    return f"{moment}{who} {escape_log(line)}\n"


def append_log(states: Path, session_id: str | None, line: str, now: float | None = None) -> None:
    """Append one entry (:func:`log_line`) to ``<state dir>/hook.log``, rotated to
    ``hook.log.1`` past :data:`LOG_MAX_BYTES`; a symlink named ``hook.log`` is not followed.

    Never raises: the log is how a failing hook explains itself, not another way to fail.
    """
    entry = log_line(session_id, line, now).encode("utf-8", "backslashreplace")
    log = states / LOG_FILENAME
    flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0)
    flags |= getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NONBLOCK", 0)
    with contextlib.suppress(OSError):
        states.mkdir(parents=True, exist_ok=True)
        with contextlib.suppress(FileNotFoundError):
            if log.lstat().st_size > LOG_MAX_BYTES:
                os.replace(log, log.with_name(LOG_FILENAME + ".1"))
        fd = os.open(log, flags, 0o600)
        try:
            if stat_module.S_ISREG(os.fstat(fd).st_mode):
                os.write(fd, entry)
        finally:
            os.close(fd)
