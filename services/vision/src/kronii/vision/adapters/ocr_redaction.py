"""The OCR zones' texts through the text redaction engine, scanned together (a secret split over two
lines is still seen), failing closed."""

from __future__ import annotations

from collections.abc import Sequence

from kronii.redaction import WITHHELD_TEXT, Level, RedactionContext, RedactionEngine

# normalize_line and with_ocr_patterns: the OCR-tolerant patterns and look-alike normalisation the image
# redactor scans OCR lines with; these zones are OCR lines too, so they get the same tolerance.
from kronii.redaction.pixels import normalize_line, with_ocr_patterns

__all__ = ["redacted_texts"]


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


def redacted_texts(
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
