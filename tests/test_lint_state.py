"""The incremental DirState: only what changed is read again, editor text wins, both paths agree."""

from __future__ import annotations

import dataclasses
import os
import random
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from memdir.config import Settings
from memdir.lint import DirState, lint_directory
from memdir.lint.diagnostic import Diagnostic
from memdir.lint.state import _canonical_topic, fast_topic

MakeDir = Callable[..., Path]
BENCHMARKS = Path(__file__).resolve().parent.parent / "benchmarks"


def topic(name: str, description: str, type_: str = "project", body: str = "Body.\n") -> str:
    return f"---\nname: {name}\ndescription: {description}\ntype: {type_}\n---\n{body}"


SUBJECTS = (
    "deploys",
    "billing exports",
    "the staging cluster",
    "feature flags",
    "on-call handovers",
    "schema migrations",
    "partner webhooks",
    "mobile builds",
    "search ranking",
    "audit logs",
    "cache keys",
    "rate limits",
    "tax rules",
    "invoice PDFs",
    "push notifications",
    "login throttling",
    "canary hosts",
    "backfill jobs",
    "queue consumers",
    "the API gateway",
)
WHEN = ("on Tuesdays", "after review", "before the freeze", "by the platform team")


def describe(i: int) -> str:
    return f"{SUBJECTS[i % 20]} {WHEN[i % 4]}: rule number {i} of the team handbook"


def small_dir(make_dir: MakeDir, count: int = 20) -> Path:
    files = {f"m{i:02d}.md": topic(f"m{i:02d}", f"'{describe(i)}'") for i in range(count)}
    index = "".join(f"- [M{i}](m{i:02d}.md) — hook {i}\n" for i in range(count))
    return make_dir({"MEMORY.md": index, **files})


def codes(state: DirState) -> list[tuple[str, str]]:
    return [(d.rel_path, d.code) for d in state.lint().diagnostics]


def test_cold_refresh_reads_every_file_once(make_dir: MakeDir) -> None:
    root = small_dir(make_dir)
    state = DirState(root)
    state.refresh()
    assert set(state.reads) == {f"m{i:02d}.md" for i in range(20)} | {"MEMORY.md"}
    assert set(state.reads.values()) == {1}
    assert codes(state) == []


def test_refresh_after_a_change_rereads_only_that_file(make_dir: MakeDir) -> None:
    root = small_dir(make_dir)
    state = DirState(root)
    state.refresh()
    state.lint()
    state.reads.clear()
    (root / "m07.md").write_text("# lost its frontmatter\n", encoding="utf-8")
    reread = state.refresh()
    assert reread == {"m07.md"}
    assert dict(state.reads) == {"m07.md": 1}
    result = state.lint()
    assert [(d.rel_path, d.code) for d in result.diagnostics] == [("m07.md", "MEM101")]
    assert result.changed == {"m07.md"}


def test_update_reads_one_file_and_recomputes_directory_rules(make_dir: MakeDir) -> None:
    root = small_dir(make_dir)
    state = DirState(root)
    state.refresh()
    state.lint()
    state.reads.clear()
    # A new file on disk: an orphan, and a duplicate of m03's name.
    (root / "new.md").write_text(
        topic("m03", "the staging database is reset every Sunday night"), encoding="utf-8"
    )
    state.update(root / "new.md")
    assert dict(state.reads) == {"new.md": 1}
    result = state.lint()
    assert [(d.rel_path, d.code) for d in result.diagnostics] == [
        ("m03.md", "MEM111"),
        ("new.md", "MEM107"),
        ("new.md", "MEM111"),
    ]
    assert result.changed == {"m03.md", "new.md"}
    # The index links it now: the orphan goes away; only MEMORY.md is read.
    state.reads.clear()
    with (root / "MEMORY.md").open("a", encoding="utf-8") as handle:
        handle.write("- [New](new.md) — new\n")
    state.update(root / "MEMORY.md")
    assert dict(state.reads) == {"MEMORY.md": 1}
    assert ("new.md", "MEM107") not in codes(state)


def test_editor_text_wins_without_reading_the_disk(make_dir: MakeDir) -> None:
    root = small_dir(make_dir)
    state = DirState(root)
    state.refresh()
    state.reads.clear()
    state.update("m05.md", "---\nname: m05\ntype: Project\n---\nunsaved\n")
    assert dict(state.reads) == {}
    assert codes(state) == [("m05.md", "MEM103"), ("m05.md", "MEM104")]
    # A refresh keeps the editor's text even though the disk differs.
    state.refresh()
    assert codes(state) == [("m05.md", "MEM103"), ("m05.md", "MEM104")]
    # Closing the document goes back to the disk.
    state.close(root / "m05.md")
    assert state.reads["m05.md"] == 1
    assert codes(state) == []


def test_editor_text_of_the_index_and_of_a_new_file(make_dir: MakeDir) -> None:
    root = small_dir(make_dir, 3)
    state = DirState(root)
    state.refresh()
    state.update("MEMORY.md", "- [M0](m00.md) — a\n- [M1](m01.md) — b\n")
    assert codes(state) == [("m02.md", "MEM107")]
    state.update("draft.md", topic("draft", "a draft nobody saved yet, about release trains"))
    assert ("draft.md", "MEM107") in codes(state)
    assert not (root / "draft.md").exists()


def test_deleted_files_drop_out(make_dir: MakeDir) -> None:
    root = small_dir(make_dir, 3)
    state = DirState(root)
    state.refresh()
    (root / "m01.md").unlink()
    state.update(root / "m01.md")
    assert codes(state) == [("MEMORY.md", "MEM005")]
    (root / "m02.md").unlink()
    state.refresh()
    assert codes(state) == [("MEMORY.md", "MEM005"), ("MEMORY.md", "MEM005")]


def test_paths_outside_the_dir_are_refused(make_dir: MakeDir, tmp_path: Path) -> None:
    state = DirState(small_dir(make_dir, 1))
    with pytest.raises(ValueError, match="not inside the memory dir"):
        state.update(tmp_path / "elsewhere.md", "x")


def test_new_settings_recompute(make_dir: MakeDir) -> None:
    root = make_dir({"a.md": topic("a", "memory about the deploy window and who owns it")})
    state = DirState(root)
    state.refresh()
    assert [d.severity for d in state.lint().diagnostics] == ["warning"]
    state.set_settings(Settings(recall_mode="prefetch"))
    state.refresh()
    assert [d.severity for d in state.lint().diagnostics] == ["info"]


def test_a_file_vanishing_between_listing_and_reading(
    make_dir: MakeDir, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = small_dir(make_dir, 2)
    import memdir.lint.state as state_module

    real = state_module.iter_topic_entries

    def with_ghost(directory: Path, skipped: list[object] | None = None):  # type: ignore[no-untyped-def]
        yield from real(directory, skipped)  # type: ignore[arg-type]
        yield os.fspath(root / "ghost.md"), "ghost.md"

    monkeypatch.setattr(state_module, "iter_topic_entries", with_ghost)
    state = DirState(root)
    state.refresh()
    result = state.lint()
    [ghost] = [d for d in result.diagnostics if d.rel_path == "ghost.md"]
    assert ghost.code == "MEM113" and "cannot read" in ghost.message


def test_fast_and_full_paths_agree_on_generated_dirs(tmp_path: Path) -> None:
    sys.path.insert(0, str(BENCHMARKS))
    try:
        import gen_memdir
    finally:
        sys.path.remove(str(BENCHMARKS))
    for seed in (1, 2, 3):
        root = tmp_path / f"gen{seed}"
        gen_memdir.generate(root, 300, seed)
        fast = DirState(root)
        full = DirState(root, fast_path=False)
        fast.refresh()
        full.refresh()
        assert fast.summaries() == full.summaries()
        assert fast.lint().diagnostics == full.lint().diagnostics


def test_fast_path_gives_exactly_what_the_full_path_gives() -> None:
    rng = random.Random(5)
    fields = [
        "name: a\n",
        "description: the deploy window is Tuesday morning for the API\n",
        "description: notes\n",
        "description: a\n",
        "type: project\n",
        "type: Project\n",
        "metadata:\n  type: user\n",
        "modified: 2026-07-15T09:12:00Z\n",
        "token: Xk9mQ2vL8pZ3aB7\n",
    ]
    body = [
        "# Title\n",
        "body line\n",
        "\n",
        "api_key = Xk9mQ2vL8pZ3aB7qW4\n",
        "x" * 5000 + "\n",
        "line\n" * 120,
        "[[link]]\n",
        "---\n",
    ]

    def sample() -> str:
        head = rng.sample(fields, rng.randint(0, 5))
        tail = [rng.choice(body) for _ in range(rng.randint(0, 4))]
        opening = "---\n" if rng.random() < 0.9 else ""
        return opening + "".join(head) + "---\n" + "".join(tail)

    root = Path("/m")
    accepted = {"clean": 0, "findings": 0}
    for _ in range(1500):
        text = sample()
        size = len(text.encode())
        fast_state = DirState(root)
        fast = fast_topic(text, "/m/a.md", root, "a.md", 0.0, size, fast_state.context)
        if fast is None:
            continue
        accepted["findings" if fast[1] else "clean"] += 1
        full = DirState(root, fast_path=False)
        full.update("a.md", text)
        full.update("MEMORY.md", "- [a](a.md) — a\n")
        expected = [d for d in full.lint().diagnostics if d.rel_path == "a.md"]
        assert sorted(fast[1], key=Diagnostic.sort_key) == expected, text
        # (The full path stamps an unsaved text with the time it was given.)
        assert fast[0] == dataclasses.replace(full.summaries()["a.md"], mtime=0.0), text
    # Both kinds were exercised: clean files and sound frontmatter with body findings.
    assert accepted["clean"] >= 10 and accepted["findings"] >= 50, accepted


def test_canonical_frontmatter_gives_exactly_what_the_full_path_gives() -> None:
    """The one-regex recogniser of the usual frontmatter, on values built to trip it up."""
    rng = random.Random(11)
    values = [
        "deploy window is Tuesday morning for the API",
        "a",
        "notes",
        "yes",
        "Null",
        "ends with a colon:",
        "key: value inside",
        "hash # comment",
        "hash#inside is fine",
        "url http://example.com/x is fine",
        "two  spaces",
        "trailing space ",
        "tab\there",
        "\u00b2 superscript first",
        "\u00e9t\u00e9 accents first",
        "发布冻结期间不合并代码，涉及 deploy 和 release",
        "nbsp\u00a0inside",
        "trailing nbsp\u00a0",
        "ideographic\u3000space inside",
        "colon at: the end:",
        "true",
        "nel\u0085inside",
        "ctrl\u0001inside",
        "'quoted'",
        "3 starts with a digit",
        "-dash first",
        "x" * 250,
    ]
    types = ["type: project", "type: user", "type: Project", "metadata:\n  type: feedback"]
    modified = ["", "modified: 2026-07-15T09:12:00Z\n", "modified: 2026-13-45\n"]
    modified += ["modified:  2026-07-15\n", "modified: yes\n", "modified: today\n"]
    bodies = ["", "# Title\n", "#  Spaced title  \nbody\n", "\n\n# Later title\n", "text\n"]
    bodies += ["api_key = Xk9mQ2vL8pZ3aB7qW4\n", "line\n" * 210, "# T\n" + "y" * 5000]
    root = Path("/m")
    canonical = 0
    for _ in range(1500):
        name = rng.choice(["a", "deploy-notes", *values[:6]])
        closing = rng.choice(["---\n", "---", "----\n", "--- \n"])
        text = (
            f"---\nname: {name}\ndescription: {rng.choice(values)}\n{rng.choice(types)}\n"
            f"{rng.choice(modified)}{closing}{rng.choice(bodies)}"
        )
        size = len(text.encode())
        fast_state = DirState(root)
        fast = fast_topic(text, "/m/a.md", root, "a.md", 0.0, size, fast_state.context)
        canonical += (
            _canonical_topic(text, "/m/a.md", root, "a.md", 0.0, size, fast_state.context)
            is not None
        )
        full = DirState(root, fast_path=False)
        full.update("a.md", text)
        full.update("MEMORY.md", "- [a](a.md) — a\n")
        if fast is None:
            continue
        expected = [d for d in full.lint().diagnostics if d.rel_path == "a.md"]
        assert sorted(fast[1], key=Diagnostic.sort_key) == expected, text
        assert fast[0] == dataclasses.replace(full.summaries()["a.md"], mtime=0.0), text
    assert canonical >= 40, canonical  # the recogniser itself was exercised


def test_lint_directory_is_a_cold_run(make_dir: MakeDir) -> None:
    root = small_dir(make_dir, 5)
    (root / "m02.md").write_text("# no frontmatter\n", encoding="utf-8")
    result = lint_directory(root)
    assert [(d.rel_path, d.code) for d in result.diagnostics] == [("m02.md", "MEM101")]
    assert result.files == 5
    assert result.by_file() == {"m02.md": list(result.diagnostics)}
    assert result.count("error") == 1


def test_update_never_reads_through_a_symlink_out(make_dir: MakeDir, tmp_path: Path) -> None:
    root = small_dir(make_dir, 2)
    secret = tmp_path / "outside.md"
    secret.write_text(topic("outside", "somebody else's file outside the memory dir"), "utf-8")
    (root / "link.md").symlink_to(secret)
    state = DirState(root)
    state.refresh()
    state.update(root / "link.md")
    assert "link.md" not in state.reads
    assert [(d.rel_path, d.code) for d in state.lint().diagnostics] == [("link.md", "MEM114")]


def test_an_unchanged_directory_reuses_every_result(make_dir: MakeDir) -> None:
    files = {f"m{i:03d}.md": topic(f"m{i:03d}", f"'{describe(i)}'") for i in range(205)}
    root = make_dir(files)  # no index: 205 orphans, 5 outside the prefetch window
    state = DirState(root, Settings(ignore=("MEM111",)))
    state.refresh()
    first = state.lint()
    assert len(first.diagnostics) == 210 and len(first.changed) == 205
    state.reads.clear()
    assert state.refresh() == set() and not state.reads
    second = state.lint()
    assert second.changed == frozenset()
    assert all(a is b for a, b in zip(first.diagnostics, second.diagnostics, strict=True))


def test_diagnostics_sort_by_their_sort_key(tmp_path: Path) -> None:
    from memdir.lint.state import _SORT_KEY

    root = tmp_path / "gen"
    sys.path.insert(0, str(BENCHMARKS))
    try:
        import gen_memdir
    finally:
        sys.path.remove(str(BENCHMARKS))
    gen_memdir.generate(root, 300, 4)
    diagnostics = lint_directory(root).diagnostics
    assert [_SORT_KEY(d) for d in diagnostics] == [d.sort_key() for d in diagnostics]
    assert list(diagnostics) == sorted(diagnostics, key=Diagnostic.sort_key)
