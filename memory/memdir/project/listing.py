"""A project's files: git's own list where the project is a git repository (``git ls-files``,
tracked and untracked, ``.gitignore`` respected by git) with renames and deletions from git's
rename detection over about the last :data:`MAX_HISTORY_COMMITS` commits; elsewhere a bounded
walk (:data:`MAX_WALK_FILES`)."""

from __future__ import annotations

import os
import stat as stat_module
from collections.abc import Callable, Collection, Iterable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from memdir.git import run_git
from memdir.project.words import _TOKEN, _path_bytes, search_files

#: The walk of a project that is not a git repository stops after this many files; a project
#: listed only in part has no "missing" paths (see :attr:`ProjectFiles.complete`).
MAX_WALK_FILES = 100_000
#: Renames and deletions are read from about this many of the latest commits: rename detection
#: costs time per commit, and a path renamed longer ago than this is rarely still cited.
MAX_HISTORY_COMMITS = 5_000
#: Directories a walk never enters: tools' caches and dependencies, not the project's own files.
WALK_SKIP = frozenset(
    {".git", ".hg", ".svn", "node_modules", ".venv", "venv", "__pycache__", ".mypy_cache",
     ".ruff_cache", ".pytest_cache", ".tox", "dist", "build", "target", ".idea", ".vscode"}
)  # fmt: skip
#: The quick git commands (the first one on a project, ``check-ignore``) get this long: see
#: :func:`_is_git_root` and :meth:`Project._ignored`.
_PROBE_TIMEOUT = 5.0


@dataclass(frozen=True, slots=True)
class ProjectFiles:
    """A snapshot of the project's file list and git's renames (plain data, no I/O)."""

    root: Path
    #: ``/``-separated paths relative to the root.
    files: frozenset[str]
    #: Old path -> the path it is now, for renamed files and directories (chains followed).
    renames: Mapping[str, str] = field(default_factory=dict)
    #: Paths git shows were deleted (committed, staged or in the work tree) and that are not
    #: back: evidence that a cited path is gone rather than never in this project.
    deleted: frozenset[str] = frozenset()
    #: Whether the file list came from git.
    git: bool = False
    #: False when a walk stopped at :data:`MAX_WALK_FILES`: a path missing from a partial list
    #: may still exist, so no path is reported missing.
    complete: bool = True
    #: Files that are symbolic links: listed, never read.
    links: frozenset[str] = frozenset()


def _path_key(rel: str) -> str:
    """The key of a path asked about: ``/path/``, so that a run of a file's path components is
    a substring of the file's key (a cited word never holds ``/``, so keys of the two kinds
    never meet)."""
    return f"/{rel}/"


def _git(root: Path, *args: str) -> bytes | None:
    """git's output, through the one runner that keeps the repository's config from running
    anything (:func:`memdir.git.run_git`); None when git failed."""
    done = run_git(root, *args)
    return done.stdout if done is not None and done.returncode == 0 else None


def _is_git_root(root: Path) -> bool:
    """Whether ``root`` is the top of a git work tree: its own ``.git`` (a folder, or the file
    of a linked work tree or submodule; never a symlink, which may lead to another repository),
    as git itself confirms. git answers this in milliseconds; one that does not within
    :data:`_PROBE_TIMEOUT` (a config including a FIFO, say) is not asked again: the project is
    walked instead."""
    try:
        mode = os.lstat(os.path.join(root, ".git")).st_mode
    except OSError:
        return False
    if not (stat_module.S_ISDIR(mode) or stat_module.S_ISREG(mode)):
        return False
    done = run_git(root, "rev-parse", "--show-toplevel", timeout=_PROBE_TIMEOUT)
    if done is None or done.returncode != 0:
        return False
    top = done.stdout.decode("utf-8", "surrogateescape").strip()
    return os.path.realpath(top) == os.path.realpath(root)


def _zsplit(data: bytes) -> list[str]:
    return [part.decode("utf-8", "surrogateescape") for part in data.split(b"\0") if part]


def _parse_status(data: bytes) -> tuple[list[tuple[str, str]], list[str]]:
    """(renames as (old, new), deleted paths) of ``git … --name-status -z`` output, in order."""
    parts = _zsplit(data)
    pairs: list[tuple[str, str]] = []
    deleted: list[str] = []
    i = 0
    while i < len(parts):
        status = parts[i]
        if status[:1] in ("R", "C") and i + 2 < len(parts):
            if status[0] == "R":
                pairs.append((parts[i + 1], parts[i + 2]))
            i += 3
        elif status[:1] in ("A", "D", "M", "T", "U", "X", "B") and i + 1 < len(parts):
            if status[0] == "D":
                deleted.append(parts[i + 1])
            i += 2
        else:
            i += 1  # a commit separator or something unexpected: resynchronise
    return pairs, deleted


def parse_name_status(data: bytes) -> list[tuple[str, str]]:
    """(old, new) of each rename in ``git … --name-status -z`` output, in the order given."""
    return _parse_status(data)[0]


def _git_history(root: Path) -> bytes | None:
    """Renames and deletions (``--name-status``) of about the last :data:`MAX_HISTORY_COMMITS`
    commits: those after the commit that many before HEAD, when there is one."""
    boundary = _git(root, "rev-list", "-n", "1", f"--skip={MAX_HISTORY_COMMITS}", "HEAD")
    since = boundary.decode("ascii", "replace").strip() if boundary else ""
    return _git(
        root, "log", "-z", "--format=", "--name-status", "-M", "--diff-filter=DR", "--no-merges",
        f"{since}..HEAD" if since else "HEAD",
    )  # fmt: skip


def _tracked(data: bytes) -> tuple[set[str], set[str]]:
    """(files, links) of ``git ls-files -z --stage`` output (mode 120000: a symbolic link)."""
    files: set[str] = set()
    links: set[str] = set()
    for entry in _zsplit(data):
        mode, _, path = entry.partition("\t")
        files.add(path)
        if mode.startswith("120000"):
            links.add(path)
    return files, links


def _path_tokens(paths: Iterable[str]) -> set[bytes]:
    return set(_TOKEN.findall(_path_bytes("\n".join(paths))))


def _git_listing(
    root: Path, words: Collection[str] = (), skip: str | None = None
) -> tuple[ProjectFiles, Callable[[], dict[str, set[str]]], set[bytes]] | None:
    """The repository at ``root``: its files, renames and deletions; a function answering
    where ``words`` occur in its files (outside ``skip``, a directory prefix); and the words of
    its paths. The git commands run side by side, and the search of the tracked files starts as
    soon as git lists them (in milliseconds, from its index) beside the slower listing of
    untracked and deleted files (a walk of the tree); it may still run when this returns."""
    commands = (
        # -t tags each entry: R removed from the work tree, ? untracked.
        ("ls-files", "-z", "-t", "--deleted", "--others", "--exclude-standard"),
        ("diff", "-z", "--cached", "--name-status", "-M", "--diff-filter=DR"),
    )  # fmt: skip

    def searchable(paths: Iterable[str]) -> list[str]:
        return [path for path in paths if skip is None or not path.startswith(skip)]

    pool = ThreadPoolExecutor(len(commands) + 2)
    try:
        others, staged = (pool.submit(_git, root, *args) for args in commands)
        history = pool.submit(_git_history, root)
        listed = _git(root, "ls-files", "-z", "--stage", "--cached")
        if listed is None:
            return None
        files, links = _tracked(listed)
        early = pool.submit(search_files, root, words, searchable(files - links))
        tokens = _path_tokens(files)  # while grep and git run
        rest = others.result()
        if rest is None:
            return None
        old_pairs, old_deleted = _parse_status(history.result() or b"")
        new_pairs, new_deleted = _parse_status(staged.result() or b"")
    finally:
        pool.shutdown(wait=False)  # the search goes on: see hits()
    gone: set[str] = set()
    untracked: set[str] = set()
    for entry in _zsplit(rest):
        (untracked if entry[:1] == "?" else gone).add(entry[2:])
    links.update(u for u in untracked if os.path.islink(os.path.join(root, u)))
    tokens |= _path_tokens(untracked)
    listed_files = frozenset(files | untracked) - gone
    renames = resolve_renames([*reversed(old_pairs), *new_pairs], listed_files)
    deleted = (frozenset(gone) | frozenset(old_deleted) | frozenset(new_deleted)) - listed_files
    listing = ProjectFiles(
        root, listed_files, renames, deleted, git=True, links=frozenset(links) & listed_files
    )

    def hits() -> dict[str, set[str]]:
        found = early.result()
        for word, where in search_files(root, words, searchable(untracked - links)).items():
            found.setdefault(word, set()).update(where)
        for where in found.values():
            where -= gone
        return found

    return listing, hits, tokens


def resolve_renames(pairs: Iterable[tuple[str, str]], files: frozenset[str]) -> dict[str, str]:
    """Old path -> where it is now, for files and directories that no longer exist.

    ``pairs`` oldest first; chains (a -> b, later b -> c) lead to the last name, and a rename
    whose end no longer exists leads nowhere (it was deleted after). A directory whose files all
    moved to one place is mapped too, from the part of the paths that did not change.
    """
    moved: dict[str, str] = {}
    sources: dict[str, set[str]] = {}  # current name -> the old names that lead to it
    for old, new in pairs:
        chain = sources.pop(old, set())
        chain.add(old)
        for key in chain:
            moved[key] = new
        sources.setdefault(new, set()).update(chain)
    result = {old: new for old, new in moved.items() if new in files and old not in files}
    dirs = _directories(files)
    votes: dict[str, set[str]] = {}
    for old, new in result.items():
        old_parts, new_parts = old.split("/"), new.split("/")
        # Strip the unchanged tail: a/b/c.py -> x/b/c.py maps a -> x and a/b -> x/b.
        while len(old_parts) > 1 and len(new_parts) > 1 and old_parts[-1] == new_parts[-1]:
            old_parts.pop()
            new_parts.pop()
            old_dir, new_dir = "/".join(old_parts), "/".join(new_parts)
            votes.setdefault(old_dir, set()).add(new_dir)
    for old_dir, targets in votes.items():
        if len(targets) == 1 and old_dir not in dirs:
            (target,) = targets
            if target in dirs:
                result[old_dir] = target
    return result


def _directories(files: Iterable[str]) -> frozenset[str]:
    dirs: set[str] = set()
    for path in files:
        cut = path.rfind("/")
        while cut > 0:
            parent = path[:cut]
            if parent in dirs:
                break
            dirs.add(parent)
            cut = path.rfind("/", 0, cut)
    return frozenset(dirs)


def _walk(root: Path) -> tuple[frozenset[str], frozenset[str], bool]:
    found: list[str] = []
    links: list[str] = []
    for directory, subdirs, names in os.walk(root, followlinks=False):
        subdirs[:] = sorted(d for d in subdirs if d not in WALK_SKIP)
        rel = os.path.relpath(directory, root)
        prefix = "" if rel == "." else rel.replace(os.sep, "/") + "/"
        for name in names:
            found.append(prefix + name)
            if os.path.islink(os.path.join(directory, name)):
                links.append(prefix + name)
            if len(found) >= MAX_WALK_FILES:
                return frozenset(found), frozenset(links), False
    return frozenset(found), frozenset(links), True


def list_project(root: Path) -> ProjectFiles:
    """The project's files: git's list and renames in a git repository's root, else a walk."""
    root = Path(os.path.abspath(root))
    if _is_git_root(root):
        loaded = _git_listing(root)
        if loaded is not None:
            return loaded[0]
    return _walk_listing(root)


def _walk_listing(root: Path) -> ProjectFiles:
    files, links, complete = _walk(root)
    return ProjectFiles(root, files, {}, git=False, complete=complete, links=links)
