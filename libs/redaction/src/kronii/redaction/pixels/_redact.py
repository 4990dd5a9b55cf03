"""redact_image: OCR a frame, run the text engine over its lines, fill what it found, or withhold the frame.

Fails closed: any exception (decoding, Tesseract, the engine, filling) gives no image and level red, with a
reason that names the stage and the exception's type, never its message (which could quote the frame's text);
only ImageInputError's own sentences, which never quote content, are shown as they are.
"""

from __future__ import annotations

import time
from collections.abc import Sequence

from PIL import Image

from .._context import RedactionContext
from .._engine import RedactionEngine
from .._model import Level
from .._policy import PolicyHints, RedactionPolicy
from ._fill import FILL, boxes_for_spans, fill, masked_share
from ._io import ImageInputError, load_image
from ._layout import assemble_lines
from ._model import Box, ImageFinding, ImageRedaction
from ._ocr import read_words
from ._prepare import flatten, prepare
from ._settings import OcrSettings
from ._tolerance import normalize_line, widen, with_ocr_patterns

__all__ = ["REGION_DETECTOR", "REGION_TYPE", "redact_image"]

REGION_TYPE = "REGION"
REGION_DETECTOR = "extra_region"

Rect = Box | tuple[int, int, int, int]


def _withheld(reason: str, findings: Sequence[ImageFinding] = (), ocr_ms: float = 0.0) -> ImageRedaction:
    return ImageRedaction(None, Level.RED, reason, tuple(findings), 0.0, ocr_ms)


def _frame(image: Image.Image | bytes, region: Rect | None) -> tuple[Image.Image, Box]:
    source = load_image(image) if isinstance(image, bytes | bytearray) else image
    if not isinstance(source, Image.Image):
        raise TypeError("image must be a PIL image or PNG/JPEG bytes")
    frame = flatten(source)
    area = Box(0, 0, *frame.size) if region is None else Box.of(region).clip(*frame.size)
    if area.empty:
        raise ValueError("the region holds no pixels of the image")
    return (frame if area == Box(0, 0, *frame.size) else frame.crop(area.as_tuple())), area


def _verify(image: Image.Image, boxes: Sequence[Box]) -> None:
    for box in boxes:
        if not box.empty and image.crop(box.as_tuple()).getextrema() != tuple((c, c) for c in FILL):
            raise RuntimeError("a filled box is not uniform")


def redact_image(
    image: Image.Image | bytes,
    *,
    engine: RedactionEngine,
    policy: RedactionPolicy | None = None,
    context: RedactionContext | None = None,
    region: Rect | None = None,
    extra_regions: Sequence[Rect] = (),
    app: str | None = None,
    hints: PolicyHints | None = None,
    settings: OcrSettings | None = None,
) -> ImageRedaction:
    """Redact a screenshot (a PIL image, or PNG/JPEG bytes).

    `region` (x0, y0, x1, y1) restricts the work to a window's rectangle; the result is then that crop,
    since what was not read must not leave. `extra_regions` (in the input's coordinates) are filled whatever
    OCR reads: e.g. a plugin's password field. Boxes in the result are in the output image's coordinates.
    """
    policy = policy if policy is not None else engine.policy
    settings = settings if settings is not None else OcrSettings()
    stage, ocr_ms = "input", 0.0
    try:
        if engine.policy.is_red_app(app) or policy.is_red_app(app):
            return _withheld("content of a red-listed app")
        frame, area = _frame(image, region)
        stage, started = "ocr", time.perf_counter()
        prepared = prepare(frame, settings)
        lines = assemble_lines(read_words(prepared, settings))
        ocr_ms = (time.perf_counter() - started) * 1000
        stage = "text engine"
        tolerant = settings.tolerant
        texts = [normalize_line(line.text) if tolerant else line.text for line in lines]
        redaction = engine.redact_lines(
            texts, context=context, app=app, hints=with_ocr_patterns(hints) if tolerant else hints
        )
        result = redaction.result
        found = [ImageFinding(f.type, f.detector, f.confidence, ()) for f in result.findings]
        if result.level is Level.RED:
            return _withheld(f"text engine: {result.reason}", found, ocr_ms)
        stage = "fill"
        spans = widen(redaction.line_spans, lines) if tolerant else redaction.line_spans
        bars = boxes_for_spans(spans, lines, prepared.scale, prepared.binary)
        if set(bars) != set(range(len(found))):
            raise RuntimeError("a finding has no box to fill")
        findings = [
            ImageFinding(f.type, f.detector, f.confidence, tuple(bars[n])) for n, f in enumerate(found)
        ]
        for rect in extra_regions:
            box = Box.of(rect).shift(-area.x0, -area.y0).clip(*frame.size)
            if not box.empty:
                findings.append(ImageFinding(REGION_TYPE, REGION_DETECTOR, 1.0, (box,)))
        boxes = [box for finding in findings for box in finding.boxes]
        share = masked_share(boxes, frame.size)
        if share > policy.max_masked_area:
            reason = f"masked share {share:.2f} above {policy.max_masked_area:.2f}"
            return ImageRedaction(None, Level.RED, reason, tuple(findings), share, ocr_ms)
        out = fill(frame, boxes)
        _verify(out, boxes)
        if not findings:
            return ImageRedaction(out, Level.GREEN, "nothing found", (), 0.0, ocr_ms, result.text)
        types = ", ".join(sorted({finding.type for finding in findings}))
        reason = f"masked {len(findings)}: {types}"
        return ImageRedaction(out, Level.AMBER, reason, tuple(findings), share, ocr_ms, result.text)
    except Exception as error:  # fail closed, whatever went wrong
        detail = str(error) if isinstance(error, ImageInputError) else type(error).__name__
        return _withheld(f"{stage} failed: {detail}", ocr_ms=ocr_ms)
