"""Text OCR could not read is masked, never passed as clean.

A word Tesseract reads with low confidence is text whose content is unknown: it may be a secret in a font
too small or too blurred to read. Such a word is masked (type UNREADABLE), which makes the frame amber with
the region filled rather than green with "nothing found". Marks that are not text are left: a single glyph
(window buttons, icons, box-drawing) reads as one or two characters.

Ink that Tesseract returned no word for at all (blurred text reads as nothing) is masked the same way when
it is shaped like text: a patch of ink cells at least a few cells wide and two tall that fills most of its
rectangle, and is either a line (three times as wide as tall) or large (a paragraph). Window frames
(rings), rules and scrollbars (one cell thick), icons and a title bar's row of buttons (small, squarish)
are not.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from PIL import Image, ImageDraw

from ._blocks import CELL_PX, components, ink_cells
from ._fill import trim_to_ink
from ._model import Box, ImageFinding
from ._ocr import OcrWord

__all__ = ["UNREADABLE_DETECTOR", "UNREADABLE_TYPE", "unread_ink", "unreadable"]

UNREADABLE_TYPE = "UNREADABLE"
UNREADABLE_DETECTOR = "ocr_confidence"
_MIN_CHARS = 3
_MIN_HEIGHT_PX = 6
_TEXT_CELLS = (4, 2)  # the least width and height, in cells, of a patch of ink shaped like text
_TEXT_FILL = 0.5  # the least share of its rectangle's cells a patch of ink shaped like text fills
_LINE_RATIO = 3  # a patch this many times as wide as tall is a line of text
_PARAGRAPH_CELLS = 64  # a patch of this many cells is text whatever its shape (title buttons: 48)


def _text_like(word: OcrWord) -> bool:
    letters = sum(char.isalnum() for char in word.text)
    return letters >= _MIN_CHARS and word.box.height >= _MIN_HEIGHT_PX


def unreadable(
    words: Iterable[OcrWord], min_conf: float, binary: Image.Image | None = None
) -> list[ImageFinding]:
    """One finding per text-like word read with less than `min_conf` confidence, its box padded by a pixel
    (the filler covers the glyphs' antialiased edges); with `binary` (the frame as black text on white),
    first narrowed to the rows that hold ink, as Tesseract's box can be twice the line's height."""

    def box(word: OcrWord) -> Box:
        return (word.box if binary is None else trim_to_ink(word.box.clip(*binary.size), binary)).pad(1)

    return [
        ImageFinding(UNREADABLE_TYPE, UNREADABLE_DETECTOR, round(1 - word.conf / 100, 2), (box(word),))
        for word in words
        if word.conf < min_conf and _text_like(word)
    ]


def _text_shaped(width: int, height: int, count: int) -> bool:
    if width < _TEXT_CELLS[0] or height < _TEXT_CELLS[1] or count < _TEXT_FILL * width * height:
        return False
    return width >= _LINE_RATIO * height or count >= _PARAGRAPH_CELLS


def _covered(words: Sequence[OcrWord], columns: int, rows: int) -> bytes:
    """For each cell, non-zero when a word box (any confidence: what it read is judged above) touches it."""
    mask = Image.new("L", (columns, rows), 0)
    draw = ImageDraw.Draw(mask)
    for word in words:
        box = word.box
        x0, y0 = box.x0 // CELL_PX - 1, box.y0 // CELL_PX - 1
        draw.rectangle((x0, y0, (box.x1 - 1) // CELL_PX + 1, (box.y1 - 1) // CELL_PX + 1), fill=255)
    return mask.tobytes()


def unread_ink(frame: Image.Image, words: Sequence[OcrWord]) -> list[ImageFinding]:
    """One finding per patch of text-shaped ink on the frame that no OCR word covers."""
    ink, columns, rows = ink_cells(frame)
    covered = _covered(words, columns, rows)
    left = [has_ink and not covered[n] for n, has_ink in enumerate(ink)]
    found = []
    for x0, y0, x1, y1, count in components(left, columns, rows):
        width, height = x1 - x0, y1 - y0
        if not _text_shaped(width, height, count):
            continue
        box = Box(x0 * CELL_PX, y0 * CELL_PX, x1 * CELL_PX, y1 * CELL_PX).clip(*frame.size)
        found.append(ImageFinding(UNREADABLE_TYPE, UNREADABLE_DETECTOR, 1.0, (box,)))
    return found
