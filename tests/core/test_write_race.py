"""A folder swapped for a symlink between the path check and the write (issue 18).

:func:`memdir.writing.confine.resolve_path` checks a path when an operation starts; a folder of the
memory dir replaced by a symlink leading out after that check must stop the write, not lead it out.
The swap is made deterministic at the first write step (``files._step``, the kill points' seam:
the intent is recorded, nothing else is written yet) or, for a read, right after the check.
Both walks are tested: by file descriptor (``FD_WALK``, POSIX) and by the checked path (the
fallback for platforms without ``*at`` calls).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from memdir.config import Settings
from memdir.writing import confine, files, writer
from memdir.writing.journal import JOURNAL_NAME, dir_state
from memdir.writing.results import UnsafePathError, WriteError
from memdir.writing.writer import MemoryWriter

pytestmark = pytest.mark.skipif(not hasattr(os, "symlink"), reason="needs symlinks")


@dataclass
class Scene:
    memory: Path
    #: The symlink's target, outside the memory dir.
    outside: Path
    #: Where the real ``sub`` folder went (outside the memory dir too).
    moved: Path

    def swap(self) -> None:
        """Replace ``memory/sub`` by a symlink to ``outside``."""
        (self.memory / "sub").rename(self.moved)
        (self.memory / "sub").symlink_to(self.outside, target_is_directory=True)

    def outside_files(self) -> dict[str, str]:
        return {
            f"{folder.name}/{p.relative_to(folder).as_posix()}": p.read_text(encoding="utf-8")
            for folder in (self.outside, self.moved)
            for p in sorted(folder.rglob("*"))
            if p.is_file()
        }


@pytest.fixture(params=[True, False], ids=["fd-walk", "path-walk"])
def scene(
    request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[Scene]:
    if request.param and not files.FD_WALK:
        pytest.skip("this platform has no *at calls")
    monkeypatch.setattr(files, "FD_WALK", request.param)
    memory = tmp_path / "memory"
    (memory / "sub" / "deep").mkdir(parents=True)
    (memory / "sub" / "a.md").write_text("inside a\n", encoding="utf-8")
    (memory / "sub" / "deep" / "d.md").write_text("inside d\n", encoding="utf-8")
    (memory / "top.md").write_text("inside top\n", encoding="utf-8")
    (memory / "MEMORY.md").write_text("- [A](sub/a.md) — a\n", encoding="utf-8")
    outside = tmp_path / "outside"
    (outside / "deep").mkdir(parents=True)
    (outside / "a.md").write_text("outside a\n", encoding="utf-8")
    (outside / "deep" / "d.md").write_text("outside d\n", encoding="utf-8")
    yield Scene(memory, outside, tmp_path / "moved")


def swap_at_first_step(scene: Scene, monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Swap at the first write step; returns the list counting the steps taken."""
    steps: list[int] = []

    def step() -> None:
        steps.append(1)
        if len(steps) == 1:
            scene.swap()

    monkeypatch.setattr(files, "_step", step)
    return steps


OPERATIONS: dict[str, Callable[[MemoryWriter], object]] = {
    "create": lambda w: w.create("sub/new.md", "mine\n"),
    "create-deep": lambda w: w.create("sub/deep/new/x.md", "mine\n"),
    "update": lambda w: w.update("sub/a.md", "changed\n"),
    "str_replace": lambda w: w.str_replace("sub/deep/d.md", "inside", "changed"),
    "delete-file": lambda w: w.delete("sub/a.md"),
    "delete-folder": lambda w: w.delete("sub/deep"),
    "rename-out-of": lambda w: w.rename("sub/a.md", "top-a.md"),
    "rename-into": lambda w: w.rename("top.md", "sub/top.md"),
    "rename-within": lambda w: w.rename("sub/a.md", "sub/b.md"),
}


@pytest.mark.parametrize("operation", OPERATIONS, ids=list(OPERATIONS))
def test_a_folder_swapped_after_the_check_stops_the_write(
    scene: Scene, monkeypatch: pytest.MonkeyPatch, operation: str
) -> None:
    before = {
        "outside/a.md": "outside a\n",
        "outside/deep/d.md": "outside d\n",
        "moved/a.md": "inside a\n",
        "moved/deep/d.md": "inside d\n",
    }
    steps = swap_at_first_step(scene, monkeypatch)
    writer = MemoryWriter(scene.memory, settings=Settings())
    with pytest.raises(UnsafePathError) as caught:
        OPERATIONS[operation](writer)
    assert steps, "the operation never reached its first write step"
    assert caught.value.reason == "symlink"
    assert "the folder sub became a symlink during the write" in caught.value.message
    assert scene.outside_files() == before
    assert sorted(p.name for p in scene.outside.iterdir()) == ["a.md", "deep"]
    # The memory dir is as it was, but for the swap: the index untouched, no intent left.
    assert (scene.memory / "MEMORY.md").read_text(encoding="utf-8") == "- [A](sub/a.md) — a\n"
    assert (scene.memory / "top.md").read_text(encoding="utf-8") == "inside top\n"
    assert not (dir_state(scene.memory) / JOURNAL_NAME).exists()


def test_a_read_through_a_folder_swapped_after_the_check_is_refused(
    scene: Scene, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = writer.resolve_path

    def check_then_swap(*args: object, **kwargs: object) -> confine.MemoryPath:
        checked = real(*args, **kwargs)  # type: ignore[arg-type]
        scene.swap()
        return checked

    monkeypatch.setattr(writer, "resolve_path", check_then_swap)
    with pytest.raises(UnsafePathError, match="became a symlink"):
        MemoryWriter(scene.memory, settings=Settings()).read("sub/a.md")


def test_a_folder_swapped_for_a_file_is_named(
    scene: Scene, monkeypatch: pytest.MonkeyPatch
) -> None:
    def swap_for_file() -> None:
        (scene.memory / "sub").rename(scene.moved)
        (scene.memory / "sub").write_text("a file now\n", encoding="utf-8")

    monkeypatch.setattr(files, "_step", lambda: None)
    monkeypatch.setattr(scene, "swap", swap_for_file)
    swap_at_first_step(scene, monkeypatch)
    with pytest.raises(WriteError, match=r"sub in sub/a\.md is a file, not a folder"):
        MemoryWriter(scene.memory, settings=Settings()).update("sub/a.md", "changed\n")


@pytest.mark.parametrize("operation", OPERATIONS, ids=list(OPERATIONS))
def test_without_a_swap_every_operation_works(scene: Scene, operation: str) -> None:
    """Both walks do the real work (the fallback is what Windows runs)."""
    OPERATIONS[operation](MemoryWriter(scene.memory, settings=Settings()))
    assert not any(p.name.startswith(".memdir-") for p in scene.memory.rglob("*"))
    assert sorted(p.name for p in scene.outside.rglob("*")) == ["a.md", "d.md", "deep"]
