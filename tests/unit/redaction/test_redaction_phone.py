"""Phone numbers via libphonenumber, and the digit runs that are not phone numbers."""

from __future__ import annotations

import pytest
from kronii.redaction.detectors import PhoneDetector

from tests.unit.redaction.redaction_support import values

DETECTOR = PhoneDetector()


@pytest.mark.parametrize(
    ("text", "number"),
    [
        ("call me at +1 (415) 555-2671", "+1 (415) 555-2671"),
        ("Tel: +44 20 7946 0958", "+44 20 7946 0958"),
        ("office 020 7946 0958", "020 7946 0958"),
        ("mobile: 07700 900123", "07700 900123"),
        ("+33 6 12 34 56 78 (France)", "+33 6 12 34 56 78"),
        ("reach me on 415.555.2671", "415.555.2671"),
        ("phone 4155552671", "4155552671"),
        ("Phone: (555) 123-4567", "(555) 123-4567"),
        ("+49 30 901820", "+49 30 901820"),
    ],
)
def test_phone_numbers(text: str, number: str) -> None:
    assert values(DETECTOR, text) == [number]


@pytest.mark.parametrize(
    "text",
    [
        "build 4155552671 finished",  # a 10-digit build number, unformatted, no phone word
        "released 2024-01-15 at 10:20:30",
        "version 1.2.3.4",
        "host 192.168.100.200",
        "ts=1700000000123",
        "order #2025550123",
        "between 12 and 345 items",
        "pid 123456789",
        "sha 1234567 890",
    ],
)
def test_not_phone_numbers(text: str) -> None:
    assert values(DETECTOR, text) == []


def test_regions_come_from_the_policy() -> None:
    german = PhoneDetector(("DE",))
    assert values(german, "Telefon: 0151 23456789") == ["0151 23456789"]
    assert values(DETECTOR, "Telefon: 0151 23456789") == []
