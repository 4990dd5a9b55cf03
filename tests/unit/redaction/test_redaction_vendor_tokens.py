"""Vendor token formats, with examples in the shapes the vendors document."""

from __future__ import annotations

import pytest
from kronii.redaction import RedactionEngine
from kronii.redaction.detectors import AwsSecretKeyDetector, VendorTokenDetector

from tests.unit.redaction.redaction_support import detect

VENDOR = VendorTokenDetector()
AWS_SECRET = AwsSecretKeyDetector()


@pytest.mark.parametrize(
    ("text", "expected_type", "expected_value"),
    [
        # AWS's documented example access key id (IAM user guide).
        ("aws_access_key_id = AKIAIOSFODNN7EXAMPLE", "AWS_ACCESS_KEY_ID", "AKIAIOSFODNN7EXAMPLE"),
        ("temporary ASIAY34FZKBOKMUTVV7A issued", "AWS_ACCESS_KEY_ID", "ASIAY34FZKBOKMUTVV7A"),
        (
            "GITHUB_TOKEN=ghp_16C7e42F292c6912E7710c838347Ae178B4a",
            "GITHUB_TOKEN",
            "ghp_16C7e42F292c6912E7710c838347Ae178B4a",
        ),
        (
            "token github_pat_11ABCDEFG0123456789abc_0123456789abcdefghijABCDEFGHIJ0123456789abcdefghijKLMNO",
            "GITHUB_TOKEN",
            "github_pat_11ABCDEFG0123456789abc_0123456789abcdefghijABCDEFGHIJ0123456789abcdefghijKLMNO",
        ),
        ("export GITLAB_TOKEN=glpat-xK8dWz3qR5tY7uI9oP1a", "GITLAB_TOKEN", "glpat-xK8dWz3qR5tY7uI9oP1a"),
        (
            "SLACK_BOT_TOKEN=xoxb-2345678901-3456789012345-AbCdEfGhIjKlMnOpQrStUvWx",
            "SLACK_TOKEN",
            "xoxb-2345678901-3456789012345-AbCdEfGhIjKlMnOpQrStUvWx",
        ),
        # The webhook shape Slack documents (T.../B.../secret).
        (
            "curl -X POST https://hooks.slack.com/services/T00000000/B00000000/XXXXXXXXXXXXXXXXXXXXXXXX -d @msg",
            "SLACK_WEBHOOK",
            "https://hooks.slack.com/services/T00000000/B00000000/XXXXXXXXXXXXXXXXXXXXXXXX",
        ),
        (
            "stripe.api_key = 'sk_live_4eC39HqLyjWDarjtT1zdp7dc'",
            "STRIPE_KEY",
            "sk_live_4eC39HqLyjWDarjtT1zdp7dc",
        ),
        ("STRIPE_SECRET=sk_test_4eC39HqLyjWDarjtT1zdp7dc", "STRIPE_KEY", "sk_test_4eC39HqLyjWDarjtT1zdp7dc"),
        ("restricted rk_live_51H8q2kLm3Np4Qr5St6Uv7Wx", "STRIPE_KEY", "rk_live_51H8q2kLm3Np4Qr5St6Uv7Wx"),
        (
            "key=AIzaSyDdI0hCZtE6vySjMm-WEfRq3CPzqKqqsHI&cx=1",
            "GOOGLE_API_KEY",
            "AIzaSyDdI0hCZtE6vySjMm-WEfRq3CPzqKqqsHI",
        ),
        (
            "OPENAI_API_KEY=sk-proj-Xk3b9QmZ7vR2tL5nP8wY1cF4hJ6gD0sA_eU-iO",
            "OPENAI_API_KEY",
            "sk-proj-Xk3b9QmZ7vR2tL5nP8wY1cF4hJ6gD0sA_eU-iO",
        ),
        (
            "legacy sk-aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3zA5bC7d",
            "OPENAI_API_KEY",
            "sk-aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3zA5bC7d",
        ),
        (
            "ANTHROPIC_API_KEY=sk-ant-api03-Zq8rT2vX5bN7mK9pL1wE3yU6iO0aS4dF-gH7jK2lQ9cV5bN8mX1zA3sD6fG-AbCdEf",
            "ANTHROPIC_API_KEY",
            "sk-ant-api03-Zq8rT2vX5bN7mK9pL1wE3yU6iO0aS4dF-gH7jK2lQ9cV5bN8mX1zA3sD6fG-AbCdEf",
        ),
        (
            "//npm.pkg.github.com/:_authToken=npm_a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8",
            "NPM_TOKEN",
            "npm_a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8",
        ),
        (
            "password = pypi-AgEIcHlwaS5vcmcCJDEyMzQ1Njc4LTEyMzQtMTIzNC0xMjM0LTEyMzQ1Njc4OTBhYgACKlsz",
            "PYPI_TOKEN",
            "pypi-AgEIcHlwaS5vcmcCJDEyMzQ1Njc4LTEyMzQtMTIzNC0xMjM0LTEyMzQ1Njc4OTBhYgACKlsz",
        ),
        (
            "docker login -u me --password-stdin <<< dckr_pat_2b3e36beeb386dfdaacb9b46004",
            "DOCKER_TOKEN",
            "dckr_pat_2b3e36beeb386dfdaacb9b46004",
        ),
        (
            "HF_TOKEN=hf_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789",
            "HUGGINGFACE_TOKEN",
            "hf_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789",
        ),
        (
            "DO_TOKEN=dop_v1_4f2d6a8b0c1e3f5a7b9c0d2e4f6a8b0c1d3e5f7a9b0c2d4e6f8a0b1c3d5e7f9a",
            "DIGITALOCEAN_TOKEN",
            "dop_v1_4f2d6a8b0c1e3f5a7b9c0d2e4f6a8b0c1d3e5f7a9b0c2d4e6f8a0b1c3d5e7f9a",
        ),
        (
            "TWILIO_API_KEY=SK2a6f8b0c1d3e5f7a9b0c2d4e6f8a0b1c",
            "TWILIO_API_KEY",
            "SK2a6f8b0c1d3e5f7a9b0c2d4e6f8a0b1c",
        ),
        (
            "SENDGRID_API_KEY=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",
            "SENDGRID_API_KEY",
            "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",
        ),
        (
            "DefaultEndpointsProtocol=https;AccountName=acct;AccountKey="
            "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==;",
            "AZURE_KEY",
            "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==",
        ),
        (
            "SHOPIFY_TOKEN=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",
            "SHOPIFY_TOKEN",
            "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",
        ),
        # Mailgun's documented example key.
        ("api: key-3ax6xnjp29jd6fds4gc373sgvjxteol0", "MAILGUN_KEY", "key-3ax6xnjp29jd6fds4gc373sgvjxteol0"),
        (
            "mailgun key-0123456789abcdef0123456789abcdef",
            "MAILGUN_KEY",
            "key-0123456789abcdef0123456789abcdef",
        ),
        (
            "TELEGRAM=123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw1",
            "TELEGRAM_BOT_TOKEN",
            "123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw1",
        ),
        (
            "VAULT_TOKEN=hvs.CAESIJlU3bq0w8cLqk2r5Tz7yX9vB1nM4pQ6sD8fG0hJ",
            "VAULT_TOKEN",
            "hvs.CAESIJlU3bq0w8cLqk2r5Tz7yX9vB1nM4pQ6sD8fG0hJ",
        ),
        (
            "mc=0123456789abcdef0123456789abcdef-us21",
            "MAILCHIMP_KEY",
            "0123456789abcdef0123456789abcdef-us21",
        ),
        (
            "root:$2b$12$KIXQJQ9Qx2q7v8pYl1Vb3eQ1m0R3n5b7c9d1e3f5g7h9j1k3l5m7n:19000:0:99999:7:::",
            "PASSWORD_HASH",
            "$2b$12$KIXQJQ9Qx2q7v8pYl1Vb3eQ1m0R3n5b7c9d1e3f5g7h9j1k3l5m7n",
        ),
    ],
)
def test_vendor_token_found(text: str, expected_type: str, expected_value: str) -> None:
    assert (expected_type, expected_value) in detect(VENDOR, text)


def test_discord_bot_token_is_masked_whole_with_or_without_context() -> None:
    # The first part is base64url("123456789012345678"), a snowflake id: it names the bot and is masked too.
    token = "MTIzNDU2Nzg5MDEyMzQ1Njc4.GaBcDe.AbCdEfGhIjKlMnOpQrStUvWxYz0123456789ab"
    assert ("DISCORD_TOKEN", token) in detect(VENDOR, f"DISCORD_BOT_TOKEN={token}")
    assert detect(VENDOR, f"value={token}") == [("DISCORD_TOKEN", token)]
    assert detect(VENDOR, f'client.run("{token}")') == [("DISCORD_TOKEN", token)]


def test_discord_shape_without_a_snowflake_needs_discord_context() -> None:
    # Same shape, but the first part decodes to "345abcdefghijklmnop", which is no user id.
    token = "MzQ1YWJjZGVmZ2hpamtsbW5vcA.GaBcDe.AbCdEfGhIjKlMnOpQrStUvWxYz0123456789ab"
    assert detect(VENDOR, f"value={token}") == []
    assert detect(VENDOR, f"discord bot: {token}") == [("DISCORD_TOKEN", token)]


@pytest.mark.parametrize(
    ("text", "token"),
    [
        # The Bot API documentation's example token (34 characters after the colon, one short of real ones).
        (
            "TOKEN=110201543:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw",
            "110201543:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw",
        ),
        (
            "curl https://api.telegram.org/bot7012345678:AAFx9kLmN2pQrStUvWxYz0123456789abcd/getMe",
            "bot7012345678:AAFx9kLmN2pQrStUvWxYz0123456789abcd",
        ),
        (
            'Bot(token="98765:AAE1x2y3z4A5B6C7D8E9F0g1h2i3j4k5l6m")',
            "98765:AAE1x2y3z4A5B6C7D8E9F0g1h2i3j4k5l6m",
        ),
    ],
)
def test_telegram_bot_token_is_masked_with_its_bot_id(text: str, token: str) -> None:
    assert detect(VENDOR, text) == [("TELEGRAM_BOT_TOKEN", token)]


@pytest.mark.parametrize(
    "text",
    [
        "the monkey-0123456789abcdef0123456789abcdef stays",  # "key-" glued to a word
        "skills: sk-learn is not a key",
        "AKIA is a prefix, AKIAshort too short",
        "gh_pages ghp_short",
        "task SKU SK12 and ASK-42",
        "risk_live_updates = True",
        "DEADBEEFAKIAIOSFODNN7EXAMPLE",  # prefix inside a longer token
    ],
)
def test_vendor_near_misses(text: str) -> None:
    assert detect(VENDOR, text) == []


def test_aws_secret_key_needs_aws_context() -> None:
    # AWS's documented example secret access key.
    secret = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
    credentials = f"[default]\naws_access_key_id = AKIAIOSFODNN7EXAMPLE\naws_secret_access_key = {secret}\n"
    assert detect(AWS_SECRET, credentials) == [("AWS_SECRET_ACCESS_KEY", secret)]
    csv = f"Access key ID,Secret access key\nAKIAIOSFODNN7EXAMPLE,{secret}\n"
    assert detect(AWS_SECRET, csv) == [("AWS_SECRET_ACCESS_KEY", secret)]
    assert detect(AWS_SECRET, f"random forty chars {secret} without context") == []


def test_aws_secret_key_ignores_hex_digests() -> None:
    text = "aws_secret_access_key is rotated; commit 0123456789abcdef0123456789abcdef01234567"
    assert detect(AWS_SECRET, text) == []


@pytest.mark.parametrize(
    ("line", "redacted"),
    [
        (
            'client.run("MTIzNDU2Nzg5MDEyMzQ1Njc4OQ.GaBcDe.AbCdEfGhIjKlMnOpQrStUvWxYz0123456789ab")',
            'client.run("[DISCORD_TOKEN_1]")',
        ),
        ("TOKEN=110201543:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw", "TOKEN=[TELEGRAM_BOT_TOKEN_1]"),
    ],
)
def test_engine_masks_bot_tokens_whole(line: str, redacted: str) -> None:
    # Before, the id half survived next to a secret half masked as HIGH_ENTROPY.
    assert RedactionEngine().redact(line).text == redacted
