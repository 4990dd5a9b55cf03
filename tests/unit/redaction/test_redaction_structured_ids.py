"""National identity numbers without a check digit (Indonesia's NIK, Viet Nam's CCCD, Pakistan's CNIC, Nigeria's
NIN, Bangladesh's NID), masked when a word names them on their line and they have their issuer's shape."""

from __future__ import annotations

import pytest
from kronii.redaction.detectors import StructuredIdDetector

from tests.unit.redaction.redaction_support import detect

DETECTOR = StructuredIdDetector()


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("NIK: 3171014508900002", "3171014508900002"),  # DKI Jakarta, a woman born 5 August 1990
        ("Nomor KTP 3171 0145 0890 0002", "3171 0145 0890 0002"),
        ("Số CCCD: 079203001234", "079203001234"),  # Ho Chi Minh City, a man born in 2003
        ("căn cước công dân 001089012345", "001089012345"),
        ("CNIC 35202-1234567-1", "35202-1234567-1"),
        ("My NIN is 12345678901", "12345678901"),
        ("NID no 1987654321", "1987654321"),
    ],
)
def test_a_number_of_its_shape_after_a_word_naming_it_is_masked(text: str, value: str) -> None:
    assert detect(DETECTOR, text) == [("NATIONAL_ID", value)]


@pytest.mark.parametrize(
    "text",
    [
        "order 3171014508900002 shipped",  # no word naming an identity number
        "NIK 3171234567890001",  # month 67: no NIK
        "NIK 9971014508900002",  # province 99: no NIK
        "CCCD 999089012345",  # province 999: no CCCD
        "CNIC 35202",  # too short for any of them
        "NIN 1234",  # too short
        "nik = 99",
    ],
)
def test_numbers_without_the_word_or_the_shape_stay(text: str) -> None:
    assert detect(DETECTOR, text) == []
