"""Phone numbers, validated by Google's libphonenumber (the `phonenumbers` port).

A cheap regex first finds digit groups shaped like a phone number; only those reach PhoneNumberMatcher, which
is slow but knows every region's numbering plan. Its VALID leniency, dates and versions excluded by shape,
and a requirement that a bare digit run (`4155552671`, which is also a build number or a timestamp) has a
phone word before it keep the false positives down. Numbers written in the familiar North American layout
but in an unassigned range (`(555) 123-4567`, common in examples) are still masked, with less confidence.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence

import phonenumbers

from .._types import FindingType
from ._base import Candidate, ScanText

__all__ = ["PhoneDetector"]

# One leading class and no look-behind at the start: CPython scans such a pattern quickly. The boundaries are
# checked in Python for the matches.
_CANDIDATE = re.compile(r"[+(0-9][0-9 ().\-\u00a0]{6,21}(?<=[0-9])")
_DATE_OR_TIME = re.compile(
    r"\d{4}[-./]\d{1,2}[-./]\d{1,2}|\d{1,2}[-./]\d{1,2}[-./]\d{2,4}(?!\d)|\d{1,2}[.:]\d{2}[.:]\d{2}"
)
_NON_DIGITS = re.compile(r"[^0-9]+")
_DOTTED_SHORT = re.compile(r"\d{1,3}(?:\.\d{1,3}){2,}")
_NANP_LAYOUT = re.compile(r"(?:\+?1[ .\-]?)?(?:\(\d{3}\)[ .\-]?|\d{3}[ .\-])\d{3}[ .\-]\d{4}")
_PHONE_WORDS = (
    "phone",
    "tel",
    "mobile",
    "cell",
    "call",
    "fax",
    "whatsapp",
    "signal",
    "sms",
    "text me",
    "contact",
    "reach",
    "dial",
    "ring",
    "handy",
    "mob",
    "☎",
    "📞",
)
_NOT_PHONE_WORDS = (
    "build",
    "version",
    "ver ",
    "release",
    " id",
    "id:",
    "id=",
    "pid",
    "port",
    "order",
    "invoice",
    "ticket",
    "ref",
    "serial",
    "sku",
    "isbn",
    "timestamp",
    "epoch",
    "size",
    "bytes",
    "commit",
    "job",
    "run ",
    "issue",
    "line",
    "page",
    "#",
    "seed",
    "offset",
    "count",
    "total",
    "amount",
    "price",
    "balance",
)
_CONTEXT_BEFORE = 32
_BOUNDARY_CHARS = frozenset("_.-/+:=#$")


class PhoneDetector:
    name = "phone"

    def __init__(self, regions: Sequence[str] = ("US", "GB")) -> None:
        self._regions = tuple(region.upper() for region in regions)

    def detect(self, scan: ScanText) -> Iterator[Candidate]:
        text = scan.text
        for match in _CANDIDATE.finditer(text):
            candidate = self._classify(scan, match.start(), match.end())
            if candidate is not None:
                yield candidate

    def _classify(self, scan: ScanText, start: int, end: int) -> Candidate | None:
        text = scan.text
        if start > 0 and (text[start - 1].isalnum() or text[start - 1] in _BOUNDARY_CHARS):
            return None
        if end < len(text) and (text[end].isalnum() or text[end] == "_"):
            return None
        raw = text[start:end]
        if raw.startswith("(") and ")" not in raw:
            start, raw = start + 1, raw[1:]
        if not (raw[0].isdigit() or raw[1].isdigit()):
            return None
        digits = len(_NON_DIGITS.sub("", raw))
        if not 7 <= digits <= 15 or _DATE_OR_TIME.match(raw) or _DOTTED_SHORT.fullmatch(raw):
            return None
        before = scan.lower[max(0, start - _CONTEXT_BEFORE) : start]
        has_phone_word = any(word in before for word in _PHONE_WORDS)
        if not has_phone_word and any(word in before for word in _NOT_PHONE_WORDS):
            return None
        formatted = digits != len(raw)
        if not formatted and not has_phone_word:
            return None
        span = self._validated_span(raw)
        if span is not None:
            return Candidate(
                FindingType.PHONE, start + span[0], start + span[1], 0.9 if has_phone_word else 0.8, self.name
            )
        if has_phone_word or _NANP_LAYOUT.fullmatch(raw):
            possible = self._validated_span(raw, leniency=phonenumbers.Leniency.POSSIBLE)
            if possible is not None:
                return Candidate(FindingType.PHONE, start + possible[0], start + possible[1], 0.6, self.name)
        return None

    def _validated_span(
        self, raw: str, leniency: int = phonenumbers.Leniency.VALID
    ) -> tuple[int, int] | None:
        for region in self._regions:
            for found in phonenumbers.PhoneNumberMatcher(raw, region, leniency=leniency):
                # The whole candidate must be the number: a phone inside a longer digit run is not one.
                if len(_NON_DIGITS.sub("", found.raw_string)) == len(_NON_DIGITS.sub("", raw)):
                    return found.start, found.end
        return None
