"""Fixtures for the image redaction unit tests: an engine, and a stand-in for Tesseract's word boxes."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytesseract
import pytest
from kronii.redaction import RedactionEngine
from kronii.redaction.pixels._ocr import OCR_BORDER
from PIL import Image

from tests.unit.redaction_pixels.pixels_support import FakeWord


@pytest.fixture(scope="session")
def engine() -> RedactionEngine:
    return RedactionEngine()


@pytest.fixture
def fake_ocr(monkeypatch: pytest.MonkeyPatch) -> Callable[[list[FakeWord]], list[Image.Image]]:
    """Replace pytesseract.image_to_data with one that 'reads' the given words (boxes in the coordinates of
    the image redact_image was given, before the white border added for Tesseract); returns what it saw."""
    seen: list[Image.Image] = []

    def install(words: list[FakeWord]) -> list[Image.Image]:
        def image_to_data(image: Image.Image, **_: Any) -> dict[str, list[Any]]:
            seen.append(image)
            data: dict[str, list[Any]] = {
                key: []
                for key in (
                    "level",
                    "block_num",
                    "par_num",
                    "line_num",
                    "word_num",
                    "left",
                    "top",
                    "width",
                    "height",
                    "conf",
                    "text",
                )
            }
            for number, (text, box, line) in enumerate(words):
                left, top = box.x0 + OCR_BORDER, box.y0 + OCR_BORDER
                row = (5, 1, 1, line, number + 1, left, top, box.width, box.height, 95, text)
                for key, value in zip(data, row, strict=True):
                    data[key].append(value)
            return data

        monkeypatch.setattr(pytesseract, "image_to_data", image_to_data)
        return seen

    return install
