"""National identity numbers, each with its published validation rules."""

from __future__ import annotations

import pytest
from kronii.redaction.detectors import NationalIdDetector

from tests.unit.redaction.redaction_support import detect

DETECTOR = NationalIdDetector()


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("SSN 123-45-6789.", ("US_SSN", "123-45-6789")),
        ("ssn: 219099999", ("US_SSN", "219099999")),
        ("Social Security Number 536 22 1234", ("US_SSN", "536 22 1234")),
        ("NI number QQ 12 34 56 C", ("UK_NINO", "QQ 12 34 56 C")),
        ("nino=AB123456C", ("UK_NINO", "AB123456C")),
        ("BSN: 111222333", ("NL_BSN", "111222333")),
        ("burgerservicenummer 1234.56.782", ("NL_BSN", "1234.56.782")),
        ("DNI 12345678Z", ("ES_DNI", "12345678Z")),
        ("NIE X1234567L", ("ES_DNI", "X1234567L")),
        ("HETU 131052-308T", ("FI_HETU", "131052-308T")),
        ("henkilötunnus 010594Y9032", ("FI_HETU", "010594Y9032")),
        ("codice fiscale RSSMRA85T10A562S", ("IT_FISCAL_CODE", "RSSMRA85T10A562S")),
    ],
)
def test_valid_ids(text: str, expected: tuple[str, str]) -> None:
    assert detect(DETECTOR, text) == [expected]


@pytest.mark.parametrize(
    "text",
    [
        "000-12-3456",  # area 000
        "666-12-3456",  # area 666
        "912-12-3456",  # area 9xx
        "123-00-4567",  # group 00
        "123-45-0000",  # serial 0000
        "part 123-45-6789-01",  # a longer code
        "219099999",  # nine digits without a name
        "DQ123456C",  # D is not a NINO prefix letter
        "GB123456A",  # GB is excluded
        "BSN: 111222334",  # fails the 11-proof
        "12345678A",  # DNI letter wrong (Z)
        "131052-308U",  # HETU check character wrong
        "311352-308T",  # no 31st of the 13th month
        "RSSMRA85T10A562T",  # codice fiscale check wrong
    ],
)
def test_invalid_ids(text: str) -> None:
    assert detect(DETECTOR, text) == []
