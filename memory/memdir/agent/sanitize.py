"""What Claude Code does to memory text before the model sees it (2.1.328 and later), and what
memdir does beyond it to the memories it injects itself.

The agent's two steps, in this order: characters that render as nothing or control the terminal
are removed and every line break becomes ``\\n``; then the opening ``<`` of tags the agent uses
for its own messages (``<system-reminder>``, ``<command-name>`` …) is written ``<\\`` so that a
memory cannot pose as one. memdir reproduces both on plain ASCII text (:func:`for_model`: what
the agent would inject of MEMORY.md must be predicted exactly).

What memdir injects itself (path B's recall: the hook, ``memory_recall``, ``memory/recall``,
``memdir recall``) must be no more dangerous than what the agent injects, and a memory dir is
written by strangers. So there :func:`neutralize_tags` runs with ``strict``: the same ``<\\``
also goes into the tags models read as tool calls, tool results, turns and system text
(``<function_calls>``, ``<invoke``, ``<tool_result>``, ``<system>``, ``<|im_start|>``, any
``<ns:name>``), into look-alike forms of every such tag (full-width or angle-quote brackets,
Cyrillic or Greek letters, invisible joiners between letters), and a ``\\`` goes before a turn
marker (``Human:``, ``Assistant:``, ``H:``, ``A:``, ``User:``, ``System:``) starting a paragraph.
Ordinary HTML (``<div>``, ``<details>``) and Markdown are left as they are.
"""

from __future__ import annotations

import functools
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


@functools.lru_cache(maxsize=4096)
def _dropped(char: str) -> bool:
    """Whether ``char`` is removed (a text repeats few distinct characters: each is judged
    once, not once per text)."""
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


def neutralize_tags(text: str, *, strict: bool = False) -> str:
    """``<system-reminder>`` → ``<\\system-reminder>`` (and every other agent tag).

    ``strict`` (what memdir injects): also model tags, namespaced tags and look-alikes of all of
    them, and turn markers starting a paragraph (see the module's docstring).
    """
    if "<" in text:
        text = _OPENER.sub(r"<\\", text)
    return _neutralize_strict(text) if strict else text


#: Tags models read as tool calls, tool results, turns and system text (Anthropic's formats and
#: other vendors' chat templates), which the agent does not neutralise in memories. Common
#: words (``system``, ``user``) count only as a whole tag name: ``<user>``, ``</user >``.
MODEL_TAGS = (
    "function_calls",
    "function_call",
    "function_results",
    "function_result",
    "invoke",
    "parameter",
    "tool_use",
    "tool_result",
    "tool_results",
    "tool_call",
    "tool_calls",
    "tool_response",
    "tool_use_error",
    "system",
    "system-prompt",
    "system-reminder",
    "human",
    "user",
    "assistant",
    "thinking",
    "redacted_thinking",
    "im_start",
    "im_end",
    "im_sep",
    "endoftext",
    "start_of_turn",
    "end_of_turn",
)
#: Brackets that read as ``<`` or ``>`` (full-width, small form, angle quotes, math angles,
#: Canadian syllabics, modifier letters); NFKC folds only some of them.
_OPEN_LOOKALIKES = "<\uff1c\ufe64\u2039\u3008\u2329\u27e8\u276e\u276c\u29fc\u02c2\u1438\u300a\u00ab"
_CLOSE_LOOKALIKES = (
    ">\uff1e\ufe65\u203a\u3009\u232a\u27e9\u276f\u276d\u29fd\u02c3\u1433\u300b\u00bb"
)
#: Letters that look like Latin ones (Cyrillic, Greek, small capitals, dotless i), and dashes,
#: colons, slashes and closing brackets that look like ``-``, ``:``, ``/`` and ``>``: a tag name
#: written with them reads as the tag to a model but not to a matcher of ASCII names.
_CONFUSABLES = str.maketrans(
    "авекмнорстухѕіјԁһӏԛԝь"  # Cyrillic
    "αβεηικνορτυχ"  # Greek
    "ıɡʏᴀʙᴄᴅᴇʜɪᴊᴋʟᴍɴᴏᴘʀꜱᴛᴜᴠᴡᴢ"  # small capitals, dotless i, script g
    "\u2010\u2011\u2012\u2013\u2014\u2212\ufe63\ua789\u2236\u02d0\u2044\u2215"
    + _CLOSE_LOOKALIKES[1:],
    "abekmhopctyxsijdhlqwb"
    "abenikvoptux"
    "igyabcdehijklmnoprstuvwz"
    "-------:::"
    "//" + ">" * (len(_CLOSE_LOOKALIKES) - 1),
)
#: Characters skipped when reading a tag name the way a model would: joiners, variation
#: selectors, and whatever else renders as nothing (the agent keeps some of them).
_INVISIBLE_IN_NAMES = frozenset({0x200C, 0x200D, 0xFE0E, 0xFE0F})
#: How far after a bracket a tag name is looked for (the agent's own tags are also matched
#: further away by :data:`_OPENER`, as the agent does).
_NAME_WINDOW = 48
_NAMES = "|".join(_tag_pattern(t) for t in AGENT_TAGS)
_STRICT_NAME = re.compile(
    # The agent's rule, on the folded text: anything but a name character, then a known name.
    r"[^a-z0-9_\-<>]*?(?:(?:" + _NAMES + r")(?:[^a-z0-9_\-]|$)|antml:)"
    # A model tag: only blanks, ``/``, ``|`` or ``!`` before it, a whole name.
    r"|[\s/|!]*(?:" + "|".join(_tag_pattern(t) for t in MODEL_TAGS) + r")(?=[\s/>|]|$)"
    # Any namespaced tag, ``<ns:name`` or ``</ns:name`` (not ``<https://…>``, ``<mailto:a@b>``).
    r"|[\s/]*[a-z_][\w.\-]*:[a-z_][\w.\-]*(?=[\s/>]|$)"
)
_BRACKET = re.compile("[" + _OPEN_LOOKALIKES + "](?!\\\\)")
#: A line's first non-blank character (emphasis allowed before it), and whether a blank line
#: (or the text's start) comes before: where a turn marker starts a turn.
_LINE_START = re.compile(r"(\A|\n[ \t]*\n|\n)[ \t*_]*(?=\S)")
#: Turn markers as chat transcripts write them. ``Human:`` and ``Assistant:`` on any line;
#: the shorter or commoner ones only starting a paragraph (``A:`` in a FAQ's list stays).
_TURN_MARKER = re.compile(r"(?:human|assistant)\s*:")
_PARAGRAPH_TURN_MARKER = re.compile(r"(?:human|assistant|user|system|h|a)\s*:")


def _folded(text: str, start: int, width: int) -> str:
    """``width`` characters of ``text`` from ``start`` as a model reads a tag name: look-alikes
    folded to ASCII, invisible characters skipped, lower case."""
    out: list[str] = []
    size = 0
    # Bounded: at most this many characters are looked at, invisible or not.
    for char in text[start : start + 4 * width]:
        code = ord(char)
        if code in _INVISIBLE_IN_NAMES or _dropped(char):
            continue
        folded = unicodedata.normalize("NFKC", char) if code > 0x7F else char
        out.append(folded.translate(_CONFUSABLES).lower())
        size += len(folded)
        if size >= width:
            break
    return "".join(out)


def _neutralize_strict(text: str) -> str:
    parts: list[str] = []
    last = 0
    for match in _BRACKET.finditer(text):
        end = match.end()
        if _STRICT_NAME.match(_folded(text, end, _NAME_WINDOW)):
            parts.append(text[last:end])
            parts.append("\\")
            last = end
    parts.append(text[last:])
    text = "".join(parts)
    parts = []
    last = 0
    for match in _LINE_START.finditer(text):
        start = match.end()
        marker = _TURN_MARKER if match.group(1) == "\n" else _PARAGRAPH_TURN_MARKER
        if marker.match(_folded(text, start, 12)):
            parts.append(text[last:start])
            parts.append("\\")
            last = start
    parts.append(text[last:])
    return "".join(parts)


def for_model(text: str) -> str:
    """Both steps, as the agent applies them to memory text it injects."""
    return neutralize_tags(strip_invisible(text))
