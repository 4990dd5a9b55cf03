"""Capture's frames on a real headless sway with real Wayland clients (foot showing known text, a GTK3
window): kronii's in-process wlr-screencopy against grim, the real tool, and the Wayland FrameSource's
geometry against sway's own description of the focused window. And on cage, a second wlroots
compositor that has no IPC and no window list: the whole output, as grim takes it."""

from __future__ import annotations

import io
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from kronii.capture.adapters.wayland_frames import WaylandFrames
from kronii.capture.ports import CaptureUnavailable, WindowGone
from kronii.desktop.wayland_screencopy import ScreenCopy
from PIL import Image

from tests.integration.capture.capture_support import PLANTED_TEXT
from tests.wayland import (
    CLIENTS,
    Sway,
    foot_showing,
    grim_region,
    start_cage,
    start_sway,
    start_weston,
    wait_until_still,
)

GTK3 = CLIENTS[1]


@pytest.fixture(scope="module")
def sway() -> Iterator[Sway]:
    with start_sway() as session:
        yield session


@pytest.fixture(scope="module")
def text_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("wayland-text") / "planted.txt"
    path.write_text(PLANTED_TEXT)
    return path


def grim_pixels(sway: Sway, rect: dict[str, int]) -> np.ndarray:
    return np.asarray(Image.open(io.BytesIO(grim_region(sway, rect))).convert("RGB"))


def test_on_an_empty_workspace_sway_says_no_window_is_focused(sway: Sway) -> None:
    source = WaylandFrames(sway.socket, "sway", ipc=sway.ipc)
    sway.msg("workspace", "kronii-empty")
    try:
        with pytest.raises(WindowGone, match="no window is focused"):
            source.geometry(0)
    finally:
        sway.msg("workspace", "1")


def test_screencopy_of_two_foot_windows_equals_grim_of_the_same_regions_pixel_for_pixel(
    sway: Sway, text_file: Path
) -> None:
    left = sway.open(foot_showing(text_file, "kronii-copy-left"))
    right = sway.open(foot_showing(text_file, "kronii-copy-right"))
    rects = [
        window["rect"]
        for window in sway.windows()
        if window["app_id"] in ("kronii-copy-left", "kronii-copy-right")
    ]
    assert len(rects) == 2 and left["app_id"] != right["app_id"]
    assert any(rect["x"] > 0 for rect in rects)  # one region does not start at the output's origin
    with ScreenCopy(sway.socket) as screen:
        for rect in rects:
            wait_until_still(sway, rect)
            ours = screen.region(rect["x"], rect["y"], rect["width"], rect["height"])
            theirs = grim_pixels(sway, rect)
            assert ours.shape == theirs.shape == (rect["height"], rect["width"], 3)
            assert len(np.unique(ours.reshape(-1, 3), axis=0)) > 1  # text on white, not a blank
            assert np.array_equal(ours, theirs)  # exact: both read the same buffer of the same format
    sway.msg('[app_id="^kronii-copy-"] kill')


def test_geometry_is_sways_rect_of_the_focused_window_and_a_burst_has_count_frames_of_it(
    sway: Sway, text_file: Path
) -> None:
    sway.open(foot_showing(text_file, "kronii-geometry-foot"))
    sway.open(GTK3)
    source = WaylandFrames(sway.socket, "sway", ipc=sway.ipc)
    source.check()
    seen = []
    for app_id in ("kronii-geometry-foot", GTK3.app_id, "kronii-geometry-foot"):
        sway.focus(app_id)
        rect = next(window["rect"] for window in sway.windows() if window["app_id"] == app_id)
        geometry = source.geometry(12345)  # the sensor's handle: meaningless here, and not looked up
        assert geometry == (rect["x"], rect["y"], rect["width"], rect["height"]), app_id
        seen.append(geometry)
    assert seen[0] != seen[1] and seen[0] == seen[2]
    frames = source.burst(seen[1], 3, 50)
    assert len(frames) == 3
    assert all(
        frame.rgb.shape == (seen[1][3], seen[1][2], 3) and frame.rgb.dtype == np.uint8 for frame in frames
    )
    assert frames[0].at_ms <= frames[1].at_ms <= frames[2].at_ms
    # 50 ms apart from one grab's start to the next; each frame is stamped when the compositor has copied it,
    # up to one refresh (16.7 ms at 60 Hz) after its start
    assert frames[2].at_ms - frames[0].at_ms >= 100 - 17


def test_a_region_on_no_output_is_window_gone(sway: Sway) -> None:
    source = WaylandFrames(sway.socket, "sway", ipc=sway.ipc)
    with pytest.raises(WindowGone, match="lies on no output"):
        source.burst((2000, 1500, 300, 200), 1, 0)


def test_without_an_ipc_the_geometry_is_the_whole_output(
    sway: Sway, caplog: pytest.LogCaptureFixture
) -> None:
    source = WaylandFrames(sway.socket, "a wlroots compositor", ipc=None)
    assert source.geometry(1) == (0, 0, 1280, 800)
    assert source.geometry(2) == (0, 0, 1280, 800)
    said = [record for record in caplog.records if "whole output" in record.getMessage()]
    assert len(said) == 1  # said once, not at every capture


def test_a_floating_window_moved_by_sway_is_captured_where_sway_put_it(sway: Sway, text_file: Path) -> None:
    sway.open(foot_showing(text_file, "kronii-floating-foot"))
    sway.msg('[app_id="^kronii-floating-foot$"] floating enable, resize set 420 260, move position 150 90')
    sway.focus("kronii-floating-foot")
    rect = next(window["rect"] for window in sway.windows() if window["app_id"] == "kronii-floating-foot")
    assert (rect["x"], rect["y"]) == (150, 90)
    source = WaylandFrames(sway.socket, "sway", ipc=sway.ipc)
    geometry = source.geometry(0)
    assert geometry == (150, 90, rect["width"], rect["height"])
    wait_until_still(sway, rect)
    (frame,) = source.burst(geometry, 1, 0)
    assert np.array_equal(frame.rgb, grim_pixels(sway, rect))
    sway.msg('[app_id="^kronii-floating-foot$"] kill')


def test_on_a_compositor_without_screen_copy_check_says_so_in_a_sentence() -> None:
    with start_weston() as weston:
        source = WaylandFrames(weston.socket, "weston")
        with pytest.raises(CaptureUnavailable, match="offers no screen copy"):
            source.check()


def test_a_sway_ipc_socket_that_does_not_answer_is_capture_unavailable_with_a_sentence(
    sway: Sway, tmp_path: Path
) -> None:
    source = WaylandFrames(sway.socket, "sway", ipc=tmp_path / "sway-ipc.gone.sock")
    with pytest.raises(CaptureUnavailable, match="sway's IPC socket does not answer"):
        source.geometry(0)


def test_on_an_output_with_scale_2_the_frames_are_its_pixels_as_grim_takes_them(text_file: Path) -> None:
    with start_sway() as scaled:
        scaled.msg("output", "HEADLESS-1", "scale", "2")
        scaled.open(foot_showing(text_file, "kronii-scaled-left"))
        scaled.open(foot_showing(text_file, "kronii-scaled-right"))
        scaled.focus("kronii-scaled-right")
        rect = next(w["rect"] for w in scaled.windows() if w["app_id"] == "kronii-scaled-right")
        wait_until_still(scaled, rect)
        source = WaylandFrames(scaled.socket, "sway", ipc=scaled.ipc)
        geometry = source.geometry(0)
        assert geometry == (rect["x"], rect["y"], rect["width"], rect["height"])  # logical: 320x400 at 320,0
        (frame,) = source.burst(geometry, 1, 0)
        assert frame.rgb.shape == (rect["height"] * 2, rect["width"] * 2, 3)
        assert np.array_equal(frame.rgb, grim_pixels(scaled, rect))


def test_on_cage_which_names_no_window_a_burst_is_the_whole_output_as_grim_takes_it(text_file: Path) -> None:
    with start_cage(foot_showing(text_file, "kronii-cage-foot")) as cage:
        source = WaylandFrames(cage.socket, "cage")
        source.check()
        geometry = source.geometry(0)
        assert geometry == (0, 0, 1280, 720)  # cage's one headless output
        rect = dict(zip(("x", "y", "width", "height"), geometry, strict=True))
        wait_until_still(cage, rect)
        frames = source.burst(geometry, 2, 50)
        theirs = np.asarray(Image.open(io.BytesIO(grim_region(cage, rect))).convert("RGB"))
        assert [frame.rgb.shape for frame in frames] == [(720, 1280, 3)] * 2
        assert len(np.unique(frames[1].rgb.reshape(-1, 3), axis=0)) > 1  # the text, not a blank output
        assert np.array_equal(frames[1].rgb, theirs)
