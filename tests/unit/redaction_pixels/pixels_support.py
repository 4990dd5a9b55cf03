"""Screens with planted secrets and personal data, rendered with Pillow, and checks on redacted output.

Tests (and bench/redaction_image.py) know where each planted value was drawn, so they can tell whether the
redactor covered it, and they read the output back with a plain Tesseract pass as an attacker would.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import pytesseract
from PIL import Image, ImageDraw, ImageFont

from kronii.redaction.pixels import Box

FONT_DIR = "/usr/share/fonts/truetype/dejavu"
FONTS = {
    "sans": f"{FONT_DIR}/DejaVuSans.ttf",
    "mono": f"{FONT_DIR}/DejaVuSansMono.ttf",
    "serif": f"{FONT_DIR}/DejaVuSerif.ttf",
}
THEMES = {
    "light": ((255, 255, 255), (33, 33, 33)),
    "dark": ((40, 42, 54), (236, 236, 230)),
}
NEUTRAL = "deployment"


@dataclass(frozen=True)
class Planted:
    """A value drawn on the screen, where it was drawn, and fragments distinctive enough to reveal it."""

    name: str
    value: str
    box: Box
    fragments: tuple[str, ...]


# (name, text before, value, text after, fragments that must not be readable in the output)
PLANTS: tuple[tuple[str, str, str, str, tuple[str, ...]], ...] = (
    ("aws", "export key ", "AKIAQ7RXWN3KPL5TZ2HM", " for deployment", ("AKIAQ7", "KPL5TZ2HM")),
    (
        "github",
        "token ",
        "ghp_R7kq2WmX9vLp4TzN8bYc3HsJ6dFa1QeU5gVo",
        " deployment",
        ("ghp_R7", "WmX9vLp4", "HsJ6dFa1"),
    ),
    ("email", "mail ", "maria.keller@fastmail.com", " about deployment", ("maria.keller", "fastmail")),
    ("card", "card ", "4539 1488 0343 6467", " billed deployment", ("4539", "1488", "0343", "6467")),
    ("phone", "call ", "+44 20 7946 0958", " after deployment", ("7946", "0958")),
)
FILLER = (
    "review the staging pipeline before the release",
    "the cache worker restarted twice during the night",
    "merge request approved by the platform team",
)


@dataclass(frozen=True)
class Screen:
    image: Image.Image
    planted: tuple[Planted, ...]
    font: str
    size: int
    theme: str

    @property
    def label(self) -> str:
        return f"{self.font}-{self.size}px-{self.theme}"


def render_screen(
    font: str = "mono",
    size: int = 14,
    theme: str = "light",
    plants: Sequence[tuple[str, str, str, str, tuple[str, ...]]] = PLANTS,
    filler: Sequence[str] = FILLER,
    width: int = 0,
) -> Screen:
    """Lines of text, one planted value per line between neutral words, fillers in between."""
    face = ImageFont.truetype(FONTS[font], size)
    background, ink = THEMES[theme]
    rows: list[tuple[str, str, str, tuple[str, ...]] | str] = []
    for index, plant in enumerate(plants):
        rows.append(filler[index % len(filler)])
        rows.append(plant[:4] + (plant[4],))  # type: ignore[arg-type]
    rows.append(filler[len(plants) % len(filler)])
    pitch = round(size * 1.6)
    margin = 2 * size
    texts = [row if isinstance(row, str) else "".join(row[1:4]) for row in rows]
    longest = max(face.getlength(text) for text in texts)
    image = Image.new("RGB", (max(width, int(longest) + 2 * margin), pitch * len(rows) + 2 * margin), background)
    draw = ImageDraw.Draw(image)
    planted = []
    for number, row in enumerate(rows):
        y = margin + number * pitch
        if isinstance(row, str):
            draw.text((margin, y), row, font=face, fill=ink)
            continue
        name, before, value, after, fragments = row[0], row[1], row[2], row[3], row[4]
        draw.text((margin, y), before + value + after, font=face, fill=ink)
        x0 = margin + face.getlength(before)
        box = draw.textbbox((x0, y), value, font=face)
        planted.append(Planted(name, value, Box(int(box[0]), int(box[1]), int(box[2]) + 1, int(box[3]) + 1), fragments))
    return Screen(image, tuple(planted), font, size, theme)


def coverage(target: Box, boxes: Iterable[Box]) -> float:
    """The share of `target`'s area inside the union of `boxes`."""
    mask = Image.new("1", (target.x1, target.y1), 0)
    draw = ImageDraw.Draw(mask)
    for box in boxes:
        draw.rectangle((box.x0, box.y0, box.x1 - 1, box.y1 - 1), fill=1)
    return sum(1 for pixel in mask.crop(target.as_tuple()).getdata() if pixel) / max(1, target.area)


def read_back(image: Image.Image) -> str:
    """What an attacker's plain Tesseract pass reads on an image, upscaled 2x to give it every chance."""
    big = image.resize((image.width * 2, image.height * 2), Image.Resampling.BICUBIC)
    return str(pytesseract.image_to_string(big))


def uniform(image: Image.Image, box: Box) -> bool:
    """Whether every pixel in the box has one and the same colour."""
    extrema = image.convert("RGB").crop(box.as_tuple()).getextrema()
    return all(low == high for low, high in extrema) and len({low for low, _ in extrema}) >= 1


def squeeze(text: str) -> str:
    """Text without whitespace, so a value split by OCR into pieces is still found whole."""
    return "".join(text.split())
