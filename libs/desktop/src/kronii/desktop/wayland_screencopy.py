"""Frames of a Wayland screen in this process, through wlr-screencopy on the standard-library wire client.

Every wlroots compositor (sway, Hyprland, river, labwc, wayfire) offers `zwlr_screencopy_manager_v1`:
the client asks for a region of one output, the compositor says which shared-memory buffer it wants
(`buffer`: format, width, height, stride; with version 3 closed by `buffer_done`), the client hands it a
`wl_buffer` in a `wl_shm_pool` over a memfd, asks for the `copy`, and the compositor answers `ready`
(or `failed`). That is what grim does in a process of its own; doing it here keeps one connection and
one pool for every frame of a burst instead of a process, a connection and a PNG encode per frame.

Regions are in the compositor's layout (logical) coordinates, as its IPC reports windows; each output's
place in the layout comes from `zxdg_output_v1` where offered, else from `wl_output`'s geometry and mode.
A region is clipped to the output that holds its centre. The pixels come back as the output has them:
on an output with scale 2 a region of 100x50 is 200x100 pixels.
"""

from __future__ import annotations

import contextlib
import mmap
import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from numpy.typing import NDArray

from .wayland_wire import WaylandConnection, WaylandError

__all__ = ["SCREENCOPY_PROTOCOL", "BufferSpec", "Output", "RegionOffScreen", "ScreenCopy", "rgb_from_shm"]

SCREENCOPY_PROTOCOL = "zwlr_screencopy_manager_v1"

# wl_shm formats: the two of the core protocol, and two DRM fourcc codes a compositor may offer.
_ARGB8888, _XRGB8888 = 0, 1
_ABGR8888 = 0x34324241  # "AB24"
_XBGR8888 = 0x34324258  # "XB24"
# Which bytes of a little-endian 32-bit pixel are red, green and blue.
_CHANNELS = {
    _ARGB8888: [2, 1, 0],
    _XRGB8888: [2, 1, 0],
    _ABGR8888: [0, 1, 2],
    _XBGR8888: [0, 1, 2],
}
_Y_INVERT = 1  # zwlr_screencopy_frame_v1.flags
_MODE_CURRENT = 1  # wl_output.mode flags


class RegionOffScreen(WaylandError):
    """The region asked for lies on no output."""


@dataclass(frozen=True)
class BufferSpec:
    """The shared-memory buffer the compositor asks for a frame."""

    format: int
    width: int
    height: int
    stride: int

    @property
    def size(self) -> int:
        return self.stride * self.height


@dataclass(frozen=True)
class Output:
    """A monitor: its wl_output object and its rectangle in the layout (logical pixels)."""

    object_id: int
    name: str
    x: int
    y: int
    width: int
    height: int
    scale: int = 1

    def holds(self, x: int, y: int) -> bool:
        return self.x <= x < self.x + self.width and self.y <= y < self.y + self.height


def rgb_from_shm(data: object, spec: BufferSpec, *, y_invert: bool = False) -> NDArray[np.uint8]:
    """The H x W x 3 RGB pixels of a shared-memory buffer in one of the 32-bit formats."""
    channels = _CHANNELS.get(spec.format)
    if channels is None:
        raise WaylandError(
            f"the compositor offered the pixel format {spec.format:#x}, which kronii cannot read"
        )
    raw = np.frombuffer(data, dtype=np.uint8, count=spec.size)  # type: ignore[call-overload]
    pixels = raw.reshape(spec.height, spec.stride)[:, : spec.width * 4].reshape(spec.height, spec.width, 4)
    rgb: NDArray[np.uint8] = pixels[:, :, channels]  # fancy indexing: a copy, not a view on the buffer
    return np.ascontiguousarray(rgb[::-1] if y_invert else rgb)


@dataclass
class _OutputFacts:
    """What the events said so far about one output."""

    name: str = ""
    x: int = 0
    y: int = 0
    mode: tuple[int, int] = (0, 0)
    scale: int = 1
    logical: tuple[int, int, int, int] | None = None  # zxdg_output_v1: x, y, width, height

    def output(self, object_id: int) -> Output:
        if self.logical is not None:
            x, y, width, height = self.logical
        else:
            x, y = self.x, self.y
            width, height = self.mode[0] // self.scale, self.mode[1] // self.scale
        return Output(object_id, self.name, x, y, width, height, self.scale)


@dataclass
class _FrameEvents:
    specs: list[BufferSpec] = field(default_factory=list)
    flags: int = 0
    buffers_done: bool = False
    ready: bool = False
    failed: bool = False


@dataclass
class _Pool:
    fd: int
    memory: mmap.mmap
    pool: int
    buffer: int
    spec: BufferSpec


class ScreenCopy:
    """One connection to a wlroots compositor for frames. Raises WaylandError at construction when the
    socket does not answer or the compositor offers no screen copy. Not thread-safe: one caller at a time."""

    def __init__(self, path: Path, *, timeout_s: float = 5.0) -> None:
        self._timeout_s = timeout_s
        self._wire = WaylandConnection(path, timeout_s=timeout_s)
        self._pool: _Pool | None = None
        self._formats: set[int] = set()
        self._facts: dict[int, _OutputFacts] = {}
        try:
            self._bind()
        except WaylandError:
            self._wire.close()
            raise

    def _bind(self) -> None:
        manager = self._wire.bind(SCREENCOPY_PROTOCOL, 3)
        if manager is None:
            raise WaylandError(f"the compositor offers no screen copy ({SCREENCOPY_PROTOCOL})")
        self._manager = manager
        self._version = self._wire.version_of(SCREENCOPY_PROTOCOL)
        shm = self._wire.bind("wl_shm", 1, self._on_shm)
        if shm is None:
            raise WaylandError("the compositor offers no shared memory (wl_shm)")
        self._shm = shm
        xdg = self._wire.bind("zxdg_output_manager_v1", 3)
        for item in [g for g in self._wire.globals.values() if g.interface == "wl_output"]:
            output = self._wire.new_object("wl_output", self._on_output)
            self._wire.request(2, 0, item.name, "wl_output", min(4, item.version), output)
            self._facts[output] = _OutputFacts()
            if xdg is not None:
                logical = self._wire.new_object("zxdg_output_v1", self._on_xdg_output(output))
                self._wire.request(xdg, 1, logical, output)
        self._wire.roundtrip()
        if not self._facts:
            raise WaylandError("the compositor has no output to copy")

    # ---- events --------------------------------------------------------------------------------

    def _on_shm(self, _object_id: int, _opcode: int, args: list[object]) -> None:
        self._formats.add(int(args[0]))  # type: ignore[call-overload]

    def _on_output(self, object_id: int, opcode: int, args: list[object]) -> None:
        facts = self._facts[object_id]
        if opcode == 0:  # geometry
            facts.x, facts.y = int(args[0]), int(args[1])  # type: ignore[call-overload]
        elif opcode == 1 and int(args[0]) & _MODE_CURRENT:  # type: ignore[call-overload]
            facts.mode = (int(args[1]), int(args[2]))  # type: ignore[call-overload]
        elif opcode == 3:
            facts.scale = max(1, int(args[0]))  # type: ignore[call-overload]
        elif opcode == 4 and not facts.name:
            facts.name = str(args[0])

    def _on_xdg_output(self, output: int) -> Callable[[int, int, list[object]], None]:
        def handler(_object_id: int, opcode: int, args: list[object]) -> None:
            facts = self._facts[output]
            x, y, width, height = facts.logical or (0, 0, 0, 0)
            if opcode == 0:
                x, y = int(args[0]), int(args[1])  # type: ignore[call-overload]
            elif opcode == 1:
                width, height = int(args[0]), int(args[1])  # type: ignore[call-overload]
            elif opcode == 3:
                facts.name = str(args[0])
                return
            else:
                return
            facts.logical = (x, y, width, height)

        return handler

    # ---- the caller's side -----------------------------------------------------------------------

    @property
    def outputs(self) -> list[Output]:
        return [facts.output(object_id) for object_id, facts in self._facts.items()]

    def output_for(self, x: int, y: int, width: int, height: int) -> Output:
        """The output that holds the region's centre (else its top-left corner)."""
        for point in ((x + width // 2, y + height // 2), (x, y)):
            found = next((item for item in self.outputs if item.holds(*point)), None)
            if found is not None:
                return found
        raise RegionOffScreen(f"the region {width}x{height} at {x},{y} lies on no output")

    def region(self, x: int, y: int, width: int, height: int, *, cursor: bool = False) -> NDArray[np.uint8]:
        """The RGB pixels of a rectangle of the layout, clipped to the output that holds it."""
        output = self.output_for(x, y, width, height)
        left, top = max(x, output.x), max(y, output.y)
        right = min(x + width, output.x + output.width)
        bottom = min(y + height, output.y + output.height)
        if right - left < 1 or bottom - top < 1:
            raise RegionOffScreen(f"the region {width}x{height} at {x},{y} lies on no output")
        events = _FrameEvents()
        frame = self._wire.new_object("zwlr_screencopy_frame_v1", self._on_frame(events))
        try:
            self._wire.request(
                self._manager, 1, frame, int(cursor), output.object_id,
                left - output.x, top - output.y, right - left, bottom - top,
            )  # fmt: skip
            self._wait(lambda: events.failed or self._buffers_known(events))
            if events.failed:
                raise WaylandError("the compositor refused to copy the screen region")
            pool = self._pool_for(self._choose(events.specs))
            self._wire.request(frame, 0, pool.buffer)  # copy
            self._wait(lambda: events.ready or events.failed)
            if events.failed:
                raise WaylandError("the compositor failed to copy the screen region")
            return rgb_from_shm(pool.memory, pool.spec, y_invert=bool(events.flags & _Y_INVERT))
        finally:
            with contextlib.suppress(WaylandError):
                self._wire.request(frame, 1)  # destroy
            self._wire.forget(frame)

    def _on_frame(self, events: _FrameEvents) -> Callable[[int, int, list[object]], None]:
        def handler(_object_id: int, opcode: int, args: list[object]) -> None:
            if opcode == 0:
                events.specs.append(BufferSpec(*(int(value) for value in args)))  # type: ignore[call-overload]
            elif opcode == 1:
                events.flags = int(args[0])  # type: ignore[call-overload]
            elif opcode == 2:
                events.ready = True
            elif opcode == 3:
                events.failed = True
            elif opcode == 6:
                events.buffers_done = True

        return handler

    def _buffers_known(self, events: _FrameEvents) -> bool:
        """Every buffer type offered: `buffer_done` since version 3, the first `buffer` before."""
        return bool(events.specs) and (events.buffers_done or self._version < 3)

    def _choose(self, specs: list[BufferSpec]) -> BufferSpec:
        for spec in specs:
            if spec.format in _CHANNELS:
                return spec
        offered = ", ".join(f"{spec.format:#x}" for spec in specs) or "none"
        raise WaylandError(f"the compositor offered no pixel format kronii reads (offered: {offered})")

    def _wait(self, done: Callable[[], bool]) -> None:
        deadline = time.monotonic() + self._timeout_s
        while not done():
            left = deadline - time.monotonic()
            if left <= 0 or not self._wire.read(left):
                raise WaylandError(
                    f"the compositor did not answer the screen copy within {self._timeout_s:g} s"
                )
            self._wire.dispatch()

    def _pool_for(self, spec: BufferSpec) -> _Pool:
        """The pool and buffer of the last frame when this one has the same shape, else new ones."""
        if self._pool is not None and self._pool.spec == spec:
            return self._pool
        self._drop_pool()
        fd = os.memfd_create("kronii-screencopy", os.MFD_CLOEXEC)
        try:
            os.ftruncate(fd, spec.size)
            memory = mmap.mmap(fd, spec.size)
        except OSError as error:
            os.close(fd)
            raise WaylandError(
                f"no shared memory for a frame of {spec.size} bytes: {error.strerror}"
            ) from error
        pool = self._wire.new_object("wl_shm_pool")
        self._wire.request(self._shm, 0, pool, fd, spec.size)
        buffer = self._wire.new_object("wl_buffer")
        self._wire.request(pool, 0, buffer, 0, spec.width, spec.height, spec.stride, spec.format)
        self._pool = _Pool(fd, memory, pool, buffer, spec)
        return self._pool

    def _drop_pool(self) -> None:
        pool, self._pool = self._pool, None
        if pool is None:
            return
        with contextlib.suppress(WaylandError):
            self._wire.request(pool.buffer, 0)  # wl_buffer.destroy
            self._wire.request(pool.pool, 1)  # wl_shm_pool.destroy
        self._wire.forget(pool.buffer)
        self._wire.forget(pool.pool)
        with contextlib.suppress(BufferError):
            pool.memory.close()
        os.close(pool.fd)

    def close(self) -> None:
        self._drop_pool()
        self._wire.close()

    def __enter__(self) -> ScreenCopy:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()
