"""A whole desktop as a person screenshots it: a 1280x800 Xvfb screen with three xterms (xterm's default 6x13
bitmap font, a dark theme, a light one), captured whole and redacted by `kronii redact --image` as a process.

Read as one page, such a screen lost its small-font window (green, "nothing found", exit 0, with an e-mail
address and an AWS key id plainly readable). Read block by block, every value is masked, and the masks follow
the values' words: most ordinary words stay readable.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from kronii.redaction.pixels import Box
from PIL import Image

from tests.desktop import start_xvfb
from tests.unit.redaction_pixels.pixels_support import grab, read_back, squeeze, xterm_showing

# (window, lines): each secret or personal value sits between ordinary words.
SMALL = (
    "review the staging pipeline before the release",
    "mail jonas.weber@exemple.org about the invoice",
    "export AWS_ACCESS_KEY_ID=AKIAJ4XW7QZ2MB5RT6NP",
    "the cache worker restarted twice during the night",
)
DARK = (
    "merge request approved by the platform team",
    "transfer to DE89 3704 0044 0532 0130 00 tomorrow",
    "contact lena.fischer@proton.me for access",
    "nightly backups finished without errors",
)
LIGHT = (
    "deploy the new dashboard after lunch",
    "key AKIAQ7RXWN3KPL5TZ2HM for the billing bucket",
    "card 4539 1488 0343 6467 billed monthly",
    "the release notes mention three fixes",
)
# Values and fragments that would give a value away (each as OCR would squeeze it).
VALUES = (
    "jonas.weber@exemple.org",
    "jonas.weber",
    "exemple.org",
    "AKIAJ4XW7QZ2MB5RT6NP",
    "AKIAJ4",
    "MB5RT6NP",
    "DE89370400440532013000",
    "0532",
    "lena.fischer@proton.me",
    "lena.fischer",
    "AKIAQ7RXWN3KPL5TZ2HM",
    "KPL5TZ2HM",
    "4539148803436467",
    "6467",
)
_SECRET_WORDS = {
    "jonas.weber@exemple.org",
    "AWS_ACCESS_KEY_ID=AKIAJ4XW7QZ2MB5RT6NP",
    "lena.fischer@proton.me",
}
ORDINARY = [
    word
    for text in (*SMALL, *DARK, *LIGHT)
    for word in text.split()
    if word.isalpha() and len(word) >= 3 and word not in _SECRET_WORDS
]


def _kronii() -> str:
    return str(Path(sys.executable).with_name("kronii"))


@pytest.fixture(scope="module")
def desktop(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[Box]]:
    """The whole screen as a PNG, and the three windows' rectangles on it."""
    shot = tmp_path_factory.mktemp("desktop") / "desktop.png"
    with (
        start_xvfb(screen="1280x800x24") as display,
        xterm_showing(display, "\n".join(SMALL), geometry="60x8+20+30", bitmap_font=True) as small,
        xterm_showing(display, "\n".join(DARK), size=11, theme="dark", geometry="60x8+640+30") as dark,
        xterm_showing(display, "\n".join(LIGHT), size=12, geometry="60x8+300+420") as light,
    ):
        grab(display).save(shot)
    return shot, [small.box, dark.box, light.box]


def _read_everywhere(image: Image.Image, windows: list[Box]) -> str:
    """What an attacker reads: the whole screen, and each window cropped and upscaled (2x and 3x), which is
    how a small font is best read."""
    texts = [read_back(image)]
    for window in windows:
        crop = image.crop(window.as_tuple())
        texts += [read_back(crop), read_back(crop.resize((crop.width * 3 // 2, crop.height * 3 // 2)))]
    return "\n".join(texts)


def _loose(text: str) -> str:
    """Squeezed, with the commas a small bitmap font's dots are read as turned back into dots."""
    return squeeze(text).replace(",", ".")


def test_the_capture_shows_every_value(desktop: tuple[Path, list[Box]]) -> None:
    """The test means something: before redaction, the values are readable on the screenshot."""
    shot, windows = desktop
    with Image.open(shot) as screen:
        readable = _loose(_read_everywhere(screen.convert("RGB"), windows))
    assert [
        value for value in ("jonas.weber", "AKIAJ4", "lena.fischer", "AKIAQ7RX") if value not in readable
    ] == []


def test_kronii_redact_masks_every_value_on_a_whole_desktop(
    desktop: tuple[Path, list[Box]], tmp_path: Path
) -> None:
    shot, windows = desktop
    output = tmp_path / "clean.png"
    done = subprocess.run(
        [_kronii(), "redact", "--image", str(shot), "-o", str(output), "--json"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 10, done.stderr  # amber: masked, may leave
    report = json.loads(done.stdout)
    assert {"EMAIL", "AWS_ACCESS_KEY_ID"} <= {finding["type"] for finding in report["findings"]}
    with Image.open(output) as cleaned:
        text = _read_everywhere(cleaned.convert("RGB"), windows)
    readable = _loose(text)
    assert [value for value in VALUES if squeeze(value) in readable] == []
    words = set(text.split())
    share = sum(word in words for word in ORDINARY) / len(ORDINARY)
    assert share >= 0.7, f"only {share:.0%} of ordinary words readable: over-masking"
