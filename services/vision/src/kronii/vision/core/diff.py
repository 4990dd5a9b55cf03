"""The pixel diff behind R1: how much of the screen changed between two reduced grayscale frames.

A frame is reduced by block means (`reduce`, 1/8 by default: 1920x1080 becomes 240x135, 32,400 cells)
and two frames are compared cell by cell. A cell counts as changed when its mean moved by more than
`NOISE_LEVEL` grey levels; the score is the share of changed cells.

The numbers, on a 1920x1080 screen reduced 1/8 (R1 skips the model below a score of 0.01, 324 cells):
- a blinking text caret (2x18 px) touches at most 2x4 cells: a score of at most 0.00025;
- a 300x200 dialog covers about 38x25 cells: 0.03 and more when its fill differs from what it covers
  (a dialog the exact colour of what lies under it changes only its frame and text: fewer cells);
- sensor noise, dithering or compression jitter of +-12 levels per pixel moves an 8x8 mean by about
  1 level (the 64 pixels average it out), far under `NOISE_LEVEL`; a one-pixel-wide full-contrast
  line across a cell moves it by 32, far over.

Staleness compares the target window only (`region`, its rectangle in cells), and leaves out the parts
of it drawn over by what is not the application's (`masks`: kronii's own confirmation bubble): the
score is then the share of the window's unmasked cells that changed.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

__all__ = ["DEFAULT_FACTOR", "NOISE_LEVEL", "Cells", "cells_of", "diff_score", "reduce"]

DEFAULT_FACTOR = 8
# Grey levels (of 255) a cell's mean must move by to count as changed; see the module's numbers.
NOISE_LEVEL = 8
# ITU-R BT.601 luma, the weights PIL's convert("L") uses too.
_LUMA = np.array([0.299, 0.587, 0.114])


def _block_sums(image: np.ndarray, factor: int) -> np.ndarray:
    """Sums over factor x factor blocks (the last row and column of blocks may be partial)."""
    rows = np.arange(0, image.shape[0], factor)
    cols = np.arange(0, image.shape[1], factor)
    by_rows = np.add.reduceat(image, rows, axis=0, dtype=np.uint32)
    return np.add.reduceat(by_rows, cols, axis=1, dtype=np.uint32)


def _block_counts(height: int, width: int, factor: int) -> np.ndarray:
    row_counts = np.minimum(factor, height - np.arange(0, height, factor))
    col_counts = np.minimum(factor, width - np.arange(0, width, factor))
    return np.outer(row_counts, col_counts)


def reduce(rgb_or_gray: np.ndarray, factor: int = DEFAULT_FACTOR) -> np.ndarray:
    """A uint8 grayscale frame `factor` times smaller on each side (rounded up), each cell the mean of
    its block. Takes an HxW gray frame or an HxWxC one with C = 3 (RGB) or 4 (RGBA, alpha ignored)."""
    if factor < 1:
        raise ValueError("the reduction factor must be at least 1")
    if rgb_or_gray.ndim not in (2, 3) or (rgb_or_gray.ndim == 3 and rgb_or_gray.shape[2] not in (3, 4)):
        raise ValueError(f"expected an HxW gray or HxWx3/4 colour frame, got shape {rgb_or_gray.shape}")
    height, width = rgb_or_gray.shape[:2]
    if height == 0 or width == 0:
        raise ValueError("cannot reduce an empty frame")
    sums = _block_sums(rgb_or_gray, factor)
    # Luma is linear, so weighting the channels' block sums equals the block mean of each pixel's luma
    # at a fraction of the cost (the full frame is never converted).
    gray_sums = sums if sums.ndim == 2 else sums[..., :3] @ _LUMA
    means = gray_sums / _block_counts(height, width, factor)
    reduced: np.ndarray = np.clip(np.rint(means), 0, 255).astype(np.uint8)
    return reduced


@dataclass(frozen=True, slots=True)
class Cells:
    """A rectangle of a reduced frame's cells: rows `top`..`bottom`-1, columns `left`..`right`-1."""

    left: int
    top: int
    right: int
    bottom: int


def cells_of(x: int, y: int, width: int, height: int, factor: int = DEFAULT_FACTOR) -> Cells:
    """The cells a rectangle of screen pixels touches, even in part (a cell half under a bubble is
    masked whole; a window's edge cell is the window's)."""
    return Cells(x // factor, y // factor, -(-(x + width) // factor), -(-(y + height) // factor))


def _window(shape: tuple[int, ...], cells: Cells) -> tuple[slice, slice]:
    rows, cols = shape[0], shape[1]
    top, bottom = min(max(cells.top, 0), rows), min(max(cells.bottom, 0), rows)
    left, right = min(max(cells.left, 0), cols), min(max(cells.right, 0), cols)
    return slice(top, bottom), slice(left, right)


def diff_score(
    previous: np.ndarray,
    current: np.ndarray,
    region: Cells | None = None,
    masks: Sequence[Cells] = (),
) -> float:
    """The share (0..1) of cells whose mean moved by more than NOISE_LEVEL between two reduced frames,
    counted inside `region` (the whole frame when None) and outside every mask.

    Frames of different shapes (the screen's resolution changed) are wholly different: 1.0. A region
    wholly masked or off the frame has nothing to compare: 0.0."""
    if previous.ndim != 2 or current.ndim != 2:
        raise ValueError("diff_score compares 2-D grayscale frames (see reduce)")
    if previous.shape != current.shape:
        return 1.0
    if previous.size == 0:
        return 0.0
    moved = np.abs(previous.astype(np.int16) - current.astype(np.int16)) > NOISE_LEVEL
    counted = np.zeros(moved.shape, dtype=bool)
    if region is None:
        counted[:] = True
    else:
        counted[_window(moved.shape, region)] = True
    for mask in masks:
        counted[_window(moved.shape, mask)] = False
    total = int(np.count_nonzero(counted))
    if total == 0:
        return 0.0
    return float(np.count_nonzero(moved & counted)) / total
