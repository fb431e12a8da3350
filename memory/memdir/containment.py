"""Is this path inside the memory dir: the one answer (:func:`relative_inside`), which textio's
readers, the writer's :func:`~memdir.writing.confine.resolve_path`, its journal check and the fix
planner all ask. Pure path arithmetic over the file system's answers, below everything else."""

from __future__ import annotations

import os
from pathlib import Path


def is_within(path: Path, root: Path) -> bool:
    """True when ``path`` (already resolved) is ``root`` or lies below it."""
    try:
        path.relative_to(root)
    except ValueError:
        return False
    return True


def relative_inside(root: Path, path: Path | str, *, follow_links: bool = True) -> str | None:
    """``path`` as a ``/``-separated path inside the memory dir ``root`` ("" for ``root``
    itself), or None when it is outside: the one answer to "is this inside the memory dir".

    A relative ``path`` is relative to ``root``. With ``follow_links`` (the default, for anything
    that reads or writes) symlinks are resolved, so a link leading out of the dir is outside.
    Without it the path is taken as written, under either spelling of ``root`` (as given or
    resolved): that names an editor's or a scan's path without touching the disk for it.
    """
    candidate = Path(path)
    if not candidate.is_absolute():
        candidate = root / candidate
    absolute = Path(os.path.abspath(candidate))
    real_root = Path(os.path.realpath(root))
    if follow_links:
        bases = [(Path(os.path.realpath(absolute)), real_root)]
    else:
        bases = [(absolute, Path(os.path.abspath(root))), (absolute, real_root)]
    for location, base in bases:
        if is_within(location, base):
            rel = location.relative_to(base).as_posix()
            return "" if rel == "." else rel
    return None


def rel_path(root: Path, path: Path | str) -> str:
    """``path`` named relative to the memory dir ``root``: as written when it lies there, else
    with symlinks followed (an editor's or a scan's other spelling); ValueError outside it."""
    for follow_links in (False, True):
        rel = relative_inside(root, path, follow_links=follow_links)
        if rel is not None:
            return rel
    raise ValueError(f"{path} is not inside the memory dir {root}")
