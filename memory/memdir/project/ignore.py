"""Whether a project's ``.gitignore`` files ignore a path, for a project that is not a git
repository (an unpacked archive, a copy): :func:`ignored`. A cited path that git would ignore is
a build output, a cache or runtime data (``frontend/dist/``, ``cache/results.json``): it is
absent from a fresh checkout and present on the machine that builds or runs the project, so it
is not missing. In a git repository git answers itself (``git check-ignore``, see
:meth:`memdir.project.lookup.Project.ignored`).

Only the ``.gitignore`` files on the path's way down are read (the root's and each parent
directory's), each at most :data:`MAX_IGNORE_BYTES`, through :mod:`memdir.textio`. The patterns
follow gitignore(5): ``#`` comments, ``!`` negation, a trailing ``/`` for directories, a ``/``
at the start or in the middle anchoring the pattern to the file's directory, ``*``, ``?``,
``[...]`` and ``**``.
"""

from __future__ import annotations

import os
import re
from functools import lru_cache
from pathlib import Path

from memdir.textio import read_bytes

#: A ``.gitignore`` larger than this is read up to it: real ones are a few kilobytes.
MAX_IGNORE_BYTES = 256 * 1024
#: ``.gitignore`` files read per root and kept (a lint run asks about the same directories).
_CACHE_SIZE = 512


def _translate(glob: str) -> str:
    """The regular expression of one gitignore glob (no leading or trailing ``/``)."""
    out: list[str] = []
    i = 0
    while i < len(glob):
        c = glob[i]
        if glob.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif glob.startswith("/**", i) and i + 3 == len(glob):
            out.append("/.*")
            i += 3
        elif glob.startswith("**", i):
            out.append(".*")
            i += 2
        elif c == "*":
            out.append("[^/]*")
            i += 1
        elif c == "?":
            out.append("[^/]")
            i += 1
        elif c == "[":
            end = glob.find("]", i + 2)
            if end < 0:
                out.append(re.escape(c))
                i += 1
            else:
                body = glob[i + 1 : end]
                if body.startswith("!"):
                    body = "^" + body[1:]
                out.append(f"[{body}]")
                i = end + 1
        elif c == "\\" and i + 1 < len(glob):
            out.append(re.escape(glob[i + 1]))
            i += 2
        else:
            out.append(re.escape(c))
            i += 1
    return "".join(out)


#: One pattern: (regex over the path relative to the ``.gitignore``'s directory, negated,
#: directories only).
_Pattern = tuple["re.Pattern[str]", bool, bool]


def parse(text: str) -> list[_Pattern]:
    """The patterns of a ``.gitignore``'s text, in order."""
    patterns: list[_Pattern] = []
    for raw in text.splitlines():
        line = raw.rstrip()
        if not line or line.startswith("#"):
            continue
        negated = line.startswith("!")
        if negated or line.startswith("\\"):
            line = line[1:]
        dir_only = line.endswith("/")
        line = line.rstrip("/")
        if not line:
            continue
        anchored = "/" in line
        line = line.lstrip("/")
        regex = _translate(line)
        if not anchored:
            regex = "(?:.*/)?" + regex
        try:
            compiled = re.compile(regex + r"\Z", re.DOTALL)
        except re.error:
            continue  # a malformed class: git ignores the pattern too
        patterns.append((compiled, negated, dir_only))
    return patterns


def _patterns(directory: str) -> tuple[_Pattern, ...]:
    """The patterns of ``directory``'s ``.gitignore`` (none when it has none), read again when
    the file changes (a language server runs for days)."""
    path = os.path.join(directory, ".gitignore")
    try:
        stat = os.stat(path)
    except OSError:
        return ()
    return _read_patterns(path, stat.st_mtime_ns, stat.st_size)


@lru_cache(maxsize=_CACHE_SIZE)
def _read_patterns(path: str, mtime_ns: int, size: int) -> tuple[_Pattern, ...]:
    del mtime_ns, size  # the cache key: a changed file is read again
    try:
        data = read_bytes(path, MAX_IGNORE_BYTES, follow_links=False)  # never a link out
    except OSError:
        return ()
    return tuple(parse(data.decode("utf-8", "replace")))


def _decide(patterns: tuple[_Pattern, ...], rel: str, is_dir: bool) -> bool | None:
    """The last matching pattern's say on ``rel`` (relative to the patterns' directory): True
    ignored, False re-included, None no pattern matches."""
    verdict: bool | None = None
    for regex, negated, dir_only in patterns:
        if dir_only and not is_dir:
            continue
        if regex.match(rel):
            verdict = not negated
    return verdict


def ignored(root: Path, rel: str) -> bool:
    """Whether the ``.gitignore`` files of the project at ``root`` ignore ``rel`` (a
    ``/``-separated path, a trailing ``/`` for a directory) or a directory above it: git never
    looks inside an ignored directory, so nothing under one can be re-included. A missing path
    cited without an extension (``frontend/dist``) may be a directory, and is taken as one."""
    parts = rel.strip("/").split("/")
    is_dir = rel.endswith("/") or "." not in parts[-1]
    if not parts or any(part in ("", ".", "..") for part in parts):
        return False
    # Each prefix of the path, from the top: an ignored directory ignores all below it.
    for depth in range(1, len(parts) + 1):
        prefix = parts[:depth]
        prefix_is_dir = depth < len(parts) or is_dir
        verdict: bool | None = None
        for base in range(depth):
            directory = os.path.join(root, *parts[:base])
            said = _decide(_patterns(directory), "/".join(prefix[base:]), prefix_is_dir)
            if said is not None:
                verdict = said  # a deeper .gitignore wins over a shallower one
        if verdict:
            return True
    return False
