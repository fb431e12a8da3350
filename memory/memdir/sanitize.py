"""What Claude Code does to memory text before the model sees it (2.1.328 and later).

Two steps, in this order: characters that render as nothing or control the terminal are removed
and every line break becomes ``\\n``; then the opening ``<`` of tags the agent uses for its own
messages (``<system-reminder>``, ``<command-name>`` …) is written ``<\\`` so that a memory cannot
pose as one. memdir reproduces both on plain ASCII text. The agent also catches look-alike forms
(full-width brackets, Cyrillic letters, invisible characters between letters); memdir does not,
and docs/agent-fidelity.md says so.
"""

from __future__ import annotations

import re
import unicodedata

#: Kept although they are format characters: they change how emoji and scripts render.
_KEPT = frozenset({0x200C, 0x200D, 0xFE0E, 0xFE0F, 0x09, 0x0A, 0x0D})
_DROPPED_CATEGORIES = frozenset({"Cf", "Co", "Cn", "Cs"})
#: Unicode's Default_Ignorable_Code_Point ranges (DerivedCoreProperties), not in unicodedata.
_DEFAULT_IGNORABLE = (
    (0x00AD, 0x00AD),
    (0x034F, 0x034F),
    (0x061C, 0x061C),
    (0x115F, 0x1160),
    (0x17B4, 0x17B5),
    (0x180B, 0x180F),
    (0x200B, 0x200F),
    (0x202A, 0x202E),
    (0x2060, 0x206F),
    (0x3164, 0x3164),
    (0xFE00, 0xFE0F),
    (0xFEFF, 0xFEFF),
    (0xFFA0, 0xFFA0),
    (0xFFF0, 0xFFF8),
    (0x1BCA0, 0x1BCA3),
    (0x1D173, 0x1D17A),
    (0xE0000, 0xE0FFF),
)
_LINE_BREAKS = re.compile("\r\n?|[\u2028\u2029]")
#: Cheap test: only text holding one of these needs the per-character pass.
_SUSPECT = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]|[^\x00-\x7f]")

#: The agent's own message tags (2.1.328); a memory holding one is neutralised.
AGENT_TAGS = (
    "bash-input",
    "bash-stdout",
    "bash-stderr",
    "bash-exit-code",
    "local-command-stdout",
    "local-command-stderr",
    "local-command-caveat",
    "command-name",
    "command-message",
    "command-args",
    "task-notification",
    "agent-message",
    "teammate-message",
    "cross-session-message",
    "remote-review",
    "slack-ping",
    "slack-tag-message",
    "tick",
    "fetched-web-content",
    "untrusted-widget-state",
    "coordinator-relay",
    "artifact-type-instructions",
    "cowritten-artifact-html",
    "artifact-file-content",
    "artifact-origin-notes",
    "artifact-stored-declaration",
    "system-reminder",
    "system_reminder",
    "function_results",
    "tool_use_error",
    "sandbox_violations",
    "persisted-output",
    "total_tokens",
    "user-prompt-submit-hook",
)


def _tag_pattern(tag: str) -> str:
    # ``-`` and ``_`` stand for each other, as in the agent's matcher.
    return "".join("[-_]" if c in "-_" else re.escape(c) for c in tag)


#: ``<`` (not already followed by ``\``), then anything but a name character or bracket (``/``,
#: blanks, ``!`` …), then a known tag name ending at a non-name character; or ``<``.
_OPENER = re.compile(
    r"<(?!\\)(?=(?:[^A-Za-z0-9_\-<>]*?(?:"
    + "|".join(_tag_pattern(t) for t in AGENT_TAGS)
    + r")(?:[^A-Za-z0-9_\-]|$))|[^A-Za-z0-9_\-<>]*?antml:)",
    re.IGNORECASE,
)


def _ignorable(code: int) -> bool:
    return any(low <= code <= high for low, high in _DEFAULT_IGNORABLE)


def _dropped(char: str) -> bool:
    code = ord(char)
    if code in _KEPT:
        return False
    if code < 32 or 127 <= code <= 159:
        return True
    return unicodedata.category(char) in _DROPPED_CATEGORIES or _ignorable(code)


def strip_invisible(text: str) -> str:
    """Line breaks unified to ``\\n``; control, format, private-use, unassigned and
    default-ignorable characters removed (zero-width joiners and variation selectors 15/16
    stay)."""
    text = _LINE_BREAKS.sub("\n", text)
    if _SUSPECT.search(text) is None:
        return text
    # Each distinct character is judged once; a Chinese index repeats a few thousand of them.
    dropped = {ord(c): None for c in set(text) if _dropped(c)}
    return text.translate(dropped) if dropped else text


def neutralize_tags(text: str) -> str:
    """``<system-reminder>`` → ``<\\system-reminder>`` (and every other agent tag)."""
    if "<" not in text:
        return text
    return _OPENER.sub(r"<\\", text)


def for_model(text: str) -> str:
    """Both steps, as the agent applies them to memory text it injects."""
    return neutralize_tags(strip_invisible(text))
