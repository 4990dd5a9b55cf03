"""Helpers for the redaction unit tests: run one detector and read back (type, value) pairs."""

from __future__ import annotations

from kronii.redaction.detectors import Detector, ScanText

Found = list[tuple[str, str]]


def detect(detector: Detector, text: str) -> Found:
    """What a detector reports, as (type, matched text) in text order. Tests may see values; findings may not."""
    candidates = sorted(detector.detect(ScanText(text)), key=lambda c: (c.start, c.end))
    return [(str(c.type), text[c.start : c.end]) for c in candidates]


def values(detector: Detector, text: str) -> list[str]:
    return [value for _, value in detect(detector, text)]
