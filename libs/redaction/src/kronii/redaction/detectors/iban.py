"""International Bank Account Numbers (ISO 13616): the country's fixed length and the mod-97 check."""

from __future__ import annotations

import re
from collections.abc import Iterator

from .._types import FindingType
from ._base import ANY_DIGIT, Candidate, CandidatePart, ScanText, line_local_findings

__all__ = ["IbanDetector", "is_iban_valid"]

# Printed in groups of four ("GB82 WEST 1234 5698 7654 32") or as one run.
# The first letter is a class of its own, not part of a repeat: CPython skips ahead to a pattern's first character
# only when the pattern opens with a plain class (`[A-Z]{2}` hides it), which made this scan about twice as fast.
_CANDIDATE = re.compile(r"[A-Z][A-Z]\d{2}(?: ?[A-Z0-9]{4}){2,7}(?: ?[A-Z0-9]{1,3})?")
# For the compiled scan: the pattern's head (Python's `\d` is any script's digit).
_CANDIDATES = CandidatePart("iban", (rf"[A-Z][A-Z]{ANY_DIGIT}{{2}}(?: ?[A-Z0-9]{{4}}){{2}}",))

# Lengths from the SWIFT IBAN registry.
_LENGTHS = {
    "AD": 24, "AE": 23, "AL": 28, "AT": 20, "AZ": 28, "BA": 20, "BE": 16, "BG": 22, "BH": 22, "BI": 27,
    "BR": 29, "BY": 28, "CH": 21, "CR": 22, "CY": 28, "CZ": 24, "DE": 22, "DJ": 27, "DK": 18, "DO": 28,
    "EE": 20, "EG": 29, "ES": 24, "FI": 18, "FK": 18, "FO": 18, "FR": 27, "GB": 22, "GE": 22, "GI": 23,
    "GL": 18, "GR": 27, "GT": 28, "HR": 21, "HU": 28, "IE": 22, "IL": 23, "IQ": 23, "IS": 26, "IT": 27,
    "JO": 30, "KW": 30, "KZ": 20, "LB": 28, "LC": 32, "LI": 21, "LT": 20, "LU": 20, "LV": 21, "LY": 25,
    "MC": 27, "MD": 24, "ME": 22, "MK": 19, "MN": 20, "MR": 27, "MT": 31, "MU": 30, "NI": 28, "NL": 18,
    "NO": 15, "OM": 23, "PK": 24, "PL": 28, "PS": 29, "PT": 25, "QA": 29, "RO": 24, "RS": 22, "RU": 33,
    "SA": 24, "SC": 31, "SD": 18, "SE": 24, "SI": 19, "SK": 24, "SM": 27, "SO": 23, "ST": 25, "SV": 28,
    "TL": 23, "TN": 24, "TR": 26, "UA": 29, "VA": 22, "VG": 24, "XK": 20, "YE": 30,
}  # fmt: skip


class IbanDetector:
    name = "iban"
    candidate_parts = (_CANDIDATES,)

    def detect(self, scan: ScanText) -> Iterator[Candidate]:
        # Line-local: no pattern matches a newline, and a neighbour across the line's edge is the newline
        # itself, which passes the boundary checks as the text's edge does.
        return line_local_findings(scan, self._find, _CANDIDATES)

    def _find(self, scan: ScanText) -> Iterator[Candidate]:
        text = scan.text
        for match in _CANDIDATE.finditer(text):
            start = match.start()
            if start > 0 and text[start - 1].isalnum():
                continue
            end = _trimmed_end(text, start, match.end())
            if end is None or (end < len(text) and text[end].isalnum()):
                continue
            yield Candidate(FindingType.IBAN, start, end, 0.95, self.name)


def _trimmed_end(text: str, start: int, end: int) -> int | None:
    """Where the IBAN ends, given its country's length; None when the checksum fails.

    The regex may run on into a following group of capitals or digits; the country's length says where to stop.
    """
    length = _LENGTHS.get(text[start : start + 2])
    if length is None:
        return None
    compact_count, position = 0, start
    while position < end and compact_count < length:
        if text[position] != " ":
            compact_count += 1
        position += 1
    if compact_count < length:
        return None
    return position if is_iban_valid(text[start:position].replace(" ", "")) else None


def is_iban_valid(iban: str) -> bool:
    if len(iban) != _LENGTHS.get(iban[:2], -1):
        return False
    rearranged = iban[4:] + iban[:4]
    return int("".join(str(int(char, 36)) for char in rearranged)) % 97 == 1
