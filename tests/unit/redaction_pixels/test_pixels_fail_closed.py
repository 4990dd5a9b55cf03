"""Failing closed: whatever breaks (OCR, the engine, a detector, filling, the input), no image comes back."""

from __future__ import annotations

import io
from collections.abc import Callable, Iterator
from typing import Any

import pytesseract
import pytest
from kronii.redaction import Level, RedactionEngine
from kronii.redaction.detectors import Candidate, EmailDetector, ScanText
from kronii.redaction.pixels import Box, ImageRedaction, OcrSettings, redact_image
from kronii.redaction.pixels import _redact as redact_module
from PIL import Image

from tests.unit.redaction_pixels.pixels_support import ONE_PASS, FakeWord, blank

Ocr = Callable[[list[FakeWord]], list[Image.Image]]


def _words() -> list[FakeWord]:
    return [("mail", Box(10, 20, 46, 34), 1), ("maria.keller@fastmail.com", Box(55, 20, 280, 34), 1)]


def _withheld(result: ImageRedaction, reason_start: str) -> None:
    assert result.image is None
    assert result.level is Level.RED
    assert result.reason.startswith(reason_start), result.reason
    assert "maria" not in result.reason and "fastmail" not in result.reason


def test_ocr_that_raises_withholds_the_image(
    monkeypatch: pytest.MonkeyPatch, engine: RedactionEngine
) -> None:
    def broken(*_: Any, **__: Any) -> None:
        raise pytesseract.TesseractError(1, "mail maria.keller@fastmail.com")

    monkeypatch.setattr(pytesseract, "image_to_data", broken)
    _withheld(redact_image(blank(), engine=engine), "ocr failed: TesseractError")


def test_a_missing_tesseract_binary_withholds_the_image(
    monkeypatch: pytest.MonkeyPatch, engine: RedactionEngine
) -> None:
    monkeypatch.setattr(pytesseract.pytesseract, "tesseract_cmd", "/nonexistent/bin/tesseract")
    _withheld(redact_image(blank(), engine=engine), "ocr failed: TesseractNotFoundError")


def test_ocr_in_one_band_failing_withholds_the_image(
    monkeypatch: pytest.MonkeyPatch, engine: RedactionEngine
) -> None:
    calls: list[int] = []

    def second_band_fails(image: Image.Image, **_: Any) -> dict[str, list[Any]]:
        calls.append(image.height)
        if len(calls) == 2:
            raise RuntimeError("Tesseract process timeout")
        return {key: [] for key in ("level", "text")}

    monkeypatch.setattr(pytesseract, "image_to_data", second_band_fails)
    image = blank(400, 800)
    for top in range(0, 800, 20):  # lines of "text" with blank rows between, so the frame is cut in two
        image.paste((0, 0, 0), (10, top + 4, 390, top + 14))
    result = redact_image(image, engine=engine, settings=OcrSettings(workers=2, scale=1.0))
    assert len(calls) == 2
    _withheld(result, "ocr failed: RuntimeError")


class _Boom:
    name = "boom"

    def detect(self, scan: ScanText) -> Iterator[Candidate]:
        raise RuntimeError(scan.text)


def test_a_detector_that_raises_withholds_the_image(fake_ocr: Ocr) -> None:
    fake_ocr(_words())
    engine = RedactionEngine(detectors=[EmailDetector(), _Boom()])
    result = redact_image(blank(), engine=engine, settings=ONE_PASS)
    _withheld(result, "text engine: engine error in boom")


def test_an_engine_that_raises_withholds_the_image(
    fake_ocr: Ocr, monkeypatch: pytest.MonkeyPatch, engine: RedactionEngine
) -> None:
    fake_ocr(_words())

    def broken(*_: Any, **__: Any) -> None:
        raise MemoryError

    monkeypatch.setattr(RedactionEngine, "redact_lines", broken)
    _withheld(redact_image(blank(), engine=engine, settings=ONE_PASS), "text engine failed: MemoryError")


def test_filling_that_leaves_pixels_withholds_the_image(
    fake_ocr: Ocr, monkeypatch: pytest.MonkeyPatch, engine: RedactionEngine
) -> None:
    fake_ocr(_words())
    image = Image.effect_noise((400, 120), 60).convert("RGB")
    monkeypatch.setattr(redact_module, "fill", lambda frame, boxes: frame.copy())
    _withheld(redact_image(image, engine=engine, settings=ONE_PASS), "fill failed: RuntimeError")


def test_filling_that_raises_withholds_the_image(
    fake_ocr: Ocr, monkeypatch: pytest.MonkeyPatch, engine: RedactionEngine
) -> None:
    fake_ocr(_words())

    def broken(*_: Any) -> None:
        raise OSError("draw failed")

    monkeypatch.setattr(redact_module, "fill", broken)
    _withheld(redact_image(blank(), engine=engine, settings=ONE_PASS), "fill failed: OSError")


@pytest.mark.parametrize(
    "data",
    [
        b"",
        b"GIF89a not really",
        b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR garbage",
        b"\xff\xd8\xff\xe0 broken jpeg",
    ],
)
def test_a_corrupt_image_withholds(data: bytes, engine: RedactionEngine) -> None:
    _withheld(redact_image(data, engine=engine), "input failed: not a readable PNG or JPEG image")


def test_a_truncated_png_withholds(engine: RedactionEngine) -> None:
    buffer = io.BytesIO()
    Image.effect_noise((300, 300), 60).convert("RGB").save(buffer, format="PNG")
    _withheld(
        redact_image(buffer.getvalue()[:5000], engine=engine), "input failed: not a readable PNG or JPEG"
    )


def test_an_unsupported_format_withholds(engine: RedactionEngine) -> None:
    buffer = io.BytesIO()
    blank().save(buffer, format="GIF")
    _withheld(redact_image(buffer.getvalue(), engine=engine), "input failed: unsupported image format GIF")


def test_a_region_outside_the_image_withholds(engine: RedactionEngine) -> None:
    _withheld(redact_image(blank(), engine=engine, region=(500, 500, 600, 600)), "input failed: ValueError")


def test_something_that_is_not_an_image_withholds(engine: RedactionEngine) -> None:
    _withheld(redact_image("shot.png", engine=engine), "input failed: TypeError")  # type: ignore[arg-type]
