"""The project as the citation rules see it: :class:`Project`, its files (:mod:`.listing`), the
words asked about and the files holding each (:mod:`.words`), kept up to date one changed file at
a time (:meth:`Project.update_file`, whose :class:`Changed` names the words and paths whose
answer changed). The rules are the package's: :mod:`memdir.project`."""

from __future__ import annotations

import contextlib
import itertools
import os
import sys
from collections import Counter
from collections.abc import Collection, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from memdir.git import run_git
from memdir.project import ignore
from memdir.project.listing import (
    _PROBE_TIMEOUT,
    WALK_SKIP,
    ProjectFiles,
    _directories,
    _git_listing,
    _is_git_root,
    _path_key,
    _path_tokens,
    _walk_listing,
    _zsplit,
)
from memdir.project.words import (
    _TOKEN,
    MAX_FILE_BYTES,
    _path_bytes,
    _read_capped,
    search_files,
    words_in,
)

#: :meth:`Project.found_share` needs this many words looked up to say anything.
MIN_WORDS_FOR_SHARE = 10


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

    def ignored(self, rel: str) -> bool:
        """Whether the project's ignore rules leave ``rel`` out: a build output, a cache or
        runtime data, which a checkout lacks and the machine that builds or runs the project
        has. git answers in a git repository (``git check-ignore``, through the one safe
        runner); elsewhere the ``.gitignore`` files are read (:mod:`memdir.project.ignore`). A
        path without an extension is asked about as a directory too (``frontend/dist``)."""
        self._ask(rel)
        bare = rel.rstrip("/")
        if ".." in bare.split("/"):
            return False
        if not self.git:
            return ignore.ignored(self.root, rel)
        if self._git_stuck:
            return False
        asked = [bare]
        if "." not in bare.rsplit("/", 1)[-1] or rel.endswith("/"):
            asked.append(bare + "/")
        return bool(self._check_ignore(asked))

    def completions(self, rel: str) -> list[str]:
        """The project files ``rel`` names in short: in its directory, a file whose name
        starts with ``rel``'s name and goes on after a separator (``db/054`` for
        ``db/054_seed_users.sql``), or with the same stem and another extension (``App.jsx``
        for ``App.tsx``), sorted."""
        self._ask(rel)
        bare = rel.rstrip("/")
        parent, _, name = bare.rpartition("/")
        if not name:
            return []
        prefix = f"{parent}/" if parent else ""
        stem = name.rsplit(".", 1)[0] if "." in name[1:] else name
        found = []
        for path in self.files:
            if not path.startswith(prefix) or "/" in path[len(prefix) :]:
                continue
            other = path[len(prefix) :]
            after = other[len(name) : len(name) + 1]
            shorthand = other.startswith(name) and after != "" and after in "_-."
            if shorthand or (stem != name and other.rsplit(".", 1)[0] == stem):
                found.append(path)
        return sorted(found)

    def found_share(self) -> float | None:
        """The share of the words looked up that the project holds, or None for fewer than
        :data:`MIN_WORDS_FOR_SHARE`: a memory dir citing names its project mostly lacks is
        about code kept elsewhere (a dotfiles repository, another checkout), where a missing
        name says nothing."""
        if len(self._postings) < MIN_WORDS_FOR_SHARE:
            return None
        return sum(1 for where in self._postings.values() if where) / len(self._postings)

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
                from memdir.project.citations import cited_words

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
        ignored = self._check_ignore(asked)
        if parent:
            self._ignored_dirs.setdefault(parent, f"{parent}/" in ignored)
        return rel in ignored or bool(self._ignored_dirs.get(parent))

    def _check_ignore(self, asked: list[str]) -> set[str]:
        """The ones of ``asked`` git ignores (``git check-ignore``; exit 1: none). It answers in
        milliseconds; one that does not (a FIFO where a .gitignore should be) is not asked
        again, and files are then taken as not ignored."""
        if self._git_stuck:
            return set()
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
            return set()
        return set(_zsplit(done.stdout)) if done.returncode == 0 else set()

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
