"""memdir.writing.writer under attack: hostile paths, injected crashes and concurrent writers.

The sandbox is a temporary tree ``base/{memory, outside, memory-evil}`` where ``memory`` holds
symlinks leading out (to a folder, to a file, dangling, looping). Every generated path is tried
with every operation; whatever happens, nothing outside ``memory`` may be created, modified or
deleted, every failure must be a :class:`WriteError`, and paths carrying a traversal marker must
be refused outright.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import multiprocessing
import os
import re
import tempfile
import threading
import unicodedata
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from memdir.config import Settings
from memdir.writing.results import (
    IndexNotUpdatedError,
    PathExistsError,
    UnsafePathError,
    WriteError,
)
from memdir.writing.writer import MemoryWriter

# --- the sandbox ---------------------------------------------------------------------------------

Snapshot = dict[str, tuple[str, str]]


def snapshot(top: Path, skip: Path | None = None) -> Snapshot:
    """Every entry under ``top`` (not following links): kind and content hash or link target."""
    seen: Snapshot = {}
    for directory, dirs, files in os.walk(top, followlinks=False):
        current = Path(directory)
        if skip is not None and current == skip:
            dirs[:] = []
            continue
        for name in dirs + files:
            path = current / name
            rel = path.relative_to(top).as_posix()
            if path.is_symlink():
                seen[rel] = ("link", os.readlink(path))
            elif path.is_dir():
                seen[rel] = ("dir", oct(path.stat().st_mode))
            else:
                data = path.read_bytes()
                seen[rel] = ("file", hashlib.sha256(data).hexdigest() + oct(path.stat().st_mode))
    return seen


@contextlib.contextmanager
def sandbox() -> Iterator[tuple[Path, Path]]:
    with tempfile.TemporaryDirectory(prefix="memdir-adv-") as scratch:
        base = Path(scratch)
        outside = base / "outside"
        (outside / "dir").mkdir(parents=True)
        (outside / "secret.md").write_text("secret\n", encoding="utf-8")
        (outside / "dir" / "deep.md").write_text("secret deep\n", encoding="utf-8")
        (base / "memory-evil").mkdir()
        memory = base / "memory"
        (memory / "sub").mkdir(parents=True)
        (memory / "ok.md").write_text("secret ok\n", encoding="utf-8")
        (memory / "sub" / "inner.md").write_text("secret inner\n", encoding="utf-8")
        (memory / "MEMORY.md").write_text("- [Ok](ok.md) — ok\n", encoding="utf-8")
        (memory / "link-out").symlink_to("../outside")
        (memory / "file-out.md").symlink_to("../outside/secret.md")
        (memory / "dangling.md").symlink_to("../outside/new.md")
        (memory / "abs-out.md").symlink_to(outside / "secret.md")
        (memory / "loop").symlink_to("loop")
        yield base, memory


SEGMENTS = [
    "..",
    ".",
    "",
    "...",
    "%2e%2e",
    "%2E%2E",
    "%252e%252e",
    "%25252e",
    "%2f",
    "%2F..",
    "%5c",
    "%00",
    "%c0%ae%c0%ae",
    "..%2f",
    "\uff0e\uff0e",  # fullwidth full stops
    "\u2025",  # two dot leader
    "\u2024\u2024",  # one dot leaders
    "\ufe52\ufe52",  # small full stops
    "\u2215",  # division slash
    "\u2044",  # fraction slash
    "\uff0f",  # fullwidth solidus
    "\uff3c",  # fullwidth reverse solidus
    "\ufe68",  # small reverse solidus
    "\u29f8",  # big solidus
    "a\u2215..\u2215b",
    "\\",
    "..\\..",
    "~",
    "~root",
    "\x00",
    "a\x00b",
    "\n",
    "\x7f",
    "evil\u202edm.txt",  # right-to-left override: displays as "eviltxt.md"
    "\ud800",  # a lone surrogate
    "link-out",
    "file-out.md",
    "dangling.md",
    "abs-out.md",
    "loop",
    "x" * 300,
    "é" * 130,
    "deep/" * 100,
    ".memdir.lock",
    ".hidden",
    "MEMORY.md",
    "ok.md",
    "sub",
    "inner.md",
    "secret.md",
    "C:",
    "new.md",
]

PREFIXES = ["", "/", "./", "{memory}/", "{memory}/../", "{memory}-evil/", "{outside}/", "{base}/"]

segment = st.one_of(
    st.sampled_from(SEGMENTS),
    st.text(max_size=10),
    st.text(alphabet="./%2e\\~:", max_size=8),
)
benign = st.sampled_from(["new.md", "sub", "notes", "x.md", "ok.md", "inner.md", "deeper"])
hostile_paths = st.one_of(
    st.builds(
        lambda prefix, parts, sep: prefix + sep.join(parts),
        st.sampled_from(PREFIXES),
        st.lists(segment, min_size=1, max_size=5),
        st.sampled_from(["/", "//", "/./"]),
    ),
    # Mostly plausible names with one hostile part, so that accepted writes are exercised too.
    st.builds(
        lambda prefix, head, bad, tail: prefix + "/".join([*head, bad, *tail]),
        st.sampled_from(["", "{memory}/"]),
        st.lists(benign, max_size=2),
        st.one_of(segment, benign),
        st.lists(benign, max_size=2),
    ),
)

_LOOKALIKE = re.compile("[\u2215\u2044\u29f8]")


def must_be_refused(path: str) -> bool:
    """Paths with a traversal marker: the write path must refuse them, whatever they resolve to."""
    if ".." in path.split("/") or "\\" in path or re.search(r"%[0-9A-Fa-f]{2}", path):
        return True
    if path.startswith("~") or _LOOKALIKE.search(path):
        return True
    if any(unicodedata.category(c) in ("Cc", "Cs") or c in "\u202e\u202d" for c in path):
        return True
    return any(
        not c.isascii() and any(x in unicodedata.normalize("NFKC", c) for x in "/\\.") for c in path
    )


Operation = Callable[[MemoryWriter, str], object]
OPERATIONS: dict[str, Operation] = {
    "create": lambda w, p: w.create(p, "pwned\n"),
    "update": lambda w, p: w.update(p, "pwned\n"),
    "str_replace": lambda w, p: w.str_replace(p, "secret", "pwned"),
    "insert": lambda w, p: w.insert(p, 0, "pwned"),
    "delete": lambda w, p: w.delete(p),
    "rename_from": lambda w, p: w.rename(p, "renamed.md"),
    "rename_to": lambda w, p: w.rename("ok.md", p),
    "read": lambda w, p: w.read(p),
}


@settings(suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(template=hostile_paths, operation=st.sampled_from(sorted(OPERATIONS)))
def test_hostile_paths_never_touch_anything_outside(template: str, operation: str) -> None:
    with sandbox() as (base, memory):
        path = (
            template.replace("{memory}", str(memory))
            .replace("{outside}", str(base / "outside"))
            .replace("{base}", str(base))
        )
        outside_before = snapshot(base, skip=memory)
        inside_before = snapshot(memory)
        writer = MemoryWriter(memory, settings=Settings())
        refused: WriteError | None = None
        try:
            OPERATIONS[operation](writer, path)
        except WriteError as exc:  # every refusal is a WriteError, never another exception
            refused = exc
        assert snapshot(base, skip=memory) == outside_before
        for directory, dirs, files in os.walk(memory, followlinks=False):
            for name in dirs + files:
                entry = Path(directory) / name
                if not entry.is_symlink():
                    # Everything that is not one of the planted links lies inside.
                    assert Path(os.path.realpath(entry)).is_relative_to(os.path.realpath(memory))
        event("refused" if refused is not None else "allowed")
        if must_be_refused(path):
            event("traversal marker")
            assert isinstance(refused, UnsafePathError), (path, operation, refused)
            assert snapshot(memory) == inside_before


@pytest.mark.parametrize(
    "path",
    [
        "link-out/secret.md",
        "link-out/new.md",
        "link-out/dir/deep.md",
        "file-out.md",
        "abs-out.md",
        "dangling.md",
        "loop/x.md",
        "../outside/secret.md",
        "%2e%2e/outside/secret.md",
        "%252e%252e/outside/secret.md",
        "\uff0e\uff0e/outside/secret.md",
        "..\\outside\\secret.md",
        "\u2025\u2215outside\u2215secret.md",
        "ok.md\x00.txt",
    ],
)
@pytest.mark.parametrize("operation", sorted(OPERATIONS))
def test_known_escapes_are_refused(path: str, operation: str) -> None:
    with sandbox() as (base, memory):
        before = snapshot(base)
        with pytest.raises(WriteError):
            OPERATIONS[operation](MemoryWriter(memory, settings=Settings()), path)
        assert snapshot(base) == before


@pytest.mark.parametrize("operation", sorted(set(OPERATIONS) - {"delete", "rename_from"}))
def test_a_symlink_loop_is_never_followed(operation: str) -> None:
    with sandbox() as (base, memory):
        before = snapshot(base)
        with pytest.raises(WriteError):
            OPERATIONS[operation](MemoryWriter(memory, settings=Settings()), "loop")
        assert snapshot(base) == before
        # The loop is a link inside pointing inside: removing the link itself is allowed.
        MemoryWriter(memory, settings=Settings()).delete("loop")
        assert not os.path.lexists(memory / "loop")


def test_absolute_paths_elsewhere_are_refused(tmp_path: Path) -> None:
    memory = tmp_path / "memory"
    memory.mkdir()
    for path in ("/etc/passwd", f"{tmp_path}/x.md", f"{memory}-evil/x.md", f"{memory}/../x.md"):
        with pytest.raises(UnsafePathError):
            MemoryWriter(memory, settings=Settings()).create(path, "x")
    assert sorted(os.listdir(tmp_path)) == ["memory"]


# --- injected crashes ----------------------------------------------------------------------------


def leftovers(memory: Path) -> list[str]:
    """memdir's files left in the dir: anything hidden (its lock and journal are elsewhere)."""
    return [str(p.relative_to(memory)) for p in memory.rglob("*") if p.name.startswith(".")]


@pytest.mark.parametrize("failure", [OSError(errno.EIO, "disk on fire"), KeyboardInterrupt()])
@pytest.mark.parametrize(
    "edit",
    [
        lambda w: w.update("ok.md", "new\n"),
        lambda w: w.str_replace("ok.md", "secret", "new"),
        lambda w: w.insert("ok.md", 1, "new"),
    ],
    ids=["update", "str_replace", "insert"],
)
def test_a_crash_before_the_rename_keeps_the_old_file(
    monkeypatch: pytest.MonkeyPatch,
    failure: BaseException,
    edit: Callable[[MemoryWriter], object],
) -> None:
    with sandbox() as (_base, memory):

        def crash(*_args: object, **_kwargs: object) -> None:
            raise failure

        monkeypatch.setattr(os, "replace", crash)
        expected = WriteError if isinstance(failure, OSError) else KeyboardInterrupt
        with pytest.raises(expected):
            edit(MemoryWriter(memory, settings=Settings()))
        monkeypatch.undo()
        assert (memory / "ok.md").read_text(encoding="utf-8") == "secret ok\n"
        assert leftovers(memory) == []


def test_a_crash_while_publishing_a_new_file_leaves_nothing(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    with sandbox() as (_base, memory):

        def crash(*_args: object, **_kwargs: object) -> None:
            raise OSError(errno.EIO, "disk on fire")

        monkeypatch.setattr(os, "link", crash)
        with pytest.raises(WriteError, match="disk on fire"):
            MemoryWriter(memory, settings=Settings()).create("new.md", "x\n")
        with pytest.raises(WriteError, match="disk on fire"):
            MemoryWriter(memory, settings=Settings()).rename("ok.md", "moved.md")
        monkeypatch.undo()
        assert not (memory / "new.md").exists()
        assert not (memory / "moved.md").exists()
        assert (memory / "ok.md").read_text(encoding="utf-8") == "secret ok\n"
        assert leftovers(memory) == []


def test_a_failed_index_write_keeps_the_old_index(monkeypatch: pytest.MonkeyPatch) -> None:
    with sandbox() as (_base, memory):
        real_replace = os.replace

        def fail_for_index(source: str, target: str, **dir_fds: int | None) -> None:
            if Path(target).name == "MEMORY.md":
                raise OSError(errno.ENOSPC, "no space left")
            real_replace(source, target, **dir_fds)

        monkeypatch.setattr(os, "replace", fail_for_index)
        with pytest.raises(IndexNotUpdatedError, match="no space left") as failed:
            MemoryWriter(memory, settings=Settings()).create("b.md", "---\nname: b\n---\n")
        monkeypatch.undo()
        assert failed.value.result.changes[0].path == "b.md"
        assert (memory / "b.md").exists()
        assert (memory / "MEMORY.md").read_text(encoding="utf-8") == "- [Ok](ok.md) — ok\n"
        assert leftovers(memory) == []
        # The journal stayed: the next writer adds the line the create owed.
        MemoryWriter(memory, settings=Settings()).recover()
        assert "(b.md)" in (memory / "MEMORY.md").read_text(encoding="utf-8")


# --- concurrent writers --------------------------------------------------------------------------

WRITERS = 4
EDITS_PER_WRITER = 12


def slots_file(memory: Path) -> Path:
    lines = [f"slot-{w}-{k}: todo" for w in range(WRITERS) for k in range(EDITS_PER_WRITER)]
    target = memory / "shared.md"
    target.write_text("---\nname: shared\ndescription: d\n---\n" + "\n".join(lines) + "\n")
    return target


def hammer(memory: str, worker: int, barrier: threading.Barrier | None) -> None:
    """Read-modify-write edits on one file: half str_replace of own slots, half inserts."""
    writer = MemoryWriter(Path(memory), settings=Settings(), lock_timeout=120)
    if barrier is not None:
        barrier.wait()
    for k in range(EDITS_PER_WRITER):
        if k % 2:
            writer.str_replace("shared.md", f"slot-{worker}-{k}: todo", f"slot-{worker}-{k}: done")
        else:
            writer.insert("shared.md", 4, f"inserted-{worker}-{k}")
            writer.str_replace("shared.md", f"slot-{worker}-{k}: todo", f"slot-{worker}-{k}: done")


def check_no_update_lost(target: Path) -> None:
    text = target.read_text(encoding="utf-8")
    lines = text.split("\n")
    for w in range(WRITERS):
        for k in range(EDITS_PER_WRITER):
            assert f"slot-{w}-{k}: done" in lines
            assert (f"inserted-{w}-{k}" in lines) == (k % 2 == 0)
    assert "todo" not in text
    assert text.count("modified:") == 1


def test_concurrent_threads_lose_no_update(tmp_path: Path) -> None:
    memory = tmp_path / "memory"
    memory.mkdir()
    target = slots_file(memory)
    barrier = threading.Barrier(WRITERS)
    errors: list[BaseException] = []

    def run(worker: int) -> None:
        try:
            hammer(str(memory), worker, barrier)
        except BaseException as exc:  # reported below; a thread cannot fail the test itself
            errors.append(exc)

    threads = [threading.Thread(target=run, args=(w,)) for w in range(WRITERS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    check_no_update_lost(target)
    assert leftovers(memory) == []


def _process_main(memory: str, worker: int, barrier: object) -> None:
    barrier.wait()  # type: ignore[attr-defined]
    hammer(memory, worker, None)


@pytest.mark.processes
def test_concurrent_processes_lose_no_update(tmp_path: Path) -> None:
    memory = tmp_path / "memory"
    memory.mkdir()
    target = slots_file(memory)
    context = multiprocessing.get_context("spawn")
    barrier = context.Barrier(WRITERS)
    processes = [
        context.Process(target=_process_main, args=(str(memory), w, barrier))
        for w in range(WRITERS)
    ]
    for process in processes:
        process.start()
    for process in processes:
        process.join()
    assert [p.exitcode for p in processes] == [0] * WRITERS
    check_no_update_lost(target)
    assert leftovers(memory) == []


# --- races, made deterministic --------------------------------------------------------------


def test_a_file_appearing_after_the_check_is_never_replaced(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The existence check is only for a friendly message: defeat it, and link(2) still refuses."""
    with sandbox() as (_base, memory):
        (memory / "taken.md").write_text("someone else's\n", encoding="utf-8")
        monkeypatch.setattr(os.path, "lexists", lambda _path: False)
        writer = MemoryWriter(memory, settings=Settings())
        with pytest.raises(PathExistsError):
            writer.rename("ok.md", "taken.md")
        with pytest.raises(PathExistsError):
            writer.create("taken.md", "mine\n")
        monkeypatch.undo()
        assert (memory / "taken.md").read_text(encoding="utf-8") == "someone else's\n"
        assert (memory / "ok.md").read_text(encoding="utf-8") == "secret ok\n"
        assert leftovers(memory) == []


def test_a_folder_filled_during_a_folder_rename_loses_nothing(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A writer ignoring the lock drops a file into the reserved destination at the worst moment."""
    with sandbox() as (_base, memory):
        real_rename = os.rename

        def racing_rename(source: str, target: str, **dir_fds: int | None) -> None:
            (memory / "moved" / "intruder.md").write_text("theirs\n", encoding="utf-8")
            real_rename(source, target, **dir_fds)

        monkeypatch.setattr(os, "rename", racing_rename)
        with pytest.raises(WriteError):
            MemoryWriter(memory, settings=Settings()).rename("sub", "moved")
        monkeypatch.undo()
        assert (memory / "sub" / "inner.md").read_text(encoding="utf-8") == "secret inner\n"
        assert (memory / "moved" / "intruder.md").read_text(encoding="utf-8") == "theirs\n"
