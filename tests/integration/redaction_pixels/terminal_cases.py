"""Terminal screenshots of the kinds seen to defeat image redaction (issue 32): bitmap fonts (5x7, 6x10) and
DejaVu Sans Mono at 6-8 px, light and dark, values highlighted by `grep --color=always`, and a 2x HiDPI
window (Xft.dpi 192) showing a passport's machine readable zone. Several xterms are drawn on one Xvfb screen
and captured whole; each window is then scored on its own rectangle:

- `leaks`: the 6-character pieces of a planted value that a plain Tesseract pass reads on the window at
  several scales (1x, 2x, 3x; spaces squeezed out, case folded): must be none after redaction;
- `kept_share`: of the ordinary words read on the window before redaction (each occurrence counted), the
  share still read after: over-masking.

Used by the tests here and by bench/redaction_image.py (its `terminals` section).
"""

from __future__ import annotations

import os
import random
import subprocess
import tempfile
from collections import Counter
from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass

import pytesseract
from kronii.redaction.pixels import Box
from PIL import Image

from tests.desktop import start_xvfb
from tests.unit.redaction_pixels.pixels_support import (
    grab,
    random_plants,
    random_seen_readable,
    xterm_showing,
)

__all__ = [
    "CASES",
    "ORDINARY_LINES",
    "Case",
    "Shown",
    "capture",
    "kept_share",
    "leaks",
    "mrz_pair",
    "ordinary_words",
    "read_redacted",
    "read_scales",
]

ORDINARY_LINES = (
    "review the staging pipeline before the release",
    "the cache worker restarted twice during the night",
    "merge request approved by the platform team",
    "nightly backups finished without errors",
    "rotate the logs and restart the proxy service",
)
_GREP = "ghp_[A-Za-z0-9]+|[a-z]+[.][a-z]+@[a-z.]+|DE[0-9][0-9 ]{20,}[0-9]|4[0-9]{3}( [0-9]{4}){3}"


@dataclass(frozen=True)
class Case:
    """One terminal window: how it is drawn (`font` options for xterm, X `resources`), its theme, whether
    values are shown through `grep --color=always` (and with which GREP_COLORS), and its size in cells."""

    name: str
    family: str  # bitmap or vector
    size: str  # the font's pixel size as a label ("5x7", "7px", "2x")
    theme: str
    font: tuple[str, ...]
    resources: tuple[str, ...] = ()
    grep_colors: str | None = None  # None: plain text; "": grep's default (bold red); else GREP_COLORS
    mrz: bool = False
    columns: int = 64


CASES: tuple[Case, ...] = (
    Case("bitmap-5x7-light", "bitmap", "5x7", "light", ("-fn", "5x7")),
    Case("bitmap-6x10-dark", "bitmap", "6x10", "dark", ("-fn", "6x10")),
    Case("vector-7px-light", "vector", "7px", "light", ("-fa", "DejaVu Sans Mono:pixelsize=7")),
    Case("vector-8px-dark", "vector", "8px", "dark", ("-fa", "DejaVu Sans Mono:pixelsize=8")),
    Case("grep-red-dark", "bitmap", "6x13", "dark", ("-fn", "6x13"), grep_colors=""),
    Case(
        "grep-highlight-light",
        "vector",
        "8px",
        "light",
        ("-fa", "DejaVu Sans Mono:pixelsize=8"),
        grep_colors="mt=30;43",
    ),
    Case(
        "hidpi-2x-light",
        "vector",
        "2x",
        "light",
        ("-fa", "DejaVu Sans Mono", "-fs", "7"),
        resources=("Xft.dpi: 192",),
        mrz=True,
        columns=56,
    ),
)


def _check_digit(field: str) -> str:
    total = 0
    for position, char in enumerate(field):
        value = 0 if char == "<" else int(char) if char.isdigit() else ord(char) - 55
        total += value * (7, 3, 1)[position % 3]
    return str(total % 10)


def mrz_pair(rng: random.Random) -> tuple[str, str]:
    """The two lines of a passport's machine readable zone (ICAO 9303 TD3), check digits valid."""
    surname = rng.choice(("ERIKSSON", "LINDQVIST", "MORETTI", "HALVORSEN"))
    given = rng.choice(("ANNA<MARIA", "JONAS", "ELIN<SOFIA", "MARCO"))
    first = f"P<UTO{surname}<<{given}".ljust(44, "<")
    number = "".join(rng.choice("ABCDEFGHJKLMNPRSTUVWXYZ0123456789") for _ in range(9))
    birth = f"{rng.randrange(60, 99)}{rng.randrange(1, 13):02d}{rng.randrange(1, 29):02d}"
    expiry = f"{rng.randrange(30, 36)}{rng.randrange(1, 13):02d}{rng.randrange(1, 29):02d}"
    personal = "".join(rng.choice("0123456789") for _ in range(8)).ljust(14, "<")
    parts = (
        number + _check_digit(number),
        "UTO",
        birth + _check_digit(birth),
        rng.choice("MF"),
        expiry + _check_digit(expiry),
        personal + _check_digit(personal),
    )
    body = "".join(parts)
    composite = body[0:10] + body[13:20] + body[21:43]
    return first, body + _check_digit(composite)


def _values(seed: int) -> tuple[list[str], list[str]]:
    """Value lines (each value between ordinary words) and the values themselves."""
    _, github, email, card, _ = random_plants(seed)
    iban = random_seen_readable(seed)[0]
    lines = [
        f"token {github.value} for the build",
        f"mail {email.value} about the invoice",
        f"IBAN {iban.value} refund today",
        f"card {card.value} billed monthly",
    ]
    return lines, [github.value, email.value, iban.value, card.value]


@dataclass(frozen=True)
class Shown:
    """A case as drawn: its window's rectangle on the screen, the values planted in it, and its text."""

    case: Case
    box: Box
    values: tuple[str, ...]
    lines: tuple[str, ...]


def _text(case: Case, seed: int) -> tuple[str, tuple[str, ...], tuple[str, ...]]:
    rng = random.Random(seed)
    value_lines, values = _values(seed)
    if case.mrz:
        pair = mrz_pair(rng)
        value_lines = [value_lines[1], "passport scan follows", *pair]
        values = [values[1], *pair]
    lines: list[str] = []
    for n, line in enumerate(value_lines):
        lines += [ORDINARY_LINES[n % len(ORDINARY_LINES)], line]
    lines.append(ORDINARY_LINES[len(value_lines) % len(ORDINARY_LINES)])
    plain = "\n".join(lines) + "\n"
    if case.grep_colors is None:
        return plain, tuple(values), tuple(lines)
    with tempfile.NamedTemporaryFile("w", suffix=".txt") as handle:
        handle.write(plain)
        handle.flush()
        env = {"LC_ALL": "C", "PATH": "/usr/bin:/bin"}
        if case.grep_colors:
            env["GREP_COLORS"] = case.grep_colors
        done = subprocess.run(
            ["grep", "--color=always", "-E", f"{_GREP}|$", handle.name],
            capture_output=True,
            text=True,
            env=env,
            check=True,
            timeout=10,
        )
    return done.stdout, tuple(values), tuple(lines)


@contextmanager
def _screen(size: str) -> Iterator[str]:
    with start_xvfb(screen=size) as display:
        yield display


def capture(
    cases: Sequence[Case], seed: int = 7, screen: str = "1600x1000x24", origin: tuple[int, int] = (10, 10)
) -> tuple[Image.Image, list[Shown]]:
    """Every case in its own xterm on one Xvfb screen, laid out in two columns, captured whole."""
    shown: list[Shown] = []
    with ExitStack() as stack:
        display = stack.enter_context(_screen(screen))
        x, y, column_bottom = origin[0], origin[1], origin[1]
        width = int(screen.split("x")[0])
        for n, case in enumerate(cases):
            text, values, lines = _text(case, seed + n)
            geometry = f"{case.columns}x{len(lines) + 1}+{x}+{y}"
            terminal = stack.enter_context(
                xterm_showing(
                    display,
                    text,
                    theme=case.theme,
                    geometry=geometry,
                    font=case.font,
                    resources=case.resources,
                )
            )
            shown.append(Shown(case, terminal.box, values, lines))
            column_bottom = max(column_bottom, terminal.box.y1)
            x = terminal.box.x1 + 20
            if x > width // 2:
                x, y = origin[0], column_bottom + 20
        image = grab(display)
    return image, shown


def _read(image: Image.Image) -> str:
    return str(pytesseract.image_to_string(image))


def read_scales(image: Image.Image, scales: Sequence[float] = (1, 2, 3)) -> list[str]:
    """What a plain Tesseract pass reads on the image at each scale (the passes run side by side)."""
    scaled = [
        image if scale == 1 else image.resize((round(image.width * scale), round(image.height * scale)))
        for scale in scales
    ]
    os.environ.setdefault("OMP_THREAD_LIMIT", "1")
    with ThreadPoolExecutor(max_workers=len(scaled)) as pool:
        return list(pool.map(_read, scaled))


def background(image: Image.Image) -> tuple[int, int, int]:
    """The most common colour of an image: a window's background."""
    colours = image.convert("RGB").getcolors(1 << 24) or []
    best = max(colours, key=lambda entry: entry[0])[1] if colours else (255, 255, 255)
    assert isinstance(best, tuple)
    red, green, blue = best
    return int(red), int(green), int(blue)


def read_redacted(output: Image.Image, bars: Sequence[Box], window: Box) -> list[str]:
    """What an attacker reads on a window of a redacted screen: the window with the bars painted in its
    background colour (1x, 2x, 3x) and as it is (2x, when it has bars), since a solid bar makes Tesseract's page layout drop
    the text around it, which would hide a leak beside a bar as well as the words kept."""
    crop = output.crop(window.as_tuple())
    painted = crop.copy()
    colour = background(crop)
    for bar in bars:
        inside = Box(bar.x0 - window.x0, bar.y0 - window.y0, bar.x1 - window.x0, bar.y1 - window.y0)
        clipped = inside.clip(*crop.size)
        if not clipped.empty:
            painted.paste(colour, clipped.as_tuple())
    return read_scales(painted) + (read_scales(crop, (2,)) if bars else [])


def _squeezed(text: str) -> str:
    return "".join(text.split()).casefold()


def leaks(values: Sequence[str], reads: Sequence[str], piece: int = 6) -> list[str]:
    """The `piece`-character pieces of the values (spaces squeezed out, case folded) found in any read
    (pieces of `<` fillers alone aside: an MRZ's filler is no value)."""
    read = "\n".join(_squeezed(text) for text in reads)
    found = []
    for value in values:
        squeezed = _squeezed(value)
        found += [
            squeezed[i : i + piece]
            for i in range(len(squeezed) - piece + 1)
            if set(squeezed[i : i + piece]) != {"<"} and squeezed[i : i + piece] in read
        ]
    return found


def ordinary_words(text: str) -> list[str]:
    """The plain words of a text (letters only, three or more)."""
    return [word for word in text.split() if word.isalpha() and len(word) >= 3]


def readable_words(reads: Sequence[str], drawn: Sequence[str]) -> Counter[str]:
    """The ordinary words drawn on a window that are read: for each word, the most occurrences any one
    read found (at most as many as were drawn), so a garbled read at one scale adds nothing."""
    shown = Counter(ordinary_words(" ".join(drawn)))
    best: Counter[str] = Counter()
    for text in reads:
        found = Counter(ordinary_words(text)) & shown
        best |= found
    return best


def kept_share(before: Sequence[str], after: Sequence[str], drawn: Sequence[str]) -> float:
    """Of the ordinary drawn words read before redaction (each occurrence counted), the share read after."""
    readable = readable_words(before, drawn)
    kept = readable & readable_words(after, drawn)
    return sum(kept.values()) / max(1, sum(readable.values()))
