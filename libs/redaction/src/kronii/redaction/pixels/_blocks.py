"""Finding the blocks of text on a whole screen before OCR, so each is read at the scale and polarity it needs.

A whole desktop mixes windows in small and large fonts, light and dark themes, on a dark root: read as one
page, its text height and polarity are those of the majority, and a small-font window is lost (seen: a 6x13
xterm on a 1280x800 screen read as nothing). Here the frame is cut into the rectangles that hold ink (local
contrast, across and down), grouped on a coarse grid of cells so that the
letters, words and lines of one window or panel make one block, and plain background separates blocks.
Each block is read with a cell of margin around its ink; blocks are joined only when their ink overlaps, not
when their margins do (seen: the two-cell grip at the foot of a window's frame, 8 px from the windows
above and below it, joined five decorated xterms, light and dark, into one block whose lines Tesseract
interleaved). Margins may overlap: they hold no ink of another block's words.
"""

from __future__ import annotations

from collections import deque

from PIL import Image, ImageChops

from ._layers import chroma
from ._model import Box

__all__ = ["CELL_PX", "components", "ink_cells", "text_blocks"]

CELL_PX = 8  # the grid's cell: about half a line of small text, so the lines of one window touch
_EDGE_LEVEL = 32  # grey-level change over _STEP pixels that counts as an edge (sharp text on a theme: 100+)
_STEP = 2  # pixels: wide enough for the soft edges of blurred text
_CELL_SHARE = 0.04  # share of a cell's pixels on an edge for the cell to hold ink
_MIN_CELLS = 2  # a block of one cell is a speck, a cursor or a corner, not text


def _edges(grey: Image.Image, dx: int, dy: int) -> Image.Image:
    """255 where the grey level changes by at least _EDGE_LEVEL over `_STEP` pixels in one direction."""
    moved = ImageChops.offset(grey, dx, dy)
    return ImageChops.difference(grey, moved).point(lambda level: 255 if level >= _EDGE_LEVEL else 0)


def ink_cells(frame: Image.Image) -> tuple[list[bool], int, int]:
    """For each cell of the grid (row by row), whether it holds ink; and the grid's columns and rows.

    Ink is where the grey level changes both across and down: glyphs have strokes both ways, while a
    window's border, a rule, a scrollbar or a gradient changes in one direction only (or too slowly)."""
    grey, spread = frame.convert("L"), chroma(frame)
    columns, rows = -(-frame.width // CELL_PX), -(-frame.height // CELL_PX)
    # BOX resampling averages each cell: its level is the share of edge pixels in it, times 255. An edge
    # in grey or in colour: red on a dark theme is next to no change in grey (61 on 43).
    across, down = (
        ImageChops.lighter(_edges(grey, dx, dy), _edges(spread, dx, dy))
        .resize((columns, rows), Image.Resampling.BOX)
        .tobytes()
        for dx, dy in ((_STEP, 0), (0, _STEP))
    )
    least = 255 * _CELL_SHARE
    return [a >= least and d >= least for a, d in zip(across, down, strict=True)], columns, rows


def components(ink: list[bool], columns: int, rows: int) -> list[tuple[int, int, int, int, int]]:
    """Bounding cell rectangles (x0, y0, x1, y1, cells) of the groups of ink cells within one cell of
    each other (8-neighbours two apart: the gap between two lines or two words does not split a block)."""
    seen = [False] * len(ink)
    found = []
    for start, has_ink in enumerate(ink):
        if not has_ink or seen[start]:
            continue
        seen[start] = True
        queue, x0, y0, x1, y1, count = deque([start]), columns, rows, 0, 0, 0
        while queue:
            cell = queue.popleft()
            cx, cy = cell % columns, cell // columns
            x0, y0, x1, y1, count = min(x0, cx), min(y0, cy), max(x1, cx + 1), max(y1, cy + 1), count + 1
            for ny in range(max(0, cy - 2), min(rows, cy + 3)):
                for nx in range(max(0, cx - 2), min(columns, cx + 3)):
                    other = ny * columns + nx
                    if ink[other] and not seen[other]:
                        seen[other] = True
                        queue.append(other)
        found.append((x0, y0, x1, y1, count))
    return found


def _overlap(a: Box, b: Box) -> bool:
    return a.x0 < b.x1 and b.x0 < a.x1 and a.y0 < b.y1 and b.y0 < a.y1


def _merged(boxes: list[Box]) -> list[Box]:
    """Overlapping rectangles joined until none overlap: a word must not be read twice, nor cut."""
    boxes = sorted(boxes)
    changed = True
    while changed:
        changed = False
        out: list[Box] = []
        for box in boxes:
            for n, other in enumerate(out):
                if _overlap(box, other):
                    out[n], changed = other.union(box), True
                    break
            else:
                out.append(box)
        boxes = out
    return sorted(boxes, key=lambda box: (box.y0, box.x0))


def text_blocks(frame: Image.Image) -> list[Box]:
    """The rectangles of the frame that hold ink, each with a cell of margin, in reading order."""
    ink, columns, rows = ink_cells(frame)
    cells = _merged(
        [
            Box(x0, y0, x1, y1)
            for x0, y0, x1, y1, count in components(ink, columns, rows)
            if count >= _MIN_CELLS
        ]
    )
    return [
        Box((b.x0 - 1) * CELL_PX, (b.y0 - 1) * CELL_PX, (b.x1 + 1) * CELL_PX, (b.y1 + 1) * CELL_PX).clip(
            *frame.size
        )
        for b in cells
    ]
