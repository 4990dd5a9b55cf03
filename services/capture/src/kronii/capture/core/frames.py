"""What the display gives the capture: a window's rectangle and the frames of a burst."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

__all__ = ["Frame", "Geometry"]

Geometry = tuple[int, int, int, int]  # x, y, width, height in root coordinates


@dataclass(frozen=True)
class Frame:
    """One grabbed frame: RGB pixels (H x W x 3, uint8) and when it was taken (epoch ms)."""

    rgb: NDArray[np.uint8]
    at_ms: int

    @property
    def width(self) -> int:
        return int(self.rgb.shape[1])

    @property
    def height(self) -> int:
        return int(self.rgb.shape[0])
