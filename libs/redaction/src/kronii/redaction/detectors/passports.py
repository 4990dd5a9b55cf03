"""Passport numbers next to the word passport, and machine readable zones (ICAO Doc 9303).

- Passport numbers have no common format (US nine digits, DE nine characters from a reduced alphabet, FR two
  digits two letters five digits, ES three letters six digits...), so only the word before the number makes
  it one: `passport`, `Reisepass`, `passeport`, `pasaporte`, `passaporto`, `paspoort`, `paszport`,
  `passaporte`, then a token of 6-10 upper-case letters and digits with at least three digits.
- MRZ (Doc 9303 parts 4-6): TD3 (passports, two lines of 44), TD2 (two lines of 36) and TD1 (ID cards, three
  lines of 30). The line with the document number, birth and expiry dates must pass all its check digits
  (weights 7, 3, 1; `<` = 0, A-Z = 10-35); then the whole zone, names included, is masked.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from .._types import FindingType
from ._base import Candidate, ScanText, line_local_findings

__all__ = ["PassportDetector", "mrz_check_digit"]

_PASSPORT_WORDS = re.compile(
    r"(?:passport|reisepass|passeport|pasaporte|passaporto|paspoort|paszport|passaporte|pass-nr|passnummer)"
    r"(?:[ \t]*(?:no\.?|nr\.?|n\.?[°º]|num(?:ber|[ée]ro|mer)?\.?|#|:|-|=|id|is|)[ \t]*){0,3}"
)
_PASSPORT_NUMBER = re.compile(r"[A-Z0-9]{6,10}(?![A-Za-z0-9])")
_MIN_DIGITS = 3
_MRZ_LINE = re.compile(r"^[ \t]*([A-Z0-9<]{44}|[A-Z0-9<]{36}|[A-Z0-9<]{30})[ \t]*$", re.MULTILINE)


def mrz_check_digit(field: str) -> int:
    weights = (7, 3, 1)
    total = 0
    for position, char in enumerate(field):
        value = 0 if char == "<" else int(char) if char.isdigit() else ord(char) - 55
        total += value * weights[position % 3]
    return total % 10


def _checks(line: str, *fields: tuple[int, int]) -> bool:
    """Every (start, end) field is followed by its check digit at `end`; `<` there means 0 (empty field)."""
    for start, end in fields:
        digit = line[end]
        expected = mrz_check_digit(line[start:end])
        if not (digit.isdigit() and int(digit) == expected) and not (digit == "<" and expected == 0):
            return False
    return True


def _td3_or_td2_valid(line: str) -> bool:
    """Line 2 of a TD3 (44) or TD2 (36): document number, birth, expiry, (TD3: personal number), composite."""
    last = len(line) - 1
    composite = line[0:10] + line[13:20] + line[21:last]
    personal = ((28, 42),) if len(line) == 44 else ()
    return _checks(line, (0, 9), (13, 19), (21, 27), *personal) and _checks(
        composite + line[last], (0, len(composite))
    )


def _td1_valid(first: str, second: str) -> bool:
    composite = first[5:30] + second[0:7] + second[8:15] + second[18:29]
    return (
        _checks(first, (5, 14))
        and _checks(second, (0, 6), (8, 14))
        and _checks(composite + second[29], (0, len(composite)))
    )


class PassportDetector:
    name = "passports"
    anchors = ("<<", "pas")  # every MRZ has a "<<" run; every passport word holds "pas" (Reisepass too)

    def detect(self, scan: ScanText) -> Iterator[Candidate]:
        if "<<" in scan.text:
            yield from self._mrz(scan.text)
        lower = scan.lower
        if "pas" in lower or "reisepass" in lower:
            # Line-local: the word, its separators and the number stay on one line ([ \t] only), and the
            # letter checked before the word is the newline at a line's start, as at the text's.
            yield from line_local_findings(scan, self._numbers)

    def _numbers(self, scan: ScanText) -> Iterator[Candidate]:
        text = scan.text
        for word in _PASSPORT_WORDS.finditer(scan.lower):
            if word.start() > 0 and "a" <= scan.lower[word.start() - 1] <= "z":
                continue  # inside a longer word; checked here, as a leading lookbehind slows the scan
            match = _PASSPORT_NUMBER.match(text, word.end())
            if match is None or text[match.start() - 1].isalnum():  # the word runs on ("passports")
                continue
            if sum(char.isdigit() for char in match.group()) >= _MIN_DIGITS:
                yield Candidate(FindingType.PASSPORT, match.start(), match.end(), 0.85, self.name)

    def _mrz(self, text: str) -> Iterator[Candidate]:
        lines = list(_MRZ_LINE.finditer(text))
        for index, line in enumerate(lines):
            value = line.group(1)
            previous = lines[index - 1] if index > 0 else None
            # The zone's other lines (names, document code) sit on the lines next to it, same length.
            if previous is not None and not _follows(text, previous, line):
                previous = None
            if len(value) in (44, 36) and _td3_or_td2_valid(value):
                start = previous.start(1) if previous is not None else line.start(1)
                yield Candidate(FindingType.MRZ, start, line.end(1), 0.95, self.name)
            elif len(value) == 30 and previous is not None and _td1_valid(previous.group(1), value):
                following = lines[index + 1] if index + 1 < len(lines) else None
                end = (
                    following.end(1)
                    if following is not None and _follows(text, line, following)
                    else line.end(1)
                )
                yield Candidate(FindingType.MRZ, previous.start(1), end, 0.95, self.name)


def _follows(text: str, first: re.Match[str], second: re.Match[str]) -> bool:
    """Whether `second` is the line right after `first`, of the same length."""
    return (
        first.end() < len(text)
        and text[first.end()] == "\n"
        and first.end() + 1 == second.start()
        and len(first.group(1)) == len(second.group(1))
    )
