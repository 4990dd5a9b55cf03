"""Coloured text read on its own layer (real Tesseract): `grep --color`'s red on a dark theme, whose grey is
next to the background's, is masked; a coloured highlight behind dark text is no layer of its own."""

from __future__ import annotations

from kronii.redaction import RedactionEngine
from kronii.redaction.pixels import Box, OcrSettings, redact_image
from kronii.redaction.pixels._layers import colour_layer
from PIL import Image, ImageDraw, ImageFont

from tests.unit.redaction_pixels.pixels_support import FONTS, coverage

DARK, WHITE, RED, YELLOW, BLACK = (40, 42, 54), (236, 236, 230), (205, 0, 0), (205, 205, 0), (0, 0, 0)
VALUES = ("ghp_nA1hE3DCM4PwBxWc11NhOoSfAnFdpRaj71Ft", "fatima.silva@posteo.de")


def _grep_screen(size: int = 13) -> tuple[Image.Image, list[Box]]:
    """Lines as `grep --color=always` shows them on a dark xterm: the matches in red, the rest in white."""
    face = ImageFont.truetype(FONTS["mono"], size)
    image = Image.new("RGB", (760, 150), DARK)
    draw = ImageDraw.Draw(image)
    boxes = []
    rows = [("review the staging pipeline", "", ""), ("token ", VALUES[0], " for the build")]
    rows += [("the cache worker restarted twice", "", ""), ("mail ", VALUES[1], " about the invoice")]
    for number, (before, value, after) in enumerate(rows):
        y, x = 12 + number * 30, 12
        draw.text((x, y), before, font=face, fill=WHITE)
        if value:
            left = x + face.getlength(before)
            draw.text((left, y), value, font=face, fill=RED)
            x0, y0, x1, y1 = draw.textbbox((left, y), value, font=face)
            boxes.append(Box(int(x0), int(y0), int(x1) + 1, int(y1) + 1))
            draw.text((left + face.getlength(value), y), after, font=face, fill=WHITE)
    return image, boxes


def test_red_matches_on_a_dark_theme_are_masked(engine: RedactionEngine) -> None:
    image, boxes = _grep_screen()
    result = redact_image(image, engine=engine)
    assert result.image is not None, result.reason
    assert [round(coverage(box, result.boxes), 2) for box in boxes] == [1.0, 1.0]


def test_without_the_colour_layer_the_red_matches_stay_readable(engine: RedactionEngine) -> None:
    """The test above means something: read in grey only, red on dark is found as ink no word covers, and
    masked by the cells of the block finder's grid, not whole (the rest of a value stays readable)."""
    image, boxes = _grep_screen()
    result = redact_image(image, engine=engine, settings=OcrSettings(colour_layers=False))
    assert min(coverage(box, result.boxes) for box in boxes) < 0.98


def test_a_highlight_behind_text_is_not_a_layer_but_coloured_strokes_are() -> None:
    face = ImageFont.truetype(FONTS["mono"], 13)
    highlight = Image.new("RGB", (400, 40), (255, 255, 255))
    draw = ImageDraw.Draw(highlight)
    draw.rectangle((60, 8, 300, 26), fill=YELLOW)
    draw.text((64, 10), "4539 1488 0343 6467", font=face, fill=BLACK)
    assert colour_layer(highlight) is None
    red = Image.new("RGB", (400, 40), DARK)
    ImageDraw.Draw(red).text((10, 10), "4539 1488 0343 6467", font=face, fill=RED)
    layer = colour_layer(red)
    assert layer is not None and layer.getpixel((2, 2)) == (255, 255, 255)  # dark ink on white
    darkest, _ = layer.convert("L").getextrema()
    assert isinstance(darkest, int) and darkest < 64
