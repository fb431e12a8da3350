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
    #: (read in :func:`memdir.index.load_cap`).
    cut_detail: bool
    #: Path A's text has control and format characters removed, line breaks unified and
    #: injection-prone tag openers neutralised (read in :func:`memdir.index.load_cap`).
    sanitize_index: bool
    #: The shared, checked-in ``.claude/settings.json`` can move the memory dir and switch it
    #: off like the user's own settings (read in :func:`memdir.paths.settings_files` and
    #: :func:`memdir.paths.locate_memory_dir`); the spec says to distrust it.
    shared_settings_place_memory: bool
    #: MEMORY.md files larger than this many bytes are not injected at all; None: no such limit
    #: (read in :func:`memdir.index.parse_index`).
    index_max_file_bytes: int | None
    #: A project path whose slug is over 200 UTF-16 units gets its directory name's hash
    #: computed (Java's String.hashCode, base 36); else it is found by prefix only, as the spec
    #: says the hash differs between runtimes (read in :func:`memdir.paths.locate_memory_dir`).
    slug_hash_computed: bool


SEED = Target(
    "seed",
    cut_detail=False,
    sanitize_index=False,
    shared_settings_place_memory=False,
    index_max_file_bytes=None,
    slug_hash_computed=False,
)
CLAUDE_CODE_2_1_328 = Target(
    "claude-code-2.1.328",
    cut_detail=True,
    sanitize_index=True,
    shared_settings_place_memory=True,
    index_max_file_bytes=C.INDEX_MAX_READ_BYTES,
    slug_hash_computed=True,
)

#: Every target, by the name settings and ``--target`` use.
TARGETS: dict[str, Target] = {t.name: t for t in (SEED, CLAUDE_CODE_2_1_328)}
#: The newest Claude Code release the fidelity harness has verified.
DEFAULT_TARGET = CLAUDE_CODE_2_1_328
#: The release the fidelity harness pins (scripts/install-claude-code.sh installs it).
VERIFIED_AGENT_VERSION = "2.1.328"


def get_target(name: str) -> Target:
    """The target called ``name``; ValueError naming the known ones otherwise."""
    try:
        return TARGETS[name]
    except KeyError:
        known = ", ".join(sorted(TARGETS))
        raise ValueError(f"unknown target {name!r}; known targets: {known}") from None
