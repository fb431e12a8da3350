"""memdir.lint.parallel: a cold lint on forked workers gives exactly the sequential result."""

from __future__ import annotations

import marshal
import os
import sys
import threading
from pathlib import Path
from typing import Any

import pytest
from memdir.lint import parallel, rules
from memdir.lint.rules import prepare_description
from memdir.lint.state import DirState
from memdir.scan import iter_topic_entries
from memhelpers import topic

BENCHMARKS = Path(__file__).resolve().parent.parent / "benchmarks"

linux_only = pytest.mark.skipif(sys.platform != "linux", reason="workers are forked on Linux only")


def generated(root: Path, files: int, seed: int) -> Path:
    sys.path.insert(0, str(BENCHMARKS))
    try:
        import gen_memdir
    finally:
        sys.path.remove(str(BENCHMARKS))
    gen_memdir.generate(root, files, seed)
    return root


def with_odd_files(root: Path) -> Path:
    """Files every rule family reacts to, on top of a generated dir."""
    (root / "binary.md").write_bytes(b"\x00\x01\x02 not text")
    (root / "latin1.md").write_bytes("---\nname: caf\xe9\n---\n".encode("latin-1"))
    (root / "bare.md").write_text("just a note, no frontmatter\n", encoding="utf-8")
    (root / "secret.md").write_text(
        topic("secret", "where the deploy token for staging lives and who rotates it")
        + "token = Xk9mQ2vL8pZ3aB7qW4eR\n",
        encoding="utf-8",
    )
    (root / "sub").mkdir(exist_ok=True)
    (root / "sub" / "long.md").write_text(
        topic("long", "a long runbook for the nightly batch jobs and their failure modes")
        + "step\n" * 400,
        encoding="utf-8",
    )
    return root


def test_encode_then_decode_gives_back_every_result(tmp_path: Path) -> None:
    root = with_odd_files(generated(tmp_path / "m", 300, 7))
    state = DirState(root)
    state.refresh()
    results = state._files
    assert any(r.diagnostics and r.diagnostics[0].fix is not None for r in results.values())
    for result in results.values():
        data = parallel.encode(result.key, result.summary, result.diagnostics)
        key, summary, diagnostics, prepared = parallel.decode(
            marshal.loads(marshal.dumps(data)), root
        )
        assert (key, summary, diagnostics) == (result.key, result.summary, result.diagnostics)
        if summary.description and summary.usable:
            assert prepared == prepare_description(summary.description)
        else:
            assert prepared is None


def test_what_a_worker_sends_is_the_encoded_sequential_result(tmp_path: Path) -> None:
    root = with_odd_files(generated(tmp_path / "m", 300, 5))
    state = DirState(root)
    canonical = 0
    for path, rel in iter_topic_entries(root):
        result = state._read_and_check(path, rel)
        expected = parallel.encode(result.key, result.summary, result.diagnostics)
        assert state._load_encoded(path, rel) == expected, rel
        canonical += expected[6][:3] == (1, 6, 1) and expected[7][:3] == (2, 13, 2)
    assert canonical > 200  # the tuples built without a summary were compared too


@linux_only
@pytest.mark.parametrize("workers", [2, 3, 5])
def test_parallel_refresh_equals_the_sequential_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, workers: int
) -> None:
    root = with_odd_files(generated(tmp_path / "m", 400, 3))
    monkeypatch.setattr(parallel, "PARALLEL_MIN_FILES", 1)
    # Earlier tests can leave idle executor threads behind, which would (rightly) keep the CLI
    # from forking; they hold no lock the workers need, so this test forks regardless.
    monkeypatch.setattr(parallel, "available", lambda: True)
    sequential = DirState(root)
    sequential.refresh(workers=1)
    calls: list[int] = []
    load_shares = parallel.load_shares

    def spy(*args: Any) -> list[tuple[Any, ...]]:
        calls.append(args[2])
        return load_shares(*args)

    monkeypatch.setattr(parallel, "load_shares", spy)
    # MEM111's comparison in a child too (it needs 1,000 descriptions otherwise).
    monkeypatch.setattr(rules, "BACKGROUND_MIN_DESCRIPTIONS", 1)
    children: list[int] = []
    in_child = parallel.in_child

    def child_spy(call: Any) -> Any:
        children.append(1)
        return in_child(call)

    monkeypatch.setattr(parallel, "in_child", child_spy)
    forked = DirState(root)
    forked.refresh(workers=workers)
    assert calls == [workers]  # the forked path really ran
    assert list(forked.summaries()) == list(sequential.summaries())
    assert forked.summaries() == sequential.summaries()
    assert forked.lint().diagnostics == sequential.lint().diagnostics
    assert children == [1]
    assert any(
        d.code == "MEM111" and "near-duplicate" in d.message for d in sequential.lint().diagnostics
    )
    assert forked.reads == sequential.reads  # every file counted once, wherever it was read


def _tag(path: str, rel: str) -> tuple[Any, ...]:
    return (path, rel, os.getpid())


@linux_only
def test_shares_come_back_in_entry_order_from_several_processes() -> None:
    entries = [(f"/m/{i}.md", f"{i}.md") for i in range(23)]
    results = parallel.load_shares(entries, _tag, 4)
    assert [r[:2] for r in results] == entries
    pids = {r[2] for r in results}
    assert os.getpid() in pids and len(pids) == 4


@linux_only
def test_with_work_of_its_own_the_parent_forks_every_share() -> None:
    ran: list[int] = []
    entries = [(f"/m/{i}.md", f"{i}.md") for i in range(23)]
    results = parallel.load_shares(entries, _tag, 3, lambda: ran.append(os.getpid()))
    assert [r[:2] for r in results] == entries
    assert ran == [os.getpid()]
    pids = {r[2] for r in results}
    assert os.getpid() not in pids and len(pids) == 3


@linux_only
def test_entries_a_worker_defers_are_loaded_by_the_parent() -> None:
    parent = os.getpid()
    started: list[int] = []

    def load(path: str, rel: str) -> tuple[Any, ...]:
        if os.getpid() != parent and rel.startswith("1"):
            return parallel.DEFER
        return _tag(path, rel)

    entries = [(f"/m/{i}.md", f"{i}.md") for i in range(20)]
    results = parallel.load_shares(entries, load, 2, lambda: None, lambda: started.append(1))
    assert [r[:2] for r in results] == entries
    assert {r[1] for r in results if r[2] == parent} == {e[1] for e in entries if e[1][0] == "1"}
    assert started == []  # start_worker ran in the workers, not here


@linux_only
def test_files_that_need_pyyaml_are_read_by_the_parent_alone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from memdir import topic as topic_module

    root = with_odd_files(generated(tmp_path / "m", 300, 6))
    (root / "bad-yaml.md").write_text(
        "---\nname: bad\ndescription: [unclosed, list\ntype: user\n---\nBody.\n", "utf-8"
    )
    monkeypatch.setattr(parallel, "PARALLEL_MIN_FILES", 1)
    monkeypatch.setattr(parallel, "available", lambda: True)
    sequential = DirState(root)
    sequential.refresh()
    readers: dict[str, int] = {}
    read_and_check = DirState._read_and_check

    def spy(self: DirState, path: str, rel: str, *args: Any) -> Any:
        result = read_and_check(self, path, rel, *args)
        readers[rel] = os.getpid()  # (recorded in the process that got a result)
        return result

    monkeypatch.setattr(DirState, "_read_and_check", spy)
    monkeypatch.setattr(topic_module, "_YAML", None)  # as in a fresh `memdir lint`
    forked = DirState(root)
    forked.refresh(workers=2)
    assert readers["bad-yaml.md"] == os.getpid()
    assert forked.summaries() == sequential.summaries()
    assert forked.lint().diagnostics == sequential.lint().diagnostics
    assert any(d.code == "MEM102" for d in forked.lint().diagnostics)
    assert forked.reads == sequential.reads


@linux_only
def test_a_call_in_a_child_gives_its_value_or_is_made_here(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # (Idle threads of earlier tests would rightly keep it from forking; they hold no lock.)
    monkeypatch.setattr(parallel, "available", lambda: True)
    parent = os.getpid()
    assert parallel.in_child(lambda: [("a", "b", 0.5), os.getpid()])()[0] == ("a", "b", 0.5)
    assert parallel.in_child(lambda: os.getpid())() != parent

    def fails_in_the_child() -> int:
        if os.getpid() != parent:
            raise RuntimeError("child trouble")
        return 7

    assert parallel.in_child(fails_in_the_child)() == 7
    assert parallel.in_child(lambda: object() if os.getpid() != parent else 8)() == 8


@linux_only
def test_a_failing_worker_share_is_done_by_the_parent() -> None:
    parent = os.getpid()

    def load(path: str, rel: str) -> tuple[Any, ...]:
        if os.getpid() != parent and rel.startswith("1"):
            raise RuntimeError("worker trouble")
        return _tag(path, rel)

    entries = [(f"/m/{i}.md", f"{i}.md") for i in range(20)]
    results = parallel.load_shares(entries, load, 3)
    assert [r[:2] for r in results] == entries
    # The shares whose worker raised were loaded again, by the parent.
    failed = [r for r in results if r[1].startswith("1")]
    assert failed and all(r[2] == parent for r in failed)


@linux_only
def test_output_a_worker_cannot_send_is_redone(monkeypatch: pytest.MonkeyPatch) -> None:
    parent = os.getpid()

    def load(path: str, rel: str) -> tuple[Any, ...]:
        # An object marshal cannot write: the worker fails after loading, not during.
        return (path, rel, os.getpid()) if os.getpid() == parent else (object(),)

    entries = [(f"/m/{i}.md", f"{i}.md") for i in range(9)]
    results = parallel.load_shares(entries, load, 3)
    assert results == [(p, r, parent) for p, r in entries]


def test_not_used_beside_other_threads() -> None:
    stop = threading.Event()
    thread = threading.Thread(target=stop.wait)
    thread.start()
    try:
        assert not parallel.available()
    finally:
        stop.set()
        thread.join()


def test_small_reads_stay_in_process(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = generated(tmp_path / "m", 50, 1)
    forks: list[int] = []
    monkeypatch.setattr(parallel, "load_shares", lambda *a: forks.append(1) or [])
    DirState(root).refresh(workers=4)
    assert forks == []  # 50 files: below PARALLEL_MIN_FILES


def test_jobs_option_is_checked(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    from memdir.cli import main

    for bad in ("0", "x", "-2"):
        with pytest.raises(SystemExit) as exit_info:
            main(["lint", str(tmp_path), "--jobs", bad])
        assert exit_info.value.code == 2
    assert "--jobs" in capsys.readouterr().err
