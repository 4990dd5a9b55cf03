"""Dates of birth: a real date after a birth word is masked; dates without one stay."""

from __future__ import annotations

import pytest
from kronii.redaction import RedactionEngine
from kronii.redaction.detectors import BirthDateDetector

from tests.unit.redaction.redaction_support import detect

DETECTOR = BirthDateDetector()


BIRTH_LINES = [
    ("Date of birth: 1988-04-12", "1988-04-12"),
    ("DOB 12/31/1985, member since 2019", "12/31/1985"),
    ("d.o.b.: 03.11.79", "03.11.79"),
    ('{"name": "A. Lima", "birth_date": "1990-02-28"}', "1990-02-28"),
    ("dateOfBirth=1975-07-04", "1975-07-04"),
    ('"dob": "1985-04-12T00:00:00Z"', "1985-04-12"),
    ("Patient born on 3 March 1985 in Leeds", "3 March 1985"),
    ("born July 4, 1976", "July 4, 1976"),
    ("Mme Dupont, née le 12 avril 1985 à Lyon", "12 avril 1985"),
    ("Date de naissance : 05/06/1962", "05/06/1962"),
    ("Geburtsdatum: 14.03.1990", "14.03.1990"),
    ("Max Muster, geb. 14. März 1990", "14. März 1990"),
    ("fecha de nacimiento: 12 de marzo de 1985", "12 de marzo de 1985"),
    ("Data de nascimento 29/02/1996", "29/02/1996"),
    ("data di nascita 1 gennaio 1970", "1 gennaio 1970"),
    ("geboortedatum 02-03-1971", "02-03-1971"),
    ("Data urodzenia: 17.07.1989", "17.07.1989"),
    ("nato il 3 marzo 1960 a Roma", "3 marzo 1960"),
    ("f. nac. 12/10/1999", "12/10/1999"),
    ("NÉ LE 12/01/1950", "12/01/1950"),
]


@pytest.mark.parametrize(("text", "value"), BIRTH_LINES)
def test_birth_dates(text: str, value: str) -> None:
    assert detect(DETECTOR, text) == [("DATE_OF_BIRTH", value)]


@pytest.mark.parametrize(
    "text",
    [
        "Invoice date: 1988-04-12",  # a date without a birth word
        "2024-05-17 11:22:10 INFO worker started",
        "Date of birth: 1988-02-30",  # no 30th of February
        "DOB 13/13/1985",  # neither reading is a date
        "born in 1985",  # a year alone
        "Date of birth: see attached form",
        "date of birth field is optional\nDeploy 2024-01-02",  # the date is on another line
        "DOB: 1985-04-12345",  # part of a longer number
        "born2run 2020-01-01",  # not the word born
    ],
)
def test_not_birth_dates(text: str) -> None:
    assert detect(DETECTOR, text) == []


def test_birth_date_column_of_a_table() -> None:
    table = "name,date_of_birth,joined\nGrace,1906-12-09,2023-01-04\nAlan,1912-06-23,2023-02-11\n"
    assert detect(DETECTOR, table) == [("DATE_OF_BIRTH", "1906-12-09"), ("DATE_OF_BIRTH", "1912-06-23")]


def test_dates_in_other_columns_stay() -> None:
    assert detect(DETECTOR, "name,joined,renewed\nGrace,2023-01-04,2024-01-04\n") == []


@pytest.mark.parametrize("text", [text for text, _ in BIRTH_LINES])
def test_engine_runs_the_detector_on_every_birth_word(text: str) -> None:
    # The engine's prefilter skips a detector whose anchors are absent: each birth word must hold one.
    # "Mme Dupont" is also a person's name (PERSON_NAME); this test is about the birth date.
    found = [f.type for f in RedactionEngine().redact(text).findings if f.type != "PERSON_NAME"]
    assert found == ["DATE_OF_BIRTH"]
