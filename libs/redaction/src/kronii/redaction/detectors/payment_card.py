"""Payment card numbers (PANs): a known issuer prefix (IIN) with that scheme's length, and a Luhn check digit.

Written either as one digit run or in the groups printed on cards (4-4-4-4, 4-6-5 for Amex, 4-6-4 for
Diners), with spaces or dashes. One Luhn-valid number in ten is chance, so the prefix and length tables do
much of the work against order numbers and ids.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from .._types import FindingType
from ._base import Candidate, CandidatePart, ScanText, line_local_findings

__all__ = ["PaymentCardDetector", "is_luhn_valid"]

# At least 4+4 digits before the rest, so that dates (2024-05-17) fail inside the regex, not in Python.
# The first digit is a class of its own, not part of a repeat: CPython skips ahead to a pattern's first character
# only when the pattern opens with a plain class (`[0-9]{4}` hides it), which made this scan about twice as fast.
_CANDIDATE = re.compile(r"[0-9][0-9]{3}[ \-]?[0-9]{4}[ \-]?[0-9]{2,7}(?:[ \-]?[0-9]{1,7}){0,2}")
_SEPARATOR = re.compile(r"[ \-]")
# For the compiled scan: the pattern's head.
_CANDIDATES = CandidatePart("payment_card", (r"[0-9]{4}[ \-]?[0-9]{4}[ \-]?[0-9]{2}",))
_GROUPINGS = frozenset(
    {(4, 4, 4, 4), (4, 4, 4, 4, 3), (4, 6, 5), (4, 6, 4), (4, 4, 4, 2), (4, 4, 4, 3), (4, 4, 5)}
)


# (prefix length, low, high, allowed lengths), from the schemes' published IIN ranges.
_SCHEMES: tuple[tuple[int, int, int, frozenset[int]], ...] = (
    (1, 4, 4, frozenset({13, 16, 19})),  # Visa
    (2, 51, 55, frozenset({16})),  # Mastercard
    (4, 2221, 2720, frozenset({16})),  # Mastercard 2-series
    (2, 34, 34, frozenset({15})),  # American Express
    (2, 37, 37, frozenset({15})),
    (4, 6011, 6011, frozenset({16, 19})),  # Discover
    (2, 65, 65, frozenset({16, 19})),
    (3, 644, 649, frozenset({16, 19})),
    (6, 622126, 622925, frozenset({16, 19})),
    (4, 3528, 3589, frozenset({16, 19})),  # JCB
    (3, 300, 305, frozenset({14, 16, 19})),  # Diners Club
    (2, 36, 36, frozenset({14, 16, 19})),
    (2, 38, 39, frozenset({14, 16, 19})),
    (2, 62, 62, frozenset({16, 17, 18, 19})),  # UnionPay
    (2, 50, 50, frozenset({12, 13, 14, 15, 16, 17, 18, 19})),  # Maestro
    (2, 56, 58, frozenset({12, 13, 14, 15, 16, 17, 18, 19})),
    (2, 67, 67, frozenset({12, 13, 14, 15, 16, 17, 18, 19})),
    (4, 2200, 2204, frozenset({16, 17, 18, 19})),  # Mir
)


class PaymentCardDetector:
    name = "payment_card"
    candidate_parts = (_CANDIDATES,)

    def detect(self, scan: ScanText) -> Iterator[Candidate]:
        # Line-local: no pattern matches a newline, and a neighbour across the line's edge is the newline
        # itself, which passes the boundary checks as the text's edge does.
        return line_local_findings(scan, self._find, _CANDIDATES)

    def _find(self, scan: ScanText) -> Iterator[Candidate]:
        text = scan.text
        for match in _CANDIDATE.finditer(text):
            start, end = match.span()
            if start > 0 and (text[start - 1].isalnum() or text[start - 1] in "_.-/+$"):
                continue
            if end < len(text) and (text[end].isalnum() or text[end] in "_"):
                continue
            raw = _card_prefix(match.group())
            if raw is not None:
                yield Candidate(FindingType.PAYMENT_CARD, start, start + len(raw), 0.9, self.name)


def _card_prefix(raw: str) -> str | None:
    """The card number at the start of a candidate, or None.

    The regex is greedy and Python checks the result, so a group written after the card (the amount in
    `4111 1111 1111 1111 49.00 EUR`, a CVC, a year) would make the whole run fail the layout test: the trailing
    groups are dropped one at a time until a card is left. A single run of digits is never cut.
    """
    while True:
        digits = raw.replace(" ", "").replace("-", "")
        if len(digits) < 12:  # dates and times match the shape; this cheap test drops them first
            return None
        if _is_card_layout(raw) and _is_known_scheme(digits) and is_luhn_valid(digits):
            return raw
        cut = max(raw.rfind(" "), raw.rfind("-"))
        if cut < 0:
            return None
        raw = raw[:cut]


def _is_card_layout(raw: str) -> bool:
    groups = _SEPARATOR.split(raw)
    if len(groups) == 1:
        return True
    separators = {char for char in raw if not char.isdigit()}
    return len(separators) == 1 and tuple(len(group) for group in groups) in _GROUPINGS


def _is_known_scheme(digits: str) -> bool:
    length = len(digits)
    return any(
        length in lengths and low <= int(digits[:prefix_length]) <= high
        for prefix_length, low, high, lengths in _SCHEMES
    )


def is_luhn_valid(digits: str) -> bool:
    total = 0
    for index, char in enumerate(reversed(digits)):
        value = ord(char) - 48
        if index % 2 == 1:
            value = value * 2 - 9 if value > 4 else value * 2
        total += value
    return total % 10 == 0
