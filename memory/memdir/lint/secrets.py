"""Finding credentials in memory text (MEM110), with few false positives and no echo.

Memories are injected into model context and often synced or committed, so a key pasted into
one leaks everywhere. Provider tokens are recognised by their published prefixes and lengths;
``password``/``secret``/``token`` assignments only when the value looks random (letters and
digits, enough entropy) and is not a placeholder (``sk-...``, ``<your-key>``, ``xxxx``,
``${TOKEN}``, ``changeme``). Findings carry offsets and a redacted label, never the secret.

Most files contain none of the markers, so a handful of substring tests decide that before any
regular expression runs: linting 20,000 files must not cost 20,000 regex scans of every body.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass


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
    if "_" in text and (
        "_live_" in text or "github_pat_" in text or any(f"gh{c}_" in text for c in "pousr")
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


def find_secrets(text: str) -> list[SecretMatch]:
    """Every likely secret in ``text``, in order of position."""
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
