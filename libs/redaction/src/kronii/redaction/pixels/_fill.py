"""From findings on OCR lines to solid rectangles on the image. Solid, never blurred or pixelated: those
can be reversed or read by a model. Each word a finding touches is covered whole, with padding, and the
words of one finding on one line become one bar (so the spaces between them show nothing either).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence

from PIL import Image, ImageDraw, ImageOps

from .._lines import LineSpan
from ._layout import OcrLine
from ._model import Box

__all__ = [
    "FILL",
    "boxes_for_spans",
    "fill",
    "fit_rows",
    "fit_text",
    "ink_band",
    "line_band",
    "masked_share",
    "snap_in_band",
    "snap_to_ink",
    "to_original",
    "trim_to_ink",
]

FILL = (0, 0, 0)
PAD_MIN_PX = 2
PAD_SHARE = 0.15  # of the word's height
_TALL = 1.5  # a word box this many times as tall as its ink is too tall
_BAND_SLACK = 0.15  # of a line's height: how far past its words' usual top and bottom a box may reach
_MOSTLY_INK = 0.6  # glyphs cover a third of their line's box at most; more is a background taken for ink
_THIN_ROW = 0.15  # of a line's fullest row: an edge row with less ink is a descender's or the next line's
_GROW_MIN_PX = 10  # lines of text this tall have blank rows between them (5x7, 6x10, 7-8 px fonts do not)
_SURE = 80.0  # a word read with this confidence (0-100) has a box on its own line


def to_original(box: Box, scale: float) -> Box:
    """A box in the prepared (scaled) image, in the original's pixels, rounded outward."""
    return Box(
        math.floor(box.x0 / scale),
        math.floor(box.y0 / scale),
        math.ceil(box.x1 / scale),
        math.ceil(box.y1 / scale),
    )


def _has_ink(binary: Image.Image, x: int, top: int, bottom: int) -> bool:
    return 0 <= x < binary.width and binary.crop((x, top, x + 1, bottom)).getextrema()[0] == 0


def _reach(binary: Image.Image, box: Box, start: int, step: int, limit: int, max_gap: int) -> int:
    """How far ink goes on from column `start`, stepping by `step`, across gaps narrower than `max_gap`."""
    edge, gap, x = start, 0, start
    while abs(x - start) < limit:
        x += step
        if _has_ink(binary, x, box.y0, box.y1):
            edge, gap = x, 0
        else:
            gap += 1
            if gap >= max_gap:
                break
    return edge


def snap_to_ink(box: Box, binary: Image.Image, reach: int | None = None, gap: int | None = None) -> Box:
    """The box widened over ink just outside it: Tesseract's word boxes can end inside a glyph, or even
    leave the last glyph out, and a sliver of a glyph is a clue. Gaps narrower than a space (a fifth of the
    box's height: the room between two letters) are crossed; a wider gap, the space before the next word,
    stops it, and so does the box's height (or `reach`); `gap` sets the least gap that stops it."""
    limit = box.height if reach is None else reach
    max_gap = max(2, round(box.height / 5)) if gap is None else gap
    x0 = _reach(binary, box, box.x0, -1, limit, max_gap)
    x1 = _reach(binary, box, box.x1 - 1, 1, limit, max_gap) + 1
    return Box(min(x0, box.x0), box.y0, max(x1, box.x1), box.y1)


def trim_to_ink(box: Box, binary: Image.Image, tall: float = _TALL) -> Box:
    """The box's rows narrowed to its own line of ink (the run of rows with ink around its middle), when it
    is much taller than that. Tesseract sometimes gives every word of a line a box twice the text's height
    (seen on serif lines with low-confidence words): padded, such a bar runs over the lines above and below
    (which a plain OCR pass then reads as nothing), and the gap `snap_to_ink` may cross (a fifth of the
    height) grows past a space, so the bar takes in the word before. `tall`: how many times its ink's height
    a box must be to be narrowed (1: always)."""
    if box.empty:
        return box
    ink = ImageOps.invert(binary.crop(box.as_tuple())).resize((1, box.height), Image.Resampling.BOX)
    rows = [level > 0 for level in ink.tobytes()]
    if not any(rows):
        return box
    centre = min((y for y, has_ink in enumerate(rows) if has_ink), key=lambda y: abs(2 * y - box.height))
    top, bottom = centre, centre + 1
    while top > 0 and rows[top - 1]:
        top -= 1
    while bottom < len(rows) and rows[bottom]:
        bottom += 1
    if (bottom - top) * tall >= box.height:
        return box  # Tesseract's usual box, a little taller than its ink: `snap_to_ink` is tuned on those
    return Box(box.x0, box.y0 + top, box.x1, box.y0 + bottom)


def _ink_columns(binary: Image.Image, x0: int, x1: int, box: Box) -> int:
    return sum(_has_ink(binary, x, box.y0, box.y1) for x in range(max(0, x0), min(binary.width, x1)))


def fit_text(box: Box, chars: int, char_width: float, binary: Image.Image) -> Box:
    """A word box at least as wide as its text should be (its characters times the line's mean character
    width, less half a character), grown on the side where there is more ink: Tesseract sometimes reads a
    word whole but leaves its last or first glyph out of the box."""
    short = round(chars * char_width - char_width / 2) - box.width
    if short <= 0:
        return box
    if _ink_columns(binary, box.x0 - short, box.x0, box) > _ink_columns(binary, box.x1, box.x1 + short, box):
        return Box(box.x0 - short, box.y0, box.x1, box.y1)
    return Box(box.x0, box.y0, box.x1 + short, box.y1)


def line_band(boxes: Sequence[Box], confs: Sequence[float] = ()) -> tuple[int, int]:
    """The rows a line of text occupies: from the highest top to the lowest bottom of its word boxes (of
    those read with confidence if any were: `confs`), leaving out boxes much taller than the usual one.
    Tesseract gives garbled or doubtful words of a line (a token, a word it half read) boxes that run into
    the lines above and below, above all in bitmap fonts whose lines touch; the words it read well have the
    line's own, ascenders and descenders included."""
    sure = [box for box, conf in zip(boxes, confs, strict=True) if conf >= _SURE] if confs else []
    chosen = sure or list(boxes)
    heights = sorted(box.height for box in chosen)
    usual = heights[len(heights) // 2]
    kept = [box for box in chosen if box.height <= _TALL * usual] or chosen
    return min(box.y0 for box in kept), max(box.y1 for box in kept)


def _row_has_ink(binary: Image.Image, y: int, x0: int, x1: int) -> bool:
    return 0 <= y < binary.height and binary.crop((x0, y, x1, y + 1)).getextrema()[0] == 0


def _free_rows(binary: Image.Image, box: Box, start: int, step: int, limit: int) -> int:
    """How far a bar may be padded from row `start` on, stepping by `step`, without covering the next
    line's glyphs (at most `limit` rows): into blank rows over the box's columns, and when the next line's
    ink comes within twice the limit, into half of them only (the other half is that line's room)."""
    for count in range(2 * limit):
        if _row_has_ink(binary, start + step * count, box.x0, box.x1):
            return count // 2
    return limit


def fit_rows(box: Box, band: tuple[int, int], binary: Image.Image, pad: int, grow: bool = True) -> Box:
    """The box's rows: within its line's band (and a little slack for ascenders and descenders), grown
    over the glyphs' ink the box cut (with `grow`: when the band is only the box's own), then padded only
    into rows free of ink, so a bar over one line of tightly set text (a 5x7 bitmap terminal) does not
    cover the lines above and below it."""
    slack = _slack(band)
    low, high = max(0, band[0] - slack), min(binary.height, band[1] + slack)
    y0, y1 = min(max(box.y0, low), high - 1), max(min(box.y1, high), low + 1)
    y0, y1 = min(y0, y1 - 1), max(y1, y0 + 1)
    while grow and y0 > low and _row_has_ink(binary, y0 - 1, box.x0, box.x1):
        y0 -= 1
    while grow and y1 < high and _row_has_ink(binary, y1, box.x0, box.x1):
        y1 += 1
    fitted = Box(box.x0, y0, box.x1, y1)
    return Box(
        box.x0,
        y0 - _free_rows(binary, fitted, y0 - 1, -1, pad),
        box.x1,
        y1 + _free_rows(binary, fitted, y1, 1, pad),
    )


def _ink_share(binary: Image.Image, box: Box) -> float:
    clipped = box.clip(*binary.size)
    if clipped.empty:
        return 0.0
    return binary.crop(clipped.as_tuple()).histogram()[0] / clipped.area


def snap_in_band(
    box: Box, band: tuple[int, int], binary: Image.Image, reach: int | None = None, gap: int | None = None
) -> Box:
    """`snap_to_ink` looking only at the line's own rows: in tightly set text (a 5x7 bitmap terminal) the
    rows a box reaches past its line hold the next line's glyphs, whose ink would carry the bar on over
    the spaces."""
    core = Box(box.x0, max(box.y0, band[0]), box.x1, min(box.y1, band[1]))
    if core.empty:
        core = box
    if _ink_share(binary, core) > _MOSTLY_INK:
        return box  # its background reads as ink (a light window binarised as a dark one): no glyph edges
    snapped = snap_to_ink(core, binary, reach, gap)
    return Box(snapped.x0, box.y0, snapped.x1, box.y1)


def _bar(
    line: OcrLine, word: int, scale: float, binary: Image.Image, fitted: tuple[tuple[int, int], bool]
) -> Box:
    """One word's bar: its box fitted to its glyphs' ink, then padded (rows only into blank rows)."""
    band, sure = fitted
    # Over the glyphs' ink its box cut, unless the line is a sure one of small text, whose lines touch: there
    # the rows past its band are the next line's.
    grow = not sure or band[1] - band[0] >= _GROW_MIN_PX
    box = trim_to_ink(to_original(line.boxes[word], scale).clip(*binary.size), binary)
    box = fit_text(box, len(line.words[word]), line.char_width / scale, binary)
    box = fit_rows(box, band, binary, 0, grow=grow)
    box = snap_in_band(box, band, binary)  # from the glyphs' own edges: padding would eat the space
    pad = max(PAD_MIN_PX, math.ceil(PAD_SHARE * box.height))
    box = fit_rows(Box(box.x0 - pad, box.y0, box.x1 + pad, box.y1), band, binary, pad, grow=grow)
    return box.clip(*binary.size)


def _slack(band: tuple[int, int]) -> int:
    return max(1, round(_BAND_SLACK * (band[1] - band[0])))


def ink_band(band: tuple[int, int], x0: int, x1: int, binary: Image.Image) -> tuple[int, int]:
    """The band less an edge row that holds little ink over the line's width (under `_THIN_ROW` of its
    fullest row): Tesseract's boxes of small text, read upscaled and rounded outward, reach a row past the
    glyphs, into the next line's ascenders (a stray descender's last row can be lost: unreadable alone)."""
    if band[1] - band[0] < 3 or x1 <= x0:
        return band
    crop = ImageOps.invert(binary.crop((x0, band[0], x1, band[1])))
    counts = list(crop.resize((1, band[1] - band[0]), Image.Resampling.BOX).tobytes())
    least = _THIN_ROW * max(counts)
    return band[0] + (counts[0] < least), band[1] - (counts[-1] < least)


def _band(line: OcrLine, scale: float, binary: Image.Image) -> tuple[tuple[int, int], bool]:
    """The line's rows, and whether they are sure: from its well-read words (narrowed by `ink_band`), or,
    when it has fewer than two (a line of one coloured token read on its own layer), from all its words."""
    boxes = [to_original(box, scale).clip(*binary.size) for box in line.boxes]
    if sum(conf >= _SURE for conf in line.confs) < 2:
        return line_band(boxes), False
    whole = boxes[0]
    for box in boxes[1:]:
        whole = whole.union(box)
    return ink_band(line_band(boxes, line.confs), whole.x0, whole.x1, binary), True


def boxes_for_spans(
    spans: Iterable[LineSpan], lines: Sequence[OcrLine], scale: float, binary: Image.Image
) -> dict[int, list[Box]]:
    """For each finding number, its padded bars in original coordinates, one per line it covers.

    `binary` is the original frame as black text on white (see `Prepared.binary`)."""
    bars: dict[tuple[int, int], Box] = {}
    for span in spans:
        if not 0 <= span.line < len(lines):
            raise ValueError("a finding fell on a line that OCR did not read")
        line = lines[span.line]
        words = line.words_within(span.start, span.end)
        if not words:
            raise ValueError("a finding covers no word box")
        band = _band(line, scale, binary)
        for word in words:
            box = _bar(line, word, scale, binary, band)
            key = (span.finding, span.line)
            bars[key] = bars[key].union(box) if key in bars else box
    found: dict[int, list[Box]] = {}
    for (finding, _), box in sorted(bars.items()):
        if not box.empty:
            found.setdefault(finding, []).append(box)
    return found


def masked_share(boxes: Iterable[Box], size: tuple[int, int]) -> float:
    """The share of the image's area inside the union of the boxes."""
    mask = Image.new("L", size, 0)
    draw = ImageDraw.Draw(mask)
    for box in boxes:
        if not box.empty:
            draw.rectangle((box.x0, box.y0, box.x1 - 1, box.y1 - 1), fill=255)
    return mask.histogram()[255] / (size[0] * size[1])


def fill(image: Image.Image, boxes: Iterable[Box]) -> Image.Image:
    """A copy of the image with every box filled solid."""
    out = image.copy()
    draw = ImageDraw.Draw(out)
    for box in boxes:
        if not box.empty:
            draw.rectangle((box.x0, box.y0, box.x1 - 1, box.y1 - 1), fill=FILL)
    return out
