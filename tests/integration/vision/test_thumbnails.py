"""The screen thumbnails on a real 1920x1080 Xvfb: the size in X pixels, the reduced frame's shape, and a
window that appears is a change R1 sees while an unchanged screen is none."""

from __future__ import annotations

import time
from collections.abc import Iterator

import numpy as np
import pytest
from kronii.vision.adapters.screen_thumbnail import ScreenThumbnails, ThumbnailError
from kronii.vision.core.diff import diff_score

from tests.desktop import open_window, start_xvfb

R1_THRESHOLD = 0.01


@pytest.fixture(scope="module")
def full_hd() -> Iterator[str]:
    with start_xvfb(screen="1920x1080x24") as display:
        yield display


def test_the_screen_size_is_in_x_pixels_and_the_frame_is_reduced_one_eighth(full_hd: str) -> None:
    with ScreenThumbnails(full_hd) as thumbnails:
        assert thumbnails.screen_size() == (1920, 1080)
        frame = thumbnails.grab()
    assert frame.shape == (135, 240)
    assert frame.dtype == np.uint8


def test_a_still_screen_does_not_change_and_a_new_window_does(full_hd: str) -> None:
    with ScreenThumbnails(full_hd) as thumbnails:
        before = thumbnails.grab()
        assert diff_score(before, thumbnails.grab()) == 0.0
        with open_window(full_hd, "thumbnail test", "KroniiThumbTest"):
            # The window is mapped; give the xterm a moment to paint its white background.
            deadline = time.monotonic() + 5
            while (score := diff_score(before, thumbnails.grab())) <= R1_THRESHOLD:
                if time.monotonic() > deadline:
                    break
                time.sleep(0.05)
    assert score > R1_THRESHOLD


def test_one_grab_of_a_full_hd_screen_takes_tens_of_milliseconds(full_hd: str) -> None:
    with ScreenThumbnails(full_hd) as thumbnails:
        thumbnails.grab()
        times = []
        for _ in range(5):
            started = time.perf_counter()
            thumbnails.grab()
            times.append(time.perf_counter() - started)
    # About 20 ms here; the bound leaves room for a busy two-core machine.
    assert min(times) < 0.2


def test_no_display_is_a_sentence_not_a_traceback_from_xlib(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("DISPLAY", raising=False)
    with pytest.raises(ThumbnailError, match="DISPLAY is not set"):
        ScreenThumbnails()
    with pytest.raises(ThumbnailError, match="no connection to the X display"):
        ScreenThumbnails(":4095")
