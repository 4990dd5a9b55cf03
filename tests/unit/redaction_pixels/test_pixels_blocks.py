"""Whole screens read block by block, and text OCR could not read masked (real Tesseract, rendered screens)."""

from __future__ import annotations

from kronii.redaction import Level, RedactionEngine
from kronii.redaction.pixels import Box, OcrSettings, redact_image
from kronii.redaction.pixels._blocks import text_blocks
from kronii.redaction.pixels._ocr import OcrWord
from kronii.redaction.pixels._unreadable import UNREADABLE_TYPE, unreadable
from PIL import Image, ImageDraw, ImageFilter, ImageFont

from tests.unit.redaction_pixels.pixels_support import FILLER, FONTS, Plant, Screen, coverage, render_screen

SMALL_AT, LARGE_AT = (40, 40), (620, 380)


def _desktop() -> tuple[Image.Image, Screen, Screen]:
    """A 1280x800 dark root with a light window in 9 px mono text and a dark one in 16 px sans."""
    small, large = render_screen("mono", 9, "light"), render_screen("sans", 16, "dark")
    screen = Image.new("RGB", (1280, 800), (0, 0, 0))
    screen.paste(small.image, SMALL_AT)
    screen.paste(large.image, LARGE_AT)
    return screen, small, large


def _inside(inner: Box, outer: Box) -> bool:
    return outer.x0 <= inner.x0 and outer.y0 <= inner.y0 and inner.x1 <= outer.x1 and inner.y1 <= outer.y1


def test_each_window_on_a_screen_is_its_own_block() -> None:
    screen, small, large = _desktop()
    blocks = text_blocks(screen)
    assert len(blocks) == 2
    holding = set()
    for at, window in ((SMALL_AT, small), (LARGE_AT, large)):
        for planted in window.planted:
            inside = [n for n, block in enumerate(blocks) if _inside(planted.box.shift(*at), block)]
            assert len(inside) == 1, (window.label, planted.name)
            holding.add((at, inside[0]))
    assert len(holding) == 2  # one block for each window, and not the same one


def _lines_at(screen: Image.Image, top: int, lines: list[str]) -> None:
    draw, face = ImageDraw.Draw(screen), ImageFont.truetype(FONTS["mono"], 12)
    for number, line in enumerate(lines):
        draw.text((16, top + 16 * number), line, font=face, fill=(0, 0, 0))


def test_text_whose_margins_a_speck_between_them_touches_stays_two_blocks() -> None:
    """Seen: the grip at the foot of a window's frame, a cell under the box of its text (but not near its
    short last line) and a cell over the box of the window below, joined the two windows (and a screen of
    them) into one block whose lines Tesseract interleaved."""
    screen = Image.new("RGB", (640, 240), (255, 255, 255))
    _lines_at(screen, 16, ["the cache worker restarted twice during the night", "ok"])
    speck = ImageDraw.Draw(screen)
    for x in range(320, 336, 3):  # a grip: short dark strokes, one cell under the first text's box
        speck.line((x, 57, x, 62), fill=(0, 0, 0))
    speck.line((320, 59, 336, 59), fill=(0, 0, 0))
    _lines_at(screen, 72, ["done", "merge request approved by the platform team"])
    blocks = text_blocks(screen)
    first_line, last_line = Box(16, 16, 300, 30), Box(16, 88, 280, 102)
    holding = [
        [n for n, block in enumerate(blocks) if _inside(line, block)] for line in (first_line, last_line)
    ]
    assert len(holding[0]) == 1 and len(holding[1]) == 1, blocks
    assert holding[0] != holding[1], blocks


def test_a_blank_screen_has_no_block() -> None:
    assert text_blocks(Image.new("RGB", (640, 400), (30, 30, 30))) == []


def test_small_text_on_a_whole_screen_is_masked_as_when_cropped(engine: RedactionEngine) -> None:
    """Every planted value of both windows is covered: the small light window is not lost to the dark
    majority of the screen."""
    screen, small, large = _desktop()
    result = redact_image(screen, engine=engine)
    assert result.level is Level.AMBER, result.reason
    for at, window in ((SMALL_AT, small), (LARGE_AT, large)):
        for planted in window.planted:
            assert coverage(planted.box.shift(*at), result.boxes) >= 0.99, (window.label, planted.name)


def test_read_as_one_page_the_small_window_leaks(engine: RedactionEngine) -> None:
    """The check above means something: read as one page, the small window's e-mail is only partly masked
    (with the doubtful identifier-shaped words left, as they were before `token_conf`, which masks it)."""
    screen, small, _ = _desktop()
    result = redact_image(screen, engine=engine, settings=OcrSettings(regions=False, token_conf=0))
    email = next(planted for planted in small.planted if planted.name == "email")
    assert coverage(email.box.shift(*SMALL_AT), result.boxes) < 0.9


def test_blurred_text_that_ocr_reads_as_nothing_is_masked_not_green(engine: RedactionEngine) -> None:
    rows = ["token value Qx7pLm2Rk9 stored in vault", *FILLER]
    blurred = render_screen("sans", 16, "light", rows=rows).image.filter(ImageFilter.GaussianBlur(2.0))
    result = redact_image(blurred, engine=engine)
    assert result.level is Level.AMBER and result.image is not None, result.reason
    assert {finding.type for finding in result.findings} == {UNREADABLE_TYPE}
    ink = blurred.convert("L").point(lambda level: 255 if level < 128 else 0)
    left = Image.new("L", blurred.size, 0)
    left.paste(ink)
    for box in result.boxes:
        left.paste(0, box.as_tuple())
    assert left.histogram()[255] <= 0.02 * ink.histogram()[255]  # next to no dark ink left unmasked


def test_blurred_text_passes_green_without_the_block_reader(engine: RedactionEngine) -> None:
    """The check above means something: read as one page, the same frame was passed as clean."""
    rows = ["token value Qx7pLm2Rk9 stored in vault", *FILLER]
    blurred = render_screen("sans", 16, "light", rows=rows).image.filter(ImageFilter.GaussianBlur(2.0))
    result = redact_image(
        blurred, engine=engine, settings=OcrSettings(regions=False, min_conf=0, token_conf=0)
    )
    assert result.level is Level.GREEN


def test_a_value_that_normalising_would_break_is_still_masked(engine: RedactionEngine) -> None:
    """Reading letters among digits as digits turns an ES DNI's check letter into a digit (12345678Z ->
    123456782); the lines are scanned as read too, so the DNI is still found."""
    dni = Plant("dni", "dni ", "12345678Z", " on file", ("12345678",))
    screen = render_screen("sans", 14, "light", plants=(dni,))
    result = redact_image(screen.image, engine=engine)
    # Named by the ES DNI detector or by the catalogue of national identifiers: either masks it.
    assert {"ES_DNI", "NATIONAL_ID"} & {finding.type for finding in result.findings}, result.reason
    assert coverage(screen.planted[0].box, result.boxes) >= 0.99


def _word(text: str, conf: float, height: int = 14) -> OcrWord:
    return OcrWord(text, Box(10, 10, 10 + 8 * len(text), 10 + height), (0, 1, 1, 1), conf)


def test_low_confidence_words_are_masked_and_stray_marks_are_not() -> None:
    words = [_word("deployment", 95), _word("xK9#qLz", 12), _word("=)", 5), _word("abc", 10, height=3)]
    found = unreadable(words, min_conf=30)
    assert [(finding.type, finding.boxes) for finding in found] == [
        (UNREADABLE_TYPE, (Box(10, 10, 66, 24).pad(1),))
    ]
