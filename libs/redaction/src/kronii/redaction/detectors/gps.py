"""GPS coordinates: where a person is, lives or was.

No library finds coordinates in free text, so this detector is the engine's own. It reads:
- degrees, minutes and seconds with hemispheres (`40°26'46"N 79°58'56"W`), and decimal degrees with a degree
  sign or a hemisphere (`48.8584° N, 2.2945° E`): written that way, nothing else is meant;
- geo URIs (RFC 5870: `geo:48.8584,2.2945`) and map links (`maps?q=48.85,2.29`, `/@48.85,2.29,17z`, `ll=`);
- a latitude and a longitude each after its label, in either order, within a few words or on the next line
  (`{"lat": 52.52, "lng": 13.405}`, `lat=52.52&lon=13.405`, `Lat 52.5200, Lon 13.4050`, YAML's `latitude:` then
  `longitude:`): the two values are masked, the labels stay;
- a pair of decimal numbers in range (latitude within 90, longitude within 180): with five decimals or more each
  (a phone's or a map's precision, about a metre) it is masked as it stands; with three or more only after a
  word that announces a place ("GPS", "location", "Standort", "坐标", "موقعیت": data/context_words.toml).
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterator

from .._types import FindingType
from ._base import ANY_DIGIT, Candidate, CandidatePart, ScanText, line_local_findings
from ._context_words import announced_before

__all__ = ["GpsDetector"]

_DEGREES = r"\d{1,3}(?:[.,]\d+)?\s?°\s?(?:\d{1,2}(?:[.,]\d+)?\s?['\u2032\u2019]\s?(?:\d{1,2}(?:[.,]\d+)?\s?(?:\"|\u2033|\'\'|\u201d)?)?)?\s?[NSEWO]"
_SIGNED_DEGREES = r"[-+\u2212]?\d{1,3}(?:[.,]\d+)?\s?°"
_WITH_DEGREES = re.compile(
    rf"(?:{_DEGREES}|{_SIGNED_DEGREES})(?:\s?[,;/]?\s?(?:{_DEGREES}|{_SIGNED_DEGREES}))?"
)
_LINK_ANCHORS = ("geo:", "q=", "ll=", "query=", "center=", "destination=", "daddr=", "saddr=", "lat=", "/@")
_LINKED = re.compile(
    r"(?:geo:|[?&](?:q|ll|sll|query|center|destination|daddr|saddr|mlat|lat)=|/@)"
    r"(?P<pair>-?\d{1,2}\.\d+,\s?-?\d{1,3}\.\d+)"
)
# Two decimal numbers, or two with hemispheres (`48.8584 N, 2.2945 E`), in one scan. Opens on a digit (a plain
# class the scan skips to in C); what stands before it is checked in Python.
_PAIR = re.compile(
    r"(\d{1,3}\.(\d{3,}))(?:\s?(?P<north>[NS]),?\s+|\s?[,;/ ]\s?)(-?\d{1,3}\.(\d{3,}))(?:\s?(?P<east>[EWO])\b)?(?![\w.])"
)
_PRECISE = 5


def _in_range(latitude: str, longitude: str) -> bool:
    lat, lon = float(latitude), float(longitude)
    return abs(lat) <= 90 and abs(lon) <= 180 and not (abs(lat) < 1 and abs(lon) < 1)


_NUMBER_BEFORE = re.compile(r"\d\s?[,;/]\s?$")
_NUMBER_AFTER = re.compile(r"\s?[,;/]\s?[-+]?\d")


def _in_a_row_of_numbers(text: str, start: int, end: int) -> bool:
    return bool(_NUMBER_BEFORE.search(text, max(0, start - 4), start) or _NUMBER_AFTER.match(text, end))


# For the compiled scan: a degree sign, a link's number, or a decimal with three places (every pair has two).
_D = ANY_DIGIT  # Python's `\d` reads every script's digits
_CANDIDATES = CandidatePart("gps", ("\u00b0", rf"(?:geo:|=|/@)-?{_D}{{1,2}}\.{_D}", rf"{_D}\.{_D}{{3}}"))


class GpsDetector:
    name = "gps"
    candidate_parts = (_CANDIDATES,)

    def detect(self, scan: ScanText) -> Iterator[Candidate]:
        yield from line_local_findings(scan, self._find, _CANDIDATES)
        yield from _labelled_pairs(scan, self.name)

    def _find(self, scan: ScanText) -> Iterator[Candidate]:
        text = scan.text
        if "°" in text:
            for match in _WITH_DEGREES.finditer(text):
                if any(char.isdigit() for char in match.group()):
                    yield Candidate(FindingType.GPS_COORDINATES, *match.span(), 0.85, self.name)
        if scan.lower_contains_any(_LINK_ANCHORS):
            for match in _LINKED.finditer(text):
                yield Candidate(FindingType.GPS_COORDINATES, *match.span("pair"), 0.85, self.name)
        for match in _PAIR.finditer(text):
            found = self._pair(scan, match)
            if found is not None:
                yield found

    def _pair(self, scan: ScanText, match: re.Match[str]) -> Candidate | None:
        """Two decimals: with both hemispheres a place as written; else in range, and precise (not inside a
        row of numbers) or after a place word."""
        text = scan.text
        start = match.start()
        if start > 0 and text[start - 1] == "-":
            start -= 1  # a southern latitude
        if start > 0 and (text[start - 1].isalnum() or text[start - 1] in "_.-"):
            return None
        latitude, lat_decimals, north, longitude, lon_decimals, east = match.groups()
        if north and east:
            return Candidate(FindingType.GPS_COORDINATES, start, match.end(), 0.85, self.name)
        latitude = text[start : match.start(1)] + latitude
        if north or east or not _in_range(latitude, longitude):
            return None
        precise = len(lat_decimals) >= _PRECISE and len(lon_decimals) >= _PRECISE
        if precise and not _in_a_row_of_numbers(text, start, match.end()):
            return Candidate(FindingType.GPS_COORDINATES, start, match.end(), 0.8, self.name)
        if announced_before(scan, "GPS_COORDINATES", start):
            return Candidate(FindingType.GPS_COORDINATES, start, match.end(), 0.8, self.name)
        return None


# A value after its label: `lat`, `latitude`, `lon`, `lng`, `long`, `longitude` (a JSON key, a query parameter, a
# YAML key, prose), with two decimals or more. Read in the lower-case view, which keeps every offset.
_LABELLED = re.compile(
    r"(?P<label>lat(?:itude)?|lon(?:gitude)?|lng|long)(?![a-z])[\"']?[ \t]*[:=]?[ \t]*[\"']?"
    r"(?P<value>[-+]?[0-9]{1,3}\.[0-9]{2,})(?![0-9.])"
)
_PAIR_WITHIN = 64  # characters between the first value's end and the second label


def _labelled_pairs(scan: ScanText, detector: str) -> Iterator[Candidate]:
    """A labelled latitude and a labelled longitude next to each other, in range: both values."""
    if "lat" not in scan.lower:
        return
    lower = scan.lower
    # "l" first, a literal: `re` skips to each "l" in C; what stands before the label is checked here
    found = [
        match
        for match in _LABELLED.finditer(lower)
        if match.start() == 0 or not (lower[match.start() - 1].isalnum() or lower[match.start() - 1] == "_")
    ]
    for first, second in itertools.pairwise(found):
        kinds = {first.group("label")[:3] == "lat", second.group("label")[:3] == "lat"}
        if kinds != {True, False} or second.start() - first.end() > _PAIR_WITHIN:
            continue
        latitude, longitude = (first, second) if first.group("label").startswith("lat") else (second, first)
        if _in_range(latitude.group("value"), longitude.group("value")):
            for value in (first, second):
                yield Candidate(FindingType.GPS_COORDINATES, *value.span("value"), 0.8, detector)
