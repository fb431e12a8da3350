"""Rules about a file's text as read (MEM106, MEM110, MEM112, MEM113, MEM130): the injection
cut, secrets, encoding and readability. All but MEM106 check MEMORY.md's text too.

MEM106 never reimplements the cut: it calls :func:`memdir.recall.surface.cut_for_injection`.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from memdir import constants as C
from memdir.lint.diagnostic import Diagnostic
from memdir.lint.rules.base import IndexView, Rule, TopicView, offset_span
from memdir.model import Problem, Span
from memdir.secrets import SecretMatch, find_secrets
from memdir.textio import MAX_PARSE_BYTES

if TYPE_CHECKING:
    from memdir.lint.engine import LintContext

# --- MEM106 --------------------------------------------------------------------------------------


def injection_cut(text: str, size: int) -> tuple[int, int, str, int] | None:
    """Where path B stops injecting this file: (line, column, reason, bytes left out), or None
    if it fits. ``size`` is the file's size in bytes (``text`` may be only its first part)."""
    if size <= C.SURFACE_MAX_BYTES and text.count("\n") < C.SURFACE_MAX_LINES:
        return None  # cannot exceed either cap: skip the line-by-line cut
    from memdir.recall.surface import (
        cut_for_injection,  # only for files over a cap: keep start-up light
    )

    kept, reason = cut_for_injection(text)
    if reason is None:
        return None
    kept_lines = kept.split("\n")
    lines = text.split("\n", len(kept_lines))
    last = len(kept_lines) - 1
    hidden = max(size - len(kept.encode("utf-8", "surrogatepass")), 0)
    if len(kept_lines[last]) < len(lines[last]):
        return last, len(kept_lines[last]), reason, hidden  # cut inside one giant line
    return len(kept_lines), 0, reason, hidden


def _body_past_injection_cap(view: TopicView, ctx: LintContext) -> list[Diagnostic]:
    topic = view.topic
    cut = injection_cut(topic.text, topic.size) if view.usable else None
    if cut is None:
        return []
    line, col, reason, hidden = cut
    if hidden < C.INJECTION_CUT_MIN_SHARE * topic.size:
        # Only the last lines or so are left out: the agent is told to read the rest, and
        # moving a closing bullet up is not worth a finding.
        return []
    lines = topic.text.split("\n", line + 1)
    end = len(lines[line].rstrip("\r")) if line < len(lines) else col
    note = ""
    if "too-large" in view.kinds:
        note = f" (the file is {topic.size:,} bytes; lint read the first {MAX_PARSE_BYTES:,})"
    return [
        ctx.diag(
            "MEM106",
            topic.path,
            topic.rel_path,
            Span(line, col, line, max(end, col)),
            f"not injected from here on: path B injects only the first "
            f"{C.SURFACE_MAX_LINES} lines or {C.SURFACE_MAX_BYTES:,} bytes of a memory "
            f"and this file is {reason}; the agent sees the part above this line and a "
            f"note to read the rest itself{note}. Keep the essentials above it or split "
            "the file",
        )
    ]


MEM106 = Rule(
    code="MEM106",
    auto_memory_only=(
        "the cap is on what the prefetch injects of a memory; a file read with tools is read whole"
    ),
    name="body-past-injection-cap",
    severity="info",
    scope="topic",
    summary=f"The file is longer than path B injects ({C.SURFACE_MAX_LINES} lines or "
    f"{C.SURFACE_MAX_BYTES:,} bytes); the range is the first line that is not injected. A file "
    f"that overshoots by less than {C.INJECTION_CUT_MIN_SHARE:.0%} of its bytes (its last "
    "lines) is not reported.",
    why="When the memory is recalled, the agent sees only the part before this line, plus "
    "a note to read the rest itself.",
    example=f"line {C.SURFACE_MAX_LINES + 1} of a long runbook, or the line that crosses byte "
    f"{C.SURFACE_MAX_BYTES:,}",
    remedy="Keep the essentials above the cut, or split the file.",
    topic=_body_past_injection_cap,
)


# --- MEM110 --------------------------------------------------------------------------------------


def secret_diagnostics(
    text: str, secrets: list[SecretMatch], ctx: LintContext, path: Path, rel: str, code: str
) -> Iterator[Diagnostic]:
    """``code`` for each of ``secrets`` (from :func:`find_secrets` on ``text``) that it
    reports: MEM110 a key of a known format, MEM130 a value found by its credential's name."""
    for secret in secrets:
        if secret.public or secret.by_name != (code == "MEM130"):
            continue
        what = "likely secret" if code == "MEM110" else "possible credential"
        yield ctx.diag(
            code,
            path,
            rel,
            offset_span(text, secret.start, secret.end),
            f"{what}: {secret.kind} ({secret.label}, {secret.end - secret.start} "
            "characters); memories are injected into model context and often synced or "
            "committed, so it leaks to every session and every copy. Remove it and rotate the "
            "credential",
        )


@functools.lru_cache(maxsize=32)
def _secrets_of(text: str) -> list[SecretMatch]:
    # MEM110 and MEM130 read the same matches of the same text.
    return find_secrets(text)


def _in_topic(code: str) -> Callable[[TopicView, LintContext], list[Diagnostic]]:
    def check(view: TopicView, ctx: LintContext) -> list[Diagnostic]:
        topic = view.topic
        secrets = _secrets_of(topic.text) if view.usable else []
        if not secrets:
            return []
        return list(secret_diagnostics(topic.text, secrets, ctx, topic.path, topic.rel_path, code))

    return check


def _in_index(code: str) -> Callable[[IndexView, LintContext], list[Diagnostic]]:
    def check(view: IndexView, ctx: LintContext) -> list[Diagnostic]:
        text = view.index.text
        secrets = _secrets_of(text)
        return list(secret_diagnostics(text, secrets, ctx, ctx.index_path, C.INDEX_FILENAME, code))

    return check


MEM110 = Rule(
    code="MEM110",
    name="likely-secret",
    severity="error",
    scope="topic",
    summary="Something that looks like a credential: some 80 kinds of API keys and tokens by their "
    "published prefixes and shapes (Anthropic, OpenAI, AWS, GitHub, GitLab, Slack, Stripe, "
    "Google, Azure, npm, PyPI, Hugging Face, Twilio, SendGrid, Mailgun, Discord, Telegram, "
    "DigitalOcean, Shopify, Square, Linear, Notion, Atlassian, Cloudflare, Supabase, Doppler, "
    "Grafana, New Relic, Sentry, Vault, … as gitleaks' rules and GitHub secret scanning give "
    "them), webhook URLs, JWTs, private key blocks, passwords in URLs, bearer and basic "
    "`Authorization` values. Placeholders (`sk-...`, `<your-token>`, `xxxx`, `${TOKEN}`, "
    "`abc123xyz`), a URL's password made of its user's name (`app:app`, `app:app_local`: a "
    "development default), commit hashes, UUIDs, keys cut with an ellipsis and keys a "
    "service makes "
    "public (a Firebase web app's API key, named so on its line or just above it, which "
    "output still redacts; `sb_publishable_…`, `pk_live_…`) are not. Invisible characters "
    "(zero-width space, joiners, word joiner, BOM, soft hyphen) are ignored, so a key split "
    "by one is still found. The message, and any fix title quoting the text, never repeats "
    "the secret. A value with no format of its own, found by the credential's name it is "
    "assigned to, is MEM130's. The memory tool refuses a write that would leave what this "
    "rule or MEM130 finds in a memory or its name.",
    why="Memories are injected into model context and often synced or committed; a secret "
    "there leaks to every session and every copy.",
    example="`The staging key is sk-ant-api03-…`",
    remedy="Remove it, rotate the credential, and refer to where it is stored instead.",
    topic=_in_topic("MEM110"),
    index=_in_index("MEM110"),
)


MEM130 = Rule(
    code="MEM130",
    name="possible-credential",
    severity="error",
    scope="topic",
    summary="A random-looking value assigned to a credential's name, with no format of its "
    'own that says whose key it is: `api_key`, `DB_PASSWORD`, `clientSecret`, `"auth": …`, '
    "`export X_TOKEN=…`, a hex key after `api_key:`, a password after `Pass:`. A record's key "
    "(`fileKey`, `cache_key`, `File key:`, a `key` with no name before it), identifiers "
    "(`user_id_2`), a UUID under an identifying name, placeholders and a title after the name "
    "(`FastPass: Subscription tiers`) are not. The memory tool refuses such a write too.",
    why="Memories are injected into model context and often synced or committed; a secret "
    "there leaks to every session and every copy. Without a known format, the value may also "
    "be an id or a sample login the memory keeps on purpose.",
    example="`DB_PASSWORD=Harborlight2026`",
    remedy="Remove it, rotate the credential, and refer to where it is stored instead.",
    preview=True,
    precision="5 of 8 judged findings right (62%) on the 281 real memory dirs of the samples "
    "(2026-12), after the fixes they showed (record keys in prose, titles after a name): "
    "sample logins a memory gives the agent for testing, a storage key's name in a constant "
    "named `…Key`, a .NET `PublicKeyToken`",
    topic=_in_topic("MEM130"),
    index=_in_index("MEM130"),
)


# --- MEM112, MEM113: what the reader reported ----------------------------------------------------


def _undecodable(
    problems: tuple[Problem, ...], ctx: LintContext, path: Path, rel: str
) -> list[Diagnostic]:
    return [
        ctx.diag(
            "MEM112",
            path,
            rel,
            problem.span,
            f"not valid UTF-8 ({problem.detail}): the agent reads undecodable bytes as "
            "U+FFFD, so this text reaches the model garbled; re-save the file as UTF-8",
        )
        for problem in problems
        if problem.kind == "not-utf8"
    ]


MEM112 = Rule(
    code="MEM112",
    name="not-utf8",
    severity="warning",
    scope="topic",
    summary="The file is not valid UTF-8; the range is the first bad byte.",
    why="The agent reads undecodable bytes as U+FFFD, so this text reaches the model garbled.",
    example="a file saved as Latin-1 (`caf\\xe9`)",
    remedy="Re-save the file as UTF-8.",
    topic=lambda view, ctx: _undecodable(
        view.topic.problems, ctx, view.topic.path, view.topic.rel_path
    ),
    index=lambda view, ctx: _undecodable(
        view.index.problems, ctx, ctx.index_path, C.INDEX_FILENAME
    ),
)


def _unreadable(
    problems: tuple[Problem, ...], ctx: LintContext, path: Path, rel: str
) -> list[Diagnostic]:
    found: list[Diagnostic] = []
    for problem in problems:
        if problem.kind == "binary":
            found.append(
                ctx.diag(
                    "MEM113",
                    path,
                    rel,
                    problem.span,
                    "binary file (contains NUL bytes) named like a memory: the scan lists it, but "
                    "it holds nothing the agent can use; remove or rename it",
                )
            )
        elif problem.kind == "unreadable":
            found.append(
                ctx.diag(
                    "MEM113",
                    path,
                    rel,
                    problem.span,
                    f"{problem.message}: the agent cannot read this memory either",
                )
            )
    return found


MEM113 = Rule(
    code="MEM113",
    name="unreadable-file",
    severity="error",
    scope="topic",
    summary="A `.md` file that cannot be read, or is binary (contains NUL bytes).",
    why="The scan still lists it, but it holds no memory the agent can use.",
    example="`diagram.md` that is really a PNG",
    remedy="Fix its permissions, or remove or rename it.",
    topic=lambda view, ctx: _unreadable(
        view.topic.problems, ctx, view.topic.path, view.topic.rel_path
    ),
    index=lambda view, ctx: _unreadable(view.index.problems, ctx, ctx.index_path, C.INDEX_FILENAME),
)

RULES = (MEM106, MEM110, MEM112, MEM113, MEM130)
