"""OCR zones of capture's redacted frame: a fast pass at half scale, then ~300 DPI crops where it read
small text poorly, and every zone's text through the text redaction engine.

- Half pass: the frame in grayscale (inverted when its background is dark), halved (Lanczos), read by
  Tesseract in sparse-text mode (psm 11) with the minimum x-height lowered to 4 px, so 14 px text (7 px
  once halved) is still found as text; words grouped by Tesseract's block, paragraph and line into zones,
  each with the mean confidence of its words and bounds in the ORIGINAL frame's pixels.
- Crop pass: zones under `low_confidence` that are text-dense (many characters per area: small fonts) are
  merged with their neighbours into regions, grown to the edge of the ink around them, and each region of
  the original frame is upscaled to about 300 DPI (a 96 DPI screen: x3.125, less if a side would pass
  `max_crop_side`) and read as one block. A region's zones replace the half pass's when they read with a
  higher confidence.
- Redaction: the zones' texts are scanned together (a secret split over two lines is still seen) and each
  zone carries the redacted text; a zone the engine grades red carries WITHHELD_TEXT instead.

Every Tesseract run has a timeout, and an image over `max_pixels` is refused, so no frame hangs the service.
Measured on this 2-core machine (bench figures in the report of this change): half pass of a 1280x800
frame ~0.25 s, one dense-paragraph crop ~0.4 s.
"""

from __future__ import annotations

import io
import math
import os
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np
import pytesseract
from kronii.redaction import WITHHELD_TEXT, Level, RedactionContext, RedactionEngine
from kronii.redaction.pixels import ImageInputError, load_image
from kronii.vision.core.context import Bounds, OcrZone
from PIL import Image, ImageOps

__all__ = ["OcrError", "OcrReading", "ScreenOcr", "ScreenOcrSettings"]

_WORD_LEVEL = 5
_BORDER = 10  # white margin: Tesseract reads text touching the image's edge poorly
_INK_CONTRAST = 48  # grey levels from the background that count as ink when a region is grown
Box = tuple[int, int, int, int]  # x0, y0, x1, y1 (exclusive), original pixels


class OcrError(RuntimeError):
    """The frame could not be read: `str()` says why in a sentence (never any of the frame's text)."""


@dataclass(frozen=True, slots=True)
class ScreenOcrSettings:
    """How the two passes run; the defaults are discussed in the module's docstring."""

    half_scale: float = 0.5
    low_confidence: float = 0.6
    # Characters per 1000 px² of a zone (see _Zone.density): DejaVu Sans at 10 px is ~14, 14 px ~7,
    # 16 px ~6, 20 px ~3.5: text under about 17 px is dense.
    dense_chars_per_kpx: float = 5.0
    screen_dpi: float = 96.0
    target_dpi: float = 300.0
    max_crop_side: int = 2000
    max_crops: int = 8
    # Zones read with less confidence are noise (icons, pictures, ruled lines) and are dropped.
    min_confidence: float = 0.2
    timeout_s: float = 10.0
    crop_timeout_s: float = 4.0
    max_pixels: int = 4096 * 4096
    lang: str = "eng"

    def __post_init__(self) -> None:
        if not 0.1 <= self.half_scale <= 1.0:
            raise ValueError("half_scale must be in [0.1, 1]")
        if not 0.0 <= self.min_confidence <= self.low_confidence <= 1.0:
            raise ValueError("need 0 <= min_confidence <= low_confidence <= 1")
        if self.max_crops < 0 or self.max_crop_side < 64 or self.timeout_s <= 0 or self.crop_timeout_s <= 0:
            raise ValueError("max_crops >= 0, max_crop_side >= 64 and positive timeouts are required")

    @property
    def crop_factor(self) -> float:
        return self.target_dpi / self.screen_dpi


@dataclass(frozen=True, slots=True)
class OcrReading:
    """What one read found and how: the zones (redacted), the passes' times and how many crops ran and
    how many replaced the half pass's zones."""

    zones: tuple[OcrZone, ...]
    half_pass_ms: float
    crop_pass_ms: float
    crops_tried: int
    crops_used: int


@dataclass(frozen=True, slots=True)
class _Zone:
    text: str
    confidence: float
    box: Box
    block: int

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


def _inside(point: tuple[int, int], box: Box) -> bool:
    return box[0] <= point[0] < box[2] and box[1] <= point[1] < box[3]


def _overlap(a: Box, b: Box) -> bool:
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]


def _union(a: Box, b: Box) -> Box:
    return min(a[0], b[0]), min(a[1], b[1]), max(a[2], b[2]), max(a[3], b[3])


def _weighted_confidence(zones: Sequence[_Zone]) -> float:
    """Mean confidence weighted by characters: a long line read well outweighs a stray glyph."""
    weights = [max(1, len(zone.text)) for zone in zones]
    return sum(z.confidence * w for z, w in zip(zones, weights, strict=True)) / max(1, sum(weights))


def _run_tesseract(image: Image.Image, config: str, lang: str, timeout_s: float) -> dict[str, list[object]]:
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


def _zones_from_data(data: dict[str, list[object]], to_original: Callable[[Box], Box]) -> list[_Zone]:
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
    for (block, _, _), words in lines.items():
        box = words[0][2]
        for _, _, word_box in words[1:]:
            box = _union(box, word_box)
        text = " ".join(word for word, _, _ in words)
        confidence = min(1.0, sum(conf for _, conf, _ in words) / len(words))
        zones.append(_Zone(text, confidence, to_original(box), block))
    return zones


def _scaler(
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


def _decode(png: bytes, max_pixels: int) -> Image.Image:
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


def _half_pass(gray: Image.Image, settings: ScreenOcrSettings) -> list[_Zone]:
    width, height = gray.size
    small = gray.resize(
        (max(1, round(width * settings.half_scale)), max(1, round(height * settings.half_scale))),
        Image.Resampling.LANCZOS,
    )
    config = "--oem 1 --psm 11 -c textord_min_xheight=4"
    data = _run_tesseract(small, config, settings.lang, settings.timeout_s)
    to_original = _scaler(width / small.width, height / small.height, (0, 0), gray.size)
    return _zones_from_data(data, to_original)


def _seeds(zones: Sequence[_Zone], settings: ScreenOcrSettings) -> list[tuple[Box, int]]:
    """Regions for the crop pass: low-confidence dense zones, each widened by its line height (two
    sideways) and merged with those it then overlaps; with each region's typical line height."""
    regions: list[tuple[Box, int]] = []
    for zone in zones:
        if zone.confidence >= settings.low_confidence or zone.density < settings.dense_chars_per_kpx:
            continue
        x0, y0, x1, y1 = zone.box
        line = max(4, y1 - y0)
        box, lines = (x0 - 2 * line, y0 - line, x1 + 2 * line, y1 + line), [line]
        merged = True
        while merged:
            merged = False
            for other in list(regions):
                if _overlap(box, other[0]):
                    regions.remove(other)
                    box, lines, merged = _union(box, other[0]), [*lines, other[1]], True
        regions.append((box, int(np.median(lines))))
    return regions


def _grow(ink: np.ndarray, box: Box, step: int, limit: tuple[int, int]) -> Box:
    """The box grown, a step at a time on each side, while the strip beyond it holds ink, so a region
    seeded on part of a paragraph takes in its first and last lines and whole line ends; at most
    `limit` (width, height) unless the seed was larger already."""
    height, width = ink.shape
    x0, y0, x1, y1 = max(0, box[0]), max(0, box[1]), min(width, box[2]), min(height, box[3])
    max_w, max_h = max(limit[0], x1 - x0), max(limit[1], y1 - y0)
    for _ in range(256):
        grown = (
            max(0, x0 - step) if x1 - x0 + step <= max_w and ink[y0:y1, max(0, x0 - step) : x0].any() else x0,
            max(0, y0 - step) if y1 - y0 + step <= max_h and ink[max(0, y0 - step) : y0, x0:x1].any() else y0,
            min(width, x1 + step) if x1 - x0 + step <= max_w and ink[y0:y1, x1 : x1 + step].any() else x1,
            min(height, y1 + step) if y1 - y0 + step <= max_h and ink[y1 : y1 + step, x0:x1].any() else y1,
        )
        if grown == (x0, y0, x1, y1):
            break
        x0, y0, x1, y1 = grown
    return x0, y0, x1, y1


def _crop_regions(gray: Image.Image, zones: Sequence[_Zone], settings: ScreenOcrSettings) -> list[Box]:
    """The regions the crop pass reads, largest first, at most `max_crops`."""
    seeds = _seeds(zones, settings)
    if not seeds:
        return []
    pixels = np.asarray(gray)
    background = int(np.median(pixels))
    ink = np.abs(pixels.astype(np.int16) - background) > _INK_CONTRAST
    side = int(settings.max_crop_side / settings.crop_factor)
    regions: list[Box] = []
    for box, line in seeds:
        grown = _grow(ink, box, max(2, line // 2), (side, side))
        # Regions grown into each other are read once.
        for other in [r for r in regions if _overlap(r, grown)]:
            regions.remove(other)
            grown = _union(grown, other)
        regions.append(grown)
    regions.sort(key=lambda r: (r[2] - r[0]) * (r[3] - r[1]), reverse=True)
    return regions[: settings.max_crops]


def _read_crop(gray: Image.Image, region: Box, settings: ScreenOcrSettings) -> list[_Zone] | None:
    """The region read at ~300 DPI, or None when it cannot be (too large to gain, or Tesseract failed)."""
    x0, y0, x1, y1 = region
    factor = min(settings.crop_factor, settings.max_crop_side / max(x1 - x0, y1 - y0, 1))
    if factor < 1.0:
        return None
    crop = gray.crop(region)
    upscaled = crop.resize(
        (max(1, round(crop.width * factor)), max(1, round(crop.height * factor))), Image.Resampling.LANCZOS
    )
    try:
        data = _run_tesseract(upscaled, "--oem 1 --psm 6", settings.lang, settings.crop_timeout_s)
    except OcrError:
        return None  # the half pass's zones stay
    to_original = _scaler(crop.width / upscaled.width, crop.height / upscaled.height, (x0, y0), gray.size)
    return _zones_from_data(data, to_original)


def _replace(zones: list[_Zone], region: Box, read: list[_Zone], low_confidence: float) -> list[_Zone] | None:
    """The zones with those of the region the half pass read poorly replaced by the crop's, or None when
    the crop did not read them better. Confident half-pass zones in the region stay, and crop zones on
    them are dropped (the same text twice)."""
    inside = [zone for zone in zones if _inside(zone.center, region)]
    poor = [zone for zone in inside if zone.confidence < low_confidence]
    kept = [zone.box for zone in inside if zone.confidence >= low_confidence]
    fresh = [zone for zone in read if not any(_inside(zone.center, box) for box in kept)]
    if not poor or not fresh or _weighted_confidence(fresh) <= _weighted_confidence(poor):
        return None
    return [zone for zone in zones if zone not in poor] + fresh


def _redacted_texts(
    texts: Sequence[str], engine: RedactionEngine, context: RedactionContext, app: str | None
) -> list[str]:
    """Each text with its findings replaced by their placeholders; the texts are scanned as one (lines
    joined) so a value split over two zones is still found. Fails closed: a red result without findings
    (an engine error, a red-listed app) withholds every text; a red one with findings, those it touches."""
    scanned = engine.redact_lines(texts, context=context, app=app)
    result = scanned.result
    if result.level is Level.RED and not result.findings:
        return [WITHHELD_TEXT] * len(texts)
    redacted = []
    for number, text in enumerate(texts):
        spans = sorted(scanned.spans_on(number), key=lambda span: span.start)
        if spans and result.level is Level.RED:
            redacted.append(WITHHELD_TEXT)
            continue
        pieces, cursor = [], 0
        for span in spans:
            pieces += [text[cursor : max(cursor, span.start)], result.findings[span.finding].placeholder]
            cursor = max(cursor, span.end)
        redacted.append("".join([*pieces, text[cursor:]]))
    return redacted


def _workers() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - not Linux
        return max(1, os.cpu_count() or 1)


class ScreenOcr:
    """Reads OCR zones from a (redacted) PNG frame; safe to share between threads.

    `engine` is the text redaction every zone's text passes through (default: the built-in policy);
    `context` numbers placeholders (the same value gets the same [TYPE_n] across reads of this reader)."""

    def __init__(
        self,
        engine: RedactionEngine | None = None,
        *,
        settings: ScreenOcrSettings | None = None,
        context: RedactionContext | None = None,
    ) -> None:
        self._engine = engine if engine is not None else RedactionEngine()
        self._settings = settings if settings is not None else ScreenOcrSettings()
        self._context = context if context is not None else RedactionContext.random()
        # Crops are read in parallel, one single-threaded Tesseract each: its OpenMP threads would fight
        # each other on a small machine (as kronii.redaction.pixels found); an operator's own limit stays.
        os.environ.setdefault("OMP_THREAD_LIMIT", "1")

    def read(self, png: bytes) -> tuple[OcrZone, ...]:
        """The frame's text zones, in reading order. Raises OcrError (a sentence) when it cannot be read."""
        return self.read_detailed(png).zones

    def read_detailed(self, png: bytes, *, app: str | None = None) -> OcrReading:
        """`read`, with the passes' times and how the crop pass went (the benchmark and tests use them)."""
        settings = self._settings
        gray = _decode(png, settings.max_pixels)
        started = time.perf_counter()
        zones = _half_pass(gray, settings)
        half_ms = (time.perf_counter() - started) * 1000
        started = time.perf_counter()
        regions = _crop_regions(gray, zones, settings) if settings.max_crops else []
        used = 0
        if regions:
            with ThreadPoolExecutor(min(_workers(), len(regions)), thread_name_prefix="vision-ocr") as pool:
                reads = list(pool.map(lambda region: _read_crop(gray, region, settings), regions))
            for region, read in zip(regions, reads, strict=True):
                better = _replace(zones, region, read, settings.low_confidence) if read else None
                if better is not None:
                    zones, used = better, used + 1
        crop_ms = (time.perf_counter() - started) * 1000
        kept = sorted(
            (zone for zone in zones if zone.confidence >= settings.min_confidence),
            key=lambda zone: (zone.box[1], zone.box[0]),
        )
        texts = (
            _redacted_texts([zone.text for zone in kept], self._engine, self._context, app) if kept else []
        )
        final = tuple(
            OcrZone(text, round(zone.confidence, 3), Bounds(x0, y0, x1 - x0, y1 - y0))
            for zone, text in zip(kept, texts, strict=True)
            for x0, y0, x1, y1 in [zone.box]
        )
        return OcrReading(final, half_ms, crop_ms, len(regions), used)
