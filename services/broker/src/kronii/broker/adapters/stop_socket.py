"""The broker's stop door: STOP_NOW from a terminal in well under 100 ms, whatever the rest is doing.

A 0600 Unix socket beside the broker's local socket, in the same private (0700) directory, served by a
plain thread rather than the event loop: under a flood of agents' actions the loop may be busy, and the
local socket's HTTP, the database and NATS are all behind it. A peer of this user only (the kernel's
SO_PEERCRED, checked on top of the file's mode) sends one line, ``STOP``, and reads one line back:

    STOP            -> ``stopped epoch N``   (the agents' input fence closed through epoch N)
    anything else   -> ``error: ...``        (a sentence; nothing was done)

On a STOP the thread closes the input fence itself (``stop``: no agent X event is written under the
current epoch after that, see usecases/input_fence.py), hands STOP_NOW to the event loop for the table
to decide, clear the queue and record (``hand_over``: call_soon_threadsafe, which never waits), and
answers. The answer waits on nothing else: no loop turn, no lock the injector holds, no database.
"""

from __future__ import annotations

import contextlib
import logging
import os
import socket
import struct
import threading
from collections.abc import Callable
from pathlib import Path

from kronii.broker.adapters.private_socket import listen_private

__all__ = ["STOP_LINE", "StopSocket", "StopSocketError"]

log = logging.getLogger(__name__)

STOP_LINE = b"STOP"
_MAX_LINE = 64
_READ_TIMEOUT_S = 2.0
_MAX_CLIENTS = 16
_UCRED = struct.Struct("3i")  # struct ucred: pid, uid, gid


class StopSocketError(RuntimeError):
    """The stop socket cannot be set up safely; a sentence without a path."""


def _peer_uid(sock: socket.socket) -> tuple[int, int]:
    """(uid, pid) of the process at the other end, from the kernel."""
    pid, uid, _gid = _UCRED.unpack(sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, _UCRED.size))
    return uid, pid


class StopSocket:
    """``stop()`` closes the fence from the calling thread and returns the epoch closed through;
    ``hand_over()`` gives STOP_NOW to the event loop without waiting for it."""

    def __init__(
        self,
        path: Path,
        *,
        stop: Callable[[], int],
        hand_over: Callable[[], None],
        uid: int | None = None,
    ) -> None:
        self._path = Path(path)
        self._stop = stop
        self._hand_over = hand_over
        self._uid = os.getuid() if uid is None else uid
        self._listener: socket.socket | None = None
        self._thread: threading.Thread | None = None
        self._clients = threading.BoundedSemaphore(_MAX_CLIENTS)
        self._closing = threading.Event()
        self.refused = 0
        self.stops = 0

    @property
    def path(self) -> Path:
        return self._path

    def start(self) -> None:
        self._listener = listen_private(self._path, "broker's stop socket", StopSocketError)
        self._thread = threading.Thread(target=self._serve, name="broker-stop-socket", daemon=True)
        self._thread.start()
        log.info("broker: stop socket listening (STOP_NOW without the event loop)")

    def stop(self) -> None:
        self._closing.set()
        listener, self._listener = self._listener, None
        if listener is not None:
            # A blocked accept() wakes (EINVAL) once the listening socket is shut down.
            with contextlib.suppress(OSError):
                listener.shutdown(socket.SHUT_RDWR)
            listener.close()
        if self._thread is not None:
            self._thread.join(timeout=2.0)
            self._thread = None
        with contextlib.suppress(FileNotFoundError):
            self._path.unlink()

    def _serve(self) -> None:
        listener = self._listener
        while listener is not None and not self._closing.is_set():
            try:
                connection, _ = listener.accept()
            except OSError:
                if self._closing.is_set():
                    return
                log.exception("broker: the stop socket's accept failed")
                continue
            if not self._clients.acquire(blocking=False):
                with connection:
                    self._answer(connection, b"error: busy: too many connections at once; try again")
                continue
            threading.Thread(
                target=self._client, args=(connection,), name="broker-stop-client", daemon=True
            ).start()

    def _client(self, connection: socket.socket) -> None:
        with connection:
            try:
                reply = self._reply(connection)
            except OSError as error:  # the peer went away: nothing to tell it
                log.debug("broker: a stop socket client went away: %s", error)
                return
            except Exception:
                log.exception("broker: the stop socket could not stop")
                reply = b"error: the broker could not stop (its log says why)"
            finally:
                self._clients.release()
            self._answer(connection, reply)

    def _reply(self, connection: socket.socket) -> bytes:
        uid, pid = _peer_uid(connection)
        if uid != self._uid:
            self.refused += 1
            log.warning("broker: stop socket: refused pid %d of uid %d (not the desktop user)", pid, uid)
            return b"error: refused: only the desktop user may stop agents here"
        line = _read_line(connection)
        if line is None:
            return b"error: send one line, STOP, within 2 s (at most 64 bytes)"
        if line.strip() != STOP_LINE:
            shown = bytes(byte for byte in line.strip()[:32] if 32 <= byte < 127)
            return b"error: unknown request '" + shown + b"': the only request is STOP"
        epoch = self._stop()
        self.stops += 1
        self._hand_over()
        return f"stopped epoch {epoch}".encode()

    def _answer(self, connection: socket.socket, line: bytes) -> None:
        with contextlib.suppress(OSError):
            connection.settimeout(_READ_TIMEOUT_S)
            connection.sendall(line + b"\n")


def _read_line(connection: socket.socket) -> bytes | None:
    """One line of at most _MAX_LINE bytes (its newline dropped), or None: too long, too slow, or
    the peer closed before its newline."""
    connection.settimeout(_READ_TIMEOUT_S)
    data = b""
    try:
        while b"\n" not in data:
            chunk = connection.recv(_MAX_LINE + 1 - len(data))
            if not chunk:
                return None
            data += chunk
            if len(data) > _MAX_LINE:
                return None
    except TimeoutError:
        return None
    return data.split(b"\n", 1)[0]
