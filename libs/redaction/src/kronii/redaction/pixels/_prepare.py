"""Preparing a frame for Tesseract: grey, dark text on light, a useful size, and (optionally) black and white.

Each step is one Pillow call on the whole frame (milliseconds on a 1280x800 screenshot); the text height
that picks the scale comes from the rows that hold ink.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from PIL import Image, ImageOps

from ._settings import OcrSettings

__all__ = ["Prepared", "flatten", "ink_rows", "otsu_threshold", "prepare", "text_height"]

_MIN_RUN_PX = 4  # ink runs lower than this are rules, underlines or noise, not lines of text


@dataclass(frozen=True, slots=True)
class Prepared:
    """The image Tesseract reads (mode L), its size relative to the original, and its rows with ink;
    `binary` is the original-size frame in black text on white, to find where glyphs really end; `layer`
    says it is a block's colour layer (see `_layers`), read besides the block itself."""

    image: Image.Image
    scale: float
    inverted: bool
    ink: tuple[bool, ...]
    binary: Image.Image
    layer: bool = False


def flatten(image: Image.Image) -> Image.Image:
    """RGB, with any transparency composited on white: what OCR reads is exactly what is shown and kept."""
    if image.mode in ("RGBA", "LA", "PA") or (image.mode == "P" and "transparency" in image.info):
        rgba = image.convert("RGBA")
        background = Image.new("RGBA", rgba.size, (255, 255, 255, 255))
        return Image.alpha_composite(background, rgba).convert("RGB")
    return image if image.mode == "RGB" else image.convert("RGB")


def otsu_threshold(histogram: list[int]) -> int:
    """The grey level that best splits a 256-bin histogram into two classes (Otsu, 1979)."""
    total = sum(histogram)
    weighted_total = sum(level * count for level, count in enumerate(histogram))
    below = below_weighted = 0
    best, threshold = -1.0, 127
    for level, count in enumerate(histogram):
        below += count
        below_weighted += level * count
        above = total - below
        if below == 0 or above == 0:
            continue
        mean_gap = below_weighted / below - (weighted_total - below_weighted) / above
        spread = below * above * mean_gap * mean_gap
        if spread > best:
            best, threshold = spread, level
    return threshold


def ink_rows(binary: Image.Image) -> tuple[bool, ...]:
    """For each row of a black-on-white image, whether it holds text rather than only vertical lines.

    Borders, pane separators and scrollbars put a few black pixels in every row; what they add to the blank
    rows between lines (the most common count among the lower half of rows) is discounted before a row
    counts as ink. Not the least count: a strip above a window's frame has fewer (seen: 11 black pixels
    above an xterm whose blank rows had 24, which made every row ink and the block's text 148 px tall).
    """
    width = binary.width
    data = binary.tobytes()
    counts = [data.count(0, row, row + width) for row in range(0, len(data), width)]
    floor = _blank_count(counts)
    margin = max(1, width // 640)
    return tuple(count > floor + margin for count in counts)


def _blank_count(counts: list[int]) -> int:
    """The black pixels of a blank row: the most common count among the rows at or below the median."""
    if not counts:
        return 0
    median = sorted(counts)[(len(counts) - 1) // 2]
    low = Counter(count for count in counts if count <= median)
    return max(low.items(), key=lambda item: (item[1], -item[0]))[0]


def text_height(ink: tuple[bool, ...]) -> float | None:
    """The height of the smaller lines of text (lower quartile of ink runs), or None if there is no text.

    The lower quartile rather than the median: a frame that mixes small and large text keeps its small text
    readable, and rows that merge (side-by-side panes whose lines do not align) can only make runs taller.
    """
    runs: list[int] = []
    length = 0
    for has_ink in (*ink, False):
        if has_ink:
            length += 1
        elif length:
            if length >= _MIN_RUN_PX:
                runs.append(length)
            length = 0
    if not runs:
        return None
    runs.sort()
    return float(runs[(len(runs) - 1) // 4])


def _binarize(grey: Image.Image, threshold: int) -> Image.Image:
    return grey.point(lambda level: 255 if level > threshold else 0)


def _choose_scale(settings: OcrSettings, height: float | None) -> float:
    if settings.scale is not None:
        return settings.scale
    if height is None or settings.small_text_px <= height <= settings.large_text_px:
        return 1.0
    return min(settings.max_scale, max(settings.min_scale, settings.target_text_px / height))


def prepare(image: Image.Image, settings: OcrSettings) -> Prepared:
    grey = flatten(image).convert("L")
    histogram = grey.histogram()
    threshold = otsu_threshold(histogram)
    inverted = False
    if settings.normalize_polarity and sum(histogram[: threshold + 1]) * 2 > grey.width * grey.height:
        grey = ImageOps.invert(grey)  # most of the frame is dark: a dark theme
        threshold = 254 - threshold
        inverted = True
    original = binary = _binarize(grey, threshold)
    scale = _choose_scale(settings, text_height(ink_rows(binary)))
    if scale != 1.0:
        size = (max(1, round(grey.width * scale)), max(1, round(grey.height * scale)))
        grey = grey.resize(size, Image.Resampling.LANCZOS if scale < 1 else Image.Resampling.BICUBIC)
        binary = _binarize(grey, threshold)
    ocr_input = binary if settings.binarize else grey
    return Prepared(ocr_input, scale, inverted, ink_rows(binary), original)
