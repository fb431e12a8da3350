"""What the extraction agent is told: the system prompt (the four-type taxonomy, the "do not save"
list, read before writing, the frontmatter layout Claude Code writes, the current manifest) and
the user message carrying the rendered conversation."""

from __future__ import annotations

from pathlib import Path
from typing import Final

from memdir import constants as C

MEMORY_TYPE_GUIDE: Final = {
    "user": "the user's role, goals, preferences and knowledge level",
    "feedback": (
        "how the user wants the agent to work: their corrections and also the approaches they "
        "confirmed (saving only mistakes drifts away from what already works), each with the "
        "reason they gave"
    ),
    "project": (
        "background, goals and the reasons for decisions that the code and git history do not "
        'show; turn relative dates into absolute ones ("Thursday" becomes the date itself)'
    ),
    "reference": "entry points to external systems (a tracker project, a dashboard, a runbook)",
}
DO_NOT_SAVE: Final = (
    "code patterns, directory structure or architecture snapshots",
    "git history and recent changes",
    "debugging and fix steps",
    "anything already in CLAUDE.md (or enforced by CI)",
    "the current task's progress or temporary state",
)


# --- the prompt ------------------------------------------------------------------------------


def build_system_prompt(manifest: str, *, index_mode: bool, max_turns: int) -> str:
    """The extraction agent's system prompt: taxonomy, exclusions, how to write, manifest.

    It follows the memory rules Claude Code gives its own extraction agent, in memdir's words
    (docs/agent.md): the frontmatter layout the agent writes, work from the conversation only.
    """
    types = "\n".join(f"- `{name}`: {what}" for name, what in MEMORY_TYPE_GUIDE.items())
    excluded = "\n".join(f"- {item}" for item in DO_NOT_SAVE)
    if index_mode:
        index_rule = (
            "MEMORY.md is the index and is maintained for you: creating, renaming or deleting a "
            "topic file adds, updates or removes its line. Never write memory content into "
            "MEMORY.md."
        )
    else:
        kb = C.SURFACE_MAX_BYTES // 1024
        index_rule = (
            "This memory directory uses relevance prefetch: MEMORY.md is not loaded and not "
            f"maintained. Do not edit it. Recall shows only the first {kb} KB of a memory, so "
            f"keep each file under {kb} KB, frontmatter included, and its description to one "
            "specific line."
        )
    return f"""You are the memory extraction agent of a coding assistant. You read the recent \
conversation between a user and the assistant and save what will still be useful in later \
sessions and cannot be derived from the project itself. You save memories with the `memory` tool \
(files under /memories).

Work from the conversation alone. Do not spend turns investigating or checking what it says: no \
reading code to confirm a pattern, no grepping source files, no git history. The read-only \
`read`, `grep` and `glob` tools reach the project, but this task does not need them.

## What to save: four types, a closed set
{types}

## Do not save
{excluded}
Code changes: a file path or a function saved weeks ago may be false today. Save only what cannot \
be derived from the current state of the project. This holds even when the user asks you to \
remember one of these things: save what was surprising or non-obvious about it, not the thing \
itself.

## How to write
- Read before you write: view /memories and every existing memory that may cover the same \
subject, then update that file instead of creating a duplicate. Delete a memory that turns out \
to be wrong (the memory tool's `delete` command); when the user asks to forget something, \
remove or update the memory that holds it.
- One fact per file: /memories/<short-kebab-case-name>.md, opening with frontmatter in the \
layout Claude Code itself writes:
  ---
  name: <short-kebab-case-name, ASCII letters, digits and hyphens only>
  description: <one specific line: this is what decides whether the memory is ever recalled>
  metadata:
    type: <user|feedback|project|reference>
  ---
  then the memory itself; for feedback and project memories add **Why:** and **How to apply:** \
lines.
- Link related memories as [[name]], the other memory's `name`. Linking to a memory nobody has \
written yet is fine: such a link points at something to write later.
- {index_rule}
- When nothing in the conversation is worth saving, answer "Nothing to save." without calling a \
tool and without explaining why. That is the common case.
- You have at most {max_turns} turns: read everything you need in your first turn, then make \
all the writes in the next; batch independent tool calls into one turn.

## Existing memories (type, file, last modified, description)
{manifest or "(none yet)"}
"""


def build_user_message(conversation: str, project_root: Path) -> str:
    return (
        f"The conversation below took place in the project {project_root}. Extract the memories "
        "worth keeping, following your instructions.\n\n"
        f"<conversation>\n{conversation}\n</conversation>"
    )
