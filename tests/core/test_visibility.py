"""Will the agent see this memory: path A (index load cap), path B (prefetch window), injection."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from memdir.agent.index import load_index
from memdir.agent.scan import scan
from memdir.faces.visibility import Visibility, list_memories, prefetch_ranks, visibility
from memhelpers import topic

MakeDir = Callable[[dict[str, str | bytes]], Path]


def test_index_states_window_and_injection(make_dir: MakeDir) -> None:
    filler = "".join(f"- filler line {n}\n" for n in range(200))
    root = make_dir(
        {
            "loaded.md": topic("loaded", "in the index, within the cap"),
            "late.md": topic("late", "in the index, past the cap"),
            "orphan.md": topic("orphan", "not in the index", body="x" * 5000 + "\n"),
            "MEMORY.md": "- [Loaded](loaded.md) — hook\n" + filler + "- [Late](late.md) — hook\n",
        }
    )
    index = load_index(root)
    result = scan(root)
    ranks = prefetch_ranks(result)

    def of(rel: str) -> Visibility:
        text = (root / rel).read_text(encoding="utf-8")
        return visibility(index, rel, text, ranks, len(result.candidates))

    loaded = of("loaded.md")
    assert (loaded.index, loaded.in_index, loaded.index_lines) == ("loaded", True, (0,))
    assert loaded.injection == "whole" and loaded.exists
    late = of("late.md")
    assert (late.index, late.in_index, late.index_lines) == ("cut", True, (201,))
    orphan = of("orphan.md")
    assert (orphan.index, orphan.in_index) == ("missing", False)
    assert orphan.injection == "truncated" and orphan.truncated_reason
    # Newest first: MEMORY.md is not a candidate, orphan.md is the newest topic.
    assert (orphan.window_rank, orphan.in_window, orphan.window_size) == (1, True, 3)
    gone = visibility(index, "gone.md", None, ranks, 3)
    assert (gone.exists, gone.in_window, gone.bytes) == (False, False, 0)


def test_list_memories_sees_unsaved_text(make_dir: MakeDir) -> None:
    root = make_dir({"a.md": topic("a", "first"), "MEMORY.md": "- [A](a.md) — hook\n"})
    unsaved = topic("a", "first", body="y" * 5000 + "\n")
    listing = list_memories(scan(root), load_index(root), {"a.md": unsaved}.get)
    (memory,) = listing.memories
    assert memory.path == "a.md" and memory.name == "a"
    assert memory.visibility.injection == "truncated"
    assert listing.directory == str(root) and listing.skipped == ()
