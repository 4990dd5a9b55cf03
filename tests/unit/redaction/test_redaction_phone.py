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


def test_regions_come_from_the_policy_without_a_phone_word() -> None:
    text = "Rückruf unter 0151 23456789 bitte"
    assert values(PhoneDetector(("DE",)), text) == ["0151 23456789"]
    assert values(DETECTOR, text) == []
    assert values(PhoneDetector(("FR",)), "Bureau 01 23 45 67 89") == ["01 23 45 67 89"]
    assert values(DETECTOR, "Bureau 01 23 45 67 89") == []


@pytest.mark.parametrize(
    ("text", "number"),
    [
        # National formats, read in the region the word's language or the rest of the world gives.
        ("Portable : 06 12 34 56 78", "06 12 34 56 78"),  # FR mobile
        ("Tél. 01 23 45 67 89", "01 23 45 67 89"),  # FR fixed line
        ("mobile 098765 43210", "098765 43210"),  # IN mobile with trunk 0
        ("Telefon: 0151 23456789", "0151 23456789"),  # DE mobile
        ("Handy 0171 2345678", "0171 2345678"),
        ("celular: (11) 91234-5678", "(11) 91234-5678"),  # BR mobile
        ("móvil 612 34 56 78", "612 34 56 78"),  # ES mobile
        ("電話 03-1234-5678", "03-1234-5678"),  # JP Tokyo
        ("WhatsApp 0612345678", "0612345678"),
        ("le client rappelle au 06 12 34 56 78 demain", "06 12 34 56 78"),  # a French call word
        # International form needs no word.
        ("Rahul +91 98765 43210", "+91 98765 43210"),
        ("+33 1 23 45 67 89 standard", "+33 1 23 45 67 89"),
        # Glued to the key.
        ("mobile=+91 98765 43210", "+91 98765 43210"),
        ("tel:0612345678", "0612345678"),
        ("contact.phone=+49 30 901820", "+49 30 901820"),
        ('"mobile":"+33612345678"', "+33612345678"),
    ],
)
def test_national_formats_and_glued_values(text: str, number: str) -> None:
    assert values(DETECTOR, text) == [number]


@pytest.mark.parametrize(
    "text",
    [
        "build_id=0612345678",  # glued, but the key names no phone
        "ts:0612345678",
        "mobile 0612345670123456",  # too long for any plan
        "Portable : 06 12 34",  # too short
        "tel 00 01 00 00 00 00 00 00",  # a hex dump after a phone word: not valid anywhere
        "postcode 01310-100",
        "numéro d'assurance sociale 329 531 768",  # a Canadian SIN: "numéro" is any number
        # Phone words count only at the start of a word, and not as the start of these.
        "Hotel room 1234567",
        "syscall 12345678",
        "telemetry: 20240517 rows",
        "telegram 123456789 joined",
    ],
)
def test_not_phone_numbers_in_national_format(text: str) -> None:
    assert values(DETECTOR, text) == []
