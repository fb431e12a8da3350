"""The one line matcher (:func:`grep_lines`): the same code in this process and in the search's
child process (:mod:`memdir.search.worker`), so a search means the same thing whichever way it
runs."""

from __future__ import annotations

import re
from collections.abc import Iterator


def grep_lines(
    text: str, regex: re.Pattern[str], *, max_line_chars: int | None = None
) -> Iterator[tuple[int, int, str]]:
    """``(line, column, line text)`` of every line with a match.

    Runs ``regex`` in this process with no time limit: for trusted patterns (user patterns go
    through :func:`search_texts`). Lines are 0-based and split at ``\n`` only, as editors count
    them (a ``\r`` before it is dropped from the text).
    """
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()  # the end of the last line, not a line of its own
    for number, raw in enumerate(lines):
        line = raw[:-1] if raw.endswith("\r") else raw
        found = regex.search(line if max_line_chars is None else line[:max_line_chars])
        if found is not None:
            yield number, found.start(), line
