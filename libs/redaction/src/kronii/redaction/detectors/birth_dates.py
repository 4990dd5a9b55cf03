"""Dates of birth: a real calendar date just after a birth word on the same line, or just before one of the
words that follow their date.

A date alone is an ordinary date (an invoice, a log line) and stays; so does a birth year alone ("born in
1985"), which says too little to single anyone out. The words are data (data/lexicons/birth_words.toml: "date of
birth", "born", first-person forms and table-column stems in 44 languages, in their scripts), and so are the
month names (data/lexicons/months.toml, from glibc's CLDR-based locale tables). Formats: ISO `1985-03-12`,
`12/03/1985` and `03/12/1985` (either reading must be a real date), `12.03.1985`, `12-03-1985`, two-digit
years; a day, a month name and a year in either order, with the language's filler words (`12 March 1985`,
`March 12, 1985`, `12 de marzo de 1985`, `14. März 1990`, `12 марта 1985`, `ngày 12 tháng 3 năm 1985`,
`1985. március 12.`); CJK `1985年3月12日` and `1985년 3월 12일`; Thai Buddhist-era years (`12 มีนาคม 2528`).
Dates in a table column whose header holds a birth word are masked too.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from datetime import date
from functools import cache

from .._types import FindingType
from ._base import Candidate, ScanText, line_local_findings, literal_alternation
from ._keywords import LexiconWord, birth_words, lexicon_hits, lexicon_lower, month_names
from ._tables import column_cells

__all__ = ["BirthDateDetector"]

_WINDOW = 40
_GAP = 16  # between a date and a birth word after it: "에 ", " tarihinde ", "に"
_YEAR = r"(?:(?:18|19|20)[0-9]{2}|25[0-9]{2})"  # 25xx: a Thai date's Buddhist-era year


@cache
def _date_pattern() -> re.Pattern[str]:
    """Numeric dates, dates with a month name of any language of data/lexicons/months.toml, and CJK dates."""
    month = "(?P<mname>" + literal_alternation(month_names()) + r")\.?"
    fillers = sorted(
        {filler for entry in birth_words().values() for filler in entry.fillers}, key=len, reverse=True
    )
    filler = "(?:(?:" + "|".join(re.escape(word) for word in fillers) + ") )?" if fillers else ""
    return re.compile(
        r"(?P<iso>(?P<iy>(?:18|19|20)[0-9]{2})[-/.](?P<im>[0-9]{1,2})[-/.](?P<id>[0-9]{1,2}))"
        r"|(?P<cjk>(?P<cy>"
        + _YEAR
        + r")\s*[年년]\s*(?P<cm>[0-9]{1,2})\s*[月월]\s*(?P<cd>[0-9]{1,2})(?![0-9])(?:\s*[日일])?)"
        r"|(?P<num>(?P<a>[0-9]{1,2})(?P<sep>[-/.])(?P<b>[0-9]{1,2})(?P=sep)(?P<ny>(?:18|19|20)?[0-9]{2}))"
        r"|(?P<dm>(?P<dd>[0-9]{1,2})(?:st|nd|rd|th|er|º|\.)? "
        + filler
        + month.replace("mname", "m1")
        + r",? "
        + filler
        + r"(?P<dy>"
        + _YEAR
        + r"))"
        r"|(?P<ymd>(?P<ymd_y>"
        + _YEAR
        + r")\.? "
        + month.replace("mname", "m3")
        + r" (?P<ymd_d>[0-9]{1,2})(?![0-9]))"
        r"|(?P<md>"
        + month.replace("mname", "m2")
        + r" (?P<md_d>[0-9]{1,2})(?:st|nd|rd|th)?,? (?P<md_y>"
        + _YEAR
        + r"))"
    )


def _real(year: int, month: int, day: int) -> bool:
    try:
        date(year, month, day)
    except ValueError:
        return False
    return True


def _full_year(text: str) -> int:
    year = int(text)
    if len(text) == 2:  # a two-digit birth year: this century only when it is not in the future
        year += 2000 if year <= date.today().year % 100 else 1900
    return year


def _era(year: str) -> int:
    """A year as the Gregorian calendar counts it: a Buddhist-era year (Thai dates) is 543 ahead."""
    return int(year) - 543 if year.startswith("25") else int(year)


def _valid(match: re.Match[str]) -> bool:
    months = month_names()
    if match.group("cjk"):
        return _real(_era(match.group("cy")), int(match.group("cm")), int(match.group("cd")))
    if match.group("iso"):
        return _real(int(match.group("iy")), int(match.group("im")), int(match.group("id")))
    if match.group("num"):
        year, first, second = _full_year(match.group("ny")), int(match.group("a")), int(match.group("b"))
        return _real(year, second, first) or _real(year, first, second)  # day first or month first
    if match.group("dm"):
        return _real(_era(match.group("dy")), months[match.group("m1")], int(match.group("dd")))
    if match.group("ymd"):  # Hungarian, Lithuanian: "1985. március 12."
        return _real(_era(match.group("ymd_y")), months[match.group("m3")], int(match.group("ymd_d")))
    return _real(_era(match.group("md_y")), months[match.group("m2")], int(match.group("md_d")))


class BirthDateDetector:
    name = "birth_dates"
    # No `anchors`: birth words in other scripts cannot be ASCII anchors; the lexicon pass is shared.

    def detect(self, scan: ScanText) -> Iterator[Candidate]:
        found: set[int] = set()
        # Line-local: a date is looked for after its word up to the line's end, and the characters read
        # around the word and the date are on the line or are the newline, which passes as the text's edge.
        for candidate in line_local_findings(scan, self._after_words):
            found.add(candidate.start)
            yield candidate
        yield from self._table_cells(scan, found)

    def _after_words(self, scan: ScanText) -> Iterator[Candidate]:
        lower = lexicon_lower(scan)
        words = birth_words()
        searched_until = 0
        for word_start, word_end, word in lexicon_hits(scan):
            entry = words.get(word)
            if (
                entry is None
                or entry.concept == "column"
                or not _stands_alone(lower, word_start, word_end, entry)
            ):
                continue
            match = None
            if entry.concept != "after":
                match = _date_before(
                    lower, word_start, max(searched_until, lower.rfind("\n", 0, word_start) + 1)
                )
            if match is None and entry.concept != "before" and word_end > searched_until:
                line_end = lower.find("\n", word_end)
                limit = min(word_end + _WINDOW, len(lower) if line_end < 0 else line_end)
                # Dates are matched in the lowered text: month names may be capitalised.
                match = _date_pattern().search(lower, word_end, limit)
                searched_until = word_end if match is None else match.end()
            if match is not None and not _glued(lower, match.start(), match.end()) and _valid(match):
                searched_until = max(searched_until, match.end())
                yield Candidate(FindingType.DATE_OF_BIRTH, match.start(), match.end(), 0.85, self.name)

    def _table_cells(self, scan: ScanText, found: set[int]) -> Iterator[Candidate]:
        """Dates in a table column whose header holds a birth word (`date_of_birth`, `nascimento`, `dob`)."""
        lower = lexicon_lower(scan)
        words = birth_words()
        for header_start, header_end, word in lexicon_hits(scan):
            if word not in words or (len(word) < 4 and _inside_word(lower, header_start, header_end)):
                continue  # `dob` in a header, not in `adobe`; `ur.` not in `your.`
            for start, end in column_cells(lower, header_start):
                match = _date_pattern().search(lower, start, end)
                if match is None or match.start() in found or _glued(lower, match.start(), match.end()):
                    continue
                if _valid(match):
                    found.add(match.start())
                    yield Candidate(FindingType.DATE_OF_BIRTH, match.start(), match.end(), 0.8, self.name)


def _glued(text: str, start: int, end: int) -> bool:
    """Part of a longer number or word. Scripts written without spaces run into their dates: in
    "我出生于1968年7月26日" the letter before the date is not part of it."""
    before = text[start - 1] if start > 0 else " "
    after = text[end] if end < len(text) else " "
    joined = before.isdigit() or (before.isalpha() and before < "\u0250")
    return joined or after.isdigit() or (after in "-/.:" and text[end + 1 : end + 2].isdigit())


def _date_before(lower: str, word_start: int, floor: int) -> re.Match[str] | None:
    """The last date that ends at most _GAP characters before a word that follows its date (`1997年7月26日
    生まれ`, `18 Temmuz 1967 tarihinde doğdum`), on the word's line and after what was already read."""
    last = None
    for match in _date_pattern().finditer(lower, max(floor, word_start - _WINDOW), word_start):
        last = match
    return last if last is not None and word_start - last.end() <= _GAP else None


def _inside_word(lower: str, start: int, end: int) -> bool:
    return lower[start - 1 : start].isalpha() or lower[end : end + 1].isalpha()


def _stands_alone(lower: str, start: int, end: int, entry: LexiconWord) -> bool:
    """Not inside a longer word (`born2run`, `reborn`), where the word's script separates words at all."""
    before = lower[start - 1] if start > 0 else " "
    after = lower[end] if end < len(lower) else " "
    if entry.boundary == "none" and not lower[start].isascii():
        return True
    if before.isalnum() and (lower[start].isascii() or entry.boundary != "none"):
        return False
    return entry.boundary == "suffix" or not (after.isalnum() and lower[end - 1].isalnum())
