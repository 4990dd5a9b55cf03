"""How the image redactor runs Tesseract. The defaults come from bench/redaction_image.py's measurements
(recall of planted values and time per choice, on DejaVu Sans, Mono and Serif at 12-20 px, light and dark).
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["OcrSettings"]


@dataclass(frozen=True, slots=True)
class OcrSettings:
    """Tesseract tuning for one redaction.

    - `psm` / `oem`: Tesseract's page segmentation and engine modes (6: one uniform block; 11: sparse text;
      oem 1: the LSTM recogniser alone).
    - `binarize`: Otsu threshold to black and white before OCR; `normalize_polarity`: invert a dark theme
      so text is dark on light.
    - `scale`: a fixed resize factor, or None to pick one from the estimated text height so that lines are
      about `target_text_px` tall, within [`min_scale`, `max_scale`]; factors within `keep_scale_within`
      of 1 are not applied (a resize costs time and blurs glyphs).
    - `workers`: Tesseract processes run in parallel on horizontal bands cut along blank rows (0: one per
      CPU); bands are at least `min_band_px` tall. Each process runs single-threaded (OMP_THREAD_LIMIT=1
      unless the environment sets it), which on a busy 2-core machine is several times faster than
      Tesseract's OpenMP default.
    - `invert_lines`: Tesseract's own retry of low-confidence lines inverted (catches a dark panel inside
      a light window, at a small cost).
    - `timeout_s`: a Tesseract run that takes longer fails (and so the image is withheld).
    - `tolerant`: make up for OCR errors (see `_tolerance`); off only to measure what it adds.
    """

    psm: int = 6
    oem: int = 1
    lang: str = "eng"
    binarize: bool = True
    normalize_polarity: bool = True
    scale: float | None = None
    target_text_px: float = 20.0
    min_scale: float = 0.5
    max_scale: float = 2.0
    keep_scale_within: float = 0.2
    workers: int = 0
    min_band_px: int = 160
    invert_lines: bool = True
    limit_threads: bool = True
    timeout_s: float = 30.0
    tolerant: bool = True

    def __post_init__(self) -> None:
        if self.psm not in (3, 4, 6, 11, 12):
            raise ValueError("psm must be one of 3, 4, 6, 11, 12 (modes that find words on a page)")
        if self.oem not in (0, 1, 2, 3):
            raise ValueError("oem must be 0, 1, 2 or 3")
        if self.scale is not None and not 0.1 <= self.scale <= 4.0:
            raise ValueError("scale must be between 0.1 and 4")
        if not 0.1 <= self.min_scale <= self.max_scale <= 4.0:
            raise ValueError("need 0.1 <= min_scale <= max_scale <= 4")
        if self.workers < 0 or self.min_band_px < 16 or self.timeout_s <= 0:
            raise ValueError("workers must be >= 0, min_band_px >= 16 and timeout_s > 0")

    @property
    def config(self) -> str:
        """The command-line options for pytesseract."""
        options = f"--oem {self.oem} --psm {self.psm}"
        if not self.invert_lines:
            options += " -c tessedit_do_invert=0"
        return options
