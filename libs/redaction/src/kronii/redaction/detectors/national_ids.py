"""National identity numbers, each validated by its published rules.

- US SSN: AAA-GG-SSSS; area not 000, 666 or 900-999, group not 00, serial not 0000 (SSA). Without dashes
  only after "SSN"/"social security", since nine bare digits are everywhere.
- UK National Insurance number: two prefix letters from HMRC's allowed set, six digits, suffix A-D
  (HMRC NIM39110). HMRC's own documentation example prefix QQ is masked too.
- Dutch BSN: nine digits passing the "11-proof" (elfproef); only after "BSN"/"burgerservicenummer".
- Spanish DNI (8 digits + letter) and NIE (X/Y/Z + 7 digits + letter): the letter is the number mod 23.
- Finnish HETU: DDMMYY, century sign, individual number, check character (number mod 31); a real date.
- Italian codice fiscale: 16 characters whose last is a check character over the first 15.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import date

from .._types import FindingType
from ._base import Candidate, ScanText

__all__ = ["NationalIdDetector"]

_CONTEXT_BEFORE = 40


@dataclass(frozen=True, slots=True)
class _IdRule:
    type: str
    regex: re.Pattern[str]
    validate: Callable[[re.Match[str]], bool]
    context: tuple[str, ...] = ()  # lower-case words one of which must come shortly before
    confidence: float = 0.85


def _ssn_valid(match: re.Match[str]) -> bool:
    area, group, serial = match.group("area"), match.group("group"), match.group("serial")
    return area not in ("000", "666") and area[0] != "9" and group != "00" and serial != "0000"


_NINO_BAD_PREFIXES = frozenset({"BG", "GB", "KN", "NK", "NT", "TN", "ZZ"})


def _nino_valid(match: re.Match[str]) -> bool:
    return match.group("prefix") not in _NINO_BAD_PREFIXES


def _bsn_valid(match: re.Match[str]) -> bool:
    digits = re.sub(r"\D", "", match.group())
    if len(digits) == 8:
        digits = "0" + digits
    weights = (9, 8, 7, 6, 5, 4, 3, 2, -1)
    return len(digits) == 9 and sum(int(d) * w for d, w in zip(digits, weights, strict=True)) % 11 == 0


_DNI_LETTERS = "TRWAGMYFPDXBNJZSQVHLCKE"


def _dni_valid(match: re.Match[str]) -> bool:
    number = match.group("number")
    prefix = match.group("nie") or ""
    if prefix:
        number = str("XYZ".index(prefix)) + number
    return _DNI_LETTERS[int(number) % 23] == match.group("letter")


_HETU_CHECKS = "0123456789ABCDEFHJKLMNPRSTUVWXY"
_HETU_CENTURIES = {"+": 1800, "-": 1900, "Y": 1900, "X": 1900, "W": 1900, "V": 1900, "U": 1900}


def _hetu_valid(match: re.Match[str]) -> bool:
    day, month, year = int(match.group("day")), int(match.group("month")), int(match.group("year"))
    century = _HETU_CENTURIES.get(match.group("sign"), 2000)
    try:
        date(century + year, month, day)
    except ValueError:
        return False
    number = int(match.group("day") + match.group("month") + match.group("year") + match.group("individual"))
    return _HETU_CHECKS[number % 31] == match.group("check")


_CF_ODD = (1, 0, 5, 7, 9, 13, 15, 17, 19, 21, 2, 4, 18, 20, 11, 3, 6, 8, 12, 14, 16, 10, 22, 25, 24, 23)
_CF_DIGIT_FOR_LETTER = "LMNPQRSTUV"  # omocodia: letters that replace digits in duplicate codes


def _cf_value(char: str, odd: bool) -> int:
    if char.isdigit():
        index = int(char)
    elif odd:
        return _CF_ODD[ord(char) - 65]
    else:
        return ord(char) - 65
    return _CF_ODD[index] if odd else index


def _fiscal_code_valid(match: re.Match[str]) -> bool:
    code = match.group()
    total = sum(_cf_value(char, position % 2 == 0) for position, char in enumerate(code[:15]))
    return chr(65 + total % 26) == code[15]


_RULES = (
    _IdRule(
        FindingType.US_SSN,
        re.compile(r"(?P<area>\d{3})(?P<sep>[- ])(?P<group>\d{2})(?P=sep)(?P<serial>\d{4})"),
        _ssn_valid,
    ),
    _IdRule(
        FindingType.US_SSN,
        re.compile(r"(?P<area>\d{3})(?P<group>\d{2})(?P<serial>\d{4})"),
        _ssn_valid,
        context=("ssn", "social security", "social sec"),
    ),
    _IdRule(
        FindingType.UK_NINO,
        re.compile(
            r"(?P<prefix>[A-CEGHJ-PR-TW-Z][A-CEGHJ-NPR-TW-Z]|QQ) ?\d{2} ?\d{2} ?\d{2} ?[A-D]",
        ),
        _nino_valid,
    ),
    _IdRule(
        FindingType.NL_BSN,
        re.compile(r"\d{4}\.?\d{2}\.?\d{3}|\d{3}[ .]?\d{3}[ .]?\d{3}|\d{8}"),
        _bsn_valid,
        context=("bsn", "burgerservicenummer", "sofinummer", "sofi-nummer", "citizen service number"),
    ),
    _IdRule(
        FindingType.ES_DNI,
        re.compile(r"(?:(?P<nie>[XYZ])[- ]?)?(?P<number>(?(nie)\d{7}|\d{8}))[- ]?(?P<letter>[A-Z])"),
        _dni_valid,
    ),
    _IdRule(
        FindingType.FI_HETU,
        re.compile(
            r"(?P<day>\d{2})(?P<month>\d{2})(?P<year>\d{2})(?P<sign>[-+A-FU-Y])(?P<individual>\d{3})"
            r"(?P<check>[0-9A-FHJ-NPR-Y])"
        ),
        _hetu_valid,
    ),
    _IdRule(
        FindingType.IT_FISCAL_CODE,
        re.compile(r"[A-Z]{6}[0-9LMNP-V]{2}[A-EHLMPR-T][0-9LMNP-V]{2}[A-Z][0-9LMNP-V]{3}[A-Z]"),
        _fiscal_code_valid,
        confidence=0.9,
    ),
)


class NationalIdDetector:
    name = "national_ids"

    def detect(self, scan: ScanText) -> Iterator[Candidate]:
        text = scan.text
        for rule in _RULES:
            if rule.context and not scan.lower_contains_any(rule.context):
                continue
            for match in rule.regex.finditer(text):
                start, end = match.span()
                if _is_glued(text, start - 1, -1) or _is_glued(text, end, 1):
                    continue
                if rule.context and not any(
                    word in scan.lower[max(0, start - _CONTEXT_BEFORE) : start] for word in rule.context
                ):
                    continue
                if rule.validate(match):
                    yield Candidate(rule.type, start, end, rule.confidence, self.name)


def _is_glued(text: str, index: int, step: int) -> bool:
    """Whether the neighbour at `index` continues the token, making it part of a longer id or version.

    A joiner ("-", ".", "/", "+") counts only when a letter or digit follows it: "SSN 123-45-6789." ends a
    sentence, "123-45-6789-01" is something else.
    """
    if not 0 <= index < len(text):
        return False
    char = text[index]
    if char.isalnum() or char == "_":
        return True
    beyond = index + step
    return char in "-./+" and 0 <= beyond < len(text) and text[beyond].isalnum()
