"""Agent sessions kept on disk: what one Claude Code session has been given, shared by the faces.

Each prompt hook run is a new process, and ``memdir mcp`` is another; both recall for the same
agent session, so what it has been given (surfaced files, files it read, the budget: a
:class:`~memdir.recall.surface.Session`) is kept in one file per session id under the per-user
state dir (:func:`session_path`), read and written under the session's lock
(:func:`open_session`). The hook knows the session id from its input; the MCP server from the
agent (:func:`agent_session_id`). Servers that name sessions for many clients (HTTP, the
language server) keep theirs in memory instead (:class:`~memdir.recall.surface.SessionStore`).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import re
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Final

from memdir import constants as C
from memdir.recall.surface import Session

#: Below the state dir: one session file per session id.
SESSIONS_DIRNAME: Final = "hook-sessions"
#: Below the sessions dir: one file per running agent process (its pid), naming the session the
#: agent's last prompt belongs to (:func:`record_agent_session`).
AGENTS_DIRNAME: Final = "agents"
#: Session files untouched this long are removed when a new session starts (agent sessions are
#: resumed rarely after that, and a resumed one merely starts a fresh budget).
SESSION_MAX_AGE_SECONDS: Final = 30 * 86_400
#: A run waits this long for another run of the same session to finish with the session's state
#: (a selector call is cut at 10 s), then gives up: a duplicate is worse.
SESSION_LOCK_TIMEOUT_SECONDS: Final = 30.0
LOCK_SUFFIX: Final = ".lock"
#: Session ids longer than this (or with other characters than these) are shortened and hashed.
_SAFE_ID = re.compile(r"[A-Za-z0-9_-]{1,100}")
#: The environment variable of Claude Code's hooks naming the agent process (the MCP servers it
#: starts are its children).
AGENT_PID_ENV: Final = "CLAUDE_PID"


def session_file_name(session_id: str) -> str:
    """A file name for any session id: the id itself when it is safe (the agent's are UUIDs),
    else its safe characters and a hash, so two ids never share a file."""
    if _SAFE_ID.fullmatch(session_id):
        return f"{session_id}.json"
    kept = re.sub(r"[^A-Za-z0-9_-]+", "_", session_id)[:40].strip("_") or "session"
    digest = hashlib.sha256(session_id.encode("utf-8", "surrogatepass")).hexdigest()[:16]
    return f"{kept}-{digest}.json"


def session_path(states: Path, session_id: str) -> Path:
    return states / SESSIONS_DIRNAME / session_file_name(session_id)


def load_session(path: Path) -> tuple[Session, str | None]:
    """The saved session, or a new one and why the saved one could not be used."""
    try:
        return Session.load(path), None
    except (OSError, ValueError) as exc:
        text = "not UTF-8" if isinstance(exc, UnicodeDecodeError) else str(exc).splitlines()[0]
        return Session(), f"session file {path} unusable ({text}): starting a new session"


def save_session(session: Session, path: Path, now: float) -> None:
    """Write the session atomically; the first write of a session also prunes old ones."""
    directory = path.parent
    fresh = not path.exists()
    directory.mkdir(parents=True, exist_ok=True)
    session.save(path)
    if fresh:
        prune_sessions(directory, now)


def prune_sessions(directory: Path, now: float) -> None:
    """Remove session files and agent pointers untouched for :data:`SESSION_MAX_AGE_SECONDS`,
    and lock files of sessions gone or as old (a lock file keeps its creation time: only its
    session's age says whether it is in use)."""
    for old in [*directory.glob("*.json"), *(directory / AGENTS_DIRNAME).glob("*")]:
        with contextlib.suppress(OSError):
            if now - old.stat().st_mtime > SESSION_MAX_AGE_SECONDS:
                old.unlink()
    for lock in directory.glob("*.json" + LOCK_SUFFIX):
        with contextlib.suppress(OSError):
            if (
                now - lock.stat().st_mtime > SESSION_MAX_AGE_SECONDS
                and not lock.with_suffix("").exists()
            ):
                lock.unlink()


class SessionBusyError(Exception):
    """Another run of the same session held its state past the timeout."""


@contextlib.contextmanager
def session_lock(path: Path, timeout: float | None = None) -> Iterator[str | None]:
    """Hold the lock of the session file ``path`` (``<path>.lock``) for one load → recall →
    save, so concurrent runs of one session (prompts sent in quick succession, a retried hook,
    the MCP server's recall beside the hook's) never both inject a memory.

    Yields None, or why it runs unlocked: when the state dir cannot be written, nothing can be
    saved either, and the memories still go out. Raises :class:`SessionBusyError` after
    ``timeout`` (default :data:`SESSION_LOCK_TIMEOUT_SECONDS`).
    """
    from filelock import FileLock, Timeout  # imported here: most CLI commands never lock

    timeout = SESSION_LOCK_TIMEOUT_SECONDS if timeout is None else timeout
    lock = FileLock(str(path) + LOCK_SUFFIX, timeout=timeout)
    problem: str | None = None
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        lock.acquire()
    except Timeout:
        raise SessionBusyError(
            f"another run of this session held {lock.lock_file} for {timeout:g}s: nothing injected"
        ) from None
    except OSError as exc:
        problem = f"cannot lock session {path}: {exc.strerror or exc}"
    try:
        yield problem
    finally:
        if problem is None:
            lock.release()


@contextlib.contextmanager
def open_session(path: Path, now: float, notes: list[str]) -> Iterator[Session]:
    """The session of ``path`` for one recall: locked, loaded, and saved when it changed.

    What goes wrong short of the lock (a corrupt file: a new session; an unwritable state dir:
    nothing saved) is appended to ``notes``, and the recall goes on. Raises
    :class:`SessionBusyError` when another run holds the session too long.
    """
    with session_lock(path) as unlocked:
        if unlocked:
            notes.append(unlocked)
        session, problem = load_session(path)
        if problem:
            notes.append(problem)
        before = session.to_json()
        yield session
        if session.to_json() != before:
            try:
                save_session(session, path, now)
            except OSError as exc:
                # The memories still go out; the next prompt may repeat them, so say why.
                notes.append(f"cannot save session {path}: {exc.strerror or exc}")


# --- which agent session a server serves ------------------------------------------------------


def agent_pointer_path(states: Path, agent_pid: int) -> Path:
    return states / SESSIONS_DIRNAME / AGENTS_DIRNAME / str(agent_pid)


def process_start_ticks(pid: int) -> int | None:
    """When process ``pid`` started, in clock ticks since boot (``/proc/<pid>/stat``), or None
    where there is no ``/proc``: with the pid, it names one process, never a later one that
    got the same pid."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_bytes()
        # The name, in parentheses, may hold spaces: the fields follow the last ")".
        return int(stat[stat.rindex(b")") + 2 :].split()[19])
    except (OSError, ValueError, IndexError):
        return None


def record_agent_session(states: Path, env: Mapping[str, str], session_id: str) -> None:
    """Note that the agent process of this hook run (``CLAUDE_PID``) is now in ``session_id``.

    An MCP server the agent started keeps the session id it was started with, and that goes
    stale: after ``/clear`` the agent is in a new session, and ``claude --continue`` starts its
    servers under a fresh id before it resumes the old session. The hook runs at every prompt,
    with the current id, so it leaves it here for the agent's servers, with the agent's start
    (:func:`process_start_ticks`) so that no later process with the same pid takes it for its
    own. Never raises.
    """
    pid = env.get(AGENT_PID_ENV, "").strip()
    if not pid.isdecimal() or not session_id:
        return
    note = json.dumps({"session_id": session_id, "agent_start": process_start_ticks(int(pid))})
    path = agent_pointer_path(states, int(pid))
    with contextlib.suppress(OSError):
        if path.read_text(encoding="utf-8") == note:
            return
    with contextlib.suppress(OSError):
        from memdir.writing.files import write_atomic

        path.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(path, note)


def agent_session_id(
    states: Path, env: Mapping[str, str], agent_pid: int, started: float
) -> str | None:
    """The Claude Code session an MCP server started by process ``agent_pid`` (its parent) at
    time ``started`` serves now, or None when the agent does not say.

    The agent's hook says which session its last prompt belongs to (:func:`record_agent_session`):
    that is taken when the note names this very agent process (its start matches), or, where
    process starts are not known, when it was written after the server started. Otherwise the id
    the agent gave the server when it started it (:data:`memdir.constants.AGENT_SESSION_ENV`).
    """
    path = agent_pointer_path(states, agent_pid)
    with contextlib.suppress(OSError, ValueError):
        note = json.loads(path.read_text(encoding="utf-8"))
        noted = note.get("session_id") if isinstance(note, dict) else None
        if isinstance(noted, str) and noted.strip():
            agent_start = process_start_ticks(agent_pid)
            if agent_start is not None:
                if note.get("agent_start") == agent_start:
                    return noted
            elif path.stat().st_mtime >= started:
                return noted
    return env.get(C.AGENT_SESSION_ENV, "").strip() or None
