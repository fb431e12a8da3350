"""A labelled corpus for the secret detector: credentials of many kinds and ordinary memory prose.

Every credential is made up here, at run time, from a seeded random generator, in the shape its
vendor issues (prefix, length, alphabet, structure; as gitleaks' rules and GitHub's secret
scanning list give them): well formed, never real, and nothing in this file is a token itself.
Each positive is the text a memory would hold and the value that must be found in it.
"""

from __future__ import annotations

import base64
import json
import random
import string
import uuid
from collections.abc import Callable
from dataclasses import dataclass

ALNUM = string.ascii_letters + string.digits
UPPER_DIGITS = string.ascii_uppercase + string.digits
LOWER_DIGITS = string.ascii_lowercase + string.digits
HEX = "0123456789abcdef"
B64 = ALNUM + "+/"
URLSAFE = ALNUM + "-_"
BECH32 = "QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L"


def rand(rng: random.Random, n: int, chars: str = ALNUM) -> str:
    return "".join(rng.choice(chars) for _ in range(n))


def digits(rng: random.Random, n: int) -> str:
    return str(rng.randint(1, 9)) + rand(rng, n - 1, string.digits)


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode().rstrip("=")


def jwt(rng: random.Random) -> str:
    header = b64url(json.dumps({"alg": "HS256", "typ": "JWT"}).encode())
    claims = {"sub": rand(rng, 12), "role": "service_role", "iat": rng.randint(1, 2**31)}
    return f"{header}.{b64url(json.dumps(claims).encode())}.{rand(rng, 43, URLSAFE)}"


def pem(rng: random.Random, kind: str) -> str:
    body = "\n".join(rand(rng, 64, B64) for _ in range(6))
    return f"-----BEGIN {kind}-----\n{body}\n-----END {kind}-----"


def discord_bot_token(rng: random.Random) -> str:
    bot_id = digits(rng, 18).encode()
    return f"{b64url(bot_id)}.{rand(rng, 6, URLSAFE)}.{rand(rng, 38, URLSAFE)}"


@dataclass(frozen=True)
class Positive:
    #: What the credential is (for messages).
    label: str
    #: (text a memory would hold, the credential in it) from a random generator; for a URL,
    #: the credential is what follows its ``https://``.
    make: Callable[[random.Random], tuple[str, str]]


def said(
    template: str, value: Callable[[random.Random], str]
) -> Callable[[random.Random], tuple[str, str]]:
    """A positive whose text is ``template`` with the credential in place of ``{}``."""

    def make(rng: random.Random) -> tuple[str, str]:
        secret = value(rng)
        return template.format(secret), secret

    return make


def _prefixed(prefix: str, n: int, chars: str = ALNUM) -> Callable[[random.Random], str]:
    return lambda rng: prefix + rand(rng, n, chars)


def _gcp_service_account(rng: random.Random) -> tuple[str, str]:
    key = pem(rng, "PRIVATE KEY")
    data = {
        "type": "service_account",
        "project_id": "acme-prod",
        "private_key_id": rand(rng, 40, HEX),
        "private_key": key + "\n",
        "client_email": "deployer@acme-prod.iam.gserviceaccount.com",
    }
    text = "The deployer's credentials file, for reference:\n" + json.dumps(data, indent=2)
    return text, json.dumps(key)[1:-1]


def _azure_connection(rng: random.Random) -> tuple[str, str]:
    key = rand(rng, 86, B64) + "=="
    text = (
        "Blob storage: DefaultEndpointsProtocol=https;AccountName=acmelogs;"
        f"AccountKey={key};EndpointSuffix=core.windows.net"
    )
    return text, key


def _service_bus(rng: random.Random) -> tuple[str, str]:
    key = rand(rng, 43, B64) + "="
    text = (
        "Endpoint=sb://acme-events.servicebus.windows.net/;SharedAccessKeyName="
        f"RootManageSharedAccessKey;SharedAccessKey={key}"
    )
    return text, key


def _basic_auth(rng: random.Random) -> tuple[str, str]:
    value = base64.b64encode(f"deploy:{rand(rng, 20)}".encode()).decode()
    return f'curl -H "Authorization: Basic {value}" https://ci.internal/api', value


def _sentry_dsn(rng: random.Random) -> tuple[str, str]:
    public, secret = rand(rng, 32, HEX), rand(rng, 32, HEX)
    host = f"o{digits(rng, 6)}.ingest.sentry.io/{digits(rng, 7)}"
    return f"SENTRY_DSN=https://{public}:{secret}@{host}", secret


def _slack_bot(rng: random.Random) -> str:
    return f"xoxb-{digits(rng, 11)}-{digits(rng, 12)}-{rand(rng, 24)}"


def _slack_user(rng: random.Random) -> str:
    return f"xoxp-{digits(rng, 11)}-{digits(rng, 11)}-{digits(rng, 12)}-{rand(rng, 32, HEX)}"


def _slack_webhook(rng: random.Random) -> str:
    team, channel = rand(rng, 8, UPPER_DIGITS), rand(rng, 10, UPPER_DIGITS)
    return f"https://hooks.slack.com/services/T{team}/B{channel}/{rand(rng, 24)}"


def _teams_webhook(rng: random.Random) -> tuple[str, str]:
    a, b, c = (uuid.UUID(int=rng.getrandbits(128)) for _ in range(3))
    secret = f"{a}@{b}/IncomingWebhook/{rand(rng, 32, HEX)}/{c}"
    return f"Teams: https://acme.webhook.office.com/webhookb2/{secret}", secret


def _uuid(rng: random.Random) -> str:
    return str(uuid.UUID(int=rng.getrandbits(128), version=4))


#: One entry per kind of credential; several kinds have more than one shape.
POSITIVES: tuple[Positive, ...] = (
    Positive(
        "Anthropic API key",
        said(
            "The staging key is {} for now.",
            lambda r: "sk-ant-api03-" + rand(r, 93, URLSAFE) + "AA",
        ),
    ),
    Positive(
        "Anthropic admin key",
        said("admin: {}", lambda r: "sk-ant-admin01-" + rand(r, 93, URLSAFE) + "AA"),
    ),
    Positive(
        "OpenAI project key",
        said(
            "OPENAI_API_KEY={}",
            lambda r: "sk-proj-" + rand(r, 74, URLSAFE) + "T3BlbkFJ" + rand(r, 74, URLSAFE),
        ),
    ),
    Positive(
        "OpenAI service account key",
        said(
            "use {} in CI",
            lambda r: "sk-svcacct-" + rand(r, 58, URLSAFE) + "T3BlbkFJ" + rand(r, 58, URLSAFE),
        ),
    ),
    Positive(
        "OpenAI legacy key",
        said("old key {} (revoked?)", lambda r: "sk-" + rand(r, 20) + "T3BlbkFJ" + rand(r, 20)),
    ),
    Positive(
        "AWS access key ID",
        said("aws_access_key_id = {}", lambda r: "AKIA" + rand(r, 16, UPPER_DIGITS)),
    ),
    Positive(
        "AWS temporary key ID",
        said("The session used {} until it expired.", lambda r: "ASIA" + rand(r, 16, UPPER_DIGITS)),
    ),
    Positive("AWS secret access key", said("aws_secret_access_key = {}", _prefixed("", 40, B64))),
    Positive(
        "GitHub personal token", said("gh auth login --with-token <<< {}", _prefixed("ghp_", 36))
    ),
    Positive("GitHub OAuth token", said("token {} from the OAuth app", _prefixed("gho_", 36))),
    Positive("GitHub app token", said("GITHUB_TOKEN: {}", _prefixed("ghs_", 36))),
    Positive("GitHub refresh token", said("refresh with {}", _prefixed("ghr_", 36))),
    Positive(
        "GitHub fine-grained token",
        said(
            "The bot uses {} for releases.",
            lambda r: "github_pat_" + rand(r, 22) + "_" + rand(r, 59),
        ),
    ),
    Positive(
        "GitLab personal token",
        said(
            "git clone https://oauth2:{}@gitlab.com/acme/app.git", _prefixed("glpat-", 20, URLSAFE)
        ),
    ),
    Positive("GitLab deploy token", said("deploy token {}", _prefixed("gldt-", 20, URLSAFE))),
    Positive("GitLab runner token", said("runner: {}", _prefixed("glrt-", 20, URLSAFE))),
    Positive("GitLab pipeline trigger", said("trigger with {}", _prefixed("glptt-", 40, HEX))),
    Positive(
        "GitLab runner registration",
        said("register the runner with {}", _prefixed("GR1348941", 20, URLSAFE)),
    ),
    Positive("Slack bot token", said("SLACK_BOT_TOKEN={}", _slack_bot)),
    Positive("Slack user token", said("posted as me with {}", _slack_user)),
    Positive(
        "Slack app token",
        said(
            "socket mode: {}",
            lambda r: f"xapp-1-A{rand(r, 10, UPPER_DIGITS)}-{digits(r, 13)}-{rand(r, 64, HEX)}",
        ),
    ),
    Positive(
        "Slack webhook URL", said("Alerts post to {} (the #deploys channel).", _slack_webhook)
    ),
    Positive("Stripe live key", said("STRIPE_SECRET_KEY={}", _prefixed("sk_live_", 99))),
    Positive("Stripe restricted key", said("the reporting job uses {}", _prefixed("rk_live_", 24))),
    Positive("Stripe test key", said("test mode: {}", _prefixed("sk_test_", 24))),
    Positive("Stripe webhook secret", said("whsec: {}", _prefixed("whsec_", 32))),
    Positive(
        "Google API key",
        said("Maps key {} (restricted to our domain)", _prefixed("AIza", 35, URLSAFE)),
    ),
    Positive(
        "Google OAuth client secret", said("client secret {}", _prefixed("GOCSPX-", 28, URLSAFE))
    ),
    Positive("GCP service account key", _gcp_service_account),
    Positive("Azure storage connection string", _azure_connection),
    Positive("Azure Service Bus key", _service_bus),
    Positive(
        "Azure AD client secret",
        said(
            "AZURE_CLIENT_SECRET={}",
            lambda r: rand(r, 3) + str(r.randint(0, 9)) + "Q~" + rand(r, 34, ALNUM + "_~.-"),
        ),
    ),
    Positive("npm token", said("//registry.npmjs.org/:_authToken={}", _prefixed("npm_", 36))),
    Positive(
        "PyPI token",
        said(
            "twine upload -u __token__ -p {}",
            lambda r: "pypi-AgEIcHlwaS5vcmc" + rand(r, 150, URLSAFE),
        ),
    ),
    Positive("Hugging Face token", said("HF token {}", _prefixed("hf_", 34, string.ascii_letters))),
    Positive(
        "Hugging Face org token",
        said("org token {}", _prefixed("api_org_", 34, string.ascii_letters)),
    ),
    Positive("Twilio API key", said("Twilio key {}", _prefixed("SK", 32, HEX))),
    Positive("Twilio auth token", said("TWILIO_AUTH_TOKEN={}", _prefixed("", 32, HEX))),
    Positive(
        "SendGrid API key",
        said("SENDGRID_API_KEY={}", lambda r: f"SG.{rand(r, 22, URLSAFE)}.{rand(r, 43, URLSAFE)}"),
    ),
    Positive("Mailgun API key", said("mailgun: {}", _prefixed("key-", 32, HEX))),
    Positive(
        "Mailchimp API key",
        said("Mailchimp {}", lambda r: rand(r, 32, HEX) + "-us" + str(r.randint(1, 21))),
    ),
    Positive(
        "Brevo API key",
        said("brevo {}", lambda r: "xkeysib-" + rand(r, 64, HEX) + "-" + rand(r, 16)),
    ),
    Positive("Discord bot token", said("The bot logs in with {}.", discord_bot_token)),
    Positive(
        "Discord webhook URL",
        said(
            "notify {}",
            lambda r: f"https://discord.com/api/webhooks/{digits(r, 18)}/{rand(r, 68, URLSAFE)}",
        ),
    ),
    Positive(
        "Telegram bot token",
        said("bot token {}", lambda r: f"{digits(r, r.randint(8, 10))}:{rand(r, 35, URLSAFE)}"),
    ),
    Positive("Datadog API key", said("DD_API_KEY={}", _prefixed("", 32, HEX))),
    Positive("Datadog app key", said("datadog_app_key: {}", _prefixed("", 40, HEX))),
    Positive("Heroku API key", said("HEROKU_API_KEY={}", _uuid)),
    Positive(
        "Heroku token (new format)", said("heroku: {}", lambda r: "HRKU-AA" + rand(r, 58, URLSAFE))
    ),
    Positive(
        "DigitalOcean personal token", said("doctl auth init -t {}", _prefixed("dop_v1_", 64, HEX))
    ),
    Positive("DigitalOcean OAuth token", said("token {}", _prefixed("doo_v1_", 64, HEX))),
    Positive("DigitalOcean refresh token", said("refresh {}", _prefixed("dor_v1_", 64, HEX))),
    Positive(
        "Shopify admin token", said("X-Shopify-Access-Token: {}", _prefixed("shpat_", 32, HEX))
    ),
    Positive("Shopify custom app token", said("custom app {}", _prefixed("shpca_", 32, HEX))),
    Positive("Shopify private app token", said("private app {}", _prefixed("shppa_", 32, HEX))),
    Positive("Shopify shared secret", said("shared secret {}", _prefixed("shpss_", 32, HEX))),
    Positive("Square access token", said("Square sandbox {}", _prefixed("sq0atp-", 22, URLSAFE))),
    Positive("Square OAuth secret", said("oauth {}", _prefixed("sq0csp-", 43, URLSAFE))),
    Positive(
        "Square production token", said("SQUARE_ACCESS_TOKEN={}", _prefixed("EAAA", 60, URLSAFE))
    ),
    Positive("Facebook page token", said("page token {}", _prefixed("EAAC", 150))),
    Positive("Linear API key", said("LINEAR_API_KEY={}", _prefixed("lin_api_", 40))),
    Positive("Notion token", said("notion {}", lambda r: "ntn_" + digits(r, 11) + rand(r, 35))),
    Positive("Notion legacy token", said("NOTION_TOKEN={}", _prefixed("secret_", 43))),
    Positive(
        "Atlassian API token",
        said("jira: {}", lambda r: "ATATT3xFfGF0" + rand(r, 180, URLSAFE + "=")),
    ),
    Positive("Cloudflare API token", said("CLOUDFLARE_API_TOKEN={}", _prefixed("", 40, URLSAFE))),
    Positive(
        "Cloudflare origin CA key",
        said("origin CA {}", lambda r: f"v1.0-{rand(r, 24, HEX)}-{rand(r, 146, HEX)}"),
    ),
    Positive("Vercel token", said("VERCEL_TOKEN={}", _prefixed("", 24))),
    Positive(
        "Supabase access token", said("supabase login --token {}", _prefixed("sbp_", 40, HEX))
    ),
    Positive("Supabase service role key", said("SUPABASE_SERVICE_ROLE_KEY={}", jwt)),
    Positive(
        "Postman API key",
        said("postman {}", lambda r: f"PMAK-{rand(r, 24, HEX)}-{rand(r, 34, HEX)}"),
    ),
    Positive("Doppler token", said("DOPPLER_TOKEN={}", _prefixed("dp.st.", 43))),
    Positive("Pulumi token", said("PULUMI_ACCESS_TOKEN={}", _prefixed("pul-", 40, HEX))),
    Positive("Grafana cloud token", said("grafana {}", _prefixed("glc_", 80, B64))),
    Positive(
        "Grafana service account token",
        said("sa {}", lambda r: f"glsa_{rand(r, 32)}_{rand(r, 8, HEX)}"),
    ),
    Positive(
        "New Relic user key", said("NEW_RELIC_API_KEY={}", _prefixed("NRAK-", 27, UPPER_DIGITS))
    ),
    Positive("Sentry DSN with secret", _sentry_dsn),
    Positive("Sentry user token", said("sentry-cli uses {}", _prefixed("sntryu_", 64, HEX))),
    Positive("Dropbox access token", said("dropbox {}", _prefixed("sl.", 135, URLSAFE))),
    Positive("Figma token", said("FIGMA_TOKEN={}", _prefixed("figd_", 40, URLSAFE))),
    Positive(
        "Airtable token", said("airtable {}", lambda r: f"pat{rand(r, 14)}.{rand(r, 64, HEX)}")
    ),
    Positive("Algolia admin key", said("ALGOLIA_ADMIN_KEY={}", _prefixed("", 32, HEX))),
    Positive(
        "Mapbox secret token",
        said("mapbox {}", lambda r: f"sk.eyJ1Ijoi{rand(r, 50, URLSAFE)}.{rand(r, 22, URLSAFE)}"),
    ),
    Positive("Fastly API token", said("FASTLY_API_TOKEN={}", _prefixed("", 32, URLSAFE))),
    Positive("Netlify token", said("NETLIFY_AUTH_TOKEN={}", _prefixed("nfp_", 36))),
    Positive(
        "Terraform Cloud token",
        said("TFE_TOKEN: {}", lambda r: f"{rand(r, 14)}.atlasv1.{rand(r, 67, URLSAFE)}"),
    ),
    Positive("age secret key", said("age key {}", _prefixed("AGE-SECRET-KEY-1", 58, BECH32))),
    Positive("Databricks token", said("DATABRICKS_TOKEN={}", _prefixed("dapi", 32, HEX))),
    Positive("Vault token", said("VAULT_TOKEN={}", _prefixed("hvs.", 95, URLSAFE))),
    Positive("Docker Hub token", said("docker login -p {}", _prefixed("dckr_pat_", 27, URLSAFE))),
    Positive("Groq API key", said("groq {}", _prefixed("gsk_", 52))),
    Positive("Replicate token", said("replicate {}", _prefixed("r8_", 37))),
    Positive("Perplexity API key", said("pplx {}", _prefixed("pplx-", 48))),
    Positive(
        "Tailscale auth key",
        said("tailscale up --authkey {}", lambda r: f"tskey-auth-{rand(r, 12)}-{rand(r, 30)}"),
    ),
    Positive("PlanetScale token", said("pscale {}", _prefixed("pscale_tkn_", 43))),
    Positive("Alibaba access key", said("aliyun {}", _prefixed("LTAI", 20))),
    Positive(
        "LangSmith key",
        said("LANGSMITH_API_KEY={}", lambda r: f"lsv2_pt_{rand(r, 32, HEX)}_{rand(r, 10, HEX)}"),
    ),
    Positive("Pinecone key", said("pinecone {}", _prefixed("pcsk_", 60))),
    Positive(
        "Dynatrace token",
        said(
            "dynatrace {}",
            lambda r: f"dt0c01.{rand(r, 24, UPPER_DIGITS)}.{rand(r, 64, UPPER_DIGITS)}",
        ),
    ),
    Positive("Teams webhook URL", _teams_webhook),
    Positive("Contentful token", said("contentful {}", _prefixed("CFPAT-", 43, URLSAFE))),
    Positive("Artifactory API key", said("artifactory {}", _prefixed("AKCp", 69))),
    Positive("Octopus Deploy key", said("octopus {}", _prefixed("API-", 26, UPPER_DIGITS))),
    Positive("Okta API token", said("OKTA_API_TOKEN={}", _prefixed("00", 40, URLSAFE))),
    Positive("JSON Web Token", said("a session cookie: {}", jwt)),
    Positive("RSA private key", said("the deploy key:\n{}\n", lambda r: pem(r, "RSA PRIVATE KEY"))),
    Positive("OpenSSH private key", said("{}", lambda r: pem(r, "OPENSSH PRIVATE KEY"))),
    Positive(
        "Postgres URL",
        said("DATABASE_URL=postgres://app:{}@db.internal:5432/app", _prefixed("", 20)),
    ),
    Positive(
        "MongoDB URL",
        said("mongodb+srv://reporter:{}@cluster0.abcde.mongodb.net/", _prefixed("", 16)),
    ),
    Positive("Redis URL", said("redis://:{}@cache.internal:6379/0", _prefixed("", 24))),
    Positive("api_key with 40 hex", said("api_key: {}", _prefixed("", 40, HEX))),
    Positive("quoted secret", said('"client_secret": "{}"', _prefixed("", 32))),
    Positive(
        "password assignment",
        said(
            "password={}",
            lambda r: rand(r, 6, string.ascii_letters) + rand(r, 4, string.digits) + "!",
        ),
    ),
    Positive("passwd in YAML", said("passwd: {}", _prefixed("", 14))),
    Positive("env export", said("export API_TOKEN={}", _prefixed("", 32, URLSAFE))),
    Positive("auth value", said("auth={}", _prefixed("", 24))),
    Positive("credential value", said("credential: {}", _prefixed("", 28))),
    Positive("private_key value", said("private_key = {}", _prefixed("", 44, B64))),
    Positive("access_key value", said("ACCESS_KEY={}", _prefixed("", 20, UPPER_DIGITS))),
    Positive("camelCase secret", said("clientSecret: '{}'", _prefixed("", 30))),
    Positive("bearer token", said("Authorization: Bearer {}", _prefixed("", 40, URLSAFE))),
    Positive("basic auth", _basic_auth),
)

#: Ordinary memory prose, in the ways memories talk about credentials without holding one.
NEGATIVES: tuple[str, ...] = (
    "Fixed in commit 4f3a2b1c9d8e7f6a5b4c3d2e1f0a9b8c7d6e5f4a; the PR has the context.",
    "Reverted a1b2c3d after the outage, then cherry-picked 9e8d7c6b5a4f into release/2.14.",
    "The release tag v2.14.0 was cut from 9c1e4b7, and Node 20.11.1 with pnpm 9.1.0 built it.",
    "Request 3f2a9c1e-8b7d-4e6f-a5c4-1b2d3e4f5a6b came back with a 502 from the gateway.",
    "Trace 0af7651916cd43dd8448eb211c80319c spans the checkout and payment services.",
    "Set ANTHROPIC_API_KEY=<your-token> before running the evals.",
    "export OPENAI_API_KEY=sk-... (ask Ana for the team key; never commit it)",
    "api_key: abc123xyz is what the docs use as an example value.",
    "password: xxxx in the sample config; the real one is in 1Password.",
    "token: ${GITHUB_TOKEN} comes from the Actions secrets.",
    "secret: changeme until the vault is set up",
    "API_KEY=your-api-key-here",
    "`py_compile` passed: scripts/build_index_2.py and tools/gen_docs3.py",
    "Tests passed: 142 of 142 (test_api_v2.py, test_search_v3.py).",
    "keyboard: ctrl+shift+P opens the command palette in VS Code 1.91.",
    "primary_key: user_id_2 in the new schema; foreign_key: accounts.id",
    "max_tokens: 4096 for the selector; the tokenizer: cl100k_base",
    "auth: OAuth2-PKCE for the mobile app, SAML for the admin console.",
    "postgres://postgres:postgres@localhost:5432/app_dev is the local default.",
    # A default made of the user's name, as CI jobs set one up.
    "CI: DATABASE_URL=postgresql://shop:shop_local@localhost:5432/test, then migrate.",
    "mysql://billing:billing123@127.0.0.1/billing_test for the integration tests.",
    "Connect with postgres://user:password@localhost/db in the README example.",
    "Docs: https://docs.stripe.com/keys#obtain-api-keys and https://platform.openai.com/api-keys",
    "The webhook is https://hooks.slack.com/services/<team>/<channel>/<token> (in 1Password).",
    "ghp_ tokens expire after 90 days; we use fine-grained github_pat_ ones now.",
    "The Telegram bot is @acme_deploy_bot; its token is in the team vault, never here.",
    "The JWT looks like eyJhbGciOi... (header.payload.signature); decode it at jwt.io.",
    "modified: 2026-03-04T10:22:13.123Z",
    "session_id=8f14e45fceea167a5a36dedd4bea2543 is logged with every request; it is not secret.",
    "The public key fingerprint is SHA256:uNiVztksCsDhcc0u9e8BujQXVUpKZIDTMczCvj3tD2s.",
    "Use `AKIA…` style key IDs only in the vault; rotate them every 90 days.",
    "SKU SK-1234-XL ships from the Leeds warehouse.",
    "[Deploy notes](project-deploy-2026-03-notes.md) — the March cut-over",
    "The Sentry DSN is public: https://a1b2c3d4e5f6a7b8c9d0e1f2a3b4c5d6@o123456.ingest.sentry.io/7654321",
    "Run `python -m memdir lint examples/memory` before committing.",
    "sha256: 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
    "The bypass: feature_flags.checkout_v2 = on for staff accounts",
    "monkey: patched requests.Session in conftest_2.py",
    "AccountName=acme;AccountKey=<key>;EndpointSuffix=core.windows.net is the template.",
    "Mailgun sandbox domain: sandbox123.mailgun.org; the key lives in the vault.",
    "The Discord application id 112233445566778899 is public; the bot token is not here.",
    "Bearer tokens go in the Authorization header (Authorization: Bearer <token>).",
    "cache_key: f'{user_id}:{version}' with a TTL of 300 s.",
    "The password policy: at least 12 characters, rotated every 90 days.",
    "Heroku app id 01234567-89ab-cdef-0123-456789abcdef is in the dashboard URL.",
    "The key rotation runbook lives in docs/runbooks/key-rotation-2025.md.",
    "passphrase: none; the SSH key is on the YubiKey.",
    "api_version: 2024-06-01, secret_name: prod/db/password, token_ttl: 3600",
    "The snowflake id 1234567890123456789 of the #deploys channel.",
    "Build 20240601.3 of the mobile app shipped with SDK 34.0.0-rc2.",
    "We pin sentry-sdk==2.3.1 and openai==1.30.0 in requirements-prod-2024.txt.",
)
