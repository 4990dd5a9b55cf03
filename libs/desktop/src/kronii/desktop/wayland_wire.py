"""A Wayland client in the standard library: the wire protocol, for the few interfaces kronii speaks.

The host agents need a handful of protocols any wlroots compositor (sway, Hyprland, river, labwc, wayfire)
offers: the list of toplevels and which is activated (`zwlr_foreign_toplevel_manager_v1`), idle and resume
(`ext_idle_notifier_v1`, or KDE's `org_kde_kwin_idle` that sway 1.7 offers instead). Speaking them over the
socket with `struct` needs no C library, no generated bindings and no build step in the containers.

The wire format (wayland.freedesktop.org/docs/html/ch04.html): each message is the object id (u32), then
the size in bytes (high 16 bits) and the opcode (low 16), then its arguments, each 32-bit aligned: int,
uint, fixed (24.8), object and new_id as one word; a string as its length with the NUL, then the bytes
padded; an array as its length, then the bytes padded; file descriptors beside the bytes (SCM_RIGHTS).
Objects the client makes take ids from 2 up; those the compositor makes (a toplevel's handle) from
0xff000000, announced by a new_id in an event.

Signatures below use one letter per argument: i int, u uint, f fixed, s string, o object, n new_id,
a array, h fd.
"""

from __future__ import annotations

import array
import os
import select
import socket
import struct
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

__all__ = [
    "INTERFACES",
    "Global",
    "Interface",
    "WaylandConnection",
    "WaylandError",
    "socket_path",
]

_HEADER = struct.Struct("=II")
_MAX_FDS = 28  # libwayland's own bound on descriptors in one message


class WaylandError(Exception):
    """The compositor is not there, refused us, closed the connection, or sent what we cannot read."""


@dataclass(frozen=True)
class Interface:
    """An interface's name and its messages' signatures, by opcode."""

    name: str
    events: tuple[str, ...]
    requests: tuple[str, ...]


def _interfaces(*items: Interface) -> dict[str, Interface]:
    return {item.name: item for item in items}


INTERFACES = _interfaces(
    Interface("wl_display", events=("ous", "u"), requests=("n", "n")),
    Interface("wl_registry", events=("usu", "u"), requests=("usun",)),
    Interface("wl_callback", events=("u",), requests=()),
    Interface("wl_seat", events=("u", "s"), requests=("n", "n", "n", "")),
    Interface("zwlr_foreign_toplevel_manager_v1", events=("n", ""), requests=("",)),
    Interface(
        "zwlr_foreign_toplevel_handle_v1",
        events=("s", "s", "o", "o", "a", "", "", "o"),
        requests=("", "", "", "", "o", "", "iiii", "", "o", ""),
    ),
    Interface("org_kde_kwin_idle", events=(), requests=("nou",)),
    Interface("org_kde_kwin_idle_timeout", events=("", ""), requests=("", "")),
    Interface("ext_idle_notifier_v1", events=(), requests=("", "nuo")),
    Interface("ext_idle_notification_v1", events=("", ""), requests=("",)),
    # Frames (kronii.desktop.wayland_screencopy): shared memory, outputs and wlr-screencopy.
    Interface("wl_shm", events=("u",), requests=("nhi", "")),
    Interface("wl_shm_pool", events=(), requests=("niiiiu", "", "i")),
    Interface("wl_buffer", events=("",), requests=("",)),
    Interface("wl_output", events=("iiiiissi", "uiii", "", "i", "s", "s"), requests=("",)),
    Interface("zxdg_output_manager_v1", events=(), requests=("", "no")),
    Interface("zxdg_output_v1", events=("ii", "ii", "", "s", "s"), requests=("",)),
    Interface("zwlr_screencopy_manager_v1", events=(), requests=("nio", "nioiiii", "")),
    Interface(
        "zwlr_screencopy_frame_v1",
        events=("uuuu", "u", "uuu", "", "uuuu", "uuu", ""),
        requests=("o", "", "o"),
    ),
    # Typing and clicking on a seat of kronii's own (kronii.desktop.wayland_input).
    Interface("zwp_virtual_keyboard_manager_v1", events=(), requests=("on",)),
    Interface("zwp_virtual_keyboard_v1", events=(), requests=("uhu", "uuu", "uuuu", "")),
    Interface("zwlr_virtual_pointer_manager_v1", events=(), requests=("on", "oon", "")),
    Interface(
        "zwlr_virtual_pointer_v1",
        events=(),
        requests=("uff", "uuuuu", "uuu", "uuf", "", "u", "uu", "uufi", ""),
    ),
)

# What a new object created by an event is: (interface of the sender, event opcode) -> interface.
_EVENT_CREATES = {("zwlr_foreign_toplevel_manager_v1", 0): "zwlr_foreign_toplevel_handle_v1"}


@dataclass(frozen=True)
class Global:
    """A global the compositor offers: its registry name, interface and highest version."""

    name: int
    interface: str
    version: int


Handler = Callable[[int, int, list[object]], None]  # (object id, opcode, arguments)


def socket_path(display: str | None, runtime_dir: str | None) -> Path | None:
    """The compositor's socket: WAYLAND_DISPLAY as an absolute path, or a name in XDG_RUNTIME_DIR."""
    if not display:
        return None
    if display.startswith("/"):
        return Path(display)
    if not runtime_dir:
        return None
    return Path(runtime_dir) / display


def _pad(length: int) -> int:
    return (length + 3) & ~3


def _encode(signature: str, args: Sequence[object]) -> tuple[bytes, list[int]]:
    if len(signature) != len(args):
        raise ValueError(f"signature {signature!r} takes {len(signature)} arguments, not {len(args)}")
    out, fds = bytearray(), []
    for kind, value in zip(signature, args, strict=True):
        if kind in "uon":
            out += struct.pack("=I", int(value))  # type: ignore[call-overload]
        elif kind == "i":
            out += struct.pack("=i", int(value))  # type: ignore[call-overload]
        elif kind == "f":
            out += struct.pack("=i", round(float(value) * 256))  # type: ignore[arg-type]
        elif kind == "s":
            data = str(value).encode() + b"\0"
            out += struct.pack("=I", len(data)) + data + b"\0" * (_pad(len(data)) - len(data))
        elif kind == "a":
            data = bytes(value)  # type: ignore[call-overload]
            out += struct.pack("=I", len(data)) + data + b"\0" * (_pad(len(data)) - len(data))
        elif kind == "h":
            fds.append(int(value))  # type: ignore[call-overload]
        else:
            raise ValueError(f"unknown argument kind {kind!r}")
    return bytes(out), fds


def _decode(signature: str, body: bytes, fds: list[int]) -> list[object]:
    args: list[object] = []
    at = 0
    for kind in signature:
        if kind == "h":
            if not fds:
                raise WaylandError("an event carried a file descriptor that did not arrive")
            args.append(fds.pop(0))
            continue
        (word,) = struct.unpack_from("=I", body, at)
        at += 4
        if kind in "uon":
            args.append(word)
        elif kind == "i":
            args.append(struct.unpack("=i", struct.pack("=I", word))[0])
        elif kind == "f":
            args.append(struct.unpack("=i", struct.pack("=I", word))[0] / 256)
        elif kind in "sa":
            data = body[at : at + word]
            at += _pad(word)
            args.append(data[:-1].decode("utf-8", "replace") if kind == "s" and word else bytes(data))
        else:
            raise WaylandError(f"unknown argument kind {kind!r}")
    return args


@dataclass
class _Objects:
    interfaces: dict[int, str] = field(default_factory=lambda: {1: "wl_display"})
    handlers: dict[int, Handler] = field(default_factory=dict)
    next_id: int = 2


class WaylandConnection:
    """One connection to a compositor: make objects, send requests, read and dispatch events.

    Not thread-safe: one thread owns it (the host agent's watcher). `roundtrip()` waits until the
    compositor has handled every request sent so far and sent their events.
    """

    def __init__(self, path: Path, *, timeout_s: float = 5.0) -> None:
        self._sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM | socket.SOCK_CLOEXEC)
        self._sock.settimeout(timeout_s)
        try:
            self._sock.connect(str(path))
        except OSError as error:
            self._sock.close()
            raise WaylandError(f"cannot connect to the Wayland socket {path}: {error.strerror}") from error
        self._timeout_s = timeout_s
        self._buffer = bytearray()
        self._fds: list[int] = []
        self._objects = _Objects()
        self._objects.handlers[1] = self._on_display
        self.globals: dict[int, Global] = {}
        self._synced: set[int] = set()
        registry = self.new_object("wl_registry", self._on_registry)
        self.request(1, 1, registry)
        self.roundtrip()

    # ---- objects and requests --------------------------------------------------------------------

    def fileno(self) -> int:
        return self._sock.fileno()

    def peer_pid(self) -> int | None:
        """The pid of the process that listens on the socket (the compositor, or a proxy in front of
        it), as the kernel saw it accept: None where the kernel does not say."""
        try:
            creds = self._sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
        except OSError:
            return None
        pid = int(struct.unpack("3i", creds)[0])
        return pid if pid > 0 else None

    def new_object(self, interface: str, handler: Handler | None = None) -> int:
        if interface not in INTERFACES:
            raise ValueError(f"kronii does not speak {interface}")
        object_id = self._objects.next_id
        self._objects.next_id += 1
        self._objects.interfaces[object_id] = interface
        if handler is not None:
            self._objects.handlers[object_id] = handler
        return object_id

    def set_handler(self, object_id: int, handler: Handler) -> None:
        self._objects.handlers[object_id] = handler

    def forget(self, object_id: int) -> None:
        """Drop an object the client destroyed or the compositor closed."""
        self._objects.interfaces.pop(object_id, None)
        self._objects.handlers.pop(object_id, None)

    def request(self, object_id: int, opcode: int, *args: object) -> None:
        interface = INTERFACES[self._objects.interfaces[object_id]]
        body, fds = _encode(interface.requests[opcode], args)
        message = _HEADER.pack(object_id, (len(body) + _HEADER.size) << 16 | opcode) + body
        try:
            if fds:
                ancillary = [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", fds).tobytes())]
                self._sock.sendmsg([message], ancillary)
            else:
                self._sock.sendall(message)
        except OSError as error:
            raise WaylandError(f"the compositor closed the connection: {error.strerror}") from error

    def find(self, interface: str) -> Global | None:
        return next((item for item in self.globals.values() if item.interface == interface), None)

    def bind(self, interface: str, version: int, handler: Handler | None = None) -> int | None:
        """Bind the compositor's global `interface` at min(version, what it offers); None if absent."""
        offered = self.find(interface)
        if offered is None:
            return None
        object_id = self.new_object(interface, handler)
        self.request(2, 0, offered.name, interface, min(version, offered.version), object_id)
        return object_id

    def version_of(self, interface: str) -> int:
        offered = self.find(interface)
        return 0 if offered is None else offered.version

    # ---- events ----------------------------------------------------------------------------------

    def roundtrip(self) -> None:
        callback = self.new_object("wl_callback", lambda oid, _op, _args: self._synced.add(oid))
        self.request(1, 0, callback)
        while callback not in self._synced:
            self.read(self._timeout_s)
            self.dispatch()
        self._synced.discard(callback)
        self.forget(callback)

    def read(self, timeout_s: float | None) -> bool:
        """Read what the compositor sent (waiting up to `timeout_s`); False when nothing came."""
        ready, _, _ = select.select([self._sock], [], [], timeout_s)
        if not ready:
            return False
        try:
            data, ancillary, _flags, _addr = self._sock.recvmsg(65536, socket.CMSG_SPACE(_MAX_FDS * 4))
        except OSError as error:
            raise WaylandError(f"reading from the compositor failed: {error.strerror}") from error
        if not data:
            raise WaylandError("the compositor closed the connection")
        self._buffer += data
        for level, kind, payload in ancillary:
            if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
                fds = array.array("i")
                fds.frombytes(payload[: len(payload) - len(payload) % fds.itemsize])
                self._fds += list(fds)
        return True

    def dispatch(self) -> int:
        """Handle every whole event read so far; how many."""
        handled = 0
        while len(self._buffer) >= _HEADER.size:
            object_id, size_opcode = _HEADER.unpack_from(self._buffer)
            size, opcode = size_opcode >> 16, size_opcode & 0xFFFF
            if size < _HEADER.size:
                raise WaylandError("the compositor sent a malformed message")
            if len(self._buffer) < size:
                break
            body = bytes(self._buffer[_HEADER.size : size])
            del self._buffer[:size]
            self._deliver(object_id, opcode, body)
            handled += 1
        return handled

    def _deliver(self, object_id: int, opcode: int, body: bytes) -> None:
        name = self._objects.interfaces.get(object_id)
        if name is None:
            return  # an event for an object already destroyed on our side: libwayland drops it too
        interface = INTERFACES[name]
        if opcode >= len(interface.events):
            return  # an event newer than the version we speak
        args = _decode(interface.events[opcode], body, self._fds)
        created = _EVENT_CREATES.get((name, opcode))
        if created is not None:
            self._objects.interfaces[int(args[0])] = created  # type: ignore[call-overload]
        handler = self._objects.handlers.get(object_id)
        if handler is not None:
            handler(object_id, opcode, args)

    def _on_display(self, _object_id: int, opcode: int, args: list[object]) -> None:
        if opcode == 0:
            raise WaylandError(f"the compositor reported a protocol error: {args[2]} (code {args[1]})")
        if opcode == 1:
            self.forget(int(args[0]))  # type: ignore[call-overload]

    def _on_registry(self, _object_id: int, opcode: int, args: list[object]) -> None:
        if opcode == 0:
            name, interface, version = int(args[0]), str(args[1]), int(args[2])  # type: ignore[call-overload]
            self.globals[name] = Global(name, interface, version)
        elif opcode == 1:
            self.globals.pop(int(args[0]), None)  # type: ignore[call-overload]

    def close(self) -> None:
        for fd in self._fds:
            os.close(fd)
        self._fds.clear()
        self._sock.close()
