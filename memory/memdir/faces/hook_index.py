"""Claude Code's ``PostToolUse`` hook on MEMORY.md: memdir's line gives way to the agent's.

Claude Code tells the model to add a line to MEMORY.md after writing a memory, and the model does
so with its own Edit or Write tool, which memdir is not in. When memdir indexed the file already
(the memory was written through memdir's MCP tool), the index now has two entries for it. Run
after every Edit or Write of the project's MEMORY.md, this hook drops memdir's own line
(:meth:`memdir.writing.writer.MemoryWriter.reconcile_index`) and tells the model so. Like the
prompt hook it fails open: anything unexpected prints nothing and is logged.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from memdir import constants as C
from memdir.agent.paths import locate_memory_dir

#: The hook event this module answers.
EVENT: Final = "PostToolUse"
#: Claude Code's tools that write a file, with the file in ``tool_input.file_path``.
WRITE_TOOLS: Final = frozenset({"Edit", "MultiEdit", "Write"})
#: Hook input larger than this is not read (the Write tool's input holds the whole file).
INPUT_MAX_BYTES: Final = 16 * 1024 * 1024


@dataclass(frozen=True)
class IndexHookOutcome:
    """What one run prints (``None``: nothing) and logs (``None``: nothing)."""

    output: dict[str, object] | None = None
    log: str | None = None
    session_id: str | None = None

    def stdout(self) -> str:
        return "" if self.output is None else json.dumps(self.output, ensure_ascii=False) + "\n"


def _written_index(data: object) -> tuple[str | None, Path, Path] | str:
    """(session id, cwd, the file written) from the hook's input, or why it is not for us."""
    if not isinstance(data, dict):
        return "stdin is not a JSON object"
    if data.get("hook_event_name", EVENT) != EVENT:
        return f"hook_event_name is {data.get('hook_event_name')!r}; this command handles {EVENT!r}"
    session = data.get("session_id") if isinstance(data.get("session_id"), str) else None
    if data.get("tool_name") not in WRITE_TOOLS:
        return f"tool {data.get('tool_name')!r} writes no file"
    tool_input = data.get("tool_input")
    path = tool_input.get("file_path") if isinstance(tool_input, dict) else None
    cwd = data.get("cwd")
    if not isinstance(path, str) or not isinstance(cwd, str) or not Path(cwd).is_absolute():
        return "tool_input.file_path or an absolute cwd is missing"
    written = Path(cwd, path)
    if written.name != C.INDEX_FILENAME:
        return ""  # any other file: nothing to do and nothing worth a log line
    return session, Path(cwd), written


def post_tool_use(
    raw: bytes | str, *, env: Mapping[str, str] | None = None, home: Path | None = None
) -> IndexHookOutcome:
    """One run: when the tool wrote the project's MEMORY.md, drop memdir's own lines for files
    that another entry now links, and tell the model which."""
    if len(raw) > INPUT_MAX_BYTES:
        return IndexHookOutcome(log=f"stdin is over {INPUT_MAX_BYTES:,} bytes: not read")
    try:
        data = json.loads(raw)
    except (ValueError, RecursionError) as exc:
        return IndexHookOutcome(log=f"stdin is not JSON: {exc}")
    found = _written_index(data)
    if isinstance(found, str):
        return IndexHookOutcome(log=found or None)
    session, cwd, written = found
    env = os.environ if env is None else env
    location = locate_memory_dir(cwd, env=env, home=home or Path.home())
    directory = location.memory_dir
    if directory is None or not directory.is_dir():
        return IndexHookOutcome(session_id=session)
    if os.path.realpath(written) != os.path.realpath(directory / C.INDEX_FILENAME):
        return IndexHookOutcome(session_id=session)  # another MEMORY.md: not the agent's index
    # Imported here: most runs (any other file) end above, and the writer is heavy.
    from memdir.agent.formats import declined
    from memdir.config import load_settings
    from memdir.writing.results import WriteError
    from memdir.writing.writer import MemoryWriter

    settings = load_settings(directory, location.project_root)
    if declined(directory, settings.any_format) is not None:
        return IndexHookOutcome(session_id=session)
    try:
        result = MemoryWriter(directory, settings=settings).reconcile_index()
    except WriteError as exc:
        return IndexHookOutcome(log=f"{directory}: {exc.message}", session_id=session)
    if result.index is None or not result.index.dropped:
        return IndexHookOutcome(session_id=session)
    # Claude Code itself tells the model that a hook changed the file after its edit.
    context = f"memdir: {result.index.clause()}."
    output: dict[str, object] = {
        "hookSpecificOutput": {"hookEventName": EVENT, "additionalContext": context}
    }
    dropped = ", ".join(d.path for d in result.index.dropped)
    return IndexHookOutcome(output, f"dropped memdir's line for {dropped}", session)
