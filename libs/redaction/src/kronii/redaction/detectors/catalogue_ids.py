"""Checked identifiers of every country python-stdnum knows: national, tax, bank-account and device numbers.

The catalogue (data/id_catalogue.json, built from python-stdnum by scripts/build_id_catalogue.py) lists some
170 formats with their shapes (digits and letters once compacted), their names and how often a random token of
their shape passes their check (`accept_rate`). A token of digits and capitals, or a run of such groups joined by
single separators ("880320-0016", "12.345.678-5", "756.1234.5678.97"), is asked of the formats of its shape only,
through the module's own `is_valid` (check digits, embedded dates, ranges). A number that passes is masked when:
- its format is strong (at most one random token in a thousand passes: two check digits, a date and a checksum),
  or it is written in its format's own layout with separators and the format is fairly strong (one in a hundred);
- or its format's own name (CPR, Personnummer, 주민등록번호, NIK, RUT...) or a word of its family in one of some
  30 languages (data/id_words.toml: "ID number", "Steuernummer", "身份证", "رقم الهوية"...) stands before it on its
  line: a person who writes "tax number:" before a number that passes a tax format's check wrote a tax number.
A number that fails every check of its shape is left alone: invalid look-alikes, order and build numbers.

The formats the engine's own detectors already handle (SSN, BSN, DNI, CPF, Aadhaar...) are left out of the
catalogue: those detectors keep their specific types and context rules proven on the earlier corpora.
"""

from __future__ import annotations

import importlib
import json
import re
import tomllib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import cache
from importlib.resources import files
from typing import Any, NamedTuple

from ._base import Candidate, CandidatePart, ScanText, line_local_findings, literal_alternation
from ._context_words import whole_word

__all__ = ["CatalogueIdDetector", "names_an_id"]

_STRONG = 0.001  # accept rate at or below which a valid number needs no word before it
_LAID_OUT = 0.01  # ... and at or below which its own formatted layout is enough
_UNCHECKED = 0.5  # at or above: hardly a check at all, so only the format's own name announces it
_MIN_LENGTH = 7  # shorter formats (5-digit VAT numbers) are every other number in a log
_CONTEXT_CHARS = 64  # how far before the number its name may stand
_MAX_GROUPS = 8
# Groups of digits and capitals joined by one separator. Lower-case letters end a token: "abc123" is code.
# The look-ahead wants a digit in the first group: capitalised words alone ("GET", "HTTP") are no token.
# A token starts at a digit, or at a capital with a digit within six more (capitalised words alone, "GET",
# "HTTP", are no token), not inside a word, and has seven characters at least: shorter ones hold no format of
# the catalogue. The first character is matched before the look-behind so that the scan rejects most
# positions on one character class.
_TOKEN = re.compile(
    r"(?:[0-9]|[A-Z](?=[A-Z]{0,5}[ .\-/]?[0-9]))(?<![0-9A-Za-z_].)(?=[0-9A-Z .\-/]{6})"
    r"[0-9A-Z]*(?:[ .\-/][0-9A-Z]+)*(?![0-9A-Za-z_])"
)
# For the compiled scan: a token's first four digits (groups of digits and capitals joined by single
# separators, after no letter, digit or "_"), which every token `_find` reads holds. Read from the token's
# start, so that a long token is reported once, not at every digit.
_CANDIDATES = CandidatePart("catalogue_ids", (r"(?:^|[^0-9A-Za-z_])(?:(?:[ .\-/]?[A-Z]+)*[ .\-/]?[0-9]){4}",))
_TOKEN_PREFIX = re.compile(r"[0-9A-Z]*(?:[ .\-/][0-9A-Z]+)*")
_DIGIT_RUNS = re.compile(r"[0-9]+")
_GROUP = re.compile(r"[0-9A-Z]+")


@dataclass(frozen=True, slots=True)
class _Format:
    module: str
    type: str
    layouts: frozenset[str]
    accept_rate: float


@dataclass(frozen=True, slots=True)
class _Catalogue:
    strong: dict[str, tuple[_Format, ...]]  # by shape: formats checked on every token of the shape
    weak: dict[str, tuple[_Format, ...]]  # by shape: formats checked only after a word announcing them
    lengths: frozenset[int]
    longest: int
    words: re.Pattern[str]  # every name and family word, lower case, as one trie
    word_formats: dict[str, frozenset[str]]  # a name -> the modules it names
    word_families: dict[str, frozenset[str]]  # a family word -> the types it announces
    by_module: dict[str, _Format]


def _data(name: str) -> str:
    return files("kronii.redaction").joinpath("data", name).read_text(encoding="utf-8")


def _shape_tables(
    raw: dict[str, Any],
) -> tuple[dict[str, list[_Format]], dict[str, list[_Format]], dict[str, _Format]]:
    """The formats by shape, strong and weak, and one record per module (for its type)."""
    strong: dict[str, list[_Format]] = {}
    weak: dict[str, list[_Format]] = {}
    by_module: dict[str, _Format] = {}
    for entry in raw["formats"]:
        layouts = frozenset(entry["layouts"])
        for shape, accept_rate in entry["shapes"].items():
            found = _Format(entry["module"], entry["type"], layouts, accept_rate)
            by_module.setdefault(found.module, found)
            if len(shape) >= _MIN_LENGTH:
                (strong if accept_rate <= _LAID_OUT else weak).setdefault(shape, []).append(found)
    return strong, weak, by_module


def _word_tables(
    raw: dict[str, Any], families: dict[str, Any]
) -> tuple[dict[str, set[str]], dict[str, set[str]]]:
    """Each format's names (its own, and those of formats other detectors find) and each family's words."""
    word_formats: dict[str, set[str]] = {}
    named = [(entry["module"], entry["names"]) for entry in raw["formats"]]
    for module, names in [*named, *raw.get("names_elsewhere", {}).items()]:
        for name in names:
            word_formats.setdefault(name.lower(), set()).add(module)
    word_families: dict[str, set[str]] = {}
    for family, listed in families.items():
        for word in listed["words"]:
            word_families.setdefault(word.lower(), set()).add(family)
    return word_formats, word_families


@cache
def _catalogue() -> _Catalogue:
    raw: dict[str, Any] = json.loads(_data("id_catalogue.json"))
    strong, weak, by_module = _shape_tables(raw)
    word_formats, word_families = _word_tables(raw, tomllib.loads(_data("id_words.toml")))
    return _Catalogue(
        {shape: tuple(formats) for shape, formats in strong.items()},
        {shape: tuple(formats) for shape, formats in weak.items()},
        frozenset(len(shape) for shape in (*strong, *weak)),
        max(len(shape) for shape in (*strong, *weak)),
        re.compile(literal_alternation({*word_formats, *word_families})),
        {w: frozenset(m) for w, m in word_formats.items()},
        {w: frozenset(f) for w, f in word_families.items()},
        by_module,
    )


@cache
def _validator(module: str) -> Callable[[str], bool]:
    imported = importlib.import_module(f"stdnum.{module}")
    checker: Callable[[str], bool] = imported.is_valid
    return checker


_SHAPES = str.maketrans(
    {**dict.fromkeys("0123456789", "D"), **dict.fromkeys("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "A")}
)


def _shape(compact: str) -> str:
    """D for a digit, A for a letter: tokens hold only ASCII digits and capitals. A final X is a digit: it is
    the check digit 10 of the mod-11 formats (China's resident id, ...), whose examples may all end in 0-9."""
    shape = compact.translate(_SHAPES)
    return shape[:-1] + "D" if compact.endswith("X") else shape


def _layout(written: str) -> str:
    return written.translate(_SHAPES)


def _passing_strong(compact: str) -> tuple[_Format, ...]:
    """The strong formats of this token's shape whose check it passes."""
    return tuple(f for f in _catalogue().strong.get(_shape(compact), ()) if _checks(f.module, compact))


def _formats_of(compact: str) -> tuple[_Format, ...]:
    catalogue = _catalogue()
    shape = _shape(compact)
    return (*catalogue.strong.get(shape, ()), *catalogue.weak.get(shape, ()))


def _announcing_words(line: str) -> tuple[tuple[int, str], ...]:
    """Where each catalogue word ends on a (lower-case) line, with the word; Latin ones only as whole words."""
    return tuple(
        (match.end(), match.group())
        for match in _catalogue().words.finditer(line)
        if whole_word(line, match.start(), match.end(), match.group())
    )


def names_an_id(lower_before: str) -> bool:
    """Whether the (lower-case) words before a number name an identifier of the catalogue: "NHS:", "TFN",
    "Kennitala", "ID number". Other detectors then leave the number to this one (a phone detector would read
    `NHS: 943 476 5918` as a British phone number)."""
    return bool(_announcing_words(lower_before))


def _checks(module: str, compact: str) -> bool:
    try:
        return bool(_validator(module)(compact))
    except Exception:
        return False


class _Piece(NamedTuple):
    """A run of a token's groups that some format of the catalogue could be, and what it already is."""

    start: int  # in the token
    end: int
    compact: str
    strong: _Format | None  # a format it is without any word before it
    weak: bool  # whether a word before it could still make it one


def _pieces(token: str) -> tuple[_Piece, ...]:
    """Every run of up to eight groups of `token` of a catalogue shape (memoised per text: tokens repeat).

    A run begins and ends at the token's ends or at a space: "DE 136695976" holds a number after a prefix, but
    "113.586.606-63" is one number, never "113.586.606" and a rest."""
    catalogue = _catalogue()
    groups = [(g.start(), g.end()) for g in _GROUP.finditer(token)]
    opens = [index == 0 or token[start - 1] == " " for index, (start, _end) in enumerate(groups)]
    closes = [*opens[1:], True]
    pieces = []
    for first in (i for i in range(len(groups)) if opens[i]):
        compact = ""
        for last in range(first, min(len(groups), first + _MAX_GROUPS)):
            compact += token[groups[last][0] : groups[last][1]]
            if len(compact) > catalogue.longest:
                break
            if not closes[last] or len(compact) not in catalogue.lengths:
                continue
            start, end = groups[first][0], groups[last][1]
            # A run of another shape with letters in it is kept for a format named before it: its examples may
            # not show every shape it takes (GSTIN's last characters are letters or digits).
            if _catalogued_shape(catalogue, _shape(compact)):
                strong = _strong(compact, _layout(token[start:end]))
            elif compact.isdigit():
                continue
            else:
                strong = None
            pieces.append(_Piece(start, end, compact, strong, strong is None))
    return tuple(pieces)


def _token_prefix(written: str) -> str:
    match = _TOKEN_PREFIX.match(written)
    return match.group() if match else ""


def _catalogued_shape(catalogue: _Catalogue, shape: str) -> bool:
    """A shape of the catalogue, or one after a two-letter country prefix (VAT numbers: "CY10259033P")."""
    if shape in catalogue.strong or shape in catalogue.weak:
        return True
    rest = shape[2:]
    return shape.startswith("AA") and (rest in catalogue.strong or rest in catalogue.weak)


def _strong(compact: str, written: str) -> _Format | None:
    """A strong format the number passes: any, or, for the fairly strong, in its own written layout.

    The layout is compared before the check digits: most numbers in logs are bare digits, and only the
    strongest formats are asked about those."""
    laid_out = not written.isalnum()
    for found in _catalogue().strong.get(_shape(compact), ()):
        if found.accept_rate > _STRONG and not (laid_out and written in found.layouts):
            continue
        if _checks(found.module, compact):
            return found
    return None


class CatalogueIdDetector:
    name = "catalogue_ids"
    candidate_parts = (_CANDIDATES,)

    def detect(self, scan: ScanText) -> Iterator[Candidate]:
        # A number's findings depend on its own line alone (its name stands before it on that line).
        return line_local_findings(scan, self._find, _CANDIDATES)

    def _find(self, scan: ScanText) -> Iterator[Candidate]:
        for match in _TOKEN.finditer(scan.text):
            token = match.group()
            if len(token) < _MIN_LENGTH or sum(map(len, _DIGIT_RUNS.findall(token))) < 4:
                continue
            for piece in scan.memo(_pieces, token):
                start, end = match.start() + piece.start, match.start() + piece.end
                chosen = piece.strong
                if chosen is None and piece.weak:
                    chosen = self._announced(scan, piece.compact, start)
                if chosen is not None:
                    yield Candidate(chosen.type, start, end, 0.85, self.name)

    def _named(self, compact: str, start: int, text: str, named: set[str]) -> _Format | None:
        catalogue = _catalogue()
        written = _token_prefix(text[start : start + len(compact) * 2].split("\n", 1)[0])
        for module in sorted(m for m in named if m in catalogue.by_module):
            # Some formats keep their separators ("J52/750/2012"): asked as written too.
            if _checks(module, compact) or _checks(module, written):
                return catalogue.by_module[module]
        return None

    def _announced(self, scan: ScanText, compact: str, start: int) -> _Format | None:
        """A format the number passes that a word before it on its line names, or whose family it names."""
        text = scan.text
        line_start = text.rfind("\n", 0, start) + 1
        window_start = max(line_start, start - _CONTEXT_CHARS)
        # The window's words, memoised: a log repeats the same words before its numbers line after line.
        words = [w for _end, w in scan.memo(_announcing_words, scan.lower[window_start:start])]
        if not words:
            return None
        catalogue = _catalogue()
        named = set().union(*(catalogue.word_formats.get(w, frozenset()) for w in words))
        if named:
            # The person named the format ("CVR", "Personnummer"): it is that one or none. Another country's
            # format of the same shape accepting the digits would make a wrong check digit pass.
            return self._named(compact, start, text, named)
        families = set().union(*(catalogue.word_families.get(w, frozenset()) for w in words))
        # A family word ("ID number", "numéro fiscal") names no format: the person says what the number is, and
        # the digits must pass a check of one of the family's formats of their shape.
        checked = [f for f in _formats_of(compact) if f.type in families and f.accept_rate < _UNCHECKED]
        for found in checked:
            if _checks(found.module, compact):
                return found
        return None
