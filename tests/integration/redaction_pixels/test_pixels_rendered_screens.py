"""Real Tesseract on screens drawn with Pillow (DejaVu Sans, Mono, Serif; 12-20 px; light and dark): what was
planted cannot be read back from the output, and the words around it still can."""

from __future__ import annotations

import io

import pytest
from kronii.redaction import Level, RedactionEngine
from kronii.redaction.pixels import ImageRedaction, png_bytes, redact_image

from tests.unit.redaction_pixels.pixels_support import (
    NEUTRAL,
    Screen,
    coverage,
    read_back,
    render_screen,
    squeeze,
    uniform,
)

STYLES = [
    ("sans", 12, "light"),
    ("mono", 14, "dark"),
    ("serif", 16, "light"),
    ("sans", 20, "dark"),
    ("mono", 12, "light"),
    ("serif", 20, "dark"),
]


def assert_cleaned(screen: Screen, result: ImageRedaction) -> None:
    assert result.level is Level.AMBER and result.image is not None, result.reason
    uncovered = [p.name for p in screen.planted if coverage(p.box, result.boxes) < 0.98]
    assert uncovered == []
    assert all(uniform(result.image, box) for box in result.boxes)
    readable = read_back(result.image)
    squeezed = squeeze(readable)
    for planted in screen.planted:
        assert squeeze(planted.value) not in squeezed
        assert [fragment for fragment in planted.fragments if squeeze(fragment) in squeezed] == []
    assert readable.count(NEUTRAL) >= 4  # the neutral word on the lines of the planted values


@pytest.mark.parametrize(("font", "size", "theme"), STYLES, ids=[f"{f}-{s}px-{t}" for f, s, t in STYLES])
def test_planted_values_are_unreadable_and_the_rest_stays_readable(
    font: str, size: int, theme: str, engine: RedactionEngine
) -> None:
    screen = render_screen(font, size, theme)
    assert_cleaned(screen, redact_image(screen.image, engine=engine))


def test_a_jpeg_screenshot_is_cleaned_and_comes_out_as_png(engine: RedactionEngine) -> None:
    screen = render_screen("sans", 16, "light")
    buffer = io.BytesIO()
    screen.image.save(buffer, format="JPEG", quality=85)
    result = redact_image(buffer.getvalue(), engine=engine)
    assert_cleaned(screen, result)
    assert result.image is not None and png_bytes(result.image).startswith(b"\x89PNG\r\n\x1a\n")
