"""Finding credentials in memory text (MEM110), with few false positives and no echo.

Memories are injected into model context and often synced or committed, so a key pasted into
one leaks everywhere. Provider tokens are recognised by their published prefixes and lengths;
``password``/``secret``/``token`` assignments only when the value looks random (letters and
digits, enough entropy) and is not a placeholder (``sk-...``, ``<your-key>``, ``xxxx``,
``${TOKEN}``, ``changeme``). Findings carry offsets and a redacted label, never the secret.

Invisible characters (zero-width space and joiners, word joiner, BOM, soft hyphen) are dropped
before matching, so a key split by one is still found; its span is the one in the original text.

Most files contain none of the markers, so a handful of substring tests decide that before any
regular expression runs: linting 20,000 files must not cost 20,000 regex scans of every body.

:func:`redact` is the one way to make a text safe to show (errors, fix titles, logs): every
caller's own credentials and everything :func:`find_secrets` finds become ``[redacted]``.
"""

from __future__ import annotations

import bisect
import math
import re
from collections.abc import Iterable
from dataclasses import dataclass, replace


@dataclass(frozen=True, slots=True)
class SecretMatch:
    #: What it looks like, e.g. "Anthropic API key".
    kind: str
    #: Offsets of the secret in the text (end exclusive).
    start: int
    end: int
    #: A label safe to print: the public prefix only, e.g. ``sk-ant-…`` (never the secret).
    label: str


_E = r"(?![A-Za-z0-9])"  # not followed by more of a longer word

#: (what it is, literal markers it starts with, length of the public prefix shown in messages,
#: the whole token as a pattern matched at a marker)
_PROVIDERS: tuple[tuple[str, tuple[str, ...], int, re.Pattern[str]], ...] = tuple(
    (kind, markers, prefix_len, re.compile(pattern))
    for kind, markers, prefix_len, pattern in (
        ("Anthropic API key", ("sk-ant-",), 7, r"sk-ant-[A-Za-z0-9_\-]{32,}"),
        (
            "OpenAI API key",
            ("sk-proj-", "sk-svcacct-", "sk-admin-"),
            3,
            r"sk-(?:proj|svcacct|admin)-[A-Za-z0-9_\-]{32,}",
        ),
        (
            "OpenAI-style secret key",
            ("sk-",),
            3,
            r"sk-(?:[A-Za-z0-9]{20}T3BlbkFJ[A-Za-z0-9]{20}|[A-Za-z0-9]{40,})" + _E,
        ),
        (
            "AWS access key ID",
            ("AKIA", "ASIA", "ABIA", "ACCA"),
            4,
            r"(?:AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}" + _E,
        ),
        (
            "GitHub token",
            ("ghp_", "gho_", "ghu_", "ghs_", "ghr_"),
            4,
            r"gh[pousr]_[A-Za-z0-9]{36,}",
        ),
        ("GitHub fine-grained token", ("github_pat_",), 11, r"github_pat_[A-Za-z0-9_]{50,}"),
        ("GitLab token", ("glpat-",), 6, r"glpat-[A-Za-z0-9_\-]{20,}"),
        (
            "Slack token",
            ("xoxb-", "xoxa-", "xoxp-", "xoxr-", "xoxs-"),
            5,
            r"xox[baprs]-[A-Za-z0-9\-]{10,}",
        ),
        ("Stripe live key", ("sk_live_", "rk_live_"), 8, r"(?:sk|rk)_live_[A-Za-z0-9]{20,}"),
        ("Google API key", ("AIza",), 4, r"AIza[0-9A-Za-z_\-]{35}" + _E),
        # Formats as the gitleaks rules (cmd/generate/config/rules/*.go) and nosey-parker's
        # give them: Slack incoming webhooks /services/T…/B…/<24>, and workflow/trigger URLs.
        (
            "Slack webhook URL",
            ("hooks.slack.com/",),
            16,
            r"hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9+/_]{40,}",
        ),
        # npm granular/automation tokens: npm_ and 36 letters and digits (npm.go).
        ("npm token", ("npm_",), 4, r"npm_[A-Za-z0-9]{36}" + _E),
        # Hugging Face user and organisation tokens: 34 letters (huggingface.go).
        ("Hugging Face token", ("hf_",), 3, r"hf_[A-Za-z]{34}" + _E),
        ("Hugging Face org token", ("api_org_",), 8, r"api_org_[A-Za-z]{34}" + _E),
        # Twilio API key SID: SK and 32 hex digits (twilio.go); the auth token has no prefix and
        # is left to the assignment check.
        ("Twilio API key", ("SK",), 2, r"SK[0-9a-fA-F]{32}" + _E),
        # SendGrid: SG.<22>.<43> (nosey-parker np.sendgrid.1, gitleaks sendgrid.go).
        ("SendGrid API key", ("SG.",), 3, r"SG\.[A-Za-z0-9_\-]{22}\.[A-Za-z0-9_\-]{43}" + _E),
        (
            "JSON Web Token",
            ("eyJ",),
            3,
            r"eyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}",
        ),
    )
)
#: A token glued to a longer word ("task-ant-…", "mask_live_…") is not one.
_WORD_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-")


def _may_hold_provider_token(text: str) -> bool:
    """A superset test for every provider pattern, made of substring searches.

    ``in`` on a str runs at memchr speed while a regex alternation walks every position, so the
    tests are ordered to fail fast: single rare characters first, longer markers only then.
    """
    if "sk-" in text or "lpat-" in text or "IA" in text or "CCA" in text:
        return True  # sk-ant-/sk-proj-/sk-…, glpat-, AKIA/ASIA/ABIA, ACCA
    if "SK" in text or "SG." in text or "hooks.slack" in text:
        return True  # Twilio, SendGrid, Slack webhooks
    if "_" in text and (
        "_live_" in text
        or "github_pat_" in text
        or any(f"gh{c}_" in text for c in "pousr")
        or "npm_" in text
        or "hf_" in text
        or "api_org_" in text
    ):
        return True
    return ("x" in text and "xox" in text) or ("z" in text and "AIza" in text) or "eyJ" in text


_PRIVATE_KEY = re.compile(r"-----BEGIN[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----")
_PRIVATE_KEY_END = re.compile(r"-----END[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----")

_URL_PASSWORD = re.compile(
    r"\b[A-Za-z][A-Za-z0-9+.\-]{1,20}://[^\s:/?#@\[\]]+:(?P<pw>[^\s/?#@\[\]]+)@[A-Za-z0-9.\-\[]"
)

#: An assignment is flagged when its name contains one of these (case-insensitive).
_KEYWORDS = ("pass", "pwd", "secret", "token", "key", "credential")
#: Fewer, shorter needles that cover all of _KEYWORDS ("cre": secret, credential).
_KEYWORD_NEEDLES = ("pass", "pwd", "cre", "token", "key")
_IDENT_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-")
#: From a keyword to the end of its name, the operator, and the value.
_ASSIGNMENT_AT = re.compile(
    r"[A-Za-z0-9_.\-]*[\"']?[ \t]*(?:=>|:=|=|:)[ \t]*[\"']?"
    r"(?P<value>[A-Za-z0-9+/=_\-.~!@#%^&*]{8,})"
)

_PLACEHOLDER_WORDS = (
    "xxxx",
    "****",
    "...",
    "…",
    "your",
    "example",
    "placeholder",
    "changeme",
    "change_me",
    "redacted",
    "dummy",
    "sample",
    "fake",
    "<",
    "{",
)
_URL_PLACEHOLDERS = frozenset(
    ("password", "pass", "passwd", "pwd", "secret", "changeme", "redacted", "pw", "token")
)


def _entropy(value: str) -> float:
    counts: dict[str, int] = {}
    for char in value:
        counts[char] = counts.get(char, 0) + 1
    total = len(value)
    return -sum(n / total * math.log2(n / total) for n in counts.values())


def is_placeholder(value: str) -> bool:
    """``sk-...``, ``<your-key>``, ``xxxx``, ``${TOKEN}``, ``changeme``: documentation, not keys."""
    lowered = value.lower()
    if any(word in lowered for word in _PLACEHOLDER_WORDS):
        return True
    if value.startswith("$") or value.startswith("%"):
        return True
    # One repeated character, or long runs of one (AAAAAAAA1234): written by hand.
    return len(set(value)) <= 3 or bool(re.search(r"(.)\1{5,}", value))


def _looks_random(value: str) -> bool:
    """Letters and digits mixed, with entropy near what a random string of its length has."""
    if not (any(c.isdigit() for c in value) and any(c.isalpha() for c in value)):
        return False
    ceiling = math.log2(min(len(value), 64))
    return _entropy(value) >= 0.75 * ceiling


def _provider_matches(text: str) -> list[SecretMatch]:
    found: list[SecretMatch] = []
    claimed: set[int] = set()
    for kind, markers, prefix_len, pattern in _PROVIDERS:
        for marker in markers:
            at = text.find(marker)
            while at >= 0:
                match = pattern.match(text, at)
                if (
                    match is not None
                    and at not in claimed
                    and (at == 0 or text[at - 1] not in _WORD_CHARS)
                ):
                    value = match.group()
                    # The random part must look random: "sk-ant-xxxx…" in a README is no key.
                    body = value[prefix_len:]
                    if not is_placeholder(body) and _entropy(body) >= 3.0:
                        claimed.add(at)
                        label = f"{value[:prefix_len]}…"
                        found.append(SecretMatch(kind, at, match.end(), label))
                at = text.find(marker, at + 1)
    return found


def _assignments(text: str, taken: list[SecretMatch]) -> list[SecretMatch]:
    """``password = …``, ``API_TOKEN: …``, ``"client_secret": "…"`` with a random value."""
    # The keywords are ASCII, so fold ASCII only: str.lower() on CJK text is slow and can change
    # lengths, while "?" for every non-ASCII character keeps each offset of the original.
    folded = text.lower() if text.isascii() else text.encode("ascii", "replace").lower().decode()
    found: list[SecretMatch] = []
    if not any(needle in folded for needle in _KEYWORD_NEEDLES):
        return found
    for keyword in _KEYWORDS:
        at = folded.find(keyword)
        while at >= 0:
            match = _ASSIGNMENT_AT.match(text, at + len(keyword))
            at = folded.find(keyword, at + len(keyword))
            if match is None:
                continue
            value = match.group("value").rstrip(".,;")
            start = match.start("value")
            if any(s.start <= start < s.end for s in (*taken, *found)):
                continue
            if is_placeholder(value) or not _looks_random(value):
                continue
            name_start = match.start()
            while name_start > 0 and text[name_start - 1] in _IDENT_CHARS:
                name_start -= 1
            name = text[name_start : match.start("value")].rstrip(" \t\"':=>")
            found.append(SecretMatch(f"`{name}` value", start, start + len(value), f"{name} = …"))
    return found


#: Characters that render as nothing: a key split by one still works when pasted back.
_INVISIBLE = "\u00ad\u200b\u200c\u200d\u2060\ufeff"
_INVISIBLE_RUN = re.compile(f"[{_INVISIBLE}]+")


def find_secrets(text: str) -> list[SecretMatch]:
    """Every likely secret in ``text``, in order of position (offsets into ``text``)."""
    if text.isascii() or not any(char in text for char in _INVISIBLE):
        return _find_visible(text)
    # Match on the text without its invisible characters, then map each span back: a run of
    # them removed before visible offset v shifts v (and everything after it) right.
    kept: list[str] = []
    at_visible: list[int] = []  # the visible offset each run was removed at
    removed_until: list[int] = []  # how many characters were removed up to that run
    position = removed = 0
    for run in _INVISIBLE_RUN.finditer(text):
        kept.append(text[position : run.start()])
        at_visible.append(run.start() - removed)
        removed += run.end() - run.start()
        removed_until.append(removed)
        position = run.end()
    kept.append(text[position:])

    def original(visible: int) -> int:
        runs = bisect.bisect_right(at_visible, visible)
        return visible + (removed_until[runs - 1] if runs else 0)

    return [
        replace(s, start=original(s.start), end=original(s.end - 1) + 1)
        for s in _find_visible("".join(kept))
    ]


def _find_visible(text: str) -> list[SecretMatch]:
    found: list[SecretMatch] = []
    if _may_hold_provider_token(text):
        found.extend(_provider_matches(text))
    if "PRIVATE KEY" in text:
        for match in _PRIVATE_KEY.finditer(text):
            end = _PRIVATE_KEY_END.search(text, match.end())
            stop = end.end() if end is not None else match.end()
            found.append(SecretMatch("private key", match.start(), stop, "-----BEGIN …-----"))
    if "://" in text and "@" in text:
        for match in _URL_PASSWORD.finditer(text):
            password = match.group("pw")
            if password.lower() in _URL_PLACEHOLDERS or is_placeholder(password):
                continue
            found.append(
                SecretMatch("password in a URL", match.start("pw"), match.end("pw"), "://user:…@")
            )
    found.extend(_assignments(text, found))
    found.sort(key=lambda s: s.start)
    return found


#: What a redacted secret reads as, in every message memdir prints.
REDACTED = "[redacted]"
#: Shorter known values would redact ordinary words; real credentials are longer.
_MIN_KNOWN = 8


def redact(text: str, known: Iterable[str | None] = ()) -> str:
    """``text`` safe to print: each of ``known`` and every :func:`find_secrets` match redacted.

    ``known`` are the caller's own credentials (an API key, an auth token), which need not look
    like any provider's token.
    """
    spans = [(s.start, s.end) for s in find_secrets(text)]
    for value in {v for v in known if v and len(v) >= _MIN_KNOWN}:
        at = text.find(value)
        while at >= 0:
            spans.append((at, at + len(value)))
            at = text.find(value, at + 1)
    merged: list[list[int]] = []
    for start, end in sorted(spans):
        if merged and start <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], end)
        else:
            merged.append([start, end])
    for start, end in reversed(merged):
        text = text[:start] + REDACTED + text[end:]
    return text
