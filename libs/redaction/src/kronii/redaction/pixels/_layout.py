"""OCR words into lines of text, so that a finding of several words (a card number, a phone number, a name)
is seen whole; each word keeps its character range in its line, to map findings back to boxes.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ._model import Box
from ._ocr import OcrWord

__all__ = ["OcrLine", "assemble_lines"]


@dataclass(frozen=True, slots=True)
class OcrLine:
    """One line of OCR text: its words joined by single spaces, and each word's [start, end) and box."""

    text: str
    words: tuple[str, ...]
    spans: tuple[tuple[int, int], ...]
    boxes: tuple[Box, ...]

    def boxes_within(self, start: int, end: int) -> list[Box]:
        """The boxes of the words that overlap characters [start, end)."""
        return [
            box
            for (first, last), box in zip(self.spans, self.boxes, strict=True)
            if first < end and last > start
        ]


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
                text, tuple(word.text for word in members), tuple(spans), tuple(word.box for word in members)
            )
        )
    return lines
