"""``memdir lint --fix`` and :func:`apply_fixes`: safe fixes only, atomic, and nothing lost."""

from __future__ import annotations

import random
from collections.abc import Callable
from pathlib import Path

import pytest
from memdir.faces.cli import main
from memdir.lint import DirState, TextEdit, apply_fixes, apply_text_edits
from memdir.lint.fix import FixError
from memdir.model import Span

MakeDir = Callable[..., Path]


def topic(name: str, description: str, type_: str = "project", body: str = "Body.\n") -> str:
    return f"---\nname: {name}\ndescription: {description}\ntype: {type_}\n---\n{body}"


def snapshot(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in root.rglob("*") if p.is_file()}


def lines_of(data: bytes) -> list[str]:
    return [line for line in data.decode("utf-8", "replace").splitlines() if line.strip()]


def assert_nothing_lost(before: dict[str, bytes], after: dict[str, bytes]) -> None:
    """Every file survives and every original line is still there, at least once."""
    for rel, data in before.items():
        assert rel in after, f"{rel} disappeared"
        new_lines = lines_of(after[rel])
        for line in lines_of(data):
            assert line in new_lines, f"{rel}: lost {line!r}"
        if after[rel] != data:
            # Changed files only grew, except for exact duplicate lines removed.
            old = lines_of(data)
            assert set(old) <= set(new_lines)


MESSY = {
    "MEMORY.md": (
        "# Index\n"
        "- [Alpha](alpha.md) — alpha hook\n"
        "- [Beta](beta.md) — beta hook\n"
        "- [Alpha](alpha.md) — alpha hook\n"
        "- [Beta again](beta.md) — a different hook that must survive\n"
        "\n"
        "Some paragraph written into the index.\n"
    ),
    "alpha.md": topic("alpha", "alpha deploys need a second approver from the platform team"),
    "beta.md": topic("beta", "beta flags are removed two weeks after full rollout"),
    "orphan-one.md": topic(
        "orphan-one", "payments retries back off exponentially up to one hour", body="# Retries\n"
    ),
    "orphan two.md": topic("orphan-two", "the on-call rotation hands over on Monday at ten"),
    "reference_grafana.md": (
        "# Grafana\nThe checkout board is the first stop when p95 alerts fire.\n"
    ),
    # Nothing says which type it is, and its only text is a dated log: the editor's to fix.
    "no-frontmatter.md": "# Deploy log\n- 2026-03-01: deploys moved to Tuesday mornings\n",
}


def test_fix_applies_safe_fixes_prints_them_and_loses_nothing(
    make_dir: MakeDir, capsys: pytest.CaptureFixture[str]
) -> None:
    root = make_dir(dict(MESSY))
    before = snapshot(root)
    code = main(["lint", str(root), "--fix", "--preview"])  # MEM004 is a preview rule
    after = snapshot(root)
    captured = capsys.readouterr()
    err = captured.err
    assert_nothing_lost(before, after)

    index = after["MEMORY.md"].decode()
    assert index.count("- [Alpha](alpha.md) — alpha hook") == 1  # exact duplicate dropped
    assert "a different hook that must survive" in index  # not an exact duplicate: kept
    assert "- [Retries](orphan-one.md) — payments retries back off exponentially" in index
    assert "- [orphan-two](orphan%20two.md) — the on-call rotation" in index
    # New entries go right after the last entry, before the paragraph.
    assert index.index("orphan-one.md") < index.index("Some paragraph")
    fixed = after["reference_grafana.md"].decode()
    assert fixed == (
        "---\nname: reference-grafana\n"
        "description: The checkout board is the first stop when p95 alerts fire\n"
        "type: reference\n---\n" + MESSY["reference_grafana.md"]
    )
    assert after["no-frontmatter.md"] == before["no-frontmatter.md"]

    assert f"fixed {root / 'MEMORY.md'} (MEM006): Remove the duplicate entry for alpha.md" in err
    assert f"fixed {root / 'orphan-one.md'} (MEM107): Add orphan-one.md to MEMORY.md" in err
    assert (
        f"fixed {root / 'reference_grafana.md'} (MEM101): Add frontmatter as a `reference` memory"
        in err
    )
    # What is left is what no safe fix can do: the duplicate with another hook, the paragraph,
    # and the frontmatter of a file that does not say what kind of memory it is.
    out = captured.out
    assert code == 1
    assert [line.split(": ")[1].split()[1] for line in out.splitlines()] == [
        "MEM006",
        "MEM004",
        "MEM101",
    ]


def test_fix_is_idempotent(make_dir: MakeDir) -> None:
    root = make_dir(dict(MESSY))
    main(["lint", str(root), "--fix"])
    once = snapshot(root)
    main(["lint", str(root), "--fix"])
    assert snapshot(root) == once


def test_fix_creates_the_index_when_missing(make_dir: MakeDir) -> None:
    root = make_dir(
        {
            "a.md": topic("a", "deploys go out on Tuesdays after the canary bake"),
            "b.md": topic("b", "the staging database is reset every Sunday night"),
        }
    )
    assert main(["lint", str(root), "--fix"]) == 0
    index = (root / "MEMORY.md").read_text(encoding="utf-8")
    assert index == (
        "- [a](a.md) — deploys go out on Tuesdays after the canary bake\n"
        "- [b](b.md) — the staging database is reset every Sunday night\n"
    )


def test_fix_keeps_bom_and_crlf(make_dir: MakeDir) -> None:
    index = "\ufeff# Index\r\n- [A](a.md) — a hook\r\n"
    root = make_dir(
        {
            "MEMORY.md": index.encode("utf-8"),
            "a.md": topic("a", "alpha deploys need a second approver from the platform team"),
            "b.md": topic("b", "beta flags are removed two weeks after full rollout"),
        }
    )
    main(["lint", str(root), "--fix"])
    data = (root / "MEMORY.md").read_bytes()
    assert data.startswith(b"\xef\xbb\xbf# Index\r\n- [A](a.md)")
    assert data.endswith(
        b"- [b](b.md) \xe2\x80\x94 beta flags are removed two weeks after full rollout\r\n"
    )
    assert b"\n" not in data.replace(b"\r\n", b"")


def test_fix_never_rewrites_a_file_that_is_not_utf8(make_dir: MakeDir) -> None:
    raw = b"# Index\n- [A](a.md) \xe9t\xe9\n"
    root = make_dir(
        {
            "MEMORY.md": raw,
            "a.md": topic("a", "alpha deploys need a second approver from the platform team"),
            "b.md": topic("b", "beta flags are removed two weeks after full rollout"),
        }
    )
    state = DirState(root)
    state.refresh()
    report = apply_fixes(state.lint().diagnostics)
    assert (root / "MEMORY.md").read_bytes() == raw
    assert report.applied == ()
    assert any("not UTF-8" in reason for _, reason in report.skipped)


def test_unsafe_fixes_are_left_for_the_editor(make_dir: MakeDir) -> None:
    root = make_dir(
        {"MEMORY.md": "- [A](a.md) — hook\n", "a.md": topic("a", "x" * 10 + " y z w", "decision")}
    )
    state = DirState(root)
    state.refresh()
    diagnostics = state.lint().diagnostics
    report = apply_fixes(diagnostics)
    assert report.written == ()
    assert [d.code for d, _ in report.skipped] == ["MEM104"]
    report = apply_fixes(diagnostics, safe_only=False)
    assert [d.code for d in report.applied] == ["MEM104"]
    assert "type: project\n" in (root / "a.md").read_text(encoding="utf-8")


def test_apply_text_edits_orders_inserts_and_rejects_bad_edits() -> None:
    text = "one\ntwo\nthree"
    p = Path("/m/x.md")
    edits = [
        TextEdit(p, "x.md", Span(1, 0, 1, 0), "A\n"),
        TextEdit(p, "x.md", Span(1, 0, 1, 0), "B\n"),
        TextEdit(p, "x.md", Span(2, 0, 2, 5), "3"),
        TextEdit(p, "x.md", Span(0, 3, 0, 3), "!"),
    ]
    assert apply_text_edits(text, edits) == "one!\nA\nB\ntwo\n3"
    with pytest.raises(FixError):
        apply_text_edits(text, [TextEdit(p, "x.md", Span(5, 0, 5, 0), "x")])
    with pytest.raises(FixError):
        apply_text_edits(text, [TextEdit(p, "x.md", Span(0, 9, 0, 9), "x")])
    overlapping = [
        TextEdit(p, "x.md", Span(0, 0, 1, 2), ""),
        TextEdit(p, "x.md", Span(1, 0, 1, 3), ""),
    ]
    with pytest.raises(FixError):
        apply_text_edits(text, overlapping)


WORDS = ("canary", "rollback", "schema", "billing", "oncall", "search", "release", "backup")


def test_fix_on_random_directories_loses_nothing(make_dir: MakeDir) -> None:
    rng = random.Random(7)
    files: dict[str, str | bytes] = {}
    entries = []
    for i in range(40):
        rel = f"m{i:02d}.md"
        kind = rng.random()
        if kind < 0.2:
            # No frontmatter, in a file whose name says its type: the skeleton is safe.
            rel = f"project_m{i:02d}.md"
            word = WORDS[i % len(WORDS)]
            files[rel] = f"# Note {i}\nThe {word} step {i} needs a {WORDS[-1 - i % 7]} first.\n"
        else:
            files[rel] = topic(f"m{i:02d}", f"memory number {i} about deploy window {rng.random()}")
        if rng.random() < 0.6:
            entries.append(f"- [M{i}]({rel}) — hook {i}")
            if rng.random() < 0.2:
                entries.append(f"- [M{i}]({rel}) — hook {i}")
    files["MEMORY.md"] = "\n".join(entries) + ("\n" if rng.random() < 0.5 else "")
    root = make_dir(files)
    before = snapshot(root)
    main(["lint", str(root), "--fix", "--format", "json"])
    assert_nothing_lost(before, snapshot(root))
    state = DirState(root)
    state.refresh()
    left = {d.code for d in state.lint().diagnostics}
    assert not left & {"MEM101", "MEM107", "MEM006"}


def test_fix_quotes_a_description_cut_by_a_comment_only_when_the_hash_starts_a_word(
    make_dir: Callable[..., Path],
) -> None:
    glued = (
        "---\nname: a\ndescription: Ticket #58 cache headers for the CDN\ntype: project\n---\nx\n"
    )
    spaced = (
        "---\nname: b\ndescription: cache headers for the CDN  # see runbook\ntype: project\n"
        "---\nx\n"
    )
    index = "- [A](a.md) — cache headers\n- [B](b.md) — cache headers\n"
    root = make_dir({"MEMORY.md": index, "a.md": glued, "b.md": spaced})
    main(["lint", "--fix", str(root)])
    assert (root / "a.md").read_text() == glued.replace(
        "Ticket #58 cache headers for the CDN", '"Ticket #58 cache headers for the CDN"'
    )
    assert (root / "b.md").read_text() == spaced  # maybe a comment someone meant: editor only


def test_mem129_fix_drafts_the_hook_from_the_description_and_is_never_applied_by_fix(
    make_dir: MakeDir,
) -> None:
    launch = (
        "---\nname: launch\ndescription: the launch moved to May 5\ntype: project\n---\n"
        "The launch moved to May 5.\n"
    )
    index = "- [Launch](launch.md) — due March 3\n"
    root = make_dir({"MEMORY.md": index, "launch.md": launch})
    state = DirState(root)
    state.refresh()
    (found,) = [d for d in state.lint().diagnostics if d.code == "MEM129"]
    assert found.fix is not None and not found.fix.safe
    assert apply_text_edits(index, list(found.fix.edits)) == (
        "- [Launch](launch.md) — the launch moved to May 5\n"
    )
    report = apply_fixes([found])  # `memdir lint --fix`: the hook someone wrote is theirs
    assert report.written == ()
    assert (root / "MEMORY.md").read_text(encoding="utf-8") == index
