"""Frames of the active window on KDE Plasma through KWin's ScreenShot2 (org.kde.KWin.ScreenShot2
CaptureActiveWindow), the interface KDE's own screenshot tool uses.

KWin answers ScreenShot2 only to a process whose executable a desktop file authorises
(`X-KDE-DBUS-Restricted-Interfaces=org.kde.KWin.ScreenShot2`; KWin reads /proc/<pid>/exe of the
caller). kronii's services run in the Python interpreter, and authorising that would let every Python
program take screenshots. So the person grants kronii a copy of the interpreter of its own
(`kronii capture kde allow`: the copy under $XDG_DATA_HOME/kronii/kwin-screenshot/ and a desktop
file naming it), and capture runs this module in that copy, once per burst:

    <copy> -m kronii.desktop.kwin_screenshot COUNT INTERVAL_MS

which writes, per frame, one JSON line (width, height, stride, format, at_ms, window) and then
stride x height bytes of KWin's image (QImage ARGB32 or RGB32: B, G, R, A in memory). Each frame names
the window KWin took (its internal id), so the caller can refuse a burst of another window than the
one it asked for. Only dbus-fast and the standard library load in the helper.

Exit codes of the helper: 0 done; 2 KWin failed (the sentence on stderr); 3 not authorised."""

from __future__ import annotations

import asyncio
import filecmp
import json
import os
import sys
import time
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from dbus_fast import Message, MessageType, Variant
from dbus_fast.aio import MessageBus

__all__ = [
    "ALLOW_COMMAND",
    "NOT_AUTHORISED_EXIT",
    "Grant",
    "KWinFrame",
    "grant_for",
    "kwin_window_number",
    "parse_frames",
]

SCREENSHOT_INTERFACE = "org.kde.KWin.ScreenShot2"
_PATH = "/org/kde/KWin/ScreenShot2"
ALLOW_COMMAND = "kronii capture kde allow"
NOT_AUTHORISED_EXIT = 3
KWIN_FAILED_EXIT = 2
# QImage formats KWin sends (Qt's enum): RGB32, ARGB32, ARGB32_Premultiplied: 4 bytes, B G R A in memory
FOUR_BYTE_FORMATS = frozenset({4, 5, 6})


def kwin_window_number(internal_id: str) -> int:
    """KWin's internal window id (a UUID, "{...}") folded to 63 bits: the sensor's window_id on KDE."""
    try:
        return uuid.UUID(internal_id.strip("{}")).int & (2**63 - 1)
    except ValueError:
        return 0  # not KWin's form: matches no window


@dataclass(frozen=True)
class KWinFrame:
    """One frame as KWin sent it (`data` is stride x height bytes), taken at `at_ms` (epoch ms)."""

    width: int
    height: int
    stride: int
    image_format: int
    at_ms: int
    window: str
    data: bytes


@dataclass(frozen=True)
class Grant:
    """Where the person's grant lives: kronii's interpreter copy and the desktop file authorising it."""

    interpreter: Path
    desktop_file: Path
    original: Path  # the interpreter the copy is of (this process's)

    def desktop_text(self) -> str:
        return (
            "[Desktop Entry]\n"
            "Type=Application\n"
            "Name=kronii capture\n"
            "Comment=Lets kronii's capture take frames of the focused window through KWin's ScreenShot2\n"
            f"Exec={self.interpreter}\n"
            "NoDisplay=true\n"
            f"X-KDE-DBUS-Restricted-Interfaces={SCREENSHOT_INTERFACE}\n"
        )

    def problem(self) -> str:
        """Why the grant does not hold ("" when it does), as a sentence naming the command that fixes it."""
        if not self.desktop_file.is_file() or not self.interpreter.is_file():
            return (
                "KWin gives frames only to a program a desktop file authorises for ScreenShot2, and you have not "
                f"authorised kronii's capture: run `{ALLOW_COMMAND}`"
            )
        if f"Exec={self.interpreter}\n" not in self.desktop_file.read_text(
            encoding="utf-8", errors="replace"
        ):
            return f"{self.desktop_file} does not name kronii's interpreter copy: run `{ALLOW_COMMAND}` again"
        if not filecmp.cmp(self.interpreter, self.original, shallow=False):
            return (
                f"kronii's interpreter copy ({self.interpreter}) is not the Python kronii runs now (it was "
                f"updated): run `{ALLOW_COMMAND}` again"
            )
        return ""

    def write(self) -> None:
        """Copy the interpreter and write the desktop file (KWin reads it within seconds)."""
        self.interpreter.parent.mkdir(parents=True, exist_ok=True)
        partial = self.interpreter.with_name(self.interpreter.name + ".partial")
        partial.write_bytes(self.original.read_bytes())
        partial.chmod(0o755)
        partial.replace(self.interpreter)
        self.desktop_file.parent.mkdir(parents=True, exist_ok=True)
        self.desktop_file.write_text(self.desktop_text(), encoding="utf-8")

    def remove(self) -> bool:
        """Take the grant back; whether there was one."""
        found = False
        for path in (self.desktop_file, self.interpreter):
            if path.exists():
                path.unlink()
                found = True
        return found


def grant_for(env: Mapping[str, str]) -> Grant:
    """The grant's places for this user ($XDG_DATA_HOME, default ~/.local/share)."""
    data = env.get("XDG_DATA_HOME") or str(Path(env.get("HOME") or Path.home()) / ".local" / "share")
    return Grant(
        interpreter=Path(data) / "kronii" / "kwin-screenshot" / "kronii-capture",
        desktop_file=Path(data) / "applications" / "org.kronii.capture.desktop",
        original=Path(os.path.realpath(sys.executable)),
    )


def parse_frames(output: bytes) -> list[KWinFrame]:
    """The helper's stdout as frames; ValueError when it is cut short or malformed."""
    frames: list[KWinFrame] = []
    at = 0
    while at < len(output):
        end = output.find(b"\n", at)
        if end < 0:
            raise ValueError("the helper's output ends inside a frame's header")
        header = json.loads(output[at:end])
        size = int(header["bytes"])
        data = output[end + 1 : end + 1 + size]
        if len(data) != size or size < int(header["stride"]) * int(header["height"]):
            raise ValueError("the helper's output ends inside a frame")
        frames.append(
            KWinFrame(
                int(header["width"]),
                int(header["height"]),
                int(header["stride"]),
                int(header["format"]),
                int(header["at_ms"]),
                str(header["window"]),
                data,
            )
        )
        at = end + 1 + size
    return frames


# ---- the helper, run in the interpreter copy ----------------------------------------------------------


class KWinRefused(Exception):
    """KWin answered with an error; `authorised` is False for NoAuthorized."""

    def __init__(self, message: str, *, authorised: bool = True) -> None:
        super().__init__(message)
        self.authorised = authorised


async def _capture_active(bus: MessageBus) -> tuple[dict[str, object], bytes]:
    read_end, write_end = os.pipe()
    try:
        options = {
            "include-cursor": Variant("b", False),
            "include-decoration": Variant("b", False),
            "native-resolution": Variant("b", True),
        }
        call = Message(
            destination="org.kde.KWin", path=_PATH, interface=SCREENSHOT_INTERFACE,
            member="CaptureActiveWindow", signature="a{sv}h", body=[options, 0], unix_fds=[write_end],
        )  # fmt: skip
        reply = await asyncio.wait_for(bus.call(call), timeout=10)
        os.close(write_end)
        write_end = -1
        if reply is None or reply.message_type == MessageType.ERROR:
            name = reply.error_name if reply is not None else "no reply"
            text = str(reply.body[0]) if reply is not None and reply.body else str(name)
            raise KWinRefused(f"{name}: {text}", authorised=not str(name).endswith("NoAuthorized"))
        data = await asyncio.to_thread(_read_all, read_end)
        return {key: value.value for key, value in reply.body[0].items()}, data
    finally:
        os.close(read_end)
        if write_end >= 0:
            os.close(write_end)


def _read_all(fd: int) -> bytes:
    chunks = []
    while chunk := os.read(fd, 1 << 20):
        chunks.append(chunk)
    return b"".join(chunks)


async def _burst(count: int, interval_ms: int) -> None:
    bus = await MessageBus(
        bus_address=os.environ.get("DBUS_SESSION_BUS_ADDRESS"), negotiate_unix_fd=True
    ).connect()
    out = sys.stdout.buffer
    started = time.monotonic()
    try:
        for index in range(count):
            if index:
                await asyncio.sleep(max(0.0, started + index * interval_ms / 1000.0 - time.monotonic()))
            facts, data = await _capture_active(bus)
            header = {
                "width": int(str(facts.get("width", 0))),
                "height": int(str(facts.get("height", 0))),
                "stride": int(str(facts.get("stride", 0))),
                "format": int(str(facts.get("format", -1))),
                "at_ms": int(time.time() * 1000),
                "window": str(facts.get("windowId", "")),
                "bytes": len(data),
            }
            out.write(json.dumps(header).encode() + b"\n" + data)
            out.flush()
    finally:
        bus.disconnect()


def main(argv: list[str]) -> int:
    try:
        count, interval_ms = int(argv[0]), int(argv[1])
    except (IndexError, ValueError):
        print("usage: python -m kronii.desktop.kwin_screenshot COUNT INTERVAL_MS", file=sys.stderr)
        return 64
    try:
        asyncio.run(_burst(count, interval_ms))
    except KWinRefused as error:
        print(f"KWin refused ScreenShot2: {error}", file=sys.stderr)
        return KWIN_FAILED_EXIT if error.authorised else NOT_AUTHORISED_EXIT
    except (OSError, TimeoutError, EOFError) as error:
        print(f"KWin's ScreenShot2 did not answer: {error!r}", file=sys.stderr)
        return KWIN_FAILED_EXIT
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
