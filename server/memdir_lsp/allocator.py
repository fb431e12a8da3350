"""The C allocator's side of the server's memory (glibc on Linux; elsewhere these do nothing).

A long-running server of a big memory dir frees a lot behind what it keeps: the first check
reads every file and keeps only summaries and findings, and each edit of a big MEMORY.md makes
its text and lines anew. glibc keeps such freed memory in the process unless told otherwise.
"""

from __future__ import annotations

import ctypes
import sys

#: glibc's ``mallopt`` parameter for the size from which blocks get their own mapping.
M_MMAP_THRESHOLD = -3


def _libc() -> ctypes.CDLL | None:
    if not sys.platform.startswith("linux"):
        return None
    try:
        return ctypes.CDLL("libc.so.6")
    except OSError:  # another C library
        return None


def return_large_blocks() -> bool:
    """Give every block of 128 KiB or more its own mapping, returned to the system when freed.

    glibc raises that threshold to the largest block freed so far (up to 32 MiB), after which a
    big MEMORY.md's text, lines and joins, made anew on each edit, come from the heap and stay
    in the process behind what was allocated after them: 20 edits at 20,000 files added 20 MB.
    Fixing the threshold keeps them out of the heap. Linux with glibc only; False elsewhere.
    """
    libc = _libc()
    try:
        return libc is not None and bool(libc.mallopt(M_MMAP_THRESHOLD, 128 * 1024))
    except AttributeError:  # musl has no mallopt
        return False


def give_back_free_pages() -> bool:
    """Return the heap's free pages to the system, the ones between blocks still in use too;
    True when some were.

    After a directory's first check (the files' texts freed between the summaries kept) this
    lowers the resident size by a few MB; when nothing is free it costs microseconds.
    """
    libc = _libc()
    try:
        return libc is not None and bool(libc.malloc_trim(0))
    except AttributeError:  # musl has no malloc_trim
        return False
