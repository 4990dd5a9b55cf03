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

import os
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from kronii.redaction import RedactionContext, RedactionEngine, shared_engine
from kronii.vision.adapters.ocr_crops import crop_regions, read_crop, replace_zones
from kronii.vision.adapters.ocr_redaction import redacted_texts
from kronii.vision.adapters.ocr_settings import ScreenOcrSettings
from kronii.vision.adapters.ocr_zones import Zone, decode_frame, run_tesseract, scaler, zones_from_data
from kronii.vision.core.context import Bounds, OcrZone
from PIL import Image

__all__ = ["OcrReading", "ScreenOcr"]


@dataclass(frozen=True, slots=True)
class OcrReading:
    """What one read found and how: the zones (redacted), the passes' times and how many crops ran and
    how many replaced the half pass's zones."""

    zones: tuple[OcrZone, ...]
    half_pass_ms: float
    crop_pass_ms: float
    crops_tried: int
    crops_used: int


def _half_pass(gray: Image.Image, settings: ScreenOcrSettings) -> list[Zone]:
    width, height = gray.size
    small = gray.resize(
        (max(1, round(width * settings.half_scale)), max(1, round(height * settings.half_scale))),
        Image.Resampling.LANCZOS,
    )
    config = "--oem 1 --psm 11 -c textord_min_xheight=4"
    data = run_tesseract(small, config, settings.lang, settings.timeout_s)
    to_original = scaler(width / small.width, height / small.height, (0, 0), gray.size)
    return zones_from_data(data, to_original)


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
        self._engine = engine if engine is not None else shared_engine()
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
        gray = decode_frame(png, settings.max_pixels)
        started = time.perf_counter()
        zones = _half_pass(gray, settings)
        half_ms = (time.perf_counter() - started) * 1000
        started = time.perf_counter()
        regions = crop_regions(gray, zones, settings) if settings.max_crops else []
        used = 0
        if regions:
            with ThreadPoolExecutor(min(_workers(), len(regions)), thread_name_prefix="vision-ocr") as pool:
                reads = list(pool.map(lambda region: read_crop(gray, region, settings), regions))
            for region, read in zip(regions, reads, strict=True):
                better = replace_zones(zones, region, read) if read else None
                if better is not None:
                    zones, used = better, used + 1
        crop_ms = (time.perf_counter() - started) * 1000
        kept = sorted(
            (zone for zone in zones if zone.confidence >= settings.min_confidence),
            key=lambda zone: (zone.box[1], zone.box[0]),
        )
        texts = redacted_texts([zone.text for zone in kept], self._engine, self._context, app) if kept else []
        final = tuple(
            OcrZone(text, round(zone.confidence, 3), Bounds(x0, y0, x1 - x0, y1 - y0))
            for zone, text in zip(kept, texts, strict=True)
            for x0, y0, x1, y1 in [zone.box]
        )
        return OcrReading(final, half_ms, crop_ms, len(regions), used)
