"""OCR words into lines: order kept, single spaces, each word's character range and box."""

from __future__ import annotations

from kronii.redaction import LineSpan
from kronii.redaction.pixels import Box
from kronii.redaction.pixels._layout import assemble_lines, masked_text
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


def test_masked_text_replaces_each_span_by_its_placeholder() -> None:
    lines = assemble_lines(
        [_word(t, 60 * n, (0, 1, 1, 1)) for n, t in enumerate(["mail", "a@b.io", "and", "c@d.io"])]
    )
    text = masked_text(lines, [LineSpan(0, 5, 11, 0), LineSpan(0, 16, 22, 1)], ["[EMAIL_1]", "[EMAIL_2]"])
    assert text == "mail [EMAIL_1] and [EMAIL_2]"


def test_masked_text_shows_a_finding_over_several_lines_once() -> None:
    lines = assemble_lines(
        [_word("BEGIN", 0, (0, 1, 1, 1)), _word("KEY", 0, (0, 1, 1, 2)), _word("ok", 0, (0, 1, 1, 3))]
    )
    text = masked_text(lines, [LineSpan(0, 0, 5, 0), LineSpan(1, 0, 3, 0)], ["[PRIVATE_KEY_1]"])
    assert text == "[PRIVATE_KEY_1]\n\nok"


def test_masked_text_lets_the_widest_of_overlapping_spans_win() -> None:
    lines = assemble_lines(
        [_word(t, 60 * n, (0, 1, 1, 1)) for n, t in enumerate(["token", "ghp_A1b2", "C3d4E5f6", "ok"])]
    )
    spans = [LineSpan(0, 6, 23, 0), LineSpan(0, 15, 23, 1)]
    assert masked_text(lines, spans, ["[GITHUB_TOKEN_1]", "[HIGH_ENTROPY_1]"]) == "token [GITHUB_TOKEN_1] ok"
