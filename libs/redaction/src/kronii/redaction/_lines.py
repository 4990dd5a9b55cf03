"""Findings over OCR lines: the image redactor scans lines joined by newlines (so a secret or a key block that
spans lines is still seen whole) and gets each finding back as per-line character spans, which it maps to
word boxes.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Sequence
from dataclasses import dataclass

from ._model import Finding, RedactionResult

__all__ = ["LineSpan", "LinesRedaction", "join_lines", "map_to_lines"]

LINE_SEPARATOR = "\n"


@dataclass(frozen=True, slots=True)
class LineSpan:
    """Characters [start, end) of line `line` belong to finding number `finding` of the result."""

    line: int
    start: int
    end: int
    finding: int


@dataclass(frozen=True, slots=True)
class LinesRedaction:
    result: RedactionResult
    line_spans: tuple[LineSpan, ...]

    def spans_on(self, line: int) -> tuple[LineSpan, ...]:
        return tuple(span for span in self.line_spans if span.line == line)


def join_lines(lines: Sequence[str]) -> str:
    return LINE_SEPARATOR.join(lines)


def map_to_lines(findings: Sequence[Finding], lines: Sequence[str]) -> tuple[LineSpan, ...]:
    starts = []
    offset = 0
    for line in lines:
        starts.append(offset)
        offset += len(line) + len(LINE_SEPARATOR)
    spans = []
    for index, finding in enumerate(findings):
        number = max(0, bisect_right(starts, finding.start) - 1)
        while number < len(lines) and starts[number] < finding.end:
            line_start = starts[number]
            start = max(finding.start, line_start)
            end = min(finding.end, line_start + len(lines[number]))
            if start < end:
                spans.append(LineSpan(number, start - line_start, end - line_start, index))
            number += 1
    return tuple(spans)
