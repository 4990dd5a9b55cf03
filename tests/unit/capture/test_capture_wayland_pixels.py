"""The shared-memory pixel formats a wlroots compositor may hand kronii's screencopy, turned into RGB:
both byte orders, the row padding (stride), the y_invert flag, and a format it cannot read."""

from __future__ import annotations

import numpy as np
import pytest
from kronii.desktop.wayland_screencopy import BufferSpec, rgb_from_shm
from kronii.desktop.wayland_wire import WaylandError

XRGB8888, ARGB8888, XBGR8888, ABGR8888 = 1, 0, 0x34324258, 0x34324241
RED, GREEN, BLUE = (200, 10, 20), (30, 210, 40), (50, 60, 220)


def shm_bytes(rows: list[list[tuple[int, int, int]]], *, order: str, stride_padding: int = 8) -> bytes:
    """A buffer as the compositor fills it: 32-bit little-endian pixels, each row padded to its stride."""
    out = bytearray()
    for row in rows:
        for red, green, blue in row:
            out += bytes((blue, green, red, 0xFF)) if order == "xrgb" else bytes((red, green, blue, 0xFF))
        out += b"\xaa" * stride_padding
    return bytes(out)


IMAGE = [[RED, GREEN, BLUE], [BLUE, RED, GREEN]]


@pytest.mark.parametrize(
    ("fmt", "order"), [(XRGB8888, "xrgb"), (ARGB8888, "xrgb"), (XBGR8888, "xbgr"), (ABGR8888, "xbgr")]
)
def test_each_32_bit_format_reads_as_the_same_rgb_and_the_stride_padding_is_dropped(
    fmt: int, order: str
) -> None:
    spec = BufferSpec(fmt, width=3, height=2, stride=3 * 4 + 8)
    rgb = rgb_from_shm(shm_bytes(IMAGE, order=order), spec)
    assert rgb.shape == (2, 3, 3) and rgb.dtype == np.uint8
    assert rgb.tolist() == [[list(pixel) for pixel in row] for row in IMAGE]
    assert rgb.flags["C_CONTIGUOUS"]


def test_y_invert_turns_the_rows_over() -> None:
    spec = BufferSpec(XRGB8888, width=3, height=2, stride=3 * 4 + 8)
    rgb = rgb_from_shm(shm_bytes(IMAGE, order="xrgb"), spec, y_invert=True)
    assert rgb.tolist() == [[list(pixel) for pixel in row] for row in reversed(IMAGE)]


def test_the_pixels_are_a_copy_not_a_view_on_the_shared_buffer() -> None:
    buffer = bytearray(shm_bytes(IMAGE, order="xrgb"))
    rgb = rgb_from_shm(buffer, BufferSpec(XRGB8888, 3, 2, 3 * 4 + 8))
    buffer[:] = b"\0" * len(buffer)  # the compositor writes the next frame into the same pool
    assert rgb[0, 0].tolist() == list(RED)


def test_a_format_kronii_cannot_read_is_a_wayland_error_naming_it() -> None:
    rgb565 = 0x36314752
    with pytest.raises(WaylandError, match="0x36314752"):
        rgb_from_shm(b"\0" * 64, BufferSpec(rgb565, 4, 4, 8))
