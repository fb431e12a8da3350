"""Descriptions as the selector reads them (MEM109, MEM131), and near-identical ones (for
MEM111).

The selector of path B chooses memories from their one-line descriptions alone, never the body:
a description must say what the memory covers and when it applies, and two memories must not
read alike.
"""

from __future__ import annotations

import functools
import itertools
import math
import posixpath
import re
from collections import Counter
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING

from memdir import constants as C
from memdir.agent.topic import comment_cut
from memdir.lint.diagnostic import Diagnostic
from memdir.lint.rules.base import Rule, TopicView, field_span

if TYPE_CHECKING:
    from memdir.lint.engine import LintContext

#: Tokens in more descriptions than this are not used to find candidates (see
#: :func:`near_duplicate_pairs`).
DUPLICATE_MAX_POSTINGS = 16

_WORD = re.compile(r"[^\W_]+")
_GENERIC_WORDS = frozenset(
    (
        *("note", "notes", "misc", "miscellaneous", "stuff", "things", "thing", "todo", "todos"),
        *("info", "information", "memory", "memories", "general", "various", "random", "tbd"),
        *("important", "remember", "preferences", "preference", "user", "project", "feedback"),
        *("reference", "details", "detail", "context", "background", "summary", "update"),
        *("updates", "file", "see", "n", "a", "na", "wip", "temp", "tmp", "draft", "test"),
    )
)
_STOP_WORDS = frozenset(
    (
        *("the", "a", "an", "and", "or", "of", "to", "for", "in", "on", "at", "by", "with"),
        *("about", "from", "is", "are", "this", "that", "these", "some", "my", "our", "your"),
    )
)


#: East Asian Wide and Fullwidth characters (CJK, kana, hangul, fullwidth forms): each one
#: takes two columns and carries about half a word. A character class, not a per-character
#: unicodedata call: it runs on every description.
_WIDE_CLASS = (
    "[\u1100-\u115f\u2e80-\u303e\u3041-\u33ff\u3400-\u4dbf\u4e00-\u9fff\ua000-\ua4cf"
    "\uac00-\ud7a3\uf900-\ufaff\ufe30-\ufe4f\uff00-\uff60\uffe0-\uffe6"
    "\U00020000-\U0003fffd]"
)


@functools.cache
def _wide() -> re.Pattern[str]:
    # Compiled on first use: the class takes milliseconds to compile, ASCII-only dirs never need it.
    return re.compile(_WIDE_CLASS)


#: Where the wide class can match at all: U+1100-U+115F and from U+2E80 on. (Written as the
#: complement: the positive range up to U+10FFFF takes milliseconds to compile.)
_MAYBE_WIDE = re.compile("[^\x00-\u10ff\u1160-\u2e7f]")


def _wide_count(text: str) -> int:
    # Text without such a character (ASCII plus dashes, quotes, accents) has no wide one, and
    # needs no compiled class.
    if text.isascii() or _MAYBE_WIDE.search(text) is None:
        return 0
    return len(_wide().findall(text))


def description_words(text: str) -> tuple[str, ...]:
    """The lowercased words of a description (MEM109 and MEM111 read it in words)."""
    return tuple(_WORD.findall(text.lower()))


#: Scripts written without spaces between words that are not East Asian wide: Thai, Lao,
#: Myanmar, Khmer. A run of them is a phrase, not a word.
_UNSPACED = re.compile("[\u0e00-\u0eff\u1000-\u109f\u1780-\u17ff]")
#: Letters (vowel and tone marks left out) of a word in those scripts, on average.
_UNSPACED_LETTERS_PER_WORD = 4


def _informative_words(description: str) -> float:
    """How many words a description says, in any script: a word of letters counts one, two East
    Asian wide characters (written without spaces) count one, and so do
    :data:`_UNSPACED_LETTERS_PER_WORD` letters of Thai, Lao, Myanmar or Khmer.

    Combining marks are left out first: Python's word pattern splits a Thai, Hindi or Arabic word
    at each vowel sign, which would count its pieces as words.
    """
    if description.isascii():
        return float(len(_WORD.findall(description)))  # nearly every description: a word each
    import unicodedata  # only for descriptions beyond ASCII

    # Each distinct character judged once (a description repeats few of them).
    marks = {ord(c): None for c in set(description) if unicodedata.category(c).startswith("M")}
    bare = description.translate(marks) if marks else description
    total = 0.0
    for word in _WORD.findall(bare):
        wide = _wide_count(word)
        unspaced = len(_UNSPACED.findall(word)) if _UNSPACED.search(word) else 0
        rest = len(word) - wide - unspaced
        total += wide / 2 + unspaced / _UNSPACED_LETTERS_PER_WORD + (1 if rest else 0)
    return total


def description_problem(description: str, name: str | None, rel_path: str) -> str | None:
    """Why a description is too vague for the selector (MEM109), or None."""
    if "\n" in description:
        return "it spans several lines, but the manifest gives each memory one line"
    words = description_words(description)
    ascii_only = description.isascii()
    informative = len(words) if ascii_only else _informative_words(description)
    if informative < C.DESCRIPTION_MIN_WORDS:
        return "too short to say what the memory covers or when it applies"
    # all() stops at the first specific word: cheap for every real description (and most
    # start with one, which is tested before any generator is made).
    first = words[0] if words else ""
    if (first in _GENERIC_WORDS or first in _STOP_WORDS or first.isdigit()) and all(
        w in _GENERIC_WORDS or w in _STOP_WORDS or w.isdigit() for w in words
    ):
        return "too generic: it names a kind of memory, not what this one says"
    normal = " ".join(words)
    # Normalising cannot lengthen a label, so a description longer than the name and the path
    # cannot repeat either: the common case, decided before any path is taken apart.
    if len(normal) > len(rel_path) and (not name or len(normal) > len(name)):
        return None
    stem = posixpath.splitext(posixpath.basename(rel_path))[0]
    for label in (name, stem):
        if label and len(normal) <= len(label) and normal == " ".join(_WORD.findall(label.lower())):
            return "it only repeats the file's name"
    return None


def length_problem(description: str) -> str | None:
    """Why a description is too long for the manifest line (MEM131), or None."""
    length = len(description)
    if length <= C.DESCRIPTION_MAX_CHARS:
        return None
    return (
        f"{length} characters long, more than {C.DESCRIPTION_MAX_CHARS}: the selector reads "
        "every memory's line at once, so a long one crowds the others"
    )


def _vague_description(view: TopicView, ctx: LintContext) -> list[Diagnostic]:
    topic = view.topic
    if not (topic.description and view.fields_readable):
        return []
    if "#" in topic.text and comment_cut(topic, "description") is not None:
        return []  # MEM124 says why it reads so little
    reason = description_problem(topic.description, topic.name, topic.rel_path)
    if reason is None:
        return []
    return [
        ctx.diag(
            "MEM109",
            topic.path,
            topic.rel_path,
            field_span(topic, "description"),
            f"vague description: {reason}. The selector chooses memories from their one-line "
            "descriptions alone, never the body; say what this memory covers and when it "
            "applies",
        )
    ]


MEM109 = Rule(
    code="MEM109",
    auto_memory_only="the description is what the prefetch's selector reads",
    name="vague-description",
    severity="warning",
    scope="topic",
    summary="The description is too short (fewer than "
    f"{C.DESCRIPTION_MIN_WORDS} words, in any script: two Chinese, Japanese or Korean characters "
    "count as a word), too generic (only words like *notes*, *misc*, *preferences*, or the file "
    "name again) or multi-line. A description cut short by a ` #` is [MEM124](MEM124.md)'s, "
    f"one longer than {C.DESCRIPTION_MAX_CHARS} characters [MEM131](MEM131.md)'s.",
    why="The selector chooses memories from their one-line descriptions alone; a vague one "
    "is never chosen.",
    example="`description: notes`",
    remedy="Say what the memory covers and when it applies, in one line.",
    topic=_vague_description,
)


def _long_description(view: TopicView, ctx: LintContext) -> list[Diagnostic]:
    topic = view.topic
    if not (topic.description and view.fields_readable) or "\n" in topic.description:
        return []  # a description of several lines is MEM109's
    if "#" in topic.text and comment_cut(topic, "description") is not None:
        return []  # MEM124 says why it reads what it does
    reason = length_problem(topic.description)
    if reason is None:
        return []
    return [
        ctx.diag(
            "MEM131",
            topic.path,
            topic.rel_path,
            field_span(topic, "description"),
            f"long description: {reason}. Keep the line to what this memory covers and when "
            "it applies; the detail belongs in the body",
        )
    ]


MEM131 = Rule(
    code="MEM131",
    auto_memory_only="the description is what the prefetch's selector reads",
    name="long-description",
    severity="info",
    scope="topic",
    summary=f"The description is longer than {C.DESCRIPTION_MAX_CHARS} characters.",
    why="The selector reads every memory's description at once to choose up to five; a long "
    "line costs every choice and often carries the memory's content rather than what it "
    "covers.",
    example="`description: The billing export moved to the new queue in March; it retries "
    "three times, writes a dead-letter file after that, and the on-call lead reads it…`",
    remedy="Say what the memory covers and when it applies in one short line; move the "
    "detail into the body.",
    preview=True,
    precision="106 of 117 judged findings right (91%) on the 554 real memory dirs of the "
    "samples (2026-12): lines of 260-400 characters summarising what a research note covers "
    "(nine of them in one directory) are specific, not the memory's content",
    topic=_long_description,
)

RULES = (MEM109, MEM131)


# --- near-identical descriptions (MEM111 reads them) ---------------------------------------------


def _tokens(words: Iterable[str], ascii_only: bool = False) -> frozenset[str]:
    """Content words; runs of a script written without spaces become character bigrams.

    ``ascii_only`` (the words come from an ASCII text) skips the search for such runs.
    """
    if ascii_only:
        return frozenset(words).difference(_STOP_WORDS)
    tokens = set(words)
    tokens -= _STOP_WORDS
    for word in [w for w in tokens if len(w) > 1 and not w.isascii() and _wide().search(w)]:
        tokens.discard(word)
        tokens.update(word[i : i + 2] for i in range(len(word) - 1))
    return frozenset(tokens)


def description_tokens(text: str) -> frozenset[str]:
    """A description's distinct tokens, as :func:`near_duplicate_pairs` compares them."""
    words = description_words(text)
    # (The words of "a — b" are ASCII though the text is not: test the words.)
    return _tokens(words, all(map(str.isascii, words)))


def near_duplicate_pairs(descriptions: Mapping[str, str]) -> list[tuple[str, str, float]]:
    """Pairs of files whose descriptions are near-identical, with their similarity.

    Near-identical: both have at least :data:`~memdir.constants.DESCRIPTION_MIN_WORDS` content
    words, the tokens overlap by at least :data:`~memdir.constants.DUPLICATE_JACCARD` (Jaccard)
    and difflib's ratio of the normalised texts is at least
    :data:`~memdir.constants.DUPLICATE_RATIO`. Prefix
    filtering finds the candidates without comparing every pair: with each token set ordered
    rarest first, two sets that similar always share one of their first few tokens, so only
    those first tokens are indexed and probed. Tokens in more than
    :data:`DUPLICATE_MAX_POSTINGS` descriptions are too common to tell anything apart and are
    not probed, which bounds the work on directories of near-templated descriptions.
    """
    tokens: dict[str, frozenset[str]] = {}
    for rel, text in descriptions.items():
        prepared = description_tokens(text)
        # "notes" twice is two vague descriptions (MEM109), not one memory saved twice.
        if len(prepared) >= C.DESCRIPTION_MIN_WORDS:
            tokens[rel] = prepared
    frequency = Counter(itertools.chain.from_iterable(tokens.values()))
    # One global order, rarest first (ties by text), as prefix filtering requires. Tokens are
    # replaced by their rank, which also orders each description's tokens.
    order = sorted(frequency, key=lambda token: (frequency[token], token))
    rank = {t: i for i, t in enumerate(order)}
    # Tokens of one description only (numbers, names) rank first and can pair it with nothing:
    # they are neither indexed nor probed.
    unique = sum(1 for count in frequency.values() if count == 1)
    postings: dict[int, list[str]] = {}
    sizes: dict[str, int] = {}
    pairs: list[tuple[str, str, float]] = []
    threshold = C.DUPLICATE_JACCARD
    for rel in sorted(tokens):
        mine = tokens[rel]
        size = sizes[rel] = len(mine)
        ordered = sorted(map(rank.__getitem__, mine))
        keep = size - math.ceil(threshold * size) + 1
        if ordered[keep - 1] < unique:
            continue  # its whole prefix is its own
        candidates: set[str] = set()
        for token in ordered[:keep]:
            if token < unique:
                continue
            posting = postings.get(token)
            if posting is None:
                postings[token] = [rel]
            elif len(posting) <= DUPLICATE_MAX_POSTINGS:
                # (A longer posting is never probed again: it is not extended either.)
                candidates.update(posting)
                posting.append(rel)
        if not candidates:
            continue
        matched: list[str] = []
        for other in candidates:
            theirs = sizes[other]
            # Jaccard >= t needs the sizes within a factor t of each other: a free filter.
            if min(size, theirs) < threshold * max(size, theirs):
                continue
            shared = len(mine & tokens[other])
            if shared >= threshold * (size + theirs - shared):
                matched.append(other)
        for other in sorted(matched):
            import difflib  # reached only by token-similar pairs: rare

            matcher = difflib.SequenceMatcher(
                None, _normal(descriptions[other]), _normal(descriptions[rel]), autojunk=False
            )
            # (The bound from the lengths alone first: it is never below quick_ratio.)
            if matcher.real_quick_ratio() < C.DUPLICATE_RATIO or matcher.quick_ratio() < (
                C.DUPLICATE_RATIO
            ):
                continue
            ratio = matcher.ratio()
            if ratio >= C.DUPLICATE_RATIO:
                pairs.append((other, rel, ratio))
    return pairs


def _normal(text: str) -> str:
    """A description as difflib compares it: its words, lowercased, one space apart."""
    return " ".join(description_words(text))
