"""Redacting screenshots: blocks of text found first, each read by Tesseract at its own scale and polarity,
the text engine over whole lines, solid fills over the findings' words, fail closed. Text OCR could not read
(low confidence, or text-shaped ink read as nothing) is filled too, as UNREADABLE: never green.

    result = redact_image(png, engine=engine, context=context, region=window_box, extra_regions=fields)
    if result.image is None: ...          # withheld: result.level is red and result.reason says why
    send(png_bytes(result.image))         # amber or green: every finding filled solid

Findings carry type, detector, confidence and boxes, never the text that was under them.
"""

from ._io import ACCEPTED_FORMATS, ImageInputError, load_image, png_bytes
from ._model import Box, ImageFinding, ImageRedaction
from ._redact import REGION_DETECTOR, REGION_TYPE, redact_image
from ._settings import OcrSettings
from ._tolerance import normalize_line, with_ocr_patterns
from ._unreadable import UNREADABLE_DETECTOR, UNREADABLE_TYPE

__all__ = [
    "ACCEPTED_FORMATS",
    "REGION_DETECTOR",
    "REGION_TYPE",
    "UNREADABLE_DETECTOR",
    "UNREADABLE_TYPE",
    "Box",
    "ImageFinding",
    "ImageInputError",
    "ImageRedaction",
    "OcrSettings",
    "load_image",
    "normalize_line",
    "png_bytes",
    "redact_image",
    "with_ocr_patterns",
]
