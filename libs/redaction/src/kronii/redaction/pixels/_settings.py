"""How the image redactor runs Tesseract. The defaults come from bench/redaction_image.py's measurements
(recall of planted values and time per choice, on DejaVu Sans, Mono and Serif at 12-20 px, light and dark,
and on a 1280x800 xterm frame):

- OCR tolerance lifts recall the most (0.93 -> 1.0 of planted values); it costs nothing measurable;
- inverting dark themes keeps recall and saves ~15% of the time per screen;
- psm 6 keeps recall and is faster than psm 3; psm 11 loses recall;
- Otsu binarisation loses recall (the LSTM reads antialiased grey better) and saves no time: off;
- upscaling every frame (x1.5, x2, or all lines to 24 px) costs 15-35% more time on a frame; only lines
  under 14 px (12 px fonts) gain from it (DejaVu Mono's small `@` is misread below about 24 px), so only
  those are upscaled;
- one single-threaded Tesseract per CPU on bands of the frame halves the wall time on 2 cores;
- on a whole 1920x1080 desktop of six xterms (6x13 bitmap, DejaVu Sans Mono 8-18 pt, light and dark), reading
  block by block lifts recall from 0.6-0.8 to 1.0 on the 8 and 14 pt windows, keeps 91-100% of ordinary
  words readable (73-100% read as one page), and takes about the time of one plain single-threaded pass.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["OcrSettings"]


@dataclass(frozen=True, slots=True)
class OcrSettings:
    """Tesseract tuning for one redaction.

    - `psm` / `oem`: Tesseract's page segmentation and engine modes (6: one uniform block; 11: sparse text;
      oem 1: the LSTM recogniser alone).
    - `binarize`: Otsu threshold to black and white before OCR (else grey); `normalize_polarity`: invert a
      dark theme so text is dark on light.
    - `scale`: a fixed resize factor, or None to pick one from the estimated text height: text whose lines
      are under `small_text_px` or over `large_text_px` tall is resized so they are `target_text_px` tall
      (within [`min_scale`, `max_scale`]); text in between is read as it is (a resize costs time).
    - `workers`: Tesseract processes run in parallel on horizontal bands cut along blank rows (0: one per
      CPU); bands are at least `min_band_px` tall. Each process runs single-threaded (OMP_THREAD_LIMIT=1
      unless the environment sets it), which on a busy 2-core machine is several times faster than
      Tesseract's OpenMP default.
    - `invert_lines`: Tesseract's own retry of low-confidence lines inverted (catches a dark panel inside
      a light window, at a small cost).
    - `timeout_s`: a Tesseract run that takes longer fails (and so the image is withheld).
    - `tolerant`: make up for OCR errors (see `_tolerance`); off only to measure what it adds.
    - `regions`: find the blocks of text first (see `_blocks`) and prepare and read each on its own, so a
      small-font or dark window on a large screen is read as well as when cropped; off: one page.
    - `colour_layers`: read a block's coloured ink once more on its own layer (see `_layers`): text drawn
      in a colour whose grey is near the background's (`grep --color`'s red on a dark theme).
    - `min_conf`: a word Tesseract reads with less confidence (0-100) is text it could not read: it is
      masked and the frame is amber, never green. Plain words (letters only) are left whatever their
      confidence; `token_conf` is the higher bar for words shaped like identifiers (digits, `@`, a dot
      inside, mixed case), which a half-read value is (see `_unreadable`).
    """

    psm: int = 6
    oem: int = 1
    lang: str = "eng"
    binarize: bool = False
    normalize_polarity: bool = True
    scale: float | None = None
    small_text_px: float = 14.0
    large_text_px: float = 40.0
    target_text_px: float = 24.0
    min_scale: float = 0.5
    max_scale: float = 3.0
    workers: int = 0
    min_band_px: int = 160
    invert_lines: bool = True
    limit_threads: bool = True
    timeout_s: float = 30.0
    tolerant: bool = True
    regions: bool = True
    colour_layers: bool = True
    min_conf: float = 30.0
    token_conf: float = 80.0

    def __post_init__(self) -> None:
        if self.psm not in (3, 4, 6, 11, 12):
            raise ValueError("psm must be one of 3, 4, 6, 11, 12 (modes that find words on a page)")
        if self.oem not in (0, 1, 2, 3):
            raise ValueError("oem must be 0, 1, 2 or 3")
        if self.scale is not None and not 0.1 <= self.scale <= 4.0:
            raise ValueError("scale must be between 0.1 and 4")
        if not 0.1 <= self.min_scale <= self.max_scale <= 4.0:
            raise ValueError("need 0.1 <= min_scale <= max_scale <= 4")
        if not 0 < self.small_text_px <= self.large_text_px:
            raise ValueError("need 0 < small_text_px <= large_text_px")
        if self.workers < 0 or self.min_band_px < 16 or self.timeout_s <= 0:
            raise ValueError("workers must be >= 0, min_band_px >= 16 and timeout_s > 0")

    @property
    def config(self) -> str:
        """The command-line options for pytesseract."""
        options = f"--oem {self.oem} --psm {self.psm}"
        if not self.invert_lines:
            options += " -c tessedit_do_invert=0"
        return options
