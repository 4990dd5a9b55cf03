"""Passwords in URL userinfo: only the password is masked; documentation placeholders are left alone."""

from __future__ import annotations

import pytest
from kronii.redaction.detectors import UrlCredentialDetector

from tests.unit.redaction.redaction_support import detect

DETECTOR = UrlCredentialDetector()


@pytest.mark.parametrize(
    ("text", "password"),
    [
        ("DATABASE_URL=postgres://app:Xk9#mQ2v@db.internal:5432/app", "Xk9#mQ2v"),
        ("mongodb+srv://admin:s3cr3tP4ss@cluster0.mongodb.net/test", "s3cr3tP4ss"),
        ("git clone https://oauth2:abc123def456@gitlab.exemple.com/group/repo.git", "abc123def456"),
        ("redis://:hunter2hunter2@cache:6379/0", "hunter2hunter2"),
        ("amqp://guest:p@ss@rabbit:5672//", "p@ss"),
    ],
)
def test_password_in_url(text: str, password: str) -> None:
    assert detect(DETECTOR, text) == [("URL_CREDENTIAL", password)]


@pytest.mark.parametrize(
    "text",
    [
        "https://example.com/path?a=b",
        "ssh://git@github.com/org/repo.git",
        "postgres://user:password@localhost/db",  # the documented shape, not a password
        "postgres://user:${DB_PASSWORD}@localhost/db",
        "http://localhost:8080/@admin",
        "see https://user@exemple.com:8443/",
    ],
)
def test_urls_without_credentials(text: str) -> None:
    assert detect(DETECTOR, text) == []
