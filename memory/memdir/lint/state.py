"""The incremental directory state: each file's lint results, cached by (path, mtime, size).

The language server keeps one :class:`DirState` per memory dir. When a file changes (on disk or
in the editor) only that file is read and its rules re-run; the directory-level rules (orphans,
dangling links, duplicates, the prefetch window) are recomputed from cached per-file summaries,
so no other file is re-read. The CLI uses the same object once: a cold run is a refresh of an
empty state.

Reading is the cost that matters, so each file is read once, as bytes, with one ``os.read``.
A file whose frontmatter is sound (the common case) is recognised from its first 30 lines
through the core YAML subset and checked by the body rules' own functions, without building a full
:class:`~memdir.model.TopicFile`; the usual frontmatter (name, description, type) is recognised
by one regex before that. Anything unusual takes the full path through
:func:`memdir.topic.parse_topic_text` and :func:`~memdir.lint.rules.check_topic`. All paths give
identical results (tests/test_lint_state.py compares them).
"""

from __future__ import annotations

import gc
import operator
import os
import re
import time
from collections import Counter
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from memdir import constants as C
from memdir.config import Settings, load_settings
from memdir.index import Index, parse_index
from memdir.lint import parallel
from memdir.lint.diagnostic import Diagnostic
from memdir.lint.engine import LintContext
from memdir.lint.rules import (
    DirectoryMemo,
    TopicSummary,
    check_directory,
    check_index,
    check_topic,
    description_problem,
    heading_title,
    injection_cut,
    not_injected,
    secret_diagnostics,
    summarize,
    vague_description,
)
from memdir.lint.secrets import SecretMatch, find_secrets, may_hold_secret
from memdir.model import Span
from memdir.scan import Skipped, iter_topic_entries
from memdir.textio import BINARY_SNIFF_BYTES, MAX_PARSE_BYTES, decode_bytes, read_text
from memdir.topic import (
    _YAML_AWKWARD,
    _YAML_WORDS,
    YamlDeferred,
    _simple_scalar,
    defer_yaml,
    load_simple_yaml,
    load_topic,
    load_yaml_handler,
    parse_topic_text,
)

#: MEMORY.md is read whole, well past the topic-file cap: every entry counts for orphans.
INDEX_MAX_BYTES = 64 * 1024 * 1024
#: A frontmatter boundary line, as the core parser defines it.
_BOUNDARY = re.compile(r"-{3,}\s*$")
#: The frontmatter nearly every memory has, as the agent writes it: name, description and type
#: (top-level or under ``metadata:``), an optional ``modified`` date, closed by ``---``. One
#: match finds its lines, instead of the subset loader's regex per line and span per key; the
#: values are then checked as the subset loader would check them (:func:`_plain`). The value
#: groups are bare line runs: a class that excluded ": " or " #" would cost more than the
#: whole match does.
_CANONICAL = re.compile(
    r"---\nname: (?P<name>[^\n]+)\ndescription: (?P<description>[^\n]+)\n"
    r"(?:type: (?:user|feedback|project|reference)"
    r"|metadata:\n +type: (?:user|feedback|project|reference))\n"
    r"(?:modified: (?P<modified>[^\n]+)\n)?"
    r"---(?:\n|\Z)"
)
_HEAD_SPAN = Span(0, 0, 0, 3)
#: :meth:`Diagnostic.sort_key` as one C-level getter (the sort calls it for every diagnostic).
_SORT_KEY = operator.attrgetter("rel_path", "span.start_line", "span.start_col", "code")
_OPEN_FLAGS = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)


@dataclass(frozen=True, slots=True)
class FileResult:
    """One topic file as last linted."""

    #: ``(mtime_ns, size)`` of the file on disk when read; None for an editor's unsaved text.
    key: tuple[int, int] | None
    summary: TopicSummary
    diagnostics: tuple[Diagnostic, ...]


@dataclass(frozen=True)
class LintResult:
    """All diagnostics of one memory dir, sorted by file, position and code."""

    root: Path
    diagnostics: tuple[Diagnostic, ...]
    #: Topic files linted (MEMORY.md not counted).
    files: int
    #: Relative paths whose diagnostics differ from the previous lint of the same state (every
    #: file with diagnostics on a first run): what a server must republish.
    changed: frozenset[str] = frozenset()

    def by_file(self) -> dict[str, list[Diagnostic]]:
        grouped: dict[str, list[Diagnostic]] = {}
        for diagnostic in self.diagnostics:
            grouped.setdefault(diagnostic.rel_path, []).append(diagnostic)
        return grouped

    def count(self, severity: str) -> int:
        return sum(1 for d in self.diagnostics if d.severity == severity)


@dataclass
class _IndexResult:
    key: tuple[int, int] | None
    index: Index
    diagnostics: tuple[Diagnostic, ...]


@contextmanager
def _gc_paused() -> Iterator[None]:
    """Hold off the cyclic garbage collector while a refresh or a lint runs.

    Both allocate tens of thousands of small, acyclic, long-lived objects (summaries, spans,
    diagnostics); every few hundred allocations the collector would walk the growing heap
    again, a fifth of a cold run at 20,000 files, to free nothing. Reference counting still
    frees what is dropped; whatever cycle turns up is collected once the collector is back on.
    """
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


def _read_bytes(path: str) -> tuple[bytes, os.stat_result]:
    """The file's first MAX_PARSE_BYTES + 1 bytes and its stat, in one open."""
    fd = os.open(path, _OPEN_FLAGS)
    try:
        stat = os.fstat(fd)
        want = min(stat.st_size, MAX_PARSE_BYTES) + 1
        data = os.read(fd, want)
        while len(data) < want and len(data) != stat.st_size:
            # A file growing under us, or a file system that returns short reads.
            chunk = os.read(fd, want - len(data))
            if not chunk:
                break
            data += chunk
    finally:
        os.close(fd)
    return data, stat


def _value_span(line: str, number: int, key_length: int) -> Span:
    """Where a ``key: value`` line's value sits, exactly as the core parser records it."""
    rest = line[key_length + 1 :]
    start = key_length + 1 + len(rest) - len(rest.lstrip())
    return Span(number, start, number, start + len(rest.strip()))


def _plain(value: str) -> bool:
    """Whether the subset loader reads ``value`` as a plain string, unchanged and unstripped
    (it starts with a letter, cannot end early or turn into a mapping, is no YAML keyword)."""
    return (
        value[0].isalpha()
        and not value[-1].isspace()
        and value[-1] != ":"
        and ": " not in value
        and " #" not in value
        and value not in _YAML_WORDS
    )


def _canonical_topic(
    text: str,
    path: str,
    root: Path,
    rel: str,
    mtime: float,
    size: int,
    ctx: LintContext,
    raw: bytes | None = None,
) -> tuple[TopicSummary, tuple[Diagnostic, ...]] | None:
    """:func:`fast_topic` for the canonical frontmatter, with the same result, or None."""
    parts = _canonical_parts(text, path, rel, size, ctx, raw)
    if parts is None:
        return None
    name, description, title, diagnostics = parts
    return canonical_summary(root, rel, mtime, name, description, title), diagnostics


def canonical_summary(
    root: Path, rel: str, mtime: float, name: str, description: str, title: str
) -> TopicSummary:
    """The summary of a file with the canonical frontmatter: name and description on lines 1
    and 2, right after their keys."""
    return TopicSummary(
        root,
        rel,
        mtime,
        name,
        description,
        title,
        Span(1, 6, 1, 6 + len(name)),
        Span(2, 13, 2, 13 + len(description)),
        _HEAD_SPAN,
    )


def _canonical_parts(
    text: str, path: str, rel: str, size: int, ctx: LintContext, raw: bytes | None
) -> tuple[str, str, str, tuple[Diagnostic, ...]] | None:
    """Name, description, title and diagnostics of a file with the canonical frontmatter."""
    match = _CANONICAL.match(text)
    if match is None:
        return None
    name, description, modified = match.group("name", "description", "modified")
    end = match.end()
    if (
        not (_plain(name) and _plain(description))
        or _YAML_AWKWARD.search(text, 0, end) is not None
        or (modified is not None and not _simple_scalar(modified)[0])
    ):
        return None  # the general path below decides, as the subset loader would
    body = end if text.endswith("\n", 0, end) else len(text)
    if text.startswith("# ", body):
        line_end = text.find("\n", body)
        title = text[body + 2 : line_end if line_end >= 0 else len(text)].strip()
    else:
        title = heading_title(text[body:].split("\n", 8)[:8], name)
    vague = description_problem(description, name, rel) if ctx.on("MEM109") else None
    cut = injection_cut(text, size) if ctx.on("MEM106") else None
    secrets = _secrets(text, raw) if ctx.on("MEM110") else []
    if vague is None and cut is None and not secrets:
        return name, description, title, ()
    span = Span(2, 13, 2, 13 + len(description))
    diagnostics = _body_diagnostics(text, Path(path), rel, size, span, vague, cut, secrets, ctx)
    return name, description, title, diagnostics


def _secrets(text: str, raw: bytes | None) -> list[SecretMatch]:
    return find_secrets(text) if raw is None or may_hold_secret(raw) else []


def _body_diagnostics(
    text: str,
    path: Path,
    rel: str,
    size: int,
    description_span: Span,
    vague: str | None,
    cut: tuple[int, int, str] | None,
    secrets: list[SecretMatch],
    ctx: LintContext,
) -> tuple[Diagnostic, ...]:
    diagnostics: list[Diagnostic] = []
    if vague is not None:
        diagnostics.append(vague_description(ctx, path, rel, description_span, vague))
    if cut is not None:
        diagnostics.append(not_injected(ctx, path, rel, text, size, cut))
    if secrets:
        diagnostics.extend(secret_diagnostics(text, secrets, ctx, path, rel))
    return tuple(diagnostics)


def fast_topic(
    text: str,
    path: str,
    root: Path,
    rel: str,
    mtime: float,
    size: int,
    ctx: LintContext,
    raw: bytes | None = None,
) -> tuple[TopicSummary, tuple[Diagnostic, ...]] | None:
    """The summary and diagnostics of a topic file whose frontmatter is sound, else None.

    This is the fast path, and it decides nothing on its own: it recognises the common shape
    (``---`` / ``key: value`` lines the core YAML subset reads / ``---`` within 30 lines, with
    name, description and a valid type), on which no frontmatter rule can fire, and then runs
    the body rules through the very functions the full path uses (a vague description, the
    injection cut, secrets). Anything else returns None and the file takes the full path, which
    is authoritative. ``raw``, the file's bytes when read from disk, lets the secret scan rule
    out most files before it looks at the text.
    """
    if not text.startswith("---\n"):
        return None
    canonical = _canonical_topic(text, path, root, rel, mtime, size, ctx, raw)
    if canonical is not None:
        return canonical
    close = text.find("\n---", 3)
    if close < 0:
        return None
    after = text.find("\n", close + 1)
    closing = text[close + 1 : after if after >= 0 else len(text)]
    if closing != "---" and not _BOUNDARY.match(closing):
        return None
    block = text[4:close].split("\n") if close > 3 else []
    if len(block) + 1 >= C.SCAN_MAX_LINES:
        return None
    data = load_simple_yaml(block)
    if data is None:
        return None
    name, description, raw_type = data.get("name"), data.get("description"), data.get("type")
    if raw_type is None:
        metadata = data.get("metadata")
        raw_type = metadata.get("type") if isinstance(metadata, dict) else None
    if not (isinstance(name, str) and isinstance(description, str) and isinstance(raw_type, str)):
        return None
    if isinstance(data.get("modified"), dict):
        return None
    name, description = name.strip(), description.strip()
    if not name or not description or raw_type.strip() not in C.MEMORY_TYPES:
        return None
    vague = description_problem(description, name, rel) if ctx.on("MEM109") else None
    cut = injection_cut(text, size) if ctx.on("MEM106") else None
    secrets = _secrets(text, raw) if ctx.on("MEM110") else []
    head_span = Span(0, 0, 0, 3)
    name_span = description_span = head_span
    found = 0
    for number, line in enumerate(block, 1):
        if line.startswith("name:") and name_span is head_span:
            name_span = _value_span(line, number, 4)
            found += 1
        elif line.startswith("description:") and description_span is head_span:
            description_span = _value_span(line, number, 11)
            found += 1
        if found == 2:
            break
    body = text[after + 1 :] if after >= 0 else ""
    summary = TopicSummary(
        root=root,
        rel_path=rel,
        mtime=mtime,
        name=name,
        description=description,
        title=heading_title(body.split("\n", 8)[:8], name),
        name_span=name_span,
        description_span=description_span,
        head_span=head_span,
    )
    if vague is None and cut is None and not secrets:
        return summary, ()
    return summary, _body_diagnostics(
        text, Path(path), rel, size, description_span, vague, cut, secrets, ctx
    )


class DirState:
    """Lint state of one memory directory, updated file by file."""

    def __init__(
        self, root: Path, settings: Settings | None = None, *, fast_path: bool = True
    ) -> None:
        self.root = Path(os.path.abspath(root))
        self.settings = settings if settings is not None else Settings()
        self.context = LintContext.from_settings(self.root, self.settings)
        #: Use the clean-file fast path (turned off only to compare both paths in tests).
        self.fast_path = fast_path
        #: How often each file was read from disk: lets tests (and curious users) check that an
        #: incremental update read only what changed.
        self.reads: Counter[str] = Counter()
        self._files: dict[str, FileResult] = {}
        self._paths: dict[str, str] = {}
        self._overlays: dict[str, str] = {}
        self._index: _IndexResult | None = None
        self._skipped: tuple[Skipped, ...] = ()
        self._previous: dict[str, tuple[Diagnostic, ...]] = {}
        self._memo = DirectoryMemo()

    @classmethod
    def load(cls, root: Path, project_root: Path | None = None) -> DirState:
        """A state with the settings of the memory dir (memdir.toml or [tool.memdir])."""
        return cls(root, load_settings(root, project_root))

    # --- paths -------------------------------------------------------------------------------

    def rel(self, path: Path | str) -> str:
        """The ``/``-separated path of ``path`` inside the memory dir (ValueError outside it)."""
        candidate = Path(path)
        if not candidate.is_absolute():
            candidate = self.root / candidate
        absolute = Path(os.path.abspath(candidate))
        try:
            return absolute.relative_to(self.root).as_posix()
        except ValueError:
            real = Path(os.path.realpath(absolute))
            real_root = Path(os.path.realpath(self.root))
            try:
                return real.relative_to(real_root).as_posix()
            except ValueError:
                raise ValueError(f"{path} is not inside the memory dir {self.root}") from None

    def _confined(self, path: str) -> bool:
        real = os.path.realpath(path)
        root = os.path.realpath(self.root)
        return real == root or real.startswith(root.rstrip(os.sep) + os.sep)

    @staticmethod
    def _is_topic(rel: str) -> bool:
        return rel.endswith(".md") and rel != C.INDEX_FILENAME and not rel.startswith("../")

    # --- updates -----------------------------------------------------------------------------

    def set_settings(self, settings: Settings) -> None:
        """New settings: every result is recomputed (and files re-read) at the next refresh."""
        self.settings = settings
        self.context = LintContext.from_settings(self.root, settings)
        self._files.clear()
        self._index = None

    def refresh(self, workers: int = 1) -> set[str]:
        """Bring the state up to date with the disk; returns the relative paths (re)read.

        Lists the directory and stats every file; only files that are new or whose
        (mtime, size) changed are read. Editor texts (see :meth:`update`) win over the disk.
        ``workers`` > 1 lets a large read (a cold run) use forked worker processes where that is
        safe (:mod:`memdir.lint.parallel`); the result is the same either way.
        """
        with _gc_paused():
            return self._refresh(workers)

    def _refresh(self, workers: int = 1) -> set[str]:
        # The caller may fork (the command line): so may the directory rules, at the next lint.
        self._memo.background = parallel.in_child if workers > 1 and parallel.available() else None
        skipped: list[Skipped] = []
        seen: set[str] = set()
        reread: set[str] = set()
        to_load: list[tuple[str, str]] = []
        for path, rel in iter_topic_entries(self.root, skipped):
            seen.add(rel)
            self._paths[rel] = path
            if rel in self._overlays:
                continue
            cached = self._files.get(rel)
            if cached is not None and cached.key is not None:
                try:
                    stat = os.stat(path)
                except OSError:
                    stat = None
                if stat is not None and (stat.st_mtime_ns, stat.st_size) == cached.key:
                    continue
            to_load.append((path, rel))
        index_changed = False

        def refresh_index() -> None:
            nonlocal index_changed
            index_changed = self._refresh_index()

        def while_workers_read() -> None:
            refresh_index()
            # The workers hand back the few files that need PyYAML (see topic.YamlDeferred):
            # it is imported here, once, while they read.
            load_yaml_handler()

        if workers > 1 and len(to_load) >= parallel.PARALLEL_MIN_FILES and parallel.available():
            # The index is parsed here while the workers read the topic files.
            loaded = parallel.load_shares(
                to_load, self._load_encoded, workers, while_workers_read, defer_yaml
            )
            # Counted here, once per file, wherever it was read (a worker's counter dies with it).
            self.reads.update(rel for _path, rel in to_load)
            spans: dict[tuple[int, int, int, int], Span] = {}
            prepared_descriptions = self._memo.tokens
            files, root, decode = self._files, self.root, parallel.decode
            for (_path, rel), data in zip(to_load, loaded, strict=True):
                key, summary, diagnostics, prepared = decode(data, root, spans)
                files[rel] = FileResult(key, summary, diagnostics)
                if prepared is not None and summary.description is not None:
                    prepared_descriptions[summary.description] = prepared
        else:
            for path, rel in to_load:
                self._files[rel] = self._load_disk(path, rel)
            refresh_index()
        reread.update(rel for _path, rel in to_load)
        for rel in set(self._files) - seen - set(self._overlays):
            del self._files[rel]
            self._paths.pop(rel, None)
        self._skipped = tuple(skipped)
        if index_changed:
            reread.add(C.INDEX_FILENAME)
        return reread

    def update(self, path: Path | str, text: str | None = None) -> None:
        """One file changed: re-read it (``text=None``) or take the editor's unsaved ``text``.

        A path that no longer exists (and has no text) is dropped. Nothing else is read.
        """
        rel = self.rel(path)
        if text is not None:
            self._overlays[rel] = text
        else:
            self._overlays.pop(rel, None)
        if rel == C.INDEX_FILENAME:
            self._refresh_index(force=True)
            return
        if not self._is_topic(rel):
            return
        disk = self._paths.get(rel) or os.fspath(self.root / rel)
        if not self._confined(disk):
            # A symlink leading out of the memory dir: never read through it (MEM114 on refresh).
            self._files.pop(rel, None)
            return
        if text is not None:
            self._paths[rel] = disk
            self._files[rel] = self._load_text(disk, rel, text)
        elif os.path.isfile(disk):
            self._paths[rel] = disk
            self._files[rel] = self._load_disk(disk, rel)
        else:
            self.remove(rel)

    def close(self, path: Path | str) -> None:
        """The editor closed the file: forget its unsaved text and read the disk again."""
        self.update(path, None)

    def remove(self, path: Path | str) -> None:
        rel = self.rel(path)
        self._overlays.pop(rel, None)
        if rel == C.INDEX_FILENAME:
            self._refresh_index(force=True)
            return
        self._files.pop(rel, None)
        self._paths.pop(rel, None)

    # --- loading -----------------------------------------------------------------------------

    def _load_encoded(self, path: str, rel: str) -> parallel.Loaded:
        """:meth:`_load_disk` as :func:`parallel.encode` would send it (the caller counts the
        read). A file with the canonical frontmatter, most of them, goes straight to tuples."""
        try:
            data, stat = _read_bytes(path)
        except OSError:
            data, stat = None, None
        if data is not None and stat is not None and self.fast_path:
            size = stat.st_size
            if size <= MAX_PARSE_BYTES and data.find(b"\x00", 0, BINARY_SNIFF_BYTES) < 0:
                try:
                    text = data.decode("utf-8")
                except UnicodeDecodeError:
                    text = ""
                parts = (
                    _canonical_parts(text, path, rel, size, self.context, data)
                    if text.startswith("---\n")
                    else None
                )
                if parts is not None:
                    key = (stat.st_mtime_ns, size)
                    return parallel.encode_canonical(key, rel, stat.st_mtime, *parts)
        try:
            result = self._read_and_check(path, rel, data, stat)
        except YamlDeferred:
            return parallel.DEFER
        return parallel.encode(result.key, result.summary, result.diagnostics)

    def _load_disk(self, path: str, rel: str) -> FileResult:
        self.reads[rel] += 1
        return self._read_and_check(path, rel)

    def _read_and_check(
        self,
        path: str,
        rel: str,
        data: bytes | None = None,
        stat: os.stat_result | None = None,
    ) -> FileResult:
        try:
            if data is None or stat is None:
                data, stat = _read_bytes(path)
        except OSError:
            # Gone or unreadable: the core reader turns that into an `unreadable` problem.
            topic = load_topic(Path(path), self.root)
            return FileResult(
                None, summarize(topic, self.root), tuple(check_topic(topic, self.context))
            )
        key = (stat.st_mtime_ns, stat.st_size)
        mtime, size = stat.st_mtime, stat.st_size
        if (
            self.fast_path
            and size <= MAX_PARSE_BYTES
            and data.find(b"\x00", 0, BINARY_SNIFF_BYTES) < 0
        ):
            try:
                text = data.decode("utf-8")
            except UnicodeDecodeError:
                pass
            else:
                fast = fast_topic(text, path, self.root, rel, mtime, size, self.context, data)
                if fast is not None:
                    return FileResult(key, *fast)
        result = decode_bytes(data, size, mtime)
        if result.binary or (not result.text and result.problems):
            topic = parse_topic_text("", Path(path), rel, mtime, size, result.problems)
        else:
            topic = parse_topic_text(result.text, Path(path), rel, mtime, size, result.problems)
        return FileResult(key, summarize(topic, self.root), tuple(check_topic(topic, self.context)))

    def _load_text(self, path: str, rel: str, text: str) -> FileResult:
        try:
            mtime = os.stat(path).st_mtime
        except OSError:
            mtime = time.time()  # a new file not saved yet: the newest of all
        size = len(text.encode("utf-8", "surrogatepass"))
        fast = (
            fast_topic(text, path, self.root, rel, mtime, size, self.context)
            if self.fast_path
            else None
        )
        if fast is not None:
            return FileResult(None, *fast)
        topic = parse_topic_text(text, Path(path), rel, mtime, size)
        return FileResult(
            None, summarize(topic, self.root), tuple(check_topic(topic, self.context))
        )

    def _check_index(self, index: Index) -> tuple[Diagnostic, ...]:
        # The entries' link checks are made once, here, and reused by the directory rules.
        return tuple(check_index(index, self.context, self._memo.links(index)))

    def _refresh_index(self, force: bool = False) -> bool:
        path = self.root / C.INDEX_FILENAME
        overlay = self._overlays.get(C.INDEX_FILENAME)
        if overlay is not None:
            index = parse_index(overlay, path)
            self._index = _IndexResult(None, index, self._check_index(index))
            return True
        try:
            stat = path.stat()
        except OSError:
            stat = None
        # (-1, -1): no MEMORY.md, which is a state to cache too (prefetch-mode dirs lack one).
        key = (stat.st_mtime_ns, stat.st_size) if stat is not None else (-1, -1)
        if not force and self._index is not None and self._index.key == key:
            return False
        if stat is None:
            empty = parse_index("", path)
            index = Index(empty.path, "", empty.lines, (), empty.other, empty.load, exists=False)
        else:
            self.reads[C.INDEX_FILENAME] += 1
            result = read_text(path, INDEX_MAX_BYTES)
            index = parse_index(result.text, path, result.problems)
        self._index = _IndexResult(key, index, self._check_index(index))
        return True

    # --- results -----------------------------------------------------------------------------

    @property
    def index(self) -> Index:
        if self._index is None:
            self._refresh_index()
        assert self._index is not None
        return self._index.index

    def summaries(self) -> dict[str, TopicSummary]:
        return {rel: result.summary for rel, result in self._files.items()}

    def lint(self) -> LintResult:
        """Diagnostics for the whole directory from the cached state (reads nothing new)."""
        with _gc_paused():
            return self._lint()

    def _lint(self) -> LintResult:
        index = self.index
        assert self._index is not None
        collected: list[Diagnostic] = list(self._index.diagnostics)
        for result in self._files.values():
            collected.extend(result.diagnostics)
        collected.extend(
            check_directory(index, self.summaries(), self._skipped, self.context, self._memo)
        )
        collected.sort(key=_SORT_KEY)
        current: dict[str, tuple[Diagnostic, ...]] = {}
        for rel, group in _group(collected):
            current[rel] = group
        changed = {
            rel
            for rel in set(current) | set(self._previous)
            if current.get(rel, ()) != self._previous.get(rel, ())
        }
        self._previous = current
        return LintResult(self.root, tuple(collected), len(self._files), frozenset(changed))


def _group(diagnostics: Iterable[Diagnostic]) -> Iterable[tuple[str, tuple[Diagnostic, ...]]]:
    current: list[Diagnostic] = []
    rel: str | None = None
    for diagnostic in diagnostics:
        if diagnostic.rel_path != rel:
            if rel is not None:
                yield rel, tuple(current)
            rel, current = diagnostic.rel_path, []
        current.append(diagnostic)
    if rel is not None:
        yield rel, tuple(current)


def lint_directory(
    root: Path, settings: Settings | None = None, project_root: Path | None = None
) -> LintResult:
    """Lint a memory directory once (the CLI's cold run)."""
    state = DirState(root, settings) if settings is not None else DirState.load(root, project_root)
    state.refresh()
    return state.lint()
