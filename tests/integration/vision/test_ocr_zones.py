"""The vision engine's OCR with the real Tesseract on 1280x800 frames drawn with Pillow (DejaVu Sans):
zones where the words were drawn, in the frame's pixels; small dense text read again from ~300 DPI crops;
no zone carries a planted secret; time and size are bounded."""

from __future__ import annotations

import io
from collections.abc import Sequence
from dataclasses import dataclass

import pytest
from kronii.redaction import (
    WITHHELD_TEXT,
    Level,
    LinesRedaction,
    PolicyHints,
    RedactionContext,
    RedactionEngine,
    RedactionResult,
)
from kronii.vision.adapters.ocr import OcrReading, ScreenOcr
from kronii.vision.adapters.ocr_settings import ScreenOcrSettings
from kronii.vision.adapters.ocr_zones import OcrError
from kronii.vision.core.context import Bounds, OcrZone
from PIL import Image, ImageDraw, ImageFont

SIZE = (1280, 800)
LIGHT, DARK = (246, 246, 246), (36, 36, 40)
DENSE_LINE = "Environment variables are loaded from the configuration file before the service starts"
DENSE_WORDS = DENSE_LINE.split()
AWS_KEY_ID = "AKIAQX7R4MNPTV3WKYHE"  # shaped like an access key id: AKIA and 16 capitals and digits


@dataclass(frozen=True)
class Drawn:
    word: str
    ink: Bounds


def ink_box(draw_at: tuple[int, int], text: str, font: ImageFont.FreeTypeFont) -> Bounds:
    """Where the text's ink lies once drawn at `draw_at` (its glyphs' pixels, not the font's line box)."""
    scratch = Image.new("L", SIZE, 0)
    ImageDraw.Draw(scratch).text(draw_at, text, font=font, fill=255)
    x0, y0, x1, y1 = scratch.getbbox() or (0, 0, 0, 0)
    return Bounds(x0, y0, x1 - x0, y1 - y0)


def draw_words(
    draw: ImageDraw.ImageDraw, at: tuple[int, int], words: list[str], size: int, fill: tuple[int, ...]
) -> list[Drawn]:
    font = ImageFont.truetype("DejaVuSans.ttf", size)
    x, y = at
    drawn = []
    for word in words:
        draw.text((x, y), word, font=font, fill=fill)
        drawn.append(Drawn(word, ink_box((x, y), word, font)))
        x += round(draw.textlength(word + " ", font=font))
    return drawn


def settings_dialog(theme: str = "light") -> tuple[bytes, list[Drawn]]:
    """A 1280x800 frame of a settings page: lines of 14 to 20 px text in several columns."""
    ground, ink = (LIGHT, (20, 20, 20)) if theme == "light" else (DARK, (225, 225, 225))
    image = Image.new("RGB", SIZE, ground)
    draw = ImageDraw.Draw(image)
    lines = [
        ((60, 40), "Network and proxy settings", 20),
        ((60, 110), "Automatic configuration script address", 16),
        ((60, 170), "Bypass the proxy for local addresses", 14),
        ((60, 230), "Connection timeout in seconds", 18),
        ((700, 110), "Certificate authorities trusted", 14),
        ((700, 170), "Download folder location", 16),
        ((700, 230), "Remember passwords for websites", 18),
        ((60, 520), "Apply changes", 16),
        ((900, 700), "Cancel", 16),
    ]
    drawn = [word for at, text, size in lines for word in draw_words(draw, at, text.split(), size, ink)]
    return png(image), drawn


def dense_page() -> bytes:
    """A heading, and a paragraph of 10 px text: too small to read once the frame is halved."""
    image = Image.new("RGB", SIZE, LIGHT)
    draw = ImageDraw.Draw(image)
    draw_words(draw, (60, 40), ["Service", "configuration"], 20, (20, 20, 20))
    for row in range(10):
        draw_words(draw, (60, 120 + row * 13), DENSE_WORDS, 10, (20, 20, 20))
    return png(image)


def png(image: Image.Image) -> bytes:
    buffer = io.BytesIO()
    image.save(buffer, format="PNG")
    return buffer.getvalue()


def tokens(text: str) -> list[str]:
    """The words of a zone without the quotes and stops Tesseract adds to small text's edges."""
    return [word.strip("\u2018\u2019'\".,:;|") for word in text.split()]


def found(drawn: Drawn, zones: tuple[OcrZone, ...]) -> bool:
    """A zone reads the word and its bounds hold the word's ink (one pixel of slack for antialiasing)."""
    ink = drawn.ink
    inner = Bounds(ink.x + 1, ink.y + 1, ink.width - 2, ink.height - 2)
    return any(drawn.word in tokens(zone.text) and zone.bounds.contains(inner) for zone in zones)


def dense_words_read(reading: OcrReading) -> int:
    return sum(tokens(zone.text).count(word) for zone in reading.zones for word in set(DENSE_WORDS))


@pytest.fixture(scope="module")
def ocr() -> ScreenOcr:
    return ScreenOcr()


@pytest.mark.parametrize("theme", ["light", "dark"])
def test_words_are_read_where_they_were_drawn_in_the_frames_pixels(ocr: ScreenOcr, theme: str) -> None:
    frame, drawn = settings_dialog(theme)
    zones = ocr.read(frame)
    missed = [d.word for d in drawn if not found(d, zones)]
    assert len(missed) <= len(drawn) // 10, f"missed {missed} in {[z.text for z in zones]}"
    assert all(0.0 <= zone.confidence <= 1.0 for zone in zones)
    assert all(z.bounds.x >= 0 and z.bounds.x + z.bounds.width <= SIZE[0] for z in zones)
    assert all(z.bounds.y >= 0 and z.bounds.y + z.bounds.height <= SIZE[1] for z in zones)


def test_zones_are_lines_in_reading_order(ocr: ScreenOcr) -> None:
    frame, _ = settings_dialog()
    zones = ocr.read(frame)
    heading = next(zone for zone in zones if "Network" in zone.text)
    assert heading.text == "Network and proxy settings"
    assert heading.confidence > 0.8
    tops = [zone.bounds.y for zone in zones]
    assert tops == sorted(tops)


def test_small_dense_text_is_read_again_from_a_300_dpi_crop(ocr: ScreenOcr) -> None:
    frame = dense_page()
    half_only = ScreenOcr(settings=ScreenOcrSettings(max_crops=0)).read_detailed(frame)
    both = ocr.read_detailed(frame)
    assert half_only.crops_tried == 0
    assert both.crops_tried >= 1
    assert both.crops_used >= 1
    total = 10 * len(DENSE_WORDS)
    assert dense_words_read(both) >= 0.9 * total
    assert dense_words_read(half_only) < 0.5 * total
    paragraph = [z for z in both.zones if z.bounds.y >= 110]
    assert min(z.confidence for z in paragraph) >= 0.6
    # The crop's zones are in the frame's pixels too: the paragraph starts at x=60, y=120.
    assert all(50 <= z.bounds.x <= 62 for z in paragraph)
    assert 110 <= min(z.bounds.y for z in paragraph) <= 122


def test_text_read_well_at_half_scale_costs_no_crop(ocr: ScreenOcr) -> None:
    image = Image.new("RGB", SIZE, LIGHT)
    draw = ImageDraw.Draw(image)
    draw_words(draw, (60, 60), ["Open", "the", "project", "settings"], 20, (20, 20, 20))
    draw_words(draw, (60, 300), ["Deploy", "to", "production"], 20, (20, 20, 20))
    reading = ocr.read_detailed(png(image))
    assert [zone.text for zone in reading.zones] == ["Open the project settings", "Deploy to production"]
    assert reading.crops_tried == 0


class NoRedaction(RedactionEngine):
    """The control: an engine that lets every line through as it is."""

    def redact_lines(
        self,
        lines: Sequence[str],
        *,
        context: RedactionContext | None = None,
        app: str | None = None,
        hints: PolicyHints | None = None,
    ) -> LinesRedaction:
        return LinesRedaction(RedactionResult("\n".join(lines), Level.GREEN, "control: not redacted"), ())


def secret_frame() -> bytes:
    """An AWS key id twice: at 20 px (read by the half pass) and 14 px (read again from a crop)."""
    image = Image.new("RGB", SIZE, LIGHT)
    draw = ImageDraw.Draw(image)
    draw_words(draw, (60, 60), ["Deployment", "credentials"], 20, (20, 20, 20))
    draw_words(draw, (60, 140), ["aws_access_key_id", "=", AWS_KEY_ID], 20, (20, 20, 20))
    draw_words(draw, (60, 200), ["region", "=", "eu-west-1"], 18, (20, 20, 20))
    draw_words(draw, (60, 400), ["export", f"AWS_ACCESS_KEY_ID={AWS_KEY_ID}"], 14, (20, 20, 20))
    return png(image)


def test_a_planted_aws_key_id_never_appears_in_a_zone() -> None:
    frame = secret_frame()
    # Without the text redaction the key is read back exactly: the redaction, not the OCR, removes it.
    unredacted = ScreenOcr(engine=NoRedaction()).read(frame)
    assert any(AWS_KEY_ID in zone.text for zone in unredacted)
    zones = ScreenOcr().read(frame)
    squeezed = "".join(zone.text.replace(" ", "") for zone in zones)
    assert AWS_KEY_ID[4:] not in squeezed
    assert sum("[AWS_ACCESS_KEY_ID_" in zone.text for zone in zones) == 2
    assert any(tokens(zone.text) == ["region", "=", "eu-west-1"] for zone in zones)


def test_a_line_graded_red_is_withheld_whole_and_the_rest_stays() -> None:
    """A private key must not leave even redacted: its armour line carries no text at all."""
    image = Image.new("RGB", SIZE, LIGHT)
    draw = ImageDraw.Draw(image)
    draw_words(draw, (60, 60), ["Deployment", "credentials"], 20, (20, 20, 20))
    draw_words(draw, (60, 140), ["-----BEGIN", "RSA", "PRIVATE", "KEY-----"], 16, (20, 20, 20))
    draw_words(
        draw,
        (60, 170),
        ["MIIEpAIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6ffAt0gun"],
        16,
        (20, 20, 20),
    )
    zones = ScreenOcr().read(png(image))
    assert not any("BEGIN" in zone.text for zone in zones)
    assert any(zone.text == WITHHELD_TEXT and 130 <= zone.bounds.y <= 150 for zone in zones)
    assert any(zone.text == "Deployment credentials" for zone in zones)


def test_tesseract_time_is_bounded() -> None:
    frame, _ = settings_dialog()
    with pytest.raises(OcrError, match="took longer than"):
        ScreenOcr(settings=ScreenOcrSettings(timeout_s=0.01)).read(frame)


def test_an_oversized_or_broken_image_is_refused_with_a_sentence() -> None:
    huge = png(Image.new("L", (5000, 4000), 255))
    with pytest.raises(OcrError, match="over the"):
        ScreenOcr().read(huge)
    with pytest.raises(OcrError, match="not a readable image"):
        ScreenOcr().read(b"not an image at all")
