"""What Tesseract reads of a grayscale image: one run, bounded in time, its words grouped by block,
paragraph and line into zones with the mean confidence of their words and bounds in the ORIGINAL
frame's pixels; the frame decoded for it (dark themes inverted, the size checked first); and the box
arithmetic both passes use."""

from __future__ import annotations

import io
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import pytesseract
from kronii.redaction.pixels import ImageInputError, load_image
from PIL import Image, ImageOps

__all__ = [
    "Box",
    "OcrError",
    "Zone",
    "decode_frame",
    "inside",
    "overlap",
    "run_tesseract",
    "scaler",
    "union",
    "weighted_confidence",
    "zones_from_data",
]

_WORD_LEVEL = 5
_BORDER = 10  # white margin: Tesseract reads text touching the image's edge poorly
Box = tuple[int, int, int, int]  # x0, y0, x1, y1 (exclusive), original pixels


class OcrError(RuntimeError):
    """The frame could not be read: `str()` says why in a sentence (never any of the frame's text)."""


@dataclass(frozen=True, slots=True)
class Zone:
    text: str
    confidence: float
    box: Box

    @property
    def density(self) -> float:
        """Characters per 1000 px² of the zone's box, its height taken as at most twice the mean advance
        per character: once halved, Tesseract often boxes two lines of small text as one tall line."""
        width, height = self.box[2] - self.box[0], self.box[3] - self.box[1]
        advance = width / max(1, len(self.text))
        area = max(1.0, width * min(height, 2 * advance))
        return 1000.0 * len(self.text.replace(" ", "")) / area

    @property
    def center(self) -> tuple[int, int]:
        return (self.box[0] + self.box[2]) // 2, (self.box[1] + self.box[3]) // 2


def inside(point: tuple[int, int], box: Box) -> bool:
    return box[0] <= point[0] < box[2] and box[1] <= point[1] < box[3]


def overlap(a: Box, b: Box) -> bool:
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]


def union(a: Box, b: Box) -> Box:
    return min(a[0], b[0]), min(a[1], b[1]), max(a[2], b[2]), max(a[3], b[3])


def weighted_confidence(zones: Sequence[Zone]) -> float:
    """Mean confidence weighted by characters: a long line read well outweighs a stray glyph."""
    weights = [max(1, len(zone.text)) for zone in zones]
    return sum(z.confidence * w for z, w in zip(zones, weights, strict=True)) / max(1, sum(weights))


def run_tesseract(image: Image.Image, config: str, lang: str, timeout_s: float) -> dict[str, list[object]]:
    try:
        data: dict[str, list[object]] = pytesseract.image_to_data(
            ImageOps.expand(image, border=_BORDER, fill=255),
            lang=lang,
            config=config,
            output_type=pytesseract.Output.DICT,
            timeout=timeout_s,
        )
    except RuntimeError as exc:  # pytesseract's timeout, and TesseractError (a subclass)
        if "timeout" in str(exc).lower():
            raise OcrError(f"Tesseract took longer than {timeout_s:g} s on a {image.size} image") from exc
        raise OcrError(f"Tesseract failed on a {image.size} image ({type(exc).__name__})") from exc
    except OSError as exc:  # TesseractNotFoundError
        raise OcrError("Tesseract could not be run: is the tesseract program installed?") from exc
    return data


def zones_from_data(data: dict[str, list[object]], to_original: Callable[[Box], Box]) -> list[Zone]:
    """Words grouped by block, paragraph and line: one zone per line, bounds in the original's pixels."""
    lines: dict[tuple[int, int, int], list[tuple[str, float, Box]]] = {}
    for index, raw in enumerate(data["text"]):
        text = str(raw).strip()
        if int(str(data["level"][index])) != _WORD_LEVEL or not text:
            continue
        left, top = int(str(data["left"][index])) - _BORDER, int(str(data["top"][index])) - _BORDER
        box = (left, top, left + int(str(data["width"][index])), top + int(str(data["height"][index])))
        key = (
            int(str(data["block_num"][index])),
            int(str(data["par_num"][index])),
            int(str(data["line_num"][index])),
        )
        lines.setdefault(key, []).append((text, max(0.0, float(str(data["conf"][index]))) / 100.0, box))
    zones = []
    for words in lines.values():
        box = words[0][2]
        for _, _, word_box in words[1:]:
            box = union(box, word_box)
        text = " ".join(word for word, _, _ in words)
        confidence = min(1.0, sum(conf for _, conf, _ in words) / len(words))
        zones.append(Zone(text, confidence, to_original(box)))
    return zones


def scaler(
    scale_x: float, scale_y: float, offset: tuple[int, int], size: tuple[int, int]
) -> Callable[[Box], Box]:
    """Maps a box in a resized image back to the original's pixels, rounded outward by one source pixel
    (Tesseract's boxes are tight to the ink it kept; the resampled edges it dropped lie within that)."""
    pad_x, pad_y = math.ceil(scale_x), math.ceil(scale_y)
    width, height = size

    def to_original(box: Box) -> Box:
        x0 = max(0, math.floor(box[0] * scale_x) + offset[0] - pad_x)
        y0 = max(0, math.floor(box[1] * scale_y) + offset[1] - pad_y)
        x1 = min(width, math.ceil(box[2] * scale_x) + offset[0] + pad_x)
        y1 = min(height, math.ceil(box[3] * scale_y) + offset[1] + pad_y)
        return x0, y0, x1, y1

    return to_original


def decode_frame(png: bytes, max_pixels: int) -> Image.Image:
    """The frame in grayscale, text dark on light: a dark theme's frame is inverted (Tesseract's LSTM
    reads dark text on a light ground best). The size is checked before the pixels are decoded."""
    try:
        with Image.open(io.BytesIO(png)) as header:
            width, height = header.size
    except Exception as exc:
        raise OcrError(f"not a readable image ({type(exc).__name__})") from None
    if width * height > max_pixels:
        raise OcrError(f"a {width}x{height} image is over the {max_pixels} pixels OCR reads")
    try:
        gray = load_image(png).convert("L")
    except ImageInputError as exc:
        raise OcrError(str(exc)) from None
    histogram = gray.histogram()
    dark = sum(histogram[:128]) > sum(histogram[128:])
    return ImageOps.invert(gray) if dark else gray
