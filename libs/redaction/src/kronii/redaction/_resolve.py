"""Turning overlapping candidates into disjoint masked spans.

Overlapping candidates merge into one masked span covering all of them (a partly masked secret is a leaked
secret), typed after the most confident, then longest, candidate. That winner's own text keys the placeholder,
so the same token gets the same placeholder whichever neighbour it was merged with.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from .detectors import Candidate

__all__ = ["MaskedSpan", "merge_overlaps"]


@dataclass(frozen=True, slots=True)
class MaskedSpan:
    start: int
    end: int
    winner: Candidate
    types: frozenset[str]  # every candidate type merged into this span, for the level


def merge_overlaps(candidates: Iterable[Candidate]) -> list[MaskedSpan]:
    ordered = sorted((c for c in candidates if c.end > c.start), key=lambda c: (c.start, -c.end))
    spans: list[MaskedSpan] = []
    group: list[Candidate] = []
    group_end = -1
    for candidate in ordered:
        if group and candidate.start >= group_end:
            spans.append(_span_of(group, group_end))
            group = []
        group.append(candidate)
        group_end = max(group_end, candidate.end) if len(group) > 1 else candidate.end
    if group:
        spans.append(_span_of(group, group_end))
    return spans


def _span_of(group: list[Candidate], end: int) -> MaskedSpan:
    if len(group) == 1:  # most spans: no choice to make
        only = group[0]
        return MaskedSpan(only.start, end, only, frozenset((only.type,)))
    winner = max(group, key=lambda c: (c.confidence, c.end - c.start, -c.start))
    return MaskedSpan(group[0].start, end, winner, frozenset(c.type for c in group))
