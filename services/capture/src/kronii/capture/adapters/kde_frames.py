"""Grabbing a burst of the focused window on KDE Plasma (KWin) through ScreenShot2
(kronii.desktop.kwin_screenshot): the helper runs in kronii's interpreter copy, which the person
authorised with `kronii capture kde allow`, and KWin hands it the active window's own pixels (nothing
that overlaps it, no decoration, no cursor). Each frame names the window KWin took: a burst of another
window than the one the sensor named is WindowGone, never stored. Everything here blocks; the app runs
it in a worker thread."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from collections.abc import Mapping

import numpy as np
from kronii.capture.core.frames import Frame, Geometry
from kronii.capture.ports import CaptureUnavailable, WindowGone
from kronii.desktop.kwin_screenshot import (
    FOUR_BYTE_FORMATS,
    NOT_AUTHORISED_EXIT,
    KWinFrame,
    grant_for,
    kwin_window_number,
    parse_frames,
)
from kronii.desktop.session import KWIN_BUS, bus_name_owned

__all__ = ["KdeFrames", "rgb_of"]

_HELPER = "kronii.desktop.kwin_screenshot"
_TIMEOUT_S = 30.0


def rgb_of(frame: KWinFrame) -> np.ndarray:
    """The frame's pixels as (height, width, 3) RGB; KWin's 4-byte formats are B, G, R, A in memory."""
    if frame.image_format not in FOUR_BYTE_FORMATS:
        raise CaptureUnavailable(
            f"KWin sent an image format kronii does not read (QImage format {frame.image_format})"
        )
    rows = np.frombuffer(frame.data, dtype=np.uint8, count=frame.stride * frame.height)
    pixels = rows.reshape(frame.height, frame.stride)[:, : frame.width * 4].reshape(
        frame.height, frame.width, 4
    )
    return np.ascontiguousarray(pixels[:, :, 2::-1])


class KdeFrames:
    """A FrameSource on KWin's session bus (`bus_address`); `env` is the session's environment."""

    display = "Wayland (KDE Plasma): frames through KWin's ScreenShot2 (kronii's authorised interpreter copy)"

    def __init__(self, bus_address: str, env: Mapping[str, str]) -> None:
        self._bus = bus_address
        self._env = dict(env)
        self._grant = grant_for(self._env)
        self._lock = threading.Lock()  # one burst at a time

    def check(self) -> None:
        """Raise CaptureUnavailable unless KWin answers and the person's grant holds."""
        if not bus_name_owned(KWIN_BUS, self._bus):
            raise CaptureUnavailable(f"KWin ({KWIN_BUS}) does not answer on the session bus")
        problem = self._grant.problem()
        if problem:
            raise CaptureUnavailable(problem)

    def geometry(self, window_id: int) -> Geometry:
        """Not needed on KDE: KWin takes the window itself (its size comes with the frames)."""
        return (0, 0, 0, 0)

    def burst(self, region: Geometry, count: int, interval_ms: int, window_id: int = 0) -> list[Frame]:
        """`count` frames of the active window, `interval_ms` apart; WindowGone when KWin took another
        window than `window_id` (the sensor's; 0: whichever is active)."""
        with self._lock:
            frames = self._run(count, interval_ms)
        for frame in frames:
            if window_id and kwin_window_number(frame.window) != window_id:
                raise WindowGone("another window took the focus before KWin took the frames")
        return [Frame(rgb_of(frame), frame.at_ms) for frame in frames]

    def _run(self, count: int, interval_ms: int) -> list[KWinFrame]:
        problem = self._grant.problem()
        if problem:
            raise CaptureUnavailable(problem)
        env = {**self._env, "DBUS_SESSION_BUS_ADDRESS": self._bus}
        # the copy is a bare interpreter: it finds kronii and dbus-fast where this process does
        env["PYTHONPATH"] = os.pathsep.join(path for path in sys.path if path)
        argv = [str(self._grant.interpreter), "-m", _HELPER, str(count), str(interval_ms)]
        try:
            done = subprocess.run(argv, env=env, capture_output=True, timeout=_TIMEOUT_S, check=False)
        except (OSError, subprocess.TimeoutExpired) as error:
            raise CaptureUnavailable(f"kronii's ScreenShot2 helper did not run: {error}") from None
        why = done.stderr.decode(errors="replace").strip().splitlines()
        if done.returncode == NOT_AUTHORISED_EXIT:
            raise CaptureUnavailable(
                "KWin does not (yet) authorise kronii's interpreter copy for ScreenShot2 (it reads a new desktop "
                "file within seconds): run `kronii capture kde allow` if this lasts"
            )
        if done.returncode != 0:
            raise CaptureUnavailable(
                why[-1] if why else f"kronii's ScreenShot2 helper exited {done.returncode}"
            )
        try:
            return parse_frames(done.stdout)
        except ValueError as error:
            raise CaptureUnavailable(f"kronii's ScreenShot2 helper: {error}") from None
