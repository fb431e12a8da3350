"""MEM117's fix: a cited path that git shows was renamed, replaced by the path it is now.

The new path is written in the form the old one was cited: inside its backticks or its link
target (a ``#L10`` fragment after it stays), with its ``./``, its ``:12`` or ``#L10`` location and
a directory's trailing ``/``; a path cited by its tail (``lint/state.py``) becomes the same
number of trailing parts of the new path when those name one project path only.

Not safe: git's rename detection is a similarity guess (a file rewritten and moved may be
"renamed" to a file that only resembles it), so a person accepts it in the editor and ``memdir
lint --fix`` leaves it alone.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Literal

from memdir.agent.index import encode_target
from memdir.fixes.model import Fix, TextEdit
from memdir.model import Span

#: How a path is cited: in a code span, as a Markdown link's target, or bare in the prose.
Form = Literal["code", "link", "bare"]

#: A location after a cited path: ``:12``, ``:12:3``, ``#L10``, ``#L10-L20``.
LOCATION = re.compile(r"(?::\d+(?::\d+)?|#L\d+(?:-L?\d+)?)$")
#: What a bare path in prose may hold and still read as one path.
_PLAIN = re.compile(r"[A-Za-z0-9_.@+-][A-Za-z0-9_.@+/-]*")


def renamed_text(
    cited: str,
    new_path: str,
    form: Form,
    *,
    tail: bool = False,
    unique_tail: Callable[[str], bool] | None = None,
) -> str | None:
    """The text that replaces ``cited`` (the path as written) once it is ``new_path`` (a project
    path, ``/``-separated); None when the new path cannot be written in that form.

    ``tail``: ``cited`` names the path by its last parts; they become as many last parts of
    ``new_path`` when ``unique_tail`` says those name one project path, else the full path.
    """
    location = LOCATION.search(cited)
    suffix = location.group() if location is not None else ""
    path = cited[: len(cited) - len(suffix)]
    prefix = "./" if path.startswith("./") else ""
    path = path[len(prefix) :]
    slash = "/" if path.endswith("/") else ""
    new = new_path.strip("/")
    if tail:
        kept = len(path.rstrip("/").split("/"))
        parts = new.split("/")
        shorter = "/".join(parts[-kept:])
        if len(parts) > kept and unique_tail is not None and unique_tail(shorter):
            new = shorter
    text = f"{prefix}{new}{slash}"
    if form == "link":
        return encode_target(text) + suffix
    if form == "code":
        return None if "`" in text or "\n" in text else text + suffix
    if _PLAIN.fullmatch(text) is None:
        return None  # a bare path with spaces would read as several words
    return text + suffix


def replace_renamed_path(path: Path, rel_path: str, span: Span, cited: str, new_text: str) -> Fix:
    """Replace the path ``cited`` at ``span`` with ``new_text`` (from :func:`renamed_text`)."""
    edit = TextEdit(path, rel_path, span, new_text)
    return Fix(f"Replace `{cited}` with `{new_text}` (git shows it was renamed)", (edit,))
