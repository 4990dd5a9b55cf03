"""Capture's frames on a real KWin (KDE Plasma 5.27's kwin_wayland, headless with llvmpipe, tests/kde.py)
through ScreenShot2: refused with the sentence that names `kronii capture kde allow` until the person
runs it; then the window the sensor's KdeDisplay names is taken (its own pixels, the size KWin gives),
a request naming another window than the focused one is WindowGone (never another window's frames),
and `revoke` takes it back."""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from kronii.capture.adapters.kde_frames import KdeFrames
from kronii.capture.ports import CaptureUnavailable, WindowGone
from kronii.desktop.session import capability, probe
from kronii.sensor.adapters.kwin import KdeDisplay
from kronii.sensor.core.model import Focus

from tests.integration.sensor_adapters.test_kde_kwin_script import wait_for
from tests.kde import KWin, start_kwin
from tests.wayland import CLIENTS

GTK3, QT5 = CLIENTS[1], CLIENTS[3]
KRONII = str(Path(sys.executable).parent / "kronii")


def _kde(kwin: KWin, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [KRONII, "capture", "kde", *args], env=kwin.env(), capture_output=True, text=True, timeout=60
    )


@pytest.fixture(scope="module")
def kwin() -> Iterator[KWin]:
    with start_kwin() as session:
        yield session


@pytest.fixture(scope="module")
def focus(kwin: KWin) -> Iterator[list[Focus]]:
    seen: list[Focus] = []
    source = KdeDisplay(probe(kwin.env()), address=kwin.session_bus)
    source.start(seen.append)
    try:
        yield seen
    finally:
        source.close()


def _focused(kwin: KWin, seen: list[Focus], app: str) -> Focus:
    wait_for(lambda: bool(seen) and seen[-1].wm_class.lower() == app, f"{app} focused")
    return seen[-1]


def _allowed_burst(source: KdeFrames, window_id: int, count: int) -> list[np.ndarray]:
    """KWin reads a new desktop file within seconds: until then it answers NoAuthorized."""
    deadline = time.monotonic() + 20
    while True:
        try:
            return [frame.rgb for frame in source.burst((0, 0, 0, 0), count, 50, window_id=window_id)]
        except CaptureUnavailable as error:
            if "does not (yet) authorise" not in str(error) or time.monotonic() > deadline:
                raise


def test_without_the_persons_grant_kde_capture_is_refused_with_the_command_that_gives_it(
    kwin: KWin, focus: list[Focus]
) -> None:
    _kde(kwin, "revoke")
    facts = probe(kwin.env())
    frames = capability(facts, "capture", "frames")
    assert not frames.ok and "run `kronii capture kde allow`" in frames.detail
    source = KdeFrames(kwin.session_bus, kwin.env())
    with pytest.raises(CaptureUnavailable, match="kronii capture kde allow"):
        source.check()
    status = _kde(kwin, "status")
    assert status.returncode == 1 and "kronii capture kde allow" in status.stderr


def test_after_allow_the_focused_window_is_taken_and_another_windows_id_is_window_gone(
    kwin: KWin, focus: list[Focus]
) -> None:
    allowed = _kde(kwin, "allow")
    assert allowed.returncode == 0, allowed.stderr
    assert _kde(kwin, "status").returncode == 0
    facts = probe(kwin.env())
    frames = capability(facts, "capture", "frames")
    assert frames.ok and "ScreenShot2" in frames.detail
    kwin.open(QT5)
    qt_window = _focused(kwin, focus, QT5.app_id).window_id
    kwin.open(GTK3)
    gtk_window = _focused(kwin, focus, GTK3.app_id).window_id
    assert gtk_window != qt_window
    source = KdeFrames(kwin.session_bus, kwin.env())
    source.check()
    taken = _allowed_burst(source, gtk_window, 3)
    assert len(taken) == 3
    height, width, depth = taken[0].shape
    assert depth == 3 and 100 < width < 1280 and 100 < height < 800  # the window, not the screen
    assert len(np.unique(taken[-1].reshape(-1, 3), axis=0)) > 8  # galculator's buttons and display
    with pytest.raises(WindowGone, match="another window took the focus"):
        source.burst(
            (0, 0, 0, 0), 1, 0, window_id=qt_window
        )  # featherpad was asked for; galculator is in front


def test_revoke_takes_the_grant_back(kwin: KWin) -> None:
    assert _kde(kwin, "allow").returncode == 0
    revoked = _kde(kwin, "revoke")
    assert revoked.returncode == 0, revoked.stderr
    with pytest.raises(CaptureUnavailable, match="kronii capture kde allow"):
        KdeFrames(kwin.session_bus, kwin.env()).check()
    assert _kde(kwin, "revoke").returncode == 3  # nothing left to revoke
