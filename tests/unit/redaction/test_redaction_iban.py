"""IBANs: per-country length and the ISO 7064 mod-97 check."""

from __future__ import annotations

import pytest
from kronii.redaction.detectors import IbanDetector
from kronii.redaction.detectors.iban import is_iban_valid

from tests.unit.redaction.redaction_support import values

DETECTOR = IbanDetector()


@pytest.mark.parametrize(
    "iban",
    [
        "GB82 WEST 1234 5698 7654 32",  # the example of the ECBS/SWIFT registry
        "GB82WEST12345698765432",
        "DE89 3704 0044 0532 0130 00",
        "FR14 2004 1010 0505 0001 3M02 606",
        "NL91 ABNA 0417 1643 00",
        "NO93 8601 1117 947",
        "CH93 0076 2011 6238 5295 7",
    ],
)
def test_registry_examples(iban: str) -> None:
    assert values(DETECTOR, f"IBAN: {iban} (EUR)") == [iban]


def test_grouped_iban_followed_by_capitals_stops_at_country_length() -> None:
    assert values(DETECTOR, "pay to GB82 WEST 1234 5698 7654 32 ABCD today") == [
        "GB82 WEST 1234 5698 7654 32"
    ]


@pytest.mark.parametrize(
    "text",
    [
        "GB83 WEST 1234 5698 7654 32",  # check digits wrong
        "DE89 3704 0044 0532 0130 01",
        "XX89 3704 0044 0532 0130 00",  # no such country
        "GB82 WEST 1234 5698 76",  # too short for GB
        "ABC12DEF45678901234567",
    ],
)
def test_bad_ibans(text: str) -> None:
    assert values(DETECTOR, text) == []


def test_mod97() -> None:
    assert is_iban_valid("GB82WEST12345698765432")
    assert not is_iban_valid("GB82WEST12345698765433")
