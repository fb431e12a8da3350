"""Rules about a topic file's frontmatter (MEM101-MEM105, MEM115, MEM116, MEM124): is it there,
is it YAML, are the fields the agent reads present and valid, does the prefetch scan see it at
all, does the agent's own rewrite of the frontmatter keep what the file says, and does a `` #``
cut a value short.

What the parser found is read from its problems' structured fields (``kind``, ``key``), never
from their message text.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from memdir import constants as C
from memdir.agent.topic import comment_cut, field_key
from memdir.fixes import plan
from memdir.fixes.text import agent_name, ascii_slug, file_stem
from memdir.lint.diagnostic import Diagnostic
from memdir.lint.rules.base import (
    Rule,
    TopicView,
    field_span,
    head_span,
    index_in_other_case,
    named_as_no_memory,
    or_list,
)
from memdir.lint.rules.descriptions import description_problem
from memdir.model import Span

if TYPE_CHECKING:
    from memdir.lint.engine import LintContext

_TYPES = or_list(C.MEMORY_TYPES)

# --- MEM101 --------------------------------------------------------------------------------------


def _no_frontmatter(view: TopicView, ctx: LintContext) -> list[Diagnostic]:
    topic = view.topic
    if not (view.usable and "no-frontmatter" in view.kinds) or named_as_no_memory(topic.rel_path):
        return []
    if index_in_other_case(topic.rel_path):
        return []
    return [
        ctx.diag(
            "MEM101",
            topic.path,
            topic.rel_path,
            head_span(topic.text),
            "no frontmatter: the prefetch manifest shows this file without type or "
            "description, and the selector (which never sees bodies) has no reason to pick "
            "it; add name, description and type",
            plan.frontmatter_skeleton(topic, vague=description_problem),
        )
    ]


MEM101 = Rule(
    code="MEM101",
    auto_memory_only="the frontmatter is what the prefetch's manifest shows the selector",
    name="no-frontmatter",
    severity="error",
    scope="topic",
    summary="A topic file has no YAML frontmatter (a file named in capitals, `README.md`, is a "
    "document for people, and one named for a day, `2026-03-13.md`, a session log: neither is "
    "reported).",
    why="The prefetch manifest shows it without type or description, so the selector "
    "(which never sees bodies) has no reason to pick it.",
    example="`# Deploy notes` as the first line",
    remedy="Add `---` / `name:` / `description:` / `type:` / `---`. The fix adds them above the "
    "text: the name from the file name, the description from the first sentence of the file's "
    "opening prose (never a dated list item, a heading alone, a link line or a line like "
    "`Updated: ...`), and the type the file states. In the editor you choose the type.",
    fixable="safe",
    safe_when="the file states its type (its name or folder, as in `feedback_testing.md`, a "
    "heading like `# Feedback: ...` or a `Type: ...` line) and its opening prose gives a "
    "description MEM109 accepts",
    topic=_no_frontmatter,
)


# --- MEM102 --------------------------------------------------------------------------------------


def _malformed_frontmatter(view: TopicView, ctx: LintContext) -> list[Diagnostic]:
    topic = view.topic
    found = [
        ctx.diag(
            "MEM102",
            topic.path,
            topic.rel_path,
            problem.span,
            f"{problem.message}: the agent reads no name, description or type from this file",
        )
        for problem in view.yaml_errors
    ]
    if view.not_mapping is not None:
        found.append(
            ctx.diag(
                "MEM102",
                topic.path,
                topic.rel_path,
                view.not_mapping.span,
                f"{view.not_mapping.message}: the agent reads no name, description or type from it",
            )
        )
    return found


MEM102 = Rule(
    code="MEM102",
    name="malformed-frontmatter",
    severity="error",
    scope="topic",
    summary="The frontmatter is not valid YAML, even as Claude Code retries it (values holding "
    "a YAML indicator quoted, tabs as spaces), or not a mapping of fields; the range is the YAML "
    "parser's error position.",
    why="The agent reads no name, description or type from the file: it is an untyped, "
    "undescribed memory.",
    example='`description: "unclosed`',
    remedy="Fix the YAML (quote values that contain `: `, `#` or start with `[`).",
    topic=_malformed_frontmatter,
)


# --- MEM103 --------------------------------------------------------------------------------------

_FIELD_WHY = {
    "description": (
        "the prefetch manifest line shows no description, so the selector cannot tell what "
        "this memory holds and will rarely choose it"
    ),
    "type": (
        f"the manifest line has no [type] tag ({_TYPES}), so the "
        "selector cannot tell a preference from a project fact"
    ),
    "name": "`[[name]]` links cannot reach this memory and duplicates cannot be told apart",
}


#: An empty ``name`` is often the agent's doing (MEM115).
_EMPTY_NAME = (
    " (Claude Code writes an empty name when a memory's name has no ASCII letter or digit: "
    "use an ASCII kebab-case name)"
)


def _missing_fields(view: TopicView, ctx: LintContext) -> list[Diagnostic]:
    topic = view.topic
    fm = topic.frontmatter
    if topic.description and topic.raw_type and topic.name and not view.bad_fields:
        return []  # nearly every file
    if not (view.usable and view.fields_readable):
        return []
    assert fm is not None
    found: list[Diagnostic] = []
    values = {"description": topic.description, "type": topic.raw_type, "name": topic.name}
    for key in ("description", "type", "name"):
        problem = view.bad_fields.get(key)
        if problem is not None:
            found.append(
                ctx.diag(
                    "MEM103",
                    topic.path,
                    topic.rel_path,
                    problem.span,
                    f"{problem.message}, so the agent reads no {key}: {_FIELD_WHY[key]}",
                )
            )
            continue
        if values[key]:
            continue
        source = field_key(fm, key)
        present = source in fm.key_spans or key in fm.data
        state = "empty" if present else "missing"
        hint = _EMPTY_NAME if present and key == "name" else ""
        span = (fm.value_spans.get(source) if source != key else None) or field_span(topic, key)
        found.append(
            ctx.diag(
                "MEM103",
                topic.path,
                topic.rel_path,
                span,
                f"{state} `{key}`: {_FIELD_WHY[key]}{hint}",
            )
        )
    return found


MEM103 = Rule(
    code="MEM103",
    auto_memory_only="the fields are what the prefetch's manifest shows the selector",
    name="missing-field",
    severity="warning",
    scope="topic",
    summary="`name`, `description` or `type` is missing, empty, or not a plain string "
    "(`type` may also be nested as `metadata.type`).",
    why="`description` and `type` are all the selector sees of a memory (the manifest "
    "line); `name` is what `[[name]]` links and duplicate checks use.",
    example="`description:` with no value",
    remedy="Fill in the field.",
    topic=_missing_fields,
)


# --- MEM104 --------------------------------------------------------------------------------------

_TYPE_SYNONYMS: dict[str, str] = {
    "preference": "user",
    "preferences": "user",
    "profile": "user",
    "role": "user",
    "person": "user",
    "correction": "feedback",
    "corrections": "feedback",
    "guidance": "feedback",
    "style": "feedback",
    "workflow": "feedback",
    "decision": "project",
    "decisions": "project",
    "background": "project",
    "context": "project",
    "note": "project",
    "notes": "project",
    "link": "reference",
    "links": "reference",
    "docs": "reference",
    "dashboard": "reference",
    "external": "reference",
    "resource": "reference",
}


def suggest_type(raw: str) -> str | None:
    """The nearest of the four types: case fixed, close spelling, or a common synonym."""
    lowered = raw.strip().lower()
    if lowered in C.MEMORY_TYPES:
        return lowered
    if lowered in _TYPE_SYNONYMS:
        return _TYPE_SYNONYMS[lowered]
    import difflib  # only for an unknown type: lint of a clean dir never needs it

    close = difflib.get_close_matches(lowered, C.MEMORY_TYPES, n=1, cutoff=0.6)
    return close[0] if close else None


def _unknown_type(view: TopicView, ctx: LintContext) -> list[Diagnostic]:
    topic = view.topic
    if topic.type is not None or not topic.raw_type or not view.fields_readable:
        return []
    raw = topic.raw_type
    fm = topic.frontmatter
    assert fm is not None
    span = fm.value_spans.get(field_key(fm, "type"), field_span(topic, "type"))
    suggestion = suggest_type(raw)
    hint = f"; did you mean `{suggestion}`?" if suggestion else ""
    fix = plan.correct_type(topic, suggestion) if suggestion is not None else None
    return [
        ctx.diag(
            "MEM104",
            topic.path,
            topic.rel_path,
            span,
            f"unknown type `{raw}`: the agent accepts only {_TYPES} "
            f"(case matters) and treats anything else as no type, so the manifest shows no "
            f"[type] tag{hint}",
            fix,
        )
    ]


MEM104 = Rule(
    code="MEM104",
    auto_memory_only="the type is what the prefetch's manifest shows the selector",
    name="unknown-type",
    severity="warning",
    scope="topic",
    summary=f"`type` is not one of {', '.join(f'`{t}`' for t in C.MEMORY_TYPES)} (case matters); "
    "the nearest one is suggested.",
    why="The agent treats any other value as no type, so the manifest line loses its `[type]` tag.",
    example="`type: Project`",
    remedy="Use the suggested type (`project`). A synonym (`decision` for `project`) is a "
    "guess: the editor offers it first, then every other type.",
    fixable="safe",
    safe_when="the value is one of the types in another case, in the plural or with one letter "
    "wrong (`Project`, `feedbacks`, `refrence`)",
    topic=_unknown_type,
)


# --- MEM105 --------------------------------------------------------------------------------------


def _frontmatter_beyond_scan(view: TopicView, ctx: LintContext) -> list[Diagnostic]:
    topic = view.topic
    fm = topic.frontmatter
    if "unclosed-frontmatter" in view.kinds:
        return [
            ctx.diag(
                "MEM105",
                topic.path,
                topic.rel_path,
                Span(0, 0, 0, 3),
                "frontmatter opened with --- is never closed: the scan reads no name, "
                "description or type, and the whole file counts as body",
            )
        ]
    if fm is not None and fm.close_line is not None and fm.close_line >= C.SCAN_MAX_LINES:
        return [
            ctx.diag(
                "MEM105",
                topic.path,
                topic.rel_path,
                Span(fm.close_line, 0, fm.close_line, 3),
                f"frontmatter closes on line {fm.close_line + 1}, past the first "
                f"{C.SCAN_MAX_LINES} lines the prefetch scan reads: the scan sees no "
                "description or type for this file. Move notes out of the frontmatter",
            )
        ]
    return []


MEM105 = Rule(
    code="MEM105",
    auto_memory_only=(
        "the prefetch scan reads the first lines of a file; a file read with tools is read whole"
    ),
    name="frontmatter-beyond-scan",
    severity="error",
    scope="topic",
    summary=f"The frontmatter is not closed within the first {C.SCAN_MAX_LINES} lines (or never "
    f"closed).",
    why=f"The prefetch scan reads only the first {C.SCAN_MAX_LINES} lines of each file: it sees no "
    "frontmatter at all, so no description and no type.",
    example=f"a frontmatter block whose closing `---` is on line {C.SCAN_MAX_LINES + 4}",
    remedy="Shorten the frontmatter (move notes into the body) or close it.",
    topic=_frontmatter_beyond_scan,
)


# --- MEM115 --------------------------------------------------------------------------------------


def _name_lost_by_agent(view: TopicView, ctx: LintContext) -> list[Diagnostic]:
    topic = view.topic
    fm = topic.frontmatter
    name = topic.name
    if not name or fm is None or agent_name(name):
        return []  # nearly every file; a missing name is MEM103's
    slug = ascii_slug(file_stem(topic.rel_path))
    fix = plan.set_name(topic, slug, "Use the file name") if slug else None
    return [
        ctx.diag(
            "MEM115",
            topic.path,
            topic.rel_path,
            field_span(topic, "name"),
            f"`{name}` has no ASCII letter or digit: Claude Code rewrites this name to an empty "
            "string the next time it writes the file, which breaks [[name]] links to it; use an "
            "ASCII kebab-case name (the description can stay in any language)",
            fix,
        )
    ]


MEM115 = Rule(
    code="MEM115",
    auto_memory_only="only auto memory's own writes rewrite a memory's frontmatter",
    name="name-lost-on-write",
    severity="warning",
    scope="topic",
    summary="The `name` has no ASCII letter or digit (a name in Chinese, Japanese, Cyrillic...).",
    why="Claude Code rewrites a memory's frontmatter the first time it writes the file and turns "
    "its `name` into a lowercase slug of the name's ASCII letters and digits: a name with none "
    "becomes an empty string, which breaks `[[name]]` links to it and leaves the memory "
    "without a name.",
    example="`name: 数据保留策略`",
    remedy="Use an ASCII kebab-case name such as `data-retention`; description and body can "
    "stay in any language. The editor offers the file name's slug when it has one.",
    fixable="editor",
    topic=_name_lost_by_agent,
)


# --- MEM116 --------------------------------------------------------------------------------------


def _type_conflict(view: TopicView, ctx: LintContext) -> list[Diagnostic]:
    topic = view.topic
    fm = topic.frontmatter
    if fm is None or "metadata" not in fm.data or not view.fields_readable:
        return []
    top = fm.data.get("type")
    metadata = fm.data["metadata"]
    if top is None or not isinstance(metadata, dict) or "type" not in metadata:
        return []
    if metadata["type"] == top:
        return []
    nested = "empty" if metadata["type"] is None else str(metadata["type"])
    return [
        ctx.diag(
            "MEM116",
            topic.path,
            topic.rel_path,
            fm.value_spans.get("type", field_span(topic, "type")),
            f"two types: the agent reads `metadata.type` ({nested}) and ignores this "
            f"top-level `type: {top!s}`, which it drops the next time it writes the file; keep "
            "one of them",
        )
    ]


MEM116 = Rule(
    code="MEM116",
    auto_memory_only="the prefetch's manifest reads `metadata.type`",
    name="type-conflict",
    severity="warning",
    scope="topic",
    summary="The frontmatter has a top-level `type` and a different `metadata.type`.",
    why="The agent reads `metadata.type` and ignores the top-level one (it drops it when it next "
    "writes the file), so editing the top-level `type` changes nothing the agent sees.",
    example="`type: user` above `metadata:` / `  type: reference`",
    remedy="Keep one `type`: the nested one is the layout the agent writes.",
    topic=_type_conflict,
)


# --- MEM124 --------------------------------------------------------------------------------------

#: The fields a person writes as text, shown to the agent: a comment on their line is a mistake.
#: (On other lines, ``lang: en  # or fr``, a comment is what it says.)
COMMENT_CUT_FIELDS = ("name", "description")
#: How much of a long value the message quotes: its end, where the cut is.
_SHOWN = 60


def _cut_by_comment(view: TopicView, ctx: LintContext) -> list[Diagnostic]:
    topic = view.topic
    fm = topic.frontmatter
    if fm is None or not view.fields_readable or "#" not in topic.text:
        return []  # nearly every file
    found: list[Diagnostic] = []
    for key in COMMENT_CUT_FIELDS:
        cut = comment_cut(topic, key)
        if cut is None:
            continue
        shown = cut.read if len(cut.read) <= _SHOWN else "…" + cut.read[-_SHOWN:].lstrip()
        reads = f"reads `{shown}`" if cut.read else f"reads no {key} at all"
        found.append(
            ctx.diag(
                "MEM124",
                topic.path,
                topic.rel_path,
                fm.value_spans[key],  # the whole line's value: what is read and what is cut
                f"`{key}` cut by a YAML comment: ` #` starts a comment, so the agent {reads} "
                f"instead of the whole line; quote the value",
                plan.quote_value(topic, key, cut.written, safe=cut.glued),
            )
        )
    return found


MEM124 = Rule(
    code="MEM124",
    name="value-cut-by-comment",
    severity="warning",
    scope="topic",
    summary="An unquoted `name` or `description` holds ` #`: YAML reads the rest of the line as "
    "a comment, so the value ends before it (`description: Fix for issue #123` is read as "
    "`Fix for issue`).",
    why="The agent parses the frontmatter as YAML: the selector sees only the part before the "
    "` #`, often a word or a date that says nothing of the memory.",
    example="`description: Decisions from PR #88 on retry limits`",
    remedy='Quote the value (`description: "Decisions from PR #88 on retry limits"`). '
    "`--fix` quotes it when the `#` starts a word (`#88`, `#tag`); after `# ` it may be a "
    "comment someone meant, and the editor offers the quotes for a person to accept.",
    fixable="safe",
    topic=_cut_by_comment,
)

RULES = (MEM101, MEM102, MEM103, MEM104, MEM105, MEM115, MEM116, MEM124)
