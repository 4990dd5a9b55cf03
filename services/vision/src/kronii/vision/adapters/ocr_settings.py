"""How the OCR reader's two passes run (adapters/ocr.py's docstring discusses the defaults)."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["ScreenOcrSettings"]


@dataclass(frozen=True, slots=True)
class ScreenOcrSettings:
    """How the two passes run; the defaults are discussed in the module's docstring."""

    half_scale: float = 0.5
    low_confidence: float = 0.6
    # Characters per 1000 px² of a zone (see ocr_zones.Zone.density): DejaVu Sans at 10 px is ~14, 14 px ~7,
    # 16 px ~6, 20 px ~3.5: text under about 17 px is dense.
    dense_chars_per_kpx: float = 5.0
    screen_dpi: float = 96.0
    target_dpi: float = 300.0
    max_crop_side: int = 2000
    max_crops: int = 8
    # Zones read with less confidence are noise (icons, pictures, ruled lines) and are dropped.
    min_confidence: float = 0.2
    timeout_s: float = 10.0
    crop_timeout_s: float = 4.0
    max_pixels: int = 4096 * 4096
    lang: str = "eng"

    def __post_init__(self) -> None:
        if not 0.1 <= self.half_scale <= 1.0:
            raise ValueError("half_scale must be in [0.1, 1]")
        if not 0.0 <= self.min_confidence <= self.low_confidence <= 1.0:
            raise ValueError("need 0 <= min_confidence <= low_confidence <= 1")
        if self.max_crops < 0 or self.max_crop_side < 64 or self.timeout_s <= 0 or self.crop_timeout_s <= 0:
            raise ValueError("max_crops >= 0, max_crop_side >= 64 and positive timeouts are required")

    @property
    def crop_factor(self) -> float:
        return self.target_dpi / self.screen_dpi
