"""What the fault tests share: memory dirs, snapshots of what a reader sees, leftovers."""

from __future__ import annotations

import datetime as dt
import os
import random
from collections.abc import Callable
from pathlib import Path

from memdir.agent.paths import dir_state_path
from memdir.writing import files as write_files
from memdir.writing.files import TEMP_NAME
from memdir.writing.journal import JOURNAL_NAME, LEGACY_FILENAMES

#: Every writer in the fault tests stamps ``modified`` with this, so two runs write the same bytes.
CLOCK = dt.datetime(2026, 1, 2, 3, 4, 5, tzinfo=dt.UTC)

#: ``MEMDIR_FAULTS=long``: every kill point is tried, not a drawn few.
LONG = os.environ.get("MEMDIR_FAULTS") == "long"


def topic(name: str, description: str, body: str = "Body.\n") -> str:
    return f"---\nname: {name}\ndescription: {description}\ntype: project\n---\n{body}"


FILES: dict[str, str] = {
    "MEMORY.md": (
        "# Memory\n\n- [Deploy](deploy.md) — how deploys work\n"
        "- [Old](notes/old.md) — old notes\n- [More](notes/more.md) — more notes\n"
    ),
    "deploy.md": topic("deploy", "how deploys work", "Staging first.\nThen production.\n"),
    "notes/old.md": topic("old", "old notes"),
    "notes/more.md": topic("more", "more notes"),
    "plain.txt": "not a memory\n",
}


def build(root: Path, files: dict[str, str] = FILES) -> Path:
    root.mkdir(parents=True)
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root


def visible(root: Path) -> dict[str, bytes | None]:
    """What a reader of the dir sees: every file's bytes and every folder (None), hidden names
    (memdir's lock, journal and temp files) left out."""
    seen: dict[str, bytes | None] = {}
    for directory, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if not d.startswith(".")]
        base = Path(directory)
        for name in dirs:
            seen[(base / name).relative_to(root).as_posix() + "/"] = None
        for name in files:
            if not name.startswith("."):
                path = base / name
                seen[path.relative_to(root).as_posix()] = path.read_bytes()
    return seen


def journal(root: Path) -> Path:
    """The memory dir's intent journal, in memdir's state folder (outside the dir)."""
    return dir_state_path(root, os.environ, Path.home()) / JOURNAL_NAME


def leftovers(root: Path) -> list[str]:
    """memdir's own files that must not outlive a write: temp files, trashed folders, the
    intent (its locks stay, in the state folder: they are empty and mean nothing once
    released), and nothing of memdir's in the memory dir at all."""
    found: list[str] = []
    for directory, dirs, files in os.walk(root):
        for name in dirs + files:
            if TEMP_NAME.match(name) or name.startswith(".") or name in LEGACY_FILENAMES:
                found.append((Path(directory) / name).relative_to(root).as_posix())
    if journal(root).exists():
        found.append(f"(the journal {journal(root)})")
    return sorted(found)


def assert_old_or_new(seen: dict[str, bytes | None], *states: dict[str, bytes | None]) -> None:
    """Every path holds its content in one of ``states`` (old, new, between two operations), or
    is absent where it is absent in one of them: never anything else, never part of a file."""
    for rel in set(seen).union(*states):
        if rel.endswith("/"):
            continue  # folders are checked once the next writer ran
        now = seen.get(rel, "absent")
        allowed = [state.get(rel, "absent") for state in states]
        assert now in allowed, f"{rel} holds none of its expected contents: {now!r}"


def kill_points(run: Callable[[], object]) -> int:
    """How many kill points ``run`` passes (counted in this process: the same writer code)."""
    write_files._kill_at, write_files._steps = 1 << 30, 0
    try:
        run()
        return write_files._steps
    finally:
        write_files._kill_at, write_files._steps = 0, 0


def drawn_points(count: int, most: int) -> list[int]:
    """Kill points of 1..``count`` to try: all when :data:`LONG`, else ``most`` drawn with a
    printed seed."""
    if LONG:
        return list(range(1, count + 1))
    seed = random.randrange(1 << 32)
    print(f"kill points drawn with seed {seed}")
    return sorted(random.Random(seed).sample(range(1, count + 1), min(most, count)))
