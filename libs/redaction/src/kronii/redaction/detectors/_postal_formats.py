# ruff: noqa: RUF001, RUF002  (colons and letters of other scripts are meant)
"""Postal address formats of European and Asian countries, from data/postal_formats.toml, for postal_address.py.

Three finders, each giving (start, end) spans of an address; postal_address.py decides which are a person's:
- `labelled_addresses`: the value of an address label ("Address:", "Anschrift:", "Адрес:", "地址：", "주소:") that
  reads as an address: a street word with a number, a postcode with its city, or an Asian address's divisions;
- `european_addresses`: a street with its number (a street word of any of the languages before or after the
  street's name) followed, on the same line after a comma or on the next line, by a postcode of any European
  shape and its city: `Via Roma 12, 00184 Roma`, `Kalverstraat 1\\n1012 AB Amsterdam`, `ul. Długa 5, 00-238 Warszawa`;
- `asian_addresses`: the divisions of Chinese, Taiwanese, Korean and Japanese addresses written without a postcode
  (province or city, district, road and number: `上海市浦东新区世纪大道100号`, `서울특별시 강남구 테헤란로 152`,
  `東京都千代田区丸の内1-9-2`).
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from importlib import resources

from ._base import CandidatePart, ScanText, literal_alternation
from ._fields import field_labels, reversed_labels

__all__ = ["asian_addresses", "european_addresses", "labelled_addresses", "said_to_be_home"]

_UPPER = "A-ZÀ-ÖØ-ÞĀ-ŽА-ЯЁΑ-Ω"
# A city: capitalised words, with the small words some city names hold (`Frankfurt am Main`, `Aix-en-Provence`).
_CITY = (
    f"[{_UPPER}][^\\W\\d_'’.\\-]*(?:[ \\-](?:[{_UPPER}][^\\W\\d_'’.\\-]*"
    "|am|an|der|im|sur|sous|en|le|la|les|de|del|di|du|des|upon|on|nad|pod)){0,4}"
)
_AFTER_SEPARATOR = re.compile("[ \\t]*[\"']?[ \\t]*")
# A URL, a hex number, an IP or a MAC address, or code (brackets, "=", a method call): not a postal address.
_NOT_POSTAL = re.compile(
    r"://|0x[0-9a-f]|[0-9]+\.[0-9]+\.[0-9]+\.[0-9]+|[0-9a-f]{2}(?::[0-9a-f]{2}){3}|[()\[\]{}=]|\w\.\w+\(",
    re.I,
)
_HAN = "\u4e00-\u9fff"
# A Han character of a place name: not one of the function words prose puts before an address (搬到了北京市).
_PLACE = "(?:(?![了的在到我你他她是和从從把被给給住搬往去来來])[\u4e00-\u9fff])"
_CN = (
    f"(?:{_PLACE}{{2,5}}(?:省|自治区|自治區))?{_PLACE}{{2,4}}(?:市|县|縣)(?:[{_HAN}]{{1,7}}(?:区|區|县|縣|镇|鎮))?"
    f"[{_HAN}0-9]{{0,20}}?(?:路|街|道|巷|弄)(?:[一二三四五六七八九十0-9]+段)?(?:[0-9]+[巷弄])*[0-9]+(?:-[0-9]+)?[号號]"
    f"(?:[0-9{_HAN}\\-]{{0,12}}?(?:室|楼|樓|层|層))?"
)
_KR = (
    r"(?:[가-힣]{1,10}(?:특별시|광역시|특별자치시|특별자치도|시|도)\s)?[가-힣]{1,10}(?:시|군|구)\s(?:[가-힣]{1,10}(?:구|읍|면)\s)?"
    r"[가-힣0-9]{1,15}(?:로|길)\s?[0-9]{1,5}(?:-[0-9]{1,5})?(?:,?\s?[0-9]{1,5}동\s?[0-9]{1,5}호)?"
)
_JP = (
    f"(?:東京都|北海道|大阪府|京都府|[{_HAN}]{{2,3}}県)[{_HAN}\u3040-\u30ff]{{1,8}}?(?:市|区|町|村|郡)"
    f"[{_HAN}\u3040-\u30ff]{{0,12}}?[0-9０-９一二三四五六七八九十]+(?:丁目|番地|番|号|[-－])[0-9０-９\\-－番号地]*"
)
_ASIAN = re.compile(f"{_CN}|{_KR}|{_JP}")
_ASIAN_MARK = re.compile("[省市县縣区區都道府県号號구군시도로길丁番]")


# The postcode of a street address opens its line or follows a comma: this scan opens with those two characters,
# so `re` skips from one to the next in C. The exact shape (data/postal_formats.toml) is checked on the matches.
_CODE_BEFORE_CITY = (
    r"[\n,][ \t]*(?P<code>(?:[A-Z]{1,2}-)?[0-9](?:[0-9]{3} ?[A-Z]{2}|[0-9]{3}-[0-9]{3}|[0-9]-[0-9]{3}"
    r"|[0-9]{2} [0-9]{2}|[0-9]{3,5}))[ \t]+"
)
_CODE_THEN_WORD = re.compile(_CODE_BEFORE_CITY + _CITY)
# For the compiled scan: a code and the first letter of its city, without which `european_addresses` finds none.
EUROPEAN_GATE = CandidatePart(
    "postal_address.european", (_CODE_BEFORE_CITY.replace("?P<code>", "") + f"[{_UPPER}]",), unicode=True
)


@dataclass(frozen=True)
class _Formats:
    postcode_city: re.Pattern[str]
    street: re.Pattern[str]
    labels: re.Pattern[str]  # for field_labels
    prose: re.Pattern[str]
    division: re.Pattern[str]  # in lower case: a division's word as a word of its own ("quận", "kec.")
    comma_street: re.Pattern[str]  # in lower case: a comma, then a house number or a street word


@cache
def _formats() -> _Formats:
    raw = tomllib.loads(
        resources.files("kronii.redaction").joinpath("data", "postal_formats.toml").read_text("utf-8")
    )
    shapes = "|".join(raw["postcodes"].values())
    before = literal_alternation(raw["streets"]["before"])
    after = literal_alternation(raw["streets"]["after"])
    endings = literal_alternation(raw["streets"]["endings"])
    return _Formats(
        postcode_city=re.compile(f"(?:{shapes})[ \\t]+{_CITY}"),
        # In lower case: a street word before or after a name, or the ending of a one-word street name.
        street=re.compile(
            f"(?<![^\\W\\d_])(?:(?P<before>{before})[ \\t]|(?P<after>{after})(?![^\\W\\d_]))"
            f"|[^\\W\\d_](?P<ending>{endings})(?![^\\W\\d_])"
        ),
        labels=reversed_labels(raw["labels"]["words"]),
        prose=re.compile(literal_alternation(raw["prose"]["words"])),
        # "," first, a literal: `re` jumps from comma to comma in C
        comma_street=re.compile(f",[ \\t]*(?=[0-9]|(?:{before})[ \\t])"),
        division=re.compile(
            f"(?<![^\\W\\d_])(?:{literal_alternation(raw['divisions']['words'])})(?=[ \\t]|\\Z)"
        ),
    )


def _has_street(value: str) -> bool:
    """A street word and a house number in `value`."""
    return any(char.isdigit() for char in value) and _formats().street.search(value.lower()) is not None


def labelled_addresses(scan: ScanText) -> Iterator[tuple[int, int]]:
    """The values of address labels that read as addresses; a value may go on to a postcode line below it."""
    text, lower = scan.text, scan.lower
    for label_start, separator_end in field_labels(scan, _formats().labels):
        line_start = lower.rfind("\n", 0, label_start) + 1
        if lower[line_start:label_start].strip(" \t\"'{,;-*>"):
            continue  # the label must open its field: "IP address:" is no postal label
        value = _AFTER_SEPARATOR.match(text, separator_end)
        start = value.end() if value else separator_end
        end = _value_end(text, start)
        if end - start >= 8 and _reads_as_address(text[start:end]):
            yield start, _with_postcode_line(text, end)


def _value_end(text: str, start: int) -> int:
    line_end = text.find("\n", start)
    end = len(text) if line_end < 0 else line_end
    while end > start and text[end - 1] in " \t\r\"',;}":
        end -= 1
    return end


# After an address label, a value of several words holding a number of four to six digits (in any script's
# digits: `पुणे 411038`, `কলকাতা ৭০০০২৯`, `กรุงเทพฯ 10110`) is read as an address whose street words are not listed.
_POSTCODE_ANYWHERE = re.compile(r"(?<!\d)\d{4,6}(?!\d)")


def _reads_as_address(value: str) -> bool:
    if _NOT_POSTAL.search(value):
        return False
    if _has_street(value) or _formats().postcode_city.search(value):
        return True
    if len(value.split()) >= 3 and _POSTCODE_ANYWHERE.search(value):
        return True
    return _ASIAN.search(value) is not None


def _with_postcode_line(text: str, end: int) -> int:
    """`Address: Kalverstraat 1` followed by a line `1012 AB Amsterdam`: the address ends with that line."""
    if not text.startswith("\n", end):
        return end
    match = _formats().postcode_city.match(text, end + 1)
    if match is None or _value_end(text, end + 1) != match.end():
        return end
    return match.end()


def european_addresses(text: str) -> Iterator[tuple[int, int]]:
    """A street and number, then (after a comma or a line break) a postcode and its city."""
    for start, end in _postcodes_with_city(text):
        street_start = _street_before(text, start)
        if street_start is not None:
            yield street_start, _city_end(text, start, end)


def _postcodes_with_city(text: str) -> Iterator[tuple[int, int]]:
    """(start, end) of each postcode of a listed shape followed by a city, a country prefix included."""
    for match in _CODE_THEN_WORD.finditer(text):
        start = match.start("code")
        if _is_code(text, start, match.end()):
            yield start, match.end()


def _is_code(text: str, start: int, end: int) -> bool:
    """Whether a listed postcode shape and a city make up text[start:end] (codes may hold a space: `111 22`)."""
    match = _formats().postcode_city.match(text, start, end)
    return match is not None and match.end() == end


def _city_end(text: str, postcode: int, end: int) -> int:
    """The city ends the line or a comma ends it: `00184 Roma, Italia` keeps `, Italia` out."""
    comma = text.find(",", postcode, end)
    return end if comma < 0 else comma


def _street_before(text: str, postcode: int) -> int | None:
    """Where the street part before a postcode starts: in the one or two comma-separated parts before it on its
    line (`Calle de Toledo 42, 3º B, 28005 Madrid`), or on the line above when the postcode opens its line."""
    line_start = text.rfind("\n", 0, postcode) + 1
    before = text[line_start:postcode].rstrip(" \t")
    if before:
        if not before.endswith(","):
            return None
        part_end = len(before) - 1
        for _ in range(2):
            part_start = before.rfind(",", 0, part_end) + 1
            offset = _street_start(before[part_start:part_end])
            if offset is not None:
                return line_start + part_start + offset
            part_end = part_start - 1
            if part_end < 0:
                break
        return None
    if line_start == 0:
        return None
    previous_start = text.rfind("\n", 0, line_start - 1) + 1
    previous = text[previous_start : line_start - 1]
    part_start = (
        previous.rfind(",") + 1 if previous.count(",") and not _has_street(previous.split(",")[0]) else 0
    )
    part = previous[part_start:]
    if not _has_street(part) or len(part.strip()) > 60:
        return None
    return previous_start + part_start + (len(part) - len(part.lstrip()))


_NUMBER_BEFORE = re.compile(r"[0-9]+[^\W_]*(?:[ \t]+(?:bis|ter))?,?[ \t]+\Z")
_WORDS_BEFORE = re.compile(r"(?:[0-9]+[^\W_]*[ \t]+)?(?:[A-ZÀ-ÞĀ-ŽА-ЯЁΑ-Ω][\w'’.\-]*[ \t]+){1,3}\Z")


def _street_start(part: str) -> int | None:
    """Where the street starts in `part` (a house number before it included), when `part` holds a street and a
    number: prose before it (`I moved to 8 bis avenue Jean Jaurès`) is left out."""
    if not any(char.isdigit() for char in part):
        return None
    street = _formats().street.search(part.lower())
    if street is None:
        return None
    if street.group("before") is not None:
        start = street.start("before")
        number = _NUMBER_BEFORE.search(part, 0, start)
        return number.start() if number else start
    if street.group("after") is not None:
        words = _WORDS_BEFORE.search(part, 0, street.start("after"))
        return words.start() if words else street.start("after")
    word_start = (
        max(part.rfind(" ", 0, street.start("ending")), part.rfind("\t", 0, street.start("ending"))) + 1
    )
    number = _NUMBER_BEFORE.search(part, 0, word_start)
    return number.start() if number else word_start


def asian_addresses(text: str) -> Iterator[tuple[int, int]]:
    """Chinese, Taiwanese, Korean and Japanese addresses by their divisions, road and number."""
    if text.isascii():
        return
    # Tried only around the division and road marks (市, 区, 都, 구, 로, 号, 番...), rare in other text: the
    # pattern itself opens with no literal, so run over the whole text it would be tried at every character.
    covered = 0
    for mark in _ASIAN_MARK.finditer(text):
        if mark.start() < covered:
            continue
        match = _ASIAN.search(text, max(covered, mark.start() - 24), min(len(text), mark.end() + 64))
        if match is not None:
            covered = match.end()
            yield match.span()


_PROSE_WINDOW = 48


def said_to_be_home(text: str, start: int, end: int) -> bool:
    """Whether prose on the address's line, a few words before or after it, says it is someone's home."""
    line_start = text.rfind("\n", 0, start) + 1
    line_end = text.find("\n", end)
    before = text[max(line_start, start - _PROSE_WINDOW) : start].lower()
    after = text[end : min(len(text) if line_end < 0 else line_end, end + _PROSE_WINDOW)].lower()
    prose = _formats().prose
    return prose.search(before) is not None or prose.search(after) is not None


# A street without a postcode: a house number and capitalised words ("123 Lê Lợi"), or capitalised words and a
# number ("ul. Tverskaya 7", "Jl. Sudirman No. 5"), then two to five more parts after commas, on one line.
_PART = "[^,\\n]{1,40}"
_UNCODED = re.compile(
    f"(?:[0-9]+[A-Za-z]?[ \\t]+{_PART}|[^\\W\\d_][^,\\n]{{0,30}}[ \\t][0-9]+[A-Za-z]?)(?:[ \\t]*,[ \\t]*{_PART}){{1,5}}"
)
_PART_START = re.compile("(?:^|(?<=,))[ \\t]*")


def unnumbered_addresses(text: str, lower: str) -> Iterator[tuple[int, int]]:
    """Addresses without a postcode, as much of the world writes them: after a comma, a street (a street word and
    a number, or a house number and capitalised words with an administrative division among the parts after it:
    "Quận 1", "Kec. Menteng", "г. Москва"), then more parts after commas, on one line. The caller keeps those
    with a person's name before them."""
    formats = _formats()
    for opening in formats.comma_street.finditer(lower):
        start = opening.end()
        line_end = text.find("\n", start)
        match = _UNCODED.match(text, start, len(text) if line_end < 0 else line_end)
        if match is None:
            continue
        first_part = match.group().split(",")[0]
        by_word = formats.street.match(first_part.lower()) is not None
        if by_word or (_numbered_street(first_part) and formats.division.search(lower, start, match.end())):
            end = match.end()
            while end > start and text[end - 1] in " \t.;":
                end -= 1
            yield start, end


def _numbered_street(part: str) -> bool:
    """A house number, then words that all start with a capital ("123 Lê Lợi"; not "5 items")."""
    words = part.split()
    return len(words) >= 2 and words[0][:1].isdigit() and all(word[:1].isupper() for word in words[1:])
