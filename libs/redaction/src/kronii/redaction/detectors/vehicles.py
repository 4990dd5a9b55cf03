"""Vehicle identification numbers and licence plates: they name a car, and so its keeper.

python-stdnum has no VIN and no catalogue of plates exists (a plate has no check digit, and each country and era
writes its own), so this detector is the engine's own:
- a VIN (ISO 3779) is 17 capitals and digits without I, O and Q; it is masked when its check digit (position 9,
  49 CFR 565, mandatory in North America) holds and its model-year character is one a year can have, or when a
  word naming it stands before it ("VIN", "Fahrgestellnummer", "车架号": data/context_words.toml);
- a licence plate is masked only after a word naming it in one of some 40 languages ("Kennzeichen",
  "immatriculation", "车牌", "번호판"...): the capitals, digits and script letters after it, up to ten, with
  at least one digit (`B-AB 1234`, `AB-123-CD`, `粤B·12345`).
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from .._types import FindingType
from ._base import Candidate, CandidatePart, ScanText, line_local_findings
from ._context_words import announced_before, ascii_words, word_matches

__all__ = ["LicencePlateDetector", "VinDetector"]

# The first character before the look-behind: the scan then skips in C to a capital or a digit.
_VIN = re.compile(r"[A-HJ-NPR-Z0-9](?<![A-Za-z0-9].)[A-HJ-NPR-Z0-9]{16}(?![A-Za-z0-9])")
# For the compiled scan: seventeen VIN characters in a row.
_VIN_PART = CandidatePart("vins", (r"[A-HJ-NPR-Z0-9]{17}",))
_VALUES = {
    **{str(d): d for d in range(10)},
    **dict(zip("ABCDEFGH", range(1, 9), strict=True)),
    **dict(zip("JKLMN", range(1, 6), strict=True)),
    "P": 7,
    "R": 9,
    **dict(zip("STUVWXYZ", range(2, 10), strict=True)),
}
_WEIGHTS = (8, 7, 6, 5, 4, 3, 2, 10, 0, 9, 8, 7, 6, 5, 4, 3, 2)
_YEARS = frozenset("ABCDEFGHJKLMNPRSTVWXY123456789")
# Capitals, digits and the letters of scripts that write plates (Han, kana, Hangul, Cyrillic, Greek, Arabic),
# joined by single spaces, hyphens, dots or the middle dot.
_PLATE_CHAR = r"[A-Z0-9\u0370-\u03ff\u0400-\u04ff\u0600-\u06ff\u3040-\u30ff\u4e00-\u9fff\uac00-\ud7af]"
_PLATE = re.compile(rf"{_PLATE_CHAR}+(?:[ \-.·]{_PLATE_CHAR}+)*")
_LEAD = re.compile(
    r"[\s:=#.\-\u2013\u2014)(\"']*(?:no\.?|nr\.?|number|nummer|numéro|número)?[\s:=#.\-\u2013\u2014\"']*",
    re.I,
)
_MAX_PLATE = 10  # letters and digits: India's KA 01 AB 1234 is the longest common one


def _whole_groups(run: str) -> str:
    """The run's groups while they hold at most `_MAX_PLATE` letters and digits: no plate is cut in a group."""
    kept = ""
    for group in re.split(r"(?=[ \-.·])", run):
        if sum(char.isalnum() for char in kept + group) > _MAX_PLATE:
            break
        kept += group
    return kept.rstrip(" -.·")


def _check_digit_holds(vin: str) -> bool:
    total = sum(_VALUES[char] * weight for char, weight in zip(vin, _WEIGHTS, strict=True))
    expected = total % 11
    return vin[8] == ("X" if expected == 10 else str(expected))


class VinDetector:
    name = "vins"
    candidate_parts = (_VIN_PART,)

    def detect(self, scan: ScanText) -> Iterator[Candidate]:
        return line_local_findings(scan, self._vins, _VIN_PART)

    def _vins(self, scan: ScanText) -> Iterator[Candidate]:
        for match in _VIN.finditer(scan.text):
            vin = match.group()
            digits = sum(char.isdigit() for char in vin)
            if digits < 2 or digits > 15:
                continue
            checked = _check_digit_holds(vin) and vin[9] in _YEARS
            if checked or announced_before(scan, "VEHICLE_ID", match.start()):
                yield Candidate(FindingType.VEHICLE_ID, *match.span(), 0.85 if checked else 0.8, self.name)


class LicencePlateDetector:
    """Plates after a plate word: `script` "ascii" for the words in Latin letters (its anchors), "other" for the
    words of other scripts (it returns at once on ASCII text)."""

    def __init__(self, script: str) -> None:
        self._script = script
        self.name = "licence_plates" if script == "ascii" else "licence_plates_other_scripts"
        if script == "ascii":
            self.anchors = ascii_words("LICENCE_PLATE")

    def detect(self, scan: ScanText) -> Iterator[Candidate]:
        if self._script != "ascii" and scan.text.isascii():
            return iter(())
        return line_local_findings(scan, self._plates)

    def _plates(self, scan: ScanText) -> Iterator[Candidate]:
        for _start, end, _word in word_matches("LICENCE_PLATE", scan.lower, self._script):
            yield from self._plate_after(scan, end)

    def _plate_after(self, scan: ScanText, position: int) -> Iterator[Candidate]:
        text = scan.text
        lead = _LEAD.match(text, position)
        start = lead.end() if lead else position
        plate = _PLATE.match(text, start)
        if plate is None:
            return
        value = _whole_groups(plate.group())
        if any(char.isdigit() for char in value) and sum(char.isalnum() for char in value) >= 4:
            yield Candidate(FindingType.LICENCE_PLATE, start, start + len(value), 0.8, self.name)
