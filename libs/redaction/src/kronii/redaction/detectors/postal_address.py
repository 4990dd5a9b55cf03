"""Postal addresses written with a person's name or after an address label: DE, FR, UK, US, IN, BR and JP
formats here, the other European and the Chinese, Taiwanese and Korean ones from data (_postal_formats.py).

An address alone is often a company's or a shop's (footers, invoices from the vendor), and a name alone is
too ambiguous to mask (issue 12); a name on the line above an address, or before it on the same line, is a
person's home or delivery address. The span masked runs from the name to the end of the address.

Each country's format is anchored on its postal code, the rarest part of the address: 5 digits (DE, FR, US),
the UK postcode, the Indian PIN (6 digits, first 1-8), the Brazilian CEP (`01310-100`), the Japanese
`〒100-0001`. Only around an anchor are the street, city and name patterns tried, on a window of a few lines.
Formats: Deutsche Post (street and number, then PLZ and city), La Poste (number, street type, name; then code
postal and city), Royal Mail (number and street, town, postcode), USPS Publication 28 (number, street and
suffix, city, state abbreviation, ZIP or ZIP+4), India Post (street or locality, city, PIN), Correios (street,
number, district, city - UF, CEP), Japan Post (〒 code, prefecture, city, block).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from functools import cache

from .._types import FindingType
from ._base import Candidate, CandidatePart, ScanText, literal_alternation, may_occur
from ._person_name_data import han_name_labels
from ._postal_formats import (
    EUROPEAN_GATE,
    asian_addresses,
    european_addresses,
    labelled_addresses,
    said_to_be_home,
    unnumbered_addresses,
)

__all__ = ["PostalAddressDetector"]

# Latin Extended-A/B and Additional hold both cases (Vietnamese Đ, Ợ, ễ); _is_name checks each word's capital.
_UPPER = "A-ZÀ-ÖØ-Þ\u0100-\u024f\u1e00-\u1eff\u0410-\u042f\u0401\u0391-\u03a9"  # and Cyrillic, Greek
_LOWER = "a-zß-öø-ÿ\u0100-\u024f\u1e00-\u1eff\u0430-\u044f\u0451\u03b1-\u03c9\u03ac-\u03ce"
_WORD = f"[{_UPPER}][{_LOWER}'\u2019\\-]+"
_CAPS_WORD = f"[{_UPPER}][{_UPPER}'\u2019\\-]+"
# Between the parts of an address: a comma or a line break.
_SEP = r"(?:[ \t]*,[ \t]*|[ \t]*\n[ \t]*)"
_CITY = f"[{_UPPER}][{_LOWER}{_UPPER}'\u2019.\\-]+(?:[ \\-](?:[{_UPPER}][{_LOWER}{_UPPER}'\u2019.\\-]*|am|an|der|im|sur|sous|en|le|la|les|de|du|des|lès|upon|on))*"

_DE = (
    f"(?:[{_UPPER}][{_LOWER}]+(?:[ \\-][{_UPPER}]?[{_LOWER}]+)*"
    r"[ \-]?(?i:straße|strasse|str\.|weg|platz|allee|gasse|ring|damm|chaussee|ufer|markt|steig|pfad|graben|kai)"
    f"|(?:Am|An der|An den|Im|In der|Auf der|Zum|Zur|Unter den)\\s+[{_UPPER}][{_LOWER}]+)"
    r"\s*\d{1,4}\s?[a-zA-Z]?" + _SEP + r"(?:D-\s?)?\d{5}\s+" + _CITY
)
_FR = (
    r"\d{1,4}(?:\s?(?:bis|ter))?,?\s+"
    r"(?i:rue|avenue|av\.|boulevard|bd|place|chemin|allée|impasse|quai|route|cours|square|passage|faubourg)"
    r"\s[^\n,]{2,50}" + _SEP + r"\d{5}\s+" + _CITY + r"(?:\s+CEDEX(?:\s\d{1,2})?)?"
)
_UK_POSTCODE = r"(?:[A-PR-UWYZ][0-9][0-9A-HJKMNPR-Y]?|[A-PR-UWYZ][A-HK-Y][0-9][0-9ABEHMNPRVWXY]?)\s?[0-9][ABD-HJLNP-UW-Z]{2}"
_UK = (
    r"(?:(?:Flat|Apartment)\s\d+[A-Za-z]?,?\s+)?\d{1,4}[A-Za-z]?,?\s+"
    f"{_WORD}(?:\\s{_WORD})*\\s"
    r"(?:Street|St|Road|Rd|Lane|Ln|Avenue|Ave|Close|Drive|Dr|Way|Court|Ct|Place|Pl|Crescent|Gardens|Terrace"
    r"|Grove|Square|Sq|Hill|Row|Mews|Walk|Park|Green|Parade)\.?"
    + f"(?:{_SEP}{_CITY}){{1,2}}(?:{_SEP}|\\s+)"
    + _UK_POSTCODE
    + r"(?![A-Za-z0-9])"
)
_US_STATES = (
    "AL|AK|AZ|AR|CA|CO|CT|DE|DC|FL|GA|HI|ID|IL|IN|IA|KS|KY|LA|ME|MD|MA|MI|MN|MS|MO|MT|NE|NV|NH|NJ|NM|NY|NC|ND"
    "|OH|OK|OR|PA|RI|SC|SD|TN|TX|UT|VT|VA|WA|WV|WI|WY|PR|GU|VI|AS|MP"
)
_US = (
    r"\d{1,6}\s+(?:[NSEW]\.?\s+)?[A-Z0-9][A-Za-z0-9'.\-]*(?:\s[A-Z0-9][A-Za-z0-9'.\-]*){0,4}\s"
    r"(?:Street|St|Avenue|Ave|Road|Rd|Boulevard|Blvd|Lane|Ln|Drive|Dr|Court|Ct|Way|Place|Pl|Terrace|Ter"
    r"|Circle|Cir|Parkway|Pkwy|Highway|Hwy|Trail|Trl|Square|Sq|Loop)\.?(?:\s(?:NE|NW|SE|SW|[NSEW]))?"
    r"(?:,?\s+(?:Apt|Suite|Ste|Unit|#)\.?\s?#?[A-Za-z0-9\-]+)?"
    + _SEP
    + r"[A-Z][A-Za-z'.\-]+(?:\s[A-Z][A-Za-z'.\-]+){0,3},?\s+(?:"
    + _US_STATES
    + r")\s+\d{5}(?:-\d{4})?(?![0-9])"
)
_IN = (
    r"(?:(?:(?i:flat|house|h\.?\s?no\.?|plot|door)\s?|#)[\w/\-]+,?\s+)?(?:\d{1,5}[A-Za-z]?(?:[/\-]\d{1,4})?,?\s+)?"
    r"[^\n,]{0,40}?\b(?i:road|rd\.|marg|nagar|street|lane|colony|sector|layout|cross|vihar|enclave"
    r"|apartments?|society|block|bagh|puram|chowk)\b[^\n]{0,40}?"
    + _SEP
    + f"(?:{_CITY}{_SEP}){{0,2}}"
    + _CITY
    + r"(?:\s*[,\-\u2013]\s*|\s+)(?:PIN:?\s*)?[1-8][0-9]{2}\s?[0-9]{3}(?![0-9])"
)
_BR = (
    r"(?:Rua|R\.|Avenida|Av\.|Alameda|Al\.|Travessa|Praça|Estrada|Rodovia|Largo)\s[^\n,]{2,50},\s*"
    r"(?:n[º°o]\.?\s*)?\d{1,5}(?:[^\n]{0,80}\n?){0,2}?(?:CEP:?\s*)?[0-9]{5}-[0-9]{3}(?![0-9])"
    + f"(?:[ \\t]*[,\\-\\u2013]?[ \\t]*{_CITY}(?:[ \\t]*[-/][ \\t]*[A-Z]{{2}})?)?"
)
_JP = r"〒\s?[0-9]{3}-?[0-9]{4}[ \t\u3000]*\n?[ \t\u3000]*[^\n]{0,6}[都道府県][^\n]{2,60}"

# Each country's postal code is the anchor: the detector tries a format only around a code, and only the formats
# that code can belong to. Three scans that start on a digit, a space or a literal: an alternation of every
# country's code shape would be tried at every capital letter.
# The first digit a class of its own: CPython skips ahead to a pattern's first character only when the pattern opens
# with a plain class, not a repeat (`[0-9]{3}`); twice as fast.
_DIGIT_CODE = re.compile(r"[0-9][0-9]{2}(?:[0-9]{2}-[0-9]{3}|[0-9]{2,3}| [0-9]{3})(?![0-9])")
_UK_INWARD = re.compile(r" [0-9][A-Z]{2}(?![A-Za-z0-9])")
_UK_GATE = CandidatePart("postal_address.uk", (r" [0-9][A-Z]{2}",))  # for the compiled scan: `_UK_INWARD`
_UK_OUTWARD = re.compile(r"[A-Z][A-Z0-9]{1,3}\Z")
_JP_MARK = "〒"
_JP_FORMATS = (re.compile(_JP),)
_BR_FORMATS = (re.compile(_BR),)
_FIVE_DIGIT_FORMATS = (re.compile(_DE), re.compile(_FR), re.compile(_US))
_IN_FORMATS = (re.compile(_IN),)
_UK_FORMATS = (re.compile(_UK),)
_COMPANY_WORDS = frozenset(
    [
        "corp",
        "corporation",
        "inc",
        "ltd",
        "llc",
        "plc",
        "gmbh",
        "ag",
        "sa",
        "sarl",
        "sas",
        "co",
        "company",
        "bank",
        "foundation",
        "university",
        "institute",
        "services",
        "legal",
        "stop",
    ]
)

_TITLE = r"(?:(?:Mr|Mrs|Ms|Miss|Mx|Dr|Prof|Herr|Frau|M|Mme|Mlle|Sr|Sra|Srta|Shri|Smt)\.?\s+)"
_PARTICLES = frozenset(
    ("van", "von", "de", "da", "der", "den", "du", "dos", "das", "di", "le", "la", "bin", "al", "zu")
)
_PARTICLE = f"(?:{'|'.join(sorted(_PARTICLES))})"
_NAME_WORD = f"(?:{_WORD}|{_CAPS_WORD})"
_LATIN_NAME = f"{_TITLE}?{_NAME_WORD}(?:\\s+(?:{_PARTICLE}\\s+)?{_NAME_WORD}){{1,3}}"
# Kanji surname and given name with a space between them, or a name with an honorific (様, さん, 殿); katakana
# names with a space or a middle dot. A run of Japanese text without those is a word, not a name.
_CJK_NAME = (
    r"(?:[\u4e00-\u9fff]{1,4}[ \u3000][\u4e00-\u9fff]{1,4}|[\u30a0-\u30ff]{2,8}[ \u3000・][\u30a0-\u30ff]{2,8})"
    r"(?:[ \u3000]?(?:様|さん|殿))?|[\u4e00-\u9fff]{2,6}[ \u3000]?(?:様|さん|殿)"
)
_CJK_NAME_LINE = re.compile(f"[ \\t\u3000]*(?P<name>{_CJK_NAME})[ \\t\u3000]*")
# A name on its own line, with the labels letters and forms put before it.
_LABEL = r"(?:(?i:name|to|ship to|deliver to|recipient|addressee|an|à|destinataire|para|宛先|氏名)\s*:?\s*)?"
_NAME_LINE = re.compile(f"[ \\t]*{_LABEL}(?P<name>{_LATIN_NAME}|{_CJK_NAME})[ \\t]*,?[ \\t]*")
# A name just before the address on the same line: `Jane Doe, 12 rue de la Paix, 75002 Paris`; CJK text puts a
# full-width or an ideographic comma there.
_BEFORE_ADDRESS = "[ \\t\u3000]*(?:[,\uff0c\u3001]|[-\u2013])?[ \\t\u3000]*\\Z"
_NAME_BEFORE = re.compile(f"{_LABEL}(?P<name>{_LATIN_NAME}|{_CJK_NAME}){_BEFORE_ADDRESS}")
# Words that start a capitalised pair but never a person's name.
_NOT_NAMES = frozenset(
    {"the", "our", "your", "this", "office", "company", "address", "street", "invoice", "shipping", "billing"}
)
_WINDOW_LINES_BEFORE = 4
_WINDOW_CHARS = 320


class PostalAddressDetector:
    name = "postal_address"
    candidate_parts = (EUROPEAN_GATE, _UK_GATE)

    def detect(self, scan: ScanText) -> Iterator[Candidate]:
        text = scan.text
        found: list[tuple[int, int]] = []
        covered_to = -1
        anchors = _anchors(text, uk=may_occur(scan, _UK_GATE))
        for code_start, code_end, formats in sorted(anchors, key=lambda anchor: anchor[:2]):
            if code_start < covered_to:
                continue
            for start, end in _addresses_around(text, code_start, code_end, formats):
                span = _with_name(text, start, end, after=formats is _JP_FORMATS)
                if span is not None and span not in found:
                    found.append(span)
                    covered_to = max(covered_to, span[1])
        found.extend(_more_formats(scan, found))
        for start, end in sorted(found):
            yield Candidate(FindingType.POSTAL_ADDRESS, start, end, 0.85, self.name)


def _more_formats(scan: ScanText, found: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Addresses after an address label, and European and Asian formats with a person's name or with prose that
    says the address is someone's home ("I moved to ...", "...に引っ越しました")."""
    text = scan.text
    spans = list(labelled_addresses(scan))
    european = european_addresses(text) if may_occur(scan, EUROPEAN_GATE) else ()
    for start, end in [*european, *asian_addresses(text), *unnumbered_addresses(text, scan.lower)]:
        span = _with_name(text, start, end, after=True)
        if span is None and said_to_be_home(text, start, end):
            span = (start, end)
        if span is not None:
            spans.append(span)
    more: list[tuple[int, int]] = []
    for span in spans:
        if not any(span[0] < other[1] and other[0] < span[1] for other in [*found, *more]):
            more.append(span)
    return more


def _with_name(text: str, start: int, end: int, *, after: bool) -> tuple[int, int] | None:
    """The address with its person's name, or None. Japanese letters often put the name on the line after."""
    name_start = _name_start(text, start)
    if name_start is not None:
        return name_start, end
    if not after or not text.startswith("\n", end):
        return None
    next_end = text.find("\n", end + 1)
    next_line = _CJK_NAME_LINE.fullmatch(text, end + 1, len(text) if next_end < 0 else next_end)
    if next_line is None:
        return None
    return start, next_line.end("name")


def _anchors(text: str, *, uk: bool = True) -> Iterator[tuple[int, int, tuple[re.Pattern[str], ...]]]:
    """The postal codes in the text, each with the formats it can belong to (British ones only if `uk`)."""
    for match in _DIGIT_CODE.finditer(text):
        start, end = match.span()
        if _inside_longer_number(text, start):
            continue
        code = match.group()
        if "-" in code:
            yield start, end, _BR_FORMATS
        elif len(code) == 5:
            formats = _five_digit_formats(text, start, end)
            if formats:
                yield start, end, formats
        elif code[0] not in "09" and _could_be_indian(text, start):  # Indian PINs start 1 to 8
            yield start, end, _IN_FORMATS
    for match in _UK_INWARD.finditer(text) if uk else ():
        outward = _UK_OUTWARD.search(text, max(0, match.start() - 4), match.start())
        if outward is not None:
            yield outward.start(), match.end(), _UK_FORMATS
    start = text.find(_JP_MARK)
    while start >= 0:
        yield start, start + 1, _JP_FORMATS
        start = text.find(_JP_MARK, start + 1)


# What must surround a five-digit code for each format to be possible, checked on a few characters
# before the formats themselves run: most five-digit numbers (ports, ids, sizes in logs) fail both.
_CITY_AFTER_CODE = re.compile(f"\\s+[{_UPPER}]")
_SEPARATOR_BEFORE_CODE = re.compile(r"(?:,|\n)[ \t]*(?:D-\s?)?\Z")
_STATE_BEFORE_CODE = re.compile(f"(?<![A-Za-z])(?:{_US_STATES})\\s+\\Z")
_DE_FR_FORMATS = (_FIVE_DIGIT_FORMATS[0], _FIVE_DIGIT_FORMATS[1])
_US_FORMATS = (_FIVE_DIGIT_FORMATS[2],)


def _five_digit_formats(text: str, start: int, end: int) -> tuple[re.Pattern[str], ...]:
    """DE and FR put a separator before the code and the city after it; US puts the state before it."""
    before = text[max(0, start - 12) : start]
    if _STATE_BEFORE_CODE.search(before):
        return _US_FORMATS
    if _SEPARATOR_BEFORE_CODE.search(before) and _CITY_AFTER_CODE.match(text, end):
        return _DE_FR_FORMATS
    return ()


# An Indian address names its city right before the PIN and has a locality word a little before that.
_CITY_BEFORE_PIN = re.compile(
    f"[{_UPPER}][{_LOWER}{_UPPER}'.\\-]+(?:\\s*[,\\-\u2013]\\s*|\\s+)(?:PIN:?\\s*)?\\Z"
)
_INDIAN_LOCALITY = re.compile(
    r"(?i:road|rd\.|marg|nagar|street|lane|colony|sector|layout|cross|vihar|enclave|apartment|society|block|bagh"
    r"|puram|chowk)"
)


def _could_be_indian(text: str, start: int) -> bool:
    if not _CITY_BEFORE_PIN.search(text, max(0, start - 48), start):
        return False
    return _INDIAN_LOCALITY.search(text, max(0, start - _WINDOW_CHARS), start) is not None


def _inside_longer_number(text: str, start: int) -> bool:
    """`0123456`, `12-34567`; but `D-50667` is the old country prefix of a German code."""
    if start == 0:
        return False
    if text[start - 1] == "-":
        return start > 1 and text[start - 2].isdigit()
    return text[start - 1].isalnum()


def _addresses_around(
    text: str, anchor_start: int, anchor_end: int, formats: tuple[re.Pattern[str], ...]
) -> Iterator[tuple[int, int]]:
    """The addresses of any format in the few lines around a postal code that contain that code."""
    window_start = anchor_start
    for _ in range(_WINDOW_LINES_BEFORE):
        window_start = text.rfind("\n", max(0, anchor_start - _WINDOW_CHARS), max(0, window_start - 1)) + 1
        if window_start == 0:
            break
    window_start = max(window_start, anchor_start - _WINDOW_CHARS)
    line_end = text.find("\n", anchor_end)
    window_end = min(len(text) if line_end < 0 else line_end, anchor_end + 120)
    if text.startswith("〒", anchor_start):  # Japanese addresses put the block on the line after the code
        next_end = text.find("\n", window_end + 1)
        window_end = min(len(text) if next_end < 0 else next_end, anchor_end + 120)
    for pattern in formats:
        for match in pattern.finditer(text, window_start, window_end):
            if match.start() <= anchor_start < match.end():
                yield match.start(), match.end()


@cache
def _han_name_before() -> re.Pattern[str]:
    """A Chinese or Japanese name after its label and a colon, ASCII or full-width, just before the address
    (`收件人` then `李华`, then the address): Han names need no space between family and given name."""
    labels = literal_alternation(han_name_labels())
    return re.compile(
        f"(?:{labels})[ \\t\u3000]*[:\uff1a][ \\t\u3000]*(?P<name>[\u4e00-\u9fff]{{2,4}}){_BEFORE_ADDRESS}"
    )


def _name_start(text: str, start: int) -> int | None:
    """Where the person's name before the address starts: on the same line, or alone on the line above."""
    line_start = text.rfind("\n", 0, start) + 1
    before = text[line_start:start]
    if before.strip():
        same_line = _NAME_BEFORE.search(before) or _han_name_before().search(before)
        if same_line is None or not _is_name(same_line.group("name")):
            return None
        return line_start + same_line.start("name")
    if line_start == 0:
        return None
    previous_start = text.rfind("\n", 0, line_start - 1) + 1
    previous = _NAME_LINE.fullmatch(text, previous_start, line_start - 1)
    if previous is None or not _is_name(previous.group("name")):
        return None
    return previous.start("name")


def _is_name(name: str) -> bool:
    words = [word.strip(".,").lower() for word in name.split()]
    if not words or words[0] in _NOT_NAMES or any(word in _COMPANY_WORDS for word in words):
        return False
    capitals = [word for word in name.split() if word.strip(".,").lower() not in _PARTICLES]
    # Latin, Cyrillic and Greek names start each word with a capital; Han, kana and Hangul have no case
    cased = all(word[0].isupper() or word[0].lower() == word[0].upper() for word in capitals)
    return cased and not any(char.isdigit() for char in name)
