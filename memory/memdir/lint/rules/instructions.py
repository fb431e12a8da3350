"""A memory repeating the project's instructions (MEM127): CLAUDE.md and ``.claude/rules/`` are
loaded into every session already, so a memory saying the same is a second copy that the agent
reads twice and that goes stale when the instructions change. The memory system's own rule is
not to keep what instructions or CI already enforce.

The instruction files are those the agent loads for the project (the spec's instruction memory):
``CLAUDE.md``, ``CLAUDE.local.md``, ``.claude/CLAUDE.md`` and ``.claude/rules/**/*.md`` of the
project root, at most a hundred rule files and 512 KiB each (:mod:`memdir.agent.instructions`,
through :mod:`memdir.textio`: never through a symlink leading out of the project). They are read
only when the project is known (``memdir lint --project ROOT``, or the project of the
agent's own memory dir), and kept while their files do not change.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from memdir import constants as C
from memdir.agent.instructions import instruction_paths, read_instruction, stamp
from memdir.fixes import plan
from memdir.fixes.model import DeleteFile, Fix
from memdir.lint.diagnostic import Diagnostic
from memdir.lint.rules.base import DirectoryView, Rule
from memdir.lint.rules.overlap import contained, shingles, unpack

if TYPE_CHECKING:
    from memdir.lint.engine import LintContext


def instructions(root: Path) -> tuple[tuple[str, frozenset[int]], ...]:
    """(path, shingles) of each instruction file of the project at ``root``, read again when
    one of them changes."""
    paths = instruction_paths(root)
    return _read_instructions(root, tuple(stamp(root, rel) for rel in paths))


@functools.lru_cache(maxsize=8)
def _read_instructions(
    root: Path, stamps: tuple[tuple[str, int, int], ...]
) -> tuple[tuple[str, frozenset[int]], ...]:
    read: list[tuple[str, frozenset[int]]] = []
    for rel, _, _ in stamps:
        text = read_instruction(root, rel)  # None: a symlink leading out of the project, ...
        if text is not None:
            read.append((rel, shingles(text)))
    return tuple(read)


def _repeats_instructions(view: DirectoryView, ctx: LintContext) -> Iterator[Diagnostic]:
    if ctx.project is None:
        return
    loaded = instructions(ctx.project.root)
    if not loaded:
        return
    together = frozenset().union(*(found for _, found in loaded))
    for summary in view.usable:
        body = unpack(summary.body_shingles)
        if len(body) < C.DUPLICATE_BODY_MIN_SHINGLES:
            continue
        share = contained(body, together)
        if share < (
            C.INSTRUCTIONS_REPEAT_SHARE
            if summary.type == "feedback"
            else C.INSTRUCTIONS_REPEAT_SHARE_OTHER
        ):
            continue
        source = max(loaded, key=lambda item: (contained(body, item[1]), item[0]))[0]
        edits = tuple(
            plan.remove_entry(view.index, entry, "").edits[0]
            for entry in sorted(
                plan.entries_linking(view.index, summary.rel_path), key=lambda e: -e.line
            )
        )
        fix = Fix(
            f"Delete {summary.rel_path}: {source} already says it",
            edits,
            deletes=(DeleteFile(summary.path, summary.rel_path),),
        )
        yield ctx.diag(
            "MEM127",
            summary.path,
            summary.rel_path,
            summary.head_span,
            f"this memory repeats the project's instructions: {share:.0%} of its wording is "
            f"already in {source}, which the agent loads in every session; the copy is read "
            "twice and goes stale when the instructions change. Delete it, or keep only what "
            "the instructions do not say",
            fix,
        )


MEM127 = Rule(
    code="MEM127",
    name="repeats-instructions",
    severity="info",
    scope="directory",
    summary="A memory whose body repeats the project's instruction files: at least "
    f"{C.INSTRUCTIONS_REPEAT_SHARE:.0%} of a `feedback` memory's runs of "
    f"{C.DUPLICATE_SHINGLE_WORDS} words, {C.INSTRUCTIONS_REPEAT_SHARE_OTHER:.0%} of another "
    "memory's, are in `CLAUDE.md`, `CLAUDE.local.md`, `.claude/CLAUDE.md` or "
    "`.claude/rules/**/*.md` of the project (bodies of at least "
    f"{C.DUPLICATE_BODY_MIN_SHINGLES} runs; a CJK character counts as a word). A feedback "
    "memory is a rule, as the instructions are; a project, reference or user memory often "
    "shares only its background (the stack, an overview) with them. Checked only when the "
    "project is known: `memdir lint --project ROOT`, or the project of the agent's own memory "
    "dir (`memdir lint` with no directory).",
    why="The agent loads the instruction files in every session: a memory saying the same is "
    "read twice, costs context, and goes stale when the instructions change (and the memory "
    "system's own rule is not to keep what instructions or CI already enforce).",
    example="a feedback memory restating CLAUDE.md's `Run the test suite before every commit` "
    "section word for word",
    remedy="Delete the memory, or keep only what the instructions do not say. The editor offers "
    "to delete it and remove its MEMORY.md entry; `memdir lint --fix` does not (a person "
    "decides what to keep).",
    fixable="editor",
    preview=True,
    precision="57 of 58 judged findings right (98%) on the real memory dirs in Claude Code's "
    "format of the samples (2026-12), with the bar for memories other than feedback raised "
    "to 40% on those same findings (at 25% for every type: 91 of 106, 86%; a project or "
    "reference memory sharing its stack or overview with CLAUDE.md said more of its own): "
    "not yet measured on a set it was not tuned on",
    reads=frozenset({"files", "usable", "type", "head_span", "body_shingles", "index", "disk"}),
    directory=_repeats_instructions,
)

RULES = (MEM127,)
