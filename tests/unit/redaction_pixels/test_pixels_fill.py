"""From findings to solid bars: rounding outward, padding, one bar per finding and line, union area."""

from __future__ import annotations

import pytest
from kronii.redaction import LineSpan
from kronii.redaction.pixels import Box
from kronii.redaction.pixels._fill import (
    FILL,
    boxes_for_spans,
    fill,
    fit_text,
    masked_share,
    snap_to_ink,
    to_original,
    trim_to_ink,
)
from kronii.redaction.pixels._layout import assemble_lines
from kronii.redaction.pixels._ocr import OcrWord
from PIL import Image

from tests.unit.redaction_pixels.pixels_support import blank, uniform


def _white(width: int, height: int) -> Image.Image:
    return Image.new("L", (width, height), 255)


def _card_line() -> list[OcrWord]:
    texts = ["card", "4539", "1488", "0343", "6467", "billed"]
    return [
        OcrWord(text, Box(10 + 60 * n, 20, 60 + 60 * n, 34), (0, 1, 1, 1)) for n, text in enumerate(texts)
    ]


def test_boxes_from_a_scaled_image_are_rounded_outward() -> None:
    assert to_original(Box(3, 3, 9, 9), 2.0) == Box(1, 1, 5, 5)
    assert to_original(Box(10, 10, 20, 20), 0.5) == Box(20, 20, 40, 40)


def test_words_of_one_finding_on_one_line_become_one_padded_bar() -> None:
    lines = assemble_lines(_card_line())
    start, end = lines[0].text.index("4539"), lines[0].text.index("6467") + 4
    bars = boxes_for_spans([LineSpan(0, start, end, 0)], lines, 1.0, _white(500, 100))
    assert bars == {0: [Box(70 - 3, 20 - 3, 300 + 3, 34 + 3)]}


def test_bars_are_clipped_to_the_image() -> None:
    word = OcrWord("ghp_token1234", Box(0, 0, 50, 14), (0, 1, 1, 1))
    bars = boxes_for_spans([LineSpan(0, 0, 13, 0)], assemble_lines([word]), 1.0, _white(48, 12))
    assert bars == {0: [Box(0, 0, 48, 12)]}


def test_a_bar_grows_over_glyph_slivers_its_word_box_missed() -> None:
    binary = _white(200, 40)
    binary.paste(0, (20, 10, 60, 30))  # a "word" of ink from x=20 to x=59
    binary.paste(0, (70, 10, 90, 30))  # the next word, after a gap
    assert snap_to_ink(Box(26, 8, 54, 32), binary) == Box(20, 8, 60, 32)


def test_a_bar_crosses_the_gap_between_letters_but_not_the_space_between_words() -> None:
    binary = _white(300, 40)
    binary.paste(0, (20, 8, 40, 32))
    binary.paste(0, (42, 8, 60, 32))  # a last letter Tesseract left out of the word, 2 px away
    binary.paste(0, (67, 8, 90, 32))  # the next word, after a 7 px space
    assert snap_to_ink(Box(20, 8, 40, 32), binary) == Box(20, 8, 60, 32)


def test_a_word_box_shorter_than_its_text_grows_towards_the_ink() -> None:
    binary = _white(300, 40)
    binary.paste(0, (100, 10, 140, 30))  # four characters of 10 px; Tesseract boxed only three
    assert fit_text(Box(100, 10, 130, 30), 4, 10.0, binary) == Box(100, 10, 135, 30)
    assert fit_text(Box(110, 10, 140, 30), 4, 10.0, binary) == Box(105, 10, 140, 30)


def test_a_word_box_as_wide_as_its_text_is_kept() -> None:
    assert fit_text(Box(100, 10, 138, 30), 4, 10.0, _white(300, 40)) == Box(100, 10, 138, 30)


def test_a_bar_grows_by_at_most_its_height() -> None:
    binary = _white(300, 40)
    binary.paste(0, (0, 10, 300, 30))  # a rule across the whole width
    assert snap_to_ink(Box(100, 10, 120, 30), binary) == Box(80, 10, 140, 30)


def test_a_span_on_a_line_ocr_did_not_read_is_an_error() -> None:
    with pytest.raises(ValueError, match="line"):
        boxes_for_spans([LineSpan(3, 0, 4, 0)], assemble_lines(_card_line()), 1.0, _white(500, 100))


def test_masked_share_counts_overlapping_boxes_once() -> None:
    assert masked_share([Box(0, 0, 10, 10), Box(5, 0, 15, 10)], (100, 10)) == pytest.approx(0.15)


def test_fill_is_solid_and_leaves_the_input_untouched() -> None:
    image = blank(100, 40, (250, 250, 250))
    image.paste((10, 200, 10), (20, 10, 60, 30))
    out = fill(image, [Box(15, 5, 65, 35)])
    assert uniform(out, Box(15, 5, 65, 35)) and out.getpixel((20, 10)) == FILL
    assert image.getpixel((20, 10)) == (10, 200, 10)
    assert out.getpixel((70, 10)) == (250, 250, 250)


def test_a_word_box_twice_the_lines_height_is_trimmed_to_its_ink_before_padding() -> None:
    """Tesseract can give a line's words boxes twice the text's height: padded as they are, the bar runs
    over the lines above and below, and the gap it may cross grows past the space before the word."""
    binary = _white(200, 60)
    binary.paste(0, (20, 10, 40, 14))  # the line above: must stay clear
    binary.paste(0, (20, 24, 40, 36))  # a word before, one space (4 px) to the left
    binary.paste(0, (44, 24, 120, 36))  # the word
    binary.paste(0, (20, 46, 40, 50))  # the line below
    tall = Box(20, 12, 120, 48)  # reaches into the lines above and below
    assert trim_to_ink(tall, binary) == Box(20, 24, 120, 36)
    assert trim_to_ink(Box(44, 22, 120, 38), binary) == Box(44, 22, 120, 38)  # a usual box: kept
    tall = Box(44, 14, 120, 46)
    assert trim_to_ink(Box(150, 0, 190, 60), binary) == Box(150, 0, 190, 60)  # no ink: kept
    line = assemble_lines([OcrWord("key-5dc0af51f6", tall, (0, 1, 1, 1))])
    (bar,) = boxes_for_spans([LineSpan(0, 0, 14, 0)], line, 1.0, binary)[0]
    assert bar.x0 > 40 and bar.y0 >= 14 and bar.y1 <= 46
