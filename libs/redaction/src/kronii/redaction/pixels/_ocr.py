"""Tesseract word boxes for a prepared frame, from parallel single-threaded runs on horizontal bands.

The bands are cut along blank rows, so no line of text is split; each band's words come back in its own
reading order, with their boxes moved into the frame's coordinates.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from itertools import pairwise

import pytesseract
from PIL import Image

from ._model import Box
from ._prepare import Prepared
from ._settings import OcrSettings

__all__ = ["OcrWord", "band_cuts", "read_words"]

_WORD_LEVEL = 5
_CUT_SEARCH = 0.25  # look for a blank row within this share of a band's height of the ideal cut


@dataclass(frozen=True, slots=True)
class OcrWord:
    """A word Tesseract read: its text, its box in the prepared image, and which line it belongs to."""

    text: str
    box: Box
    line: tuple[int, int, int, int]  # band, block, paragraph, line


def _workers(settings: OcrSettings) -> int:
    if settings.workers:
        return settings.workers
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - not Linux
        return max(1, os.cpu_count() or 1)


def band_cuts(ink: Sequence[bool], parts: int, min_band: int) -> list[int]:
    """Rows at which to cut the image into at most `parts` bands; each cut falls on a blank row."""
    height = len(ink)
    parts = max(1, min(parts, height // max(1, min_band)))
    cuts = [0]
    for part in range(1, parts):
        ideal = part * height // parts
        reach = int(_CUT_SEARCH * height / parts)
        for offset in range(reach + 1):
            row = next((r for r in (ideal - offset, ideal + offset) if 0 < r < height and not ink[r]), None)
            if row is not None:
                if row - cuts[-1] >= min_band // 2:
                    cuts.append(row)
                break
    cuts.append(height)
    return cuts


def _read_band(image: Image.Image, top: int, band: int, settings: OcrSettings) -> list[OcrWord]:
    data = pytesseract.image_to_data(
        image,
        lang=settings.lang,
        config=settings.config,
        output_type=pytesseract.Output.DICT,
        timeout=settings.timeout_s,
    )
    words = []
    for index, text in enumerate(data["text"]):
        if int(data["level"][index]) != _WORD_LEVEL or not str(text).strip():
            continue
        left, upper = int(data["left"][index]), int(data["top"][index]) + top
        box = Box(left, upper, left + int(data["width"][index]), upper + int(data["height"][index]))
        line = (
            band,
            int(data["block_num"][index]),
            int(data["par_num"][index]),
            int(data["line_num"][index]),
        )
        words.append(OcrWord(str(text).strip(), box, line))
    return words


def read_words(prepared: Prepared, settings: OcrSettings) -> list[OcrWord]:
    """Every word in the prepared image, band by band, in reading order. Raises if any run fails."""
    if settings.limit_threads:
        os.environ.setdefault("OMP_THREAD_LIMIT", "1")
    image = prepared.image
    cuts = band_cuts(prepared.ink, _workers(settings), settings.min_band_px)
    bands = [(image.crop((0, top, image.width, bottom)), top) for top, bottom in pairwise(cuts)]
    if len(bands) == 1:
        return _read_band(image, 0, 0, settings)
    with ThreadPoolExecutor(max_workers=len(bands), thread_name_prefix="kronii-ocr") as pool:
        futures = [pool.submit(_read_band, band, top, n, settings) for n, (band, top) in enumerate(bands)]
        results = [future.result() for future in futures]
    return [word for words in results for word in words]
