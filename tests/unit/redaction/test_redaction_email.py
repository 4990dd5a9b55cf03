"""E-mail addresses, and the look-alikes that are not."""

from __future__ import annotations

import pytest
from kronii.redaction.detectors import EmailDetector

from tests.unit.redaction.redaction_support import values

DETECTOR = EmailDetector()


@pytest.mark.parametrize(
    ("text", "address"),
    [
        ("contact alice@exemple.com today", "alice@exemple.com"),
        ("From: Bob Smith <bob.smith+news@mail.example.co.uk>", "bob.smith+news@mail.example.co.uk"),
        ("mailto:first_last-99@sub.exemple.org?subject=hi", "first_last-99@sub.exemple.org"),
        ("'carol@exemple.net',", "carol@exemple.net"),
        ("Signed-off-by: Dev One <dev.one@example.io>", "dev.one@example.io"),
    ],
)
def test_addresses(text: str, address: str) -> None:
    assert values(DETECTOR, text) == [address]


@pytest.mark.parametrize(
    "text",
    [
        "git clone git@github.com:org/repo.git",
        "<img src='logo@2x.png'>",
        "npm install lodash@4.17.21",
        "@decorator and @mention",
        "docker pull nginx@sha256:abc",
        "user@localhost",
    ],
)
def test_look_alikes(text: str) -> None:
    assert values(DETECTOR, text) == []
