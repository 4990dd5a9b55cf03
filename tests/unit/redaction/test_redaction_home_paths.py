"""User names in home directories and prompts: only the name is masked."""

from __future__ import annotations

import pytest
from kronii.redaction import RedactionEngine
from kronii.redaction.detectors import HomePathDetector

from tests.unit.redaction.redaction_support import values

DETECTOR = HomePathDetector()


@pytest.mark.parametrize(
    ("text", "name"),
    [
        ("File /home/alice/src/app.py, line 3", "alice"),
        ("cd /Users/bob/Library", "bob"),
        (r"C:\Users\carol\AppData\Local", "carol"),
        (r'"path": "C:\\Users\\dave\\Desktop"', "dave"),
        ("/var/home/erin/.config", "erin"),
        ("ls ~frank/projects", "frank"),
        ("grace@thinkpad:~/src$ make", "grace"),
        ("(venv) heidi@box:/tmp$ ls", "heidi"),
        ("/home/ivan", "ivan"),
    ],
)
def test_user_names(text: str, name: str) -> None:
    assert values(DETECTOR, text) == [name]


@pytest.mark.parametrize(
    "text",
    [
        "/home/user/project",
        "/Users/Shared/data",
        r"C:\Users\Public\Documents",
        "/home/runner/work",
        "~/src",
        "/root/x",
    ],
)
def test_generic_homes(text: str) -> None:
    assert values(DETECTOR, text) == []


def test_only_the_name_is_replaced() -> None:
    result = RedactionEngine().redact("open /home/alice/src/kronii/main.py")
    assert result.text == "open /home/[USERNAME_1]/src/kronii/main.py"
