"""``memdir recall``: run path B once and print exactly what it would inject.

stdout carries the ``relevant_memories`` attachment text exactly as the target agent injects it
and nothing else (empty when nothing surfaces), a short summary goes to stderr; ``--json`` prints
one object instead. ``--session FILE`` keeps the session (surfaced files, files read, budget)
between calls, so the dedupe and budget rules can be tried from a shell. Settings come from
``memdir.toml`` / ``[tool.memdir]``; flags override them; ``--target`` picks the agent release.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from memdir import constants as C
from memdir.agent.trigger import TRIGGER_RULES
from memdir.config import (
    DEFAULT_OPENAI_BASE_URL,
    DEFAULT_OPENAI_TIMEOUT,
    OPENAI_BASE_URL_ENV,
    SELECTOR_NAMES,
)
from memdir.faces.cli.common import (
    CliError,
    add_dir_argument,
    add_json_argument,
    add_target_argument,
    print_json,
    resolve_dir,
    resolve_inside,
    resolve_target,
    shown,
)

if TYPE_CHECKING:
    from memdir.recall.explain import Explanation
    from memdir.recall.prefetch import RecallResult
    from memdir.recall.surface import Session


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "recall",
        help="print the memories path B would surface for a message",
        description=(
            "Run the relevance prefetch (path B) for QUERY and print what would be injected: "
            "the attachment on stdout, a summary on stderr."
        ),
    )
    parser.add_argument("query", metavar="QUERY", help="the user's message")
    add_dir_argument(parser)
    add_json_argument(parser)
    add_target_argument(parser)
    parser.add_argument(
        "--selector",
        choices=SELECTOR_NAMES,
        help="auto (anthropic when an API key is configured, else openai-compatible when "
        "openai_model is set, else lexical), anthropic, openai-compatible (a local model "
        "server), lexical (default: from settings, else auto)",
    )
    parser.add_argument(
        "--model",
        metavar="M",
        help=f"selector model: for openai-compatible (also when auto picks it) the server's "
        f"model name (default: openai_model from settings), else the anthropic model "
        f"(default: from settings, else {C.DEFAULT_SELECTOR_MODEL}; "
        f"{C.CHEAP_SELECTOR_MODEL} is the cheap choice)",
    )
    parser.add_argument(
        "--base-url",
        metavar="URL",
        help=f"the openai-compatible server, up to /v1 (default: ${OPENAI_BASE_URL_ENV}, else "
        f"openai_base_url from settings, else {DEFAULT_OPENAI_BASE_URL}, Ollama's)",
    )
    parser.add_argument(
        "--timeout",
        metavar="SECONDS",
        type=float,
        help=f"give up on the model after this long and fall back to lexical (default: "
        f"{C.SELECT_TIMEOUT_SECONDS:g} for anthropic; openai_timeout from settings, else "
        f"{DEFAULT_OPENAI_TIMEOUT:g}, for openai-compatible)",
    )
    parser.add_argument(
        "--recent-tools",
        metavar="a,b",
        default="",
        help="tools used successfully in recent turns, comma-separated",
    )
    parser.add_argument(
        "--trigger",
        choices=TRIGGER_RULES,
        help="multilingual (memdir's) or claude-code (the agent's single-word rule)",
    )
    parser.add_argument(
        "--session",
        metavar="FILE",
        type=Path,
        help="keep session state (surfaced, read, budget) in FILE across calls",
    )
    parser.add_argument(
        "--mark-read",
        metavar="FILE",
        action="append",
        default=[],
        help="record FILE (relative to the memory dir) as read by the agent first; repeatable",
    )
    parser.add_argument(
        "--compact",
        action="store_true",
        help="compact the session first: surfaced memories may return, the budget restarts",
    )
    parser.add_argument(
        "--explain",
        metavar="FILE",
        action="append",
        default=[],
        help="say why FILE (relative to the memory dir) was or was not selected, and which "
        "words of QUERY its description lacks; repeatable",
    )
    parser.set_defaults(func=cmd_recall)


def _load_session(path: Path | None) -> Session:
    from memdir.recall.surface import Session

    if path is None:
        return Session()
    if path.is_dir():
        raise CliError(f"--session {path} is a directory")
    try:
        return Session.load(path)
    except (ValueError, OSError) as exc:
        # UnicodeDecodeError is a ValueError; its text is long, so say what matters.
        text = "not UTF-8" if isinstance(exc, UnicodeDecodeError) else str(exc).splitlines()[0]
        text = text.removeprefix(f"{path} is ")  # Session.load names the file itself
        raise CliError(f"bad session file {path}: {text}") from None


def _summary(result: RecallResult, directory: Path) -> list[str]:
    if not result.triggered:
        return [f"-- not triggered: {result.reason}"]
    selector = result.selector or "none"
    if result.degraded:
        selector += f" (fell back from {result.requested_selector}: {result.degraded})"
    lines = [
        f"-- triggered: {result.reason}",
        f"-- selector {selector} · {len(result.candidates)} candidates · "
        f"{len(result.selected)} selected · {len(result.surfaced)} surfaced",
    ]
    for memory in result.surfaced:
        cut = ", truncated" if memory.truncated else ""
        why = result.why.get(memory.rel_path, "")
        lines.append(
            f"--   {shown(directory / memory.rel_path)} ({memory.bytes:,} bytes{cut})"
            f"{': ' + why if why else ''}"
        )
    for dropped in result.dropped:
        if dropped.stage != "before-select":
            lines.append(f"--   left out {shown(directory / dropped.rel_path)}: {dropped.reason}")
    lines.extend(f"-- note: {note}" for note in result.notes)
    lines.append(
        f"-- budget {result.budget_used:,}/{result.budget_limit:,} "
        f"({result.budget_left:,} left) · {result.timings.total_ms:.0f} ms"
    )
    return lines


def cmd_recall(args: argparse.Namespace) -> int:
    from memdir.config import base_url_error, load_settings
    from memdir.faces.projections import cli_json, recall_view
    from memdir.recall.choice import selector_from_settings
    from memdir.recall.prefetch import recall
    from memdir.recall.select import credential_source

    directory = resolve_dir(args)
    if not args.query.strip():
        # Still a valid run (the trigger says no), but most likely a quoting mistake.
        print("memdir recall: note: empty QUERY", file=sys.stderr)
    if args.timeout is not None and not args.timeout > 0:
        raise CliError("--timeout must be a positive number of seconds")
    if args.base_url is not None and (problem := base_url_error(args.base_url)):
        raise CliError(f"--base-url {problem}")
    settings = load_settings(directory)
    for error in settings.errors:
        print(f"memdir recall: note: settings: {error}", file=sys.stderr)
    selector_name = args.selector or settings.selector
    # --model names the model of the selector asked for: the local server's, or Anthropic's.
    local = selector_name == "openai-compatible" or (
        selector_name == "auto" and credential_source() is None and bool(settings.openai_model)
    )
    settings = replace(
        settings,
        selector=selector_name,
        model=(None if local else args.model) or settings.model,
        openai_model=(args.model if local else None) or settings.openai_model,
        trigger=args.trigger or settings.trigger,
    )
    session = _load_session(args.session)
    if args.compact:
        session.compact()
    if args.mark_read:
        session.mark_read(resolve_inside(directory, name) for name in args.mark_read)
    tools = [t for t in args.recent_tools.split(",") if t.strip()]
    target = resolve_target(args.target, directory)
    selector = selector_from_settings(
        settings, target=target, timeout=args.timeout, base_url=args.base_url
    )
    result = recall(
        args.query,
        directory,
        session,
        tools,
        selector=selector,
        settings=settings,
        trigger_rule=settings.trigger,
        target=target,
    )
    if args.session is not None:
        try:
            session.save(args.session)
        except OSError as exc:
            raise CliError(
                f"cannot write session file {args.session}: {exc.strerror or exc}"
            ) from None
    explanations = _explain(args.explain, result, directory, session, tools)
    if args.json:
        print_json(cli_json(recall_view(result, explanations)))
        return 0
    if result.attachment:
        # Byte for byte what is injected: no newline added (the text may end with one).
        sys.stdout.write(result.attachment)
        sys.stdout.flush()
    for line in _summary(result, directory):
        print(line, file=sys.stderr)
    for explanation in explanations:
        # The first line names the file as the memory dir does (the editor's preview shows it
        # so); here it is named as every command names a file.
        print(
            f"-- why: {shown(directory / explanation.path)}: {explanation.reason}", file=sys.stderr
        )
        for line in explanation.lines[1:]:
            print(f"--   {line.strip()}", file=sys.stderr)
    return 0


def _explain(
    files: list[str],
    result: RecallResult,
    directory: Path,
    session: Session,
    tools: list[str],
) -> tuple[Explanation, ...]:
    """The ``--explain`` answers, from a fresh scan (what the recall saw, unless a file changed
    in between) and the session as it was before the recall."""
    if not files:
        return ()
    from memdir.agent.scan import scan
    from memdir.recall.explain import explain_recall, seen_before

    # Relative to the memory dir, as --mark-read; a path from the working directory also works.
    named = [
        str(Path(f).absolute()) if not (directory / f).exists() and Path(f).exists() else f
        for f in files
    ]
    scanned = scan(directory)
    seen = seen_before(session, scanned, result)
    return explain_recall(result, scanned, named, recent_tools=tools, seen=seen)
