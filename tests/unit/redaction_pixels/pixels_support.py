"""Screens with planted secrets and personal data, rendered with Pillow, and checks on redacted output.

Tests (and bench/redaction_image.py) know where each planted value was drawn, so they can tell whether the
redactor covered it, and they read the output back with a plain Tesseract pass as an attacker would.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import random
import subprocess
import tempfile
import time
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass

import mss
import pytesseract
from kronii.redaction.pixels import Box, OcrSettings
from PIL import Image, ImageDraw, ImageFont
from Xlib import display as xdisplay

from tests.desktop import stop_process

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
FakeWord = tuple[str, Box, int]  # what a stand-in for Tesseract reads: text, box, line number
# One Tesseract run on the whole image (no blocks) at its own size: a stand-in's boxes are then the image's.
ONE_PASS = OcrSettings(workers=1, scale=1.0, regions=False)


def blank(width: int = 400, height: int = 120, colour: tuple[int, int, int] = (255, 255, 255)) -> Image.Image:
    return Image.new("RGB", (width, height), colour)


@dataclass(frozen=True)
class Planted:
    """A value drawn on the screen, where it was drawn, and fragments distinctive enough to reveal it."""

    name: str
    value: str
    box: Box
    fragments: tuple[str, ...]


@dataclass(frozen=True)
class Plant:
    """A value to draw between neutral words, and fragments distinctive enough to give it away."""

    name: str
    before: str
    value: str
    after: str
    fragments: tuple[str, ...]


PLANTS: tuple[Plant, ...] = (
    Plant("aws", "export key ", "AKIAQ7RXWN3KPL5TZ2HM", " for deployment", ("AKIAQ7", "KPL5TZ2HM")),
    Plant(
        "github",
        "token ",
        "ghp_R7kq2WmX9vLp4TzN8bYc3HsJ6dFa1QeU5gVo",
        " deployment",
        ("ghp_R7", "WmX9vLp4", "HsJ6dFa1"),
    ),
    Plant("email", "mail ", "maria.keller@fastmail.com", " about deployment", ("maria.keller", "fastmail")),
    Plant("card", "card ", "4539 1488 0343 6467", " billed deployment", ("4539", "1488", "0343", "6467")),
    Plant("phone", "call ", "+44 20 7946 0958", " after deployment", ("7946", "0958")),
)
# Values the text engine catches that were seen still readable after image redaction on rendered terminal
# screens in small, dark and proportional fonts (issue 12), each on a line as a terminal shows it.
SEEN_READABLE: tuple[Plant, ...] = (
    Plant(
        "iban", "IBAN ", "DE89 3704 0044 0532 0130 00", " refund deployment", ("3704", "0044", "0532", "0130")
    ),
    Plant(
        "ipv6",
        "inet6 ",
        "2a02:8108:85a3::8a2e:370:7334",  # not 2001:db8::/32, the documentation range, which is left
        "/64 scope global deployment",
        ("2a02:8108", "85a3", "8a2e", "7334"),
    ),
    Plant("dni", "DNI ", "12345678Z", " on the deployment contract", ("12345678", "345678Z")),
    Plant(
        "mailgun",
        "mailgun sending key ",
        "key-7f3a9c2e5b8d4f1a6c0e9b2d7a4f8c31",
        " deployment",
        ("7f3a9c2e", "5b8d4f1a", "6c0e9b2d", "7a4f8c31"),
    ),
    Plant(
        "azure_sas",
        "GET /logs?sv=2022-11-02&sp=r&sig=",
        "Zq8wR2nT5yHb0LmXc4VdK7pS9fGj3AeU1oWi6NzQt2E%3D",
        " deployment",
        ("Zq8wR2nT", "5yHb0LmX", "c4VdK7pS", "9fGj3AeU", "1oWi6NzQ"),
    ),
)
_FIRST = ("maria", "john", "aiko", "lars", "fatima", "pedro", "chen", "olga")
_LAST = ("keller", "smith", "tanaka", "berg", "haddad", "silva", "wang", "ivanova")
_DOMAINS = ("fastmail.com", "exemple.org", "proton.me", "acme.io")
_ALNUM = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"


def _luhn_card(rng: random.Random) -> str:
    digits = [4] + [rng.randrange(10) for _ in range(14)]
    total = 0
    for index, digit in enumerate(reversed(digits)):
        doubled = digit * 2 if index % 2 == 0 else digit
        total += doubled - 9 if doubled > 9 else doubled
    digits.append((10 - total % 10) % 10)
    text = "".join(map(str, digits))
    return " ".join(text[i : i + 4] for i in range(0, 16, 4))


def random_plants(seed: int) -> tuple[Plant, ...]:
    """Fresh values of each kind (a held-out set: the redactor was not tuned on them)."""
    rng = random.Random(seed)
    aws = "AKIA" + "".join(rng.choice("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567") for _ in range(16))
    github = "ghp_" + "".join(rng.choice(_ALNUM) for _ in range(36))
    email = f"{rng.choice(_FIRST)}.{rng.choice(_LAST)}@{rng.choice(_DOMAINS)}"
    card = _luhn_card(rng)
    phone = f"+44 20 7946 0{rng.randrange(100, 1000)}"
    local, domain = email.split("@")
    return (
        Plant("aws", "export key ", aws, " for deployment", (aws[:8], aws[8:])),
        Plant(
            "github", "token ", github, " deployment", (github[:8], github[8:20], github[20:32], github[32:])
        ),
        Plant("email", "mail ", email, " about deployment", (local, domain)),
        Plant("card", "card ", card, " billed deployment", tuple(card.split()[1:])),
        Plant("phone", "call ", phone, " after deployment", (phone[-9:],)),
    )


_B64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
_DNI_LETTERS = "TRWAGMYFPDXBNJZSQVHLCKE"


def _iban_de(rng: random.Random) -> str:
    bban = "".join(str(rng.randrange(10)) for _ in range(18))
    check = 98 - int(bban + "131400") % 97  # D=13, E=14, then "00" for the check digits
    text = f"DE{check:02d}{bban}"
    return " ".join(text[i : i + 4] for i in range(0, len(text), 4))


def random_seen_readable(seed: int) -> tuple[Plant, ...]:
    """Fresh values of the kinds in SEEN_READABLE: a German IBAN with its check digits, an IPv6 address in
    a provider's range (not the documentation range, which is left), an ES DNI with its check letter, a
    Mailgun key, an Azure SAS signature (the base64 of an HMAC-SHA256, URL-encoded as in a URL)."""
    rng = random.Random(seed)
    iban = _iban_de(rng)
    groups = [f"{rng.randrange(0x1000, 0x10000):x}" for _ in range(5)]
    ipv6 = f"2a02:8108:{groups[0]}::{groups[1]}:{groups[2]}:{groups[3]}"
    number = rng.randrange(10_000_000, 100_000_000)
    dni = f"{number}{_DNI_LETTERS[number % 23]}"
    mailgun = "key-" + "".join(rng.choice("0123456789abcdef") for _ in range(32))
    sig = "".join(rng.choice(_B64) for _ in range(43)).replace("+", "%2B").replace("/", "%2F") + "%3D"
    hexed = mailgun[4:]
    return (
        Plant("iban", "IBAN ", iban, " refund deployment", tuple(iban.split()[1:5])),
        Plant("ipv6", "inet6 ", ipv6, "/64 scope global deployment", (ipv6[:8], *groups[:4])),
        Plant("dni", "DNI ", dni, " on the deployment contract", (dni[:8], dni[2:])),
        Plant(
            "mailgun",
            "mailgun sending key ",
            mailgun,
            " deployment",
            tuple(hexed[i : i + 8] for i in range(0, 32, 8)),
        ),
        Plant(
            "azure_sas",
            "GET /logs?sv=2022-11-02&sp=r&sig=",
            sig,
            " deployment",
            tuple(sig[i : i + 8] for i in range(0, 40, 8)),
        ),
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
    plants: Sequence[Plant] = PLANTS,
    filler: Sequence[str] = FILLER,
    rows: Sequence[Plant | str] = (),
) -> Screen:
    """Lines of text, one planted value per line between neutral words, a filler line around each
    (or exactly the given `rows`)."""
    face = ImageFont.truetype(FONTS[font], size)
    background, ink = THEMES[theme]
    if not rows:
        mixed: list[Plant | str] = []
        for index, plant in enumerate(plants):
            mixed += [filler[index % len(filler)], plant]
        rows = [*mixed, filler[len(plants) % len(filler)]]
    texts = [row if isinstance(row, str) else row.before + row.value + row.after for row in rows]
    pitch, margin = round(size * 1.6), 2 * size
    width = int(max(face.getlength(text) for text in texts)) + 2 * margin
    image = Image.new("RGB", (width, pitch * len(rows) + 2 * margin), background)
    draw = ImageDraw.Draw(image)
    planted = []
    for number, (row, text) in enumerate(zip(rows, texts, strict=True)):
        y = margin + number * pitch
        draw.text((margin, y), text, font=face, fill=ink)
        if isinstance(row, Plant):
            x0, y0, x1, y1 = draw.textbbox((margin + face.getlength(row.before), y), row.value, font=face)
            box = Box(int(x0), int(y0), int(x1) + 1, int(y1) + 1)
            planted.append(Planted(row.name, row.value, box, row.fragments))
    return Screen(image, tuple(planted), font, size, theme)


def render_panes(plants: Sequence[Plant] = PLANTS, theme: str = "dark") -> Screen:
    """A window laid out like an editor: a file tree in a smaller sans, a title, the text in mono, and a
    column of notes in serif whose lines do not align with the text's."""
    background, ink = THEMES[theme]
    image = Image.new("RGB", (1100, 60 + 58 * len(plants) + 40), background)
    draw = ImageDraw.Draw(image)
    side, main = ImageFont.truetype(FONTS["sans"], 13), ImageFont.truetype(FONTS["mono"], 15)
    draw.rectangle((0, 0, 230, image.height), fill=tuple(max(0, c - 18) for c in background))
    for n, name in enumerate(("src/", "  parser.py", "  engine.py", "tests/", "  test_cli.py", "README.md")):
        draw.text((12, 50 + n * 23), name, font=side, fill=ink)
    draw.text((250, 10), "deploy.env - Editor", font=ImageFont.truetype(FONTS["sans"], 22), fill=ink)
    draw.line((240, 0, 240, image.height), fill=ink)
    note = ImageFont.truetype(FONTS["serif"], 14)
    for n in range((image.height - 80) // 31):
        draw.text((900, 75 + n * 31), f"note {n}: ok", font=note, fill=ink)
    planted, y = [], 60
    for plant in plants:
        draw.text((260, y), "# settings for the deployment pipeline", font=main, fill=ink)
        draw.text((260, y + 29), plant.before + plant.value + plant.after, font=main, fill=ink)
        x0, y0, x1, y1 = draw.textbbox((260 + main.getlength(plant.before), y + 29), plant.value, font=main)
        planted.append(
            Planted(plant.name, plant.value, Box(int(x0), int(y0), int(x1) + 1, int(y1) + 1), plant.fragments)
        )
        y += 58
    return Screen(image, tuple(planted), "panes", 15, theme)


def coverage(target: Box, boxes: Iterable[Box]) -> float:
    """The share of `target`'s area inside the union of `boxes`."""
    mask = Image.new("L", (target.x1, target.y1), 0)
    draw = ImageDraw.Draw(mask)
    for box in boxes:
        draw.rectangle((box.x0, box.y0, box.x1 - 1, box.y1 - 1), fill=255)
    return mask.crop(target.as_tuple()).histogram()[255] / max(1, target.area)


def read_back(image: Image.Image) -> str:
    """What an attacker's plain Tesseract pass reads on an image, upscaled 2x to give it every chance."""
    big = image.resize((image.width * 2, image.height * 2), Image.Resampling.BICUBIC)
    return str(pytesseract.image_to_string(big))


def ordinary_words(text: str) -> list[str]:
    """The plain words of a text (letters only, three or more): what must stay readable after redaction."""
    return [word for word in text.split() if word.isalpha() and len(word) >= 3]


def readable_word_share(before: str, after: str) -> float:
    """Of the ordinary words read on the input (`before`, each occurrence counted), the share read on the
    output too: 1.0 when redaction hid no plain word, lower when masks run over a value's neighbours."""
    words = Counter(ordinary_words(before))
    kept = Counter(ordinary_words(after))
    return sum(min(count, kept[word]) for word, count in words.items()) / max(1, sum(words.values()))


def uniform(image: Image.Image, box: Box) -> bool:
    """Whether every pixel in the box has one and the same colour."""
    colours = image.convert("RGB").crop(box.as_tuple()).getcolors(1)
    return colours is not None and len(colours) == 1


def squeeze(text: str) -> str:
    """Text without whitespace, so a value split by OCR into pieces is still found whole."""
    return "".join(text.split())


# ---- a real window under Xvfb ---------------------------------------------------------------------


@dataclass
class Terminal:
    """An xterm showing a text file, and the rectangle of its window on the screen."""

    display: str
    process: subprocess.Popen[bytes]
    box: Box


@contextlib.contextmanager
def xterm_showing(
    display: str,
    text: str,
    *,
    size: int = 14,
    theme: str = "light",
    geometry: str = "",
    maximized: bool = False,
    bitmap_font: bool = False,
    font: Sequence[str] = (),
    resources: Sequence[str] = (),
) -> Iterator[Terminal]:
    """Start an xterm (DejaVu Sans Mono, `size` pt; or, with `bitmap_font`, xterm's own default, the small
    6x13 bitmap font; or the given `font` options, e.g. ("-fn", "5x7")) that prints `text` (escape
    sequences included: colours show as a terminal shows them) and stays open; yield it once drawn.
    `resources` are more X resources (`-xrm`), e.g. "XTerm*faceSize: 8" or "Xft.dpi: 192"."""
    background, ink = THEMES[theme]
    wm_class = f"KroniiPixels{os.getpid()}x{next(_serial)}"
    with tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False) as handle:
        handle.write(text)
    command = [
        "xterm",
        "-class",
        wm_class,
        *(font or (() if bitmap_font else ("-fa", "DejaVu Sans Mono", "-fs", str(size)))),
        "-bg",
        "#{:02x}{:02x}{:02x}".format(*background),
        "-fg",
        "#{:02x}{:02x}{:02x}".format(*ink),
        "+sb",
        "-b",
        "4",
        "-xrm",
        "XTerm*cursorBlink: false",
        *(option for resource in resources for option in ("-xrm", resource)),
    ]
    command += ["-maximized"] if maximized else []
    command += ["-geometry", geometry] if geometry else []
    command += ["-e", "sh", "-c", f"cat '{handle.name}'; printf '\\033[?25l'; sleep 600"]
    env = {**os.environ, "DISPLAY": display}
    process = subprocess.Popen(
        command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True
    )
    try:
        found = subprocess.run(
            ["xdotool", "search", "--sync", "--onlyvisible", "--class", f"^{wm_class}$"],
            env=env,
            capture_output=True,
            text=True,
            timeout=10,
            check=True,
        )
        terminal = Terminal(display, process, _window_box(display, int(found.stdout.split()[0])))
        _wait_until_drawn(terminal.display, terminal.box)
        yield terminal
    finally:
        stop_process(process, timeout_s=3)
        os.unlink(handle.name)


_serial = itertools.count()


def _window_box(display: str, window: int) -> Box:
    """The window's rectangle on the screen (xdotool's getwindowgeometry is off by the frame under openbox)."""
    connection = xdisplay.Display(display)
    try:
        handle = connection.create_resource_object("window", window)
        geometry = handle.get_geometry()
        origin = connection.screen().root.translate_coords(handle, 0, 0)
        return Box(origin.x, origin.y, origin.x + geometry.width, origin.y + geometry.height)
    finally:
        connection.close()


def grab(display: str) -> Image.Image:
    """The whole screen of an X display, captured with mss (XGetImage)."""
    with mss.MSS(display=display) as screen:
        shot = screen.grab(screen.monitors[0])
    return Image.frombytes("RGB", shot.size, shot.bgra, "raw", "BGRX")


def wait_until_window_drawn(display: str, window: int, timeout_s: float = 10.0) -> None:
    """Until the X window `window` shows its text, drawn and still (see `_wait_until_drawn`)."""
    _wait_until_drawn(display, _window_box(display, window), timeout_s)


def _wait_until_drawn(display: str, box: Box, timeout_s: float = 10.0) -> None:
    """Until two captures 0.3 s apart are equal and the window shows text: more than a cursor's worth of
    pixels away from the background colour (a bitmap font draws in exactly two colours)."""
    deadline = time.monotonic() + timeout_s
    previous = b""
    while time.monotonic() < deadline:
        window = grab(display).crop(box.as_tuple())
        current = window.tobytes()
        colours = sorted(window.getcolors(1 << 16) or (), reverse=True)
        if current == previous and len(colours) >= 2 and sum(count for count, _ in colours[1:]) > 400:
            return
        previous = current
        time.sleep(0.3)
    raise RuntimeError("the xterm did not finish drawing its text in time")
