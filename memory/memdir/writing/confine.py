"""Confinement: a path names something inside the memory dir, or is refused before anything is
touched (:func:`resolve_path`; the spec's section 10). The checks on the characters and the
length of a path, on names one file system would take for another (:func:`_check_new_names`),
and on symlinks leading out, decided by :func:`memdir.containment.relative_inside` on the
resolved path."""

from __future__ import annotations

import os
import posixpath
import re
import unicodedata
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from memdir.agent.paths import name_key, unportable_name
from memdir.containment import relative_inside
from memdir.writing.results import UnsafePathError

#: Names longer than this are refused, so that every file system's 255-byte limit leaves room
#: for the other names memdir puts beside a file.
MAX_NAME_BYTES: Final = 240
#: Whole relative paths longer than this are refused (PATH_MAX is 4096 with the dir in front).
MAX_PATH_BYTES: Final = 1024

_PERCENT_ESCAPE = re.compile(r"%[0-9A-Fa-f]{2}")
#: Characters that look like ``/`` or ``\`` but that NFKC leaves alone; anything whose NFKC form
#: contains ``/``, ``\`` or ``.`` (fullwidth solidus, one-dot leader, ...) is refused as well.
_SLASH_LOOKALIKES: Final = frozenset(
    "\u2215\u2044\u29f8\u29f9\u29f5\u2216\u2571\u2572\u0337\u0338\u20e5\u2cf9\u2cfa"
)
_BIDI_CONTROLS: Final = frozenset(
    "\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
)


# --- paths -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class MemoryPath:
    """A checked location inside a memory dir."""

    #: The memory dir, fully resolved.
    root: Path
    #: ``/``-separated path relative to ``root``; empty for the root itself.
    rel: str
    #: ``root / rel``: no symlink left in it except possibly the last component (see
    #: ``follow_leaf`` of :func:`resolve_path`).
    path: Path

    @property
    def is_root(self) -> bool:
        return self.rel == ""

    @property
    def folder(self) -> str:
        """The folder holding it, relative to ``root`` ("" for the top)."""
        return posixpath.dirname(self.rel)

    @property
    def name(self) -> str:
        return posixpath.basename(self.rel)


def _unsafe(path: str, reason: str, why: str) -> UnsafePathError:
    return UnsafePathError(f"refusing path {path!r}: {why}", path=path, reason=reason, detail=why)


def _check_characters(path: str) -> None:
    if "\x00" in path:
        raise _unsafe(path, "nul", "it contains a NUL byte")
    if any(unicodedata.category(ch) in ("Cc", "Cs") or ch in _BIDI_CONTROLS for ch in path):
        # Bidi overrides make a name display as another ("evil\u202edm.txt" shows as "evil
        # txt.md"); lone surrogates cannot even be encoded as a file name.
        raise _unsafe(path, "control", "it contains control or bidirectional-override characters")
    if "\\" in path:
        raise _unsafe(path, "backslash", "backslashes are not allowed; separate folders with /")
    if _PERCENT_ESCAPE.search(path):
        # Decoding is how %2e%2e becomes ".." in some other tool; refusing every escape (not just
        # the dangerous ones) also covers double encoding like %252e%252e.
        raise _unsafe(path, "encoded", "percent-encoded characters are not allowed")
    for ch in path:
        if ch.isascii():
            continue
        folded = unicodedata.normalize("NFKC", ch)
        if ch in _SLASH_LOOKALIKES or any(c in folded for c in "/\\."):
            name = unicodedata.name(ch, f"U+{ord(ch):04X}")
            raise _unsafe(
                path,
                "lookalike",
                f"{name.lower()} looks like a path separator or a dot; use plain ASCII",
            )


def _check_new_names(root: Path, rel: str, shown: str, *, renaming: str | None = None) -> None:
    """Refuse the names a create or a rename would add to the memory dir (``rel``, checked by
    :func:`resolve_path`) when they would not be the same files everywhere: a name that a
    case-insensitive or normalising file system (macOS, Windows) takes for a sibling's (``A.md``
    beside ``a.md``, the NFD ``é.md`` beside the NFC one; a case-only rename of ``renaming`` is
    fine), or one :func:`memdir.agent.paths.unportable_name` refuses (invisible characters, Windows
    device names, a trailing dot or space). Names that exist already are left alone."""
    folder, new = root, False
    done: list[str] = []
    for part in rel.split("/"):
        if not new:
            try:
                siblings = os.listdir(folder)
            except (FileNotFoundError, NotADirectoryError):
                siblings = []
            if part not in siblings:
                new, key = True, name_key(part)
                for other in sorted(siblings):
                    if name_key(other) == key and posixpath.join(*done, other) != renaming:
                        raise _unsafe(
                            shown,
                            "collides",
                            f"{part!r} and {other!r}, which exists, are one name on macOS and "
                            "Windows (which ignore case and Unicode normalisation): there one "
                            "would replace the other",
                        )
        if new and (problem := unportable_name(part)):
            raise _unsafe(shown, "unportable", f"{part!r} is no portable name: {problem}")
        folder = folder / part
        done.append(part)


def split_path(path: str) -> list[str]:
    """The checked, non-empty segments of a relative path (``.`` segments dropped)."""
    _check_characters(path)
    if path.startswith("~"):
        raise _unsafe(path, "home", "home-relative paths (~) are not allowed")
    parts = [p for p in path.split("/") if p not in ("", ".")]
    if ".." in parts:
        raise _unsafe(path, "traversal", "`..` is not allowed in memory paths")
    for part in parts:
        if part.startswith("."):
            raise _unsafe(
                path, "hidden", f"names starting with '.' are reserved for memdir ({part})"
            )
        if len(part.encode("utf-8")) > MAX_NAME_BYTES:
            raise _unsafe(path, "too-long", f"a name is longer than {MAX_NAME_BYTES} bytes")
    if len("/".join(parts).encode("utf-8")) > MAX_PATH_BYTES:
        raise _unsafe(path, "too-long", f"the path is longer than {MAX_PATH_BYTES} bytes")
    return parts


def resolve_path(root: Path, path: str, *, follow_leaf: bool = True) -> MemoryPath:
    """Check ``path`` (relative to ``root``, or absolute inside it) and locate it in ``root``.

    With ``follow_leaf`` a symlink in the last component is resolved (it must stay inside);
    without it the link itself is the target, which is what delete and rename act on.
    Raises :class:`UnsafePathError` for anything that is not plainly inside ``root``.
    """
    if not isinstance(path, str):
        raise UnsafePathError("a path must be a string", path=None, reason="empty")
    real_root = Path(os.path.realpath(root))
    _check_characters(path)
    relative = path
    if path.startswith("/"):
        # Absolute paths are fine when they name something in this memory dir, whichever
        # spelling (as given, or with symlinks resolved) of the dir they start with.
        inside = relative_inside(root, posixpath.normpath(path), follow_links=False)
        if inside is None:
            raise _unsafe(path, "absolute", f"it is outside the memory dir {root}")
        relative = inside or "."
        if ".." in path.split("/"):
            raise _unsafe(path, "traversal", "`..` is not allowed in memory paths")
    parts = split_path(relative)
    lexical = real_root.joinpath(*parts)
    # The one confinement check, on the resolved path: every folder on the way and the leaf
    # itself (even where the link, not its target, is acted on) must stay inside.
    resolved = relative_inside(real_root, lexical, follow_links=True)
    if resolved is None:
        raise _unsafe(path, "symlink", "a symlink in it leads outside the memory dir")
    if follow_leaf or not parts:
        rel = resolved
    else:
        parent = relative_inside(real_root, lexical.parent, follow_links=True)
        if parent is None:
            raise _unsafe(path, "symlink", "a symlink in it leads outside the memory dir")
        rel = posixpath.join(parent, parts[-1])
    target = real_root / rel if rel else real_root
    if any(part.startswith(".") for part in rel.split("/") if part):
        # A link inside the dir may point at the lock or a temp file; never write those.
        raise _unsafe(path, "hidden", "it resolves to a name reserved for memdir")
    return MemoryPath(real_root, rel, target)
