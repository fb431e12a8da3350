"""The one writer: :class:`MemoryWriter`, every mutation memdir makes, under the directory's
lock, with its intent journaled first and MEMORY.md kept in step (the rules are the package's:
:mod:`memdir.writing`)."""

from __future__ import annotations

import contextlib
import datetime as dt
import os
import posixpath
import stat
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Final

from memdir import constants as C
from memdir.agent.index import Index, generated_entry, is_generated, parse_index
from memdir.agent.topic import parse_topic_text
from memdir.config import Settings, load_settings
from memdir.fixes.apply import apply_text_edits
from memdir.fixes.plan import (
    entries_linking,
    entry_insertion,
    generated_duplicates,
    rename_edits,
)
from memdir.textio import open_regular
from memdir.writing import files
from memdir.writing.confine import MemoryPath, _check_new_names, _unsafe, resolve_path
from memdir.writing.files import (
    _O_NOFOLLOW,
    _checked_size,
    _decode,
    _empty_file,
    _empty_folder,
    _existing_folder,
    _first_missing,
    _fsync_dir,
    _is_index,
    _move_dir_noreplace,
    _open_folder,
    _publish_noreplace,
    _read_bytes_in,
    _read_text,
    _remove_empty_folders,
    _remove_stale_temps,
    _require_only_memories,
    _same_entry,
    _temp_name,
    _write_file,
    _write_temp,
)
from memdir.writing.journal import (
    _MAX_JOURNAL_BYTES,
    _STATE_HINT,
    JOURNAL_NAME,
    WriteIntent,
    _clear_odd_entry,
    dir_state,
    intent_problem,
)
from memdir.writing.results import (
    ChangeKind,
    DroppedLine,
    FileChange,
    IndexAction,
    IndexNotUpdatedError,
    IndexOutcome,
    IndexProtectedError,
    InvalidLineError,
    LockTimeoutError,
    MultipleMatchError,
    NoMatchError,
    NotAFileError,
    PathExistsError,
    PathNotFoundError,
    UnsafePathError,
    WriteError,
    WriteResult,
    _cannot,
)
from memdir.writing.stamps import _now_utc, format_modified, has_frontmatter, stamp_modified

#: The write lock of a memory dir, in its state folder (:func:`dir_state`).
LOCK_NAME: Final = "write.lock"
#: How long a writer waits for another writer before giving up with :class:`LockTimeoutError`.
WRITE_LOCK_TIMEOUT_SECONDS: Final = 10.0


# --- the index -------------------------------------------------------------------------------


def is_topic_path(rel: str) -> bool:
    """A topic file: ``*.md`` anywhere in the dir except an index named MEMORY.md."""
    name = rel.rsplit("/", 1)[-1]
    return name.endswith(".md") and name != C.INDEX_FILENAME


def _name_and_description(rel: str, text: str) -> tuple[str, str]:
    topic = parse_topic_text(text, Path(rel), rel)
    return topic.name or "", topic.description or ""


# --- the writer ------------------------------------------------------------------------------


@dataclass
class MemoryWriter:
    """Safe, locked, index-maintaining writes to one memory dir.

    Paths are relative to the memory dir (``/``-separated) or absolute inside it. Every method
    takes the directory lock for its whole read-modify-write and returns a :class:`WriteResult`;
    every refusal is a :class:`WriteError`. With ``md_only`` only topic files and the index may
    be written (the extraction agent's setting).
    """

    root: Path
    settings: Settings | None = None
    lock_timeout: float = WRITE_LOCK_TIMEOUT_SECONDS
    md_only: bool = False
    clock: Callable[[], dt.datetime] = field(default=_now_utc)
    #: Asked under the lock before a write touches anything: with the path (relative to the
    #: memory dir) of a file to be created or changed and the whole text it will hold, or with
    #: a rename's new path and None. It raises :class:`WriteError` to refuse the write. The
    #: memory tool refuses secrets with it, judging the file as it will be, not the edit.
    check: Callable[[str, str | None], None] | None = None
    #: What the last recovery did (see :meth:`recover`).
    _recovered: list[str] = field(default_factory=list, init=False, repr=False)
    #: What went wrong in the last recovery (a journal refused, a step that failed): every
    #: operation's result carries it as warnings.
    _recovery_problems: list[str] = field(default_factory=list, init=False, repr=False)
    #: The state folder of the dir, once the lock is held.
    _state: Path | None = field(default=None, init=False, repr=False)
    #: Why the current operation's index update failed, if it did (see
    #: :class:`IndexNotUpdatedError`).
    _index_failure: str | None = field(default=None, init=False, repr=False)

    def __post_init__(self) -> None:
        self.root = Path(self.root)
        if self.settings is None:
            self.settings = load_settings(self.root)

    # -- public operations ----------------------------------------------------------------------

    @property
    def index_mode(self) -> bool:
        """True when MEMORY.md is maintained (recall mode ``index``)."""
        return self.settings is None or self.settings.recall_mode == "index"

    @contextlib.contextmanager
    def locked(self) -> Iterator[None]:
        """Hold the memory dir's write lock; not re-entrant, so never nest two operations."""
        from filelock import FileLock, Timeout

        root = self._checked_root()
        state = dir_state(root)
        lock_path = state / LOCK_NAME
        try:
            _clear_odd_entry(lock_path)
            lock = FileLock(str(lock_path), timeout=self.lock_timeout)
            lock.acquire()
        except Timeout:
            raise LockTimeoutError(
                f"another writer has held the lock of {root} ({lock_path}) for "
                f"{self.lock_timeout:g}s; try again"
            ) from None
        except OSError as exc:
            raise WriteError(
                f"cannot lock {root} ({lock_path}): {exc.strerror or exc}; {_STATE_HINT}"
            ) from exc
        self._state, self._index_failure = state, None
        try:
            self._recover()
            yield
        except OSError as exc:
            # Whatever the file system says that an operation did not foresee (a symlink loop
            # mid-path, a permission, a full disk) still reaches the caller as a WriteError.
            where = f" ({exc.filename})" if exc.filename else ""
            raise WriteError(f"the write failed: {exc.strerror or exc}{where}") from exc
        finally:
            lock.release()

    def create(self, path: str, text: str, *, maintain: bool = True) -> WriteResult:
        """Create a new file with ``text``; an existing file is never overwritten.

        ``maintain=False`` leaves MEMORY.md alone: for fixes, which carry their own index edits.
        """
        with self.locked():
            target = self._resolve(path)
            self._require_writable_name(target, path)
            if target.is_root:
                raise PathExistsError(f"{path} is the memory dir itself", path=path)
            data = _checked_size(text, path)
            _check_new_names(target.root, target.rel, path)
            if self.check is not None:
                self.check(target.rel, text)
            temp = _temp_name()
            intent = WriteIntent(
                "create",
                target.rel,
                index=maintain,
                existed=os.path.lexists(target.path),
                made=_first_missing(target.root, target.path.parent),
                temp=temp,
            )
            with self._intent(intent):
                with _open_folder(target.root, target.folder, path, make=True) as folder:
                    try:
                        _write_temp(folder, temp, data)
                        _publish_noreplace(folder, temp, folder, target.name)
                    except FileExistsError:
                        raise PathExistsError(f"{path} already exists", path=path) from None
                    except OSError as exc:
                        raise _cannot(f"create {path}", path, exc) from exc
                    finally:
                        with contextlib.suppress(FileNotFoundError):
                            folder.unlink(temp)
                    folder.fsync()
                change = FileChange("created", target.rel, after=text)
                if not maintain:
                    return self._done(WriteResult(target.rel, (change,), text))
                extra, warnings, outcome = self._index_after_write(
                    target.rel, None, text, created=True
                )
            result = WriteResult(
                target.rel, (change, *extra), text, warnings=warnings, index=outcome
            )
            return self._done(result)

    def update(self, path: str, text: str) -> WriteResult:
        """Replace the whole content of an existing file."""
        with self.locked():
            target, before = self._load(path)
            return self._done(self._commit(target, path, before, text))

    def rewrite(
        self, path: str, change: Callable[[str], str], *, maintain: bool = True
    ) -> WriteResult:
        """Read-modify-write under one lock: ``change`` maps the file's text to its new text.

        ``maintain=False`` writes exactly what ``change`` returns (no ``modified`` stamp, no
        index upkeep): for fixes, which are planned edits of that very text.
        """
        with self.locked():
            target, before = self._load(path)
            return self._done(self._commit(target, path, before, change(before), maintain=maintain))

    def str_replace(self, path: str, old_str: str, new_str: str) -> WriteResult:
        """Replace the one occurrence of ``old_str``; zero or several occurrences are errors."""
        with self.locked():
            target, before = self._load(path)
            count = before.count(old_str) if old_str else 0
            if count == 0:
                raise NoMatchError(
                    f"no change: the text to replace does not occur in {path}",
                    path=path,
                    old_str=old_str,
                )
            if count > 1:
                lines: list[int] = []
                start = before.find(old_str)
                while start != -1:
                    lines.append(before.count("\n", 0, start) + 1)
                    start = before.find(old_str, start + 1)
                shown = ", ".join(map(str, lines))
                raise MultipleMatchError(
                    f"no change: the text to replace occurs {count} times in {path} "
                    f"(lines {shown}); make it unique",
                    path=path,
                    old_str=old_str,
                    lines=tuple(lines),
                )
            position = before.find(old_str)
            after = before[:position] + new_str + before[position + len(old_str) :]
            changed_line = before.count("\n", 0, position)
            return self._done(self._commit(target, path, before, after, changed_line))

    def insert(self, path: str, insert_line: int, insert_text: str) -> WriteResult:
        """Insert ``insert_text`` as a line after line ``insert_line`` (0: at the top)."""
        with self.locked():
            target, before = self._load(path)
            # The API's line model: split on LF only (a CR stays with its line), no empty tail.
            lines = before.split("\n")
            if lines[-1] == "":
                lines.pop()
            if isinstance(insert_line, bool) or not 0 <= insert_line <= len(lines):
                raise InvalidLineError(
                    f"cannot insert at line {insert_line} of {path}: "
                    f"it has {len(lines)} lines (use 0 to {len(lines)})",
                    path=path,
                    line=insert_line,
                    line_count=len(lines),
                )
            lines.insert(insert_line, insert_text.rstrip("\n"))
            after = "\n".join(lines)
            if not after.endswith("\n"):
                after += "\n"
            return self._done(self._commit(target, path, before, after))

    def delete(self, path: str, *, allow_index: bool = False) -> WriteResult:
        """Delete a file, or a folder holding only memory files and folders of them (never the
        memory dir itself). MEMORY.md is deleted only with ``allow_index``: the agent loads it
        at the start of every session, and a call that drops it loses every entry at once."""
        with self.locked():
            target = self._resolve(path, follow_leaf=False)
            if target.is_root:
                raise UnsafePathError(
                    "the memory dir itself cannot be deleted", path=path, reason="root"
                )
            try:
                info = os.lstat(target.path)
            except (FileNotFoundError, NotADirectoryError):
                raise PathNotFoundError(f"{path} does not exist", path=path) from None
            is_dir = stat.S_ISDIR(info.st_mode)
            if self.md_only and (is_dir or not target.rel.endswith(".md")):
                raise _unsafe(path, "not-topic", "only memory files (*.md) may be deleted here")
            if not allow_index and _is_index(target, info):
                raise IndexProtectedError(
                    f"refusing to delete {path}: it is {C.INDEX_FILENAME}, the index the agent "
                    "loads at the start of every session, and deleting it drops every entry at "
                    "once; edit its lines instead, or delete it outside memdir if you mean to",
                    path=path,
                )
            if is_dir:
                _require_only_memories(target, path)
            with self._intent(WriteIntent("delete", target.rel, index=True, is_dir=is_dir)):
                result = self._delete(target, path, is_dir, info)
            return self._done(result)

    def _delete(
        self,
        target: MemoryPath,
        path: str,
        is_dir: bool,
        info: os.stat_result,
    ) -> WriteResult:
        """The body of :meth:`delete`, once its intent is written."""
        before: str | None = None
        warnings: list[str] = []
        try:
            with _open_folder(target.root, target.folder, path) as folder:
                if is_dir:
                    # Move the folder out of sight first (one atomic rename), so no reader sees
                    # it half deleted; then remove it.
                    trash = _temp_name(".trash")
                    folder.rename(target.name, folder, trash)
                    files._step()
                    folder.fsync()
                    try:
                        folder.rmtree(trash)
                    except OSError as exc:
                        warnings.append(f"{path} is gone but {trash} was left behind: {exc}")
                else:
                    if stat.S_ISREG(info.st_mode):
                        with contextlib.suppress(WriteError, OSError):
                            before = _decode(_read_bytes_in(folder, target.name, path), path)
                    folder.unlink(target.name)
                    files._step()
                    folder.fsync()
        except FileNotFoundError:
            raise PathNotFoundError(f"{path} does not exist", path=path) from None
        except OSError as exc:
            raise _cannot(f"delete {path}", path, exc) from exc
        change = FileChange("deleted", target.rel, before=before, is_dir=is_dir)
        extra = self._index_remove(target.rel, is_dir=is_dir, warnings=warnings)
        outcome = IndexOutcome("removed") if extra else None
        if not self.index_mode:
            outcome = self._not_maintained(target.rel)
        return WriteResult(target.rel, (change, *extra), warnings=tuple(warnings), index=outcome)

    def rename(self, old_path: str, new_path: str, *, allow_index: bool = False) -> WriteResult:
        """Rename or move a file or folder; an existing destination is never replaced.
        MEMORY.md is renamed away only with ``allow_index`` (see :meth:`delete`)."""
        with self.locked():
            source = self._resolve(old_path, follow_leaf=False)
            dest = self._resolve(new_path, follow_leaf=False)
            if source.is_root:
                raise UnsafePathError(
                    "the memory dir itself cannot be renamed", path=old_path, reason="root"
                )
            if dest.is_root:
                raise PathExistsError(f"{new_path} is the memory dir itself", path=new_path)
            try:
                info = os.lstat(source.path)
            except (FileNotFoundError, NotADirectoryError):
                raise PathNotFoundError(f"{old_path} does not exist", path=old_path) from None
            is_dir = stat.S_ISDIR(info.st_mode)
            if self.md_only and (
                is_dir or not source.rel.endswith(".md") or not dest.rel.endswith(".md")
            ):
                raise _unsafe(old_path, "not-topic", "only memory files (*.md) may be renamed here")
            if is_dir and (dest.rel + "/").startswith(source.rel + "/"):
                raise WriteError(f"cannot move {old_path} into itself", path=old_path)
            if os.path.lexists(dest.path):
                raise PathExistsError(f"{new_path} already exists", path=new_path)
            if not allow_index and _is_index(source, info):
                raise IndexProtectedError(
                    f"refusing to rename {old_path} to {new_path}: it is {C.INDEX_FILENAME}, the "
                    "index the agent loads at the start of every session, which would start "
                    "without one; edit its lines instead, or rename it outside memdir if you "
                    "mean to",
                    path=old_path,
                )
            _check_new_names(dest.root, dest.rel, new_path, renaming=source.rel)
            if self.check is not None:
                self.check(dest.rel, None)
            intent = WriteIntent(
                "rename",
                source.rel,
                index=True,
                new_path=dest.rel,
                is_dir=is_dir,
                made=_first_missing(dest.root, dest.path.parent),
            )
            with self._intent(intent):
                result = self._rename(source, dest, old_path, new_path, is_dir)
            return self._done(result)

    def _rename(
        self, source: MemoryPath, dest: MemoryPath, old_path: str, new_path: str, is_dir: bool
    ) -> WriteResult:
        """The body of :meth:`rename`, once its intent is written."""
        with (
            _open_folder(source.root, source.folder, old_path) as here,
            _open_folder(dest.root, dest.folder, new_path, make=True) as there,
        ):
            try:
                if is_dir:
                    _move_dir_noreplace(here, source.name, there, dest.name)
                else:
                    _publish_noreplace(here, source.name, there, dest.name)
            except FileExistsError:
                raise PathExistsError(f"{new_path} already exists", path=new_path) from None
            except FileNotFoundError:
                raise PathNotFoundError(f"{old_path} does not exist", path=old_path) from None
            except OSError as exc:
                raise _cannot(f"rename {old_path} to {new_path}", old_path, exc) from exc
            there.fsync()
            if source.folder != dest.folder:
                here.fsync()
        change = FileChange("renamed", source.rel, new_path=dest.rel, is_dir=is_dir)
        warnings: list[str] = []
        extra = self._index_rename(source.rel, dest.rel, is_dir=is_dir, warnings=warnings)
        outcome = None
        if not self.index_mode:
            outcome = self._not_maintained(dest.rel)
        elif extra and not is_dir and extra[0].after is not None:
            linking = entries_linking(parse_index(extra[0].after), dest.rel)
            outcome = IndexOutcome("relinked", linking[0].line + 1 if linking else None)
        return WriteResult(dest.rel, (change, *extra), warnings=tuple(warnings), index=outcome)

    def recover(self) -> tuple[str, ...]:
        """Finish what a writer that was killed left undone (every operation does this first);
        returns what was done, for a person to read."""
        with self.locked():
            return tuple(self._recovered)

    def read(self, path: str) -> str:
        """The text of a file in the dir, through the same path checks as the writes."""
        try:
            return _read_text(self._resolve(path), path)
        except OSError as exc:
            raise _cannot(f"read {path}", path, exc) from exc

    # -- internals ------------------------------------------------------------------------------

    @contextlib.contextmanager
    def _intent(self, intent: WriteIntent) -> Iterator[None]:
        """Record ``intent`` for the next writer while the operation runs (lock held).

        An operation that ends, even with an error, leaves nothing to finish (its error paths
        clean up after themselves), so the record goes; only a killed one leaves it, and one
        whose index update failed (:class:`IndexNotUpdatedError`), for the next writer to make.
        """
        journal = self._journal()
        # A fresh file (O_EXCL, no link followed): whatever had the name is gone first.
        _clear_odd_entry(journal)
        with contextlib.suppress(FileNotFoundError):
            os.unlink(journal)
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | _O_NOFOLLOW
        with os.fdopen(os.open(journal, flags, 0o600), "wb") as handle:
            handle.write(intent.to_json().encode("utf-8"))
            handle.flush()
            os.fsync(handle.fileno())
        _fsync_dir(journal.parent)
        files._step()
        try:
            yield
        finally:
            files._step()
            if self._index_failure is None:
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(journal)

    def _journal(self) -> Path:
        assert self._state is not None, "the journal is only used with the lock held"
        return self._state / JOURNAL_NAME

    def _read_journal(self, journal: Path) -> tuple[WriteIntent | None, str | None]:
        """The journal's intent (None for one torn while being written: nothing was done then)
        and why it is refused, if it is."""
        try:
            fd, _info = open_regular(journal, follow_links=False)
        except OSError as exc:
            return None, f"it cannot be read: {exc.strerror or exc}"
        with os.fdopen(fd, "rb") as handle:
            raw = handle.read(_MAX_JOURNAL_BYTES + 1)
        if len(raw) > _MAX_JOURNAL_BYTES:
            return None, f"it is larger than {_MAX_JOURNAL_BYTES:,} bytes"
        intent = WriteIntent.from_json(raw)
        if intent is None:
            return None, None
        return intent, intent_problem(self._checked_root(), intent)

    def _recover(self) -> None:
        """Finish the operation whose intent is still recorded (see "Recoverable" above)."""
        self._recovered, self._recovery_problems = [], []
        root = self._checked_root()
        journal = self._journal()
        if not os.path.lexists(journal):
            return
        intent, problem = self._read_journal(journal)
        done, problems = self._recovered, self._recovery_problems
        if problem is not None:
            problems.append(
                f"ignored the journal of an interrupted write ({journal}): {problem}; nothing "
                f"it names was touched, and {C.INDEX_FILENAME} may not match the files "
                "(`memdir lint` shows what is out of step)"
            )
            intent = None
        folders = intent.folders() if intent is not None else {""}
        try:
            if intent is not None:
                self._finish(root, intent, done)
        except (OSError, WriteError) as exc:
            problems.append(f"could not finish the interrupted write: {exc}")
        if self._index_failure is not None:
            # The update the dead writer owed still cannot be made: keep its journal, and make
            # no new write (it would need a journal of its own) until it can.
            raise WriteError(
                f"an interrupted write is not finished: {self._index_failure}; nothing else was "
                "written. Free some space (or fix what the error names) and write again: the "
                f"next write through memdir finishes it. Its journal is {journal}."
            )
        for rel in sorted(folders):
            try:
                place = resolve_path(root, rel or ".")
            except UnsafePathError:
                continue
            with _existing_folder(root, place.rel) as folder:
                if folder is not None:
                    done.extend(
                        f"removed {posixpath.join(rel, n)}" for n in _remove_stale_temps(folder)
                    )
        done.extend(problems)
        _clear_odd_entry(journal)
        with contextlib.suppress(FileNotFoundError):
            os.unlink(journal)
        _fsync_dir(journal.parent)
        _fsync_dir(root)

    def _finish(self, root: Path, intent: WriteIntent, done: list[str]) -> None:
        """Bring the dir to the state ``intent`` left it in or was heading for, whichever is
        on disk: the file operation is kept or undone as found, and MEMORY.md follows it."""
        warnings: list[str] = []
        if intent.op == "create":
            target = resolve_path(root, intent.path)
            if intent.existed:
                return
            with _existing_folder(root, target.folder) as folder:
                temp = intent.temp or ""
                if folder is None or not folder.exists(target.name):
                    if folder is not None and temp:
                        with contextlib.suppress(FileNotFoundError):
                            folder.unlink(temp)  # before its folder, which goes if we made it
                    self._remove_made(root, intent.made, done)
                    return
                if temp and folder.exists(temp):
                    if _same_entry(folder, temp, folder, target.name):
                        folder.unlink(temp)  # published: only the second name was left
                    elif _empty_file(folder, target.name):
                        # The placeholder of a file system without hard links: the temp is
                        # whole (it is fsynced before the placeholder is made), so publish it.
                        folder.replace(temp, folder, target.name)
            if intent.index and is_topic_path(target.rel):
                text = _read_text(target, target.rel)
                changes, warnings_, _ = self._index_after_write(
                    target.rel, None, text, created=True
                )
                warnings.extend(warnings_)
                done.extend(f"added {target.rel} to {C.INDEX_FILENAME}" for _ in changes)
        elif intent.op == "write":
            target = resolve_path(root, intent.path)
            if intent.index and is_topic_path(target.rel) and os.path.lexists(target.path):
                text = _read_text(target, target.rel)
                changes, warnings_, _ = self._index_after_write(
                    target.rel, intent.old, text, created=False
                )
                warnings.extend(warnings_)
                done.extend(f"refreshed the line of {target.rel}" for _ in changes)
        elif intent.op == "delete":
            target = resolve_path(root, intent.path, follow_leaf=False)
            if not os.path.lexists(target.path) and intent.index:
                changes = self._index_remove(target.rel, is_dir=intent.is_dir, warnings=warnings)
                done.extend(f"dropped {target.rel} from {C.INDEX_FILENAME}" for _ in changes)
        elif intent.op == "rename" and intent.new_path is not None:
            source = resolve_path(root, intent.path, follow_leaf=False)
            dest = resolve_path(root, intent.new_path, follow_leaf=False)
            with (
                _existing_folder(root, source.folder) as here,
                _existing_folder(root, dest.folder) as there,
            ):
                if here and there and here.exists(source.name) and there.exists(dest.name):
                    if not intent.is_dir and _same_entry(here, source.name, there, dest.name):
                        here.unlink(source.name)  # cut between the two names: finish the move
                        done.append(f"finished renaming {source.rel} to {dest.rel}")
                    elif intent.is_dir and _empty_folder(there, dest.name):
                        there.rmdir(dest.name)  # the placeholder of a move that never happened
                    elif not intent.is_dir and _empty_file(there, dest.name):
                        there.unlink(dest.name)  # the placeholder of a system without hard links
                arrived = there is not None and there.exists(dest.name)
                left = here is not None and here.exists(source.name)
            if not arrived:
                self._remove_made(root, intent.made, done)
            elif not left and intent.index:
                changes = self._index_rename(
                    source.rel, dest.rel, is_dir=intent.is_dir, warnings=warnings
                )
                done.extend(f"renamed {source.rel} in {C.INDEX_FILENAME}" for _ in changes)
        done.extend(warnings)

    @staticmethod
    def _remove_made(root: Path, made: str | None, done: list[str]) -> None:
        """Remove the folder ``made`` and the empty folders below it (a create or a move that
        never arrived made them)."""
        if made is None:
            return
        parent, name = posixpath.split(made)
        with _existing_folder(root, parent) as folder:
            if folder is not None and _remove_empty_folders(folder, name):
                done.append(f"removed the empty folder {made}")

    def _done(self, result: WriteResult) -> WriteResult:
        """``result`` with what the recovery before it ran into; raises
        :class:`IndexNotUpdatedError` (carrying ``result``) when MEMORY.md was owed an update it
        did not get."""
        if self._recovery_problems:
            result = replace(result, warnings=(*self._recovery_problems, *result.warnings))
        if self._index_failure is not None:
            raise IndexNotUpdatedError(
                f"{self._index_failure}; the change to {result.path} itself was made, and the "
                "next write through memdir makes the index update it owes",
                path=result.path,
                result=result,
            )
        return result

    def _checked_root(self) -> Path:
        real = Path(os.path.realpath(self.root))
        if not real.is_dir():
            raise WriteError(f"the memory dir {self.root} does not exist")
        return real

    def _resolve(self, path: str, *, follow_leaf: bool = True) -> MemoryPath:
        return resolve_path(self._checked_root(), path, follow_leaf=follow_leaf)

    def _require_writable_name(self, target: MemoryPath, shown: str) -> None:
        if self.md_only and not target.rel.endswith(".md"):
            raise _unsafe(shown, "not-topic", "only memory files (*.md) may be written here")

    def _load(self, path: str) -> tuple[MemoryPath, str]:
        target = self._resolve(path)
        self._require_writable_name(target, path)
        if target.is_root:
            raise NotAFileError(f"{path} is a directory, not a file", path=path)
        return target, _read_text(target, path)

    def _commit(
        self,
        target: MemoryPath,
        shown: str,
        before: str,
        after: str,
        changed_line: int | None = None,
        *,
        maintain: bool = True,
    ) -> WriteResult:
        _checked_size(after, shown)
        if maintain and is_topic_path(target.rel) and has_frontmatter(before):
            after, inserted = stamp_modified(after, format_modified(self.clock()))
            if inserted is not None and changed_line is not None and inserted <= changed_line:
                changed_line += 1
            _checked_size(after, shown)
        if self.check is not None:
            self.check(target.rel, after)
        old = (
            _name_and_description(target.rel, before)
            if maintain and is_topic_path(target.rel)
            else None
        )
        reconciled: IndexOutcome | None = None
        if maintain and target.rel == C.INDEX_FILENAME and self.index_mode:
            # The agent's own line for a file memdir indexed replaces memdir's.
            after, dropped, gone = self._reconciled(after)
            if dropped:
                reconciled = IndexOutcome("edited", dropped=dropped)
                if changed_line is not None:
                    changed_line -= sum(1 for n in gone if n < changed_line)
        with self._intent(WriteIntent("write", target.rel, index=maintain, old=old)):
            try:
                _write_file(target, shown, after)
            except OSError as exc:
                raise _cannot(f"write {shown}", shown, exc) from exc
            change = FileChange("changed", target.rel, before=before, after=after)
            if not maintain:
                return WriteResult(target.rel, (change,), after, changed_line)
            extra, warnings, outcome = self._index_after_write(
                target.rel, old, after, created=False
            )
            return WriteResult(
                target.rel,
                (change, *extra),
                after,
                changed_line,
                warnings,
                index=reconciled or outcome,
            )

    # -- index maintenance (called with the lock held) ------------------------------------------

    def _index_text(self, warnings: list[str]) -> tuple[MemoryPath, str | None] | None:
        """MEMORY.md's location and text (None when missing), or None to leave it alone."""
        try:
            target = resolve_path(self._checked_root(), C.INDEX_FILENAME)
        except UnsafePathError as exc:
            warnings.append(f"{C.INDEX_FILENAME} left alone: {exc.message}")
            return None
        if not os.path.lexists(target.path):
            return target, None
        try:
            return target, _read_text(target, C.INDEX_FILENAME)
        except WriteError as exc:
            warnings.append(f"{C.INDEX_FILENAME} left alone: {exc.message}")
            return None

    def _write_index(
        self, target: MemoryPath, before: str | None, after: str, warnings: list[str]
    ) -> tuple[FileChange, ...]:
        if after == before:
            return ()
        try:
            _write_file(target, C.INDEX_FILENAME, after)
        except (OSError, WriteError) as exc:
            # Not a choice (like an index left alone): the update is owed, and the operation's
            # journal stays so that the next writer makes it (see IndexNotUpdatedError).
            reason = exc.message if isinstance(exc, WriteError) else exc.strerror or str(exc)
            self._index_failure = f"{C.INDEX_FILENAME} could not be updated: {reason}"
            warnings.append(self._index_failure)
            return ()
        kind: ChangeKind = "created" if before is None else "changed"
        return (FileChange(kind, C.INDEX_FILENAME, before=before, after=after),)

    def _limit(self) -> int:
        return self.settings.index_line_limit if self.settings else C.INDEX_LINE_LIMIT

    def _line_for(self, rel: str, text: str) -> str:
        topic = parse_topic_text(text, Path(rel), rel)
        return generated_entry(topic.name, topic.description, rel, self._limit())

    def _not_maintained(self, rel: str) -> IndexOutcome | None:
        """The outcome of a write of ``rel`` when MEMORY.md is not kept (None: not a topic)."""
        if not is_topic_path(rel):
            return None
        mode = self.settings.recall_mode if self.settings else "index"
        return IndexOutcome("not-maintained", reason=f"recall_mode = {mode}")

    def _frontmatter(self, rel: str) -> tuple[str | None, str | None] | None:
        """A topic file's name and description as on disk (None: it cannot be read)."""
        try:
            target = resolve_path(self._checked_root(), rel)
            topic = parse_topic_text(_read_text(target, rel), Path(rel), rel)
        except (WriteError, OSError):
            return None
        return topic.name, topic.description

    def _reconciled(
        self, text: str, index: Index | None = None
    ) -> tuple[str, tuple[DroppedLine, ...], frozenset[int]]:
        """``text`` (parsed: ``index``) without memdir's own lines for files another entry
        links too (see :func:`generated_duplicates`): the agent's or a person's words win. Also
        what was dropped, and the (0-based) lines that went."""
        parsed = index if index is not None else parse_index(text)
        found = generated_duplicates(parsed, self._frontmatter, self._limit())
        if not found:
            return text, (), frozenset()
        drop = {d.drop for d in found}
        kept = "\n".join(line for n, line in enumerate(text.split("\n")) if n not in drop)
        dropped = tuple(
            DroppedLine(d.path, d.keep + 1 - sum(1 for n in drop if n < d.keep)) for d in found
        )
        return kept, dropped, frozenset(drop)

    def reconcile_index(self) -> WriteResult:
        """Drop memdir's own index lines for files that another entry links too: after the agent
        added its line to MEMORY.md with a tool memdir is not in (Claude Code's Edit or Write,
        then ``memdir hook post-tool-use``). Nothing is written when nothing is to drop."""
        with self.locked():
            outcome = IndexOutcome("edited")
            warnings: list[str] = []
            loaded = self._index_text(warnings) if self.index_mode else None
            if loaded is None or loaded[1] is None:
                return self._done(WriteResult(C.INDEX_FILENAME, (), index=outcome))
            target, text = loaded[0], loaded[1]
            after, dropped, _ = self._reconciled(text)
            if not dropped:
                return self._done(WriteResult(C.INDEX_FILENAME, (), text, index=outcome))
            with self._intent(WriteIntent("write", C.INDEX_FILENAME, index=False)):
                changes = self._write_index(target, text, after, warnings)
            outcome = IndexOutcome("edited", dropped=dropped)
            result = WriteResult(
                C.INDEX_FILENAME, changes, after, warnings=tuple(warnings), index=outcome
            )
            return self._done(result)

    def _index_after_write(
        self, rel: str, old: tuple[str, str] | None, after: str, *, created: bool
    ) -> tuple[tuple[FileChange, ...], tuple[str, ...], IndexOutcome | None]:
        """Keep MEMORY.md in step with a write of the topic file ``rel``: add its line if it
        has none; rewrite its line when its name or description changed from ``old`` and the
        line is memdir's own (what memdir wrote for ``old``); never rewrite a line someone else
        wrote. Then drop memdir's lines that another entry duplicates (:meth:`_reconciled`)."""
        warnings: list[str] = []
        if not self.index_mode or not is_topic_path(rel):
            return (), (), self._not_maintained(rel)
        loaded = self._index_text(warnings)
        if loaded is None:
            reason = warnings[-1].removeprefix(f"{C.INDEX_FILENAME} left alone: ")
            return (), tuple(warnings), IndexOutcome("left-alone", reason=reason)
        index_path, original = loaded
        text = original or ""
        index = parse_index(text)
        limit = self._limit()
        topic = parse_topic_text(after, Path(rel), rel)
        name, description = topic.name, topic.description
        existing = entries_linking(index, rel)
        lines = text.split("\n")
        action: IndexAction
        if existing:
            now = [e for e in existing if is_generated(e, name, description, rel, limit)]
            before = (
                [e for e in existing if is_generated(e, old[0], old[1], rel, limit)]
                if old is not None
                else []
            )
            entry = (now or before or existing)[0]
            new = (name or "", description or "")
            if entry in now or created or old is None or new == old or not any(new):
                # Its line already says this, or a body-only edit, or a line someone wrote
                # for a file just created: nothing to rewrite.
                action, new_text = "unchanged", text
            elif entry in before:
                indent = entry.raw[: len(entry.raw) - len(entry.raw.lstrip())]
                lines[entry.line] = indent + generated_entry(
                    name, description, rel, limit, entry.bullet
                )
                action, new_text = "updated", "\n".join(lines)
            else:
                action, new_text = "kept", text
        else:
            action, new_text = "added", _append_line(index, self._line_for(rel, after))
        # An index left as it was is parsed once (a big one costs milliseconds a parse).
        final = index if new_text == text else parse_index(new_text)
        new_text, dropped, _ = self._reconciled(new_text, final)
        if dropped:
            final = parse_index(new_text)
        changes = self._write_index(index_path, original, new_text, warnings)
        linking = entries_linking(final, rel)
        if changes and rel in {e.path for e in final.cut_entries}:
            warnings.append(
                f"{C.INDEX_FILENAME} is past its load cap: the line for {rel} is not loaded"
            )
        line = linking[0].line + 1 if linking else None
        return changes, tuple(warnings), IndexOutcome(action, line, dropped=dropped)

    def _index_remove(
        self, rel: str, *, is_dir: bool, warnings: list[str]
    ) -> tuple[FileChange, ...]:
        if not self.index_mode or rel == C.INDEX_FILENAME:
            return ()
        loaded = self._index_text(warnings)
        if loaded is None:
            return ()
        index_path, text = loaded
        if text is None:
            return ()
        index = parse_index(text)
        drop = {e.line for e in entries_linking(index, rel, folder=is_dir)}
        if not drop:
            return ()
        new_text = "\n".join(line for n, line in enumerate(text.split("\n")) if n not in drop)
        return self._write_index(index_path, text, new_text, warnings)

    def _index_rename(
        self, old: str, new: str, *, is_dir: bool, warnings: list[str]
    ) -> tuple[FileChange, ...]:
        """Point the entries of ``old`` at ``new`` (title and hook kept), or add one for ``new``."""
        if not self.index_mode or C.INDEX_FILENAME in (old, new):
            return ()
        loaded = self._index_text(warnings)
        if loaded is None:
            return ()
        index_path, original = loaded
        text = original or ""
        index = parse_index(text)
        # The links of topic files are the editor's to update (it shows the edits first).
        relinked = rename_edits(index, (), old, new)
        if relinked:
            new_text = apply_text_edits(text, relinked)
        elif entries_linking(index, new, folder=is_dir):
            return ()  # linked already (a rename finished by the next writer, say)
        elif not is_dir and is_topic_path(new):
            try:
                content = _read_text(resolve_path(self._checked_root(), new), new)
            except WriteError as exc:
                warnings.append(f"{new} not added to {C.INDEX_FILENAME}: {exc.message}")
                return ()
            new_text = _append_line(index, self._line_for(new, content))
        else:
            return ()
        return self._write_index(index_path, original, new_text, warnings)


def _append_line(index: Index, line: str) -> str:
    """The index text with ``line`` where every new entry goes (see :func:`entry_insertion`)."""
    return apply_text_edits(index.text, [entry_insertion(index, line)])
