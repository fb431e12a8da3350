"""The project a memory dir belongs to: its files, their renames, and the words the memories cite.

The citation rules (MEM117, MEM118) check a memory's paths and identifiers against this. Where the
project is a git repository the file list is git's own (``git ls-files``: tracked and untracked
files, the project's ``.gitignore`` respected by git itself) and renames and deletions come from
git's rename detection over about the last :data:`MAX_HISTORY_COMMITS` commits (older renames are
not named: a path gone that long ago is reported as not existing, when it is reported at all);
elsewhere a bounded walk lists the files. Nothing outside the project root is read: symlinks
are never followed, and a file read here is capped at :data:`MAX_FILE_BYTES`.

Words are looked up only for the words the memories cite: :class:`Project` keeps, for each word
asked about, the set of files that contain it (its postings), filled for new words in one pass
over the project's files by the system's ``grep -F -w`` (one automaton for all the words, run
on git's file list in a few parallel chunks), or by reading the files here when there is no
``grep``. One file changing (:meth:`Project.update_file`) re-reads that file alone and updates
the postings; its answer (:class:`Changed`) names the words and paths whose answer changed, so a
language server re-checks only the memories whose check asked about one of them
(:meth:`Project.recording`).
"""

from __future__ import annotations

import contextlib
import itertools
import os
import re
import shutil
import stat as stat_module
import sys
from collections import Counter
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from memdir.git import Completed, run_bounded, run_git
from memdir.textio import read_bytes

#: A project file is read here only up to this many bytes: big files are data. (``grep`` reads
#: whole files; a file over this size that changes is searched by ``grep`` too, see
#: :meth:`Project.update_file`, so both ways agree.)
MAX_FILE_BYTES = 512 * 1024
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
_GREP_TIMEOUT = 120.0
#: The quick git commands (the first one on a project, ``check-ignore``) get this long: see
#: :func:`_is_git_root` and :meth:`Project._ignored`.
_PROBE_TIMEOUT = 5.0
#: File names per ``grep`` process: well under every system's argument limit.
_GREP_CHUNK_BYTES = 512 * 1024
#: Word characters as ``grep -w`` counts them in the C locale.
_TOKEN = re.compile(rb"[A-Za-z0-9_]+")
_GREP_ENV = {**os.environ, "LC_ALL": "C"}


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


@dataclass(frozen=True, slots=True)
class Changed:
    """What project file changes changed in the answers the citation rules got: the keys of
    the words whose presence flipped and of the paths asked about that a created or deleted
    file concerns (see :meth:`Project.recording` for the keys). Falsy when no finding can
    change; ``|`` gathers the changes of a batch."""

    keys: frozenset[str] = frozenset()

    def __bool__(self) -> bool:
        return bool(self.keys)

    def __or__(self, other: Changed) -> Changed:
        return Changed(self.keys | other.keys) if other.keys else self

    def concerns(self, asked: Iterable[str]) -> bool:
        """Whether a check that asked about ``asked`` (recorded keys) may answer differently."""
        return not self.keys.isdisjoint(asked)


def _path_key(rel: str) -> str:
    """The key of a path asked about: ``/path/``, so that a run of a file's path components is
    a substring of the file's key (a cited word never holds ``/``, so keys of the two kinds
    never meet)."""
    return f"/{rel}/"


def _run(command: list[str], timeout: float, cwd: Path) -> Completed | None:
    """``command`` (grep) run to its end, output captured and bounded
    (:func:`memdir.git.run_bounded`); None when it could not start, timed out or said too much
    (then the files are read here instead)."""
    return run_bounded(command, env=_GREP_ENV, cwd=cwd, timeout=timeout)


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


# --- words ---------------------------------------------------------------------------------------


def _is_binary(data: bytes) -> bool:
    return b"\0" in data


def words_in(data: bytes, words: Collection[str]) -> set[str]:
    """Which of ``words`` occur in ``data`` as whole words, as ``grep -F -w`` finds them in the
    C locale: not next to an ASCII letter, digit or ``_``. Binary data has no words."""
    if not words or _is_binary(data):
        return set()
    tokens: set[bytes] | None = None
    found: set[str] = set()
    for word in words:
        raw = word.encode("utf-8", "surrogateescape")
        if _TOKEN.fullmatch(raw) is not None:
            if tokens is None:
                tokens = set(_TOKEN.findall(data))
            if raw in tokens:
                found.add(word)
        elif raw and re.search(rb"(?<![A-Za-z0-9_])" + re.escape(raw) + rb"(?![A-Za-z0-9_])", data):
            found.add(word)
    return found


def _path_bytes(rel: str) -> bytes:
    return rel.encode("utf-8", "surrogateescape")


class _Plain:
    """Which project paths are regular files reached through no symbolic link: the only files
    whose text counts. A link (or a folder link on the way) may lead out of the project, and a
    work tree can hold one where git's index has a regular file; a FIFO or device is not text.
    Folders are checked once each."""

    def __init__(self, root: Path) -> None:
        self.root = os.fspath(root)
        self._dirs: dict[str, bool] = {"": True}

    def _dir(self, rel: str) -> bool:
        known = self._dirs.get(rel)
        if known is None:
            parent = rel[: max(rel.rfind("/"), 0)]
            try:
                mode = os.lstat(os.path.join(self.root, rel)).st_mode
                known = stat_module.S_ISDIR(mode) and self._dir(parent)
            except OSError:
                known = False
            self._dirs[rel] = known
        return known

    def __call__(self, rel: str) -> bool:
        try:
            mode = os.lstat(os.path.join(self.root, rel)).st_mode
        except OSError:
            return False
        return stat_module.S_ISREG(mode) and self._dir(rel[: max(rel.rfind("/"), 0)])


def _read_capped(root: Path, rel: str) -> bytes:
    """The first :data:`MAX_FILE_BYTES` of a project file; nothing for a link, a file under a
    folder link, a FIFO, a device or a folder (never followed, never blocked on)."""
    if ".." in rel.split("/") or not _Plain(root)(rel):
        return b""
    try:
        return read_bytes(os.path.join(root, rel), MAX_FILE_BYTES, follow_links=False)
    except OSError:
        return b""


@dataclass(slots=True)
class _Group:
    words: list[str] = field(default_factory=list)
    tokens: set[bytes] = field(default_factory=set)
    compound: list[bytes] = field(default_factory=list)

    def holds(self, raw: bytes) -> bool:
        """Whether ``raw`` occurs as a whole word in one of the group's words."""
        if _TOKEN.fullmatch(raw) is not None:
            return raw in self.tokens
        return bool(self.compound) and bool(
            words_in(b"\n".join(self.compound), [raw.decode("utf-8", "surrogateescape")])
        )


def _overlapping_groups(words: list[str]) -> list[list[str]]:
    """``words`` split so that no word of a group occurs as a whole word inside another of the
    same group (``run`` in ``dry-run``): ``grep -o`` reports one match where two overlap."""
    groups: list[_Group] = []
    for word in sorted(words, key=len, reverse=True):
        raw = _path_bytes(word)
        group = next((g for g in groups if not g.holds(raw)), None)
        if group is None:
            group = _Group()
            groups.append(group)
        group.words.append(word)
        group.tokens.update(_TOKEN.findall(raw))
        if _TOKEN.fullmatch(raw) is None:
            group.compound.append(raw)
    return [group.words for group in groups]


def _grep(root: Path, words: list[str], files: list[str]) -> dict[str, set[str]] | None:
    """word -> the files among ``files`` that hold it, by the system's ``grep`` (None: there is
    none, or it failed): one Aho-Corasick pass per chunk of files for all the words, where
    ``git grep`` runs one pass per word."""
    grep = shutil.which("grep")
    if grep is None or not files or not words:
        return None if grep is None else {}
    # As many chunks as processors (grep runs one thread), smaller when the names are many.
    total = sum(len(rel) + 1 for rel in files)
    workers = max(1, os.cpu_count() or 1)
    count = max(workers, -(-total // _GREP_CHUNK_BYTES))
    count = -(-count // workers) * workers
    chunks = [files[start::count] for start in range(count)]
    patterns = [arg for word in words for arg in ("-e", word)]
    # -s: a file removed since it was listed is skipped; -d/-D skip: no directory, FIFO or
    # device is read.
    base = [grep, "-F", "-w", "-o", "-H", "-I", "-s", "--null", "-d", "skip", "-D", "skip"]

    def run(chunk: list[str]) -> bytes | None:
        done = _run([*base, *patterns, "--", *chunk], _GREP_TIMEOUT, cwd=root)
        if done is None:
            return None
        # 1: nothing found; 2 with nothing said: a listed file is gone (-s), the rest was read.
        if done.returncode in (0, 1) or (done.returncode == 2 and not done.stderr):
            return done.stdout
        return None

    with ThreadPoolExecutor(min(len(chunks), workers)) as pool:
        outputs = list(pool.map(run, chunks))
    hits: dict[str, set[str]] = {}
    for output in outputs:
        if output is None:
            return None
        for path, match in re.findall(rb"([^\0]*)\0([^\n]*)\n", output):
            hits.setdefault(match.decode("utf-8", "surrogateescape"), set()).add(
                path.decode("utf-8", "surrogateescape")
            )
    # grep follows a symlink it is given: a file a link replaced since git listed it does not
    # vouch for a word (it may be outside the project).
    plain = _Plain(root)
    through_links = {path for path in set().union(*hits.values()) if not plain(path)}
    if through_links:
        for where in hits.values():
            where -= through_links
    return hits


def search_files(root: Path, words: Collection[str], files: Iterable[str]) -> dict[str, set[str]]:
    """word -> the files among ``files`` whose text holds it as a whole word (see
    :func:`words_in`): ``grep`` when there is one, else each file read here, capped."""
    listed = sorted(files)
    # A pattern with a line break would be two patterns to grep; no file line holds one anyway.
    wanted = sorted(w for w in words if w and "\n" not in w and "\0" not in w)
    hits: dict[str, set[str]] = {}
    for group in _overlapping_groups(wanted):
        found = _grep(root, group, listed)
        if found is None:
            found = {}
            for rel in listed:
                for word in words_in(_read_capped(root, rel), group):
                    found.setdefault(word, set()).add(rel)
        for word, where in found.items():
            hits.setdefault(word, set()).update(where)
    return hits


# --- the project ---------------------------------------------------------------------------------


def _tails(path: str) -> Iterable[str]:
    """``a/b/c`` -> ``b/c``, ``c``: the tails a memory may cite a path by."""
    cut = path.find("/")
    while cut >= 0:
        yield path[cut + 1 :]
        cut = path.find("/", cut + 1)


class Project:
    """The project the citation rules check against: its files, renames and cited words.

    ``exclude``: a directory inside the project (the memory dir itself) whose files neither
    count as the project's nor vouch for a word, so a memory never vouches for itself. The word
    lookups (:meth:`find_words`, :meth:`has_word`) keep their answers per file, so that
    :meth:`update_file` and :meth:`remove_file` keep them true one file at a time.
    """

    def __init__(self, listing: ProjectFiles, exclude: str | None = None) -> None:
        self.root = listing.root
        self.git = listing.git
        self.complete = listing.complete
        self.renames: dict[str, str] = dict(listing.renames)
        self.deleted: set[str] = set(listing.deleted)
        self._exclude = exclude.rstrip("/") + "/" if exclude else None
        self.files: set[str] = {f for f in listing.files if not self._excluded(f)}
        self._links: set[str] = set(listing.links)
        #: Directory -> how many files are under it; built on first use, then kept up to date.
        self._dir_counts: dict[str, int] | None = None
        #: Last path component -> files and directories with that name (for cited tails).
        self._by_name: dict[str, set[str]] | None = None
        self._deleted_tails: frozenset[str] | None = None
        self._renamed_by_name: dict[str, list[tuple[str, str]]] | None = None
        #: Word -> the files whose text or path holds it, for every word asked about.
        self._postings: dict[str, set[str]] = {}
        #: Every word-character run of every file path: most words are in none, and then no
        #: path needs a closer look.
        self._path_tokens: set[bytes] | None = None
        #: Texts given to :meth:`update_file` (an editor's unsaved buffer): what the file holds
        #: for words looked up later, until it is updated from the disk.
        self._texts: dict[str, bytes] = {}
        #: Every path asked about, as ``/path/``: a file created or deleted changes an answer
        #: only when one of these is a run of its path's components.
        self._asked: set[str] = set()
        #: The memory dir whose citations this project answers (set by :meth:`load`): a word
        #: asked about first is looked up with all the others it cites, in one pass.
        self.memory_dir: Path | None = None
        #: Directory -> whether git ignores it, for files a watcher reports there.
        self._ignored_dirs: dict[str, bool] = {}
        #: Set when ``git check-ignore`` gave no answer in time: it is not asked again.
        self._git_stuck = False
        #: The keys asked about inside :meth:`recording` (None: not recording).
        self._recorder: set[str] | None = None

    @classmethod
    def load(cls, root: Path, memory_dir: Path | None = None, words: Iterable[str] = ()) -> Project:
        """List the project at ``root``, leaving out ``memory_dir`` when it lies inside, and
        look ``words`` up (as :meth:`find_words` would after, but sooner: in a git repository
        the search of the tracked files runs while git lists the rest)."""
        root = Path(os.path.abspath(root))
        exclude = None
        if memory_dir is not None:
            real_root = os.path.realpath(root)
            real_memory = os.path.realpath(memory_dir)
            if real_memory.startswith(real_root.rstrip(os.sep) + os.sep):
                exclude = os.path.relpath(real_memory, real_root).replace(os.sep, "/")
        wanted = set(words)
        loaded = None
        if _is_git_root(root):
            skip = exclude.rstrip("/") + "/" if exclude else None
            loaded = _git_listing(root, wanted, skip)
        if loaded is None:
            project = cls(_walk_listing(root), exclude)
            project.memory_dir = memory_dir
            project.find_words(wanted)
            return project
        listing, hits, tokens = loaded
        project = cls(listing, exclude)
        project.memory_dir = memory_dir
        project._path_tokens = tokens
        project._record(wanted, hits())
        return project

    def _excluded(self, rel: str) -> bool:
        return self._exclude is not None and rel.startswith(self._exclude)

    # --- paths ---------------------------------------------------------------------------------

    def _counts(self) -> dict[str, int]:
        if self._dir_counts is None:
            # Files per parent directory first (one pass), then each directory's count is
            # added to its ancestors: far fewer directories than files.
            direct = Counter(path[: path.rfind("/")] for path in self.files if "/" in path)
            counts: dict[str, int] = {}
            for directory, count in direct.items():
                counts[directory] = counts.get(directory, 0) + count
                self._count_dirs(counts, directory, count)
            self._dir_counts = counts
        return self._dir_counts

    @staticmethod
    def _count_dirs(counts: dict[str, int], path: str, step: int) -> list[str]:
        """Add ``step`` to the count of every directory above ``path``; returns the directories
        that appeared (step 1) or emptied (step -1)."""
        changed: list[str] = []
        cut = path.rfind("/")
        while cut > 0:
            parent = path[:cut]
            count = counts.get(parent, 0) + step
            if count > 0:
                counts[parent] = count
                if count == step and step > 0:
                    changed.append(parent)
            else:
                counts.pop(parent, None)
                changed.append(parent)
            cut = path.rfind("/", 0, cut)
        return changed

    @property
    def dirs(self) -> frozenset[str]:
        return frozenset(self._counts())

    def _names(self) -> dict[str, set[str]]:
        if self._by_name is None:
            names: dict[str, set[str]] = {}
            for path in itertools.chain(self.files, self._counts()):
                name = path[path.rfind("/") + 1 :]
                found = names.get(name)
                if found is None:
                    names[name] = {path}
                else:
                    found.add(path)
            self._by_name = names
        return self._by_name

    @contextlib.contextmanager
    def recording(self) -> Iterator[set[str]]:
        """Collect the keys of every word and path asked about inside the block: what its
        answers depend on. A check whose keys a :class:`Changed` does not concern would find
        the same again, so it need not run. Callers hold the project's lock (one thread asks)."""
        outer = self._recorder
        keys: set[str] = set()
        self._recorder = keys
        try:
            yield keys
        finally:
            self._recorder = outer
            if outer is not None:
                outer |= keys

    def _ask(self, rel: str) -> str:
        rel = rel.rstrip("/")
        key = _path_key(rel)
        self._asked.add(key)
        if self._recorder is not None:
            # Interned: many memories cite the same paths, and a server keeps their keys.
            self._recorder.add(sys.intern(key))
        return rel

    def _matters(self, rel: str) -> set[str]:
        """The paths asked about whose answer creating or deleting the file ``rel`` can
        change: ``rel``, a directory above it, or the tail of either (as keys)."""
        wrapped = _path_key(rel)
        return {asked for asked in self._asked if asked in wrapped}

    def in_memory_dir(self, rel: str) -> bool:
        return self._excluded(rel) or (self._exclude is not None and rel + "/" == self._exclude)

    def exists(self, rel: str) -> bool:
        """Whether a file or directory ``rel`` is in the project."""
        rel = self._ask(rel)
        return rel in self.files or rel in self._counts() or rel == ""

    def on_disk(self, rel: str) -> bool:
        """Whether ``rel`` exists under the root though unlisted (a file git ignores): it is not
        gone. ``rel`` never holds ``..`` (the citation rules drop such paths)."""
        self._ask(rel)
        return ".." not in rel.split("/") and os.path.lexists(os.path.join(self.root, rel))

    def renamed_to(self, rel: str) -> str | None:
        """Where git shows ``rel`` went (a file, or a directory whose files all moved together)."""
        target = self.renames.get(rel.rstrip("/"))
        return target if target is not None and self.exists(target) else None

    def has_suffix(self, rel: str) -> bool:
        """Whether ``rel`` is the tail of a project file or directory (``lint/state.py`` of
        ``memory/memdir/lint/state.py``): memories often cite paths from a sub-package."""
        rel = self._ask(rel)
        tail = "/" + rel
        return any(path.endswith(tail) for path in self._names().get(rel.rsplit("/", 1)[-1], ()))

    def was_deleted(self, rel: str) -> bool:
        """Whether git shows ``rel`` (a file, a directory of files, or the tail of either) was
        deleted."""
        rel = self._ask(rel)
        if self._deleted_tails is None:
            tails: set[str] = set()
            for path in (*self.deleted, *_directories(self.deleted)):
                tails.add(path)
                tails.update(_tails(path))
            self._deleted_tails = frozenset(tails)
        return rel in self._deleted_tails

    def renamed_suffix(self, rel: str) -> str | None:
        """Where git shows a renamed path went, for a path cited by its tail (one answer only)."""
        if self._renamed_by_name is None:
            by_name: dict[str, list[tuple[str, str]]] = {}
            for old, new in self.renames.items():
                by_name.setdefault(old.rsplit("/", 1)[-1], []).append((old, new))
            self._renamed_by_name = by_name
        rel = rel.rstrip("/")
        tail = "/" + rel
        candidates = self._renamed_by_name.get(rel.rsplit("/", 1)[-1], ())
        targets = {new for old, new in candidates if old.endswith(tail) and self.exists(new)}
        return targets.pop() if len(targets) == 1 else None

    # --- words ---------------------------------------------------------------------------------

    def _in_paths(self, words: Collection[str]) -> dict[str, set[str]]:
        """word -> the files whose path names it (a script ``deploy.sh`` names ``deploy``)."""
        if self._path_tokens is None:
            self._path_tokens = _path_tokens(self.files)
        tokens = self._path_tokens
        # A word can be in a path only if its first word-character run is.
        likely = [w for w in words if (_TOKEN.findall(_path_bytes(w)) or [b""])[0] in tokens]
        found: dict[str, set[str]] = {}
        if likely:
            for path in self.files:
                for word in words_in(_path_bytes(path), likely):
                    found.setdefault(word, set()).add(path)
        return found

    def find_words(self, words: Iterable[str]) -> None:
        """Look up every word not asked about before in one pass over the project's files (see
        :func:`search_files`); :meth:`has_word` then answers from memory, and
        :meth:`update_file` keeps the answers true. A caller that knows its words up front (the
        CLI, the language server's first lint) asks for all of them at once."""
        wanted = {w for w in words if w not in self._postings}
        if not wanted:
            return
        on_disk = self.files - self._links - self._texts.keys()
        hits = search_files(self.root, wanted, on_disk)
        for rel, data in self._texts.items():
            for word in words_in(data, wanted):
                hits.setdefault(word, set()).add(rel)
        self._record(wanted, hits)

    def _record(self, wanted: Collection[str], hits: dict[str, set[str]]) -> None:
        """The postings of ``wanted`` from the files whose text holds them (``hits``) and the
        files whose path names them."""
        for word, paths in self._in_paths(wanted).items():
            hits.setdefault(word, set()).update(paths)
        for word in wanted:
            self._postings[word] = hits.get(word, set())

    def has_word(self, word: str) -> bool:
        """Whether ``word`` appears in any project file or path (as a whole word). A word not
        looked up yet is looked up now, the first time with every word the memory dir cites: a
        pass over the project costs about the same for one word as for hundreds."""
        if self._recorder is not None:
            self._recorder.add(sys.intern(word))
        if word not in self._postings:
            wanted = {word}
            if self.memory_dir is not None and not self._postings:
                from memdir.lint.rules.citations import cited_words

                wanted |= cited_words(self.memory_dir)
            self.find_words(wanted)
        return bool(self._postings[word])

    def _ignored(self, rel: str) -> bool:
        """Whether a file a watcher reports is one the project's listing leaves out."""
        parts = rel.split("/")
        if self._excluded(rel) or ".." in parts or parts[0] == ".git":
            return True
        if not self.git:
            return any(part in WALK_SKIP for part in parts[:-1])
        # A build writes thousands of files into an ignored directory: its answer is kept, so
        # they cost no git process each.
        parent = rel.rpartition("/")[0]
        if parent and self._ignored_dirs.get(parent):
            return True
        asked = [rel] if not parent or parent in self._ignored_dirs else [f"{parent}/", rel]
        if self._git_stuck:
            return False
        # git check-ignore lists the ignored ones among the paths given (exit 1: none). It
        # answers in milliseconds; one that does not (a FIFO where a .gitignore should be) is
        # not asked again, and files are then taken as not ignored.
        done = run_git(
            self.root,
            "check-ignore",
            "-z",
            "--stdin",
            input=b"".join(_path_bytes(path) + b"\0" for path in asked),
            timeout=_PROBE_TIMEOUT,
        )
        if done is None:
            self._git_stuck = True
            return False
        ignored = set(_zsplit(done.stdout)) if done.returncode == 0 else set()
        if parent:
            self._ignored_dirs.setdefault(parent, f"{parent}/" in ignored)
        return rel in ignored or bool(self._ignored_dirs.get(parent))

    def _add_path(self, rel: str) -> None:
        self.files.add(rel)
        self.deleted.discard(rel)
        self._deleted_tails = None
        if self._dir_counts is not None:
            new_dirs = self._count_dirs(self._dir_counts, rel, 1)
            if self._by_name is not None:
                for path in (rel, *new_dirs):
                    self._by_name.setdefault(path.rsplit("/", 1)[-1], set()).add(path)
        else:
            self._by_name = None
        if self._path_tokens is not None:
            self._path_tokens.update(_TOKEN.findall(_path_bytes(rel)))

    def _drop_path(self, rel: str) -> None:
        self.files.discard(rel)
        self._links.discard(rel)
        if self.git:
            self.deleted.add(rel)
            self._deleted_tails = None
        if self._dir_counts is not None:
            gone_dirs = self._count_dirs(self._dir_counts, rel, -1)
            if self._by_name is not None:
                for path in (rel, *gone_dirs):
                    self._by_name.get(path.rsplit("/", 1)[-1], set()).discard(path)
        else:
            self._by_name = None
        # Path tokens only grow: a stale one costs a closer look at the paths, never an answer.

    def _set_words(self, rel: str, present: set[str]) -> set[str]:
        """Record which tracked words ``rel`` holds now; returns the words whose presence in
        the project changed."""
        changed: set[str] = set()
        for word, where in self._postings.items():
            if word in present:
                if rel not in where:
                    where.add(rel)
                    if len(where) == 1:
                        changed.add(word)
            elif rel in where:
                where.discard(rel)
                if not where:
                    changed.add(word)
        return changed

    def update_file(self, rel: str, data: bytes | None = None) -> Changed:
        """One project file was created or changed: re-read it (or take ``data``, an editor's
        unsaved text) and update the looked-up words. What can change a citation finding: the
        looked-up words that appeared in or vanished from the project and, for a new file, the
        paths asked about that are it, a directory above it or the tail of either.
        A file the listing leaves out (ignored by git, the memory dir) changes nothing."""
        new = rel not in self.files
        if new and self._ignored(rel):
            return Changed()
        path = os.path.join(self.root, rel)
        link = data is None and os.path.islink(path)
        if link:
            self._links.add(rel)
        else:
            self._links.discard(rel)
        if new:
            self._add_path(rel)
        tracked = list(self._postings)
        if link or not tracked:
            present: set[str] = set()
        elif data is None and _file_size(path) > MAX_FILE_BYTES:
            present = {w for w, where in search_files(self.root, tracked, [rel]).items() if where}
        else:
            text = data[:MAX_FILE_BYTES] if data is not None else _read_capped(self.root, rel)
            present = words_in(text, tracked)
        if data is not None:
            self._texts[rel] = data[:MAX_FILE_BYTES]
        else:
            self._texts.pop(rel, None)
        if tracked:
            present |= words_in(_path_bytes(rel), tracked)
        changed = self._set_words(rel, present)
        if new:
            changed |= self._matters(rel)
        return Changed(frozenset(changed))

    def remove_file(self, rel: str) -> Changed:
        """One project file was deleted. What can change a citation finding: the looked-up
        words that vanished with it, and the paths asked about that are the file, a directory
        above it or the tail of either."""
        if rel not in self.files:
            return Changed()
        self._drop_path(rel)
        self._texts.pop(rel, None)
        return Changed(frozenset(self._set_words(rel, set()) | self._matters(rel)))


def _file_size(path: str) -> int:
    try:
        return os.stat(path).st_size
    except OSError:
        return 0
