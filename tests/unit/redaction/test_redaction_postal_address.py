"""Postal addresses with a person's name, in DE, FR, UK, US, IN, BR and JP formats; names and addresses alone stay."""

from __future__ import annotations

import pytest
from kronii.redaction import RedactionEngine
from kronii.redaction.detectors import PostalAddressDetector

from tests.unit.redaction.redaction_support import detect

DETECTOR = PostalAddressDetector()


@pytest.mark.parametrize(
    ("before", "address"),
    [
        ("", "Max Mustermann\nMusterstraße 12\n10115 Berlin"),
        ("Versand an: ", "Erika Mustermann, Karl-Marx-Allee 90a, 10243 Berlin"),
        ("", "Herr Klaus Becker\nAm Markt 3\n80331 München"),
        ("", "Frau Anna Schmidt\nHauptstr. 5\nD-50667 Köln"),
        ("", "Jean Dupont\n12 rue de la Paix\n75002 Paris"),
        ("", "Mme Claire MARTIN, 8 avenue des Champs-Élysées, 75008 Paris"),
        ("", "M. Pierre Durand\n3 bis, boulevard Haussmann\n75009 PARIS"),
        ("", "Mr John Smith\n10 Downing Street\nLondon SW1A 2AA"),
        ("Deliver to: ", "Dr Emily Clarke, Flat 2, 14 Baker Street, Marylebone, London NW1 6XE"),
        ("Ship to: ", "Jane Doe, 123 Main St, Springfield, IL 62704"),
        ("", "Sarah Connor\n1600 Pennsylvania Ave NW\nWashington, DC 20500"),
        ("", "Priya Sharma\nFlat 4B, 12 MG Road\nBengaluru, Karnataka 560001"),
        ("", "Rahul Verma, 22 Nehru Nagar, New Delhi - 110001"),
        ("", "Anil Kumar\nH.No. 5-3-12, Gandhi Road\nHyderabad 500001"),
        ("", "Ana Souza\nAv. Paulista, 1578 - Bela Vista\nSão Paulo - SP, 01310-200"),
        ("", "Carlos Pereira\nRua das Flores, 45\nCEP 80010-010 Curitiba - PR"),
        ("", "山田 太郎\n〒100-0001 東京都千代田区千代田1-1"),
        ("お届け先\n", "山田太郎様\n〒100-0001 東京都千代田区千代田1-1"),
        # The name after the address, as Japanese letters often have it.
        ("お届け先\n", "〒150-0002 東京都渋谷区渋谷2-21-1\n佐藤 花子 様"),
    ],
)
def test_name_with_address_is_masked_from_name_to_city(before: str, address: str) -> None:
    text = f"{before}{address}\nThanks!"
    assert detect(DETECTOR, text) == [("POSTAL_ADDRESS", address)]


@pytest.mark.parametrize(
    "text",
    [
        "Musterstraße 12, 10115 Berlin",  # an address without a person: often a shop's or a company's
        "Our office: 12 rue de la Paix, 75002 Paris",
        "c Employer: Example Corp, 500 Oak Ave, Austin TX 78701",  # a company is no person
        "Max Mustermann",  # a name alone stays
        "Jane Doe\nSpringfield, IL 62704",  # no street
        "Kubernetes Pods\nRunning 12 containers, 10115 events",
        "Mr John Smith\n10 Downing Street\nLondon SW1A 2AX9",  # not a postcode
        "Priya Sharma\nFlat 4B, 12 MG Road\nBengaluru 060001",  # PINs start 1 to 8
        "Build Agent\n42 Pipeline Road\nrun 123456 finished",
        "お届け先\n〒150-0002 東京都渋谷区渋谷2-21-1",  # a Japanese word is no name
        "〒150-0002 東京都渋谷区渋谷2-21-1\nShibuya Hikarie",  # nor a building after the address
    ],
)
def test_lookalikes_stay(text: str) -> None:
    assert detect(DETECTOR, text) == []


def test_engine_masks_the_address_as_one_placeholder() -> None:
    text = "Please send the contract to\nJean Dupont\n12 rue de la Paix\n75002 Paris\nbefore Friday."
    result = RedactionEngine().redact(text)
    assert result.text == "Please send the contract to\n[POSTAL_ADDRESS_1]\nbefore Friday."
