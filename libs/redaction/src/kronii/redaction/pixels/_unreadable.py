"""Text OCR could not read is masked, never passed as clean.

A word Tesseract reads with low confidence is text whose content is unknown: it may be a secret in a font
too small or too blurred to read. Such a word is masked (type UNREADABLE), which makes the frame amber with
the region filled rather than green with "nothing found". Marks that are not text are left: a single glyph
(window buttons, icons, box-drawing) reads as one or two characters.

Two kinds of word are judged apart. A plain word (letters only, lower case or capitalised: `platform`,
`Backups`) read with low confidence is still a word, which the text engine saw; small bitmap fonts give whole
lines of them confidences under 30 (seen: 0 of 15 ordinary words left readable on a light 5x7 xterm), so
they are left. A word shaped like an identifier (digits, `@`, a dot or underscore inside, mixed case) is
masked below a higher confidence (`token_conf`): a value OCR half read (an e-mail address whose `@` a 7 px
font turns into `f` or `G`) is found by no detector, yet is plainly not an ordinary word.

Ink that Tesseract returned no word for at all (blurred text reads as nothing) is masked the same way when
it is shaped like text: a patch of ink cells at least a few cells wide and two tall that fills most of its
rectangle, and is either a line (three times as wide as tall) or large (a paragraph). Window frames
(rings), rules and scrollbars (one cell thick), icons and a title bar's row of buttons (small, squarish)
are not.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from itertools import pairwise

from PIL import Image, ImageDraw

from ._blocks import CELL_PX, components, ink_cells
from ._fill import fit_rows, ink_band, line_band, snap_in_band, trim_to_ink
from ._model import Box, ImageFinding
from ._ocr import OcrWord

__all__ = ["UNREADABLE_DETECTOR", "UNREADABLE_TYPE", "unread_ink", "unreadable"]

UNREADABLE_TYPE = "UNREADABLE"
UNREADABLE_DETECTOR = "ocr_confidence"
_MIN_CHARS = 3
_MIN_HEIGHT_PX = 4  # the x-height of 7 px text: a word of lower case letters there is 4 px tall
_TEXT_CELLS = (4, 2)  # the least width and height, in cells, of a patch of ink shaped like text
_TEXT_FILL = 0.5  # the least share of its rectangle's cells a patch of ink shaped like text fills
_LINE_RATIO = 3  # a patch this many times as wide as tall is a line of text
_SPACE_SHARE = 0.8  # of the median gap between a line's word boxes: a blank run this wide is a space
_PARAGRAPH_CELLS = 64  # a patch of this many cells is text whatever its shape (title buttons: 48)


_PLAIN_WORD = re.compile(r"[A-Za-z][a-z]+[.,:;!?]?")
_IDENTIFIER = re.compile(r"[0-9@_]|[A-Za-z0-9][.,][A-Za-z0-9]|[a-z][A-Z]")


def _text_like(word: OcrWord) -> bool:
    letters = sum(char.isalnum() for char in word.text)
    return letters >= _MIN_CHARS and word.box.height >= _MIN_HEIGHT_PX


def _doubtful(word: OcrWord, min_conf: float, token_conf: float) -> bool:
    """Whether a word's content is unknown: a text-like word read with too little confidence for its shape
    (a plain word never; an identifier-shaped one below `token_conf`; any other below `min_conf`)."""
    if not _text_like(word) or _PLAIN_WORD.fullmatch(word.text):
        return False
    limit = max(min_conf, token_conf) if _IDENTIFIER.search(word.text) else min_conf
    return word.conf < limit


def _space(boxes: Sequence[Box]) -> int:
    """The least blank run, in columns, that parts two words on a line: most of the median gap between its
    word boxes (Tesseract splits words at spaces; a monospaced space is a cell wide, a proportional one
    half of that), so the gaps between the letters of one word are crossed and spaces are not."""
    ordered = sorted(boxes, key=lambda box: box.x0)
    gaps = sorted(b.x0 - a.x1 for a, b in pairwise(ordered) if b.x0 > a.x1)
    return max(2, int(_SPACE_SHARE * gaps[len(gaps) // 2])) if gaps else 2


def unreadable(
    words: Sequence[OcrWord],
    min_conf: float,
    binary: Image.Image | None = None,
    token_conf: float = 0.0,
) -> list[ImageFinding]:
    """One finding per text-like word whose content is unknown (see `_doubtful`), its box padded by a pixel
    (the filler covers the glyphs' antialiased edges); with `binary` (the frame as black text on white),
    first fitted to its own line's rows, as Tesseract's box can be twice the line's height, and widened
    over the glyphs OCR left out of it up to the next space (a half-read address is one run)."""
    lines: dict[tuple[int, int, int, int], list[Box]] = {}
    confs: dict[tuple[int, int, int, int], list[float]] = {}
    for word in words:
        lines.setdefault(word.line, []).append(word.box)
        confs.setdefault(word.line, []).append(word.conf)

    def box(word: OcrWord) -> Box:
        if binary is None:
            return word.box.pad(1)
        fitted = trim_to_ink(word.box.clip(*binary.size), binary)
        boxes = lines[word.line]
        band = ink_band(
            line_band(boxes, confs[word.line]), min(b.x0 for b in boxes), max(b.x1 for b in boxes), binary
        )
        reach = max(fitted.width, 3 * (band[1] - band[0]))  # a run of glyphs, not a line of them
        fitted = snap_in_band(fit_rows(fitted, band, binary, 0), band, binary, reach, _space(boxes))
        fitted = fit_rows(fitted, band, binary, 1)
        return Box(fitted.x0 - 1, fitted.y0, fitted.x1 + 1, fitted.y1).clip(*binary.size)

    return [
        ImageFinding(UNREADABLE_TYPE, UNREADABLE_DETECTOR, round(1 - word.conf / 100, 2), (box(word),))
        for word in words
        if _doubtful(word, min_conf, token_conf)
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
