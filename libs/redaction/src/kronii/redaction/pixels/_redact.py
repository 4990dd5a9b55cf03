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
from .._lines import LineSpan
from .._model import Level, RedactionResult
from .._policy import PolicyHints, RedactionPolicy
from ._fill import FILL, boxes_for_spans, fill, masked_share
from ._io import ImageInputError, load_image
from ._layout import OcrLine, assemble_lines, masked_text
from ._model import Box, ImageFinding, ImageRedaction
from ._ocr import read_words
from ._prepare import Prepared, flatten, prepare
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


def _read(frame: Image.Image, settings: OcrSettings) -> tuple[Prepared, list[OcrLine], float]:
    started = time.perf_counter()
    prepared = prepare(frame, settings)
    lines = assemble_lines(read_words(prepared, settings))
    return prepared, lines, (time.perf_counter() - started) * 1000


def _scan(
    lines: Sequence[OcrLine],
    engine: RedactionEngine,
    tolerant: bool,
    context: RedactionContext | None,
    app: str | None,
    hints: PolicyHints | None,
) -> tuple[RedactionResult, list[LineSpan]]:
    """The text engine over the OCR lines; with OCR tolerance, on normalised text with the lenient patterns."""
    if not tolerant:
        plain = engine.redact_lines([line.text for line in lines], context=context, app=app, hints=hints)
        return plain.result, list(plain.line_spans)
    texts = [normalize_line(line.text) for line in lines]
    redaction = engine.redact_lines(texts, context=context, app=app, hints=with_ocr_patterns(hints))
    return redaction.result, widen(redaction.line_spans, lines)


def _findings(
    result: RedactionResult, spans: list[LineSpan], lines: Sequence[OcrLine], prepared: Prepared
) -> list[ImageFinding]:
    bars = boxes_for_spans(spans, lines, prepared.scale, prepared.binary)
    if set(bars) != set(range(len(result.findings))):
        raise RuntimeError("a finding has no box to fill")
    return [
        ImageFinding(f.type, f.detector, f.confidence, tuple(bars[n])) for n, f in enumerate(result.findings)
    ]


def _regions(extra_regions: Sequence[Rect], area: Box, size: tuple[int, int]) -> list[ImageFinding]:
    boxes = (Box.of(rect).shift(-area.x0, -area.y0).clip(*size) for rect in extra_regions)
    return [ImageFinding(REGION_TYPE, REGION_DETECTOR, 1.0, (box,)) for box in boxes if not box.empty]


def _masked(
    frame: Image.Image, findings: list[ImageFinding], policy: RedactionPolicy, ocr_ms: float, text: str
) -> ImageRedaction:
    """Fill every box, unless that would mask more of the frame than the policy allows."""
    boxes = [box for finding in findings for box in finding.boxes]
    share = masked_share(boxes, frame.size)
    if share > policy.max_masked_area:
        reason = f"masked share {share:.2f} above {policy.max_masked_area:.2f}"
        return ImageRedaction(None, Level.RED, reason, tuple(findings), share, ocr_ms)
    out = fill(frame, boxes)
    _verify(out, boxes)
    if not findings:
        return ImageRedaction(out, Level.GREEN, "nothing found", (), 0.0, ocr_ms, text)
    reason = f"masked {len(findings)}: {', '.join(sorted({finding.type for finding in findings}))}"
    return ImageRedaction(out, Level.AMBER, reason, tuple(findings), share, ocr_ms, text)


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
    `policy` (default: the engine's) sets max_masked_area; `settings` tunes Tesseract.
    """
    policy = policy if policy is not None else engine.policy
    settings = settings if settings is not None else OcrSettings()
    stage, ocr_ms = "input", 0.0
    try:
        if engine.policy.is_red_app(app) or policy.is_red_app(app):
            return _withheld("content of a red-listed app")
        frame, area = _frame(image, region)
        stage = "ocr"
        prepared, lines, ocr_ms = _read(frame, settings)
        stage = "text engine"
        result, spans = _scan(lines, engine, settings.tolerant, context, app, hints)
        if result.level is Level.RED:
            found = [ImageFinding(f.type, f.detector, f.confidence, ()) for f in result.findings]
            return _withheld(f"text engine: {result.reason}", found, ocr_ms)
        stage = "fill"
        findings = _findings(result, spans, lines, prepared) + _regions(extra_regions, area, frame.size)
        text = masked_text(lines, spans, [finding.placeholder for finding in result.findings])
        return _masked(frame, findings, policy, ocr_ms, text)
    except Exception as error:  # fail closed, whatever went wrong
        detail = str(error) if isinstance(error, ImageInputError) else type(error).__name__
        return _withheld(f"{stage} failed: {detail}", ocr_ms=ocr_ms)
