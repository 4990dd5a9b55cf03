"""OCR zones of capture's redacted frame: a fast pass at half scale, then ~300 DPI crops where it read
small text poorly, and every zone's text through the text redaction engine.

- Half pass: the frame in grayscale (inverted when its background is dark), halved (Lanczos), read by
  Tesseract in sparse-text mode (psm 11) with the minimum x-height lowered to 4 px, so 14 px text (7 px
  once halved) is still found as text (psm 3 or 6 drop such lines); words grouped by Tesseract's block,
  paragraph and line into zones, each with the mean confidence of its words and bounds in the ORIGINAL
  frame's pixels.
- Crop pass: zones under `low_confidence` that are text-dense (many characters per area: small fonts)
  seed regions, merged with their neighbours and grown to the edge of the ink around them; each region
  of the original frame is upscaled to about 300 DPI (a 96 DPI screen: x3.125, less if a side would pass
  `max_crop_side`) and read with Tesseract's own layout analysis. The crop's zones replace the half
  pass's zones in the region when they read with a higher confidence.
- Redaction: the zones' texts are scanned together (a secret split over two lines is still seen) and each
  zone carries the redacted text; a zone the engine grades red carries WITHHELD_TEXT instead.

Every Tesseract run has a timeout, and an image over `max_pixels` is refused, so no frame hangs the service.
On a shared 2-core machine: the half pass of a 1280x800 window takes ~0.2 s, of a 1920x1080 desktop
~0.5 s; a crop of a ten-line 10 px paragraph ~0.4 s; the crops of a desktop full of 12-14 px text
(8 regions, two at a time) 1.1-3.7 s.

Known gap: text the half pass does not see at all seeds no crop; light text on a dark panel inside a light
frame (a terminal docked in a light IDE) is the usual case. A wholly dark frame is inverted and read.
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

# normalize_line and with_ocr_patterns: the OCR-tolerant patterns and look-alike normalisation the image
# redactor scans OCR lines with; these zones are OCR lines too, so they get the same tolerance.
from kronii.redaction.pixels import ImageInputError, load_image, normalize_line, with_ocr_patterns
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
    for words in lines.values():
        box = words[0][2]
        for _, _, word_box in words[1:]:
            box = _union(box, word_box)
        text = " ".join(word for word, _, _ in words)
        confidence = min(1.0, sum(conf for _, conf, _ in words) / len(words))
        zones.append(_Zone(text, confidence, to_original(box)))
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
    """Regions for the crop pass: low-confidence dense zones, each widened by its line height and merged
    with those it then overlaps; with each region's typical line height."""
    regions: list[tuple[Box, int]] = []
    for zone in zones:
        if zone.confidence >= settings.low_confidence or zone.density < settings.dense_chars_per_kpx:
            continue
        x0, y0, x1, y1 = zone.box
        line = max(4, min(y1 - y0, 2 * round((x1 - x0) / max(1, len(zone.text)))))
        box, lines = (x0 - line, y0 - line, x1 + line, y1 + line), [line]
        merged = True
        while merged:
            merged = False
            for other in list(regions):
                if _overlap(box, other[0]):
                    regions.remove(other)
                    box, lines, merged = _union(box, other[0]), [*lines, other[1]], True
        regions.append((box, int(np.median(lines))))
    return regions


def _beyond(ink: np.ndarray, strip: tuple[slice, slice], along: int) -> bool:
    """Whether the strip holds ink that is not a rule: a window's border or a separator runs through
    (nearly) all of the strip's length (`along`: 0 for a column strip, 1 for a row strip)."""
    part = ink[strip]
    return bool(part.any()) and not bool((part.mean(axis=along) >= 0.9).any())


def _grow(ink: np.ndarray, box: Box, line: int) -> Box:
    """The box grown, half a line at a time on each side, while the strip beyond it holds ink: a region
    seeded on part of a paragraph takes in its first and last lines and its lines' ends. At most three
    lines up and down and twelve sideways, and never across a rule, so it does not spread along a
    window or into the next one."""
    height, width = ink.shape
    x0, y0, x1, y1 = max(0, box[0]), max(0, box[1]), min(width, box[2]), min(height, box[3])
    low_x, low_y = max(0, x0 - 12 * line), max(0, y0 - 3 * line)
    high_x, high_y = min(width, x1 + 12 * line), min(height, y1 + 3 * line)
    step = max(2, line // 2)
    while True:
        left, top = max(low_x, x0 - step), max(low_y, y0 - step)
        right, bottom = min(high_x, x1 + step), min(high_y, y1 + step)
        grown = (
            left if _beyond(ink, (slice(y0, y1), slice(left, x0)), 0) else x0,
            top if _beyond(ink, (slice(top, y0), slice(x0, x1)), 1) else y0,
            right if _beyond(ink, (slice(y0, y1), slice(x1, right)), 0) else x1,
            bottom if _beyond(ink, (slice(y1, bottom), slice(x0, x1)), 1) else y1,
        )
        if grown == (x0, y0, x1, y1):
            return grown
        x0, y0, x1, y1 = grown


def _mostly_inside(box: Box, region: Box) -> bool:
    """Whether at least half of the box's area lies in the region."""
    width = min(box[2], region[2]) - max(box[0], region[0])
    height = min(box[3], region[3]) - max(box[1], region[1])
    area = (box[2] - box[0]) * (box[3] - box[1])
    return width > 0 and height > 0 and 2 * width * height >= area


def _settle(regions: list[Box], zones: Sequence[_Zone]) -> list[Box]:
    """Regions that overlap none of each other and hold whole every zone lying mostly in one of them:
    taking in a zone can reach into another region, and merging two can take in more zones."""
    for _ in range(16):
        settled: list[Box] = []
        for region in regions:
            for zone in zones:
                if _mostly_inside(zone.box, region):
                    region = _union(region, zone.box)
            for other in [r for r in settled if _overlap(r, region)]:
                settled.remove(other)
                region = _union(region, other)
            settled.append(region)
        if sorted(settled) == sorted(regions):
            break
        regions = settled
    return settled


def _crop_regions(gray: Image.Image, zones: Sequence[_Zone], settings: ScreenOcrSettings) -> list[Box]:
    """The regions the crop pass reads, largest first, at most `max_crops`, each seeded by poorly read
    dense zones and grown to the ink around them (see _settle for why they hold zones whole)."""
    seeds = _seeds(zones, settings)
    if not seeds:
        return []
    pixels = np.asarray(gray)
    background = int(np.median(pixels))
    ink = np.abs(pixels.astype(np.int16) - background) > _INK_CONTRAST
    regions = _settle([_grow(ink, box, line) for box, line in seeds], zones)
    regions.sort(key=lambda r: (r[2] - r[0]) * (r[3] - r[1]), reverse=True)
    return regions[: settings.max_crops]


def _read_crop(gray: Image.Image, region: Box, settings: ScreenOcrSettings) -> list[_Zone] | None:
    """The region read at ~300 DPI, or None when it cannot be (too large to gain, or Tesseract failed).
    psm 3 (automatic layout): a region may hold columns (a file list beside its sizes)."""
    x0, y0, x1, y1 = region
    factor = min(settings.crop_factor, settings.max_crop_side / max(x1 - x0, y1 - y0, 1))
    if factor < 1.0:
        return None
    crop = gray.crop(region)
    if np.median(np.asarray(crop)) < 128:  # a dark panel in a light frame (a terminal): dark text on light
        crop = ImageOps.invert(crop)
    upscaled = crop.resize(
        (max(1, round(crop.width * factor)), max(1, round(crop.height * factor))), Image.Resampling.LANCZOS
    )
    try:
        data = _run_tesseract(upscaled, "--oem 1 --psm 3", settings.lang, settings.crop_timeout_s)
    except OcrError:
        return None  # the half pass's zones stay
    to_original = _scaler(crop.width / upscaled.width, crop.height / upscaled.height, (x0, y0), gray.size)
    return _zones_from_data(data, to_original)


def _replace(zones: list[_Zone], region: Box, read: list[_Zone]) -> list[_Zone] | None:
    """The zones lying in the region replaced by the crop's, or None when the crop did not read them
    better: a higher mean confidence, and at least half as many characters (a crop that read three
    letters of a paragraph with confidence has not read it). Crop zones on a zone that stays (one
    reaching far out of the region) are dropped: the same text twice."""
    replaced = [zone for zone in zones if _mostly_inside(zone.box, region)]
    staying = [zone.box for zone in zones if zone not in replaced and _overlap(zone.box, region)]
    fresh = [zone for zone in read if not any(_inside(zone.center, box) for box in staying)]
    if not _reads_better(fresh, replaced):
        return None
    return [zone for zone in zones if zone not in replaced] + fresh


def _reads_better(fresh: list[_Zone], replaced: list[_Zone]) -> bool:
    """Whether the crop's zones read the region better than the zones they would replace."""
    if not replaced or not fresh or _weighted_confidence(fresh) <= _weighted_confidence(replaced):
        return False
    return 2 * sum(len(zone.text) for zone in fresh) >= sum(len(zone.text) for zone in replaced)


def _line_masks(
    texts: Sequence[str], engine: RedactionEngine, context: RedactionContext, app: str | None
) -> tuple[Level | None, list[list[tuple[int, int, str]]]]:
    """Each line's masked spans (start, end, placeholder), merged where they overlap, and the worst level
    (None: a red result without findings, e.g. an engine error or a red-listed app, so nothing may leave).

    The lines are scanned as one text (a value split over two zones is still seen), with the image
    redactor's OCR-tolerant patterns, as read and with digit look-alikes normalised (offsets do not move)."""
    hints = with_ocr_patterns(None)
    variants = [list(texts)]
    normalised = [normalize_line(text) for text in texts]
    if normalised != variants[0]:
        variants.append(normalised)
    level = Level.GREEN
    spans: list[list[tuple[int, int, str]]] = [[] for _ in texts]
    for lines in variants:
        scanned = engine.redact_lines(lines, context=context, app=app, hints=hints)
        result = scanned.result
        if result.level is Level.RED and not result.findings:
            return None, spans
        if result.level is Level.RED or level is Level.GREEN:
            level = result.level
        for span in scanned.line_spans:
            spans[span.line].append((span.start, span.end, result.findings[span.finding].placeholder))
    merged: list[list[tuple[int, int, str]]] = []
    for line in spans:
        merged.append([])
        for start, end, placeholder in sorted(line):
            if merged[-1] and start < merged[-1][-1][1]:
                last = merged[-1][-1]
                merged[-1][-1] = (last[0], max(last[1], end), last[2])
            else:
                merged[-1].append((start, end, placeholder))
    return level, merged


def _redacted_texts(
    texts: Sequence[str], engine: RedactionEngine, context: RedactionContext, app: str | None
) -> list[str]:
    """Each text with its findings replaced by their placeholders. Fails closed: when nothing may leave,
    every text is withheld; when the result is red, each text a finding touches."""
    level, masks = _line_masks(texts, engine, context, app)
    if level is None:
        return [WITHHELD_TEXT] * len(texts)
    redacted = []
    for text, mask in zip(texts, masks, strict=True):
        if mask and level is Level.RED:
            redacted.append(WITHHELD_TEXT)
            continue
        pieces, cursor = [], 0
        for start, end, placeholder in mask:
            pieces += [text[cursor:start], placeholder]
            cursor = end
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
                better = _replace(zones, region, read) if read else None
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
