"""Dates of birth: a real calendar date just after a birth word, on the same line.

A date alone is an ordinary date (an invoice, a log line) and stays; so does a birth year alone ("born in
1985"), which says too little to single anyone out. Words: DOB, date of birth, birth date, birthday, born
(on), né(e) le, date de naissance, Geburtsdatum, geb., geboren (am), fecha de nacimiento, data de nascimento,
nascido/a em, data di nascita, nato/a il, geboortedatum, data urodzenia, and field names such as `dob=`,
`birth_date`, `dateOfBirth`. Formats: ISO `1985-03-12`, `12/03/1985` and `03/12/1985` (either reading must
be a real date), `12.03.1985`, `12-03-1985`, two-digit years, and month names in English, French, German,
Spanish, Portuguese and Italian (`12 March 1985`, `March 12, 1985`, `12 de marzo de 1985`, `14. März 1990`).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from datetime import date

from .._types import FindingType
from ._base import Candidate, ScanText, line_local_findings
from ._tables import column_cells

__all__ = ["BirthDateDetector"]

_WINDOW = 40
_BIRTH_WORDS = re.compile(
    r"(?:d\.?o\.?b|date[ _]?of[ _]?birth|birth[ _-]?(?:date|day)|dateofbirth|born(?: on)?|"
    r"n[ée]e? le|date de naissance|geburtsdatum|geb\.|geboren(?: am)?|fecha de nacimiento|"
    r"data de nascimento|nascid[oa] em|data di nascita|nat[oa] il|geboortedatum|data urodzenia|f\. nac\.?)(?![a-z0-9])"
)
# Column names: shorter stems will do, since the column holds dates anyway.
_BIRTH_HEADER = re.compile(
    r"birth|dob(?![a-z])|nascimento|naissance|geburt|nacimiento|nascita|urodzeni|geboorte"
)
# Month names (lower case, accents and common abbreviations), mapped to their number.
_MONTHS = {
    **dict.fromkeys(("january", "jan", "janvier", "januar", "jänner", "enero", "janeiro", "gennaio"), 1),
    **dict.fromkeys(
        ("february", "feb", "février", "fevrier", "februar", "febrero", "fevereiro", "febbraio"), 2
    ),
    **dict.fromkeys(("march", "mar", "mars", "märz", "marz", "marzo", "março", "marco"), 3),
    **dict.fromkeys(("april", "apr", "avril", "abril", "aprile"), 4),
    **dict.fromkeys(("may", "mai", "mayo", "maio", "maggio"), 5),
    **dict.fromkeys(("june", "jun", "juin", "juni", "junio", "junho", "giugno"), 6),
    **dict.fromkeys(("july", "jul", "juillet", "juli", "julio", "julho", "luglio"), 7),
    **dict.fromkeys(("august", "aug", "août", "aout", "agosto"), 8),
    **dict.fromkeys(("september", "sep", "sept", "septembre", "septiembre", "setembro", "settembre"), 9),
    **dict.fromkeys(("october", "oct", "octobre", "oktober", "okt", "octubre", "outubro", "ottobre"), 10),
    **dict.fromkeys(("november", "nov", "novembre", "noviembre", "novembro"), 11),
    **dict.fromkeys(
        ("december", "dec", "décembre", "decembre", "dezember", "dez", "diciembre", "dezembro", "dicembre"),
        12,
    ),
}
_MONTH = "(?P<mname>" + "|".join(sorted(_MONTHS, key=len, reverse=True)) + r")\.?"
_DATE = re.compile(
    r"(?P<iso>(?P<iy>(?:18|19|20)[0-9]{2})[-/.](?P<im>[0-9]{1,2})[-/.](?P<id>[0-9]{1,2}))"
    r"|(?P<num>(?P<a>[0-9]{1,2})(?P<sep>[-/.])(?P<b>[0-9]{1,2})(?P=sep)(?P<ny>(?:18|19|20)?[0-9]{2}))"
    r"|(?P<dm>(?P<dd>[0-9]{1,2})(?:st|nd|rd|th|er|º|\.)? (?:de )?"
    + _MONTH.replace("mname", "m1")
    + r",? (?:de )?(?P<dy>(?:18|19|20)[0-9]{2}))"
    r"|(?P<md>"
    + _MONTH.replace("mname", "m2")
    + r" (?P<md_d>[0-9]{1,2})(?:st|nd|rd|th)?,? (?P<md_y>(?:18|19|20)[0-9]{2}))"
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


def _valid(match: re.Match[str]) -> bool:
    if match.group("iso"):
        return _real(int(match.group("iy")), int(match.group("im")), int(match.group("id")))
    if match.group("num"):
        year, first, second = _full_year(match.group("ny")), int(match.group("a")), int(match.group("b"))
        return _real(year, second, first) or _real(year, first, second)  # day first or month first
    if match.group("dm"):
        return _real(int(match.group("dy")), _MONTHS[match.group("m1")], int(match.group("dd")))
    return _real(int(match.group("md_y")), _MONTHS[match.group("m2")], int(match.group("md_d")))


class BirthDateDetector:
    name = "birth_dates"
    # A literal inside each birth word and column name ("geb" for geb., geboren, Geburtsdatum, geboortedatum;
    # " le" for né le, whose accent the filter cannot hold).
    anchors = (
        "dob", "d.o.b", "d.ob", "do.b", "birth", "born", " le", "naissance", "geb", "nacimiento", "nasc",
        "nato il", "nata il", "urodzeni", "f. nac",
    )  # fmt: skip

    def detect(self, scan: ScanText) -> Iterator[Candidate]:
        found: set[int] = set()
        # Line-local: a date is looked for after its word up to the line's end, and the characters read
        # around the word and the date are on the line or are the newline, which passes as the text's edge.
        for candidate in line_local_findings(scan, self._after_words):
            found.add(candidate.start)
            yield candidate
        yield from self._table_cells(scan.lower, found)

    def _after_words(self, scan: ScanText) -> Iterator[Candidate]:
        lower = scan.lower
        for word in _BIRTH_WORDS.finditer(lower):
            if word.start() > 0 and lower[word.start() - 1].isalnum():
                continue  # inside a longer word; checked here, as a leading lookbehind slows the scan
            line_end = lower.find("\n", word.end())
            limit = min(word.end() + _WINDOW, len(lower) if line_end < 0 else line_end)
            # Dates are matched in the lowered text: month names may be capitalised.
            match = _DATE.search(lower, word.end(), limit)
            if match is not None and not _glued(lower, match.start(), match.end()) and _valid(match):
                yield Candidate(FindingType.DATE_OF_BIRTH, match.start(), match.end(), 0.85, self.name)

    def _table_cells(self, lower: str, found: set[int]) -> Iterator[Candidate]:
        """Dates in a table column whose header names birth (`date_of_birth`, `nascimento`, `dob`)."""
        for header in _BIRTH_HEADER.finditer(lower):
            for start, end in column_cells(lower, header.start()):
                match = _DATE.search(lower, start, end)
                if match is None or match.start() in found or _glued(lower, match.start(), match.end()):
                    continue
                if _valid(match):
                    found.add(match.start())
                    yield Candidate(FindingType.DATE_OF_BIRTH, match.start(), match.end(), 0.8, self.name)


def _glued(text: str, start: int, end: int) -> bool:
    before = text[start - 1] if start > 0 else " "
    after = text[end] if end < len(text) else " "
    return before.isalnum() or after.isdigit() or (after in "-/.:" and text[end + 1 : end + 2].isdigit())
