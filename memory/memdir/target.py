"""Which agent behaviour memdir reproduces, like ruff's target-version.

The written spec (``seed``) documents an older agent; each Claude Code release the fidelity
harness (``tests/fidelity``, ``scripts/agent-diff.sh``) has checked is a target of its own. Only
differences a user can observe are switches here, and each switch is read in exactly one place in
the core (named beside it), so supporting a new release is one entry in :data:`TARGETS`.
docs/agent-fidelity.md lists every difference with its evidence.
"""

from __future__ import annotations

from dataclasses import dataclass

from memdir import constants as C


@dataclass(frozen=True)
class Target:
    name: str
    #: Path A's warning line also says how many lines were cut and where the cut starts
    #: (read in :func:`memdir.agent.index.load_cap`).
    cut_detail: bool
    #: Path A's text has control and format characters removed, line breaks unified and
    #: injection-prone tag openers neutralised (read in :func:`memdir.agent.index.load_cap`).
    sanitize_index: bool
    #: The shared, checked-in ``.claude/settings.json`` can move the memory dir and switch it
    #: off like the user's own settings (read in :func:`memdir.agent.paths.settings_files`; where it
    #: is off, :func:`memdir.agent.paths.locate_memory_dir` notes the value it ignored); the spec
    #: says to distrust it.
    shared_settings_place_memory: bool
    #: MEMORY.md files larger than this many bytes are not injected at all; None: no such limit
    #: (read in :func:`memdir.agent.index.parse_index`).
    index_max_file_bytes: int | None
    #: A project path whose slug is over 200 UTF-16 units gets its directory name's hash
    #: computed (Java's String.hashCode, base 36); else it is found by prefix only, as the spec
    #: says the hash differs between runtimes (read in
    #: :func:`memdir.agent.paths.locate_memory_dir`).
    slug_hash_computed: bool
    # --- path B (docs/selector.md) ---
    #: The selector is a conversation: its prompt as a cached system block, the manifest as the
    #: first message, then ``Select memories relevant to:`` per query; no ``Query:`` line and no
    #: recently-used-tools line or rule. Else the spec's one ``Query: …`` message
    #: (read in :func:`memdir.recall.select.build_request`).
    selector_conversation: bool
    #: ``max_tokens`` of the selector request (read in :func:`memdir.recall.select.build_request`).
    selector_max_tokens: int
    #: The answer schema lists the manifest's paths as an ``enum``
    #: (read in :func:`memdir.recall.select.output_schema`).
    selector_enum: bool
    #: The answer is deduplicated and cut to 5 as it is parsed; else repeats are kept (a
    #: repeated name surfaces twice) and the 5 are counted after seen files are dropped
    #: (read in :func:`memdir.recall.select.parse_answer`).
    selector_answer_deduped: bool
    #: Files already surfaced or read are left out of the manifest; else the manifest lists
    #: every candidate and they are dropped after selection only
    #: (read in :func:`memdir.recall.prefetch.prefetch`).
    manifest_excludes_seen: bool
    #: The header says the memory's age: ``Memory (saved 3 days ago): <path>:``; else
    #: ``Memory: <path>:`` (read in :func:`memdir.recall.surface.memory_header`).
    header_says_age: bool
    #: The staleness note comes before the header (``<note>\n\nMemory: …``); else on the line
    #: after it (read in :func:`memdir.recall.surface.render_block`).
    staleness_before_header: bool
    #: The first surfaced memory is preceded by :data:`memdir.constants.RELEVANT_MEMORIES_INTRO`
    #: (read in :func:`memdir.recall.surface.render_attachment`).
    attachment_intro: bool
    #: The attachment is the agent's system message (memories joined by a newline); else each
    #: memory is wrapped in ``<system-reminder>``
    #: (read in :func:`memdir.recall.surface.render_attachment`).
    attachment_system_message: bool
    #: The truncation note says ``first 200 lines`` / ``4096 byte limit``; else ``over 200
    #: lines`` / ``over 4096 bytes`` (read in :func:`memdir.recall.surface.truncation_reason`).
    truncation_names_limit: bool
    #: The session budget counts UTF-16 code units of the content with its truncation note;
    #: else UTF-8 bytes of the content alone (read in :func:`memdir.recall.surface.surface_file`).
    budget_utf16_with_note: bool
    #: The budget is checked once, when a prefetch starts: a turn admits up to 5 files however
    #: much they cost; else admitting stops as soon as it is spent
    #: (read in :meth:`memdir.recall.surface.Session.take_turn`).
    budget_checked_at_trigger: bool


SEED = Target(
    "seed",
    cut_detail=False,
    sanitize_index=False,
    shared_settings_place_memory=False,
    index_max_file_bytes=None,
    slug_hash_computed=False,
    selector_conversation=False,
    selector_max_tokens=C.SELECT_MAX_TOKENS,
    selector_enum=True,
    selector_answer_deduped=True,
    manifest_excludes_seen=True,
    header_says_age=True,
    staleness_before_header=False,
    attachment_intro=False,
    attachment_system_message=False,
    truncation_names_limit=False,
    budget_utf16_with_note=False,
    budget_checked_at_trigger=False,
)
CLAUDE_CODE_2_1_328 = Target(
    "claude-code-2.1.328",
    cut_detail=True,
    sanitize_index=True,
    shared_settings_place_memory=True,
    index_max_file_bytes=C.INDEX_MAX_READ_BYTES,
    slug_hash_computed=True,
    selector_conversation=True,
    selector_max_tokens=C.SELECT_MAX_TOKENS_CONVERSATION,
    selector_enum=False,
    selector_answer_deduped=False,
    manifest_excludes_seen=False,
    header_says_age=False,
    staleness_before_header=True,
    attachment_intro=True,
    attachment_system_message=True,
    truncation_names_limit=True,
    budget_utf16_with_note=True,
    budget_checked_at_trigger=True,
)

#: Every target, by the name settings and ``--target`` use.
TARGETS: dict[str, Target] = {t.name: t for t in (SEED, CLAUDE_CODE_2_1_328)}
#: The newest Claude Code release the fidelity harness has verified.
DEFAULT_TARGET = CLAUDE_CODE_2_1_328
#: The release the fidelity harness pins (tests/fidelity; scripts/install-claude-code.sh reads
#: it from this line).
VERIFIED_AGENT_VERSION = "2.1.328"


def get_target(name: str) -> Target:
    """The target called ``name``; ValueError naming the known ones otherwise."""
    try:
        return TARGETS[name]
    except KeyError:
        known = ", ".join(sorted(TARGETS))
        raise ValueError(f"unknown target {name!r}; known targets: {known}") from None
