"""The lint engine's DirState: only what changed is read again, editor text wins, and a directory
rule runs again only when what it reads changed. Told by test doubles around the engine's
readers and the registry's checks (the engine counts nothing itself), never by time."""

from __future__ import annotations

import os
import sys
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import pytest
from memdir.agent.topic import parse_topic_text
from memdir.config import Settings
from memdir.lint import DirState, lint_directory
from memdir.lint.diagnostic import Diagnostic
from memhelpers import ROOT, count_disk_reads, count_rule_runs

MakeDir = Callable[..., Path]
BENCHMARKS = ROOT / "benchmarks"


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


def test_cold_refresh_reads_every_file_once(
    make_dir: MakeDir, monkeypatch: pytest.MonkeyPatch
) -> None:
    reads = count_disk_reads(monkeypatch.setattr)
    root = small_dir(make_dir)
    state = DirState(root)
    state.refresh()
    assert set(reads) == {f"m{i:02d}.md" for i in range(20)} | {"MEMORY.md"}
    assert set(reads.values()) == {1}
    assert codes(state) == []


def test_a_stopped_refresh_keeps_what_it_read_and_the_next_one_finishes_it(
    make_dir: MakeDir, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What the language server does when an edit arrives during the first check (issue 18)."""
    reads = count_disk_reads(monkeypatch.setattr)
    root = small_dir(make_dir)
    (root / "orphan.md").write_text("# no frontmatter\n", encoding="utf-8")
    with (root / "MEMORY.md").open("a", encoding="utf-8") as index:
        index.write("- [Gone](gone.md) — a memory not written\n")
    state = DirState(root)
    told: list[tuple[int, int]] = []
    state.refresh(lambda: len(reads) == 7, lambda done, total: told.append((done, total)))
    assert state.refresh_owed
    assert told == [(done, 21) for done in range(1, 8)]  # 20 topic files and the orphan
    assert len(reads) == 7 and set(state.summaries()) == set(reads)
    with pytest.raises(RuntimeError, match="refresh"):
        state.lint()  # never taken for the whole directory
    state.refresh(lambda: True)  # stopped before its first file: drops nothing it had
    assert state.refresh_owed and set(state.summaries()) == set(reads)

    # Meanwhile: an edit of a file read, a file not reached yet deleted.
    first = sorted(reads)
    edited = topic("m03", "'an edited description'")
    state.update(root / first[3], edited)
    (root / "m19.md").unlink()
    state.refresh()
    assert not state.refresh_owed
    every = {p.name for p in root.glob("*.md")}
    assert "m19.md" not in state.summaries() and set(state.summaries()) == every - {"MEMORY.md"}
    assert reads == Counter(dict.fromkeys(every, 1))  # each file read once, m19 never
    assert state.lint().diagnostics == fresh(root, {first[3]: edited})
    assert {d.code for d in fresh(root, {first[3]: edited})} >= {"MEM005", "MEM101", "MEM107"}


def test_refresh_after_a_change_rereads_only_that_file(
    make_dir: MakeDir, monkeypatch: pytest.MonkeyPatch
) -> None:
    reads = count_disk_reads(monkeypatch.setattr)
    root = small_dir(make_dir)
    state = DirState(root)
    state.refresh()
    state.lint()
    reads.clear()
    (root / "m07.md").write_text("# lost its frontmatter\n", encoding="utf-8")
    reread = state.refresh()
    assert reread == {"m07.md"}
    assert dict(reads) == {"m07.md": 1}
    result = state.lint()
    assert [(d.rel_path, d.code) for d in result.diagnostics] == [("m07.md", "MEM101")]
    assert result.changed == {"m07.md"}


def test_update_reads_one_file_and_recomputes_directory_rules(
    make_dir: MakeDir, monkeypatch: pytest.MonkeyPatch
) -> None:
    reads = count_disk_reads(monkeypatch.setattr)
    root = small_dir(make_dir)
    state = DirState(root)
    state.refresh()
    state.lint()
    reads.clear()
    # A new file on disk: an orphan.
    (root / "new.md").write_text(
        topic("m03", "the staging database is reset every Sunday night"), encoding="utf-8"
    )
    state.update(root / "new.md")
    assert dict(reads) == {"new.md": 1}
    result = state.lint()
    assert [(d.rel_path, d.code) for d in result.diagnostics] == [("new.md", "MEM107")]
    assert result.changed == {"new.md"}
    # The index links it now: the orphan goes away; only MEMORY.md is read.
    reads.clear()
    with (root / "MEMORY.md").open("a", encoding="utf-8") as handle:
        handle.write("- [New](new.md) — new\n")
    state.update(root / "MEMORY.md")
    assert dict(reads) == {"MEMORY.md": 1}
    assert ("new.md", "MEM107") not in codes(state)


def test_editor_text_wins_without_reading_the_disk(
    make_dir: MakeDir, monkeypatch: pytest.MonkeyPatch
) -> None:
    reads = count_disk_reads(monkeypatch.setattr)
    root = small_dir(make_dir)
    state = DirState(root)
    state.refresh()
    reads.clear()
    state.update("m05.md", "---\nname: m05\ntype: Project\n---\nunsaved\n")
    assert dict(reads) == {}
    assert codes(state) == [("m05.md", "MEM103"), ("m05.md", "MEM104")]
    # A refresh keeps the editor's text even though the disk differs.
    state.refresh()
    assert codes(state) == [("m05.md", "MEM103"), ("m05.md", "MEM104")]
    # Closing the document goes back to the disk.
    state.close(root / "m05.md")
    assert reads["m05.md"] == 1
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


def _gen_memdir():  # type: ignore[no-untyped-def]
    sys.path.insert(0, str(BENCHMARKS))
    try:
        import gen_memdir
    finally:
        sys.path.remove(str(BENCHMARKS))
    return gen_memdir


def test_lint_directory_is_a_cold_run(make_dir: MakeDir) -> None:
    root = small_dir(make_dir, 5)
    (root / "m02.md").write_text("# no frontmatter\n", encoding="utf-8")
    result = lint_directory(root)
    assert [(d.rel_path, d.code) for d in result.diagnostics] == [("m02.md", "MEM101")]
    assert result.files == 5
    assert result.by_file() == {"m02.md": list(result.diagnostics)}
    assert result.count("error") == 1


def test_update_never_reads_through_a_symlink_out(
    make_dir: MakeDir, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    reads = count_disk_reads(monkeypatch.setattr)
    root = small_dir(make_dir, 2)
    secret = tmp_path / "outside.md"
    secret.write_text(topic("outside", "somebody else's file outside the memory dir"), "utf-8")
    (root / "link.md").symlink_to(secret)
    state = DirState(root)
    state.refresh()
    state.update(root / "link.md")
    assert "link.md" not in reads
    assert [(d.rel_path, d.code) for d in state.lint().diagnostics] == [("link.md", "MEM114")]


def test_an_unchanged_directory_reuses_every_result(
    make_dir: MakeDir, monkeypatch: pytest.MonkeyPatch
) -> None:
    reads = count_disk_reads(monkeypatch.setattr)
    files = {f"m{i:03d}.md": topic(f"m{i:03d}", f"'{describe(i)}'") for i in range(205)}
    root = make_dir(files)  # no index: 205 orphans, 5 outside the prefetch window
    state = DirState(root, Settings(ignore=("MEM111",)))
    state.refresh()
    first = state.lint()
    assert len(first.diagnostics) == 210 and len(first.changed) == 205
    reads.clear()
    assert state.refresh() == set() and not reads
    second = state.lint()
    assert second.changed == frozenset()
    assert all(a is b for a, b in zip(first.diagnostics, second.diagnostics, strict=True))


def test_diagnostics_sort_by_their_sort_key(tmp_path: Path) -> None:
    root = tmp_path / "gen"
    _gen_memdir().generate(root, 300, 4)
    diagnostics = lint_directory(root).diagnostics
    assert list(diagnostics) == sorted(diagnostics, key=Diagnostic.sort_key)


# --- re-checks after project files change ----------------------------------------------------


def _citing_dir(tmp_path: Path) -> tuple[Path, Path]:
    """A project (plain directory) and a memory dir whose memories cite different things."""
    project = tmp_path / "project"
    for rel, text in {
        "src/app/payments.py": "def retry_payment(order):\n    return charge_card(order)\n",
        "src/app/cards.py": "def charge_card(order):\n    return order\n",
        "src/app/refunds.py": "def refund_all():\n    pass\n",
    }.items():
        (project / rel).parent.mkdir(parents=True, exist_ok=True)
        (project / rel).write_text(text, encoding="utf-8")
    memory = tmp_path / "memory"
    memory.mkdir()
    files = {
        "retry.md": "Call `retry_payment()` before refunding.\n",
        "charge.md": "Cards are charged by `charge_card()`.\n",
        "path.md": "The card code is in `src/app/cards.py`.\n",
        "plain.md": "Deploys wait for the freeze.\n",
    }
    for rel, body in files.items():
        (memory / rel).write_text(topic(rel[:-3], f"about {rel[:-3]}", body=body), "utf-8")
    index = "".join(f"- [{rel}]({rel}) — x\n" for rel in files)
    (memory / "MEMORY.md").write_text(index + "- Refunds: `refund_all()`.\n", encoding="utf-8")
    return project, memory


def _fresh_findings(memory: Path, project_root: Path) -> list[tuple[str, str, str]]:
    from memdir.project.lookup import Project

    state = DirState(memory, Settings(preview=True), Project.load(project_root, memory))
    state.refresh()
    return [(d.rel_path, d.code, d.message) for d in state.lint().diagnostics]


def test_a_project_change_rechecks_only_the_memories_that_asked_about_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from memdir.project.lookup import Project

    reads = count_disk_reads(monkeypatch.setattr)
    project_root, memory = _citing_dir(tmp_path)
    project = Project.load(project_root, memory)
    state = DirState(memory, Settings(preview=True), project)
    state.refresh()
    assert not {d.code for d in state.lint().diagnostics} & {"MEM117", "MEM118"}

    # A cited word renamed away: only the memory citing it is checked again.
    (project_root / "src/app/payments.py").write_text("def retry_charge(order):\n    pass\n")
    changed = project.update_file("src/app/payments.py")
    before = Counter(reads)
    assert state.recheck_citations(changed) == {"retry.md"}
    assert reads - before == Counter({"retry.md": 1})
    found = [(d.rel_path, d.code, d.message) for d in state.lint().diagnostics]
    assert ("retry.md", "MEM118") in [(rel, code) for rel, code, _ in found]
    assert found == _fresh_findings(memory, project_root)

    # A cited file deleted: the memory citing its path and the one citing the word it held.
    (project_root / "src/app/cards.py").unlink()
    changed = project.remove_file("src/app/cards.py")
    assert state.recheck_citations(changed) == {"charge.md", "path.md"}
    assert [(d.rel_path, d.code, d.message) for d in state.lint().diagnostics] == (
        _fresh_findings(memory, project_root)
    )

    # A word MEMORY.md cites: the index alone; an edit nothing cited depends on: nothing.
    (project_root / "src/app/refunds.py").write_text("def refund_some():\n    pass\n")
    assert state.recheck_citations(project.update_file("src/app/refunds.py")) == {"MEMORY.md"}
    (project_root / "src/app/refunds.py").write_text("def refund_some():\n    return 1\n")
    unrelated = project.update_file("src/app/refunds.py")
    assert not unrelated and state.recheck_citations(unrelated) == frozenset()
    assert [(d.rel_path, d.code, d.message) for d in state.lint().diagnostics] == (
        _fresh_findings(memory, project_root)
    )
    # Without an answer to go by, every memory that asked the project anything.
    assert state.recheck_citations() == {"retry.md", "charge.md", "path.md", "MEMORY.md"}


def test_what_a_file_asks_follows_its_editor_text(tmp_path: Path) -> None:
    from memdir.project.lookup import Project

    project_root, memory = _citing_dir(tmp_path)
    project = Project.load(project_root, memory)
    state = DirState(memory, Settings(preview=True), project)
    state.refresh()
    state.update(memory / "plain.md", topic("plain", "about plain", body="See `refund_all()`.\n"))
    (project_root / "src/app/refunds.py").unlink()
    changed = project.remove_file("src/app/refunds.py")
    assert state.recheck_citations(changed) == {"plain.md", "MEMORY.md"}
    assert ("plain.md", "MEM118") in codes(state)
    state.remove(memory / "plain.md")  # a file gone asks nothing
    assert state.recheck_citations(changed) == {"MEMORY.md"}


def test_a_new_project_rechecks_what_a_partial_one_was_never_asked(tmp_path: Path) -> None:
    from memdir.project.lookup import Project

    project_root, memory = _citing_dir(tmp_path)
    partial = Project.load(project_root, memory)
    partial.complete = False  # a walk that stopped: the citation rules ask it nothing
    state = DirState(memory, Settings(preview=True), partial)
    state.refresh()
    (project_root / "src/app/payments.py").unlink()
    state.set_project(Project.load(project_root, memory))
    assert ("retry.md", "MEM118") in codes(state)
    assert [(d.rel_path, d.code, d.message) for d in state.lint().diagnostics] == (
        _fresh_findings(memory, project_root)
    )


# --- what an edit re-runs (test doubles, never time) ------------------------------------------

# MEM111 and MEM128 are preview rules: off here.
ALL_DIRECTORY_RULES = {"MEM005", "MEM107", "MEM108", "MEM114", "MEM122", "MEM123", "MEM129"}


def fresh(root: Path, texts: dict[str, str]) -> tuple[Diagnostic, ...]:
    """A cold lint of the disk with the editor's ``texts`` on top."""
    cold = DirState(root)
    cold.refresh()
    for rel, text in texts.items():
        cold.update(root / rel, text)
    return cold.lint().diagnostics


def test_each_directory_rule_runs_only_when_what_it_reads_changed(
    make_dir: MakeDir, monkeypatch: pytest.MonkeyPatch
) -> None:
    runs = count_rule_runs(monkeypatch)
    root = small_dir(make_dir)
    state = DirState(root)
    state.refresh()
    state.lint()
    assert set(runs) == ALL_DIRECTORY_RULES
    texts: dict[str, str] = {}

    def ran(rel: str | None = None, text: str | None = None) -> set[str]:
        before = Counter(runs)
        if rel is None:
            state.refresh()
        else:
            if text is None:
                texts.pop(rel, None)
            else:
                texts[rel] = text
            state.update(root / rel, text)
        found = state.lint().diagnostics
        ran_now = set(runs - before)
        assert found == fresh(root, texts)
        return ran_now

    index = (root / "MEMORY.md").read_text(encoding="utf-8")
    # MEMORY.md: the rules that read it (dangling entries, orphans), not the prefetch window.
    assert ran("MEMORY.md", index + "- [Gone](gone.md) — not written yet\n") == {
        "MEM005",
        "MEM107",
        "MEM129",
    }
    # A body edit too short to change its runs of words: none.
    assert ran("m03.md", topic("m03", f"'{describe(3)}'", body="Another body.\n")) == set()
    # A body edit that keeps the rest of the summary: none either. Only the rules comparing
    # bodies read them (MEM127 with a project, MEM128 in preview), and neither is on here.
    body = "The rota swaps on Mondays and the lead signs off every swap.\n"
    assert ran("m03.md", topic("m03", f"'{describe(3)}'", body=body)) == set()
    # A description: the rules that read descriptions (duplicates, the orphan fix's hook).
    assert ran("m04.md", topic("m04", "a new description of the deploy freeze rota")) == {
        "MEM107",
        "MEM129",
    }
    # A save that changes only the modification time: the prefetch window.
    os.utime(root / "m06.md", (1_800_000_000, 1_800_000_000))
    assert ran("m06.md") == {"MEM108"}
    # A rescan that finds nothing new: the rules that look at the disk themselves.
    assert ran() == {"MEM005", "MEM122", "MEM123"}
    # A new file: every rule that reads the files.
    assert ran("new.md", topic("new", "a memory nobody has indexed yet, about tax rules")) == {
        "MEM005",
        "MEM107",
        "MEM108",
        "MEM123",
        "MEM129",
    }
    gone = {"MEM005", "MEM107", "MEM108", "MEM123", "MEM129"}
    assert ran("new.md", None) == gone  # gone again


def test_dangling_entries_are_told_from_the_scan_without_a_syscall_each(
    make_dir: MakeDir, monkeypatch: pytest.MonkeyPatch
) -> None:
    gone = "".join(f"- [Gone {i}](gone-{i}.md) — not written yet\n" for i in range(40))
    root = make_dir(
        {
            "MEMORY.md": gone
            + "- [Hidden](.hidden/h.md) — h\n- [Log](logs/l.md) — l\n"
            + "- [Sub](sub/gone.md) — s\n- [Real](sub/real.md) — r\n",
            ".hidden/h.md": topic("h", "a memory in a folder the scan leaves out"),
            "logs/l.md": topic("l", "a memory among the agent's own logs"),
            "sub/real.md": topic("real", "a memory in a folder the scan walks"),
        }
    )
    asked: list[str] = []
    is_file = Path.is_file

    def counted(path: Path) -> bool:
        asked.append(path.relative_to(root).as_posix())
        return is_file(path)

    monkeypatch.setattr(Path, "is_file", counted)
    state = DirState(root)
    state.refresh()
    dangling = {d.message.split()[2] for d in state.lint().diagnostics if d.code == "MEM005"}
    assert dangling == {f"gone-{i}.md" for i in range(40)} | {"sub/gone.md"}
    # The disk is asked only where the scan cannot tell: names it leaves out.
    assert sorted(asked) == [".hidden/h.md", "logs/l.md"]


def test_a_dangling_entrys_fix_needs_no_pyyaml(
    make_dir: MakeDir, monkeypatch: pytest.MonkeyPatch
) -> None:
    import yaml

    hooks = [f"deploys wait for Ana’s review — café rule {i}" for i in range(300)]
    index = "".join(f"- [Gone {i}](gone-{i}.md) — {hook}\n" for i, hook in enumerate(hooks))
    root = make_dir({"MEMORY.md": index})
    loads: list[object] = []
    monkeypatch.setattr(yaml, "safe_load", lambda *args, **kwargs: loads.append(args))
    state = DirState(root)
    state.refresh()
    found = [d for d in state.lint().diagnostics if d.code == "MEM005"]
    assert len(found) == 300
    fix = found[7].fix
    assert fix is not None and fix.creates
    created = parse_topic_text(fix.creates[0].text, root / "gone-7.md", "gone-7.md", 0.0, 0)
    assert created.description == hooks[7] and not created.problems
    assert loads == []  # plain values (a dash, an accent) need no PyYAML to render
    # A line inserted at the top moves every entry: each finding moves with it, same fix.
    state.update(root / "MEMORY.md", "# Index\n" + index)
    moved = [d for d in state.lint().diagnostics if d.code == "MEM005"]
    assert [d.span.start_line for d in moved[:2]] == [1, 2] and moved[7].fix == fix
