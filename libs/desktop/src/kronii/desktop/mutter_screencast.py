"""Frames of one window on GNOME (mutter), the way GNOME lets other programs have them: mutter's
ScreenCast D-Bus interface (`org.gnome.Mutter.ScreenCast`, the one xdg-desktop-portal-gnome and
gnome-remote-desktop use) records the window into a PipeWire stream, and GStreamer's `pipewiresrc`
(`gst-launch-1.0`, Debian's gstreamer1.0-tools and gstreamer1.0-pipewire) hands its frames over.

RecordWindow records that window's own pixels: whatever overlaps it on the screen is not in them.
mutter (43) sends them in a frame the size of the monitor, the window drawn into it and black
around it; the burst is cut to what is not black in any of its frames (a black margin of the window
itself goes with it, which loses nothing that could be seen). GNOME shows its screen-sharing indicator while the session lasts, so the person sees every burst.
Everything here blocks (the capture service calls it from a worker thread); failures leave as
ScreenCastError with a sentence.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import select
import subprocess
import threading
import time
from collections.abc import AsyncIterator, Callable, Mapping
from dataclasses import dataclass

import numpy as np
from dbus_fast import DBusError, Message, MessageType, Variant
from dbus_fast.aio import MessageBus
from numpy.typing import NDArray

from .session import SCREENCAST_BUS

__all__ = ["ScreenCastError", "WindowBurst", "record_monitor_burst", "record_window_burst"]

_PATH = "/org/gnome/Mutter/ScreenCast"
_SESSION = "org.gnome.Mutter.ScreenCast.Session"
_STREAM = "org.gnome.Mutter.ScreenCast.Stream"
_CURSOR_HIDDEN = 0
_GST = "gst-launch-1.0"
_CAPS = re.compile(r"fdsink\d*\.GstPad:sink: caps = video/x-raw.*?width=\(int\)(\d+), height=\(int\)(\d+)")


class ScreenCastError(Exception):
    """GNOME's screen cast could not give the frames: `str()` says why."""


Frames = list[tuple[NDArray[np.uint8], int]]


@dataclass(frozen=True)
class WindowBurst:
    """The frames of a burst (RGB, H x W x 3) and when each arrived (epoch ms)."""

    frames: Frames


def record_window_burst(
    bus_address: str,
    env: Mapping[str, str],
    *,
    window_id: int,
    count: int,
    interval_ms: int,
    timeout_s: float = 10.0,
) -> WindowBurst:
    """`count` frames of the window `window_id` (mutter's id, 0: the focused window), `interval_ms`
    apart, cut to the window. Raises ScreenCastError."""
    properties = {"cursor-mode": Variant("u", _CURSOR_HIDDEN)}
    if window_id:
        properties["window-id"] = Variant("t", window_id)
    record = _Record("RecordWindow", "a{sv}", [properties], cut=True)
    return asyncio.run(_burst(bus_address, dict(env), record, count, interval_ms, timeout_s))


def record_monitor_burst(
    bus_address: str, env: Mapping[str, str], *, count: int, interval_ms: int, timeout_s: float = 10.0
) -> WindowBurst:
    """`count` frames of the primary monitor, as the person sees it. Raises ScreenCastError."""
    record = _Record(
        "RecordMonitor", "sa{sv}", ["", {"cursor-mode": Variant("u", _CURSOR_HIDDEN)}], cut=False
    )
    return asyncio.run(_burst(bus_address, dict(env), record, count, interval_ms, timeout_s))


@dataclass(frozen=True)
class _Record:
    """What the session records: mutter's method and its arguments; whether to cut to the content."""

    method: str
    signature: str
    body: list[object]
    cut: bool


class _NoFirstFrame(ScreenCastError):
    """The stream was agreed but its first frame never came."""


# mutter records a window's first frame when the stream starts, and then only when the window is
# damaged: a first frame that found no buffer of ours yet is lost, and a still window sends no other.
# So a stream whose first frame does not come within FIRST_FRAME_S is started again, a few times.
FIRST_FRAME_S = 0.5
ATTEMPTS = 5


async def _burst(
    bus_address: str, env: dict[str, str], record: _Record, count: int, interval_ms: int, timeout_s: float
) -> WindowBurst:
    for attempt in range(1, ATTEMPTS + 1):
        async with _recording(bus_address, record, timeout_s) as node:
            try:
                frames = await asyncio.to_thread(_read_frames, node, env, count, interval_ms, timeout_s)
            except _NoFirstFrame:
                if attempt == ATTEMPTS:
                    raise
                continue
        return WindowBurst(_cut_to_content(frames) if record.cut else frames)
    raise AssertionError("unreachable: the last attempt returns or raises")


async def _call(bus: MessageBus, path: str, interface: str, member: str, signature: str = "", body: list[object] | None = None) -> list[object]:  # fmt: skip
    message = Message(SCREENCAST_BUS, path, interface, member, signature=signature, body=body or [])
    reply = await bus.call(message)
    if reply is None or reply.message_type == MessageType.ERROR:
        text = reply.body[0] if reply is not None and reply.body else "no reply"
        name = reply.error_name if reply is not None else ""
        raise ScreenCastError(f"mutter refused {member}: {name}: {text}")
    return list(reply.body)


@contextlib.asynccontextmanager
async def _recording(bus_address: str, record: _Record, timeout_s: float) -> AsyncIterator[int]:
    """A ScreenCast session recording what `record` says; yields its PipeWire node; stopped at the end."""
    try:
        bus = await MessageBus(bus_address=bus_address).connect()
    except (OSError, DBusError, ValueError) as error:
        raise ScreenCastError(f"the session bus is out of reach: {error}") from None
    try:
        (session,) = await _call(bus, _PATH, SCREENCAST_BUS, "CreateSession", "a{sv}", [{}])
        (stream,) = await _call(bus, str(session), _SESSION, record.method, record.signature, record.body)
        added = await _stream_added(bus, str(stream))
        await _call(bus, str(session), _SESSION, "Start")
        try:
            node = await asyncio.wait_for(added, timeout_s)
        except TimeoutError:
            raise ScreenCastError(f"mutter gave no PipeWire stream within {timeout_s:g} s") from None
        try:
            yield node
        finally:
            with contextlib.suppress(ScreenCastError, OSError, DBusError):
                await _call(bus, str(session), _SESSION, "Stop")
    finally:
        bus.disconnect()


async def _stream_added(bus: MessageBus, stream: str) -> asyncio.Future[int]:
    """A future of the PipeWire node id the stream `stream` announces."""
    added: asyncio.Future[int] = asyncio.get_running_loop().create_future()

    def on_message(message: Message) -> None:
        wanted = message.member == "PipeWireStreamAdded" and message.path == stream
        if wanted and message.message_type == MessageType.SIGNAL and not added.done():
            added.set_result(int(message.body[0]))

    bus.add_message_handler(on_message)
    rule = f"type='signal',interface='{_STREAM}',member='PipeWireStreamAdded',path='{stream}'"
    dbus = "org.freedesktop.DBus"
    await bus.call(Message(dbus, "/org/freedesktop/DBus", dbus, "AddMatch", signature="s", body=[rule]))
    return added


def _read_frames(node: int, env: dict[str, str], count: int, interval_ms: int, timeout_s: float) -> Frames:
    """The stream's frames through gst-launch: RGBx into a pipe of our own (stdout carries `-v`'s
    caps, which give the size). mutter sends a frame when the window changes; pipewiresrc's keepalive
    sends the last one again, so a still window gives its frames too. One frame is kept per interval."""
    read_end, write_end = os.pipe()
    argv = [
        _GST, "-v", "pipewiresrc", f"path={node}", "always-copy=true",
        f"keepalive-time={max(interval_ms // 2, 20)}", "!", "videoconvert", "!",
        "video/x-raw,format=RGBx", "!", "fdsink", f"fd={write_end}", "sync=false",
    ]  # fmt: skip
    try:
        process = subprocess.Popen(
            argv, env=env, pass_fds=(write_end,), stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        )  # fmt: skip
    except OSError as error:
        os.close(read_end)
        os.close(write_end)
        raise ScreenCastError(f"{_GST} could not start: {error}") from None
    os.close(write_end)
    caps = _Caps(process)
    try:
        return _take(read_end, caps, count, interval_ms, time.monotonic() + timeout_s)
    finally:
        process.kill()
        process.wait()
        os.close(read_end)
        caps.join()


class _Caps:
    """The frame size gst-launch prints (`-v`), read on a thread of its own."""

    def __init__(self, process: subprocess.Popen[bytes]) -> None:
        self.size: tuple[int, int] | None = None
        self.errors: list[str] = []
        self.known = threading.Event()
        self._threads = [
            threading.Thread(target=self._read, args=(process.stdout, self._caps), daemon=True),
            threading.Thread(target=self._read, args=(process.stderr, self.errors.append), daemon=True),
        ]
        for thread in self._threads:
            thread.start()

    def _caps(self, line: str) -> None:
        found = _CAPS.search(line)
        if found and self.size is None:
            self.size = (int(found.group(1)), int(found.group(2)))
            self.known.set()

    @staticmethod
    def _read(stream: object, take: Callable[[str], None]) -> None:
        for raw in stream:  # type: ignore[attr-defined]
            take(raw.decode(errors="replace").strip())

    def join(self) -> None:
        for thread in self._threads:
            thread.join(timeout=2)


def _take(fd: int, caps: _Caps, count: int, interval_ms: int, deadline: float) -> Frames:
    if not caps.known.wait(max(0.0, deadline - time.monotonic())) or caps.size is None:
        why = "; ".join(caps.errors[-3:]) or "no frame format was agreed"
        raise ScreenCastError(f"GNOME's screen cast gave no frames: {why}")
    width, height = caps.size
    frames: list[tuple[NDArray[np.uint8], int]] = []
    if not select.select([fd], [], [], min(FIRST_FRAME_S, max(0.0, deadline - time.monotonic())))[0]:
        raise _NoFirstFrame(f"GNOME's screen cast sent no frame within {FIRST_FRAME_S:g} s, {ATTEMPTS} times")
    due = time.monotonic()
    while len(frames) < count:
        data = _read_exactly(fd, width * height * 4, deadline)
        if time.monotonic() < due:
            continue  # a frame inside the interval: the next one due is taken
        rgbx = np.frombuffer(data, dtype=np.uint8).reshape(height, width, 4)
        frames.append((np.ascontiguousarray(rgbx[:, :, :3]), int(time.time() * 1000)))
        due += interval_ms / 1000.0
    return frames


def _cut_to_content(frames: Frames) -> Frames:
    """Every frame cut to the smallest rectangle holding whatever is not black in any of them."""
    drawn = np.zeros(frames[0][0].shape[:2], dtype=bool)
    for rgb, _ in frames:
        drawn |= rgb.any(axis=2)
    rows, columns = np.flatnonzero(drawn.any(axis=1)), np.flatnonzero(drawn.any(axis=0))
    if not rows.size:
        return frames  # all black: nothing to cut to
    top, bottom, left, right = rows[0], rows[-1] + 1, columns[0], columns[-1] + 1
    return [(np.ascontiguousarray(rgb[top:bottom, left:right]), at) for rgb, at in frames]


def _read_exactly(fd: int, size: int, deadline: float) -> bytes:
    chunks: list[bytes] = []
    left = size
    while left:
        readable, _, _ = select.select([fd], [], [], max(0.0, deadline - time.monotonic()))
        if not readable:
            raise ScreenCastError("GNOME's screen cast stopped sending frames before the burst was complete")
        chunk = os.read(fd, min(left, 1 << 20))
        if not chunk:
            raise ScreenCastError("GNOME's screen cast ended before the burst was complete")
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)
