"""National identity numbers without a check digit, told by their shape after a word that names them.

python-stdnum, and so the catalogue detector, checks numbers by their check digits. Some of the most-used
national numbers have none: Indonesia's NIK, Viet Nam's CCCD, Pakistan's CNIC, Nigeria's NIN, Bangladesh's NID.
Their shape still says much (a province code, a birth date, a sex digit), so one is masked when a word naming it
("NIK", "căn cước", "CNIC", "NIN", "NID": data/context_words.toml) stands before it on its line and it has the
shape its issuer gives it:
- NIK (Dukcapil): 16 digits, a province code 11-94, then the birth day (plus 40 for women), month and year;
- CCCD (Bộ Công an): 12 digits, a province code 001-096, a century-and-sex digit, the birth year;
- CNIC (NADRA): 13 digits written 5-7-1, the first a province 1-7;
- NIN (NIMC): 11 digits;
- NID (Bangladesh): 10, 13 or 17 digits.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator

from .._types import FindingType
from ._base import Candidate, CandidatePart, ScanText, line_local_findings
from ._context_words import announced_before

__all__ = ["StructuredIdDetector"]

_FAMILY = "UNCHECKED_NATIONAL_ID"
# A run of digits, perhaps in groups (CNIC 5-7-1, NIK 4-4-4-4), not inside a longer number or word.
_NUMBER = re.compile(r"[0-9](?<![0-9A-Za-z].)[0-9]{2,16}(?:[- ][0-9]{1,8}){0,3}(?![0-9A-Za-z])")
# For the compiled scan: ten digits, perhaps with one separator.
_PART = CandidatePart("structured_ids", (r"[0-9]{5}[- ]?[0-9]{5}", r"[0-9]{4}[- ]?[0-9]{6}"))


def _nik(digits: str) -> bool:
    day, month = int(digits[6:8]), int(digits[8:10])
    return 11 <= int(digits[:2]) <= 94 and (1 <= day <= 31 or 41 <= day <= 71) and 1 <= month <= 12


def _cccd(digits: str) -> bool:
    return 1 <= int(digits[:3]) <= 96


def _cnic(digits: str) -> bool:
    return digits[0] in "1234567"


_SHAPES: dict[int, tuple[Callable[[str], bool], ...]] = {
    16: (_nik,),
    12: (_cccd,),
    13: (_cnic, lambda _digits: True),  # a CNIC, or a 13-digit Bangladeshi NID
    11: (lambda _digits: True,),  # a NIN
    10: (lambda _digits: True,),  # a 10-digit NID
    17: (lambda _digits: True,),  # a 17-digit NID
}


class StructuredIdDetector:
    name = "structured_ids"
    candidate_parts = (_PART,)

    def detect(self, scan: ScanText) -> Iterator[Candidate]:
        return line_local_findings(scan, self._find, _PART)

    def _find(self, scan: ScanText) -> Iterator[Candidate]:
        for match in _NUMBER.finditer(scan.text):
            digits = re.sub(r"[- ]", "", match.group())
            shapes = _SHAPES.get(len(digits), ())
            if any(shape(digits) for shape in shapes) and announced_before(scan, _FAMILY, match.start(), 32):
                yield Candidate(FindingType.NATIONAL_ID, *match.span(), 0.8, self.name)
