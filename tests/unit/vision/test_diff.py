"""The pixel diff behind R1 on 1920x1080 frames reduced 1/8: what is noise and what is a change."""

from __future__ import annotations

import numpy as np
import pytest
from kronii.vision.core.diff import NOISE_LEVEL, diff_score, reduce

R1_THRESHOLD = 0.01
WIDTH, HEIGHT = 1920, 1080


def desktop() -> np.ndarray:
    """An RGB frame with some structure: a grey background, a light window and lines of dark 'text'."""
    frame = np.full((HEIGHT, WIDTH, 3), 90, dtype=np.uint8)
    frame[100:900, 200:1500] = 235
    for top in range(140, 860, 24):
        frame[top : top + 12, 240:1400:9] = 30
    return frame


def test_identical_frames_score_zero() -> None:
    frame = reduce(desktop())
    assert diff_score(frame, frame.copy()) == 0.0


def test_a_blinking_caret_stays_under_the_r1_threshold() -> None:
    before = desktop()
    after = before.copy()
    after[399:417, 615:617] = 0  # a 2x18 px caret straddling cell borders on both axes
    score = diff_score(reduce(before), reduce(after))
    assert 0.0 < score < R1_THRESHOLD
    assert score <= 8 / (240 * 135)  # at most 2x4 cells


def test_a_dialog_opening_is_far_over_the_r1_threshold() -> None:
    before = desktop()
    after = before.copy()
    after[440:640, 810:1110] = (60, 60, 120)  # 300x200 px
    score = diff_score(reduce(before), reduce(after))
    assert score > 2.5 * R1_THRESHOLD


def test_a_resolution_change_is_a_whole_change() -> None:
    small = reduce(np.zeros((768, 1024, 3), dtype=np.uint8))
    large = reduce(np.zeros((HEIGHT, WIDTH, 3), dtype=np.uint8))
    assert diff_score(small, large) == 1.0


def test_pixel_jitter_at_noise_level_is_ignored() -> None:
    rng = np.random.default_rng(7)
    before = desktop()
    jitter = rng.integers(-12, 13, size=before.shape)
    after = np.clip(before.astype(np.int16) + jitter, 0, 255).astype(np.uint8)
    assert np.abs(after.astype(int) - before.astype(int)).max() > NOISE_LEVEL  # per pixel it is over
    assert diff_score(reduce(before), reduce(after)) == 0.0


def test_a_small_change_of_contrast_under_the_noise_level_is_ignored() -> None:
    before = desktop()
    after = np.clip(before.astype(np.int16) + NOISE_LEVEL - 2, 0, 255).astype(np.uint8)
    assert diff_score(reduce(before), reduce(after)) == 0.0


def test_reduce_takes_block_means_of_luma() -> None:
    frame = np.zeros((16, 24, 3), dtype=np.uint8)
    frame[:8, :8] = (255, 0, 0)  # pure red: luma 76
    frame[8:, 16:] = 255
    frame[8:12, 8:16] = 200  # half of a block
    reduced = reduce(frame)
    assert reduced.shape == (2, 3)
    assert reduced.dtype == np.uint8
    assert reduced.tolist() == [[76, 0, 0], [0, 100, 255]]


def test_reduce_keeps_partial_edge_blocks() -> None:
    frame = np.zeros((1085, 1923), dtype=np.uint8)
    frame[1080:, 1920:] = 200  # only the partial corner block
    reduced = reduce(frame)
    assert reduced.shape == (136, 241)
    assert reduced[-1, -1] == 200
    assert int(reduced[:-1, :-1].max()) == 0


def test_reduce_ignores_alpha() -> None:
    rgb = desktop()
    rgba = np.dstack([rgb, np.zeros(rgb.shape[:2], dtype=np.uint8)])
    assert np.array_equal(reduce(rgba), reduce(rgb))


@pytest.mark.parametrize("shape", [(10,), (4, 4, 2), (0, 8)])
def test_reduce_refuses_what_is_not_a_frame(shape: tuple[int, ...]) -> None:
    with pytest.raises(ValueError, match="frame"):
        reduce(np.zeros(shape, dtype=np.uint8))
