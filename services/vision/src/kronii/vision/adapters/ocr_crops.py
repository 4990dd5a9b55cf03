"""The crop pass: regions seeded by poorly read dense zones, grown to the ink around them and
settled so they hold zones whole; each read at ~300 DPI, and its zones kept where they read the
region better than the half pass did."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from kronii.vision.adapters.ocr_settings import ScreenOcrSettings
from kronii.vision.adapters.ocr_zones import (
    Box,
    OcrError,
    Zone,
    inside,
    overlap,
    run_tesseract,
    scaler,
    union,
    weighted_confidence,
    zones_from_data,
)
from PIL import Image, ImageOps

__all__ = ["crop_regions", "read_crop", "replace_zones"]

_INK_CONTRAST = 48  # grey levels from the background that count as ink when a region is grown


def _seeds(zones: Sequence[Zone], settings: ScreenOcrSettings) -> list[tuple[Box, int]]:
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
                if overlap(box, other[0]):
                    regions.remove(other)
                    box, lines, merged = union(box, other[0]), [*lines, other[1]], True
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


def _settle(regions: list[Box], zones: Sequence[Zone]) -> list[Box]:
    """Regions that overlap none of each other and hold whole every zone lying mostly in one of them:
    taking in a zone can reach into another region, and merging two can take in more zones."""
    for _ in range(16):
        settled: list[Box] = []
        for region in regions:
            for zone in zones:
                if _mostly_inside(zone.box, region):
                    region = union(region, zone.box)
            for other in [r for r in settled if overlap(r, region)]:
                settled.remove(other)
                region = union(region, other)
            settled.append(region)
        if sorted(settled) == sorted(regions):
            break
        regions = settled
    return settled


def crop_regions(gray: Image.Image, zones: Sequence[Zone], settings: ScreenOcrSettings) -> list[Box]:
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


def read_crop(gray: Image.Image, region: Box, settings: ScreenOcrSettings) -> list[Zone] | None:
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
        data = run_tesseract(upscaled, "--oem 1 --psm 3", settings.lang, settings.crop_timeout_s)
    except OcrError:
        return None  # the half pass's zones stay
    to_original = scaler(crop.width / upscaled.width, crop.height / upscaled.height, (x0, y0), gray.size)
    return zones_from_data(data, to_original)


def replace_zones(zones: list[Zone], region: Box, read: list[Zone]) -> list[Zone] | None:
    """The zones lying in the region replaced by the crop's, or None when the crop did not read them
    better: a higher mean confidence, and at least half as many characters (a crop that read three
    letters of a paragraph with confidence has not read it). Crop zones on a zone that stays (one
    reaching far out of the region) are dropped: the same text twice."""
    replaced = [zone for zone in zones if _mostly_inside(zone.box, region)]
    staying = [zone.box for zone in zones if zone not in replaced and overlap(zone.box, region)]
    fresh = [zone for zone in read if not any(inside(zone.center, box) for box in staying)]
    if not _reads_better(fresh, replaced):
        return None
    return [zone for zone in zones if zone not in replaced] + fresh


def _reads_better(fresh: list[Zone], replaced: list[Zone]) -> bool:
    """Whether the crop's zones read the region better than the zones they would replace."""
    if not replaced or not fresh or weighted_confidence(fresh) <= weighted_confidence(replaced):
        return False
    return 2 * sum(len(zone.text) for zone in fresh) >= sum(len(zone.text) for zone in replaced)
