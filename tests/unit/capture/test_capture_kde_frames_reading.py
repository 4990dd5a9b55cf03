"""Reading KWin's ScreenShot2 frames (kronii.desktop.kwin_screenshot, adapters.kde_frames) and the
person's grant: the helper's output parsed frame by frame, KWin's 4-byte images (B, G, R, A in memory,
rows padded to their stride) turned into RGB, KWin's window ids folded as the sensor folds them, and
every way the grant can fail to hold said with the command that fixes it."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pytest
from kronii.capture.adapters.kde_frames import rgb_of
from kronii.capture.ports import CaptureUnavailable
from kronii.desktop.kwin_screenshot import Grant, KWinFrame, grant_for, kwin_window_number, parse_frames


def _frame(width: int, height: int, stride: int, image_format: int = 5) -> KWinFrame:
    data = bytearray(stride * height)
    for y in range(height):
        for x in range(width):
            at = y * stride + 4 * x
            data[at : at + 4] = bytes((x, y, 200, 255))  # B = x, G = y, R = 200, A
    return KWinFrame(
        width, height, stride, image_format, 1_000, "{00000000-0000-0000-0000-000000000001}", bytes(data)
    )


def test_a_four_byte_kwin_image_is_rgb_with_the_strides_padding_cut_off() -> None:
    rgb = rgb_of(_frame(3, 2, stride=16))
    assert rgb.shape == (2, 3, 3) and rgb.dtype == np.uint8
    assert rgb[1, 2].tolist() == [200, 1, 2]  # R, G = y, B = x
    assert rgb.flags["C_CONTIGUOUS"]


def test_an_image_format_kronii_does_not_read_is_refused_with_its_number() -> None:
    with pytest.raises(CaptureUnavailable, match="QImage format 24"):
        rgb_of(_frame(2, 2, stride=8, image_format=24))


def test_the_helpers_output_is_read_back_frame_by_frame_and_a_cut_one_is_an_error() -> None:
    frames = [_frame(3, 2, 12), _frame(2, 1, 8)]
    output = b"".join(
        json.dumps(
            {"width": f.width, "height": f.height, "stride": f.stride, "format": f.image_format,
             "at_ms": f.at_ms, "window": f.window, "bytes": len(f.data)}
        ).encode() + b"\n" + f.data
        for f in frames
    )  # fmt: skip
    assert parse_frames(output) == frames
    with pytest.raises(ValueError, match="inside a frame"):
        parse_frames(output[:-3])


def test_kwins_window_id_folds_to_the_sensors_63_bits_and_anything_else_to_no_window() -> None:
    number = kwin_window_number("{0cd608fa-0371-46d1-97d0-014cbd1e789f}")
    assert 0 < number < 2**63
    assert number == kwin_window_number("0cd608fa-0371-46d1-97d0-014cbd1e789f")
    assert kwin_window_number("not a uuid") == 0


def test_the_grant_says_what_is_missing_and_holds_once_written(tmp_path: Path) -> None:
    grant = grant_for({"XDG_DATA_HOME": str(tmp_path)})
    assert grant.interpreter.is_relative_to(tmp_path) and grant.original == Path(sys.executable).resolve()
    assert "run `kronii capture kde allow`" in grant.problem()
    grant.write()
    assert grant.problem() == ""
    assert f"Exec={grant.interpreter}\n" in grant.desktop_file.read_text()
    assert "X-KDE-DBUS-Restricted-Interfaces=org.kde.KWin.ScreenShot2" in grant.desktop_file.read_text()
    grant.desktop_file.write_text(grant.desktop_text().replace(str(grant.interpreter), "/usr/bin/python3"))
    assert "does not name kronii's interpreter copy" in grant.problem()


def test_a_copy_of_another_interpreter_than_the_one_kronii_runs_no_longer_holds(tmp_path: Path) -> None:
    other = tmp_path / "python-before-the-update"
    other.write_bytes(b"an older interpreter")
    grant = Grant(tmp_path / "copy", tmp_path / "applications" / "org.kronii.capture.desktop", other)
    grant.write()
    assert grant.problem() == ""
    other.write_bytes(b"the updated interpreter")
    assert "is not the Python kronii runs now" in grant.problem()
    assert grant.remove() and not grant.remove()
