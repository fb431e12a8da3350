"""Every number and fixed string of the memory system, in one place.

The values reproduce the agent's behaviour (see ``shared/spec/memory-system.md``); a directory
edited with memdir must behave the same once the agent loads it. Where a user could reasonably
want another value (the index line limit, the selector model) the configuration layer overrides
the default, never these names.
"""

from __future__ import annotations

from typing import Final

# --- location (spec section 2) ---------------------------------------------------------------
CONFIG_DIR_ENV: Final = "CLAUDE_CONFIG_DIR"
DEFAULT_CONFIG_DIRNAME: Final = ".claude"
PROJECTS_DIRNAME: Final = "projects"
MEMORY_DIRNAME: Final = "memory"
DISABLE_AUTO_MEMORY_ENV: Final = "CLAUDE_CODE_DISABLE_AUTO_MEMORY"
#: Simple mode (no memory, no CLAUDE.md) when set to a true value.
SIMPLE_MODE_ENV: Final = "CLAUDE_CODE_SIMPLE"
#: A memory dir named outright; it outranks every setting.
COWORK_MEMORY_DIR_ENV: Final = "CLAUDE_COWORK_MEMORY_PATH_OVERRIDE"
#: Replaces the config root under which ``projects/<slug>/memory`` is derived.
REMOTE_MEMORY_ROOT_ENV: Final = "CLAUDE_CODE_REMOTE_MEMORY_DIR"
AUTO_MEMORY_DIRECTORY_SETTING: Final = "autoMemoryDirectory"
AUTO_MEMORY_ENABLED_SETTING: Final = "autoMemoryEnabled"
#: A slug longer than this is cut and gets ``-<hash>`` appended by the agent's runtime.
MAX_SLUG_LENGTH: Final = 200
#: Managed ("policy") settings files, by platform; the first that exists is read.
POLICY_SETTINGS_PATHS: Final = (
    "/etc/claude-code/managed-settings.json",
    "/Library/Application Support/ClaudeCode/managed-settings.json",
    "C:\\Program Files\\ClaudeCode\\managed-settings.json",
)
#: Beside each policy file: drop-in ``*.json`` files, read in name order, each over the last.
POLICY_DROP_IN_DIRNAME: Final = "managed-settings.d"
SETTINGS_FILENAME: Final = "settings.json"
LOCAL_SETTINGS_FILENAME: Final = "settings.local.json"
#: Memory off, whatever else is set, when true (1/true/yes/on).
SAFE_MODE_ENV: Final = "CLAUDE_CODE_SAFE_MODE"
#: A remote session: memory off unless a remote or cowork memory dir is named.
REMOTE_SESSION_ENV: Final = "CLAUDE_CODE_REMOTE"
#: When true, local and shared project settings are untrusted and not read for memory.
IGNORE_TRUST_ENV: Final = "CLAUDE_CODE_IGNORE_PERSISTED_TRUST"
#: Names the project's directory under ``projects/`` when ``CLAUDE_CONFIG_DIR`` is set too.
PROJECT_DIR_NAME_ENV: Final = "CLAUDE_CODE_PROJECT_DIR_NAME"
PROJECT_DIR_NAME_PATTERN: Final = r"^[A-Za-z0-9_-]{1,64}$"
WINDOWS_RESERVED_NAME_PATTERN: Final = r"^(?:con|prn|aux|nul|com[0-9]|lpt[0-9])$"
#: A configured memory dir shorter than this (``/a``) is refused.
MIN_CONFIGURED_DIR_LENGTH: Final = 3
#: Environment values read as true and as false by the agent's switches (trimmed, any case).
ENV_TRUE_WORDS: Final = ("1", "true", "yes", "on")
ENV_FALSE_WORDS: Final = ("0", "false", "no", "off")

# --- the index, MEMORY.md (spec section 3) ---------------------------------------------------
INDEX_FILENAME: Final = "MEMORY.md"
#: Path A loads at most this many lines of the (stripped, trimmed) index ...
INDEX_MAX_LINES: Final = 200
#: ... and at most this many characters, counted in UTF-16 code units.
INDEX_MAX_CHARS: Final = 25_000
#: MEMORY.md is read up to this many bytes: the agent skips a larger one altogether.
INDEX_MAX_READ_BYTES: Final = 4 * 1024 * 1024
#: What the agent is told to aim for per index line.
INDEX_LINE_LIMIT: Final = 150
#: How far past the limit an index line may run before MEM001 reports it: the agent is told
#: "about 150 characters or less" (and, past the cap, "under ~200"), and on real indexes a line
#: up to 20 over mostly holds one short statement (docs/real-dirs.md).
INDEX_LINE_TOLERANCE: Final = 20
#: A note opening MEMORY.md of at most this many lines (how the index is kept, before the first
#: entry) is the index's own preamble, not memory content (MEM004).
INDEX_PREAMBLE_MAX_LINES: Final = 8
#: A note closing MEMORY.md, set off by ``---`` after the last entry (how to add a memory, a
#: "last updated" stamp), of at most this many lines is the index's own, not memory content.
INDEX_CLOSING_MAX_LINES: Final = 2 * INDEX_PREAMBLE_MAX_LINES
#: Folder names (their first word, case aside, a leading ``_`` or ``.`` aside: ``archive/``,
#: ``_archive_2025/``, ``old-notes/``) under which a memory dir keeps
#: files aside, not meant to be recalled: memories kept for history (``legacy/``, ``_archived/``,
#: ``retired/2026-05-prune/``), moved out of the index on purpose, drafts being written
#: (``drafts/``: a blog post, a note for people) and copies of Claude Code's own Markdown
#: config (``commands/``, ``skills/``, ``agents/``: slash commands, skills, subagents).
ASIDE_FOLDERS: Final = frozenset(
    {
        "drafts",
        "draft",
        "commands",
        "skills",
        "agents",
        "archive",
        "archives",
        "archived",
        "legacy",
        "old",
        "retired",
        "deprecated",
        "obsolete",
        "attic",
    }
)
#: The agent is told to rewrite an over-cap index under this many lines; memdir warns past it.
INDEX_REWRITE_TARGET_LINES: Final = 140
#: Share of INDEX_MAX_CHARS past which an index counts as "near the cap".
INDEX_NEAR_CAP_RATIO: Final = 0.9
INDEX_WARNING_TEMPLATE: Final = (
    "> WARNING: MEMORY.md is {reason}. Only part of it was loaded{detail}. "
    "Keep index entries to one line under ~200 chars; move detail into topic files."
)

# --- topic files (spec section 4) ------------------------------------------------------------
MEMORY_TYPES: Final = ("user", "feedback", "project", "reference")
FRONTMATTER_FIELDS: Final = ("name", "description", "type")
OPTIONAL_FRONTMATTER_FIELDS: Final = ("modified", "metadata")

# --- path B: scan, manifest, select, read (spec section 6) -----------------------------------
#: The scan reads only this many lines of each topic file to find the frontmatter.
SCAN_MAX_LINES: Final = 30
#: At most this many topic files, newest first, are candidates for selection.
SCAN_MAX_FILES: Final = 200
#: The selector may return at most this many files, and at most this many surface per turn.
SELECT_MAX_FILES: Final = 5
SELECT_MAX_TOKENS: Final = 256
#: Default selector model: Sonnet-class, like the agent; claude-haiku-4-5 is the cheap choice.
DEFAULT_SELECTOR_MODEL: Final = "claude-sonnet-5-5"
CHEAP_SELECTOR_MODEL: Final = "claude-haiku-4-5"
SELECT_TIMEOUT_SECONDS: Final = 10.0
#: Each surfaced file is cut at this many lines or bytes, whichever comes first.
SURFACE_MAX_LINES: Final = 200
SURFACE_MAX_BYTES: Final = 4096
#: Surfaced content per session before prefetch stops (reset by compaction).
SESSION_BUDGET_BYTES: Final = 60 * 1024
#: A memory older than this many days gets the staleness warning.
STALE_AFTER_DAYS: Final = 1
STALENESS_TEMPLATE: Final = (
    "This memory is {days} days old. Memories are point-in-time observations, not live state "
    "— claims about code behavior or file:line citations may be outdated. "
    "Verify against current code before asserting as fact."
)
TRUNCATION_NOTE_TEMPLATE: Final = (
    "> This memory file was truncated ({reason}). "
    "Use the Read tool to view the complete file at: {path}"
)
RELEVANT_MEMORIES_TAG: Final = "relevant_memories"
#: Claude Code 2.1.328's selector: 512 tokens of answer plus 2048 of thinking budget.
SELECT_MAX_TOKENS_CONVERSATION: Final = 512 + 2048
#: Its first selector message is this plus the manifest; each query turn is the second plus it.
SELECT_MANIFEST_PREFIX: Final = "Available memories:\n"
SELECT_QUERY_PREFIX: Final = "Select memories relevant to:\n"
#: A copied manifest tag in front of a selected name, which the agent strips.
SELECT_TYPE_PREFIX_PATTERN: Final = r"^\[(?:user|feedback|project|reference|account)\]\s+"
#: Before the first surfaced memory (2.1.328).
RELEVANT_MEMORIES_INTRO: Final = (
    "Retrieved for possible relevance — use only if it actually applies to what the user asked."
)
#: The truncation note's reason, as the spec's memdir wrote it and as 2.1.328 says it.
TRUNCATION_REASON_LINES: Final = "over {lines} lines"
TRUNCATION_REASON_BYTES: Final = "over {bytes} bytes"
TRUNCATION_REASON_LINES_LIMIT: Final = "first {lines} lines"
TRUNCATION_REASON_BYTES_LIMIT: Final = "{bytes} byte limit"
#: Top-level directories of the memory dir the scan never lists (compared NFC, any case,
#: trailing dots and spaces ignored); nor any path with a segment starting with ``.``.
SCAN_EXCLUDED_TOP_DIRS: Final = ("logs", "sessions", "proposals")

# --- lint: memdir's own thresholds for what the selector can use ------------------------------
#: MEM106 reports a file only when at least this share of its bytes is past the injection cut:
#: a file whose last bullet or two are cut is read whole once the agent follows the note (on
#: real directories every overshoot under 9% was judged not worth a finding, every one over 11%
#: worth it).
INJECTION_CUT_MIN_SHARE: Final = 0.10
#: A description longer than this (characters, in any script) is the memory's content, not a
#: line saying what it covers. The agent sets no limit; on real directories descriptions of up to
#: ~230 characters were specific one-line summaries and those past 280 were status dumps.
DESCRIPTION_MAX_CHARS: Final = 250
#: Fewer informative words than this (two CJK characters count as one word, see
#: memdir.lint.rules.descriptions) says too little.
DESCRIPTION_MIN_WORDS: Final = 4
#: Near-identical descriptions: at least this similar (difflib ratio of the normalised text) ...
DUPLICATE_RATIO: Final = 0.9
#: ... and share at least this much of their content words (Jaccard), checked first: cheap.
DUPLICATE_JACCARD: Final = 0.7
#: Two memories saying the same thing in their bodies: at least this share of the shorter body's
#: word runs (:data:`DUPLICATE_SHINGLE_WORDS` words in a row) is also in the other ...
DUPLICATE_BODY_SHARE: Final = 0.8
#: ... and the shorter body has at least this many word runs: short bodies share phrases by
#: chance ("see the project README").
DUPLICATE_BODY_MIN_SHINGLES: Final = 12
#: Words in a row compared by the body check (a CJK character counts as a word).
DUPLICATE_SHINGLE_WORDS: Final = 3
#: A feedback memory repeating the project's instructions (CLAUDE.md, .claude/rules/): at least
#: this share of its body's word runs is in them (and at least DUPLICATE_BODY_MIN_SHINGLES runs).
#: Memories restate an instruction in their own words around its key phrases: on the real
#: directories measured, the repeats shared 25-35% of their runs, unrelated memories under 23%.
INSTRUCTIONS_REPEAT_SHARE: Final = 0.25
#: ... for a memory of another type: a project, reference or user memory shares its background
#: (the stack, an overview) with CLAUDE.md and goes on with its own state or detail.
INSTRUCTIONS_REPEAT_SHARE_OTHER: Final = 0.40

# --- recall: memdir's own bounds on what it is given ----------------------------------------
#: A query (the user's prompt) longer than this reaches the trigger and the selector as its first
#: and last halves of this size: a 10 MB paste costs the lexical selector seconds and a model
#: selector its context, while the words that choose memories are in a few lines. The spec sets
#: no cap (section 6 sends the whole prompt); a real prompt is far below this.
QUERY_MAX_CHARS: Final = 20_000

# --- one agent session across memdir's faces -------------------------------------------------
#: The name ``memdir mcp`` gives itself in ``initialize`` (``serverInfo``): Claude Code keeps it
#: with every tool result, whatever name the user registered the server under.
MCP_SERVER_NAME: Final = "memdir"
#: The variable Claude Code (2.1.328) sets for the MCP servers and hooks it starts: the session's
#: id, the ``session_id`` its hooks are given.
AGENT_SESSION_ENV: Final = "CLAUDE_CODE_SESSION_ID"

# --- writing (spec section 8) ----------------------------------------------------------------
EXTRACTION_MAX_TURNS: Final = 5

#: A project memory that is a snapshot of one moment ("next session", "Current status") is
#: reported (MEM126) when that moment is more than this many days before today.
STALE_SNAPSHOT_DAYS: Final = 90
