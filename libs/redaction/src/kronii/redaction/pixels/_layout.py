"""OCR words into lines of text, so that a finding of several words (a card number, a phone number, a name)
is seen whole; each word keeps its character range in its line, to map findings back to boxes.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from .._lines import LineSpan
from ._model import Box
from ._ocr import OcrWord

__all__ = ["OcrLine", "assemble_lines", "masked_text"]


@dataclass(frozen=True, slots=True)
class OcrLine:
    """One line of OCR text: its words joined by single spaces, and each word's [start, end), box and
    Tesseract's confidence."""

    text: str
    words: tuple[str, ...]
    spans: tuple[tuple[int, int], ...]
    boxes: tuple[Box, ...]
    confs: tuple[float, ...] = ()

    def words_within(self, start: int, end: int) -> list[int]:
        """The numbers of the words that overlap characters [start, end)."""
        return [n for n, (first, last) in enumerate(self.spans) if first < end and last > start]

    def boxes_within(self, start: int, end: int) -> list[Box]:
        """The boxes of the words that overlap characters [start, end)."""
        return [self.boxes[n] for n in self.words_within(start, end)]

    @property
    def char_width(self) -> float:
        """The mean width of a character on this line, from its word boxes."""
        return sum(box.width for box in self.boxes) / max(1, sum(len(word) for word in self.words))


def assemble_lines(words: Sequence[OcrWord]) -> list[OcrLine]:
    """Group words by (band, block, paragraph, line) in the order Tesseract read them."""
    grouped: dict[tuple[int, int, int, int], list[OcrWord]] = {}
    for word in words:
        grouped.setdefault(word.line, []).append(word)
    lines = []
    for members in grouped.values():
        spans: list[tuple[int, int]] = []
        cursor = 0
        for word in members:
            spans.append((cursor, cursor + len(word.text)))
            cursor += len(word.text) + 1
        text = " ".join(word.text for word in members)
        lines.append(
            OcrLine(
                text,
                tuple(word.text for word in members),
                tuple(spans),
                tuple(word.box for word in members),
                tuple(word.conf for word in members),
            )
        )
    return lines


def masked_text(lines: Sequence[OcrLine], spans: Iterable[LineSpan], placeholders: Sequence[str]) -> str:
    """The OCR text with every span (as masked on the image, widened ones included) replaced by its
    finding's placeholder; a finding that runs over several lines shows its placeholder on the first."""
    by_line: dict[int, list[LineSpan]] = {}
    for span in spans:
        by_line.setdefault(span.line, []).append(span)
    shown: set[int] = set()
    out = []
    for number, line in enumerate(lines):
        pieces, cursor = [], 0
        for span in sorted(by_line.get(number, ()), key=lambda s: (s.start, -s.end)):
            if span.end <= cursor:
                continue
            pieces.append(line.text[cursor : max(cursor, span.start)])
            if span.finding not in shown:
                pieces.append(placeholders[span.finding])
                shown.add(span.finding)
            cursor = max(cursor, span.end)
        pieces.append(line.text[cursor:])
        out.append("".join(pieces))
    return "\n".join(out)
