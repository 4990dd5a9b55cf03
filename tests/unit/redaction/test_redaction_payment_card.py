"""Payment cards: issuer prefix, length and Luhn check digit."""

from __future__ import annotations

import pytest
from kronii.redaction.detectors import PaymentCardDetector
from kronii.redaction.detectors.payment_card import is_luhn_valid

from tests.unit.redaction.redaction_support import values

DETECTOR = PaymentCardDetector()


@pytest.mark.parametrize(
    "number",
    [
        "4111 1113 2437 0017",  # Visa test card
        "4111111324370017",
        "5555-5558-5087-5908",  # Mastercard test card
        "2223008280734377",  # Mastercard 2-series test card
        "3782 821510 81278",  # American Express test card
        "6011 1106 0085 3270",  # Discover test card
        "3530111333300000",  # JCB test card
        "3056 9347 2849 92",  # Diners Club test card
    ],
)
def test_test_cards_are_found(number: str) -> None:
    assert values(DETECTOR, f"card: {number}, exp 12/29") == [number]


@pytest.mark.parametrize(
    "text",
    [
        "4111 1111 1111 1112",  # Luhn fails
        "1234 5678 9012 3456",  # no issuer starts with 1
        "4111 11132 4370 017",  # not a card layout
        "ts 1700000000000000",
        "order 4111111111111111222",  # a longer digit run
        "7992739871300000",  # Luhn-valid, unknown issuer
    ],
)
def test_near_misses(text: str) -> None:
    assert values(DETECTOR, text) == []


def test_luhn() -> None:
    assert is_luhn_valid("79927398713")
    assert not is_luhn_valid("79927398710")


@pytest.mark.parametrize(
    ("text", "number"),
    [
        # The greedy candidate took the amount's "49" as a fifth group, and the whole run failed the layout test.
        ("charged 4111 1113 2437 0017 49.00 EUR", "4111 1113 2437 0017"),
        ("Visa 5555 5558 5087 5908 12 29 cvc 123", "5555 5558 5087 5908"),
        ("paid with 3782 821510 81278 1200 USD", "3782 821510 81278"),
    ],
)
def test_card_followed_by_more_digit_groups(text: str, number: str) -> None:
    assert values(DETECTOR, text) == [number]


def test_trailing_groups_do_not_make_a_card_of_a_non_card() -> None:
    assert values(DETECTOR, "charged 4111 1111 1111 1112 49.00 EUR") == []
