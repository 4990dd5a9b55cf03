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
