"""A memory directory as the server reads it: its files seen through the editor's buffers.

A memory directory is read the way the editor shows it: an open document's unsaved text wins
over the file on disk. Topic files read from disk are cached by (mtime, size), so navigation,
completion and symbols stay cheap on every keystroke without any invalidation bookkeeping.
What changes as the server runs (the lint state, the findings, the project) is the directory's
:class:`~memdir_lsp.session.Session`.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from pathlib import Path

from memdir import constants as C
from memdir.agent.index import Index, load_index, parse_index
from memdir.agent.scan import ScanResult, iter_topic_paths, scan
from memdir.agent.topic import load_topic, parse_topic_text
from memdir.config import Settings
from memdir.containment import rel_path, relative_inside
from memdir.model import TopicFile
from memdir.textio import not_read, outside, read_text

from memdir_lsp.session import Session

#: Git's files whose change means a commit, checkout or staging: the project is listed again.
GIT_STATE = (".git/index", ".git/HEAD")


class MemoryDirectory:
    """One memory directory known to the server."""

    def __init__(
        self,
        root: Path,
        origins: set[str],
        settings: Settings,
        text_of: Callable[[Path], str | None],
    ) -> None:
        self.root = root
        #: Why it is known: ``workspace``, ``agent``, ``setting``, ``opened``.
        self.origins = origins
        self.settings = settings
        self._text_of = text_of
        self._disk: dict[Path, tuple[tuple[int, int], TopicFile]] = {}
        self._lock = threading.Lock()
        #: The project whose memory this is (what MEM117/MEM118 check citations against), set
        #: by discovery; None: no project known, the citation rules stay silent.
        self.project_root: Path | None = None
        #: Why the server must not write here (the memory tool, extraction, file creation),
        #: set by the server from the origins and the workspace's trust; None: it may write.
        self.read_only: str | None = None
        #: Set by each check when the directory holds another agent's memory
        #: (:func:`memdir.agent.formats.notice`): nothing is checked, fixed or written here.
        self.notice: str | None = None
        #: Whether the client was told :attr:`notice` (once per directory).
        self.notice_shown = False
        #: The notice of a directory read by the project's instructions
        #: (:func:`memdir.agent.instructions.notice`) the client was last told; None: none.
        self.reading_notice: str | None = None
        #: What changes while the server runs: the lint state, findings, project, debounce.
        self.session = Session(self)

    @property
    def writable(self) -> bool:
        return self.read_only is None

    def write_refusal(self) -> str | None:
        """The error a write request gets here, naming what would allow it; None: allowed."""
        if self.read_only is not None:
            return f"{self.root} is read-only: {self.read_only}"
        # Asked now, not from the last check: a write may come before the first one.
        from memdir.agent.formats import declined

        notice = declined(self.root, self.settings.any_format)
        return None if notice is None else f"{self.root}: {notice}"

    def __repr__(self) -> str:
        return f"MemoryDirectory({str(self.root)!r}, origins={sorted(self.origins)})"

    def is_git_state(self, path: Path) -> bool:
        """``path`` is git's index or HEAD in the project root (see :data:`GIT_STATE`)."""
        if self.project_root is None:
            return False
        try:
            return rel_path(self.project_root, path) in GIT_STATE
        except ValueError:
            return False

    def project_path(self, path: Path) -> str | None:
        """``path`` relative to the project root when it is a project file the citation rules
        read: inside the root, outside this memory dir, in no directory a walk skips (``.git``,
        ``node_modules`` ...). None otherwise."""
        from memdir.project.listing import WALK_SKIP

        root = self.project_root
        if root is None or self.contains(path):
            return None
        try:
            rel = rel_path(root, path)
        except ValueError:
            return None
        parts = rel.split("/")
        if rel in ("", ".") or any(part in WALK_SKIP for part in parts):
            return None
        return rel

    # --- paths ------------------------------------------------------------------------------

    def contains(self, path: Path) -> bool:
        # Symlinked spellings of the same directory (/tmp vs /private/tmp) count too.
        try:
            rel_path(self.root, path)
        except ValueError:
            return False
        return True

    def rel(self, path: Path) -> str:
        return rel_path(self.root, path)

    def path_of(self, rel: str) -> Path:
        return self.root / rel

    @property
    def index_path(self) -> Path:
        return self.root / C.INDEX_FILENAME

    def is_index(self, path: Path) -> bool:
        return path.name == C.INDEX_FILENAME and path.parent == self.root

    def resolve_inside(self, name: str) -> Path | None:
        """A path named relative to the dir (or absolute); None when it leads outside it."""
        if "\x00" in name or not name.strip():
            return None
        candidate = Path(name)
        if not candidate.is_absolute():
            candidate = self.root / candidate
        if relative_inside(self.root, candidate) is None:
            return None
        return Path(os.path.abspath(candidate))

    # --- reading ----------------------------------------------------------------------------

    def text(self, path: Path) -> str | None:
        """The editor's text when open, else the file's; None when it does not exist or memdir
        does not read it (a symlink leading out of the dir, a FIFO: see :meth:`refusal`)."""
        if self.refusal(path) is not None:
            return None
        opened = self._text_of(path)
        if opened is not None:
            return opened
        result = read_text(path, keep_binary=True)
        return None if not_read(result.problems) else result.text

    def refusal(self, path: Path) -> str | None:
        """Why memdir does not read ``path`` even when an editor shows it (it resolves outside
        the memory dir: the one confinement check), else None."""
        problem = outside(path, self.root)
        return problem.message if problem is not None else None

    def text_of(self, path: Path) -> str | None:
        """The editor's unsaved text of ``path`` when it is open, else None."""
        return self._text_of(path)

    def index(self) -> Index:
        opened = self._text_of(self.index_path)
        if opened is not None and self.refusal(self.index_path) is None:
            return parse_index(opened, self.index_path, target=self.settings.agent_target)
        return load_index(self.root, self.settings.agent_target)

    def topic(self, path: Path) -> TopicFile | None:
        """The topic file as the editor shows it, else as read from disk; one memdir does not
        read (:func:`memdir.textio.not_read` names why) has no text."""
        opened = self._text_of(path)
        if opened is not None and self.refusal(path) is None:
            return parse_topic_text(opened, path, self.rel(path))
        try:
            stat = path.stat()
        except OSError:
            return None
        key = (stat.st_mtime_ns, stat.st_size)
        with self._lock:
            cached = self._disk.get(path)
        if cached is not None and cached[0] == key:
            return cached[1]
        topic = load_topic(path, self.root)
        with self._lock:
            self._disk[path] = (key, topic)
        return topic

    def topic_paths(self) -> list[Path]:
        return list(iter_topic_paths(self.root))

    def topics(self) -> list[TopicFile]:
        found = [t for t in (self.topic(p) for p in self.topic_paths()) if t is not None]
        with self._lock:
            live = {t.path for t in found}
            for stale in [p for p in self._disk if p not in live]:
                del self._disk[stale]
        return found

    def topic_names(self) -> dict[str, list[TopicFile]]:
        """Topics by their ``name`` and by their file stem: how ``[[name]]`` links resolve."""
        names: dict[str, list[TopicFile]] = {}
        for topic in self.topics():
            keys = {Path(topic.rel_path).stem}
            if topic.name:
                keys.add(topic.name)
            for key in keys:
                names.setdefault(key, []).append(topic)
        return names

    def scan(self) -> ScanResult:
        return scan(self.root)
