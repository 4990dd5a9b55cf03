# ruff: noqa: RUF001  (primes, Cyrillic letters and other scripts are the point of these tests)
"""Values with no checksum of their own, found by their written form or by the word before them in many
languages (issue 32): GPS coordinates, VINs, licence plates, MAC addresses in every spelling, IDN e-mail."""

from __future__ import annotations

import pytest
from kronii.redaction import RedactionEngine

ENGINE = RedactionEngine()


def _masked(text: str, value: str) -> bool:
    return value not in ENGINE.redact(text).text


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("Meet me at 48.858370, 2.294481 tonight", "48.858370"),
        ("location: 52.5200, 13.4050", "52.5200"),
        ("Standort 47.3769 8.5417", "47.3769"),
        ("坐标 31.2304,121.4737", "121.4737"),
        ("ubicación: -34.6037, -58.3816", "-34.6037"),
        ("40°26'46\"N 79°58'56\"W", "40°26'46\"N"),
        ("at 40°26′46″N 79°58′56″W", "79°58′56″W"),
        ("48.8584° N, 2.2945° E", "48.8584"),
        ("https://www.google.com/maps?q=48.85837,2.29448", "48.85837"),
        ("https://www.google.com/maps/@35.6894875,139.6917064,15z", "35.6894875"),
        ("geo:48.8584,2.2945", "48.8584"),
    ],
)
def test_gps_coordinates_are_masked_in_every_notation(text: str, value: str) -> None:
    assert _masked(text, value)


@pytest.mark.parametrize(
    "line",
    [
        "loss 0.123456, acc 0.987654",
        "version 1.2345 2.3456",
        "1.5,12.345678,23.456789,4.5",
        "scale 12.345, 23.456 in the matrix",
    ],
)
def test_floats_that_are_no_place_stay(line: str) -> None:
    assert ENGINE.redact(line).text == line


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("VIN 1HGCM82633A004352 on the title", "1HGCM82633A004352"),
        ("bought 1HGCM82633A004352 at auction", "1HGCM82633A004352"),  # its check digit holds
        ("Fahrgestellnummer WVWZZZ1JZXW000001", "WVWZZZ1JZXW000001"),  # European: no check digit needed
        ("车架号 LSVAU2180N2183294", "LSVAU2180N2183294"),
    ],
)
def test_vehicle_identification_numbers_are_masked(text: str, value: str) -> None:
    assert _masked(text, value)


def test_a_17_character_code_with_a_wrong_check_digit_and_no_name_stays() -> None:
    line = "build artefact 1HGCM82633A004353 uploaded"
    assert ENGINE.redact(line).text == line


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("Kennzeichen B-AB 1234 steht falsch", "B-AB 1234"),
        ("immatriculation : AB-123-CD.", "AB-123-CD"),
        ("reg plate AB12 CDE", "AB12 CDE"),
        ("license plate 7ABC123", "7ABC123"),
        ("targa AB 123CD", "AB 123CD"),
        ("matrícula 1234 BCD", "1234 BCD"),
        ("vehicle no. KA 01 AB 1234", "KA 01 AB 1234"),
        ("车牌 粤B·12345", "粤B·12345"),
        ("번호판 12가 3456", "12가 3456"),
        ("госномер А123ВС 77", "А123ВС"),
    ],
)
def test_licence_plates_after_their_name_are_masked(text: str, value: str) -> None:
    assert _masked(text, value)


@pytest.mark.parametrize(
    "line", ["the plaques were 12 cm wide", "Kennzeichen fehlt", "licence plate: unknown"]
)
def test_plate_words_without_a_plate_change_nothing(line: str) -> None:
    assert ENGINE.redact(line).text == line


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("wifi mac address A0B1C2D3E4F6", "A0B1C2D3E4F6"),
        ("物理地址 A0B1C2D3E4F6", "A0B1C2D3E4F6"),
        ("Mac Address Table\n   1    0011.2233.4455    DYNAMIC     Gi1/0/12", "0011.2233.4455"),
        ("link/ether a1:b2:c3:d4:e5:f6 brd ff:ff:ff:ff:ff:ff", "a1:b2:c3:d4:e5:f6"),
        ("Physical Address. . . : A1-B2-C3-D4-E5-F6", "A1-B2-C3-D4-E5-F6"),
    ],
)
def test_mac_addresses_in_every_spelling_are_masked(text: str, value: str) -> None:
    assert _masked(text, value)


@pytest.mark.parametrize(
    "line",
    [
        "commit a1b2c3d4e5f6 done",
        "version 2024.0101.0001",
        "mdns group 01:00:5e:00:00:fb and 33:33:00:00:00:01",
    ],
)
def test_hex_that_is_no_device_address_stays(line: str) -> None:
    assert ENGINE.redact(line).text == line


@pytest.mark.parametrize(
    "address",
    [
        "jörg.weißmüller@bücherstube.de",
        "李雷@邮件.中国",
        "иван.петров@почта.рф",
        "さとう@メール.jp",
        "θανάσης@ταχυδρομείο.ελ",
        "user_name@host.com",
    ],
)
def test_internationalised_email_addresses_are_masked_whole(address: str) -> None:
    result = ENGINE.redact(f"schreib an {address} bitte")
    assert result.text == "schreib an [EMAIL_1] bitte"
