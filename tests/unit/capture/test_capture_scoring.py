"""Frame scoring on synthetic numpy frames: cheap signals, SSIM, OCR economy, ranking."""

from __future__ import annotations

import numpy as np
import pytest
from kronii.capture.core.scoring import (
    REUSE_OCR_SSIM,
    Frame,
    Scored,
    blur_score,
    edge_density,
    half_scale,
    rank_frames,
    risk_penalty,
    ssim,
    to_grey,
    ui_semantics_hint,
)

HEIGHT, WIDTH = 240, 320


def text_like(seed: int) -> Frame:
    """Dark glyph-sized strokes on a light background, in rows like lines of text."""
    rng = np.random.default_rng(seed)
    frame = np.full((HEIGHT, WIDTH), 235, dtype=np.uint8)
    for line_top in range(8, HEIGHT - 12, 14):
        x = 6
        while x < WIDTH - 10:
            width = int(rng.integers(2, 6))
            if rng.random() < 0.8:
                frame[line_top : line_top + 9, x : x + width] = 20
            x += width + int(rng.integers(1, 4))
    return frame


def box_blur(frame: Frame, radius: int = 2) -> Frame:
    padded = np.pad(frame.astype(np.float64), radius, mode="edge")
    size = 2 * radius + 1
    out = np.zeros(frame.shape)
    for dy in range(size):
        for dx in range(size):
            out += padded[dy : dy + frame.shape[0], dx : dx + frame.shape[1]]
    result: Frame = np.rint(out / size**2).astype(np.uint8)
    return result


class CountingOcr:
    def __init__(self, densities: dict[int, float] | None = None, default: float = 0.4) -> None:
        self.calls: list[tuple[int, ...]] = []
        self.seen: list[Frame] = []
        self.densities = densities or {}
        self.default = default

    def __call__(self, frame: Frame) -> float:
        self.calls.append(frame.shape)
        self.seen.append(frame)
        return self.densities.get(len(self.calls) - 1, self.default)


SHARP = text_like(1)
BLANK = np.full((HEIGHT, WIDTH), 200, dtype=np.uint8)


def test_blurred_frame_scores_lower_on_blur() -> None:
    assert blur_score(SHARP) > 0.9
    assert blur_score(box_blur(SHARP)) < blur_score(SHARP) - 0.5


def test_blank_frame_has_no_edges_and_nothing_sharp() -> None:
    assert edge_density(BLANK) == 0.0
    assert blur_score(BLANK) == 0.0
    assert edge_density(SHARP) > 0.05


def test_ssim_is_one_for_identical_frames_and_lower_for_different_ones() -> None:
    assert ssim(SHARP, SHARP.copy()) == 1.0
    assert ssim(SHARP, text_like(2)) < 0.9
    assert ssim(SHARP, BLANK) < 0.6
    noisy = np.clip(SHARP.astype(int) + np.random.default_rng(0).integers(-1, 2, SHARP.shape), 0, 255)
    assert ssim(SHARP, noisy.astype(np.uint8)) >= REUSE_OCR_SSIM


def test_ssim_of_frames_of_different_sizes_is_zero() -> None:
    assert ssim(SHARP, SHARP[:-2]) == 0.0


def test_identical_frames_reuse_the_first_ocr_result() -> None:
    ocr = CountingOcr(default=0.3)
    other = text_like(2)
    scores = rank_frames(
        [SHARP, SHARP.copy(), SHARP.copy(), other], wm_class="XTerm", title="sh", ocr_text_density=ocr
    )
    assert len(ocr.calls) == 2  # the three alike once, the fourth once
    by_index = {score.index: score for score in scores}
    assert [by_index[i].text_source for i in range(4)] == ["ocr", "reused", "reused", "ocr"]
    assert all(score.text_density == 0.3 for score in scores)


def test_ocr_runs_only_on_frames_that_can_win() -> None:
    frames = [box_blur(text_like(3)), box_blur(text_like(4), radius=3), SHARP, text_like(7)]
    ocr = CountingOcr()
    scores = rank_frames(frames, wm_class="XTerm", title="sh", ocr_text_density=ocr)
    assert len(ocr.calls) == 2
    assert {score.index for score in scores if score.text_source == "ocr"} == {2, 3}
    assert {score.text_source for score in scores if score.index in (0, 1)} == {"skipped"}


def test_a_burst_with_one_frame_worth_reading_is_not_read_for_its_score() -> None:
    # Its text density could not reorder the burst, and the redaction reads that frame anyway:
    # the job's score takes the redaction's reading (one Tesseract pass per job, not two).
    frames = [box_blur(text_like(3)), box_blur(text_like(4), radius=3), SHARP, SHARP.copy()]
    ocr = CountingOcr(default=0.4)
    scored = Scored(rank_frames(frames, wm_class="XTerm", title="sh", ocr_text_density=ocr), 0)
    assert ocr.calls == []
    assert scored.text_deferred and scored.primary.index in (2, 3)
    filled = scored.with_primary_text(0.4)
    assert not filled.text_deferred and filled.primary.text_density == 0.4
    assert [s.index for s in filled.ranked] == [s.index for s in scored.ranked]
    read = rank_frames(
        [*frames, text_like(8)], wm_class="XTerm", title="sh", ocr_text_density=CountingOcr(default=0.4)
    )
    same = next(s for s in read if s.index == filled.primary.index)
    assert filled.primary.total == pytest.approx(same.total)  # the score OCR would have given


def test_ocr_receives_the_frame_at_half_scale() -> None:
    ocr = CountingOcr()
    rank_frames([SHARP, text_like(2)], wm_class="", title="", ocr_text_density=ocr)
    assert ocr.calls == [(HEIGHT // 2, WIDTH // 2)] * 2
    assert np.array_equal(ocr.seen[0], half_scale(SHARP))


def test_text_density_decides_between_equally_good_frames() -> None:
    frames = [text_like(5), text_like(6)]
    ocr = CountingOcr(densities={0: 0.1, 1: 0.9})
    scores = rank_frames(frames, wm_class="", title="", ocr_text_density=ocr)
    assert len(ocr.calls) == 2
    assert scores[0].index == 1
    assert scores[0].total > scores[1].total


def test_ranking_puts_the_sharp_frame_first_wherever_it_is() -> None:
    frames = [SHARP, box_blur(SHARP), box_blur(SHARP, radius=4)]
    scores = rank_frames(frames[::-1], wm_class="", title="", ocr_text_density=CountingOcr())
    assert scores[0].index == 2
    assert [score.total for score in scores] == sorted((score.total for score in scores), reverse=True)


def test_totals_stay_within_zero_and_one() -> None:
    ocr = CountingOcr(default=1.0)
    for wm_class, title in [("KeePassXC", "Passwords"), ("zoom", "Meeting"), ("", "")]:
        for score in rank_frames([SHARP, BLANK], wm_class=wm_class, title=title, ocr_text_density=ocr):
            assert 0.0 <= score.total <= 1.0


def test_risky_window_scores_lower_without_reordering_frames() -> None:
    frames = [SHARP, box_blur(SHARP)]
    calm = rank_frames(frames, wm_class="XTerm", title="build log", ocr_text_density=CountingOcr())
    risky = rank_frames(frames, wm_class="XTerm", title="sudo password", ocr_text_density=CountingOcr())
    assert [s.index for s in calm] == [s.index for s in risky]
    assert risky[0].total < calm[0].total
    assert risky[0].risk > 0


@pytest.mark.parametrize(
    ("wm_class", "title", "minimum"),
    [
        ("KeePassXC", "Database - KeePassXC", 1.0),
        ("Bitwarden", "Vault", 1.0),
        ("firefox", "Online Banking - Example Bank", 0.9),
        ("firefox", "Mozilla Firefox Private Browsing", 0.8),
        ("chromium", "New Incognito Tab", 0.8),
        ("firefox", "Sign in to your account", 0.7),
    ],
)
def test_risk_penalty_recognises_sensitive_windows(wm_class: str, title: str, minimum: float) -> None:
    assert risk_penalty(wm_class, title) >= minimum


def test_ordinary_windows_carry_no_risk() -> None:
    assert risk_penalty("XTerm", "make test") == 0.0
    assert risk_penalty("code", "scoring.py - kronii") == 0.0


def test_ui_hint_ranks_meetings_and_media_above_terminals() -> None:
    meeting = ui_semantics_hint("zoom", "Zoom Meeting")
    video = ui_semantics_hint("mpv", "talk.webm - mpv")
    document = ui_semantics_hint("org.gnome.Evince", "paper.pdf")
    browser = ui_semantics_hint("firefox", "Search")
    ide = ui_semantics_hint("jetbrains-pycharm", "kronii")
    terminal = ui_semantics_hint("XTerm", "bash")
    assert meeting > video > document > browser > ide > terminal
    assert ui_semantics_hint("", "") == 0.5


def test_rank_of_no_frames_is_empty_and_colour_frames_are_refused() -> None:
    assert rank_frames([], wm_class="", title="", ocr_text_density=CountingOcr()) == []
    rgb = np.zeros((4, 4, 3), dtype=np.uint8)
    with pytest.raises(ValueError, match="greyscale"):
        rank_frames([rgb], wm_class="", title="", ocr_text_density=CountingOcr())


def test_to_grey_uses_luma_weights_and_ignores_alpha() -> None:
    rgba = np.zeros((2, 2, 4), dtype=np.uint8)
    rgba[0, 0] = (255, 0, 0, 0)
    rgba[0, 1] = (0, 255, 0, 255)
    rgba[1, 0] = (255, 255, 255, 7)
    grey = to_grey(rgba)
    assert grey.dtype == np.uint8
    assert grey.tolist() == [[76, 150], [255, 0]]
    assert to_grey(grey) is not None and to_grey(grey).shape == (2, 2)
    with pytest.raises(ValueError, match="shape"):
        to_grey(np.zeros((2, 2, 2), dtype=np.uint8))


def test_half_scale_averages_two_by_two_blocks() -> None:
    frame = np.array([[0, 4, 8, 8, 1], [4, 4, 8, 8, 1], [9, 9, 9, 9, 9]], dtype=np.uint8)
    assert half_scale(frame).tolist() == [[3, 8]]
