"""``memdir hook user-prompt-submit``: Claude Code's prompt hook, recalling memories as context.

Reads the hook's JSON on stdin and prints the hook output (or nothing); see docs/hook.md. It fails
open: whatever goes wrong, stdout stays empty, the exit code is 0 and the reason goes to
``<state dir>/hook.log``, because a failing prompt hook would get in the way of every prompt.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
import traceback
from pathlib import Path


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "hook",
        help="run as a Claude Code hook (user-prompt-submit: recall memories for the prompt)",
        description="Claude Code hooks: the hook's JSON on stdin, the hook output on stdout.",
    )
    events = parser.add_subparsers(dest="event", metavar="EVENT", parser_class=type(parser))
    events.required = True
    prompt = events.add_parser(
        "user-prompt-submit",
        help="recall memories for the prompt and give them to the model as additional context",
        description=(
            "Read a UserPromptSubmit hook input on stdin and print the memories recalled for its "
            "prompt as additionalContext (nothing when none). Fails open: errors print nothing, "
            "exit 0 and are appended to <state dir>/hook.log."
        ),
    )
    prompt.set_defaults(func=cmd_user_prompt_submit)
    post = events.add_parser(
        "post-tool-use",
        help="after the agent's Edit or Write of MEMORY.md, drop memdir's line where the agent "
        "added its own",
        description=(
            "Read a PostToolUse hook input on stdin; when the tool wrote the project's "
            "MEMORY.md, drop memdir's own lines for files another entry links, and tell the "
            "model as additionalContext. Fails open like user-prompt-submit."
        ),
    )
    post.set_defaults(func=cmd_post_tool_use)


def cmd_user_prompt_submit(args: argparse.Namespace) -> int:
    from memdir.agent.paths import state_dir
    from memdir.faces.hook import INPUT_MAX_BYTES, append_log, user_prompt_submit

    session_id: str | None = None
    try:
        home = Path.home()
        # One byte over the cap is enough to refuse it; an endless stdin is never read to its end.
        raw = sys.stdin.buffer.read(INPUT_MAX_BYTES + 1)
        outcome = user_prompt_submit(raw, env=os.environ, home=home)
        session_id = outcome.session_id
        if outcome.log:
            append_log(state_dir(os.environ, home), session_id, outcome.log)
        text = outcome.stdout()
        if text:
            sys.stdout.write(text)
            sys.stdout.flush()
    except Exception as exc:  # fail open: a bug here must not block the user's prompt
        last = traceback.extract_tb(exc.__traceback__)[-1:]
        where = f" at {last[0].filename}:{last[0].lineno}" if last else ""
        with contextlib.suppress(Exception):
            append_log(
                state_dir(os.environ, Path.home()),
                session_id,
                f"error: {type(exc).__name__}: {exc}{where}",
            )
    return 0


def cmd_post_tool_use(args: argparse.Namespace) -> int:
    from memdir.agent.paths import state_dir
    from memdir.faces.hook import append_log
    from memdir.faces.hook_index import INPUT_MAX_BYTES, post_tool_use

    try:
        outcome = post_tool_use(sys.stdin.buffer.read(INPUT_MAX_BYTES + 1), env=os.environ)
        if outcome.log:
            append_log(state_dir(os.environ, Path.home()), outcome.session_id, outcome.log)
        sys.stdout.write(outcome.stdout())
        sys.stdout.flush()
    except Exception as exc:  # fail open: a bug here must not get in the agent's way
        with contextlib.suppress(Exception):
            append_log(
                state_dir(os.environ, Path.home()), None, f"error: {type(exc).__name__}: {exc}"
            )
    return 0
