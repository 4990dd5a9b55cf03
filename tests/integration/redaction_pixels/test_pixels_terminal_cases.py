"""Real xterms under Xvfb in the fonts and colours issue 32 saw defeat image redaction, on one screen captured
whole and redacted as a person's screenshot is: 5x7 and 6x10 bitmap fonts, DejaVu Sans Mono at 7 and 8 px,
light and dark, values shown by `grep --color=always` (red on dark, black on a yellow highlight), and a 2x
HiDPI window (Xft.dpi 192) with a passport's machine readable zone.

Per window, read by Tesseract at several scales (and with the bars painted in the background colour, so a
bar does not make Tesseract drop the text beside it): before redaction the values are readable; after, no
6-character piece of any value is, the frame is not withheld, and at least 85 % of the ordinary words read
before are still read.
"""

from __future__ import annotations

from dataclasses import dataclass

import pytest
from kronii.redaction import Level, RedactionEngine
from kronii.redaction.pixels import ImageRedaction, redact_image
from PIL import Image

from tests.integration.redaction_pixels.terminal_cases import (
    CASES,
    Shown,
    capture,
    kept_share,
    leaks,
    read_redacted,
)

KEPT_FLOOR = 0.85


@dataclass(frozen=True)
class Redacted:
    screen: Image.Image
    shown: list[Shown]
    result: ImageRedaction


@pytest.fixture(scope="module")
def redacted(engine: RedactionEngine) -> Redacted:
    screen, shown = capture(CASES, seed=7)
    return Redacted(screen, shown, redact_image(screen, engine=engine))


def _plain(shown: Shown) -> list[str]:
    """The window's lines with its values taken out: where its ordinary words are."""
    lines = list(shown.lines)
    for value in shown.values:
        lines = [line.replace(value, " ") for line in lines]
    return lines


def test_a_screen_of_dense_small_font_terminals_is_masked_not_withheld(redacted: Redacted) -> None:
    result = redacted.result
    assert result.level is Level.AMBER and result.image is not None, result.reason
    assert {"EMAIL", "IBAN", "MRZ"} <= {finding.type for finding in result.findings}


@pytest.mark.parametrize("case", [case.name for case in CASES])
def test_no_piece_of_a_value_is_readable_and_ordinary_words_stay(redacted: Redacted, case: str) -> None:
    shown = next(item for item in redacted.shown if item.case.name == case)
    before = read_redacted(redacted.screen, [], shown.box)
    assert leaks(shown.values, before), "the capture must show the values readably"
    assert redacted.result.image is not None, redacted.result.reason
    after = read_redacted(redacted.result.image, redacted.result.boxes, shown.box)
    assert leaks(shown.values, after) == []
    share = kept_share(before, after, _plain(shown))
    assert share >= KEPT_FLOOR, f"only {share:.0%} of the ordinary words stay readable"
