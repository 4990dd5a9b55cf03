"""National identity and tax numbers that carry check digits, validated by their published rules.

Formatted spellings that nothing else uses (CPF `123.456.789-09`, CNPJ `12.345.678/0001-95`, Aadhaar in
groups 4-4-4, NIR in its printed groups) are found anywhere; bare digit runs, and formats that phone numbers
or invoice numbers share, only on a line that names the id. A wrong check digit is left alone.

- BR CPF: 11 digits, two mod-11 check digits (Receita Federal); eleven equal digits are invalid.
- BR CNPJ: 14 digits, two mod-11 check digits with weights 5..2,9..2 and 6..2,9..2 (Receita Federal).
- IN Aadhaar: 12 digits, first not 0 or 1, last a Verhoeff check digit (UIDAI).
- FR NIR: sex, year, month, department (2A/2B for Corsica), commune, order, then key = 97 - (n mod 97),
  2A and 2B counted as 19 and 18 (INSEE).
- DE Steuer-ID: 11 digits, first not 0; in the first ten one digit appears twice or three times (never three
  in a row) and the others at most once; ISO 7064 MOD 11,10 check digit (BZSt, Abgabenordnung 139b).
- PL PESEL: YYMMDD (month +20/+40/+60/+80 for the century) + 4 digits + check, weights 1,3,7,9 (Ministry
  of Digital Affairs); the date must exist.
- CA SIN: 9 digits, Luhn, first digit not 0 or 8 (Employment and Social Development Canada).
- AU TFN: 8 or 9 digits whose weighted sum is a multiple of 11 (Australian Taxation Office).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from datetime import date
from functools import partial
from operator import attrgetter

from .._types import FindingType
from ._base import Candidate, CandidatePart, ScanText, continues_token, line_bounds, line_local_findings
from ._tables import column_cells

__all__ = ["CheckedIdDetector"]


def _digits(value: str) -> list[int]:
    return [int(char) for char in value if char.isdigit()]


def _mod11_digit(digits: list[int], weights: range | tuple[int, ...]) -> int:
    remainder = sum(d * w for d, w in zip(digits, weights, strict=False)) % 11
    return 0 if remainder < 2 else 11 - remainder


def cpf_valid(value: str) -> bool:
    digits = _digits(value)
    if len(digits) != 11 or len(set(digits)) == 1:
        return False
    return _mod11_digit(digits[:9], range(10, 1, -1)) == digits[9] and (
        _mod11_digit(digits[:10], range(11, 1, -1)) == digits[10]
    )


_CNPJ_WEIGHTS = (6, 5, 4, 3, 2, 9, 8, 7, 6, 5, 4, 3, 2)


def cnpj_valid(value: str) -> bool:
    digits = _digits(value)
    if len(digits) != 14 or len(set(digits)) == 1:
        return False
    return _mod11_digit(digits[:12], _CNPJ_WEIGHTS[1:]) == digits[12] and (
        _mod11_digit(digits[:13], _CNPJ_WEIGHTS) == digits[13]
    )


# Verhoeff's dihedral-group tables (multiplication and permutation).
_VERHOEFF_D = (
    (0, 1, 2, 3, 4, 5, 6, 7, 8, 9),
    (1, 2, 3, 4, 0, 6, 7, 8, 9, 5),
    (2, 3, 4, 0, 1, 7, 8, 9, 5, 6),
    (3, 4, 0, 1, 2, 8, 9, 5, 6, 7),
    (4, 0, 1, 2, 3, 9, 5, 6, 7, 8),
    (5, 9, 8, 7, 6, 0, 4, 3, 2, 1),
    (6, 5, 9, 8, 7, 1, 0, 4, 3, 2),
    (7, 6, 5, 9, 8, 2, 1, 0, 4, 3),
    (8, 7, 6, 5, 9, 3, 2, 1, 0, 4),
    (9, 8, 7, 6, 5, 4, 3, 2, 1, 0),
)
_VERHOEFF_P = (
    (0, 1, 2, 3, 4, 5, 6, 7, 8, 9),
    (1, 5, 7, 6, 2, 8, 3, 0, 9, 4),
    (5, 8, 0, 3, 7, 9, 6, 1, 4, 2),
    (8, 9, 1, 6, 0, 4, 3, 5, 2, 7),
    (9, 4, 5, 3, 1, 2, 6, 8, 7, 0),
    (4, 2, 8, 6, 5, 7, 3, 9, 0, 1),
    (2, 7, 9, 3, 8, 0, 6, 4, 1, 5),
    (7, 0, 4, 6, 9, 1, 3, 2, 5, 8),
)


def aadhaar_valid(value: str) -> bool:
    digits = _digits(value)
    if len(digits) != 12 or digits[0] < 2:
        return False
    check = 0
    for position, digit in enumerate(reversed(digits)):
        check = _VERHOEFF_D[check][_VERHOEFF_P[position % 8][digit]]
    return check == 0


_CORSICA = {"2A": "19", "2B": "18"}


def nir_valid(value: str) -> bool:
    compact = value.replace(" ", "").upper()
    if len(compact) != 15:
        return False
    body = compact[:5] + _CORSICA.get(compact[5:7], compact[5:7]) + compact[7:13]
    if not body.isdigit() or not compact[13:].isdigit():
        return False
    return 97 - int(body) % 97 == int(compact[13:])


def steuer_id_valid(value: str) -> bool:
    digits = _digits(value)
    if len(digits) != 11 or digits[0] == 0:
        return False
    head = digits[:10]
    counts = sorted((head.count(d) for d in set(head)), reverse=True)
    if counts[0] not in (2, 3) or (len(counts) > 1 and counts[1] != 1):
        return False
    if counts[0] == 3 and any(head[i] == head[i + 1] == head[i + 2] for i in range(8)):
        return False
    product = 10
    for digit in head:
        total = (digit + product) % 10 or 10
        product = total * 2 % 11
    return (11 - product) % 10 == digits[10]


_PESEL_WEIGHTS = (1, 3, 7, 9, 1, 3, 7, 9, 1, 3)
_PESEL_CENTURY = {0: 1900, 1: 2000, 2: 2100, 3: 2200, 4: 1800}


def pesel_valid(value: str) -> bool:
    digits = _digits(value)
    if len(digits) != 11:
        return False
    month = digits[2] * 10 + digits[3]
    century = _PESEL_CENTURY[month // 20]
    try:
        date(century + digits[0] * 10 + digits[1], month % 20, digits[4] * 10 + digits[5])
    except ValueError:
        return False
    return (10 - sum(d * w for d, w in zip(digits, _PESEL_WEIGHTS, strict=False)) % 10) % 10 == digits[10]


def sin_valid(value: str) -> bool:
    digits = _digits(value)
    if len(digits) != 9 or digits[0] in (0, 8):
        return False
    total = 0
    for position, digit in enumerate(digits):
        doubled = digit * 2 if position % 2 else digit
        total += doubled - 9 if doubled > 9 else doubled
    return total % 10 == 0


_TFN_WEIGHTS = {9: (1, 4, 3, 7, 5, 8, 6, 9, 10), 8: (10, 7, 8, 4, 6, 3, 5, 1)}


def tfn_valid(value: str) -> bool:
    digits = _digits(value)
    weights = _TFN_WEIGHTS.get(len(digits))
    return weights is not None and sum(d * w for d, w in zip(digits, weights, strict=True)) % 11 == 0


@dataclass(frozen=True, slots=True)
class _Rule:
    type: str
    pattern: re.Pattern[str]
    valid: Callable[[str], bool]
    # None: the format alone is distinctive. Otherwise the line must name the id.
    context: re.Pattern[str] | None
    # Digits before the pattern's first character that belong to the id: a pattern that opens with a literal
    # ("." in 123.456.789-09) is found several times faster than one that opens with a digit class.
    lead: int = 0


def _words(*words: str) -> re.Pattern[str]:
    # The word's start is checked in Python: a leading lookbehind makes CPython try every position (3-40x slower).
    return re.compile(r"(?:" + "|".join(words) + r")(?![a-z])")


_CPF_WORDS = _words("cpf")
_CNPJ_WORDS = _words("cnpj")
_AADHAAR_WORDS = _words("aadhaar", "aadhar", "uidai", "uid", "आधार")
_NIR_WORDS = _words(
    "nir", "insee", r"s[ée]curit[ée] sociale", r"n° ss", "num[ée]ro de s[ée]cu", "s[ée]cu", "social security"
)
_STEUER_WORDS = _words(
    "steuer[-_ ]?id",
    r"steuer-?identifikationsnummer",
    "steuerliche identifikationsnummer",
    "identifikationsnummer",
    "idnr",
    "tax id",
    "tin",
)
_PESEL_WORDS = _words("pesel")
_SIN_WORDS = _words("sin", "social insurance", "assurance sociale", "nas")
_TFN_WORDS = _words("tfn", "tax file number", "tax file no")

_NIR_BODY = (
    r"[1-478] ?[0-9]{2} ?(?:0[1-9]|1[0-2]|[2-9][0-9]) ?(?:[0-9]{2}|2[ABab]) ?[0-9]{3} ?[0-9]{3} ?[0-9]{2}"
)

_RULES = (
    _Rule(FindingType.BR_CPF, re.compile(r"\.[0-9]{3}\.[0-9]{3}-[0-9]{2}"), cpf_valid, None, lead=3),
    _Rule(FindingType.BR_CPF, re.compile(r"[0-9]{11}"), cpf_valid, _CPF_WORDS),
    _Rule(
        FindingType.BR_CNPJ, re.compile(r"\.[0-9]{3}\.[0-9]{3}/[0-9]{4}-[0-9]{2}"), cnpj_valid, None, lead=2
    ),
    _Rule(FindingType.BR_CNPJ, re.compile(r"[0-9]{14}"), cnpj_valid, _CNPJ_WORDS),
    _Rule(FindingType.IN_AADHAAR, re.compile(r"[2-9][0-9]{3}([ -])[0-9]{4}\1[0-9]{4}"), aadhaar_valid, None),
    _Rule(FindingType.IN_AADHAAR, re.compile(r"[2-9][0-9]{11}"), aadhaar_valid, _AADHAAR_WORDS),
    _Rule(FindingType.FR_NIR, re.compile(_NIR_BODY.replace(" ?", " ")), nir_valid, None),
    _Rule(FindingType.FR_NIR, re.compile(_NIR_BODY), nir_valid, _NIR_WORDS),
    _Rule(
        FindingType.DE_STEUER_ID,
        re.compile(r"[1-9][0-9] ?[0-9]{3} ?[0-9]{3} ?[0-9]{3}"),
        steuer_id_valid,
        _STEUER_WORDS,
    ),
    _Rule(FindingType.PL_PESEL, re.compile(r"[0-9]{11}"), pesel_valid, _PESEL_WORDS),
    _Rule(FindingType.CA_SIN, re.compile(r"[1-79][0-9]{2}([ -]?)[0-9]{3}\1[0-9]{3}"), sin_valid, _SIN_WORDS),
    _Rule(FindingType.AU_TFN, re.compile(r"[0-9]{3} ?[0-9]{3} ?[0-9]{2,3}"), tfn_valid, _TFN_WORDS),
)


# For the compiled scan: the rules found anywhere, each as its own pattern (an Aadhaar's repeated separator as
# either), in one part (each rule reads the lines any matched on: they are rare; one scan, not four), and the
# words that name a rule's id.
_CONTEXTS = tuple(dict.fromkeys(rule.context for rule in _RULES if rule.context is not None))
_ANYWHERE_PART = CandidatePart(
    "checked_ids.anywhere",
    (
        r"\.[0-9]{3}\.[0-9]{3}-[0-9]{2}",
        r"\.[0-9]{3}\.[0-9]{3}/[0-9]{4}-[0-9]{2}",
        r"[2-9][0-9]{3}[ -][0-9]{4}[ -][0-9]{4}",
        _NIR_BODY.replace(" ?", " "),
    ),
)
_WORD_PART = CandidatePart(
    "checked_ids.words",
    # Each context's own words in the lower-case view, at a word's start as `_regions` wants it.
    (),
    tuple(f"(?:^|[^a-z]){context.pattern.removesuffix('(?![a-z])')}" for context in _CONTEXTS),
    unicode=True,
)


class CheckedIdDetector:
    name = "checked_ids"
    anchors = tuple("0123456789")  # every id here is digits: a text without any needs no scan
    candidate_parts = (_ANYWHERE_PART, _WORD_PART)

    def detect(self, scan: ScanText) -> Iterator[Candidate]:
        seen: set[tuple[int, int]] = set()  # a printed NIR matches its own rule and the named one
        words = _context_words(scan)
        for rule in _RULES:
            if rule.context is None:
                # Line-local: no pattern matches a newline, and a lead or a neighbour across the line's start
                # is the newline itself, which fails the checks as the text's edge does.
                found: Iterable[Candidate] = line_local_findings(
                    scan, partial(self._anywhere, rule=rule), _ANYWHERE_PART
                )
            else:
                found = self._named(scan, rule, words[rule.context])
            for candidate in found:
                span = (candidate.start, candidate.end)
                if span not in seen:
                    seen.add(span)
                    yield candidate

    def _anywhere(self, scan: ScanText, *, rule: _Rule) -> Iterator[Candidate]:
        yield from self._matches(scan.text, rule, 0, len(scan.text))

    def _named(self, scan: ScanText, rule: _Rule, words: list[Candidate]) -> Iterator[Candidate]:
        for start, end in self._regions(scan, words):
            yield from self._matches(scan.text, rule, start, end)

    def _matches(self, text: str, rule: _Rule, start: int, end: int) -> Iterator[Candidate]:
        for match in rule.pattern.finditer(text, start + rule.lead, end):
            span = (match.start() - rule.lead, match.end())
            value = text[span[0] : span[1]]
            if rule.lead and not _ascii_digits(value[: rule.lead]):
                continue
            if _glued(text, *span) or not rule.valid(value):
                continue
            yield Candidate(rule.type, *span, 0.85 if rule.context else 0.9, self.name)

    def _regions(self, scan: ScanText, words: list[Candidate]) -> Iterator[tuple[int, int]]:
        """The lines that name a rule's id, and the table columns headed by it."""
        last_line = -1
        lower = scan.lower
        for word in words:
            if word.start > 0 and "a" <= lower[word.start - 1] <= "z":
                continue  # inside a longer word ("basin", "latin")
            line_start, line_end = line_bounds(scan.text, word.start, word.end)
            if line_start != last_line:
                last_line = line_start
                yield line_start, line_end
            yield from column_cells(scan.text, word.start)


def _context_words(scan: ScanText) -> dict[re.Pattern[str], list[Candidate]]:
    """Where each rule's words occur in the text, in order: found once per distinct line, since no word
    holds a newline. One search per rule: a single alternation of every rule's words scanned twice as slowly.
    The regions around them still come from the whole text (a table column reads the lines below)."""
    words: dict[re.Pattern[str], list[Candidate]] = {context: [] for context in _CONTEXTS}
    for word in line_local_findings(scan, _words_on, _WORD_PART):
        words[_CONTEXTS[int(word.type)]].append(word)
    return words


def _words_on(scan: ScanText) -> Iterator[Candidate]:
    """Each context's words on one line (a Candidate whose type is the context's number), line by line."""
    lower = scan.lower
    found = [
        Candidate(str(number), word.start(), word.end(), 0.0, "")
        for number, context in enumerate(_CONTEXTS)
        for word in context.finditer(lower)
    ]
    found.sort(key=_START)  # stable: on one line, each context's words stay in their order
    return iter(found)


_START = attrgetter("start")


def _ascii_digits(value: str) -> bool:
    return value.isascii() and value.isdigit()


def _glued(text: str, start: int, end: int) -> bool:
    """Whether the match is part of a longer token: a letter or digit next to it, or a joiner followed by one.

    A space followed by a digit joins too when the match itself is grouped by spaces (`4111 1111 1111 1111`
    is a card, not an Aadhaar number and four digits).
    """
    joiners = "-./+:" + (" " if " " in text[start:end] else "")
    return continues_token(text, start - 1, -1, joiners, str.isdigit) or continues_token(
        text, end, 1, joiners, str.isdigit
    )
