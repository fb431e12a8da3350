"""The extraction run: skip when the last turn already wrote memory, take the lock, call the model
with the memory tool and the project tools for at most five turns, and report what was written
(:func:`run_extraction`, async, for the language server; :func:`extract` for the CLI). The rules
are the package's: :mod:`memdir.extract`."""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import inspect
import logging
from collections.abc import Awaitable, Mapping
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from memdir import constants as C
from memdir.agent.manifest import format_manifest
from memdir.agent.scan import scan
from memdir.config import Settings, load_settings
from memdir.extract.transcript import (
    Transcript,
    read_transcript,
    recent_memory_writes,
    render_conversation,
)
from memdir.extras import MissingExtraError, require
from memdir.recall.select import NO_CREDENTIALS, credential_values
from memdir.secrets import redact
from memdir.writing.results import WriteError

if TYPE_CHECKING:
    from anthropic import AsyncAnthropic

    from memdir.writing.memory_tool import MemdirMemoryTool, ToolResult
from memdir.extract.prompt import build_system_prompt, build_user_message
from memdir.extract.results import (
    ExtractionProgress,
    ExtractionResult,
    ProgressCallback,
    Status,
    ToolCallRecord,
    merge_changes,
)
from memdir.extract.sandbox import ExtractionBusyError, _in_dry_run_copy, extraction_lock
from memdir.extract.tools import ProjectTools

log = logging.getLogger(__name__)

#: The extraction agent runs on a Sonnet-class model unless told otherwise.
DEFAULT_EXTRACTION_MODEL: Final = C.DEFAULT_SELECTOR_MODEL
EXTRACTION_MAX_TOKENS: Final = 4096
#: Turns of the transcript checked for memory writes before deciding to extract.
RECENT_TURNS: Final = 1


# --- the loop --------------------------------------------------------------------------------


async def _emit(
    callback: ProgressCallback | None, event: ExtractionProgress, known: list[str] | None = None
) -> None:
    if callback is None:
        return
    event = replace(event, message=redact(event.message, known or ()))
    try:
        outcome = callback(event)
        if inspect.isawaitable(outcome):
            await outcome
    except Exception:  # a progress display must never end an extraction
        log.warning("extraction progress callback failed", exc_info=True)


def _no_credentials(exc: BaseException) -> bool:
    return isinstance(exc, TypeError) and "Could not resolve authentication" in str(exc)


def _api_error_text(exc: BaseException, known: list[str]) -> str:
    """The error in one line, with ``known`` credentials (and anything like one) redacted."""
    status = getattr(exc, "status_code", None)
    message = getattr(exc, "message", None) or str(exc) or type(exc).__name__
    prefix = f"{type(exc).__name__} (HTTP {status})" if status else type(exc).__name__
    return redact(f"{prefix}: {message}", known)


def _redacted_value(value: object, known: list[str]) -> Any:
    """A tool call's JSON input with every string in it (keys too) passed through redact."""
    if isinstance(value, str):
        return redact(value, known)
    if isinstance(value, Mapping):
        return {redact(str(k), known): _redacted_value(v, known) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_redacted_value(v, known) for v in value]
    return value


def _redacted(result: ExtractionResult, known: list[str]) -> ExtractionResult:
    """``result`` with every text a person, a client or a log sees passed through redact.

    A tool call's input is the model's, and may quote a key it read in the transcript (the
    memory tool refuses to write one, but the refused call is still reported); a change's diff
    may show a key a memory held (an edit that removes it). Both are redacted here, after the
    tools ran on the raw input: what is written is unchanged. ``before``/``after`` stay the
    files' real text for callers; no face prints them.
    """
    return replace(
        result,
        reason=None if result.reason is None else redact(result.reason, known),
        changes=tuple(replace(c, diff=redact(c.diff, known)) for c in result.changes),
        summary=redact(result.summary, known),
        warnings=tuple(redact(w, known) for w in result.warnings),
        tool_calls=tuple(
            replace(t, input=_redacted_value(t.input, known), preview=redact(t.preview, known))
            for t in result.tool_calls
        ),
    )


def _preview(text: str, limit: int = 200) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


async def run_extraction(
    transcript: Path | Transcript,
    memory_dir: Path,
    *,
    project_root: Path | None = None,
    model: str | None = None,
    dry_run: bool = False,
    client: AsyncAnthropic | None = None,
    settings: Settings | None = None,
    max_turns: int = C.EXTRACTION_MAX_TURNS,
    recent_turns: int = RECENT_TURNS,
    max_tokens: int = EXTRACTION_MAX_TOKENS,
    on_progress: ProgressCallback | None = None,
) -> ExtractionResult:
    """Extract memories from a transcript into ``memory_dir`` (see the module docstring).

    ``client`` defaults to ``AsyncAnthropic()`` (credentials from the environment); pass one
    to set the base URL, retries or a test transport. ``max_turns`` can only lower the spec's
    limit of 5. Cancelling the task stops the run between steps and releases the lock; writes
    already made stay (each is atomic).
    """
    result = await _run_extraction(
        transcript,
        memory_dir,
        project_root=project_root,
        model=model,
        dry_run=dry_run,
        client=client,
        settings=settings,
        max_turns=max_turns,
        recent_turns=recent_turns,
        max_tokens=max_tokens,
        on_progress=on_progress,
    )
    return _redacted(result, credential_values(client))


async def _run_extraction(
    transcript: Path | Transcript,
    memory_dir: Path,
    *,
    project_root: Path | None,
    model: str | None,
    dry_run: bool,
    client: AsyncAnthropic | None,
    settings: Settings | None,
    max_turns: int,
    recent_turns: int,
    max_tokens: int,
    on_progress: ProgressCallback | None,
) -> ExtractionResult:
    memory_dir = Path(memory_dir)
    max_turns = max(1, min(max_turns, C.EXTRACTION_MAX_TURNS))
    model = model or DEFAULT_EXTRACTION_MODEL
    base = ExtractionResult("completed", memory_dir, dry_run=dry_run, model=model)

    if isinstance(transcript, Transcript):
        loaded = transcript
    else:
        try:
            loaded = await asyncio.to_thread(read_transcript, Path(transcript))
        except OSError as exc:
            return replace(base, status="error", reason=f"cannot read the transcript: {exc}")
    warnings = [f"transcript line {s.line} skipped: {s.reason}" for s in loaded.skipped]

    written = recent_memory_writes(loaded, memory_dir, recent_turns)
    if written:
        first = written[0]
        return replace(
            base,
            status="skipped",
            reason=(
                f"the recent turns already wrote memory ({first.tool} {first.path}, "
                f"transcript line {first.line})"
            ),
            recent_writes=tuple(written),
            warnings=tuple(warnings),
        )
    if not any(r.is_user_prompt for r in loaded.records):
        return replace(
            base,
            status="skipped",
            reason="the transcript has no conversation",
            warnings=tuple(warnings),
        )
    if not memory_dir.is_dir():
        return replace(base, status="error", reason=f"the memory dir {memory_dir} does not exist")

    if project_root is None:
        cwd = next((r.cwd for r in reversed(loaded.records) if r.cwd), None)
        project_root = Path(cwd) if cwd and Path(cwd).is_dir() else Path.cwd()
    settings = settings or load_settings(memory_dir, project_root)
    try:
        require("anthropic", "extraction")  # the model calls use the SDK (the tool is memdir's)
    except MissingExtraError as exc:
        return replace(base, status="error", reason=str(exc), warnings=tuple(warnings))

    try:
        with extraction_lock(memory_dir):

            def run(workspace: Path) -> Awaitable[ExtractionResult]:
                return _agent_loop(
                    loaded,
                    memory_dir,
                    workspace,
                    project_root,
                    model,
                    client,
                    settings,
                    max_turns,
                    max_tokens,
                    on_progress,
                    base,
                )

            if dry_run:
                result = await _in_dry_run_copy(memory_dir, run)
            else:
                result = await run(memory_dir)
    except ExtractionBusyError as exc:
        return replace(base, status="busy", reason=str(exc), warnings=tuple(warnings))
    except WriteError as exc:  # memdir's state folder cannot be used
        return replace(base, status="error", reason=exc.message, warnings=tuple(warnings))
    return replace(result, warnings=tuple(warnings) + result.warnings)


async def _agent_loop(
    transcript: Transcript,
    memory_dir: Path,
    write_dir: Path,
    project_root: Path,
    model: str,
    client: AsyncAnthropic | None,
    settings: Settings,
    max_turns: int,
    max_tokens: int,
    on_progress: ProgressCallback | None,
    base: ExtractionResult,
) -> ExtractionResult:
    from memdir.writing.memory_tool import TOOL_NAME, TOOL_TYPE, MemdirMemoryTool

    memory_tool = MemdirMemoryTool(write_dir, settings=settings, md_only=True)
    project = ProjectTools(project_root)
    headers = await asyncio.to_thread(scan, memory_dir)
    system = build_system_prompt(
        format_manifest(headers.candidates),
        index_mode=settings.recall_mode == "index",
        max_turns=max_turns,
    )
    tools: list[dict[str, Any]] = [{"type": TOOL_TYPE, "name": TOOL_NAME}, *project.definitions()]
    messages: list[dict[str, Any]] = [
        {
            "role": "user",
            "content": build_user_message(render_conversation(transcript), project_root),
        }
    ]
    records: list[ToolCallRecord] = []
    usage = {"input_tokens": 0, "output_tokens": 0}
    turns = 0
    stop_reason: str | None = None
    summary = ""
    error: str | None = None
    own_client = client is None
    known = credential_values(client)

    def finish(status: Status) -> ExtractionResult:
        result = replace(
            base,
            status=status,
            reason=error,
            stop_reason=stop_reason,
            turns=turns,
            changes=merge_changes(memory_tool.changes),
            tool_calls=tuple(records),
            summary=summary,
            warnings=tuple(memory_tool.warnings),
            usage=dict(usage),
        )
        return _redacted(result, known)

    await _emit(on_progress, ExtractionProgress("started", "extracting memories", 0, max_turns))
    try:
        # The SDK takes a second or more to import: off the event loop, so that a server
        # running the extraction keeps answering meanwhile.
        await asyncio.to_thread(importlib.import_module, "anthropic")
        import anthropic

        if client is None:
            try:
                client = anthropic.AsyncAnthropic()
            except anthropic.AnthropicError as exc:  # e.g. a credentials profile that is missing
                error = _api_error_text(exc, known)
                return finish("error")
            known = credential_values(client)
        while turns < max_turns:
            turns += 1
            await _emit(
                on_progress,
                ExtractionProgress("turn", f"turn {turns} of {max_turns}", turns, max_turns),
                known,
            )
            try:
                response = await client.messages.create(
                    model=model,
                    max_tokens=max_tokens,
                    system=system,
                    tools=tools,  # type: ignore[arg-type]
                    messages=messages,  # type: ignore[arg-type]
                )
            except (anthropic.AnthropicError, TypeError) as exc:
                # TypeError: the SDK's way of saying no credentials were found.
                error = NO_CREDENTIALS if _no_credentials(exc) else _api_error_text(exc, known)
                log.warning("extraction ended by an API error: %s", error)
                return finish("error")
            usage["input_tokens"] += response.usage.input_tokens
            usage["output_tokens"] += response.usage.output_tokens
            stop_reason = response.stop_reason
            messages.append({"role": "assistant", "content": response.content})
            texts = [block.text for block in response.content if block.type == "text"]
            if texts:
                summary = "\n".join(texts).strip()
            uses = [block for block in response.content if block.type == "tool_use"]
            if not uses:
                break
            results: list[dict[str, Any]] = []
            for use in uses:
                outcome = await _dispatch(use.name, use.input, memory_tool, project, known)
                records.append(
                    ToolCallRecord(
                        turns,
                        use.name,
                        dict(_mapping(use.input)),
                        outcome.is_error,
                        _preview(outcome.text),
                    )
                )
                await _emit(
                    on_progress,
                    ExtractionProgress(
                        "tool", f"{use.name}: {_preview(outcome.text, 80)}", turns, max_turns
                    ),
                    known,
                )
                results.append(outcome.to_block(use.id))
            messages.append({"role": "user", "content": results})
        else:
            stop_reason = "max_turns"
    finally:
        if own_client and client is not None:
            with contextlib.suppress(Exception):
                await client.close()
        await _emit(
            on_progress, ExtractionProgress("finished", "extraction finished", turns, max_turns)
        )
    return finish("completed")


def _mapping(value: object) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


async def _dispatch(
    name: str,
    data: object,
    memory_tool: MemdirMemoryTool,
    project: ProjectTools,
    known: list[str],
) -> ToolResult:
    from memdir.writing.memory_tool import TOOL_NAME, ToolResult

    try:
        if name == TOOL_NAME:
            return await memory_tool.arun(data)
        if name in ("read", "grep", "glob"):
            outcome = await asyncio.to_thread(project.call, name, _mapping(data))
            return ToolResult(outcome.text, outcome.is_error)
    except Exception as exc:
        # A fault in a tool is reported to the model and logged; it must not end the run
        # (the tools themselves turn every expected failure into an error result).
        # The traceback only at DEBUG: its text is not redacted.
        log.error(
            "extraction tool %s failed: %s", name, redact(f"{type(exc).__name__}: {exc}", known)
        )
        log.debug("extraction tool %s failed", name, exc_info=True)
        return ToolResult(f"Error: the {name} tool failed: {exc}", True)
    return ToolResult(f"Error: no tool named {name!r}; use memory, read, grep or glob", True)


def extract(transcript: Path, memory_dir: Path, **options: Any) -> ExtractionResult:
    """:func:`run_extraction` for synchronous callers (the CLI)."""
    return asyncio.run(run_extraction(transcript, memory_dir, **options))
