"""Passport numbers by the word passport, and ICAO 9303 machine readable zones by their check digits."""

from __future__ import annotations

import pytest
from kronii.redaction import RedactionContext, RedactionEngine
from kronii.redaction.detectors import PassportDetector
from kronii.redaction.detectors.passports import mrz_check_digit

from tests.unit.redaction.redaction_support import detect

DETECTOR = PassportDetector()

# The specimens of ICAO Doc 9303 (Utopia, Anna Maria Eriksson): TD3 passport, TD2 and TD1 cards.
TD3 = "P<UTOERIKSSON<<ANNA<MARIA<<<<<<<<<<<<<<<<<<<\nL898902C36UTO7408122F1204159ZE184226B<<<<<10"
TD2 = "I<UTOERIKSSON<<ANNA<MARIA<<<<<<<<<<<\nD231458907UTO7408122F1204159<<<<<<<6"
TD1 = "I<UTOD231458907<<<<<<<<<<<<<<<\n7408122F1204159UTO<<<<<<<<<<<6\nERIKSSON<<ANNA<MARIA<<<<<<<<<<"


@pytest.mark.parametrize(
    ("text", "number"),
    [
        ("Passport No: C01X00T47, expires 2031-05-01", "C01X00T47"),
        ("Reisepass-Nr. C4J9K2L7M", "C4J9K2L7M"),
        ("numéro de passeport : 12AB34567", "12AB34567"),
        ("pasaporte PAA123456 expedido en Madrid", "PAA123456"),
        ("traveller passport=533380006", "533380006"),
        ("Passport number # K8264530", "K8264530"),
        ("Her passport number is 561234987, issued 2019", "561234987"),
    ],
)
def test_passport_numbers(text: str, number: str) -> None:
    assert detect(DETECTOR, text) == [("PASSPORT", number)]


@pytest.mark.parametrize(
    "text",
    [
        "passport photo requirements: 35x45 mm",  # no number
        "Passport expiry reminder sent",
        "see passports.py for PASSPORT_RULES",  # identifiers, not numbers
        "Ticket ABC123456 issued",  # a number with no passport word
        "passport ABCDEFGHI",  # no digits: a word, not a number
    ],
)
def test_not_passport_numbers(text: str) -> None:
    assert detect(DETECTOR, text) == []


@pytest.mark.parametrize("zone", [TD3, TD2, TD1])
def test_mrz_whole_zone_is_masked(zone: str) -> None:
    text = f"scan of page 2:\n{zone}\nend of scan"
    assert detect(DETECTOR, text) == [("MRZ", zone)]
    redacted = RedactionEngine().redact(text, context=RedactionContext.random()).text
    assert redacted == "scan of page 2:\n[MRZ_1]\nend of scan"


@pytest.mark.parametrize(
    "broken",
    [
        TD3[:-1] + "1",  # composite check digit
        TD3.replace("7408122", "7408123"),  # birth date check digit
        TD3.replace("L898902C36", "L898902C46"),  # document number changed, check digit kept
        TD2.replace("1204159", "1204158"),  # expiry check digit
        TD1.replace("7408122F", "7408121F"),
    ],
)
def test_mrz_with_wrong_check_digits_is_left_alone(broken: str) -> None:
    assert detect(DETECTOR, broken) == []


def test_mrz_check_digit_follows_doc_9303() -> None:
    # Worked examples from Doc 9303 part 3: document number, birth date, expiry date.
    assert [mrz_check_digit(field) for field in ("L898902C3", "740812", "120415")] == [6, 2, 9]
    assert mrz_check_digit("AB2134<<<") == 5


def test_engine_runs_the_detector_on_passports_and_zones() -> None:
    # The engine's prefilter skips a detector whose anchors are absent: "pas" and "<<" must let it run.
    engine = RedactionEngine()
    assert [f.type for f in engine.redact("Reisepass-Nr. C4J9K2L7M").findings] == ["PASSPORT"]
    assert [f.type for f in engine.redact(TD1).findings] == ["MRZ"]
