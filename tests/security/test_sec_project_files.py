"""Issue 26: special files never block memdir, and links out of the dir are not followed.

Every file memdir opens in a memory dir, a project or a settings path may be a FIFO (opening it
blocks a reader for good), a symlink to ``/dev/zero`` (a read that never ends), a symlink to a
file outside, a huge file or a directory. Each case puts one of them where memdir reads and runs
the command that reads it in a child process, under a hang guard (``timeout=``) and a memory
limit (so a regression fails instead of eating the machine): it must answer, say what it
skipped, and never take anything from outside through a link.
"""

from __future__ import annotations

import contextlib
import json
import os
import resource
import shutil
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from memdir.project import listing, lookup
from memdir.project.lookup import Project
from memhelpers import git, run_memdir, topic, write_files

pytestmark = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs (POSIX)")

MakeDir = Callable[[dict[str, str | bytes]], Path]
#: A hang guard only: every case answers in about a second.
HANG_GUARD = 60
KINDS = ("fifo", "dev-zero", "outside", "huge", "directory")
#: Larger than every cap memdir reads a file a project or memory dir supplies up to.
HUGE = 64 * 1024 * 1024


def _limit_memory() -> None:
    limit = 2 * 1024 * 1024 * 1024
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))


def memdir(
    *args: str, cwd: Path | None = None, env: dict[str, str] | None = None
) -> tuple[int, str, str]:
    """``python -m memdir ARGS`` under the hang guard and a 2 GiB memory limit."""
    env = {**os.environ, **(env or {})}
    done = run_memdir(*args, cwd=cwd, env=env, timeout=HANG_GUARD, preexec_fn=_limit_memory)
    return done.returncode, done.stdout, done.stderr


#: Where "outside" links lead: set per test (see the autouse fixture below).
OUTSIDE: list[Path] = []


@pytest.fixture(autouse=True)
def outside_dir(tmp_path: Path) -> Iterator[None]:
    OUTSIDE.append(tmp_path / "outside")
    OUTSIDE[-1].mkdir()
    yield
    OUTSIDE.pop()


def plant(path: Path, kind: str, outside_text: str = "") -> None:
    """Put a ``kind`` special file at ``path`` (its folder made); "outside" links to a regular
    file outside every dir the test reads (``tmp_path/outside``), holding ``outside_text``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.is_symlink() or path.is_file():
        path.unlink()
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "dev-zero":
        path.symlink_to("/dev/zero")
    elif kind == "outside":
        outside = OUTSIDE[-1] / path.name
        while outside.exists():
            outside = outside.with_name("x" + outside.name)
        outside.write_text(outside_text)
        path.symlink_to(outside)
    elif kind == "huge":
        with path.open("wb") as handle:
            handle.truncate(HUGE)  # sparse: costs no disk
    else:
        path.mkdir()


MEMORY = {
    "MEMORY.md": "- [Payments](payments.md) — where payments retry\n",
    "payments.md": topic(
        "payments", "where payments retry", body="`retry_payment` lives in `src/app.py`.\n"
    ),
}


# --- settings files --------------------------------------------------------------------------


@pytest.mark.parametrize("kind", KINDS)
def test_memdir_toml(kind: str, make_dir: MakeDir) -> None:
    """``memdir.toml`` in the memory dir: never waited on, never read past its cap, never read
    through a link leading out of the dir; the command says which file it could not use."""
    root = make_dir(MEMORY)
    plant(root / "memdir.toml", kind, "index_line_limit = 5\n")
    code, out, err = memdir("lint", str(root), "--format", "json")
    assert code == 2, (out, err)
    assert "memdir.toml" in err
    if kind == "outside":
        assert "outside" in err
    if kind == "huge":
        assert "larger than" in err


@pytest.mark.parametrize("kind", KINDS)
def test_pyproject_toml(kind: str, tmp_path: Path) -> None:
    """The ``[tool.memdir]`` of the project's ``pyproject.toml`` (the nearest above the memory
    dir), the same way."""
    project = tmp_path / "project"
    memory = project / "docs" / "memory"
    write_files(memory, MEMORY)
    plant(project / "pyproject.toml", kind, "[tool.memdir]\nindex_line_limit = 5\n")
    code, out, err = memdir("lint", str(memory), "--format", "json")
    if kind in ("outside", "huge"):
        assert code == 2, (out, err)
        assert "pyproject.toml" in err
    else:  # not a regular file: no pyproject.toml at all
        assert code in (0, 1), err


@pytest.mark.parametrize(
    "text",
    [
        "a = " + "[" * 100_000 + "]" * 100_000 + "\n",
        "a = " + "{b = " * 50_000 + "1" + "}" * 50_000 + "\n",
        "\udcff = 1\n",  # not UTF-8
        "tool = 'not a table'\n",
        "[tool]\nmemdir = 1\n",
    ],
    ids=["nested-arrays", "nested-tables", "not-utf8", "tool-is-a-string", "memdir-is-a-number"],
)
def test_a_settings_file_that_does_not_parse_is_an_error_not_a_crash(
    text: str, tmp_path: Path
) -> None:
    project = tmp_path / "project"
    memory = project / "memory"
    write_files(memory, MEMORY)
    (project / "pyproject.toml").write_bytes(text.encode("utf-8", "surrogateescape"))
    code, _, err = memdir("lint", str(memory), "--format", "json")
    assert "Traceback" not in err
    if "memdir" in text or "tool" in text:
        assert code in (0, 1)  # no [tool.memdir] table: defaults
    else:
        assert code == 2 and "pyproject.toml" in err


#: The agent's settings files memdir reads to place memory, relative to a project / config dir.
CLAUDE_SETTINGS = {
    "project-local": ("project", ".claude/settings.local.json"),
    "project-shared": ("project", ".claude/settings.json"),
    "user": ("config", "settings.json"),
}


def claude_settings_file(tmp_path: Path, which: str) -> Path:
    """Where the settings file ``which`` of :data:`CLAUDE_SETTINGS` lives, its project
    (``tmp_path/project``) and config dir (``tmp_path/config``) made."""
    (tmp_path / "project").mkdir()
    (tmp_path / "config").mkdir()
    base, rel = CLAUDE_SETTINGS[which]
    return tmp_path / base / rel


def where_json(tmp_path: Path) -> tuple[int, str, str]:
    """``memdir where PROJECT --json`` with the agent's config dir and the home in
    ``tmp_path``."""
    env = {"CLAUDE_CONFIG_DIR": str(tmp_path / "config"), "HOME": str(tmp_path)}
    return memdir("where", str(tmp_path / "project"), "--json", env=env)


@pytest.mark.parametrize("kind", [k for k in KINDS if k != "outside"])
@pytest.mark.parametrize("which", sorted(CLAUDE_SETTINGS))
def test_claude_settings_files(which: str, kind: str, tmp_path: Path) -> None:
    """``memdir where`` (and every command that finds the memory dir itself, the hook among
    them) reads the agent's settings files: a special or huge one is skipped with a note."""
    plant(claude_settings_file(tmp_path, which), kind)
    code, out, err = where_json(tmp_path)
    assert code == 0, err
    where = json.loads(out)
    assert where["source"] == "derived"
    assert where["memory_dir"].startswith(str(tmp_path / "config"))


@pytest.mark.parametrize("which", sorted(CLAUDE_SETTINGS))
def test_deeply_nested_claude_settings_are_ignored(which: str, tmp_path: Path) -> None:
    path = claude_settings_file(tmp_path, which)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("[" * 100_000 + "]" * 100_000)
    code, out, err = where_json(tmp_path)
    assert code == 0, err
    assert any("nested too deeply" in note for note in json.loads(out)["notes"])


@pytest.mark.parametrize("kind", ["fifo", "dev-zero", "huge"])
def test_a_dot_git_file(kind: str, tmp_path: Path) -> None:
    """A ``.git`` file names a linked work tree's git dir; one that is special or huge is no
    git dir, and never read whole."""
    project = tmp_path / "project"
    plant(project / ".git", kind)
    code, out, err = memdir(
        "where", str(project), "--json", env={"CLAUDE_CONFIG_DIR": str(tmp_path / "c")}
    )
    assert code == 0, err
    assert json.loads(out)["project_root"] == str(project.resolve())


@pytest.mark.parametrize("kind", ["fifo", "dev-zero", "huge"])
def test_a_worktree_pointer(kind: str, tmp_path: Path) -> None:
    """A linked work tree's ``commondir`` and ``gitdir`` files, the same way."""
    main = tmp_path / "main"
    worktrees = main / ".git" / "worktrees" / "wt"
    worktrees.mkdir(parents=True)
    project = tmp_path / "wt"
    project.mkdir()
    (project / ".git").write_text(f"gitdir: {worktrees}\n")
    (worktrees / "commondir").write_text("../..\n")
    plant(worktrees / "gitdir", kind)
    code, out, err = memdir(
        "where", str(project), "--json", env={"CLAUDE_CONFIG_DIR": str(tmp_path / "c")}
    )
    assert code == 0, err
    assert json.loads(out)["project_root"] == str(project.resolve())


# --- project files ---------------------------------------------------------------------------


def _citations(out: str) -> dict[str, str]:
    return {d["code"]: d["message"] for d in json.loads(out) if d["code"] in ("MEM117", "MEM118")}


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("use_git", [False, True], ids=["walk", "git"])
def test_a_cited_project_file(kind: str, use_git: bool, tmp_path: Path, make_dir: MakeDir) -> None:
    """``memdir lint --project``: the file a memory cites is special, huge or a link leading
    out of the project. It answers; the word only the outside file holds is not vouched for."""
    project = tmp_path / "project"
    write_files(project, {"README.md": "A project.\n", "src/app.py": "x = 1\n"})
    if use_git:
        git(project, "init", "-q", "-b", "main")
        git(project, "add", "-A")
        git(project, "commit", "-q", "-m", "start")
    # After the commit: git's index has a regular file, the work tree the planted one.
    plant(project / "src" / "app.py", kind, "def retry_payment(): pass\n")
    code, out, err = memdir(
        "lint", str(make_dir(MEMORY)), "--project", str(project), "--format", "json", "--preview"
    )
    assert code in (0, 1), err
    found = _citations(out)
    assert "retry_payment" in found.get("MEM118", ""), found


def test_a_folder_link_leading_out_vouches_for_nothing(tmp_path: Path, make_dir: MakeDir) -> None:
    """A tracked file under a folder that the work tree makes a link leading out."""
    project = tmp_path / "project"
    write_files(project, {"README.md": "A project.\n", "src/app.py": "x = 1\n"})
    git(project, "init", "-q", "-b", "main")
    git(project, "add", "-A")
    git(project, "commit", "-q", "-m", "start")
    outside = tmp_path / "elsewhere"
    write_files(outside, {"app.py": "def retry_payment(): pass\n"})
    shutil.rmtree(project / "src")
    (project / "src").symlink_to(outside, target_is_directory=True)
    code, out, err = memdir(
        "lint", str(make_dir(MEMORY)), "--project", str(project), "--format", "json", "--preview"
    )
    assert code in (0, 1), err
    assert "retry_payment" in _citations(out).get("MEM118", "")


@pytest.fixture
def unblock() -> Iterator[list[Path]]:
    """FIFOs to open for writing at the end: a reader stuck on one (the bug) is let go."""
    fifos: list[Path] = []
    yield fifos
    for fifo in fifos:
        with contextlib.suppress(OSError):
            os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))


def _in_thread(call: Callable[[], object]) -> object:
    """``call()`` on a thread under the hang guard: a call stuck on a FIFO fails the test."""
    result: list[object] = []
    thread = threading.Thread(target=lambda: result.append(call()), daemon=True)
    thread.start()
    thread.join(HANG_GUARD)
    assert not thread.is_alive(), "memdir blocked on a special file"
    return result[0]


@pytest.mark.parametrize("kind", ["fifo", "dev-zero", "outside", "huge"])
@pytest.mark.parametrize("use_git", [False, True], ids=["walk", "git"])
def test_a_project_file_created_later(
    kind: str, use_git: bool, tmp_path: Path, make_dir: MakeDir, unblock: list[Path]
) -> None:
    """The language server's watcher reports a new project file (``Project.update_file``):
    a FIFO, a link or a huge file is taken without blocking and without following the link."""
    project = tmp_path / "project"
    write_files(project, {"README.md": "A project.\n"})
    if use_git:
        git(project, "init", "-q", "-b", "main")
        git(project, "add", "-A")
        git(project, "commit", "-q", "-m", "start")
    loaded = Project.load(project, make_dir(MEMORY), ["retry_payment"])
    assert not loaded.has_word("retry_payment")
    plant(project / "src" / "app.py", kind, "def retry_payment(): pass\n")
    if kind == "fifo":
        unblock.append(project / "src" / "app.py")
    _in_thread(lambda: loaded.update_file("src/app.py"))
    assert not loaded.has_word("retry_payment")


# --- git itself blocking on a special file -----------------------------------------------------


@pytest.fixture
def quick_git(monkeypatch: pytest.MonkeyPatch) -> None:
    """git's timeouts cut to a second: these cases are about git waiting on a FIFO."""
    import memdir.git as git_module  # the runner, where the timeout lives

    monkeypatch.setattr(git_module, "GIT_TIMEOUT", 1.0)
    monkeypatch.setattr(listing, "_PROBE_TIMEOUT", 1.0)
    monkeypatch.setattr(lookup, "_PROBE_TIMEOUT", 1.0)


@pytest.mark.processes  # waits out git's time limit (a second) each
@pytest.mark.parametrize("where", [".gitignore", ".git/info/exclude", "include"])
def test_git_waiting_on_a_fifo_is_given_up(
    where: str,
    tmp_path: Path,
    make_dir: MakeDir,
    unblock: list[Path],
    quick_git: None,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """git opens a ``.gitignore``, ``info/exclude`` or a config's ``include.path`` however it
    is, and a FIFO there blocks it: memdir gives git up after its timeout, still answers (from
    a walk of the project when the listing is what blocked) and asks ``check-ignore`` once."""
    project = tmp_path / "project"
    write_files(project, {"README.md": "A project.\n", "src/app.py": "def retry_payment(): pass\n"})
    git(project, "init", "-q", "-b", "main")
    git(project, "add", "-A")
    git(project, "commit", "-q", "-m", "start")
    fifo = tmp_path / "fifo" if where == "include" else project / where
    fifo.unlink(missing_ok=True)
    os.mkfifo(fifo)
    if where == "include":
        with (project / ".git" / "config").open("a") as handle:
            handle.write(f"[include]\n\tpath = {fifo}\n")
    calls: list[tuple[str, ...]] = []
    real = listing.run_git

    def counted(root: Path, *args: str, **kwargs: object) -> object:
        calls.append(args)
        return real(root, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(listing, "run_git", counted)
    monkeypatch.setattr(lookup, "run_git", counted)
    loaded = _in_thread(lambda: Project.load(project, make_dir(MEMORY), ["retry_payment"]))
    assert isinstance(loaded, Project)
    assert "src/app.py" in loaded.files and loaded.has_word("retry_payment")
    for name in ("a.py", "b/c.py", "d/e.py"):
        write_files(project, {name: "x = 1\n"})
        _in_thread(lambda name=name: loaded.update_file(name))  # type: ignore[misc]
    assert sum(1 for args in calls if args[0] == "check-ignore") <= 1


# --- memory dir files --------------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["fifo", "dev-zero", "huge", "directory"])
def test_a_special_journal(kind: str, make_dir: MakeDir) -> None:
    """The writer's intent journal, read by lint (MEM122), is special: lint still answers."""
    root = make_dir(MEMORY)
    plant(root / ".memdir-intent.json", kind)
    code, _, err = memdir("lint", str(root), "--format", "json")
    assert code in (0, 1), err


@pytest.mark.parametrize("kind", ["fifo", "dev-zero"])
def test_extraction_dry_run_copies_no_special_file(
    kind: str, make_dir: MakeDir, tmp_path: Path, unblock: list[Path]
) -> None:
    """``memdir extract --dry-run`` copies the memory dir into a sandbox first: a FIFO or
    device there is left out, not opened."""
    from memdir.extract.sandbox import _copy_for_dry_run

    root = make_dir(MEMORY)
    plant(root / "stuck.md", kind)
    if kind == "fifo":
        unblock.append(root / "stuck.md")
    sandbox = tmp_path / "sandbox"
    _in_thread(lambda: _copy_for_dry_run(root, sandbox))
    assert (sandbox / "payments.md").read_text() == MEMORY["payments.md"]
    assert not (sandbox / "stuck.md").is_file()
