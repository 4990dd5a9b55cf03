"""Bars that follow the glyphs in tightly set text (bitmap terminals), plain words kept whatever OCR's
confidence, half-read identifiers masked, and the OCR-tolerant IBAN and MRZ patterns (issue 32)."""

from __future__ import annotations

from kronii.redaction import LineSpan, RedactionEngine
from kronii.redaction.pixels import Box
from kronii.redaction.pixels._fill import boxes_for_spans, fit_rows, line_band
from kronii.redaction.pixels._layout import assemble_lines
from kronii.redaction.pixels._ocr import OcrWord
from kronii.redaction.pixels._tolerance import with_ocr_patterns
from kronii.redaction.pixels._unreadable import unreadable
from PIL import Image

PITCH = 7  # a 5x7 bitmap font: six rows of glyph and one of descender, no blank row between lines


def _tight_lines(lines: int = 3, width: int = 200) -> Image.Image:
    """Black-on-white ink of `lines` lines set 7 px apart, each 6 rows of glyphs in 4-column cells with a
    1-column gap, words of 5 cells parted by one blank cell; the descender row of each line has ink too."""
    binary = Image.new("L", (width, lines * PITCH + 4), 255)
    for line in range(lines):
        top = 2 + line * PITCH
        for x in range(2, width - 6, 5):
            if (x // 5) % 6 != 5:  # every sixth cell is a space
                binary.paste(0, (x, top, x + 4, top + PITCH))
    return binary


def test_a_bar_on_tightly_set_text_stays_on_its_own_line() -> None:
    """Tesseract gave the token a box two lines tall; its line's well-read words say where the line is."""
    binary = _tight_lines()
    middle = 2 + PITCH
    words = [
        OcrWord("token", Box(2, middle, 26, middle + 6), (0, 1, 1, 1), 95),
        OcrWord("jbD0R", Box(32, middle - 5, 56, middle + 9), (0, 1, 1, 1), 0),
        OcrWord("for", Box(62, middle, 86, middle + 6), (0, 1, 1, 1), 96),
    ]
    lines = assemble_lines(words)
    assert line_band(lines[0].boxes, lines[0].confs) == (middle, middle + 6)
    (bar,) = boxes_for_spans([LineSpan(0, 6, 11, 0)], lines, 1.0, binary)[0]
    assert middle - 1 <= bar.y0 and bar.y1 <= middle + PITCH + 1  # at most a row of slack each side
    assert bar.x0 >= 27 and bar.x1 <= 61  # and not over the words beside it


def test_padding_goes_only_into_blank_rows_and_leaves_the_next_line_its_half() -> None:
    binary = Image.new("L", (60, 50), 255)
    binary.paste(0, (10, 10, 50, 18))  # the line, ten blank rows above it
    binary.paste(0, (10, 20, 50, 26))  # the next one, two blank rows below
    assert fit_rows(Box(10, 10, 50, 18), (10, 18), binary, 3) == Box(10, 7, 50, 19)
    binary.paste(0, (10, 19, 50, 20))  # now one blank row only: the bar stops at the glyphs
    assert fit_rows(Box(10, 10, 50, 18), (10, 18), binary, 3) == Box(10, 7, 50, 18)


def _word(text: str, conf: float, x: int = 10, line: int = 1) -> OcrWord:
    return OcrWord(text, Box(x, 10, x + 8 * len(text), 24), (0, 1, 1, line), conf)


def test_plain_words_read_with_low_confidence_are_left() -> None:
    """A 5x7 bitmap font gives ordinary words confidences under 30: they are words, and stay readable."""
    words = [_word("platform", 6), _word("Backups", 11, x=100), _word("errors.", 20, x=200)]
    assert unreadable(words, min_conf=30, token_conf=80) == []


def test_a_half_read_identifier_is_masked_below_the_token_bar() -> None:
    """`lars.kellerfacne.io`: a 7 px `@` read as `f`; no detector finds it, and it is no ordinary word."""
    words = [_word("lars.kellerfacne.io", 70), _word("invoice", 95, x=200), _word("4067", 87, x=300)]
    found = unreadable(words, min_conf=30, token_conf=80)
    assert [finding.boxes[0].x0 for finding in found] == [_word("x", 0).box.x0 - 1]
    assert unreadable(words, min_conf=30, token_conf=0) == []  # the old bar: left readable


def test_ocr_misreads_of_an_ibans_check_digits_and_a_split_mrz_are_found(engine: RedactionEngine) -> None:
    hints = with_ocr_patterns(None)
    cases = {
        "IBAN DEG? 3562 3012 3836 O777 67 refund today": "IBAN",  # DE67 in a 6x10 bitmap font
        "P<UTOMORETTI<<ELIN<SOF lA<<<<<<<<<<<<<<<<<<<<": "MRZ",  # line 1 of a passport's zone, split
    }
    for text, kind in cases.items():
        assert kind in {finding.type for finding in engine.redact(text, hints=hints).findings}, text
    for harmless in ("cat <<EOF", "std::cout << HELLO_WORLD << endl", "the IBAN field is mandatory in 2024"):
        assert engine.redact(harmless, hints=hints).findings == (), harmless
