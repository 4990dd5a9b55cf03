"""Capture's frames on a real GNOME (gnome-shell 43 headless, tests/gnome.py, with PipeWire and
wireplumber), through mutter's screen cast (kronii.desktop.mutter_screencast, adapters/gnome_frames.py):

- the burst of the window kronii's Shell extension names is that window's own pixels, exactly as the
  screen shows them (found, pixel for pixel, in a recording of the whole monitor taken right after);
- with two windows, each id gives its own window, not the one in front;
- an id mutter does not know is WindowGone; without PipeWire, check() is CaptureUnavailable with the
  sentence `kronii doctor` gives.
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterator

import numpy as np
import pytest
from kronii.capture.adapters.gnome_frames import GnomeFrames
from kronii.capture.ports import CaptureUnavailable, WindowGone
from kronii.desktop.mutter_screencast import record_monitor_burst
from numpy.typing import NDArray

from tests.gnome import GnomeSession, gnome_home, start_gnome_for_capture
from tests.integration.sensor_adapters.test_gnome_focus_extension import kronii, wait_for

Pixels = NDArray[np.uint8]


@pytest.fixture(scope="module")
def gnome() -> Iterator[GnomeSession]:
    with start_gnome_for_capture() as session:
        yield session


def _focused(session: GnomeSession, app: str) -> int:
    """mutter's id of the focused window once it is `app`'s (kronii's extension's GetFocus)."""
    fields = ""

    def focused() -> bool:
        nonlocal fields
        fields = session.focus_fields()
        return fields.startswith(f"('{app}'")

    wait_for(focused)
    found = re.search(r"uint64 (\d+)", fields)
    assert found, fields
    return int(found.group(1))


def _settled(frames: GnomeFrames, window_id: int) -> Pixels:
    """The window's frame once two bursts in a row agree (a window just opened is still drawing)."""
    last = frames.burst((0, 0, 0, 0), 1, 100, window_id=window_id)[0].rgb
    for _ in range(20):
        time.sleep(0.3)
        now = frames.burst((0, 0, 0, 0), 1, 100, window_id=window_id)[0].rgb
        if now.shape == last.shape and np.array_equal(now, last):
            return now
        last = now
    raise AssertionError("the window never stopped changing")


def _places(screen: Pixels, window: Pixels) -> list[tuple[int, int]]:
    """Where `window` lies in `screen` pixel for pixel, but for its rounded corners (GTK4 windows'
    corners are transparent in the window's own frame and show the desktop on the screen)."""
    height, width = window.shape[:2]
    inset = 16
    inner = window[inset : height - inset, inset : width - inset]
    rows, columns = screen.shape[0] - height + 1, screen.shape[1] - width + 1
    assert rows > 0 and columns > 0, (screen.shape, window.shape)
    candidates = np.ones((rows, columns), dtype=bool)
    probes = np.random.default_rng(7).integers(0, [inner.shape[0], inner.shape[1]], size=(40, 2))
    for y, x in probes:
        block = screen[inset + y : inset + y + rows, inset + x : inset + x + columns]
        candidates &= (block == inner[y, x]).all(axis=2)
    places = []
    for top, left in zip(*np.nonzero(candidates), strict=True):
        seen = screen[top + inset : top + height - inset, left + inset : left + width - inset]
        if np.array_equal(seen, inner):
            places.append((int(top), int(left)))
    return places


def test_a_burst_of_the_window_the_extension_names_is_its_pixels_exactly_as_the_screen_shows_them(
    gnome: GnomeSession,
) -> None:
    gnome.open(["gnome-calculator"])
    window_id = _focused(gnome, "org.gnome.Calculator")
    frames = GnomeFrames(gnome.session_bus, gnome.env())
    frames.check()
    window = _settled(frames, window_id)
    burst = frames.burst((0, 0, 0, 0), 3, 150, window_id=window_id)
    screen = record_monitor_burst(gnome.session_bus, gnome.env(), count=1, interval_ms=100).frames[0][0]

    assert len(burst) == 3 and all(np.array_equal(frame.rgb, window) for frame in burst)
    assert burst[2].at_ms - burst[0].at_ms >= 2 * 150 - 20  # spaced as asked (stamped as they arrive)
    assert screen.shape == (800, 1280, 3)  # the virtual monitor
    assert 200 < window.shape[1] < 1280 and 200 < window.shape[0] < 800  # a window, not the monitor
    assert len(_places(screen, window)) == 1


def test_each_window_id_gives_its_own_window_not_the_one_in_front(gnome: GnomeSession) -> None:
    calculator = _focused(gnome, "org.gnome.Calculator")
    gnome.open(["galculator"])
    front = _focused(gnome, "galculator")
    frames = GnomeFrames(gnome.session_bus, gnome.env())
    behind = _settled(frames, calculator)
    in_front = _settled(frames, front)
    assert behind.shape != in_front.shape or not np.array_equal(behind, in_front)
    # Only the named window's pixels: gnome-calculator's orange "=" key is in its frame, not galculator's.
    orange = np.array([255, 120, 0], dtype=np.int16)

    def has_orange(frame: Pixels) -> bool:
        return bool((np.abs(frame.astype(np.int16) - orange).max(axis=2) < 24).sum() > 500)

    assert has_orange(behind) and not has_orange(in_front)


def test_an_id_mutter_does_not_know_is_window_gone(gnome: GnomeSession) -> None:
    frames = GnomeFrames(gnome.session_bus, gnome.env())
    with pytest.raises(WindowGone, match="mutter knows no window 987654321"):
        frames.burst((0, 0, 0, 0), 1, 100, window_id=987654321)


def test_without_pipewire_check_says_so_in_the_doctors_sentence() -> None:
    with gnome_home() as session:
        session.start()
        frames = GnomeFrames(session.session_bus, session.env())
        with pytest.raises(CaptureUnavailable) as refused:
            frames.check()
        assert str(refused.value) == (
            "GNOME gives other programs frames only through its screen cast, and PipeWire is not running "
            "in this session (GNOME's screen cast sends its frames through it)"
        )
        doctor = kronii(session, "doctor")
        assert "PipeWire is not running in this session" in doctor.stdout + doctor.stderr
