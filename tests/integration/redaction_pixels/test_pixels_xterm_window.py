"""A real window: an xterm under Xvfb showing secrets, captured with mss, redacted within its rectangle."""

from __future__ import annotations

import pytest
from kronii.redaction import Level, RedactionEngine
from kronii.redaction.pixels import redact_image

from tests.unit.redaction_pixels.pixels_support import (
    FILLER,
    NEUTRAL,
    PLANTS,
    grab,
    read_back,
    squeeze,
    uniform,
    xterm_showing,
)

TEXT = "\n".join(
    line
    for n, plant in enumerate(PLANTS)
    for line in (FILLER[n % len(FILLER)], plant.before + plant.value + plant.after)
)


@pytest.mark.parametrize("theme", ["light", "dark"])
def test_a_captured_terminal_is_cleaned_within_its_window(
    x_display: str, engine: RedactionEngine, theme: str
) -> None:
    with xterm_showing(x_display, TEXT, size=12, theme=theme, geometry="72x12+40+60") as terminal:
        screen = grab(x_display)
    before = squeeze(read_back(screen.crop(terminal.box.as_tuple())))
    assert "maria.keller@fastmail.com" in before  # the capture really shows the values
    result = redact_image(screen, engine=engine, region=terminal.box)
    assert result.level is Level.AMBER and result.image is not None, result.reason
    assert result.image.size == (terminal.box.width, terminal.box.height)
    assert {f.type for f in result.findings} >= {"EMAIL", "PAYMENT_CARD", "PHONE"}
    assert all(uniform(result.image, box) for box in result.boxes)
    readable = read_back(result.image)
    squeezed = squeeze(readable)
    for plant in PLANTS:
        assert squeeze(plant.value) not in squeezed
        assert [fragment for fragment in plant.fragments if squeeze(fragment) in squeezed] == []
    assert readable.count(NEUTRAL) >= 4
    assert "staging pipeline" in readable  # lines without findings are untouched


ASSIGNMENTS = (
    "export AWS_SECRET_ACCESS_KEY=Zq8wR2nT5yHb0LmX/c4VdK7pS9fGj3AeU1oWi6Nz",
    "contact alice@exemple.com about the launch",
    "deploy_token: Tr0ub4dor-3-horse-staple",
)


def test_xterms_default_bitmap_font_hides_nothing_readable(x_display: str, engine: RedactionEngine) -> None:
    """xterm's own 6x13 font is the smallest text a terminal shows: OCR misreads it (a comma for a dot,
    a garbled key), and the OCR-tolerant patterns still cover every value."""
    text = "\n".join(
        [*ASSIGNMENTS, *(plant.before + plant.value + plant.after for plant in PLANTS), FILLER[0]]
    )
    with xterm_showing(x_display, text, theme="light", geometry="80x10+40+60", bitmap_font=True) as terminal:
        screen = grab(x_display)
    result = redact_image(screen, engine=engine, region=terminal.box)
    assert result.level is Level.AMBER and result.image is not None, result.reason
    readable = squeeze(read_back(result.image))
    for value in ("Zq8wR2nT5yHb0", "c4VdK7p", "3AeU1oWi6N", "alice@exemple", "Tr0ub4dor", "horse"):
        assert squeeze(value) not in readable, value
    for plant in PLANTS:
        assert squeeze(plant.value) not in readable
    assert "staging" in readable  # the filler line is untouched
