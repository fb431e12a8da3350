"""Finding credentials in memory text (MEM110, the memory tool's refusals), with few false
positives and no echo.

Memories are injected into model context and often synced or committed, so a key pasted into
one leaks everywhere. Provider tokens are recognised by their published prefixes and shapes (as
gitleaks' rules and GitHub secret scanning give them); ``password``/``secret``/``token``/``key``
assignments only when the name is a credential's (``api_key``, ``DB_PASSWORD``, ``clientSecret``;
not ``keyboard`` or ``passed``) and the value looks random or, for a password, like one, and is
not a placeholder (``sk-...``, ``<your-key>``, ``xxxx``, ``${TOKEN}``, ``changeme``,
``abc123xyz``). Findings carry offsets and a redacted label, never the secret.

Invisible characters (zero-width space and joiners, word joiner, BOM, soft hyphen) are dropped
before matching, so a key split by one is still found; its span is the one in the original text.

Lint runs this on every file, so the work a clean file costs stays small: provider tokens are
only looked for in the text's long whitespace-separated words (every token is at least
:data:`_MIN_TOKEN` characters), with one search for all their prefixes; the assignment, URL and
key-block checks start from substring tests that most files fail.

:func:`redact` is the one way to make a text safe to show (errors, fix titles, logs): every
caller's own credentials (raw, base64, URL- and hex-encoded) and everything :func:`find_secrets`
finds become ``[redacted]``.
"""

from __future__ import annotations

import base64
import binascii
import bisect
import functools
import itertools
import math
import re
import urllib.parse
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from typing import Any


@dataclass(frozen=True, slots=True)
class SecretMatch:
    #: What it looks like, e.g. "Anthropic API key".
    kind: str
    #: Offsets of the secret in the text (end exclusive).
    start: int
    end: int
    #: A label safe to print: the public prefix only, e.g. ``sk-ant-…`` (never the secret).
    label: str
    #: Found by the credential's name it is assigned to (``api_key = …``), not by a format of
    #: its own: a random-looking value, less certain than a key of a known shape.
    by_name: bool = False
    #: Of a format shared with secret keys, but public by design where it stands (a Firebase
    #: web app's API key): lint does not report it; redaction and the memory tool's refusal,
    #: which cannot afford to guess, still treat it as a secret.
    public: bool = False


_E = r"(?![A-Za-z0-9])"  # not followed by more of a longer word
_T = r"(?![A-Za-z0-9_\-])"  # not followed by more token characters

#: (what it is, the literal prefixes it starts with, the whole token as a pattern matched at a
#: prefix). Formats as the vendors publish them and as gitleaks' rules
#: (cmd/generate/config/rules/*.go) and GitHub secret scanning's list give them.
_TOKEN_SPECS: tuple[tuple[str, tuple[str, ...], str], ...] = (
    ("Anthropic API key", ("sk-ant-",), r"sk-ant-[A-Za-z0-9_\-]{32,}"),
    (
        "OpenAI API key",
        ("sk-proj-", "sk-svcacct-", "sk-admin-"),
        r"sk-(?:proj|svcacct|admin)-[A-Za-z0-9_\-]{32,}",
    ),
    (
        "OpenAI-style secret key",
        ("sk-",),
        r"sk-(?:[A-Za-z0-9]{20}T3BlbkFJ[A-Za-z0-9]{20}|[A-Za-z0-9]{40,})" + _E,
    ),
    (
        "AWS access key ID",
        ("AKIA", "ASIA", "ABIA", "ACCA", "A3T"),
        r"(?:AKIA|ASIA|ABIA|ACCA|A3T[A-Z0-9])[A-Z0-9]{16}" + _E,
    ),
    ("GitHub token", ("ghp_", "gho_", "ghu_", "ghs_", "ghr_"), r"gh[pousr]_[A-Za-z0-9]{36,}"),
    ("GitHub fine-grained token", ("github_pat_",), r"github_pat_[A-Za-z0-9_]{50,}"),
    (
        "GitLab token",
        tuple(
            f"gl{kind}-"
            for kind in ("pat", "dt", "rt", "ptt", "ft", "soat", "imt", "agent", "oas", "cbt")
        ),
        r"gl(?:pat|dt|rt|ptt|ft|soat|imt|agent|oas|cbt)-[A-Za-z0-9_\-]{20,}",
    ),
    ("GitLab runner registration token", ("GR1348941",), r"GR1348941[A-Za-z0-9_\-]{20,}"),
    (
        "Slack token",
        ("xoxb-", "xoxa-", "xoxp-", "xoxr-", "xoxs-", "xoxo-", "xoxe-", "xoxe."),
        r"xox(?:[abprso]|e(?:\.xox[bp])?)-[A-Za-z0-9\-]{10,}",
    ),
    ("Slack app token", ("xapp-",), r"xapp-\d-[A-Za-z0-9]+-\d+-[A-Za-z0-9]{20,}"),
    (
        "Slack webhook URL",
        ("hooks.slack.com/",),
        r"hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9+/_]{40,}",
    ),
    (
        "Stripe secret key",
        ("sk_live_", "rk_live_", "sk_test_", "rk_test_", "sk_prod_", "rk_prod_"),
        r"[sr]k_(?:live|test|prod)_[A-Za-z0-9]{20,}",
    ),
    ("Stripe webhook secret", ("whsec_",), r"whsec_[A-Za-z0-9+/=]{32,}"),
    ("Google API key", ("AIza",), r"AIza[0-9A-Za-z_\-]{35}" + _E),
    ("Google OAuth client secret", ("GOCSPX-",), r"GOCSPX-[A-Za-z0-9_\-]{28}" + _T),
    ("npm token", ("npm_",), r"npm_[A-Za-z0-9]{36}" + _E),
    (
        "PyPI token",
        ("pypi-AgEIcHlwaS5vcmc", "pypi-AgENdGVzdC5weXBpLm9yZw"),
        r"pypi-AgE(?:IcHlwaS5vcmc|NdGVzdC5weXBpLm9yZw)[A-Za-z0-9_\-]{50,}",
    ),
    ("Hugging Face token", ("hf_",), r"hf_[A-Za-z]{34}" + _E),
    ("Hugging Face org token", ("api_org_",), r"api_org_[A-Za-z]{34}" + _E),
    # The Twilio auth token has no prefix: the assignment check finds it by its name.
    ("Twilio API key", ("SK",), r"SK[0-9a-fA-F]{32}" + _E),
    ("SendGrid API key", ("SG.",), r"SG\.[A-Za-z0-9_\-]{22}\.[A-Za-z0-9_\-]{43}" + _E),
    ("Brevo API key", ("xkeysib-",), r"xkeysib-[a-f0-9]{64}-[A-Za-z0-9]{16}" + _E),
    ("Mailgun API key", ("key-",), r"key-[0-9a-f]{32}" + _E),
    (
        "Discord webhook URL",
        ("discord.com/api/webhooks/", "discordapp.com/api/webhooks/"),
        r"discord(?:app)?\.com/api/webhooks/\d{17,20}/[A-Za-z0-9_\-]{60,68}",
    ),
    (
        "Microsoft Teams webhook URL",
        ("webhook.office.com/webhookb2/",),
        r"webhook\.office\.com/webhookb2/[A-Za-z0-9@\-]{40,}/IncomingWebhook/[A-Za-z0-9]{32}"
        r"/[A-Za-z0-9\-]{36}",
    ),
    ("DigitalOcean token", ("dop_v1_", "doo_v1_", "dor_v1_"), r"do[por]_v1_[a-f0-9]{64}" + _E),
    (
        "Shopify token",
        ("shpat_", "shpca_", "shppa_", "shpss_"),
        r"shp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}" + _E,
    ),
    (
        "Square token",
        ("sq0atp-", "sq0csp-"),
        r"sq0(?:atp-[A-Za-z0-9_\-]{22}|csp-[A-Za-z0-9_\-]{43})" + _T,
    ),
    ("Square access token", ("EAAA",), r"EAAA[A-Za-z0-9_\-]{60}" + _T),
    ("Facebook access token", ("EAA",), r"EAA[A-Za-z0-9]{90,}"),
    ("Linear API key", ("lin_api_",), r"lin_api_[A-Za-z0-9]{40}" + _E),
    (
        "Notion token",
        ("ntn_", "secret_"),
        r"(?:ntn_[0-9]{11}[A-Za-z0-9]{35}|secret_[A-Za-z0-9]{43})" + _E,
    ),
    ("Atlassian API token", ("ATATT3", "ATCTT3"), r"AT[AC]TT3[A-Za-z0-9_\-=]{180,}"),
    ("Bitbucket app password", ("ATBB",), r"ATBB[A-Za-z0-9_\-=]{28,}"),
    ("Cloudflare Origin CA key", ("v1.0-",), r"v1\.0-[a-f0-9]{24}-[a-f0-9]{146}"),
    (
        "Supabase key",
        ("sbp_", "sb_secret_"),
        r"(?:sbp_[a-f0-9]{40}|sb_secret_[A-Za-z0-9_\-]{20,})" + _T,
    ),
    ("Postman API key", ("PMAK-",), r"PMAK-[a-fA-F0-9]{24}-[a-fA-F0-9]{34}" + _E),
    (
        "Doppler token",
        tuple(f"dp.{kind}." for kind in ("pt", "st", "ct", "sa", "scim", "audit")),
        r"dp\.(?:pt|st|ct|sa|scim|audit)\.[A-Za-z0-9]{40,44}" + _E,
    ),
    ("Pulumi access token", ("pul-",), r"pul-[a-f0-9]{40}" + _E),
    (
        "Grafana token",
        ("glc_", "glsa_", "eyJrIjoi"),
        r"(?:glc_[A-Za-z0-9+/]{32,400}={0,2}|glsa_[A-Za-z0-9]{32}_[A-Fa-f0-9]{8}"
        r"|eyJrIjoi[A-Za-z0-9]{70,400}={0,2})",
    ),
    (
        "New Relic key",
        ("NRAK-", "NRII-", "NRJS-"),
        r"NR(?:AK-[A-Z0-9]{27}|II-[A-Za-z0-9\-]{32}|JS-[a-f0-9]{19})" + _E,
    ),
    (
        "Sentry token",
        ("sntrys_", "sntryu_"),
        r"(?:sntrys_eyJ[A-Za-z0-9+/=_]{60,}|sntryu_[a-f0-9]{64})",
    ),
    ("Dropbox access token", ("sl.",), r"sl\.[A-Za-z0-9_\-=.]{130,}"),
    ("Figma token", ("figd_",), r"figd_[A-Za-z0-9_\-]{38,}"),
    ("Airtable token", ("pat",), r"pat[A-Za-z0-9]{14}\.[a-f0-9]{64}" + _E),
    ("Mapbox secret token", ("sk.eyJ",), r"sk\.eyJ[A-Za-z0-9_\-]{20,}\.[A-Za-z0-9_\-]{20,}"),
    ("Netlify token", ("nfp_",), r"nfp_[A-Za-z0-9]{36}" + _E),
    ("Heroku API key", ("HRKU-",), r"HRKU-[A-Za-z0-9_\-]{58,}"),
    (
        "age secret key",
        ("AGE-SECRET-KEY-1",),
        r"AGE-SECRET-KEY-1[QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L]{58}",
    ),
    ("Databricks token", ("dapi",), r"dapi[a-f0-9]{32}(?:-\d)?" + _E),
    ("Vault token", ("hvs.", "hvb."), r"hv[sb]\.[A-Za-z0-9_\-]{90,}"),
    ("Docker Hub token", ("dckr_pat_",), r"dckr_pat_[A-Za-z0-9_\-]{27,}"),
    ("Groq API key", ("gsk_",), r"gsk_[A-Za-z0-9]{52}" + _E),
    ("xAI API key", ("xai-",), r"xai-[A-Za-z0-9]{80}" + _E),
    ("Replicate token", ("r8_",), r"r8_[A-Za-z0-9]{37}" + _E),
    ("Perplexity API key", ("pplx-",), r"pplx-[A-Za-z0-9]{48}" + _E),
    ("Pinecone API key", ("pcsk_",), r"pcsk_[A-Za-z0-9_]{50,}"),
    ("LangSmith API key", ("lsv2_",), r"lsv2_(?:pt|sk)_[a-f0-9]{32}_[a-f0-9]{10}" + _E),
    (
        "Tailscale key",
        ("tskey-",),
        r"tskey-(?:auth|api|client|scim|webhook)-[A-Za-z0-9]{6,}-[A-Za-z0-9]{20,}",
    ),
    (
        "PlanetScale token",
        ("pscale_tkn_", "pscale_pw_", "pscale_oauth_"),
        r"pscale_(?:tkn|pw|oauth)_[A-Za-z0-9_=.\-]{32,64}",
    ),
    ("Alibaba Cloud access key ID", ("LTAI",), r"LTAI[A-Za-z0-9]{20}" + _E),
    ("Contentful token", ("CFPAT-",), r"CFPAT-[A-Za-z0-9_\-]{43}"),
    ("Dynatrace token", ("dt0c01.",), r"dt0c01\.[A-Z0-9]{24}\.[A-Z0-9]{64}"),
    ("EasyPost API key", ("EZAK", "EZTK"), r"EZ[AT]K[A-Za-z0-9]{54}" + _E),
    ("Flutterwave secret key", ("FLWSECK",), r"FLWSECK(?:_TEST)?-[a-h0-9]{32}-X"),
    ("Shippo token", ("shippo_live_", "shippo_test_"), r"shippo_(?:live|test)_[a-fA-F0-9]{40}"),
    ("Prefect API key", ("pnu_",), r"pnu_[A-Za-z0-9]{36}" + _E),
    ("RubyGems API key", ("rubygems_",), r"rubygems_[a-f0-9]{48}" + _E),
    ("Clojars token", ("CLOJARS_",), r"CLOJARS_[a-z0-9]{60}"),
    ("Artifactory API key", ("AKCp",), r"AKCp[A-Za-z0-9]{69}" + _E),
    ("1Password service account token", ("ops_eyJ",), r"ops_eyJ[A-Za-z0-9+/]{250,}={0,3}"),
    ("Octopus Deploy API key", ("API-",), r"API-[A-Z0-9]{26}" + _E),
    ("Azure storage account key", ("AccountKey=",), r"AccountKey=[A-Za-z0-9+/]{86}=="),
    ("Azure shared access key", ("SharedAccessKey=",), r"SharedAccessKey=[A-Za-z0-9+/]{43}="),
    (
        "JSON Web Token",
        ("eyJ",),
        r"eyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}",
    ),
)
#: The shortest token of any kind: shorter words are never searched for one.
_MIN_TOKEN = 20
#: A token glued to a longer word ("task-ant-…", "mask_live_…") is not one.
_WORD_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-")
_TOKEN_CHARS = "A-Za-z0-9_\\-"
_DIGIT = re.compile(r"[0-9]")


def _discord_bot_id(match: re.Match[str]) -> bool:
    """A Discord bot token opens with the bot's numeric id in base64: decode it and see."""
    head = match.group(1)
    try:
        raw = base64.urlsafe_b64decode(head + "=" * (-len(head) % 4))
    except (binascii.Error, ValueError):
        return False
    return raw.isdigit() and 17 <= len(raw) <= 20


#: Tokens without a literal prefix, found by their shape: (what it is, a cheap search every
#: one passes, the pattern, the label shown, a further test of the match or None). Each search
#: starts with a literal, which the regex engine looks for at memchr speed.
_SHAPES: tuple[
    tuple[str, re.Pattern[str], re.Pattern[str], str, Callable[[re.Match[str]], bool] | None],
    ...,
] = (
    (
        "Telegram bot token",
        re.compile(rf":[{_TOKEN_CHARS}]{{35}}"),
        re.compile(rf"\d{{8,10}}:[{_TOKEN_CHARS}]{{35}}(?![{_TOKEN_CHARS}])"),
        "<bot id>:…",
        None,
    ),
    (
        "Discord bot token",
        re.compile(rf"\.[{_TOKEN_CHARS}]{{6}}\.[{_TOKEN_CHARS}]{{27}}"),
        re.compile(
            rf"([MNO][{_TOKEN_CHARS}]{{23,27}})\.[{_TOKEN_CHARS}]{{6}}\.[{_TOKEN_CHARS}]{{27,38}}"
            rf"(?![{_TOKEN_CHARS}])"
        ),
        "<bot id>.…",
        _discord_bot_id,
    ),
    (
        "Terraform Cloud token",
        re.compile(r"\.atlasv1\."),
        re.compile(r"[A-Za-z0-9]{14}\.atlasv1\.[A-Za-z0-9_\-=]{60,70}"),
        "….atlasv1.…",
        None,
    ),
    (
        "Mailchimp API key",
        re.compile(r"-us\d"),
        re.compile(r"[0-9a-f]{32}-us\d{1,2}(?![A-Za-z0-9])"),
        "…-us…",
        None,
    ),
    (
        "Azure AD client secret",
        re.compile(r"Q~"),
        re.compile(r"[A-Za-z0-9_~.]{3}\dQ~[A-Za-z0-9_~.\-]{31,34}(?![\w~.\-])"),
        "…Q~…",
        None,
    ),
)


@functools.cache
def _token_table() -> tuple[re.Pattern[str], dict[str, list[tuple[str, re.Pattern[str]]]]]:
    """One search for every prefix (longest first), and the kinds each prefix may start.

    Compiled on first use: most processes (the hook, a CLI command) never look for a secret.
    """
    own: dict[str, list[tuple[str, re.Pattern[str]]]] = {}
    for kind, prefixes, pattern in _TOKEN_SPECS:
        compiled = re.compile(pattern)
        for prefix in prefixes:
            own.setdefault(prefix, []).append((kind, compiled))
    ordered = sorted(own, key=len, reverse=True)
    # Where "sk-ant-" is found, "sk-" starts there too: its kinds are tried after the longer's.
    kinds = {p: [k for q in ordered if p.startswith(q) for k in own[q]] for p in ordered}
    # A token starts a word: not after a token character. The prefixes as a trie, which the
    # regular expression engine walks a character at a time (an alternation of 130 prefixes
    # is tried one by one at every position); the longest prefix found wins.
    return re.compile(f"(?<![{_TOKEN_CHARS}])" + _trie(ordered)), kinds


def _trie(words: Iterable[str]) -> str:
    """A regular expression matching any of ``words``, the longest where several do."""
    root: dict[str, dict[str, Any]] = {}
    for word in words:
        node = root
        for char in word:
            node = node.setdefault(char, {})
        node[""] = {}

    def pattern(node: dict[str, Any]) -> str:
        branches = [
            re.escape(char) + pattern(child) for char, child in sorted(node.items()) if char
        ]
        if not branches:
            return ""
        body = branches[0] if len(branches) == 1 else f"(?:{'|'.join(branches)})"
        return f"(?:{body})?" if "" in node else body

    return pattern(root)


_PRIVATE_KEY = re.compile(r"-----BEGIN[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----")
_PRIVATE_KEY_END = re.compile(r"-----END[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----")

_URL_PASSWORD = re.compile(
    r"\b[A-Za-z][A-Za-z0-9+.\-]{1,20}://(?P<user>[^\s:/?#@\[\]]*):(?P<pw>[^\s/?#@\[\]]+)@"
    r"[A-Za-z0-9.\-\[]"
)

#: An assignment is flagged when a part of its name is one of these (case-insensitive), with
#: one of the endings listed: ``password`` and ``passwd``, but not ``passed`` or ``passage``.
_KEYWORDS: dict[str, tuple[str, ...]] = {
    "pass": ("", "word", "words", "wd", "phrase", "code"),
    "pwd": ("",),
    "secret": ("", "s"),
    "token": ("", "s"),
    "key": ("", "s"),
    "credential": ("", "s"),
    "creds": ("",),
    "auth": ("",),
}
#: Keywords that end ordinary words (monkey, bypass, hotkey) when glued to one: glued, they
#: count only after one of :data:`_GLUE` (APIKEY, dbpass, oauth).
_GLUED_ONLY = frozenset({"key", "pass", "auth"})
_GLUE_WORDS = (
    "api access secret private public client app auth o session account master bot user "
    "admin root db ssh gpg pgp signing encryption license refresh bearer deploy service "
    "shared consumer my pass login web id jwt hmac aes rsa personal integration webhook "
    "storage sas basic http proxy mail smtp ftp sftp ldap vault git gh npm pypi cloud "
    "server"
)
_GLUE = frozenset(_GLUE_WORDS.split())
#: Fewer, shorter needles that cover all of _KEYWORDS ("cre": secret, credential, creds).
_KEYWORD_NEEDLES = ("pass", "pwd", "cre", "token", "key", "auth")
_IDENT_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-")
#: From a keyword to the end of its name, the operator, and the value.
_ASSIGNMENT_AT = re.compile(
    r"[A-Za-z0-9_.\-]*[\"'`]?[ \t]*(?:=>|:=|=|:)[ \t]*[\"'`]?"
    r"(?P<value>[A-Za-z0-9+/=_\-.~!@#%^&*]{8,})"
)
#: More words after a value of letters only: the value starts a phrase (a heading, a title).
_PROSE_AFTER = re.compile(r"[ \t]+(?:&|[A-Za-z]{2,})")
#: ``Authorization: Bearer …`` (anywhere) and ``Authorization: Basic …``.
_BEARER = re.compile(r"(?<![A-Za-z0-9])[Bb]earer[ \t]+(?P<value>[A-Za-z0-9\-._~+/]{16,}=*)")
_BASIC = re.compile(
    r"[Aa]uthorization[\"'`]?:?[ \t]*[\"'`]?Basic[ \t]+(?P<value>[A-Za-z0-9+/]{12,}={0,2})"
)

#: Marks of a placeholder wherever they are: no random key holds them.
_PLACEHOLDER_MARKS = ("****", "...", "…", "<", "{")
#: Words of a placeholder where they stand alone (see :func:`_stands_alone`): a random key
#: spells "your" or "fake" now and then.
_PLACEHOLDER_WORDS = (
    "your",
    "example",
    "placeholder",
    "changeme",
    "change_me",
    "redacted",
    "dummy",
    "sample",
    "fake",
    "password",
    "secret",
    "here",
    "replace",
)
#: What a default password adds to its user's name: ``app_local``, ``app-test``, ``app123``.
_DEFAULT_SUFFIX = re.compile(r"[_\-.]?(?:local|test|dev|pass|pw|pwd|password|\d{1,4})?", re.I)


def _user_default(user: str, password: str) -> bool:
    """A password made of its user's name (``postgres:postgres``, ``app:app_local``): a
    development default, typed by hand, not a secret."""
    if password == user:
        return True
    return (
        len(user) >= 3
        and password.lower().startswith(user.lower())
        and _DEFAULT_SUFFIX.fullmatch(password[len(user) :]) is not None
    )


_URL_PLACEHOLDERS = frozenset(
    ("password", "pass", "passwd", "pwd", "secret", "changeme", "redacted", "pw", "token")
)
_HEX = frozenset("0123456789abcdefABCDEF")
#: API keys and tokens are longer than this; shorter values after a key's name are ids, versions
#: and words (``auth: OAuth2-PKCE``). Passwords are judged apart.
_MIN_KEY = 16
_SYMBOLS = frozenset("+/=_-.~!@#%^&*")
_CAMEL_RUNS = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|\d+")
_SEPARATORS = re.compile(r"[_\-./]+")
_VOWELS = frozenset("aeiouyAEIOUY")
_CONSONANTS = re.compile(r"[^aeiouyAEIOUY]{4}")
_NO_SYMBOLS = str.maketrans("", "", "".join(_SYMBOLS))


def _entropy(value: str) -> float:
    counts: dict[str, int] = {}
    for char in value:
        counts[char] = counts.get(char, 0) + 1
    total = len(value)
    return -sum(n / total * math.log2(n / total) for n in counts.values())


def _sequential(value: str) -> bool:
    """Mostly runs like ``abc``, ``123``, ``xyz``: typed by hand (``abc123xyz``)."""
    covered = run = 0
    for before, after in itertools.pairwise(value):
        if ord(after) - ord(before) == 1:
            run += 1
            continue
        covered += run + 1 if run >= 2 else 0
        run = 0
    covered += run + 1 if run >= 2 else 0
    return covered * 3 >= len(value) * 2


def is_placeholder(value: str) -> bool:
    """``sk-...``, ``<your-key>``, ``xxxx``, ``${TOKEN}``, ``changeme``, ``abc123xyz``,
    ``AKIA…EXAMPLE``: documentation, not keys."""
    if any(mark in value for mark in _PLACEHOLDER_MARKS):
        return True
    if value.startswith("$") or value.startswith("%"):
        return True
    if "x" in value.lower() and re.search(r"(?i)(?:^|[^a-z0-9])xxxx", value):
        return True
    # One repeated character, or long runs of one (AAAAAAAA1234): written by hand.
    if len(set(value)) <= 3 or re.search(r"(.)\1{5,}", value):
        return True
    lowered = value.lower()
    for word in _PLACEHOLDER_WORDS:
        at = lowered.find(word)
        while at >= 0:
            if _stands_alone(value, at, at + len(word)):
                return True
            at = lowered.find(word, at + 1)
    return len(value) <= 24 and _sequential(value)


def _stands_alone(value: str, start: int, end: int) -> bool:
    """``value[start:end]`` is a word of its own there (in one case, at an end of the value,
    beside a non-letter or where a camelCase word starts or ends), not letters that happen to
    spell it inside a random string."""
    word = value[start:end]
    if not (word.islower() or word.isupper() or word.istitle()):
        return False
    before = start == 0 or not value[start - 1].isalpha()
    before = before or (word[0].isupper() and value[start - 1].islower())
    after = end == len(value) or not value[end].isalpha()
    after = after or (value[end].isupper() and word[-1].islower())
    return before or after


def _alphabet(value: str) -> int:
    """How many symbols a random string of this character mix is drawn from."""
    symbols = _SYMBOLS.intersection(value)
    if _HEX.issuperset(value.translate(_NO_SYMBOLS)):
        return 16 + len(symbols)  # hex, or a UUID
    size = len(symbols)
    size += 26 if any(c.islower() for c in value) else 0
    size += 26 if any(c.isupper() for c in value) else 0
    size += 10 if any(c.isdigit() for c in value) else 0
    return size


def _wordish(run: str) -> bool:
    """A camelCase run that reads as a word: short, an acronym (HTTP, SQL), or with a vowel
    and no four consonants in a row (random letters rarely manage that for long)."""
    if len(run) <= 2 or run.isupper():
        return len(run) <= 5
    return not _VOWELS.isdisjoint(run) and _CONSONANTS.search(run) is None


def _word_like(value: str) -> bool:
    """Words and short numbers (``user_id_2``, ``ConfigValue2``, ``MySQLPassword``), not
    random: parts between separators that are each a word or a number, or camelCase runs that
    each read as a word, four letters long on average, with at most one single letter and one
    acronym among them (random mixed case is full of both), and a digit or two."""
    parts = [part for part in _SEPARATORS.split(value) if part]
    if len(parts) > 1 and all(
        part.isdigit() or (part.isalpha() and (part.islower() or part.isupper() or part.istitle()))
        for part in parts
    ):
        return True
    if len(parts) == 1 and len(value) >= _MIN_KEY and (value.isupper() or value.islower()):
        # One case run together: a CONSTANT_NAME or snake_name has separators, and random
        # letters and digits often read as words in one case. Entropy alone judges these.
        return False
    runs = _CAMEL_RUNS.findall(value)
    letters = [run for run in runs if not run.isdigit()]
    if not letters or sum(len(run) for run in runs if run.isdigit()) > 2:
        return False
    singles = sum(len(run) == 1 for run in letters)
    acronyms = sum(len(run) > 1 and run.isupper() for run in letters)
    return (
        singles <= 1
        and acronyms <= 1
        and sum(map(len, letters)) >= 4 * len(letters)
        and all(map(_wordish, letters))
    )


def _mixed(value: str) -> bool:
    """Letters with digits, or capitals with small letters: what random keys are made of."""
    if not any(c.isalpha() for c in value):
        return False
    if any(c.isdigit() for c in value) or value.lower() != value != value.upper():
        return True
    # Capitals alone, run together: a CONSTANT_NAME has separators, a key may have none.
    return len(value) >= _MIN_TOKEN and value.isupper() and not _SEPARATORS.search(value)


def _looks_random(value: str) -> bool:
    """Long enough for a key, of mixed characters, with entropy near what a random string of
    its length and character mix has (hex has at most 4 bits a character, base62 about 6)."""
    if len(value) < _MIN_KEY or not _mixed(value) or _word_like(value):
        return False
    ceiling = math.log2(min(len(value), _alphabet(value)))
    return _entropy(value) >= 0.75 * ceiling


def _looks_like_password(value: str) -> bool:
    """After a password's name: letters with digits or symbols, or random-looking letters;
    never a plain identifier (``user_id_2``) or a word (``Sunshine``)."""
    if not any(c.isalpha() for c in value):
        return False
    if any(c.isdigit() or c in _SYMBOLS for c in value):
        return not (_SEPARATORS.search(value) and _word_like(value))
    return len(value) >= 10 and _mixed(value) and not _word_like(value)


def _long_words(text: str) -> list[str]:
    """The words of ``text`` that may be a token. A token is long and has digits or capitals
    (20 random hex digits without a digit are one chance in 10^8); file names, URLs and
    sentences mostly are short or have neither."""
    words = [w for w in text.split() if len(w) >= _MIN_TOKEN]
    return [w for w in words if w.lower() != w or _DIGIT.search(w)]


def _tokens(text: str) -> list[SecretMatch]:
    words = _long_words(text)
    if not words:
        return []
    joined = "\n".join(words)
    # Where each word starts in ``joined``; where in ``text``, found only for words that hold
    # a finding (few), in order.
    in_joined = list(itertools.accumulate((len(w) + 1 for w in words[:-1]), initial=0))
    in_text: list[int] = []

    def original(offset: int) -> int:
        word = bisect.bisect_right(in_joined, offset) - 1
        while len(in_text) <= word:
            # Between two of these words lie only whitespace, shorter words and long words with
            # neither digits nor capitals: none holds the next one, so its first occurrence
            # after the previous one is it.
            after = in_text[-1] + len(words[len(in_text) - 1]) if in_text else 0
            in_text.append(text.find(words[len(in_text)], after))
        return in_text[word] + offset - in_joined[word]

    found: list[SecretMatch] = []
    taken: list[tuple[int, int]] = []  # spans in ``joined``
    search, kinds = _token_table()
    for hit in search.finditer(joined):
        at, prefix = hit.start(), hit.group()
        if taken and at < taken[-1][1]:
            continue
        for kind, pattern in kinds[prefix]:
            match = pattern.match(joined, at)
            # The random part must look random: "sk-ant-xxxx…" in a README is no key.
            if match is None or not _random_body(match.group()[len(prefix) :]):
                continue
            taken.append((at, match.end()))
            # Cut short with an ellipsis ("sk-ant-api03-AbC…"): a prefix shown to name a key
            # kept elsewhere, not one that works.
            if not joined.startswith(("...", "…"), match.end()):
                found.append(
                    SecretMatch(kind, original(at), original(at) + match.end() - at, f"{prefix}…")
                )
            break
    for kind, gate, pattern, label, check in _SHAPES:
        if gate.search(joined) is None:
            continue
        for match in pattern.finditer(joined):
            at = match.start()
            if (at and joined[at - 1] in _WORD_CHARS) or any(a <= at < b for a, b in taken):
                continue
            if not _random_body(match.group()) or (check is not None and not check(match)):
                continue
            taken.append(match.span())
            found.append(SecretMatch(kind, original(at), original(at) + match.end() - at, label))
    return found


#: Keys of a format shared with secret ones that a service makes public by design, by the
#: word naming them nearby: a Firebase web app's API key ships in every client's config.
_PUBLIC_BY_CONTEXT = {"Google API key": re.compile(r"firebase", re.IGNORECASE)}
#: How far before a key its naming word is looked for: its line and the line or two above it
#: (``firebaseConfig = {`` over ``apiKey: "AIza…"``).
_CONTEXT_CHARS = 160


def _public_in_context(kind: str, text: str, at: int) -> bool:
    word = _PUBLIC_BY_CONTEXT.get(kind)
    if word is None:
        return False
    line_end = text.find("\n", at)
    window = text[max(0, at - _CONTEXT_CHARS) : line_end if line_end >= 0 else len(text)]
    return word.search(window) is not None


def _random_body(body: str) -> bool:
    """What follows a token's prefix is random, not ``xxxx`` or ``aaaa1111``: the prefix says
    what it is, so only well below what a random string would show is refused."""
    if not body or is_placeholder(body):
        return False
    return _entropy(body) >= 0.6 * math.log2(min(len(body), _alphabet(body)))


def _name_part(text: str, folded: str, at: int, keyword: str) -> tuple[str, str]:
    """The letters before and after ``keyword`` in its part of a name (``API_KEY``: "", "";
    ``clientSecret``: "", ""; ``APIKEY``: "api", ""; ``passed``: "", "ed"; ``monkey``: "mon",
    "")."""

    def boundary(i: int) -> bool:
        """A camelCase or ACRONYMWord boundary between ``text[i - 1]`` and ``text[i]``."""
        a, b = text[i - 1], text[i]
        if a.islower() and b.isupper():
            return True
        return a.isupper() and b.isupper() and i + 1 < len(text) and text[i + 1].islower()

    start = at
    while start > 0 and folded[start - 1].isalpha() and folded[start - 1].isascii():
        if boundary(start):
            break
        start -= 1
    end = at + len(keyword)
    while end < len(text) and folded[end].isalpha() and folded[end].isascii():
        if boundary(end):
            break
        end += 1
    return folded[start:at], folded[at + len(keyword) : end]


#: Words that make a ``key`` the key of a record, a file or a cache, not a credential
#: (``fileKey``, ``cache_key``, ``PRIMARY_KEY``): the value is an id, random as it may look.
_ID_KEY_WORDS_TEXT = (
    "file cache primary foreign sort partition row object idempotency lookup composite unique "
    "natural surrogate query route i18n translation locale message item list field column "
    "table record entity node document doc dedupe dedup"
)
_ID_KEY_WORDS = frozenset(_ID_KEY_WORDS_TEXT.split())


def _word_before(text: str, folded: str, start: int) -> str:
    """The word of a name just before ``start`` (``file`` in ``fileKey``, ``file_key``, and in
    prose, ``File key:``)."""
    end = start
    while end > 0 and text[end - 1] in "_-.":
        end -= 1
    if end == start and end > 1 and text[end - 1] == " " and text[end - 2] != " ":
        end -= 1
    begin = end
    while begin > 0 and folded[begin - 1].isalnum() and folded[begin - 1].isascii():
        if begin < end and text[begin - 1].islower() and text[begin].isupper():
            break
        begin -= 1
    return folded[begin:end]


def _credential_name(text: str, folded: str, at: int, keyword: str) -> bool:
    before, after = _name_part(text, folded, at, keyword)
    if after not in _KEYWORDS[keyword]:
        return False
    if keyword == "key" and not before and not after:
        # A record's key (``fileKey``, ``File key:``), or ``key`` alone with no name before it
        # (``(key: …)`` beside a design file): an id. A credential's key is named (API, access,
        # secret) or has a known format, found on its own.
        word = _word_before(text, folded, at)
        if not word or word in _ID_KEY_WORDS:
            return False
    elif keyword == "key" and not before and _word_before(text, folded, at) in _ID_KEY_WORDS:
        return False
    if not before or keyword not in _GLUED_ONLY:
        return True
    return before in _GLUE or (keyword == "pass" and after != "")


def _assignments(text: str, taken: list[SecretMatch]) -> list[SecretMatch]:
    """``password = …``, ``API_TOKEN: …``, ``"client_secret": "…"`` with a secret value."""
    # The keywords are ASCII, so fold ASCII only: str.lower() on CJK text is slow and can change
    # lengths, while "?" for every non-ASCII character keeps each offset of the original.
    folded = text.lower() if text.isascii() else text.encode("ascii", "replace").lower().decode()
    found: list[SecretMatch] = []
    if not any(needle in folded for needle in _KEYWORD_NEEDLES):
        return found

    def free(start: int) -> bool:
        return not any(s.start <= start < s.end for s in (*taken, *found))

    for keyword in _KEYWORDS:
        at = folded.find(keyword)
        while at >= 0:
            match = _ASSIGNMENT_AT.match(text, at + len(keyword))
            here, at = at, folded.find(keyword, at + len(keyword))
            if match is None or not _credential_name(text, folded, here, keyword):
                continue
            value = match.group("value").rstrip(".,;")
            start = match.start("value")
            if not free(start) or _not_a_secret(value):
                continue
            if value.isalpha() and _PROSE_AFTER.match(text, match.end("value")):
                continue  # ``FastPass: Subscription tiers``: a title, not a value
            password = keyword in ("pass", "pwd")
            if not (_looks_like_password(value) if password else _looks_random(value)):
                continue
            name_start = match.start()
            while name_start > 0 and text[name_start - 1] in _IDENT_CHARS:
                name_start -= 1
            name = text[name_start : match.start("value")].rstrip(" \t\"'`:=>")
            if keyword == "key" and _UUID.fullmatch(value) and _identifier_key(text, name_start):
                continue
            found.append(
                SecretMatch(f"`{name}` value", start, start + len(value), f"{name} = …", True)
            )
    if "earer" in text:
        for match in _BEARER.finditer(text):
            value, start = match.group("value"), match.start("value")
            if free(start) and not _not_a_secret(value) and _looks_random(value):
                found.append(SecretMatch("bearer token", start, match.end(), "Bearer …"))
    if "Basic" in text and "uthorization" in text:
        for match in _BASIC.finditer(text):
            value, start = match.group("value"), match.start("value")
            try:
                decoded = base64.b64decode(value, validate=True)
            except (binascii.Error, ValueError):
                continue
            if free(start) and b":" in decoded and not is_placeholder(value):
                found.append(SecretMatch("basic auth credentials", start, match.end(), "Basic …"))
    return found


_UUID = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")
#: Words that make a "key" an identifier (``session key``, ``idempotency_key``): under such a
#: name a UUID names a thing. Under ``api_key`` a UUID can be a credential (Heroku's are).
_IDENTIFYING = frozenset(
    (
        *("session", "idempotency", "primary", "foreign", "partition", "sort", "row", "record"),
        *("object", "request", "trace", "correlation", "message", "cache", "lookup", "dedup"),
        *("dedupe", "routing", "index"),
    )
)
_NAME_WORDS = re.compile(r"[A-Za-z]+")
_LAST_WORD = re.compile(r"([A-Za-z]+)[ \t]*$")


def _identifier_key(text: str, name_start: int) -> bool:
    """The ``key`` whose name starts at ``name_start`` identifies something: neither its name
    nor the word before it (``Session key:``) says more than ``key``, or one of them is an
    identifying word."""
    lowered = text[name_start : name_start + 80].lower()
    name = _NAME_WORDS.findall(lowered[: lowered.find("key")])  # (APIKEY: "api")
    line_start = text.rfind("\n", 0, name_start) + 1
    previous = _LAST_WORD.search(text, line_start, name_start)
    said = {*name, *([previous.group(1).lower()] if previous else [])}
    return not said or bool(said & _IDENTIFYING)


#: Keys their services make to be public (shipped in web pages and apps): Supabase's publishable
#: key, Stripe's publishable keys.
_PUBLIC_KEY_PREFIXES = ("sb_publishable_", "pk_live_", "pk_test_")


def _not_a_secret(value: str) -> bool:
    """A placeholder, a path, a key made to be public, or a hex number too short to be a key
    (a commit, a colour)."""
    if len(value) < 8 or is_placeholder(value) or value.startswith(_PUBLIC_KEY_PREFIXES):
        return True
    if value.startswith(("/", "~/", "./", "../")) and not _looks_random(value.replace("/", "")):
        return True  # ~/.ssh/id_ed25519, /etc/ssl/private/server.key
    return _HEX.issuperset(value) and len(value) < 16


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
    found = [
        replace(token, public=True) if _public_in_context(token.kind, text, token.start) else token
        for token in _tokens(text)
    ]
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
            if _user_default(match.group("user"), password):
                continue  # postgres://postgres:postgres@localhost: a default, not a secret
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


def encodings(value: str) -> set[str]:
    """``value`` as an error body may echo it: raw, JSON-escaped, URL-encoded, hex, and base64
    (standard and URL-safe) wherever it sits in a longer encoded string (``base64(user:key)``).

    Base64 turns 3 bytes into 4 characters, so a value encoded after 0, 1 or 2 other bytes
    reads differently; each alignment gives the characters that depend on the value alone.
    """
    raw = value.encode("utf-8")
    found = {
        value,
        value.replace("/", "\\/"),  # JSON as some servers write it
        urllib.parse.quote(value, safe=""),
        urllib.parse.quote_plus(value, safe=""),
        raw.hex(),
        raw.hex().upper(),
    }
    for shift in range(3):
        encoded = base64.b64encode(b"\0" * shift + raw).decode("ascii")
        first = (8 * shift + 5) // 6  # the first character with no bit of the padding before
        last = (8 * (shift + len(raw))) // 6  # past the last character made of value bits only
        inner = encoded[first:last]
        found.update((inner, inner.replace("+", "-").replace("/", "_")))
    return {v for v in found if len(v) >= _MIN_KNOWN}


def redact(text: str, known: Iterable[str | None] = ()) -> str:
    """``text`` safe to print: each of ``known`` (in any of its :func:`encodings`) and every
    :func:`find_secrets` match redacted.

    ``known`` are the caller's own credentials (an API key, an auth token), which need not look
    like any provider's token.
    """
    spans = [(s.start, s.end) for s in find_secrets(text)]
    forms = {form for v in known if v and len(v) >= _MIN_KNOWN for form in encodings(v)}
    for form in forms:
        at = text.find(form)
        while at >= 0:
            spans.append((at, at + len(form)))
            at = text.find(form, at + 1)
    merged: list[list[int]] = []
    for start, end in sorted(spans):
        if merged and start <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], end)
        else:
            merged.append([start, end])
    for start, end in reversed(merged):
        text = text[:start] + REDACTED + text[end:]
    return text
