"""The share of a frame its reading covers with words (`text_coverage`): what capture scores a frame's
text by when it takes the redaction's reading instead of a reading of its own."""

from __future__ import annotations

import pytest
from kronii.redaction.pixels._model import Box
from kronii.redaction.pixels._ocr import OcrWord
from kronii.redaction.pixels._redact import text_coverage

LINE = (0, 1, 1, 1)


def test_confident_words_cover_their_boxes_share_of_the_frame() -> None:
    words = [
        OcrWord("hello", Box(0, 0, 50, 10), LINE, 90.0),
        OcrWord("world", Box(60, 0, 110, 10), LINE, 80.0),
    ]
    assert text_coverage(words, (100, 100)) == pytest.approx(1000 / 10_000)


def test_doubtful_blank_and_colour_layer_words_do_not_count() -> None:
    words = [
        OcrWord("noise", Box(0, 0, 50, 10), LINE, 12.0),
        OcrWord("  ", Box(0, 20, 50, 30), LINE, 95.0),
        OcrWord("again", Box(0, 40, 50, 50), LINE, 95.0, layer=True),
        OcrWord("text", Box(0, 60, 50, 70), LINE, 95.0),
    ]
    assert text_coverage(words, (100, 100)) == pytest.approx(500 / 10_000)


def test_coverage_is_at_most_the_whole_frame_and_zero_for_an_empty_one() -> None:
    words = [OcrWord("big", Box(0, 0, 100, 100), LINE, 99.0), OcrWord("big", Box(0, 0, 100, 100), LINE, 99.0)]
    assert text_coverage(words, (100, 100)) == 1.0
    assert text_coverage(words, (0, 0)) == 0.0
