"""How much of one text another says again, in runs of words (MEM111's near-duplicate bodies,
MEM127's memories repeating the project's instructions).

A text is read as its set of *shingles*: every run of
:data:`~memdir.constants.DUPLICATE_SHINGLE_WORDS` words in a row, lowercased (a CJK character
is a word: those scripts write no spaces), each kept as a CRC-32 so that a summary holds
integers, the same in every process. Markdown punctuation, list markers and line breaks do not
count: a memory pasted into a bullet list is still the same memory.
"""

from __future__ import annotations

import re
import zlib
from array import array
from collections.abc import Mapping

from memdir import constants as C

#: Words read per text: a memory is a few hundred; this bounds a pasted log.
MAX_WORDS = 20_000
#: A shingle in more bodies than this is boilerplate (a shared footer), not evidence.
MAX_POSTINGS = 16
_WORD = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]|[^\W_]+")


def shingles(text: str) -> frozenset[int]:
    """The shingles of ``text`` (see the module)."""
    words = [w.lower() for w in _WORD.findall(text)[:MAX_WORDS]]
    size = C.DUPLICATE_SHINGLE_WORDS
    return frozenset(
        zlib.crc32("\x1f".join(words[i : i + size]).encode("utf-8", "surrogatepass"))
        for i in range(len(words) - size + 1)
    )


def pack(found: frozenset[int]) -> bytes:
    """``found`` as a summary keeps it: 4 bytes a shingle (a frozenset of ints takes some 60, which
    at 20,000 files was 150 MB of the language server's memory)."""
    return array("I", sorted(found)).tobytes()


def unpack(packed: bytes) -> frozenset[int]:
    """The shingles :func:`pack` kept."""
    found = array("I")
    found.frombytes(packed)
    return frozenset(found)


def contained(part: frozenset[int], whole: frozenset[int]) -> float:
    """The share of ``part``'s shingles that ``whole`` has too (0 for an empty ``part``)."""
    return len(part & whole) / len(part) if part else 0.0


def duplicate_pairs(bodies: Mapping[str, frozenset[int]]) -> list[tuple[str, str, float]]:
    """(copy, keep, share) for each pair of bodies where at least
    :data:`~memdir.constants.DUPLICATE_BODY_SHARE` of the smaller one's shingles (at least
    :data:`~memdir.constants.DUPLICATE_BODY_MIN_SHINGLES` of them) are in the other: the copy is
    the smaller body (ties: the later path), the one to keep the larger. Candidates come from
    an inverted index of shingles (those in more than :data:`MAX_POSTINGS` bodies skipped), so
    a directory of unrelated memories costs one pass."""
    postings: dict[int, list[str]] = {}
    for rel in sorted(bodies):
        if len(bodies[rel]) >= C.DUPLICATE_BODY_MIN_SHINGLES:
            for shingle in bodies[rel]:
                postings.setdefault(shingle, []).append(rel)
    shared: dict[tuple[str, str], int] = {}
    for rels in postings.values():
        if len(rels) < 2 or len(rels) > MAX_POSTINGS:
            continue
        for i, a in enumerate(rels):
            for b in rels[i + 1 :]:
                shared[(a, b)] = shared.get((a, b), 0) + 1
    pairs: list[tuple[str, str, float]] = []
    for (a, b), count in sorted(shared.items()):
        size_a, size_b = len(bodies[a]), len(bodies[b])
        copy, keep = (a, b) if size_a < size_b else (b, a)
        share = count / min(size_a, size_b)
        if share >= C.DUPLICATE_BODY_SHARE:
            pairs.append((copy, keep, share))
    return pairs
