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
from datetime import date
from functools import partial

from .._types import FindingType
from ._base import Candidate, CandidatePart, ScanText, continues_token, line_local_findings, may_occur

__all__ = ["NationalIdDetector"]

_CONTEXT_AFTER = 40


_NINO_BAD_PREFIXES = frozenset({"BG", "GB", "KN", "NK", "NT", "TN", "ZZ"})


def _nino_valid(match: re.Match[str]) -> bool:
    prefix = match.group()[:2]
    if prefix == "QQ":
        return True
    return prefix[0] != "Q" and prefix[1] != "Q" and prefix not in _NINO_BAD_PREFIXES


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


def _fiscal_code_valid(code: str) -> bool:
    total = sum(_cf_value(char, position % 2 == 0) for position, char in enumerate(code[:15]))
    return chr(65 + total % 26) == code[15]


# Validators take the matched text, so that one scan can serve several formats.
def _ssn_text_valid(value: str) -> bool:
    digits = value.replace("-", "").replace(" ", "")
    area, group, serial = digits[:3], digits[3:5], digits[5:]
    return area not in ("000", "666") and area[0] != "9" and group != "00" and serial != "0000"


# Dashed SSNs are found anywhere (by _DIGIT_LED); spaced or bare ones only after their name.
_SSN = re.compile(r"(?P<area>[0-9]{3})(?P<sep> ?)(?P<group>[0-9]{2})(?P=sep)(?P<serial>[0-9]{4})")

# SSN (dashed), HETU and DNI all open with digits: one scan finds all three, a named group says which. The first
# digit is a class of its own: CPython skips ahead to a pattern's first character only when the pattern opens with
# a plain class, not a repeat (`[0-9]{3}`), and each such split below made its scan about twice as fast.
_DIGIT_LED = re.compile(
    r"[0-9][0-9]{2}(?:(?P<ssn>-[0-9]{2}-[0-9]{4})"
    r"|[0-9]{3}(?:(?P<hetu>[-+A-FU-Y][0-9]{3}[0-9A-FHJ-NPR-Y])|(?P<dni>[0-9]{2}[- ]?[A-Z])))"
)
_HETU = re.compile(
    r"(?P<day>[0-9]{2})(?P<month>[0-9]{2})(?P<year>[0-9]{2})(?P<sign>[-+A-FU-Y])(?P<individual>[0-9]{3})"
    r"(?P<check>[0-9A-FHJ-NPR-Y])"
)
_DNI = re.compile(r"(?:(?P<nie>[XYZ])[- ]?)?(?P<number>(?(nie)[0-9]{7}|[0-9]{8}))[- ]?(?P<letter>[A-Z])")
_NIE = re.compile(r"[XYZ][- ]?[0-9]{7}[- ]?[A-Z]")
# The prefix letters are checked in Python: a pattern that opens with a single class scans fastest.
_NINO = re.compile(r"[A-CEGHJ-TW-Z][A-CEGHJ-NP-TW-Z] ?[0-9]{2} ?[0-9]{2} ?[0-9]{2} ?[A-D]")
# Anchored on the birth date part (digits), then checked for the six letters before it.
_FISCAL_TAIL = re.compile(r"[0-9LMNP-V][0-9LMNP-V][A-EHLMPR-T][0-9LMNP-V]{2}[A-Z][0-9LMNP-V]{3}[A-Z]")
_FISCAL_HEAD = re.compile(r"[A-Z]{6}")
_BSN = re.compile(r"[0-9]{4}\.?[0-9]{2}\.?[0-9]{3}|[0-9]{3}[ .]?[0-9]{3}[ .]?[0-9]{3}|[0-9]{8}")
_SSN_WORDS = re.compile(r"ssn|social security|social sec")
_BSN_WORDS = re.compile(r"bsn|burgerservicenummer|sofinummer|sofi-nummer|citizen service number")


# For the compiled scan: each line-local format's own pattern (the digit-led one as its three shapes), in one
# part: each format reads the lines any of them matched on (they are rare), for one scan of the text, not four.
_LINE_LOCAL_PART = CandidatePart(
    "national_ids.line_local",
    (
        r"[0-9]{3}-[0-9]{2}-[0-9]{4}",
        r"[0-9]{6}[-+A-FU-Y][0-9]{3}[0-9A-FHJ-NPR-Y]",
        r"[0-9]{8}[- ]?[A-Z]",
        _NIE.pattern,
        _NINO.pattern,
        r"[A-Z]{6}" + _FISCAL_TAIL.pattern,
    ),
)
# Gates for the formats read after their name: the name, in the lower-case view.
_SSN_GATE = CandidatePart("national_ids.ssn_words", (), (_SSN_WORDS.pattern,))
_BSN_GATE = CandidatePart("national_ids.bsn_words", (), (_BSN_WORDS.pattern,))


class NationalIdDetector:
    name = "national_ids"
    candidate_parts = (_LINE_LOCAL_PART, _SSN_GATE, _BSN_GATE)

    def detect(self, scan: ScanText) -> Iterator[Candidate]:
        # The formats found anywhere are line-local: no pattern matches a newline, and the characters read
        # around a match (`_is_glued`) are on its line or are the newline itself. Each is found on the distinct
        # lines only, one format after the other as before.
        yield from line_local_findings(scan, self._digit_led_ids, _LINE_LOCAL_PART)
        for pattern, finding_type, validate, part in (
            (_NIE, FindingType.ES_DNI, _nie_valid, _LINE_LOCAL_PART),
            (_NINO, FindingType.UK_NINO, _nino_valid, _LINE_LOCAL_PART),
        ):
            yield from line_local_findings(
                scan,
                partial(self._letter_led, pattern=pattern, finding_type=finding_type, validate=validate),
                part,
            )
        yield from line_local_findings(scan, self._fiscal_codes, _LINE_LOCAL_PART)
        if may_occur(scan, _SSN_GATE):
            yield from self._after_words(
                scan, _SSN_WORDS, _SSN, FindingType.US_SSN, lambda m: _ssn_text_valid(m.group())
            )
        if may_occur(scan, _BSN_GATE):
            yield from self._after_words(scan, _BSN_WORDS, _BSN, FindingType.NL_BSN, _bsn_valid)

    def _digit_led_ids(self, scan: ScanText) -> Iterator[Candidate]:
        text = scan.text
        for match in _DIGIT_LED.finditer(text):
            start, end = match.span()
            if _is_glued(text, start - 1, -1) or _is_glued(text, end, 1):
                continue
            found = self._digit_led(match)
            if found is not None:
                yield Candidate(found, start, end, 0.85, self.name)

    def _digit_led(self, match: re.Match[str]) -> str | None:
        value = match.group()
        if match.group("ssn") is not None:
            return FindingType.US_SSN if _ssn_text_valid(value) else None
        if match.group("hetu") is not None:
            hetu = _HETU.fullmatch(value)
            return FindingType.FI_HETU if hetu is not None and _hetu_valid(hetu) else None
        dni = _DNI.fullmatch(value)
        return FindingType.ES_DNI if dni is not None and _dni_valid(dni) else None

    def _letter_led(
        self,
        scan: ScanText,
        *,
        pattern: re.Pattern[str],
        finding_type: str,
        validate: Callable[[re.Match[str]], bool],
    ) -> Iterator[Candidate]:
        text = scan.text
        for match in pattern.finditer(text):
            start, end = match.span()
            if not (_is_glued(text, start - 1, -1) or _is_glued(text, end, 1)) and validate(match):
                yield Candidate(finding_type, start, end, 0.85, self.name)

    def _fiscal_codes(self, scan: ScanText) -> Iterator[Candidate]:
        text = scan.text
        for match in _FISCAL_TAIL.finditer(text):
            start, end = match.start() - 6, match.end()
            # The six letters before the tail: a newline among them fails the match, as the text's start does.
            if start < 0 or _FISCAL_HEAD.fullmatch(text, start, match.start()) is None:
                continue
            if not (_is_glued(text, start - 1, -1) or _is_glued(text, end, 1)) and _fiscal_code_valid(
                text[start:end]
            ):
                yield Candidate(FindingType.IT_FISCAL_CODE, start, end, 0.9, self.name)

    def _after_words(
        self,
        scan: ScanText,
        words: re.Pattern[str],
        pattern: re.Pattern[str],
        finding_type: str,
        validate: Callable[[re.Match[str]], bool],
    ) -> Iterator[Candidate]:
        """Formats too plain to trust alone (nine bare digits), looked for only just after their name."""
        text = scan.text
        for word in words.finditer(scan.lower):
            for match in pattern.finditer(text, word.end(), word.end() + _CONTEXT_AFTER):
                start, end = match.span()
                if not (_is_glued(text, start - 1, -1) or _is_glued(text, end, 1)) and validate(match):
                    yield Candidate(finding_type, start, end, 0.85, self.name)


def _nie_valid(match: re.Match[str]) -> bool:
    dni = _DNI.fullmatch(match.group())
    return dni is not None and _dni_valid(dni)


def _is_glued(text: str, index: int, step: int) -> bool:
    """Whether the neighbour at `index` continues the token (a joiner counts when a letter or digit follows)."""
    return continues_token(text, index, step, "-./+")
