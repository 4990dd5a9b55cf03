"""redact_image: OCR a frame, run the text engine over its lines, fill what it found, or withhold the frame.

Fails closed: any exception (decoding, Tesseract, the engine, filling) gives no image and level red, with a
reason that names the stage and the exception's type, never its message (which could quote the frame's text);
only ImageInputError's own sentences, which never quote content, are shown as they are.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import replace

from PIL import Image, ImageChops

from .._context import RedactionContext
from .._engine import RedactionEngine
from .._lines import LineSpan, LinesRedaction
from .._model import Level, RedactionResult
from .._policy import PolicyHints, RedactionPolicy
from ._blocks import text_blocks
from ._fill import FILL, boxes_for_spans, fill, masked_share
from ._io import ImageInputError, load_image
from ._layers import colour_layer
from ._layout import OcrLine, assemble_lines, masked_text
from ._model import Box, ImageFinding, ImageRedaction
from ._ocr import OcrWord, read_regions
from ._prepare import flatten, prepare
from ._settings import OcrSettings
from ._tolerance import normalize_line, widen, with_ocr_patterns
from ._unreadable import unread_ink, unreadable

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


def _read(frame: Image.Image, settings: OcrSettings) -> tuple[Image.Image, list[OcrWord], float]:
    """The frame's words (boxes in its pixels), read block by block (and each block's coloured ink on its
    own layer), and the frame in black text on white (each block binarised at its own polarity, with its
    coloured ink) to find where glyphs end."""
    started = time.perf_counter()
    whole = Box(0, 0, *frame.size)
    # No block found (a blank frame, or text fainter than the block finder sees): read the page as a whole,
    # so that what Tesseract can still read there is read, and a failing Tesseract still fails closed.
    blocks = (text_blocks(frame) if settings.regions else []) or [whole]
    crops = [frame if block == whole else frame.crop(block.as_tuple()) for block in blocks]
    parts = [(prepare(crop, settings), block) for crop, block in zip(crops, blocks, strict=True)]
    binary = Image.new("L", frame.size, 255)
    for prepared, block in parts:
        binary.paste(prepared.binary, (block.x0, block.y0))
    if settings.colour_layers:
        for crop, block in zip(crops, blocks, strict=True):
            layer = colour_layer(crop)
            if layer is None:
                continue
            prepared = replace(prepare(layer, settings), layer=True)
            parts.append((prepared, block))
            ink = ImageChops.darker(binary.crop(block.as_tuple()), prepared.binary)
            binary.paste(ink, (block.x0, block.y0))
    words = read_regions(parts, settings)
    return binary, words, (time.perf_counter() - started) * 1000


_RANK = {Level.GREEN: 0, Level.AMBER: 1, Level.RED: 2}


def _covered(span: LineSpan, by: Sequence[LineSpan]) -> bool:
    return any(o.line == span.line and o.start <= span.start and span.end <= o.end for o in by)


def _merge(normal: LinesRedaction, raw: LinesRedaction) -> tuple[RedactionResult, list[LineSpan]]:
    """The findings on the normalised lines, plus those on the lines as read that they do not cover."""
    base = list(normal.line_spans)
    extra = [
        n
        for n in range(len(raw.result.findings))
        if not all(_covered(span, base) for span in raw.line_spans if span.finding == n)
    ]
    number = {old: len(normal.result.findings) + new for new, old in enumerate(extra)}
    spans = base + [
        LineSpan(span.line, span.start, span.end, number[span.finding])
        for span in raw.line_spans
        if span.finding in number
    ]
    worse = raw.result if _RANK[raw.result.level] > _RANK[normal.result.level] else normal.result
    findings = (*normal.result.findings, *(raw.result.findings[n] for n in extra))
    return replace(normal.result, findings=findings, level=worse.level, reason=worse.reason), spans


def _scan(
    lines: Sequence[OcrLine],
    engine: RedactionEngine,
    tolerant: bool,
    context: RedactionContext | None,
    app: str | None,
    hints: PolicyHints | None,
) -> tuple[RedactionResult, list[LineSpan]]:
    """The text engine over the OCR lines; with OCR tolerance, on normalised text with the lenient patterns,
    and on the text as read too: normalising reads a letter among digits as a digit, which breaks values
    whose letter is part of them (an ES DNI's check letter `12345678Z` becomes `123456782`)."""
    raw_texts = [line.text for line in lines]
    if not tolerant:
        plain = engine.redact_lines(raw_texts, context=context, app=app, hints=hints)
        return plain.result, list(plain.line_spans)
    texts = [normalize_line(text) for text in raw_texts]
    ocr_hints = with_ocr_patterns(hints)
    normal = engine.redact_lines(texts, context=context, app=app, hints=ocr_hints)
    if texts != raw_texts:
        raw = engine.redact_lines(raw_texts, context=context, app=app, hints=ocr_hints)
        result, spans = _merge(normal, raw)
    else:
        result, spans = normal.result, list(normal.line_spans)
    return result, widen(spans, lines, [finding.type for finding in result.findings])


def _findings(
    result: RedactionResult, spans: list[LineSpan], lines: Sequence[OcrLine], binary: Image.Image
) -> list[ImageFinding]:
    bars = boxes_for_spans(spans, lines, 1.0, binary)
    if set(bars) != set(range(len(result.findings))):
        raise RuntimeError("a finding has no box to fill")
    return [
        ImageFinding(f.type, f.detector, f.confidence, tuple(bars[n])) for n, f in enumerate(result.findings)
    ]


def _regions(extra_regions: Sequence[Rect], area: Box, size: tuple[int, int]) -> list[ImageFinding]:
    boxes = (Box.of(rect).shift(-area.x0, -area.y0).clip(*size) for rect in extra_regions)
    return [ImageFinding(REGION_TYPE, REGION_DETECTOR, 1.0, (box,)) for box in boxes if not box.empty]


def _masked(
    frame: Image.Image,
    findings: list[ImageFinding],
    policy: RedactionPolicy,
    ocr_ms: float,
    text: str,
    coverage: float = 0.0,
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
        return ImageRedaction(out, Level.GREEN, "nothing found", (), 0.0, ocr_ms, text, coverage)
    reason = f"masked {len(findings)}: {', '.join(sorted({finding.type for finding in findings}))}"
    return ImageRedaction(out, Level.AMBER, reason, tuple(findings), share, ocr_ms, text, coverage)


# A word read with at least this confidence counts as text on the frame (capture's text density).
_COVERAGE_CONF = 40.0


def text_coverage(words: Sequence[OcrWord], size: tuple[int, int]) -> float:
    """The share of the frame the words read with some confidence cover (a word read again on a
    colour layer counts once)."""
    width, height = size
    if width <= 0 or height <= 0:
        return 0.0
    covered = sum(
        word.box.area
        for word in words
        if not word.layer and word.conf >= _COVERAGE_CONF and word.text.strip()
    )
    return min(1.0, covered / float(width * height))


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
        binary, words, ocr_ms = _read(frame, settings)
        lines = assemble_lines(words)
        stage = "text engine"
        result, spans = _scan(lines, engine, settings.tolerant, context, app, hints)
        if result.level is Level.RED:
            found = [ImageFinding(f.type, f.detector, f.confidence, ()) for f in result.findings]
            return _withheld(f"text engine: {result.reason}", found, ocr_ms)
        stage = "fill"
        findings = [
            *_findings(result, spans, lines, binary),
            *unreadable(words, settings.min_conf, binary, settings.token_conf),
            *(unread_ink(frame, words) if settings.regions else ()),
            *_regions(extra_regions, area, frame.size),
        ]
        text = masked_text(lines, spans, [finding.placeholder for finding in result.findings])
        return _masked(frame, findings, policy, ocr_ms, text, text_coverage(words, frame.size))
    except Exception as error:  # fail closed, whatever went wrong
        detail = str(error) if isinstance(error, ImageInputError) else type(error).__name__
        return _withheld(f"{stage} failed: {detail}", ocr_ms=ocr_ms)
