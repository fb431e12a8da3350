"""Why a memory was, or was not, selected by a recall: ``memdir recall --explain FILE``.

The explanation reruns nothing by its own rules: the lexical numbers come from
:func:`memdir.recall.lexical.select_lexical` over exactly the files the selector was offered, so a
score or a threshold here is the one the selection used. The suggestion ("add these words of the
question to the description") is checked the same way: the description is edited in memory and
the selection rerun, and only a wording that would be selected is reported as sufficient.
The text is rendered here once; the CLI prints it and the VS Code preview shows it.
"""

from __future__ import annotations

import os
import unicodedata
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Final, Literal

from memdir import constants as C
from memdir.agent.scan import ScanResult, excluded_entry
from memdir.agent.topic import with_bodies
from memdir.model import MemoryHeader

if TYPE_CHECKING:
    from memdir.recall.lexical import LexicalSelection, QueryConcept
    from memdir.recall.prefetch import RecallResult
    from memdir.recall.surface import Session

__all__ = [
    "Explanation",
    "ExplanationVerdict",
    "LexicalView",
    "explain_recall",
    "seen_before",
]

#: What happened to the file: ``surfaced`` (injected), ``selected`` (chosen, then left out on the
#: way), ``not-selected``, ``seen`` (surfaced or read earlier in the session), ``not-a-candidate``
#: (not in the manifest), ``not-triggered`` (the recall did not run).
ExplanationVerdict = Literal[
    "surfaced", "selected", "not-selected", "seen", "not-a-candidate", "not-triggered"
]

#: A query concept weighing less than this (a request word, a lone Han character) is never
#: suggested: it decides little either way.
_CONTENT_WEIGHT: Final = 0.5
#: At most this many words are tried one by one when shortening a suggestion.
_MAX_SUGGESTED: Final = 8


@dataclass(frozen=True)
class LexicalView:
    """The lexical selector's numbers for one file, over the files the selector was offered."""

    #: Normalised score (0.0: it matched nothing).
    score: float
    #: The lowest score any file could be selected with for this question.
    threshold: float
    #: 1-based rank among the files scoring above 0 (null: it scored 0).
    rank: int | None
    #: The query's concepts it matched, as typed (``部署→deploy`` when by a translation).
    matched: tuple[str, ...]
    #: Those of ``matched`` found only in the head of its body: the agent's own selector, which
    #: reads names and descriptions, does not see them.
    in_body: tuple[str, ...]
    #: The query's content words it lacks, as typed: neither its name, description, path nor
    #: the head of its body holds them (or a translation of them).
    missing: tuple[str, ...]
    #: Why the lexical selector left it out, or null when it selected it.
    cut: str | None
    #: The recently-used-tools rule dropped it (a tool's plain usage doc).
    dropped_by_tools: bool
    #: Exactly the numbers of the selection (true), or a hint beside a model's choice (false).
    exact: bool


@dataclass(frozen=True)
class Explanation:
    """Why one file was, or was not, selected by a recall."""

    #: The file as asked, relative to the memory dir when it lies inside.
    path: str
    #: ``surfaced``; ``selected`` (then left out on the way); ``not-selected``; ``seen``
    #: (the session had seen it); ``not-a-candidate`` (not in the manifest); ``not-triggered``.
    verdict: ExplanationVerdict
    #: One sentence: what happened and the reason that decided it.
    reason: str
    #: The lexical view (null when the file was never scored: not a candidate, seen).
    lexical: LexicalView | None
    #: The file has a ``description`` (the selector chooses by descriptions).
    has_description: bool
    #: Words of the question to add to its ``description`` to make it findable for it.
    suggestion: tuple[str, ...]
    #: The suggestion was tried: with these words the lexical selector selects the file.
    suggestion_selects: bool
    #: The whole explanation, as the CLI prints it and the VS Code preview shows it.
    lines: tuple[str, ...]


def seen_before(session: Session, scanned: ScanResult, result: RecallResult) -> dict[str, str]:
    """The candidates ``session`` had seen before the recall ``result``, with the reason, by
    path: computed after it, so what it surfaced itself does not count."""
    # The recall's own rule, so the two never disagree on what the session had seen.
    from memdir.recall.prefetch import seen_reason

    now = _surfaced_keys(result)
    seen: dict[str, str] = {}
    for header in scanned.candidates:
        if os.path.realpath(header.path) in now:
            continue
        reason = seen_reason(session, header.path)
        if reason:
            seen[header.rel_path] = reason
    return seen


def explain_recall(
    result: RecallResult,
    scanned: ScanResult,
    paths: Sequence[str],
    *,
    recent_tools: Sequence[str] = (),
    seen: Mapping[str, str] | None = None,
    limit: int = C.SELECT_MAX_FILES,
) -> tuple[Explanation, ...]:
    """Explain each of ``paths`` (relative to the memory dir, or absolute) for a finished recall.

    ``scanned`` is the directory's scan (the recall's own candidates, as a fresh scan gives
    them); ``seen`` the candidates the session had seen before the recall (:func:`seen_before`),
    which the selector was not offered.
    """
    from memdir.recall.select import normalize_tools

    seen = dict(seen or {})
    tools = normalize_tools(recent_tools)
    offered = with_bodies([h for h in scanned.candidates if h.rel_path not in seen])
    context = _Context(result, scanned, offered, tools, seen, limit)
    return tuple(context.explain(path) for path in paths)


def _surfaced_keys(result: RecallResult) -> set[str]:
    # By real path, as the session keys files: a surfaced memory's rel_path follows the spelling
    # of the directory it was given.
    return {os.path.realpath(m.path) for m in result.surfaced}


def _relative(root: Path, path: str) -> str | None:
    """``path`` relative to the memory dir, ``/``-separated; None when it lies outside."""
    from memdir.containment import rel_path

    try:
        return rel_path(root, path)
    except ValueError:
        return None


class _Context:
    """One recall's state, shared by the explanations of its files."""

    def __init__(
        self,
        result: RecallResult,
        scanned: ScanResult,
        offered: list[MemoryHeader],
        tools: tuple[str, ...],
        seen: dict[str, str],
        limit: int,
    ) -> None:
        from memdir.recall.lexical import explain_query, select_lexical

        self.result = result
        self.scanned = scanned
        self.offered = offered
        self.tools = tools
        self.seen = seen
        self.limit = limit
        self.by_path = {h.rel_path: h for h in scanned.candidates}
        self.concepts = explain_query(result.query) if result.query.strip() else []
        self.lexical_exact = result.triggered and result.selector == "lexical"
        self.surfaced = _surfaced_keys(result)
        self.selection = select_lexical(result.query, offered, tools, limit)
        self._unlimited: LexicalSelection | None = None
        self._manifest_terms: dict[str, tuple[str, ...]] | None = None

    def unlimited(self) -> LexicalSelection:
        """The lexical selection without the top-``limit`` cap: who else cleared the cuts."""
        from memdir.recall.lexical import select_lexical

        if self._unlimited is None:
            self._unlimited = select_lexical(
                self.result.query, self.offered, self.tools, max(len(self.offered), 1)
            )
        return self._unlimited

    def manifest_terms(self) -> dict[str, tuple[str, ...]]:
        """What each file matches without its body: the words the agent's selector could see."""
        from memdir.recall.lexical import select_lexical

        if self._manifest_terms is None:
            bare = [replace(h, body="") for h in self.offered]
            selection = select_lexical(self.result.query, bare, self.tools, self.limit)
            self._manifest_terms = {m.rel_path: m.matched_terms for m in selection.considered}
        return self._manifest_terms

    # --- one file ----------------------------------------------------------------------------
    def explain(self, asked: str) -> Explanation:
        path = _relative(self.scanned.root, asked)
        if not path:
            where = "outside the memory dir" if path is None else "the memory dir itself"
            reason = f"not a candidate: {where}"
            return self._finish(asked, "not-a-candidate", reason, None, False, (), False)
        header = self.by_path.get(path)
        if header is None:
            return self._not_a_candidate(path)
        has_description = bool((header.description or "").strip())
        if path in self.seen:
            if path in self.result.selected:  # a model shown seen files chose it again
                reason = f"selected, then left out: {self.seen[path]}"
                return self._finish(path, "selected", reason, None, has_description, (), False)
            reason = f"not surfaced again: {self.seen[path]}"
            return self._finish(path, "seen", reason, None, has_description, (), False)
        view = self._lexical_view(header)
        verdict, reason = self._verdict(header, view)
        suggestion: tuple[str, ...] = ()
        selects = False
        if view is not None and verdict not in ("surfaced", "selected"):
            suggestion, selects = self._suggest(header, view)
        return self._finish(path, verdict, reason, view, has_description, suggestion, selects)

    def _verdict(
        self, header: MemoryHeader, view: LexicalView | None
    ) -> tuple[ExplanationVerdict, str]:
        result = self.result
        path = header.rel_path
        if not result.triggered:
            return "not-triggered", f"the recall did not run: {result.reason}"
        dropped = {d.rel_path: d for d in result.dropped if d.stage != "before-select"}
        model = _model_label(result)
        if os.path.realpath(header.path) in self.surfaced:
            if self.lexical_exact and view is not None:
                return "surfaced", f"selected and surfaced: {_score_line(view)}"
            return "surfaced", f"selected by {model} and surfaced"
        if path in result.selected:
            why = dropped[path].reason if path in dropped else "not surfaced"
            return "selected", f"selected, then left out: {why}"
        if not self.lexical_exact:
            return "not-selected", f"not chosen by {model}"
        if view is None or view.cut is None:  # cannot happen: the same selection, rerun
            return "not-selected", "not selected"
        return "not-selected", f"not selected: {view.cut}"

    def _lexical_view(self, header: MemoryHeader) -> LexicalView:
        from memdir.recall.lexical import BODY_ONLY_CONCEPTS, MAX_WORD_MATCHES, RELATIVE_CUT

        selection = self.selection
        path = header.rel_path
        ranked = [m.rel_path for m in selection.considered]
        match = next((m for m in selection.considered if m.rel_path == path), None)
        score = match.score if match else 0.0
        matched = tuple(match.matched_terms) if match else ()
        seen_words = {t.partition("→")[0] for t in self.manifest_terms().get(path, ())}
        in_body = tuple(t for t in matched if t.partition("→")[0] not in seen_words)
        missing = self._missing(matched)
        cut: str | None = None
        if match is None:
            cut = "it matched none of the question's words (score 0.00 < threshold "
            cut += f"{selection.threshold:.2f})"
        elif match.dropped_reason:
            cut = f"dropped by the recently-used-tools rule ({match.dropped_reason})"
        elif any(m.rel_path == path for m in selection.selected):
            cut = None
        elif score < selection.threshold:
            cut = f"score {score:.2f} is below the threshold {selection.threshold:.2f}"
        elif path in selection.body_only:
            cut = (
                f"score {score:.2f} clears the threshold {selection.threshold:.2f}, but it "
                f"matches the question only in its body, on fewer than {BODY_ONLY_CONCEPTS} of "
                "its words"
            )
        elif path in selection.crowded:
            cut = (
                f"score {score:.2f} clears the cuts, but so do more than {MAX_WORD_MATCHES} "
                f"files: a question matching that many selects only its best"
            )
        elif any(m.rel_path == path for m in self.unlimited().selected):
            cut = (
                f"score {score:.2f} clears the threshold {selection.threshold:.2f}, but "
                f"{len(selection.selected)} better files fill the top {self.limit}"
            )
        else:
            kept = [m for m in selection.considered if m.dropped_reason is None]
            best = kept[0].score if kept else 0.0
            needed = max(selection.min_score, RELATIVE_CUT * best)
            cut = (
                f"score {score:.2f} clears the threshold {selection.threshold:.2f}, but not the "
                f"relative cut: a file not matching the best file's main topic needs "
                f"{needed:.2f} ({RELATIVE_CUT:g} × the best score {best:.2f})"
            )
        rank = ranked.index(path) + 1 if path in ranked else None
        dropped = bool(match and match.dropped_reason)
        return LexicalView(
            score,
            selection.threshold,
            rank,
            matched,
            in_body,
            missing,
            cut,
            dropped,
            self.lexical_exact,
        )

    def _missing(self, matched: tuple[str, ...]) -> tuple[str, ...]:
        """The question's content concepts no matched term covers, as typed, Han bigrams of one
        phrase joined again (性能, 能测, 测试 -> 性能测试)."""
        concepts = self.concepts
        hit = [_covered(c, matched) for c in concepts]
        out: list[str] = []
        previous: QueryConcept | None = None
        for index, concept in enumerate(concepts):
            weak = concept.weight < _CONTENT_WEIGHT and not _is_han_gram(concept)
            # A number (PR 482, 90 days) is a value of the task: no description should hold it.
            if hit[index] or weak or concept.surface.isdigit():
                previous = None
                continue
            surface = concept.surface
            if _is_han_gram(concept):
                # A bigram spanning two matched words (能测 in 性能测试) is no word of its own.
                before = index > 0 and hit[index - 1] and _overlaps(concepts[index - 1], concept)
                after = (
                    index + 1 < len(concepts)
                    and hit[index + 1]
                    and _overlaps(concept, concepts[index + 1])
                )
                if before and after:
                    previous = None
                    continue
                if previous is not None and out and _overlaps(previous, concept):
                    out[-1] += surface[1:]
                    previous = concept
                    continue
                if concept.weight < _CONTENT_WEIGHT and len(surface) < 2:
                    previous = None
                    continue
                previous = concept
            else:
                previous = None
            out.append(surface)
        return tuple(dict.fromkeys(out))

    def _suggest(self, header: MemoryHeader, view: LexicalView) -> tuple[tuple[str, ...], bool]:
        """The question's missing words, shortened to those needed for the lexical selector to
        select the file (checked by rerunning it); all of them when even that is not enough."""
        words = list(view.missing[:_MAX_SUGGESTED])
        if not words or view.dropped_by_tools:
            return tuple(words), False
        if not self._selects_with(header, words):
            return tuple(words), False
        # Drop words from the end while the rest still selects it: the shortest such prefix.
        for size in range(1, len(words)):
            if self._selects_with(header, words[:size]):
                return tuple(words[:size]), True
        return tuple(words), True

    def _selects_with(self, header: MemoryHeader, words: Sequence[str]) -> bool:
        from memdir.recall.lexical import select_lexical

        edited = replace(header, description=_with_words(header.description, words))
        offered = [edited if h.rel_path == header.rel_path else h for h in self.offered]
        selection = select_lexical(self.result.query, offered, self.tools, self.limit)
        return any(m.rel_path == header.rel_path for m in selection.selected)

    # --- not in the manifest -------------------------------------------------------------------
    def _not_a_candidate(self, path: str) -> Explanation:
        reason = f"not a candidate: {_why_not_candidate(path, self.scanned)}"
        return self._finish(path, "not-a-candidate", reason, None, False, (), False)

    # --- text ------------------------------------------------------------------------------------
    def _finish(
        self,
        path: str,
        verdict: ExplanationVerdict,
        reason: str,
        view: LexicalView | None,
        has_description: bool,
        suggestion: tuple[str, ...],
        selects: bool,
    ) -> Explanation:
        lines = [f"{path}: {reason}"]
        if view is not None:
            if view.exact:
                lead = "lexical"
            elif self.result.triggered:
                lead = "lexical view (a hint only: the model chose)"
            else:
                lead = "lexical view (a hint only: had the recall run)"
            lines.append(f"  {lead}: {_score_line(view)}")
            if not view.exact and view.cut:
                lines.append(f"  lexical would leave it out: {view.cut}")
            if view.matched:
                lines.append(f"  matched: {', '.join(view.matched)}")
            if view.in_body:
                lines.append(
                    f"  only in its body: {', '.join(view.in_body)} (the agent's own selector "
                    "reads names and descriptions, not bodies)"
                )
            if view.missing:
                lines.append(f"  lacks: {', '.join(view.missing)}")
        if verdict != "not-a-candidate" and not has_description:
            lines.append(
                "  it has no description: the selector chooses by descriptions (the model sees "
                "only its path), so write one saying what it is about"
            )
        if suggestion:
            words = ", ".join(f'"{w}"' for w in suggestion)
            if selects:
                them = "it" if len(suggestion) == 1 else "them"
                lines.append(
                    f"  suggestion: add {words} to its description; with {them} the lexical "
                    "selector selects it for this question"
                )
            else:
                lines.append(
                    f"  suggestion: add {words} to its description (not enough alone for this "
                    "question: other files match it better)"
                )
        elif view is not None and view.dropped_by_tools:
            lines.append(
                "  if it is a warning, gotcha or known issue, say so in its description: those "
                "stay selected while the tool is in use"
            )
        return Explanation(
            path, verdict, reason, view, has_description, suggestion, selects, tuple(lines)
        )


def _score_line(view: LexicalView) -> str:
    relation = "≥" if view.score >= view.threshold else "<"
    rank = f", rank {view.rank}" if view.rank is not None else ""
    return f"score {view.score:.2f} {relation} threshold {view.threshold:.2f}{rank}"


def _model_label(result: RecallResult) -> str:
    name = result.selector or "the selector"
    return f"the {name} selector" + (f" ({result.model})" if result.model else "")


def _is_han(char: str) -> bool:
    return unicodedata.category(char) == "Lo" and "CJK" in unicodedata.name(char, "")


def _is_han_gram(concept: QueryConcept) -> bool:
    """A bigram (or lone character) cut from a Han run, not a vocabulary word."""
    surface = concept.surface
    return (
        len(surface) <= 2
        and all(_is_han(ch) for ch in surface)
        and len(concept.alternatives) == 1
        and concept.alternatives[0][0].surface == surface
    )


def _overlaps(first: QueryConcept, second: QueryConcept) -> bool:
    a, b = first.surface, second.surface
    return len(a) == 2 and len(b) == 2 and a[1] == b[0]


def _covered(concept: QueryConcept, matched: Sequence[str]) -> bool:
    """Whether a matched term (as :class:`~memdir.recall.lexical.LexicalMatch` shows them) is this
    concept: its surface, ``surface→alternative``, or a Han phrase joined from its bigrams."""
    surface = concept.surface
    for term in matched:
        typed = term.partition("→")[0]
        if typed == surface:
            return True
        if "→" not in term and _is_han_gram(concept) and len(surface) == 2 and surface in term:
            return True
    return False


def _with_words(description: str | None, words: Sequence[str]) -> str:
    text = (description or "").rstrip()
    return f"{text} {' '.join(words)}".strip()


def _why_not_candidate(path: str, scanned: ScanResult) -> str:
    """Why a path is not in the manifest, in the scan's own terms."""
    cut = {h.rel_path for h in scanned.cut_off}
    if path in cut:
        return (
            f"past the {C.SCAN_MAX_FILES} newest topic files: the scan never offers it "
            "(edit it, or prune older memories)"
        )
    for skipped in scanned.skipped:
        if skipped.rel_path == path:
            return f"the scan skipped it ({skipped.reason})"
    parts = path.split("/")
    if parts[-1] == C.INDEX_FILENAME:
        return f"{C.INDEX_FILENAME} is the index (path A loads it), never a recall candidate"
    for depth, part in enumerate(parts):
        if excluded_entry(part, top_level=depth == 0):
            return f"the scan leaves out {'/'.join(parts[: depth + 1])!r} (and what is under it)"
    if not parts[-1].endswith(".md"):
        return "not a memory: the scan reads only *.md topic files"
    target = scanned.root.joinpath(*parts)
    if not target.exists():
        return "no such file in the memory dir"
    if not target.is_file():
        return "not a regular file"
    return "not among the scan's topic files"
