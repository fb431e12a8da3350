"""Issue 26: a project's git configuration runs nothing when memdir reads the project.

memdir runs git to list a project's files, its renames and deletions, and whether a new file is
ignored (``memdir lint --project``, the language server's project of every workspace). A cloned
or downloaded repository brings its own ``.git/config``; each case below sets one key git can
run a command from to a script that leaves a marker file, and loads the project the way the
citation rules do (the listing, git's rename detection over the history and the index, and
``check-ignore`` for a file created afterwards). No marker may appear, and memdir still answers.

Which keys git 2.39 actually runs for memdir's commands (measured with these tests against the
code before the fix): ``core.fsmonitor`` (``ls-files``, ``diff --cached``, ``check-ignore``),
and the transports of a partial clone's lazy fetch of the blobs rename detection compares
(``protocol.ext.allow`` with an ``ext::`` remote, ``core.sshCommand``, ``core.gitProxy``,
``credential.helper`` behind an HTTP 401); the same through ``include.path`` and through the
``GIT_CONFIG_*`` environment memdir inherits. The others are kept as cases all the same: they
must stay inert if memdir ever runs more of git.
"""

from __future__ import annotations

import http.server
import os
import shutil
import stat
import subprocess
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from memdir.project.lookup import Project
from memhelpers import GIT_ENV, git, run_memdir, topic, write_files

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="needs git")

#: Hooks git could run when it writes the index or a ref (none of memdir's commands should).
HOOKS = (
    "post-index-change", "reference-transaction", "post-checkout", "post-merge", "pre-commit",
    "post-commit", "pre-auto-gc", "post-rewrite", "fsmonitor-watchman", "pre-push",
)  # fmt: skip
FILES = {
    "src/app/payments.py": "def retry_payment(order):\n    return charge_card(order)\n",
    "notes/plan.txt": "\n".join(f"line {n} of the plan" for n in range(60)) + "\n",
    "data/table.bin": "\n".join(f"row {n}" for n in range(60)) + "\n",
    "old/gone.py": "GONE = 1\n",
    ".gitattributes": "*.txt filter=evil diff=evil\n*.bin diff=evil\n",
}
MEMORY = {
    "MEMORY.md": "- [Payments](payments.md) — where payments retry\n",
    "payments.md": topic(
        "payments",
        "where payments retry",
        body="`retry_payment` in `src/app/payments.py` reads `notes/plan.txt`.\n",
    ),
}


def _script(path: Path, marker: Path) -> Path:
    """An executable that leaves ``marker`` whatever it is called with (shell or not)."""
    path.write_text(f"#!/bin/sh\ntouch '{marker}'\ncat >/dev/null 2>&1 || true\n")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


def _history(root: Path) -> None:
    """Commits with an exact and an inexact rename, a deletion and a signed commit; an inexact
    rename staged; an untracked file: every kind of git output memdir reads."""
    write_files(root, FILES)
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "start")
    git(root, "mv", "notes/plan.txt", "notes/plan2.txt")
    with (root / "notes/plan2.txt").open("a") as handle:
        handle.write("one more line\n")
    git(root, "add", "-A")
    git(root, "rm", "-q", "old/gone.py")
    git(root, "commit", "-q", "-m", "move the plan")
    # A commit carrying a signature: `log.showSignature` would hand it to gpg.program.
    tree = (
        subprocess.run(
            ["git", "-C", str(root), "write-tree"], capture_output=True, env=GIT_ENV, check=True
        )
        .stdout.decode()
        .strip()
    )
    head = (
        subprocess.run(
            ["git", "-C", str(root), "rev-parse", "HEAD"],
            capture_output=True,
            env=GIT_ENV,
            check=True,
        )
        .stdout.decode()
        .strip()
    )
    signed = (
        f"tree {tree}\nparent {head}\nauthor t <t@example.org> 0 +0000\n"
        "committer t <t@example.org> 0 +0000\n"
        "gpgsig -----BEGIN PGP SIGNATURE-----\n \n AAAA\n -----END PGP SIGNATURE-----\n\nsigned\n"
    )
    commit = (
        subprocess.run(
            ["git", "-C", str(root), "hash-object", "-t", "commit", "-w", "--stdin"],
            input=signed.encode(),
            capture_output=True,
            env=GIT_ENV,
            check=True,
        )
        .stdout.decode()
        .strip()
    )
    git(root, "update-ref", "refs/heads/main", commit)
    git(root, "mv", "data/table.bin", "data/table2.bin")
    with (root / "data/table2.bin").open("a") as handle:
        handle.write("one more row\n")
    git(root, "add", "-A")
    (root / "untracked.txt").write_text("not added\n")


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("template") / "project"
    root.mkdir()
    _history(root)
    return root


@pytest.fixture(scope="module")
def partial_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A partial clone (``--filter=blob:none``) of a history with an inexact rename: rename
    detection needs blobs it does not have, which git fetches from the promisor remote."""
    base = tmp_path_factory.mktemp("partial")
    origin = base / "origin"
    origin.mkdir()
    _history(origin)
    git(origin, "config", "uploadpack.allowFilter", "true")
    clone = base / "project"
    subprocess.run(
        ["git", "clone", "-q", "--filter=blob:none", f"file://{origin}", str(clone)],
        check=True,
        capture_output=True,
        env=GIT_ENV,
    )
    return clone


@pytest.fixture
def fake_401() -> Iterator[str]:
    """An HTTP server on 127.0.0.1 that asks for credentials: git would run its credential
    helper (and askpass) to answer."""

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self.send_response(401)
            self.send_header("WWW-Authenticate", 'Basic realm="x"')
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/repo.git"
    finally:
        server.shutdown()
        server.server_close()


#: name -> (partial clone?, config lines given the script's path and the marker's).
Setup = Callable[[Path, Path], str]
#: The promisor remote a partial-clone case points at (the script's path filled in).
REMOTES = {
    "protocol.ext.allow": "ext::{script}",
    "core.sshCommand": "ssh://git@x.invalid/r",
    "core.gitProxy": "git://x.invalid/r",
}
CASES: dict[str, tuple[bool, Setup]] = {
    "core.fsmonitor": (False, lambda s, m: f"[core]\n\tfsmonitor = {s}\n"),
    "core.fsmonitor-shell": (False, lambda s, m: f"[core]\n\tfsmonitor = touch '{m}' #\n"),
    "include.path": (False, lambda s, m: ""),  # see _configure: the include holds fsmonitor
    "core.hooksPath": (False, lambda s, m: f"[core]\n\thooksPath = {s.parent / 'hooks'}\n"),
    "core.pager": (False, lambda s, m: f"[core]\n\tpager = {s}\n[pager]\n\tlog = {s}\n"),
    "diff.external": (False, lambda s, m: f"[diff]\n\texternal = {s}\n"),
    "diff.textconv": (False, lambda s, m: f'[diff "evil"]\n\ttextconv = {s}\n'),
    "diff.command": (False, lambda s, m: f'[diff "evil"]\n\tcommand = {s}\n'),
    "filter.clean": (False, lambda s, m: f'[filter "evil"]\n\tclean = {s}\n\trequired = true\n'),
    "filter.smudge": (False, lambda s, m: f'[filter "evil"]\n\tsmudge = {s}\n'),
    "filter.process": (False, lambda s, m: f'[filter "evil"]\n\tprocess = {s}\n'),
    "gpg.program": (False, lambda s, m: f"[log]\n\tshowSignature = true\n[gpg]\n\tprogram = {s}\n"),
    "core.editor": (False, lambda s, m: f"[core]\n\teditor = {s}\n[sequence]\n\teditor = {s}\n"),
    "core.alternateRefsCommand": (False, lambda s, m: f"[core]\n\talternateRefsCommand = {s}\n"),
    "alias": (False, lambda s, m: f"[alias]\n\tls-files = !{s}\n\tlog = !{s}\n"),
    "protocol.ext.allow": (True, lambda s, m: '[protocol "ext"]\n\tallow = always\n'),
    "core.sshCommand": (True, lambda s, m: f"[core]\n\tsshCommand = {s}\n"),
    "core.gitProxy": (True, lambda s, m: f"[core]\n\tgitProxy = {s}\n"),
    "uploadpack.packObjectsHook": (True, lambda s, m: f"[uploadpack]\n\tpackObjectsHook = {s}\n"),
}


def _configure(root: Path, case: str, tmp_path: Path) -> Path:
    """Append ``case``'s key to the repository's config; returns the marker it would leave."""
    marker = tmp_path / f"pwned-{case}"
    script = _script(tmp_path / "evil.sh", marker)
    (tmp_path / "hooks").mkdir()
    for hook in HOOKS:
        _script(tmp_path / "hooks" / hook, marker)
    lines = CASES[case][1](script, marker)
    if case == "include.path":
        included = tmp_path / "included.config"
        included.write_text(f"[core]\n\tfsmonitor = {script}\n")
        lines = f"[include]\n\tpath = {included}\n"
    config = Path(
        subprocess.run(
            ["git", "-C", str(root), "rev-parse", "--git-path", "config"],
            capture_output=True,
            env=GIT_ENV,
            check=True,
        )
        .stdout.decode()
        .strip()
    )
    config = config if config.is_absolute() else root / config
    with config.open("a") as handle:
        handle.write(lines)
    if case in REMOTES:
        _set_remote(root, REMOTES[case].format(script=script))
    return marker


def _set_remote(root: Path, url: str) -> None:
    git(root, "config", "--replace-all", "remote.origin.url", url)


def _load(root: Path, memory: Path) -> Project:
    """What the citation rules and the language server do with a project: load it with the
    cited words, then take a file created afterwards (git check-ignore decides about it)."""
    project = Project.load(root, memory, ["retry_payment", "charge_card"])
    (root / "new_file.py").write_text("def retry_payment(): pass\n")
    project.update_file("new_file.py")
    (root / "build").mkdir(exist_ok=True)
    (root / "build" / "out.py").write_text("x = 1\n")
    project.update_file("build/out.py")
    return project


@pytest.mark.parametrize("case", sorted(CASES))
def test_a_repository_config_runs_nothing(
    case: str,
    tmp_path: Path,
    template: Path,
    partial_template: Path,
    make_dir: Callable[[dict[str, str | bytes]], Path],
) -> None:
    partial, _ = CASES[case]
    root = tmp_path / "work" / "project"
    shutil.copytree(partial_template if partial else template, root, symlinks=True)
    marker = _configure(root, case, tmp_path)
    memory = make_dir(MEMORY)

    project = _load(root, memory)

    assert not marker.exists(), f"git ran the command of {case} from the repository's config"
    # ... and memdir still answers from git.
    assert project.git
    assert "src/app/payments.py" in project.files
    assert project.has_word("retry_payment")


def test_credential_helper_behind_a_401(
    tmp_path: Path,
    partial_template: Path,
    fake_401: str,
    make_dir: Callable[[dict[str, str | bytes]], Path],
) -> None:
    """A partial clone whose promisor remote answers 401: git would run the repository's
    credential helper (and askpass) for a password."""
    root = tmp_path / "work" / "project"
    shutil.copytree(partial_template, root, symlinks=True)
    marker = tmp_path / "pwned-credential"
    script = _script(tmp_path / "evil.sh", marker)
    _set_remote(root, fake_401)
    with (root / ".git" / "config").open("a") as handle:
        handle.write(f"[credential]\n\thelper = !{script}\n[core]\n\taskPass = {script}\n")
    project = _load(root, make_dir(MEMORY))
    assert not marker.exists()
    assert project.git and "src/app/payments.py" in project.files


def _lint(root: Path, memory: Path, extra_env: dict[str, str]) -> str:
    """``memdir lint --project`` in a child process with ``extra_env`` over a clean environment;
    its JSON output."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    done = run_memdir(
        "lint", str(memory), "--project", str(root), "--format", "json", "--preview",
        env={**env, **extra_env}, timeout=120,
    )  # fmt: skip
    assert done.returncode in (0, 1), done.stderr
    return done.stdout


def _memory_citing_the_history(make_dir: Callable[[dict[str, str | bytes]], Path]) -> Path:
    memory = make_dir(MEMORY)
    (memory / "moved.md").write_text(
        topic("moved", "the plan moved", body="See `notes/plan.txt` and `old/gone.py`.\n")
    )
    with (memory / "MEMORY.md").open("a") as handle:
        handle.write("- [Moved](moved.md) — the plan moved\n")
    return memory


@pytest.mark.parametrize(
    "variables",
    [
        {
            "GIT_CONFIG_COUNT": "1",
            "GIT_CONFIG_KEY_0": "core.fsmonitor",
            "GIT_CONFIG_VALUE_0": "{s}",
        },
        {"GIT_CONFIG_PARAMETERS": "'core.fsmonitor'='{s}'"},
        {"GIT_EXTERNAL_DIFF": "{s}", "GIT_PAGER": "{s}", "GIT_SSH_COMMAND": "{s}"},
    ],
    ids=["GIT_CONFIG_COUNT", "GIT_CONFIG_PARAMETERS", "GIT_EXTERNAL_DIFF"],
)
def test_inherited_git_variables_are_dropped(
    variables: dict[str, str],
    tmp_path: Path,
    template: Path,
    make_dir: Callable[[dict[str, str | bytes]], Path],
) -> None:
    """memdir runs inside hooks, editors and shells that set GIT_* for their own git: none of
    it reaches memdir's git (it would name another repository, or run a command)."""
    root = tmp_path / "work" / "project"
    shutil.copytree(template, root, symlinks=True)
    marker = tmp_path / "pwned-env"
    script = _script(tmp_path / "evil.sh", marker)
    out = _lint(root, _memory_citing_the_history(make_dir), {
        name: value.format(s=script) for name, value in variables.items()
    })  # fmt: skip
    assert not marker.exists()
    assert "notes/plan2.txt" in out  # git's rename detection still answered


def test_git_dir_from_the_environment_names_no_other_repository(
    tmp_path: Path, template: Path, make_dir: Callable[[dict[str, str | bytes]], Path]
) -> None:
    """``GIT_DIR`` (set in every git hook) would make git read another repository."""
    root = tmp_path / "work" / "project"
    shutil.copytree(template, root, symlinks=True)
    other = tmp_path / "other"
    other.mkdir()
    write_files(other, {"elsewhere.py": "x = 1\n"})
    git(other, "init", "-q", "-b", "main")
    git(other, "add", "-A")
    git(other, "commit", "-q", "-m", "x")
    out = _lint(
        root,
        _memory_citing_the_history(make_dir),
        {"GIT_DIR": str(other / ".git"), "GIT_WORK_TREE": str(other)},
    )
    assert "notes/plan2.txt" in out


def test_memdir_lint_project_runs_no_fsmonitor(
    tmp_path: Path, template: Path, make_dir: Callable[[dict[str, str | bytes]], Path]
) -> None:
    """The command line end to end: ``memdir lint --project`` on a repository whose config
    names an fsmonitor hook answers (MEM117/MEM118 checked) and runs no hook."""
    root = tmp_path / "work" / "project"
    shutil.copytree(template, root, symlinks=True)
    marker = _configure(root, "core.fsmonitor", tmp_path)
    out = _lint(root, _memory_citing_the_history(make_dir), {})
    assert not marker.exists()
    # git's rename detection still speaks: the plan was renamed, the other file deleted.
    assert "notes/plan2.txt" in out
