"""Vendor token formats, as data. Each row is taken from the vendor's public documentation of its format
(prefixes and lengths), cross-checked against gitleaks' and detect-secrets' public rules.

A `PrefixRule` is anchored on a literal: the detector finds every rule's literal in one pass, then matches the
rule's body after it (and, for the few formats whose literal sits in the middle, its head before it). Lengths are a little more lenient than the documented ones so that shortened or reformatted tokens
in docs and chat are still caught; the prefixes keep the false positives down.
"""

from __future__ import annotations

from dataclasses import dataclass

from .._types import FindingType as T

__all__ = ["CONTEXT_RULES", "PREFIX_RULES", "ContextRule", "PrefixRule"]


@dataclass(frozen=True, slots=True)
class PrefixRule:
    type: str
    prefixes: tuple[str, ...]
    body: str  # regex for what follows the prefix, including its own right boundary
    confidence: float = 0.95
    mask_prefix: bool = True  # False when the prefix is a label, e.g. `AccountKey=`
    with_scheme: bool = False  # webhook URLs: mask the `https://` before the prefix too
    head: str = ""  # regex for a part that comes before the literal, e.g. the bot id before `:AA`
    head_max: int = 0  # the longest that part can be


@dataclass(frozen=True, slots=True)
class ContextRule:
    """A format without a literal prefix: run only when one of `keywords` (lower case) is in the text."""

    type: str
    keywords: tuple[str, ...]
    pattern: str
    confidence: float = 0.9


_END = r"(?![A-Za-z0-9])"
_END_URLSAFE = r"(?![A-Za-z0-9_\-])"

PREFIX_RULES: tuple[PrefixRule, ...] = (
    PrefixRule(T.AWS_ACCESS_KEY_ID, ("AKIA", "ASIA", "ABIA", "ACCA"), r"[A-Z0-9]{16}" + _END),
    PrefixRule(T.AWS_ACCESS_KEY_ID, ("A3T",), r"[A-Z0-9]{17}" + _END),
    PrefixRule(T.GITHUB_TOKEN, ("ghp_", "gho_", "ghu_", "ghs_", "ghr_"), r"[A-Za-z0-9]{20,255}" + _END),
    PrefixRule(T.GITHUB_TOKEN, ("github_pat_",), r"[A-Za-z0-9_]{22,255}" + _END),
    PrefixRule(
        T.GITLAB_TOKEN,
        ("glpat-", "gldt-", "glrt-", "glptt-", "glft-", "glcbt-", "glimt-", "glagent-", "glsoat-", "gloas-"),
        r"[A-Za-z0-9_\-]{20,}(?:\.[A-Za-z0-9_\-]+){0,3}" + _END_URLSAFE,
    ),
    PrefixRule(T.GITLAB_TOKEN, ("GR1348941",), r"[A-Za-z0-9_\-]{20,}" + _END_URLSAFE),
    PrefixRule(
        T.SLACK_TOKEN,
        ("xoxb-", "xoxp-", "xoxa-", "xoxr-", "xoxs-", "xoxo-", "xoxe-", "xapp-"),
        r"[0-9A-Za-z\-]{10,}" + _END,
    ),
    PrefixRule(T.SLACK_TOKEN, ("xoxe.xox",), r"[bp]-[0-9A-Za-z\-]{10,}" + _END),
    PrefixRule(
        T.SLACK_WEBHOOK,
        ("hooks.slack.com/",),
        r"(?:services|workflows|triggers)/[A-Za-z0-9_/+\-]{20,}",
        with_scheme=True,
    ),
    PrefixRule(T.STRIPE_KEY, ("sk_live_", "rk_live_", "sk_test_", "rk_test_"), r"[A-Za-z0-9]{10,247}" + _END),
    # Publishable keys are meant for browsers, but they still identify the account.
    PrefixRule(T.STRIPE_KEY, ("pk_live_", "pk_test_"), r"[A-Za-z0-9]{10,247}" + _END, confidence=0.7),
    PrefixRule(T.STRIPE_KEY, ("whsec_",), r"[A-Za-z0-9+/=]{24,}" + _END),
    PrefixRule(T.GOOGLE_API_KEY, ("AIza",), r"[0-9A-Za-z_\-]{30,40}" + _END_URLSAFE),
    PrefixRule(T.GOOGLE_OAUTH_TOKEN, ("GOCSPX-",), r"[A-Za-z0-9_\-]{20,}" + _END_URLSAFE),
    PrefixRule(T.GOOGLE_OAUTH_TOKEN, ("ya29.",), r"[0-9A-Za-z_\-]{20,}" + _END_URLSAFE),
    PrefixRule(T.GOOGLE_OAUTH_TOKEN, ("1//0",), r"[0-9A-Za-z_\-]{30,}" + _END_URLSAFE),
    PrefixRule(T.ANTHROPIC_API_KEY, ("sk-ant-",), r"[A-Za-z0-9_\-]{20,}" + _END_URLSAFE),
    PrefixRule(
        T.OPENAI_API_KEY, ("sk-proj-", "sk-svcacct-", "sk-admin-"), r"[A-Za-z0-9_\-]{20,}" + _END_URLSAFE
    ),
    PrefixRule(
        T.OPENAI_API_KEY,
        ("sk-",),
        r"(?!ant-|proj-|svcacct-|admin-)(?=[A-Za-z]*[0-9])[A-Za-z0-9]{20,}" + _END_URLSAFE,
        confidence=0.85,
    ),
    PrefixRule(T.NPM_TOKEN, ("npm_",), r"[A-Za-z0-9]{30,40}" + _END),
    PrefixRule(T.PYPI_TOKEN, ("pypi-Ag",), r"[A-Za-z0-9_\-]{50,}" + _END_URLSAFE),
    PrefixRule(T.DOCKER_TOKEN, ("dckr_pat_", "dckr_oat_"), r"[A-Za-z0-9_\-]{20,}" + _END_URLSAFE),
    PrefixRule(T.HUGGINGFACE_TOKEN, ("hf_", "api_org_"), r"[A-Za-z0-9]{30,}" + _END),
    PrefixRule(T.DIGITALOCEAN_TOKEN, ("dop_v1_", "doo_v1_", "dor_v1_"), r"[a-f0-9]{64}" + _END),
    PrefixRule(T.TWILIO_API_KEY, ("SK",), r"[0-9a-f]{32}" + _END, confidence=0.85),
    PrefixRule(T.SENDGRID_API_KEY, ("SG.",), r"[A-Za-z0-9_\-]{16,32}\.[A-Za-z0-9_\-]{16,64}" + _END_URLSAFE),
    PrefixRule(
        T.AZURE_KEY,
        ("AccountKey=", "SharedAccessKey=", "SharedAccessSignature="),
        r"[A-Za-z0-9+/%]{30,}={0,2}",
        mask_prefix=False,
    ),
    PrefixRule(T.AZURE_KEY, ("sig=",), r"[A-Za-z0-9%+/]{30,}={0,2}", confidence=0.8, mask_prefix=False),
    PrefixRule(T.SHOPIFY_TOKEN, ("shpat_", "shpca_", "shppa_", "shpss_"), r"[a-fA-F0-9]{32}" + _END),
    PrefixRule(T.MAILGUN_KEY, ("key-",), r"(?=[a-z]*[0-9])[0-9a-z]{32}" + _END, confidence=0.85),
    PrefixRule(T.VAULT_TOKEN, ("hvs.", "hvb.", "hvr."), r"[A-Za-z0-9_\-]{24,}" + _END_URLSAFE),
    PrefixRule(T.ATLASSIAN_TOKEN, ("ATATT3", "ATCTT3"), r"[A-Za-z0-9_\-=]{50,}" + _END_URLSAFE),
    PrefixRule(T.BITBUCKET_TOKEN, ("ATBB",), r"[A-Za-z0-9_=.\-]{28,}" + _END_URLSAFE),
    PrefixRule(T.LINEAR_API_KEY, ("lin_api_",), r"[A-Za-z0-9]{32,}" + _END),
    PrefixRule(T.NOTION_TOKEN, ("ntn_",), r"[A-Za-z0-9]{40,}" + _END),
    PrefixRule(T.NOTION_TOKEN, ("secret_",), r"[A-Za-z0-9]{43}" + _END_URLSAFE, confidence=0.8),
    PrefixRule(T.GRAFANA_TOKEN, ("glc_",), r"[A-Za-z0-9+/]{32,}={0,2}"),
    PrefixRule(T.GRAFANA_TOKEN, ("glsa_",), r"[A-Za-z0-9]{32}_[A-Fa-f0-9]{8}" + _END),
    PrefixRule(T.NEW_RELIC_KEY, ("NRAK-",), r"[A-Z0-9]{27}" + _END),
    PrefixRule(T.POSTMAN_API_KEY, ("PMAK-",), r"[a-f0-9]{24}-[a-f0-9]{34}" + _END),
    PrefixRule(T.SENTRY_TOKEN, ("sntrys_",), r"[A-Za-z0-9+/=_]{50,}"),
    PrefixRule(T.SENTRY_TOKEN, ("sntryu_",), r"[a-f0-9]{64}" + _END),
    PrefixRule(T.DATABRICKS_TOKEN, ("dapi",), r"[a-f0-9]{32}(?:-\d)?" + _END),
    PrefixRule(T.ALIBABA_ACCESS_KEY, ("LTAI",), r"[A-Za-z0-9]{12,20}" + _END),
    PrefixRule(T.AGE_SECRET_KEY, ("AGE-SECRET-KEY-1",), r"[0-9A-Z]{58}" + _END),
    PrefixRule(T.SUPABASE_TOKEN, ("sbp_",), r"[a-f0-9]{40}" + _END),
    PrefixRule(T.SUPABASE_TOKEN, ("sb_secret_",), r"[A-Za-z0-9_\-]{20,}" + _END_URLSAFE),
    PrefixRule(T.SQUARE_TOKEN, ("sq0atp-", "sq0csp-"), r"[A-Za-z0-9_\-]{22,}" + _END_URLSAFE),
    PrefixRule(T.FACEBOOK_TOKEN, ("EAA",), r"[A-Za-z0-9]{100,}" + _END),
    PrefixRule(
        T.TAILSCALE_KEY, ("tskey-",), r"(?:auth|api|client|scim|webhook)-[A-Za-z0-9_\-]{10,}" + _END_URLSAFE
    ),
    PrefixRule(T.GROQ_API_KEY, ("gsk_",), r"[A-Za-z0-9]{40,}" + _END),
    PrefixRule(T.XAI_API_KEY, ("xai-",), r"[A-Za-z0-9]{60,}" + _END),
    PrefixRule(T.REPLICATE_TOKEN, ("r8_",), r"[A-Za-z0-9]{30,}" + _END),
    PrefixRule(T.PERPLEXITY_API_KEY, ("pplx-",), r"[A-Za-z0-9]{40,}" + _END),
    PrefixRule(
        T.DOPPLER_TOKEN,
        ("dp.pt.", "dp.st.", "dp.sa.", "dp.ct.", "dp.scim.", "dp.audit."),
        r"[A-Za-z0-9]{40,44}",
    ),
    PrefixRule(T.PULUMI_TOKEN, ("pul-",), r"[a-f0-9]{40}" + _END),
    PrefixRule(T.FLY_TOKEN, ("fo1_",), r"[A-Za-z0-9_\-]{40,}" + _END_URLSAFE),
    PrefixRule(T.FLY_TOKEN, ("FlyV1 fm2_",), r"[A-Za-z0-9+/=_\-,]{100,}"),
    PrefixRule(
        T.PLANETSCALE_TOKEN, ("pscale_tkn_", "pscale_pw_", "pscale_oauth_"), r"[A-Za-z0-9_\-.=]{32,64}" + _END
    ),
    PrefixRule(T.DROPBOX_TOKEN, ("sl.",), r"[A-Za-z0-9_\-=.]{130,}"),
    PrefixRule(T.HEROKU_KEY, ("HRKU-",), r"[A-Za-z0-9_\-]{30,}" + _END_URLSAFE),
    PrefixRule(
        T.DISCORD_WEBHOOK,
        ("discord.com/api/webhooks/", "discordapp.com/api/webhooks/"),
        r"\d{17,20}/[A-Za-z0-9_\-]{60,68}",
        with_scheme=True,
    ),
    # The bot id before the colon names the bot: it is masked with the secret. In the Bot API's URLs it follows
    # `/bot` (`api.telegram.org/bot123456789:AA.../getMe`). Ids are 5 to 16 digits long (gitleaks' bound); the
    # secret is 35 characters, one or two fewer in shortened examples such as the Bot API documentation's own.
    PrefixRule(
        T.TELEGRAM_BOT_TOKEN,
        (":AA",),
        r"[A-Za-z0-9_\-]{30,34}" + _END_URLSAFE,
        head=r"(?:bot)?[0-9]{5,16}",
        head_max=19,
    ),
    PrefixRule(
        T.TERRAFORM_TOKEN,
        (".atlasv1.",),
        r"[A-Za-z0-9_\-=]{60,70}" + _END_URLSAFE,
        head=r"[A-Za-z0-9]{14}",
        head_max=14,
    ),
    PrefixRule(T.MAILCHIMP_KEY, ("-us",), r"[0-9]{1,2}" + _END, head=r"[0-9a-f]{32}", head_max=32),
    # Password hashes (crypt(3) formats): not the password, but crackable offline.
    PrefixRule(T.PASSWORD_HASH, ("$2a$", "$2b$", "$2y$"), r"\d{2}\$[./A-Za-z0-9]{53}"),
    PrefixRule(
        T.PASSWORD_HASH, ("$5$", "$6$"), r"(?:rounds=\d+\$)?[./A-Za-z0-9]{1,16}\$[./A-Za-z0-9]{43,86}"
    ),
    # MD5-crypt and Apache's variant of it (htpasswd -m), an 8-character salt at most and 22 of hash.
    PrefixRule(T.PASSWORD_HASH, ("$1$", "$apr1$"), r"[./A-Za-z0-9]{1,8}\$[./A-Za-z0-9]{22}"),
    PrefixRule(T.PASSWORD_HASH, ("{SHA}", "{SSHA}"), r"[A-Za-z0-9+/]{27,}={0,2}"),
    PrefixRule(T.PASSWORD_HASH, ("$y$",), r"[./A-Za-z0-9]+\$[./A-Za-z0-9]{1,86}\$[./A-Za-z0-9]{43}"),
    PrefixRule(
        T.PASSWORD_HASH,
        ("$argon2id$", "$argon2i$", "$argon2d$"),
        r"v=\d+\$m=\d+,t=\d+,p=\d+\$[A-Za-z0-9+/]+\$[A-Za-z0-9+/]+",
    ),
)

CONTEXT_RULES: tuple[ContextRule, ...] = (
    # A bot token is base64(user id) . base64(timestamp) . HMAC; the id is a snowflake, so it starts M/N/O.
    ContextRule(
        T.DISCORD_TOKEN,
        ("discord",),
        # The look-behind after the first letter: a pattern that opens with one is tried at every position.
        r"[MNO](?<![A-Za-z0-9_\-][MNO])[A-Za-z0-9_\-]{23,27}\.[A-Za-z0-9_\-]{6,7}\.[A-Za-z0-9_\-]{27,40}"
        + _END_URLSAFE,
    ),
)
