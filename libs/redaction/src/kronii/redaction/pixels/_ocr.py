"""Tesseract word boxes for the prepared blocks of a frame, from parallel single-threaded runs on bands.

Each block (see `_blocks`) is prepared on its own and cut into horizontal bands along blank rows, so no line
of text is split; each band's words come back in its own reading order, with their boxes moved into the
frame's coordinates and their confidence.
"""

from __future__ import annotations

import math
import os
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from itertools import pairwise

import pytesseract
from PIL import Image, ImageOps

from ._model import Box
from ._prepare import Prepared
from ._settings import OcrSettings

__all__ = ["OCR_BORDER", "OcrWord", "band_cuts", "read_regions"]

_WORD_LEVEL = 5
OCR_BORDER = 10  # white margin around each band: Tesseract reads text that touches the edge poorly
_CUT_SEARCH = 0.25  # look for a blank row within this share of a band's height of the ideal cut


@dataclass(frozen=True, slots=True)
class OcrWord:
    """A word Tesseract read: its text, its box in the prepared image (in the frame, from read_regions),
    which line it belongs to, Tesseract's confidence in it (0-100), and whether it was read on a colour
    layer (see `_layers`) rather than on the block itself."""

    text: str
    box: Box
    line: tuple[int, int, int, int]  # band, block, paragraph, line
    conf: float = 100.0
    layer: bool = False


def _workers(settings: OcrSettings) -> int:
    if settings.workers:
        return settings.workers
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - not Linux
        return max(1, os.cpu_count() or 1)


def _widest_gap(ink: Sequence[bool], low: int, high: int, ideal: int) -> int | None:
    """The middle of the widest run of blank rows in [low, high) (the nearest to `ideal` among equals)."""
    best: tuple[int, int] | None = None  # (length, -distance)
    cut = None
    row = low
    while row < high:
        if ink[row]:
            row += 1
            continue
        start = row
        while row < high and not ink[row]:
            row += 1
        middle = (start + row) // 2
        key = (row - start, -abs(middle - ideal))
        if best is None or key > best:
            best, cut = key, middle
    return cut


def band_cuts(ink: Sequence[bool], parts: int, min_band: int) -> list[int]:
    """Rows at which to cut the image into at most `parts` bands, each in the middle of the widest gap
    between lines near the ideal cut: a cut through a line (or between an i and its dot) would garble it."""
    height = len(ink)
    parts = max(1, min(parts, height // max(1, min_band)))
    cuts = [0]
    for part in range(1, parts):
        ideal = part * height // parts
        reach = int(_CUT_SEARCH * height / parts)
        cut = _widest_gap(ink, max(1, ideal - reach), min(height - 1, ideal + reach + 1), ideal)
        if cut is not None and cut - cuts[-1] >= min_band // 2:
            cuts.append(cut)
    cuts.append(height)
    return cuts


def _read_band(image: Image.Image, top: int, band: int, settings: OcrSettings) -> list[OcrWord]:
    data = pytesseract.image_to_data(
        ImageOps.expand(image, border=OCR_BORDER, fill=255),
        lang=settings.lang,
        config=settings.config,
        output_type=pytesseract.Output.DICT,
        timeout=settings.timeout_s,
    )
    words = []
    for index, text in enumerate(data["text"]):
        if int(data["level"][index]) != _WORD_LEVEL or not str(text).strip():
            continue
        left, upper = int(data["left"][index]) - OCR_BORDER, int(data["top"][index]) - OCR_BORDER + top
        box = Box(left, upper, left + int(data["width"][index]), upper + int(data["height"][index]))
        line = (
            band,
            int(data["block_num"][index]),
            int(data["par_num"][index]),
            int(data["line_num"][index]),
        )
        words.append(OcrWord(str(text).strip(), box, line, float(data["conf"][index])))
    return words


def _to_frame(word: OcrWord, band: int, prepared: Prepared, area: Box) -> OcrWord:
    """A word read on a block's prepared image, with its box rounded outward into the frame's pixels."""
    box, scale = word.box, prepared.scale
    frame_box = Box(
        math.floor(box.x0 / scale) + area.x0,
        math.floor(box.y0 / scale) + area.y0,
        math.ceil(box.x1 / scale) + area.x0,
        math.ceil(box.y1 / scale) + area.y0,
    )
    return OcrWord(word.text, frame_box, (band, *word.line[1:]), word.conf, prepared.layer)


def read_regions(parts: Sequence[tuple[Prepared, Box]], settings: OcrSettings) -> list[OcrWord]:
    """Every word in each prepared block (with the block's rectangle in the frame), boxes in the frame's
    pixels, in reading order. The blocks' bands share one pool of single-threaded Tesseract runs; a block
    is cut into bands in proportion to its height, so a tall window is split and small ones are not."""
    if settings.limit_threads:
        # pytesseract starts tesseract with this process's environment and takes no other. Tesseract's
        # OpenMP threads spin against each other and against everything else on a small machine (a plain
        # pass took ~10 s of CPU for ~2 s of work here); one thread per process, one process per band.
        # An operator's own OMP_THREAD_LIMIT is kept.
        os.environ.setdefault("OMP_THREAD_LIMIT", "1")
    workers = _workers(settings)
    total = sum(prepared.image.height for prepared, _ in parts) or 1
    jobs: list[tuple[Image.Image, int, int]] = []
    for index, (prepared, _) in enumerate(parts):
        share = max(1, round(workers * prepared.image.height / total))
        cuts = band_cuts(prepared.ink, share, settings.min_band_px)
        image = prepared.image
        jobs += [(image.crop((0, top, image.width, bottom)), top, index) for top, bottom in pairwise(cuts)]
    if len(jobs) <= 1:
        results = [_read_band(image, top, 0, settings) for image, top, _ in jobs]
    else:
        with ThreadPoolExecutor(max_workers=min(workers, len(jobs)), thread_name_prefix="kronii-ocr") as pool:
            futures = [pool.submit(_read_band, image, top, 0, settings) for image, top, _ in jobs]
            results = [future.result() for future in futures]
    return [
        _to_frame(word, band, parts[index][0], parts[index][1])
        for band, ((_, _, index), words) in enumerate(zip(jobs, results, strict=True))
        for word in words
    ]
