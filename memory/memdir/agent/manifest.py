"""The manifest the selector sees: one line per candidate, nothing of the bodies.

``- [project] release-merge-freeze.md (2026-07-15T09:12:00.000Z): <description>`` (spec section
6.3): the ``[type] `` part is left out when there is no valid type, and ``: description`` when
there is no description. A vague description here is why a memory is never chosen.
"""

from __future__ import annotations

import datetime as dt
import math
from collections.abc import Iterable

from memdir.model import MemoryHeader


def iso_mtime(mtime: float) -> str:
    """UTC ISO 8601 with milliseconds, as JavaScript's ``Date.prototype.toISOString``."""
    millis = math.floor(mtime * 1000)
    stamp = dt.datetime.fromtimestamp(millis / 1000, tz=dt.UTC)
    return stamp.strftime("%Y-%m-%dT%H:%M:%S.") + f"{millis % 1000:03d}Z"


def manifest_line(header: MemoryHeader) -> str:
    tag = f"[{header.type}] " if header.type else ""
    line = f"- {tag}{header.rel_path} ({iso_mtime(header.mtime)})"
    return f"{line}: {header.description}" if header.description else line


def format_manifest(headers: Iterable[MemoryHeader]) -> str:
    return "\n".join(manifest_line(h) for h in headers)
