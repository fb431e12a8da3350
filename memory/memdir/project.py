"""The project a memory dir belongs to: its files, their renames, and the words in them.

The citation rules (MEM117, MEM118) check a memory's paths and identifiers against this. Where the
project is a git repository the file list is git's own (``git ls-files``: tracked and untracked
files, the project's ``.gitignore`` respected by git itself) and renames come from git's rename
detection; elsewhere a bounded walk lists the files. Nothing outside the project root is read:
symlinks are never followed and file reads are capped.

:class:`Project` holds the file set and a word index that can be updated one file at a time, so a
language server can re-check after one project file changes without rebuilding everything.
"""

from __future__ import annotations

import itertools
import os
import re
import subprocess
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

#: A project file is read for identifiers only up to this many bytes: big files are data.
MAX_FILE_BYTES = 512 * 1024
#: The walk of a project that is not a git repository stops after this many files; a project
#: listed only in part has no "missing" paths (see :attr:`ProjectFiles.complete`).
MAX_WALK_FILES = 100_000
#: Directories a walk never enters: tools' caches and dependencies, not the project's own files.
WALK_SKIP = frozenset(
    {".git", ".hg", ".svn", "node_modules", ".venv", "venv", "__pycache__", ".mypy_cache",
     ".ruff_cache", ".pytest_cache", ".tox", "dist", "build", "target", ".idea", ".vscode"}
)  # fmt: skip
_GIT_TIMEOUT = 30.0
#: Words of a project file: identifiers, with ``-`` inside (flags, make targets, script names).
_WORD = re.compile(rb"[A-Za-z_][A-Za-z0-9_]*(?:-[A-Za-z0-9_]+)*")


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


def _git(
    root: Path, *args: str, stdin: bytes | None = None, ok: tuple[int, ...] = (0,)
) -> bytes | None:
    try:
        done = subprocess.run(
            ["git", "-C", os.fspath(root), *args],
            input=stdin,
            capture_output=True,
            timeout=_GIT_TIMEOUT,
            check=False,
            env={**os.environ, "GIT_OPTIONAL_LOCKS": "0", "LC_ALL": "C"},
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout if done.returncode in ok else None


def _is_git_root(root: Path) -> bool:
    top = _git(root, "rev-parse", "--show-toplevel")
    if top is None:
        return False
    return os.path.realpath(top.decode("utf-8", "surrogateescape").strip()) == os.path.realpath(
        root
    )


def _zsplit(data: bytes) -> list[str]:
    return [part.decode("utf-8", "surrogateescape") for part in data.split(b"\0") if part]


def _git_files(root: Path) -> tuple[frozenset[str], frozenset[str]] | None:
    """(files, deleted in the work tree) of the repository at ``root``."""
    listed = _git(root, "ls-files", "-z", "--cached", "--others", "--exclude-standard")
    if listed is None:
        return None
    deleted = frozenset(_zsplit(_git(root, "ls-files", "-z", "--deleted") or b""))
    return frozenset(_zsplit(listed)) - deleted, deleted


def _git_deleted(root: Path) -> frozenset[str]:
    """Paths deleted in the history or in the staged changes."""
    history = _git(root, "log", "-z", "--format=", "--name-only", "--diff-filter=D", "--no-merges")
    staged = _git(root, "diff", "-z", "--cached", "--name-only", "--diff-filter=D")
    return frozenset(_zsplit(history or b"")) | frozenset(_zsplit(staged or b""))


def parse_name_status(data: bytes) -> list[tuple[str, str]]:
    """(old, new) of each rename in ``git … --name-status -z`` output, in the order given."""
    parts = _zsplit(data)
    pairs: list[tuple[str, str]] = []
    i = 0
    while i < len(parts):
        status = parts[i]
        if status[:1] in ("R", "C") and i + 2 < len(parts):
            if status[0] == "R":
                pairs.append((parts[i + 1], parts[i + 2]))
            i += 3
        elif status[:1] in ("A", "D", "M", "T", "U", "X", "B") and i + 1 < len(parts):
            i += 2
        else:
            i += 1  # a commit separator or something unexpected: resynchronise
    return pairs


def _git_renames(root: Path) -> list[tuple[str, str]]:
    """Renames oldest first: committed history, then staged, then unstaged ones."""
    history = _git(
        root, "log", "-z", "--format=", "--name-status", "--diff-filter=R", "-M", "--no-merges"
    )
    pairs = list(reversed(parse_name_status(history or b"")))
    staged = _git(root, "diff", "-z", "--cached", "--name-status", "-M", "--diff-filter=R")
    pairs.extend(parse_name_status(staged or b""))
    return pairs


def resolve_renames(pairs: Iterable[tuple[str, str]], files: frozenset[str]) -> dict[str, str]:
    """Old path -> where it is now, for files and directories that no longer exist.

    ``pairs`` oldest first; chains (a -> b, later b -> c) lead to the last name, and a rename
    whose end no longer exists leads nowhere (it was deleted after). A directory whose files all
    moved to one place is mapped too, from the part of the paths that did not change.
    """
    moved: dict[str, str] = {}
    for old, new in pairs:
        for key, value in list(moved.items()):
            if value == old:
                moved[key] = new
        moved[old] = new
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


def _walk(root: Path) -> tuple[frozenset[str], bool]:
    found: list[str] = []
    for directory, subdirs, names in os.walk(root, followlinks=False):
        subdirs[:] = sorted(d for d in subdirs if d not in WALK_SKIP)
        rel = os.path.relpath(directory, root)
        prefix = "" if rel == "." else rel.replace(os.sep, "/") + "/"
        for name in names:
            found.append(prefix + name)
            if len(found) >= MAX_WALK_FILES:
                return frozenset(found), False
    return frozenset(found), True


def list_project(root: Path) -> ProjectFiles:
    """The project's files: git's list and renames in a git repository's root, else a walk."""
    root = Path(os.path.abspath(root))
    if _is_git_root(root):
        listed = _git_files(root)
        if listed is not None:
            files, gone = listed
            renames = resolve_renames(_git_renames(root), files)
            deleted = (gone | _git_deleted(root)) - files
            return ProjectFiles(root, files, renames, deleted, git=True)
    files, complete = _walk(root)
    return ProjectFiles(root, files, {}, git=False, complete=complete)


def words_of(data: bytes) -> frozenset[str]:
    """The identifier-like words of one file's bytes (empty for binary data)."""
    if b"\0" in data[:8192]:
        return frozenset()
    return frozenset(word.decode("ascii") for word in _WORD.findall(data))


def _file_words(rel: str, data: bytes) -> frozenset[str]:
    """A file's words, and those of its path: a script ``deploy.sh`` names ``deploy``."""
    return words_of(data) | words_of(rel.encode("utf-8", "surrogateescape"))


def _read_capped(root: Path, rel: str) -> bytes:
    path = os.path.join(root, rel)
    try:
        if os.path.islink(path):
            return b""  # never read through a link: it may lead out of the project
        with open(path, "rb") as handle:
            return handle.read(MAX_FILE_BYTES)
    except OSError:
        return b""


class Project:
    """The project the citation rules check against: its files, renames and words.

    The word index is built on first use (only memories that cite identifiers need it) and can
    be updated per file (:meth:`update_file`, :meth:`remove_file`). ``exclude``: a directory
    inside the project (the memory dir itself) whose files neither count as the project's nor
    feed the word index, so a memory never vouches for itself.
    """

    def __init__(self, listing: ProjectFiles, exclude: str | None = None) -> None:
        self.root = listing.root
        self.git = listing.git
        self.complete = listing.complete
        self.renames: dict[str, str] = dict(listing.renames)
        self.deleted = listing.deleted
        self._deleted_tails: frozenset[str] | None = None
        self._exclude = exclude.rstrip("/") + "/" if exclude else None
        self.files: set[str] = {f for f in listing.files if not self._excluded(f)}
        self._dirs: frozenset[str] | None = None
        self._suffixes: frozenset[str] | None = None
        self._file_words: dict[str, frozenset[str]] | None = None
        self._counts: Counter[str] = Counter()
        #: Words looked up in one batch (:meth:`find_words`) before any index was built.
        self._known: dict[str, bool] = {}

    @classmethod
    def load(cls, root: Path, memory_dir: Path | None = None) -> Project:
        """List the project at ``root``, leaving out ``memory_dir`` when it lies inside."""
        listing = list_project(root)
        exclude = None
        if memory_dir is not None:
            real_root = os.path.realpath(listing.root)
            real_memory = os.path.realpath(memory_dir)
            if real_memory.startswith(real_root.rstrip(os.sep) + os.sep):
                exclude = os.path.relpath(real_memory, real_root).replace(os.sep, "/")
        return cls(listing, exclude)

    def _excluded(self, rel: str) -> bool:
        return self._exclude is not None and rel.startswith(self._exclude)

    # --- paths ---------------------------------------------------------------------------------

    @property
    def dirs(self) -> frozenset[str]:
        if self._dirs is None:
            self._dirs = _directories(self.files)
        return self._dirs

    def in_memory_dir(self, rel: str) -> bool:
        return self._excluded(rel) or (self._exclude is not None and rel + "/" == self._exclude)

    def exists(self, rel: str) -> bool:
        """Whether a file or directory ``rel`` is in the project."""
        rel = rel.rstrip("/")
        return rel in self.files or rel in self.dirs or rel == ""

    def on_disk(self, rel: str) -> bool:
        """Whether ``rel`` exists under the root though unlisted (a file git ignores): it is not
        gone. ``rel`` never holds ``..`` (the citation rules drop such paths)."""
        return ".." not in rel.split("/") and os.path.lexists(os.path.join(self.root, rel))

    def renamed_to(self, rel: str) -> str | None:
        """Where git shows ``rel`` went (a file, or a directory whose files all moved together)."""
        return self.renames.get(rel.rstrip("/"))

    def has_suffix(self, rel: str) -> bool:
        """Whether ``rel`` is the tail of a project file or directory (``lint/state.py`` of
        ``memory/memdir/lint/state.py``): memories often cite paths from a sub-package."""
        if self._suffixes is None:
            tails: set[str] = set()
            for path in itertools.chain(self.files, self.dirs):
                cut = path.find("/")
                while cut >= 0:
                    tails.add(path[cut + 1 :])
                    cut = path.find("/", cut + 1)
            self._suffixes = frozenset(tails)
        return rel.rstrip("/") in self._suffixes

    def was_deleted(self, rel: str) -> bool:
        """Whether git shows ``rel`` (a file, a directory of files, or the tail of either) was
        deleted."""
        if self._deleted_tails is None:
            tails: set[str] = set()
            for path in itertools.chain(self.deleted, _directories(self.deleted)):
                tails.add(path)
                cut = path.find("/")
                while cut >= 0:
                    tails.add(path[cut + 1 :])
                    cut = path.find("/", cut + 1)
            self._deleted_tails = frozenset(tails)
        return rel.rstrip("/") in self._deleted_tails

    def renamed_suffix(self, rel: str) -> str | None:
        """Where git shows a renamed path went, for a path cited by its tail (one answer only)."""
        tail = "/" + rel.rstrip("/")
        targets = {new for old, new in self.renames.items() if old.endswith(tail)}
        return targets.pop() if len(targets) == 1 else None

    # --- words ---------------------------------------------------------------------------------

    def _index(self) -> dict[str, frozenset[str]]:
        if self._file_words is None:
            self._file_words = {}
            for rel in self.files:
                words = _file_words(rel, _read_capped(self.root, rel))
                self._file_words[rel] = words
                self._counts.update(words)
        return self._file_words

    def has_word(self, word: str) -> bool:
        """Whether ``word`` appears in any project file (as a whole identifier-like word)."""
        if self._file_words is None and word in self._known:
            return self._known[word]
        self._index()
        return self._counts[word] > 0

    def find_words(self, words: Iterable[str]) -> None:
        """Look ``words`` up in one pass, so that :meth:`has_word` answers them without building
        the word index: in a git repository one ``git grep`` (git's own threads, binary files
        and ignored files skipped) instead of reading every file here. A one-off run (the CLI)
        that knows its words up front calls this; an incremental caller builds the index."""
        wanted = sorted({w for w in words if w not in self._known})
        if not wanted or self._file_words is not None:
            return
        if not self.git:
            self._index()
            return
        args = ["grep", "-z", "-I", "-h", "-o", "-w", "-F", "--untracked", "-f", "-"]
        args += ["--", "."]
        if self._exclude is not None:
            args.append(f":(exclude){self._exclude.rstrip('/')}")
        # git grep exits 1 when nothing matches.
        found = _git(self.root, *args, stdin="\n".join(wanted).encode(), ok=(0, 1))
        if found is None:
            self._index()
            return
        hits = set(found.decode("utf-8", "surrogateescape").replace("\0", "\n").splitlines())
        path_words = words_of("\n".join(self.files).encode("utf-8", "surrogateescape"))
        for word in wanted:
            self._known[word] = word in hits or word in path_words

    def update_file(self, rel: str, data: bytes | None = None) -> None:
        """One project file was created or changed: re-read it (or take ``data``)."""
        if self._excluded(rel):
            return
        self._known.clear()
        index = self._index()
        self.remove_file(rel)
        data = data[:MAX_FILE_BYTES] if data is not None else _read_capped(self.root, rel)
        words = _file_words(rel, data)
        index[rel] = words
        self._counts.update(words)
        if rel not in self.files:
            self.files.add(rel)
            self._dirs = self._suffixes = None

    def remove_file(self, rel: str) -> None:
        """One project file was deleted."""
        self._known.clear()
        if self._file_words is not None:
            old = self._file_words.pop(rel, frozenset())
            self._counts.subtract(old)
        if rel in self.files:
            self.files.discard(rel)
            self._dirs = self._suffixes = None
