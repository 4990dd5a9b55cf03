"""OCR words into lines: order kept, single spaces, each word's character range and box."""

from __future__ import annotations

from kronii.redaction.pixels import Box
from kronii.redaction.pixels._layout import assemble_lines
from kronii.redaction.pixels._ocr import OcrWord


def _word(text: str, x: int, line: tuple[int, int, int, int]) -> OcrWord:
    return OcrWord(text, Box(x, line[3] * 20, x + 10 * len(text), line[3] * 20 + 14), line)


def test_words_are_grouped_by_band_block_paragraph_and_line_in_reading_order() -> None:
    words = [
        _word("card", 0, (0, 1, 1, 1)),
        _word("4539", 50, (0, 1, 1, 1)),
        _word("1488", 100, (0, 1, 1, 1)),
        _word("next", 0, (0, 1, 1, 2)),
        _word("other", 0, (1, 1, 1, 1)),
    ]
    lines = assemble_lines(words)
    assert [line.text for line in lines] == ["card 4539 1488", "next", "other"]


def test_each_word_keeps_its_character_range_in_the_line() -> None:
    line = assemble_lines(
        [_word("call", 0, (0, 1, 1, 1)), _word("+44", 50, (0, 1, 1, 1)), _word("20", 90, (0, 1, 1, 1))]
    )[0]
    assert line.spans == ((0, 4), (5, 8), (9, 11))
    assert [line.text[start:end] for start, end in line.spans] == list(line.words)


def test_boxes_within_returns_the_words_a_span_overlaps() -> None:
    words = [_word(text, 60 * n, (0, 1, 1, 1)) for n, text in enumerate(["call", "+44", "20", "7946", "now"])]
    line = assemble_lines(words)[0]
    start = line.text.index("+44")
    end = line.text.index("7946") + 4
    assert line.boxes_within(start, end) == [words[1].box, words[2].box, words[3].box]
    assert line.boxes_within(start + 1, start + 2) == [words[1].box]
