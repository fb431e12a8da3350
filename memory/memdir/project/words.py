"""Which project files hold which words: the system's ``grep -F -w`` over git's file list in a few
parallel chunks, or the files read here when there is no ``grep`` (each capped at
:data:`MAX_FILE_BYTES`)."""

from __future__ import annotations

import os
import re
import shutil
import stat as stat_module
from collections.abc import Collection, Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from memdir.git import Completed, run_bounded
from memdir.textio import read_bytes

#: A project file is read here only up to this many bytes: big files are data. (``grep`` reads
#: whole files; a file over this size that changes is searched by ``grep`` too, see
#: :meth:`Project.update_file`, so both ways agree.)
MAX_FILE_BYTES = 512 * 1024
_GREP_TIMEOUT = 120.0
#: File names per ``grep`` process: well under every system's argument limit.
_GREP_CHUNK_BYTES = 512 * 1024
#: Word characters as ``grep -w`` counts them in the C locale.
_TOKEN = re.compile(rb"[A-Za-z0-9_]+")
_GREP_ENV = {**os.environ, "LC_ALL": "C"}


def _run(command: list[str], timeout: float, cwd: Path) -> Completed | None:
    """``command`` (grep) run to its end, output captured and bounded
    (:func:`memdir.git.run_bounded`); None when it could not start, timed out or said too much
    (then the files are read here instead)."""
    return run_bounded(command, env=_GREP_ENV, cwd=cwd, timeout=timeout)


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
