"""The params and payloads of every ``memory/*`` message, and the table of methods.

Results that are the engine's own views (``memdir.faces.projections``, ``memdir.faces.visibility``,
``memdir.search.grep``) are sent as they are; the classes here carry what only the server knows
(URIs, request ids, sessions). Field names are snake_case; the converter camelCases them on the
wire. ``schema.json``, the TypeScript interfaces and ``docs/protocol.md`` are generated from
this module.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

import attrs
from memdir.faces.projections import (
    DroppedFile,
    IndexSummary,
    ManifestView,
    MemoryText,
    RecallBudget,
    RecallView,
    SurfacedView,
)
from memdir.faces.visibility import MemoryListing
from memdir.recall.explain import Explanation
from memdir.search.grep import SearchMatch

from memdir_lsp import protocol as P

# --- params ----------------------------------------------------------------------------------


@attrs.define
class DirectoryParams:
    """Params of a request about one memory directory."""

    #: File URI of a known memory dir; default: the workspace's first.
    directory: str | None = None


@attrs.define
class ReadParams(DirectoryParams):
    """Params of ``memory/read``."""

    #: The topic file: relative to the memory dir, absolute, or a file URI.
    path: str = attrs.field(kw_only=True)


@attrs.define
class SearchParams(DirectoryParams):
    """Params of ``memory/search``."""

    #: A regular expression (Python syntax), searched line by line.
    pattern: str = attrs.field(kw_only=True)
    #: Only files matching this glob; one without ``/`` matches file names in any folder.
    glob: str = attrs.field(default="**/*.md", kw_only=True)
    ignore_case: bool = attrs.field(default=False, kw_only=True)


@attrs.define
class RecallParams(DirectoryParams):
    """Params of ``memory/recall``."""

    #: The user's message.
    query: str = attrs.field(kw_only=True)
    #: An agent session: files it was shown or read do not surface again.
    session_id: str | None = attrs.field(default=None, kw_only=True)
    #: Tools the agent used recently; the selector skips their reference docs.
    recent_tools: list[str] = attrs.field(factory=list, kw_only=True)
    #: Files (relative to the memory dir, absolute, or file URIs) to explain: why each was or
    #: was not selected, in the result's ``explanations``.
    explain: list[str] = attrs.field(factory=list, kw_only=True)


@attrs.define
class PrefetchParams(DirectoryParams):
    """Params of ``memory/prefetch``."""

    query: str = attrs.field(kw_only=True)
    session_id: str = attrs.field(kw_only=True)
    recent_tools: list[str] = attrs.field(factory=list, kw_only=True)
    #: Files to explain, as in ``memory/recall``; the notification carries the explanations.
    explain: list[str] = attrs.field(factory=list, kw_only=True)


@attrs.define
class SessionParams(DirectoryParams):
    """Params of ``memory/compacted``: the agent's context was compacted."""

    session_id: str = attrs.field(kw_only=True)


@attrs.define
class DidReadParams(SessionParams):
    """Params of ``memory/didRead``: the agent read these files itself."""

    #: Relative to the memory dir, absolute, or file URIs.
    paths: list[str] = attrs.field(factory=list, kw_only=True)


@attrs.define
class StatusParams:
    """Params of ``memdir/status``."""

    #: Also report this agent session of every directory.
    session_id: str | None = None


@attrs.define
class GrantTrustParams:
    """Params of ``memdir/didGrantWorkspaceTrust``: none."""


ToolCommand = Literal["view", "create", "str_replace", "insert", "delete", "rename"]


@attrs.define
class MemoryToolParams(DirectoryParams):
    """The API memory tool's input, snake_case as a model sends it (camelCase also accepted)."""

    __wire_case__ = "snake"

    command: ToolCommand = attrs.field(kw_only=True)
    path: str | None = attrs.field(default=None, kw_only=True)
    file_text: str | None = attrs.field(default=None, kw_only=True)
    old_str: str | None = attrs.field(default=None, kw_only=True)
    new_str: str | None = attrs.field(default=None, kw_only=True)
    insert_line: int | None = attrs.field(default=None, kw_only=True)
    insert_text: str | None = attrs.field(default=None, kw_only=True)
    old_path: str | None = attrs.field(default=None, kw_only=True)
    new_path: str | None = attrs.field(default=None, kw_only=True)
    #: First and last line to show (1-based; ``-1``: to the end).
    view_range: list[int] | None = attrs.field(default=None, kw_only=True)

    def command_input(self) -> dict[str, Any]:
        """The tool input as the memory tool takes it: the given fields, snake_case."""
        fields = attrs.asdict(self, recurse=False)
        del fields["directory"]
        return {k: v for k, v in fields.items() if v is not None}


MemoryType = Literal["user", "feedback", "project", "reference"]


@attrs.define
class NewMemoryParams(DirectoryParams):
    """Params of ``memory/newMemory``: what the user typed."""

    #: The title: the frontmatter ``name``, the heading, the index entry's text and, as a
    #: slug, the file name.
    name: str = attrs.field(kw_only=True)
    #: One line: what the selector chooses the memory by, and the index entry's hook.
    description: str = attrs.field(kw_only=True)
    type: MemoryType = attrs.field(kw_only=True)
    #: The text under the heading; default: a why/how skeleton for feedback and project.
    body: str = attrs.field(default="", kw_only=True)


@attrs.define
class ExtractParams(DirectoryParams):
    """Params of ``memory/extract``."""

    #: A ``file://`` URI or an absolute path of the session transcript (JSONL).
    transcript: str = attrs.field(kw_only=True)
    #: The model to run; default: the directory's setting.
    model: str | None = attrs.field(default=None, kw_only=True)
    #: Plan the writes and report their diffs; write nothing.
    dry_run: bool = attrs.field(default=False, kw_only=True)
    #: The client's work-done progress token for the run.
    work_done_token: str | int | None = attrs.field(default=None, kw_only=True)


# --- results and notifications ---------------------------------------------------------------


@attrs.define
class MemorySearchResult:
    """The matching lines of a memory dir's files, MEMORY.md first."""

    directory: str
    matches: tuple[SearchMatch, ...]
    #: The search stopped at 500 matches.
    truncated: bool


@attrs.define
class PrefetchStarted:
    """``memory/prefetch`` answers at once; the selection arrives as ``memory/relevantMemories``."""

    #: Repeated in the notification.
    id: str
    #: false: no notification follows.
    triggered: bool
    #: Why it did not run (single word, budget spent, ...).
    reason: str | None


@attrs.define
class RelevantMemories:
    """The selection of a ``memory/prefetch``, once it is made."""

    id: str
    session_id: str
    #: File URI of the memory dir.
    directory: str
    selected_memories: tuple[str, ...]
    surfaced: tuple[SurfacedView, ...]
    attachment: str
    budget: RecallBudget
    triggered: bool
    reason: str
    selector: str | None
    degraded: str | None
    why: dict[str, str]
    dropped: tuple[DroppedFile, ...]
    #: Why each file of the prefetch's ``explain`` was or was not selected.
    explanations: tuple[Explanation, ...] = ()


ChangeKind = Literal["created", "changed", "deleted", "renamed"]


@attrs.define
class MemoryChange:
    """One file (or folder) a write created, changed, deleted or renamed."""

    kind: ChangeKind
    #: Relative to the memory dir (the old path of a rename).
    path: str
    uri: str
    #: The new path and URI of a rename.
    new_path: str | None = None
    new_uri: str | None = None
    is_dir: bool = False
    #: Dry-run extractions: the unified diff of the change.
    diff: str = ""


@attrs.define
class MemoryToolResult:
    """What the memory tool returned (the API's exact text) and what it wrote."""

    text: str
    #: The tool refused or failed; ``text`` says why, as the model would read it. Also set when
    #: the command was carried out but MEMORY.md could not be updated (a full disk): ``changes``
    #: lists what was done, and the next write makes the index update it owes.
    is_error: bool
    changes: list[MemoryChange]
    #: What did not stop the command but the user should know: MEMORY.md left alone or not
    #: updated, the journal of an interrupted write refused.
    warnings: list[str]


@attrs.define
class NewMemoryResult:
    """The plan of a new memory; the server writes nothing, the client applies ``edit``."""

    #: The new file, relative to the memory dir (a name no file or index entry has).
    path: str
    uri: str
    #: An LSP `WorkspaceEdit`: a `CreateFile` of the topic file (never over an existing one)
    #: with its text, and in recall mode `index` the MEMORY.md entry (MEMORY.md is created when
    #: missing).
    edit: Any
    #: An LSP `Command`, or null. Only for clients without `create` among their resource
    #: operations: `edit` then holds the index edit alone and this `memdir.createFile` command,
    #: run after it, creates the file.
    command: Any


@attrs.define
class ExtractStarted:
    """``memory/extract`` answers at once; the outcome arrives as ``memory/extractResult``."""

    id: str


@attrs.define
class RenamedFile:
    """A file the run renamed."""

    #: The old path, relative to the memory dir.
    from_: str
    #: The new path.
    to: str | None


ExtractStatus = Literal["completed", "skipped", "busy", "error", "cancelled"]


@attrs.define
class ExtractOutcome:
    """What a ``memory/extract`` run did (with ``dryRun``: would do)."""

    id: str
    #: File URI of the memory dir.
    directory: str
    status: ExtractStatus
    #: Why it was skipped, busy, cancelled or failed.
    reason: str | None
    dry_run: bool
    created: list[str] = attrs.Factory(list)
    changed: list[str] = attrs.Factory(list)
    deleted: list[str] = attrs.Factory(list)
    renamed: list[RenamedFile] = attrs.Factory(list)
    changes: list[MemoryChange] = attrs.Factory(list)
    #: The agent's own summary of what it saved.
    summary: str = ""
    turns: int = 0
    #: How the loop ended: the model's last ``stop_reason``, or ``max_turns``.
    stop_reason: str | None = None
    model: str | None = None
    warnings: list[str] = attrs.Factory(list)


@attrs.define
class SessionState:
    """An agent session of one directory."""

    #: Bytes surfaced so far, and the session's limit.
    budget_used: int
    budget_limit: int
    #: Absolute paths surfaced, and read by the agent itself.
    surfaced: list[str]
    read: list[str]
    compactions: int


@attrs.define
class StatusDirectory:
    """A memory directory the server knows."""

    path: str
    uri: str
    #: Why it is known: ``workspace``, ``agent``, ``setting``, ``opened``.
    origins: list[str]
    #: Where its settings came from, and what was wrong with them.
    settings_source: str | None
    settings_errors: list[str]
    index_line_limit: int
    #: The server may write here (``memory/tool``'s writes, ``memory/extract``, file
    #: creation): the agent's memory dir, or one in the ``directories`` setting, in a trusted
    #: workspace. Other dirs are served read-only.
    writable: bool = True
    #: Why it is read-only, and what would let the server write (null when writable).
    read_only_reason: str | None = None
    #: Set when the directory looks like another agent's memory (OpenClaw, Hermes, a memory
    #: bank ...): the sentence said once to the user; nothing is checked, fixed or written
    #: there (null: Claude Code's format, or forced by the `anyFormat` setting).
    notice: str | None = None
    #: The session asked for by ``sessionId`` (null: no such session yet).
    session: SessionState | None = None


@attrs.define
class EditorSettingsView:
    """The editor's memdir settings as the server understood them."""

    directories: list[str]
    #: memdir.toml keys set in the editor.
    overrides: dict[str, Any]


@attrs.define
class StatusResult:
    """What the server knows, for debugging and tests."""

    version: str
    directories: list[StatusDirectory]
    #: The anthropic SDK is imported (startup never imports it).
    anthropic_loaded: bool
    position_encoding: str
    editor_settings: EditorSettingsView
    #: The workspace is trusted (initializationOptions ``trusted``, or granted since):
    #: untrusted, the server runs no git and writes nothing.
    trusted: bool = True


# --- the methods -----------------------------------------------------------------------------

Direction = Literal["request", "notification", "server notification"]


@dataclass(frozen=True)
class Method:
    """One ``memory/*`` message: its name, direction, params, result and what it does."""

    name: str
    kind: Direction
    params: type
    result: type | None
    doc: str
    #: When it answers with a JSON-RPC InvalidParams error instead of a result.
    errors: tuple[str, ...] = ()
    #: When a well-formed request cannot be served: LSP's RequestFailed.
    failures: tuple[str, ...] = ()


#: When a request that writes is refused (LSP's RequestFailed).
READ_ONLY_FAILURE = (
    "the memory dir is read-only: the workspace is not trusted, or the dir was found only as a "
    "folder that looks like a memory dir (not the agent's, not in the `directories` setting); "
    "the message says which, and what would allow the write"
)

#: Errors every request about a directory can answer.
DIRECTORY_ERRORS = (
    "`directory` is not a file URI, or not a known memory directory; no memory directory is "
    "known in the workspace",
    "a param has the wrong type or a required one is missing (the message names it)",
)

METHODS: tuple[Method, ...] = (
    Method(
        P.MEMORY_INDEX,
        "request",
        DirectoryParams,
        IndexSummary,
        "MEMORY.md as path A loads it: the injected text and how much of the load cap it uses.",
        DIRECTORY_ERRORS,
        (
            "MEMORY.md was not read (it leads outside the memory dir, is not a regular file, or "
            "cannot be read); the message says why, as lint does",
        ),
    ),
    Method(
        P.MEMORY_MANIFEST,
        "request",
        DirectoryParams,
        ManifestView,
        "The manifest the selector is shown: the newest topic files' headers.",
        DIRECTORY_ERRORS,
    ),
    Method(
        P.MEMORY_LIST,
        "request",
        DirectoryParams,
        MemoryListing,
        "Every topic file with its visibility: will the agent see it, and how.",
        DIRECTORY_ERRORS,
    ),
    Method(
        P.MEMORY_READ,
        "request",
        ReadParams,
        MemoryText,
        "One topic file exactly as path B injects it.",
        (
            *DIRECTORY_ERRORS,
            "the path is outside the memory directory, is MEMORY.md, or does not exist",
        ),
    ),
    Method(
        P.MEMORY_SEARCH,
        "request",
        SearchParams,
        MemorySearchResult,
        "Lines of MEMORY.md and the topic files matching a regular expression.",
        (
            *DIRECTORY_ERRORS,
            "`pattern` or `glob` does not compile, or `pattern` took longer than 2 s on one file",
        ),
    ),
    Method(
        P.MEMORY_RECALL,
        "request",
        RecallParams,
        RecallView,
        "Run path B now and answer with what it surfaced (and why).",
        DIRECTORY_ERRORS,
    ),
    Method(
        P.MEMORY_PREFETCH,
        "request",
        PrefetchParams,
        PrefetchStarted,
        "Start path B in the background, as the agent does; when it triggers, the selection "
        "arrives later as `memory/relevantMemories` with the same `id`.",
        DIRECTORY_ERRORS,
    ),
    Method(
        P.MEMORY_TOOL,
        "request",
        MemoryToolParams,
        MemoryToolResult,
        "Run one command of the API memory tool (`memory_20250818`) over the memory dir; it "
        "writes on disk. The tool's own failures are results with `isError`, in the API's words; "
        "so is a command that writes in a read-only dir (see `writable` in `memdir/status`): "
        "the text says why and what would allow it.",
        (*DIRECTORY_ERRORS, "the input is not a memory tool command"),
    ),
    Method(
        P.MEMORY_NEW_MEMORY,
        "request",
        NewMemoryParams,
        NewMemoryResult,
        "Plan a new topic file from a title, a description and a type: its name (from the "
        "title, never one taken), its text and its MEMORY.md entry, as a `WorkspaceEdit` the "
        "client applies. Writes nothing.",
        (*DIRECTORY_ERRORS, "`name` is empty"),
    ),
    Method(
        P.MEMORY_EXTRACT,
        "request",
        ExtractParams,
        ExtractStarted,
        "Start the extraction agent on a transcript; answers `{id}` at once, reports work-done "
        "progress (cancelling it cancels the run) and ends with `memory/extractResult`.",
        (*DIRECTORY_ERRORS, "no such transcript, or the work done token is already in use"),
        (READ_ONLY_FAILURE,),
    ),
    Method(
        P.MEMDIR_STATUS,
        "request",
        StatusParams,
        StatusResult,
        "What the server knows: directories, settings, sessions, loaded modules.",
        ("a param has the wrong type (the message names it)",),
    ),
    Method(
        P.MEMDIR_DID_GRANT_WORKSPACE_TRUST,
        "notification",
        GrantTrustParams,
        None,
        "The user trusted the workspace the server was started untrusted in "
        "(initializationOptions `trusted: false`): from now on it loads projects (runs git) and "
        "writes in writable dirs. Trust is never taken back this way: restart the server.",
    ),
    Method(
        P.MEMORY_DID_READ,
        "notification",
        DidReadParams,
        None,
        "The agent read these files itself: they never surface in this session. Bad params are "
        "logged (a notification has no response).",
    ),
    Method(
        P.MEMORY_COMPACTED,
        "notification",
        SessionParams,
        None,
        "The agent's context was compacted: surfaced files may surface again.",
    ),
    Method(
        P.MEMORY_RELEVANT_MEMORIES,
        "server notification",
        RelevantMemories,
        None,
        "The selection of a `memory/prefetch` that triggered.",
    ),
    Method(
        P.MEMORY_EXTRACT_RESULT,
        "server notification",
        ExtractOutcome,
        None,
        "The outcome of a `memory/extract` run, with its `id`.",
    ),
)

METHODS_BY_NAME: Mapping[str, Method] = {m.name: m for m in METHODS}
