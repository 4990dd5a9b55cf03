"""Turning overlapping candidates into disjoint masked spans.

Overlapping candidates merge into one masked span covering all of them (a partly masked secret is a leaked
secret), typed after the most confident, then longest, candidate. That winner's own text keys the placeholder,
so the same token gets the same placeholder whichever neighbour it was merged with.
"""

from __future__ import annotations

from collections.abc import Iterable
from operator import attrgetter
from typing import NamedTuple

from .detectors import Candidate

__all__ = ["MaskedSpan", "merge_overlaps"]


class MaskedSpan(NamedTuple):
    """A tuple rather than a frozen dataclass: built once per finding, and a tuple is three times cheaper."""

    start: int
    end: int
    winner: Candidate
    types: frozenset[str]  # every candidate type merged into this span, for the level


def merge_overlaps(candidates: Iterable[Candidate]) -> list[MaskedSpan]:
    # By start, then longest first: two stable C-level sorts on one attribute each, about twice as fast as
    # one sort keyed by a Python lambda building a tuple per candidate (tens of thousands on dense text).
    ordered = [c for c in candidates if c.end > c.start]
    ordered.sort(key=_END, reverse=True)
    ordered.sort(key=_START)
    spans: list[MaskedSpan] = []
    singles: dict[str, frozenset[str]] = {}  # one frozenset per type for the many spans of one candidate
    group: list[Candidate] = []
    group_end = -1
    for candidate in ordered:
        if group and candidate.start >= group_end:
            spans.append(_span_of(group, group_end, singles))
            group = []
        group.append(candidate)
        if len(group) == 1 or candidate.end > group_end:
            group_end = candidate.end
    if group:
        spans.append(_span_of(group, group_end, singles))
    return spans


_START, _END = attrgetter("start"), attrgetter("end")


def _span_of(group: list[Candidate], end: int, singles: dict[str, frozenset[str]]) -> MaskedSpan:
    if len(group) == 1:  # most spans: no choice to make
        only = group[0]
        types = singles.get(only.type)
        if types is None:
            types = singles[only.type] = frozenset((only.type,))
        return MaskedSpan(only.start, end, only, types)
    winner = max(group, key=lambda c: (c.confidence, c.end - c.start, -c.start))
    return MaskedSpan(group[0].start, end, winner, frozenset(c.type for c in group))
