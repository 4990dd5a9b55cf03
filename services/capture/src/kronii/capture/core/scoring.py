"""Frame scoring for a capture burst (seed 000: text_density (OCR), delta SSIM, edge_density,
ui_semantics_hint, blur, risk_penalty). numpy only; frames are uint8 greyscale H x W arrays.

Weights of `FrameScore.total` (every signal is 0..1):

    base  = 0.35 text_density + 0.25 sharpness + 0.15 edge_density + 0.10 stability + 0.15 ui_hint
    total = base * (1 - 0.30 risk)

The weights sum to 1, so `total` is 0..1 (it is the job's primary_score).

Text density weighs most because a screenshot is requested when the text signal is weak and
the frame is wanted for what it says; sharpness next, because a frame caught mid-scroll or
mid-animation is useless however much text it holds. Stability (SSIM with the neighbouring
frame) favours a frame taken after the content settled. The hint and the risk depend on the
window only, so they do not reorder the frames of one burst; they make `total` comparable
across jobs and let a risky window score low. Risk scales rather than subtracts so the total
stays within 0..1 and keeps the frames' order.

Cheap signals come first so OCR sees as few pixels as possible: see `rank_frames`.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
from numpy.typing import NDArray

Frame = NDArray[np.uint8]
_Float = NDArray[np.float64]

W_TEXT = 0.35
W_SHARP = 0.25
W_EDGE = 0.15
W_STABLE = 0.10
W_UI = 0.15
W_RISK = 0.30

# A frame at least this similar to the previous one shows the same text: reuse its OCR result.
REUSE_OCR_SSIM = 0.995
# OCR runs only on frames whose cheap score is within this of the best cheap score. A frame
# further behind would need a text density lead of margin / W_TEXT (about 0.17) to win, which
# frames of one window a few hundred milliseconds apart do not show.
OCR_MARGIN = 0.06
# Gradient magnitude (0..255 scale) above which a pixel is an edge: anti-aliased text strokes
# pass, JPEG-ish noise and soft gradients do not.
EDGE_THRESHOLD = 40.0
# Laplacian variance at which sharpness reads 0.5; crisp screen text sits in the tens of thousands, a
# Gaussian blur of two pixels brings it into the tens.
BLUR_HALF_VARIANCE = 1_000.0
# SSIM is computed on a grid of at most this many cells per side, each the mean of its block.
SSIM_GRID = 96
_SSIM_C1 = (0.01 * 255) ** 2
_SSIM_C2 = (0.03 * 255) ** 2


def to_grey(rgb: NDArray[Any]) -> Frame:
    """H x W x 3 RGB (or x 4 RGBA, alpha ignored) uint8 to H x W greyscale (ITU-R BT.601 luma).
    A 2-D array is returned unchanged. mss's `ScreenShot.rgb` bytes reshape to the 3-channel form."""
    if rgb.ndim == 2:
        return np.asarray(rgb, dtype=np.uint8)
    if rgb.ndim != 3 or rgb.shape[2] not in (3, 4):
        raise ValueError(f"expected an H x W x 3 or H x W x 4 image, got shape {rgb.shape}.")
    channels = rgb[..., :3].astype(np.float64)
    grey: _Float = channels @ np.array([0.299, 0.587, 0.114])
    result: Frame = np.clip(np.rint(grey), 0, 255).astype(np.uint8)
    return result


def half_scale(frame: Frame) -> Frame:
    """The frame at half width and height, each pixel the mean of a 2 x 2 block."""
    height, width = frame.shape[0] // 2 * 2, frame.shape[1] // 2 * 2
    if height == 0 or width == 0:
        return frame.copy()
    blocks = frame[:height, :width].astype(np.float64).reshape(height // 2, 2, width // 2, 2)
    result: Frame = np.rint(blocks.mean(axis=(1, 3))).astype(np.uint8)
    return result


def _gradients(frame: Frame) -> tuple[_Float, _Float]:
    values = frame.astype(np.float64)
    dx = np.zeros_like(values)
    dy = np.zeros_like(values)
    dx[:, 1:-1] = (values[:, 2:] - values[:, :-2]) / 2
    dy[1:-1, :] = (values[2:, :] - values[:-2, :]) / 2
    return dx, dy


def edge_density(frame: Frame) -> float:
    """Share of pixels on an edge (central-difference gradient above EDGE_THRESHOLD), 0..1."""
    if frame.size == 0:
        return 0.0
    dx, dy = _gradients(frame)
    return float(np.count_nonzero(dx * dx + dy * dy > EDGE_THRESHOLD**2) / frame.size)


def laplacian_variance(frame: Frame) -> float:
    if frame.shape[0] < 3 or frame.shape[1] < 3:
        return 0.0
    values = frame.astype(np.float64)
    laplacian = (
        values[:-2, 1:-1] + values[2:, 1:-1] + values[1:-1, :-2] + values[1:-1, 2:] - 4 * values[1:-1, 1:-1]
    )
    return float(laplacian.var())


def blur_score(frame: Frame) -> float:
    """Sharpness from the variance of the Laplacian, normalised to 0..1 (1 = sharp).
    A flat frame reads 0: there is nothing in focus to read."""
    variance = laplacian_variance(frame)
    return variance / (variance + BLUR_HALF_VARIANCE)


def _grid(frame: Frame) -> _Float:
    """Block means on a grid of about SSIM_GRID cells per side (at most 2 x SSIM_GRID - 1);
    the few rows and columns that do not fill a whole block are left out."""
    height, width = frame.shape
    block_rows, block_cols = max(1, height // SSIM_GRID), max(1, width // SSIM_GRID)
    rows, cols = height // block_rows, width // block_cols
    blocks = frame[: rows * block_rows, : cols * block_cols].reshape(rows, block_rows, cols, block_cols)
    result: _Float = blocks.mean(axis=(1, 3), dtype=np.float64)
    return result


def ssim(a: Frame, b: Frame) -> float:
    """Mean SSIM of two frames on a downscaled grid (each cell the mean of its pixel block) with
    non-overlapping 4 x 4 windows over the grid; 1.0 for identical frames. Frames of different
    shapes (the window was resized mid-burst) are not comparable and read 0.0."""
    if a.shape != b.shape:
        return 0.0
    if a.size == 0 or np.array_equal(a, b):
        return 1.0
    ga, gb = _grid(a), _grid(b)
    rows, cols = ga.shape
    window = 4 if rows >= 4 and cols >= 4 else 1
    rows, cols = rows // window * window, cols // window * window
    shape = (rows // window, window, cols // window, window)
    wa, wb = ga[:rows, :cols].reshape(shape), gb[:rows, :cols].reshape(shape)
    mean_a, mean_b = wa.mean(axis=(1, 3)), wb.mean(axis=(1, 3))
    var_a, var_b = wa.var(axis=(1, 3)), wb.var(axis=(1, 3))
    cov = (wa * wb).mean(axis=(1, 3)) - mean_a * mean_b
    numerator = (2 * mean_a * mean_b + _SSIM_C1) * (2 * cov + _SSIM_C2)
    denominator = (mean_a**2 + mean_b**2 + _SSIM_C1) * (var_a + var_b + _SSIM_C2)
    return float(np.clip((numerator / denominator).mean(), -1.0, 1.0))


# (pattern over "wm_class title", value): how much a screenshot adds over the text the other
# sensors already have. First match wins, so the specific patterns come first.
_UI_HINTS: tuple[tuple[re.Pattern[str], float], ...] = tuple(
    (re.compile(pattern, re.IGNORECASE), value)
    for pattern, value in (
        # Calls and shared screens: the content exists only as pixels.
        (r"\b(zoom|teams|meet|jitsi|webex|skype|slack huddle|discord)\b", 0.95),
        # Video, images, diagrams, designs: pixels are the content.
        (
            r"\b(vlc|mpv|totem|celluloid|youtube|netflix|twitch|gimp|inkscape|krita|figma|eog|gwenview|feh|draw\.io|drawio|excalidraw|miro)\b",
            0.9,
        ),
        # Documents and slides: rendered layout, tables and figures beyond their text.
        (
            r"\b(evince|okular|zathura|libreoffice|soffice|\.pdf|\.pptx?|\.odp|\.docx?|\.xlsx?|slides|docs)\b",
            0.75,
        ),
        # Code review and diffs in a browser, or a diff tool.
        (r"\b(pull request|merge request|diff|meld|kompare|review)\b", 0.7),
        (r"\b(firefox|chromium|chrome|brave|epiphany|vivaldi|opera|browser)\b", 0.6),
        # IDEs and editors: the buffer text is usually available from the editor itself.
        (
            r"\b(code|vscodium|jetbrains|pycharm|idea|clion|goland|emacs|gvim|vim|neovim|sublime|kate|gedit)\b",
            0.45,
        ),
        (r"\b(xterm|terminal|konsole|alacritty|kitty|wezterm|tilix|terminator|urxvt|foot|tmux)\b", 0.35),
    )
)
_UI_DEFAULT = 0.5

_RISKS: tuple[tuple[re.Pattern[str], float], ...] = tuple(
    (re.compile(pattern, re.IGNORECASE), value)
    for pattern, value in (
        (
            r"\b(keepass\w*|1password|bitwarden|lastpass|dashlane|enpass|seahorse|pass(word)? ?(manager|safe)|gnome-keyring|kwallet\w*)\b",
            1.0,
        ),
        (r"\b(online banking|banking|bank|paypal|brokerage|wallet|iban|credit card)\b", 0.9),
        (r"\b(private browsing|incognito|inprivate|tor browser)\b", 0.8),
        (
            r"\b(sign[ -]?in|log[ -]?in|logon|password|passphrase|2fa|one-time code|verification code|authenticat\w*)\b",
            0.7,
        ),
    )
)


def _window_text(wm_class: str, title: str) -> str:
    return f"{wm_class} {title}".strip()


def ui_semantics_hint(wm_class: str, title: str) -> float:
    """How much a screenshot of this kind of window adds over its text (0..1), guessed from the
    window class and title: meetings and media highest, terminals lowest, unknown 0.5."""
    text = _window_text(wm_class, title)
    for pattern, value in _UI_HINTS:
        if pattern.search(text):
            return value
    return _UI_DEFAULT


def risk_penalty(wm_class: str, title: str) -> float:
    """How likely the window shows secrets (0..1): password managers, banking, private browsing,
    login pages. The highest matching risk counts."""
    text = _window_text(wm_class, title)
    return max((value for pattern, value in _RISKS if pattern.search(text)), default=0.0)


@dataclass(frozen=True, slots=True)
class FrameScore:
    """Scores of one frame of a burst. `text_source` says where text_density came from: "ocr"
    (measured), "reused" (copied from the near-identical previous frame), "skipped" (OCR not
    run because the cheap signals ruled the frame out; text_density is then 0.0) or "deferred"
    (the one frame OCR could have measured: its text density cannot reorder the burst, so it is
    left to the redaction's own reading of that frame, `Scored.with_primary_text`; 0.0 until then)."""

    index: int
    text_density: float
    delta_ssim: float
    edge_density: float
    blur: float
    ui_hint: float
    risk: float
    total: float
    text_source: str = "ocr"


@dataclass(frozen=True)
class Scored:
    """A burst ranked best first, and how many of its frames needed OCR."""

    ranked: list[FrameScore]
    ocr_calls: int

    @property
    def primary(self) -> FrameScore:
        return self.ranked[0]

    @property
    def text_deferred(self) -> bool:
        return self.primary.text_source == "deferred"

    def with_primary_text(self, text_density: float) -> Scored:
        """The primary frame's deferred text density filled in (the share of it the redaction
        read as words), its total recomputed; the order stays (no other frame was measured)."""
        primary = self.primary
        density = float(np.clip(text_density, 0.0, 1.0))
        cheap = cheap_score(primary.edge_density, primary.blur, primary.delta_ssim, primary.ui_hint)
        filled = replace(
            primary, text_density=density, total=total_score(density, cheap, primary.risk), text_source="ocr"
        )
        return replace(self, ranked=[filled, *self.ranked[1:]])


def cheap_score(edges: float, sharpness: float, stability: float, ui_hint: float) -> float:
    """The part of the base score that needs no OCR (0..1 - W_TEXT)."""
    return W_SHARP * sharpness + W_EDGE * edges + W_STABLE * stability + W_UI * ui_hint


def total_score(text_density: float, cheap: float, risk: float) -> float:
    return (W_TEXT * text_density + cheap) * (1 - W_RISK * risk)


def rank_frames(
    frames: Sequence[Frame],
    *,
    wm_class: str,
    title: str,
    ocr_text_density: Callable[[Frame], float],
) -> list[FrameScore]:
    """Score every frame of a burst and return them best first (ties: the earlier frame).

    Cheap signals (sharpness, edges, SSIM with the neighbour) are computed for every frame. OCR,
    the expensive one, then runs only where it can change the outcome:
    - only on frames whose cheap score is within OCR_MARGIN of the best cheap score;
    - a frame with SSIM >= REUSE_OCR_SSIM to the previous frame reuses that frame's text density;
    - when only one frame would be read, none is: its text density cannot change the order, and the
      redaction reads that frame in full anyway ("deferred", filled by `Scored.with_primary_text`);
    - `ocr_text_density` receives the frame at HALF SCALE (`half_scale`: half width and half
      height, a quarter of the pixels) and must return the share of it covered by text, 0..1.
    """
    if not frames:
        return []
    for frame in frames:
        if frame.ndim != 2:
            raise ValueError(f"frames must be greyscale H x W arrays (see to_grey), got shape {frame.shape}.")
    ui_hint = ui_semantics_hint(wm_class, title)
    risk = risk_penalty(wm_class, title)
    to_previous = [1.0] + [ssim(frames[i], frames[i - 1]) for i in range(1, len(frames))]
    # The first frame has no predecessor; its stability is its similarity to the next one.
    stability = [to_previous[1] if len(frames) > 1 else 1.0, *to_previous[1:]]
    edges = [edge_density(frame) for frame in frames]
    sharpness = [blur_score(frame) for frame in frames]
    cheap = [cheap_score(edges[i], sharpness[i], stability[i], ui_hint) for i in range(len(frames))]
    text, source = _text_densities(frames, cheap, to_previous, ocr_text_density)
    scores = [
        FrameScore(
            index=i,
            text_density=text[i] or 0.0,
            delta_ssim=stability[i],
            edge_density=edges[i],
            blur=sharpness[i],
            ui_hint=ui_hint,
            risk=risk,
            total=total_score(text[i] or 0.0, cheap[i], risk),
            text_source=source[i],
        )
        for i in range(len(frames))
    ]
    return sorted(scores, key=lambda score: (-score.total, score.index))


def _text_densities(
    frames: Sequence[Frame],
    cheap: list[float],
    to_previous: list[float],
    ocr_text_density: Callable[[Frame], float],
) -> tuple[list[float | None], list[str]]:
    """Each frame's text density and where it came from ("ocr", "reused", "skipped", "deferred"):
    OCR only for the frames within OCR_MARGIN of the best cheap score, reused from a near-identical
    predecessor, and only when at least two different frames need it: with one, its text density
    cannot reorder the burst, and the redaction reads that frame anyway."""
    best_cheap = max(cheap)
    plan = ["skipped"] * len(frames)
    for i in range(len(frames)):
        if cheap[i] < best_cheap - OCR_MARGIN:
            continue
        reusable = i > 0 and plan[i - 1] != "skipped" and to_previous[i] >= REUSE_OCR_SSIM
        plan[i] = "reused" if reusable else "ocr"
    if plan.count("ocr") == 1:
        return [0.0 if step != "skipped" else None for step in plan], [
            "deferred" if step != "skipped" else step for step in plan
        ]
    text: list[float | None] = [None] * len(frames)
    for i, frame in enumerate(frames):
        if plan[i] == "ocr":
            text[i] = float(np.clip(ocr_text_density(half_scale(frame)), 0.0, 1.0))
        elif plan[i] == "reused":
            text[i] = text[i - 1]
    return text, plan
