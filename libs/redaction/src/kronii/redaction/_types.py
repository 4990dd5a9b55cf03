# ruff: noqa: S105  (the names of secret types are not secrets)
"""The built-in finding types and the coarse category each belongs to.

Custom patterns from a policy or a plugin may add their own type names (upper snake case); those count as
the POLICY category.
"""

from __future__ import annotations

import re
from enum import StrEnum

__all__ = ["Category", "FindingType", "category_of", "is_valid_type_name"]


class Category(StrEnum):
    SECRET = "secret"
    PERSONAL = "personal"
    POLICY = "policy"


class FindingType(StrEnum):
    # Secrets without a vendor.
    PRIVATE_KEY = "PRIVATE_KEY"
    PASSWORD = "PASSWORD"
    PASSWORD_HASH = "PASSWORD_HASH"
    SECRET = "SECRET"
    HIGH_ENTROPY = "HIGH_ENTROPY"
    JWT = "JWT"
    URL_CREDENTIAL = "URL_CREDENTIAL"
    # Vendor formats.
    AWS_ACCESS_KEY_ID = "AWS_ACCESS_KEY_ID"
    AWS_SECRET_ACCESS_KEY = "AWS_SECRET_ACCESS_KEY"
    GITHUB_TOKEN = "GITHUB_TOKEN"
    GITLAB_TOKEN = "GITLAB_TOKEN"
    SLACK_TOKEN = "SLACK_TOKEN"
    SLACK_WEBHOOK = "SLACK_WEBHOOK"
    STRIPE_KEY = "STRIPE_KEY"
    GOOGLE_API_KEY = "GOOGLE_API_KEY"
    GOOGLE_OAUTH_TOKEN = "GOOGLE_OAUTH_TOKEN"
    OPENAI_API_KEY = "OPENAI_API_KEY"
    ANTHROPIC_API_KEY = "ANTHROPIC_API_KEY"
    NPM_TOKEN = "NPM_TOKEN"
    PYPI_TOKEN = "PYPI_TOKEN"
    DOCKER_TOKEN = "DOCKER_TOKEN"
    HUGGINGFACE_TOKEN = "HUGGINGFACE_TOKEN"
    DIGITALOCEAN_TOKEN = "DIGITALOCEAN_TOKEN"
    TWILIO_API_KEY = "TWILIO_API_KEY"
    SENDGRID_API_KEY = "SENDGRID_API_KEY"
    AZURE_KEY = "AZURE_KEY"
    SHOPIFY_TOKEN = "SHOPIFY_TOKEN"
    MAILGUN_KEY = "MAILGUN_KEY"
    DISCORD_TOKEN = "DISCORD_TOKEN"
    DISCORD_WEBHOOK = "DISCORD_WEBHOOK"
    TELEGRAM_BOT_TOKEN = "TELEGRAM_BOT_TOKEN"
    VAULT_TOKEN = "VAULT_TOKEN"
    ATLASSIAN_TOKEN = "ATLASSIAN_TOKEN"
    LINEAR_API_KEY = "LINEAR_API_KEY"
    NOTION_TOKEN = "NOTION_TOKEN"
    GRAFANA_TOKEN = "GRAFANA_TOKEN"
    NEW_RELIC_KEY = "NEW_RELIC_KEY"
    POSTMAN_API_KEY = "POSTMAN_API_KEY"
    SENTRY_TOKEN = "SENTRY_TOKEN"
    DATABRICKS_TOKEN = "DATABRICKS_TOKEN"
    ALIBABA_ACCESS_KEY = "ALIBABA_ACCESS_KEY"
    AGE_SECRET_KEY = "AGE_SECRET_KEY"
    SUPABASE_TOKEN = "SUPABASE_TOKEN"
    SQUARE_TOKEN = "SQUARE_TOKEN"
    TAILSCALE_KEY = "TAILSCALE_KEY"
    GROQ_API_KEY = "GROQ_API_KEY"
    XAI_API_KEY = "XAI_API_KEY"
    REPLICATE_TOKEN = "REPLICATE_TOKEN"
    PERPLEXITY_API_KEY = "PERPLEXITY_API_KEY"
    DOPPLER_TOKEN = "DOPPLER_TOKEN"
    PULUMI_TOKEN = "PULUMI_TOKEN"
    FLY_TOKEN = "FLY_TOKEN"
    PLANETSCALE_TOKEN = "PLANETSCALE_TOKEN"
    TERRAFORM_TOKEN = "TERRAFORM_TOKEN"
    DROPBOX_TOKEN = "DROPBOX_TOKEN"
    FACEBOOK_TOKEN = "FACEBOOK_TOKEN"
    MAILCHIMP_KEY = "MAILCHIMP_KEY"
    HEROKU_KEY = "HEROKU_KEY"
    BITBUCKET_TOKEN = "BITBUCKET_TOKEN"
    # Personal data.
    EMAIL = "EMAIL"
    PHONE = "PHONE"
    PAYMENT_CARD = "PAYMENT_CARD"
    IBAN = "IBAN"
    US_SSN = "US_SSN"
    UK_NINO = "UK_NINO"
    NL_BSN = "NL_BSN"
    ES_DNI = "ES_DNI"
    FI_HETU = "FI_HETU"
    IT_FISCAL_CODE = "IT_FISCAL_CODE"
    BR_CPF = "BR_CPF"
    BR_CNPJ = "BR_CNPJ"
    IN_AADHAAR = "IN_AADHAAR"
    FR_NIR = "FR_NIR"
    DE_STEUER_ID = "DE_STEUER_ID"
    PL_PESEL = "PL_PESEL"
    CA_SIN = "CA_SIN"
    AU_TFN = "AU_TFN"
    PASSPORT = "PASSPORT"
    MRZ = "MRZ"
    DATE_OF_BIRTH = "DATE_OF_BIRTH"
    MAC_ADDRESS = "MAC_ADDRESS"
    POSTAL_ADDRESS = "POSTAL_ADDRESS"
    IP_ADDRESS = "IP_ADDRESS"
    USERNAME = "USERNAME"
    # From catalogues (python-stdnum's checked formats) and models.
    NATIONAL_ID = "NATIONAL_ID"
    TAX_ID = "TAX_ID"
    BANK_ACCOUNT = "BANK_ACCOUNT"
    DEVICE_ID = "DEVICE_ID"
    VEHICLE_ID = "VEHICLE_ID"
    PERSON_NAME = "PERSON_NAME"
    GPS_COORDINATES = "GPS_COORDINATES"
    LICENCE_PLATE = "LICENCE_PLATE"
    # User policy.
    DENIED = "DENIED"


_PERSONAL = frozenset(
    {
        FindingType.EMAIL,
        FindingType.PHONE,
        FindingType.PAYMENT_CARD,
        FindingType.IBAN,
        FindingType.US_SSN,
        FindingType.UK_NINO,
        FindingType.NL_BSN,
        FindingType.ES_DNI,
        FindingType.FI_HETU,
        FindingType.IT_FISCAL_CODE,
        FindingType.BR_CPF,
        FindingType.BR_CNPJ,
        FindingType.IN_AADHAAR,
        FindingType.FR_NIR,
        FindingType.DE_STEUER_ID,
        FindingType.PL_PESEL,
        FindingType.CA_SIN,
        FindingType.AU_TFN,
        FindingType.PASSPORT,
        FindingType.MRZ,
        FindingType.DATE_OF_BIRTH,
        FindingType.MAC_ADDRESS,
        FindingType.POSTAL_ADDRESS,
        FindingType.IP_ADDRESS,
        FindingType.USERNAME,
        FindingType.NATIONAL_ID,
        FindingType.TAX_ID,
        FindingType.BANK_ACCOUNT,
        FindingType.DEVICE_ID,
        FindingType.VEHICLE_ID,
        FindingType.PERSON_NAME,
        FindingType.GPS_COORDINATES,
        FindingType.LICENCE_PLATE,
    }
)
_BUILT_IN = frozenset(FindingType.__members__.values())
_TYPE_NAME = re.compile(r"[A-Z][A-Z0-9_]{0,39}")


def category_of(finding_type: str) -> Category:
    if finding_type in _PERSONAL:
        return Category.PERSONAL
    if finding_type == FindingType.DENIED or finding_type not in _BUILT_IN:
        return Category.POLICY
    return Category.SECRET


def is_valid_type_name(name: str) -> bool:
    """Type names become placeholders like `[NAME_1]`, so they are kept to upper snake case."""
    return _TYPE_NAME.fullmatch(name) is not None
