"""capture's redacted frame of the window in front (ports.Screenshots), through the capture service.

The window is read from X: the root's _NET_ACTIVE_WINDOW, its _NET_WM_PID and WM_CLASS, and its
rectangle in root pixels computed as capture's frame grabber computes it (so `Frame.area` is the part
of the screen the PNG shows). It is asked for with bypass STRICT: that window of that process, or
nothing. The process start time is the sensor's (epoch ms from /proc start ticks and the boot time
read once), because capture matches a request against the sensor's focus, start time included.

Reading a redacted screenshot needs READ_REDACTED, which a local caller lacks without a person:
vision signs in as a registered agent (Ed25519 challenge-response) and sends its session with every
call. Every failure is `ScreenshotUnavailable` with a sentence a person can act on, and the whole call
is bounded in time; the job's TTL is never longer than that bound, so a job given up on ends by itself.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import hashlib
import os
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar, cast

import grpc
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from kronii.agents.keys import load_private_key
from kronii.capture.v1 import capture_pb2 as cpb
from kronii.capture.v1 import capture_pb2_grpc as cpb_grpc
from kronii.crypto.errors import KeyFileError
from kronii.edge.procinfo import start_ticks
from kronii.runtime.rendezvous import capture_socket_path
from kronii.vision.core.context import Frame
from kronii.vision.ports import ScreenshotUnavailable
from kronii.vision.settings import VisionSettings
from Xlib import X
from Xlib import display as xdisplay
from Xlib import error as xerror

if TYPE_CHECKING:
    from kronii.capture.v1.capture_pb2_grpc import ScreenCaptureAsyncStub

__all__ = [
    "DEFAULT_CLIENT_ID",
    "DEFAULT_TIMEOUT_SECS",
    "DEFAULT_TTL_MS",
    "CaptureScreenshots",
    "FrontWindow",
    "KeyFileError",
    "capture_socket",
    "ensure_key",
    "front_window",
    "load_private_key",
    "process_start_ms",
]

DEFAULT_CLIENT_ID = "vision"
DEFAULT_TIMEOUT_SECS = 8.0
DEFAULT_TTL_MS = 5_000
REQUESTER = "vision"
_BURST_COUNT = 2
_NEEDED = ("READ_REDACTED", "REQUEST_CAPTURE")
# Renewed ahead of capture's end of the session: over the Unix socket a dead token turns the call into
# a local one, which may not read screenshots (and could make capture ask the person).
_RENEW_MARGIN_S = 30.0
_TERMINAL = frozenset({cpb.PERSISTED, cpb.EXPIRED, cpb.REJECTED, cpb.FAILED, cpb.CANCELLED})
_TERMINAL_NAMES = frozenset(cpb.CaptureStatusCode.Name(code) for code in _TERMINAL)
_STALE_SESSION = frozenset({grpc.StatusCode.UNAUTHENTICATED, grpc.StatusCode.PERMISSION_DENIED})
# How gRPC words "nobody listens there" (as opposed to capture itself answering UNAVAILABLE).
_NOBODY_THERE = (
    "failed to connect",
    "connection refused",
    "connection reset",
    "socket closed",
    "no such file",
)

Metadata = tuple[tuple[str, str], ...]
T = TypeVar("T")


# ---- vision's key --------------------------------------------------------------------------------


def ensure_key(path: str | os.PathLike[str]) -> Path:
    """vision's key pair: the private key at `path` (PEM, 0600; its directory made 0700 when created
    here) and the OpenSSH public key next to it, `path.with_suffix('.pub')`, the form
    `kronii capture clients add --public-key` takes. Each is made only when missing; returns the
    public key's path."""
    key_path = Path(path)
    public_path = key_path.with_suffix(".pub")
    if public_path == key_path:
        raise KeyFileError(f"vision's private key must not be named like a public key: {key_path}")
    if not key_path.parent.is_dir():
        key_path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        key_path.parent.chmod(0o700)  # mkdir's mode goes through the umask
    if not key_path.exists():
        _write_new_key(key_path)
    if not public_path.exists():
        public = load_private_key(key_path).public_key()
        line = public.public_bytes(serialization.Encoding.OpenSSH, serialization.PublicFormat.OpenSSH)
        staged = public_path.with_name(f".{public_path.name}.{os.getpid()}")
        staged.write_bytes(line + b" kronii-vision\n")
        staged.replace(public_path)
    return public_path


def _write_new_key(key_path: Path) -> None:
    pem = Ed25519PrivateKey.generate().private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )
    try:
        # Created 0600 from the start: the key is never readable by others, not even for a moment.
        descriptor = os.open(key_path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        return  # another start made it first; theirs is as good
    with os.fdopen(descriptor, "wb") as handle:
        handle.write(pem)


# ---- the window in front -------------------------------------------------------------------------


@dataclass(frozen=True)
class FrontWindow:
    window_id: int
    pid: int
    app_name: str
    start_time_ms: int
    # x, y, width, height in X pixels, clipped to the screen as capture clips it.
    area: tuple[int, int, int, int]


@functools.cache
def _boot_time_s() -> int | None:
    # Read once, like the sensor: the kernel derives btime from the wall clock on every read, and a
    # second's drift between reads would put the two start times apart.
    try:
        text = Path("/proc/stat").read_text()
    except OSError:
        return None
    return next((int(line.split()[1]) for line in text.splitlines() if line.startswith("btime ")), None)


def process_start_ms(pid: int) -> int:
    """The start of `pid` in epoch ms exactly as the sensor computes it; 0 (unknown) when /proc cannot say."""
    boot = _boot_time_s()
    ticks = start_ticks(pid) if pid > 0 else None
    if boot is None or ticks is None:
        return 0
    return boot * 1000 + ticks * 1000 // os.sysconf("SC_CLK_TCK")


def _connect(name: str | None) -> Any:
    shown = name if name is not None else os.environ.get("DISPLAY")
    if not shown:
        raise ScreenshotUnavailable("no X display to find the window in front: DISPLAY is not set")
    try:
        return xdisplay.Display(shown)
    except (xerror.DisplayError, xerror.ConnectionClosedError, OSError):
        raise ScreenshotUnavailable(
            f"cannot reach the X display {shown!r} to find the window in front"
        ) from None


def front_window(display: str | None = None) -> FrontWindow:
    """The window the window manager names active, its process and its rectangle (blocking)."""
    dpy = _connect(display)
    try:
        return _read_front(dpy)
    except (xerror.BadWindow, xerror.BadDrawable, xerror.BadMatch):
        # Window managers may leave _NET_ACTIVE_WINDOW naming a window that has since closed.
        raise ScreenshotUnavailable("no window is in front: the one last named active has closed") from None
    except (xerror.ConnectionClosedError, OSError):
        raise ScreenshotUnavailable(
            "the X display went away while vision was reading the window in front"
        ) from None
    finally:
        dpy.close()


def _read_front(dpy: Any) -> FrontWindow:
    active = dpy.screen().root.get_full_property(dpy.intern_atom("_NET_ACTIVE_WINDOW"), X.AnyPropertyType)
    window_id = int(active.value[0]) if active is not None and len(active.value) else 0
    if window_id == 0:
        raise ScreenshotUnavailable(
            "no window is in front (the window manager names none): nothing to capture"
        )
    window = dpy.create_resource_object("window", window_id)
    owner = window.get_full_property(dpy.intern_atom("_NET_WM_PID"), X.AnyPropertyType)
    pid = int(owner.value[0]) if owner is not None and len(owner.value) else 0
    if pid == 0:
        raise ScreenshotUnavailable(
            f"the window in front ({window_id:#x}) does not say which process shows it (no _NET_WM_PID), "
            "so capture cannot be asked for that window alone"
        )
    wm_class = window.get_wm_class()
    area = _area(dpy, window, window_id)
    return FrontWindow(window_id, pid, wm_class[1] if wm_class else "", process_start_ms(pid), area)


def _area(dpy: Any, window: Any, window_id: int) -> tuple[int, int, int, int]:
    if window.get_attributes().map_state != X.IsViewable:
        raise ScreenshotUnavailable(f"the window in front ({window_id:#x}) is not shown")
    screen = dpy.screen()
    size = window.get_geometry()
    # The root's origin in the window's coordinates: the window's position, negated.
    origin = window.translate_coords(screen.root, 0, 0)
    left, top = -int(origin.x), -int(origin.y)
    right, bottom = left + int(size.width), top + int(size.height)
    left, top = max(left, 0), max(top, 0)
    right, bottom = min(right, screen.width_in_pixels), min(bottom, screen.height_in_pixels)
    if right - left < 8 or bottom - top < 8:
        raise ScreenshotUnavailable(f"the window in front ({window_id:#x}) lies off the screen")
    return (left, top, right - left, bottom - top)


# ---- capture -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Session:
    metadata: Metadata
    renew_at: float  # time.monotonic()


@dataclass
class _Attempt:
    """How far one focused_window() got: the sentence for a failure or a timeout says so."""

    step: str = "finding the window in front"
    job_id: str = ""
    status: str = ""

    def progress(self) -> str:
        if not self.job_id:
            return f"it was {self.step}"
        return f"job {self.job_id} was {self.status.lower() or 'not yet queued'}"


class CaptureScreenshots:
    """ports.Screenshots over capture's gRPC API on its Unix socket (`socket`), signed in as the
    agent `client_id` with the private key at `key_path`. The channel opens on first use; close() ends it."""

    def __init__(
        self,
        socket: str | os.PathLike[str],
        key_path: str | os.PathLike[str],
        *,
        client_id: str = DEFAULT_CLIENT_ID,
        timeout_secs: float = DEFAULT_TIMEOUT_SECS,
        ttl_ms: int = DEFAULT_TTL_MS,
        display: str | None = None,
    ) -> None:
        if timeout_secs <= 0:
            raise ValueError("the capture timeout must be positive")
        self._socket = Path(socket)
        self._key_path = Path(key_path)
        self._client_id = client_id
        self._timeout = timeout_secs
        # Never outliving the wait: a job given up on expires on its own instead of lingering.
        self._ttl_ms = max(1_000, min(ttl_ms, int(timeout_secs * 1000)))
        self._display = display
        self._channel: grpc.aio.Channel | None = None
        self._session: _Session | None = None

    @property
    def public_key_path(self) -> Path:
        return self._key_path.with_suffix(".pub")

    def register_command(self) -> str:
        return f"kronii capture clients add {self._client_id} --public-key {self.public_key_path}"

    async def focused_window(self) -> Frame:
        if not self._socket.exists():
            raise ScreenshotUnavailable(
                f"capture is not running (no socket at {self._socket}): start it with `kronii up`"
            )
        attempt = _Attempt()
        try:
            async with asyncio.timeout(self._timeout):
                return await self._take(attempt)
        except TimeoutError:
            await self._give_up(attempt)
            raise ScreenshotUnavailable(
                f"capture gave no frame of the window in front within {self._timeout:g} s ({attempt.progress()})"
            ) from None
        except grpc.aio.AioRpcError as error:
            raise ScreenshotUnavailable(self._sentence(error, attempt)) from None

    async def _give_up(self, attempt: _Attempt) -> None:
        """Cancel a job vision stopped waiting for: left to run, it would hold capture's queue and make
        the next requests expire behind it (seen under load)."""
        session = self._session
        if not attempt.job_id or attempt.status in _TERMINAL_NAMES or session is None:
            return
        with contextlib.suppress(grpc.aio.AioRpcError, TimeoutError):
            await self._stub().CancelCapture(
                cpb.CaptureJobId(job_id=attempt.job_id), metadata=session.metadata, timeout=2.0
            )

    async def close(self) -> None:
        channel, self._channel = self._channel, None
        self._session = None
        if channel is not None:
            await channel.close()

    async def _take(self, attempt: _Attempt) -> Frame:
        # Signed in first: capture down or vision unknown to it is what a person must fix first.
        attempt.step = "signing in to capture"
        await self._bearer()
        attempt.step = "finding the window in front"
        window = await asyncio.to_thread(front_window, self._display)
        attempt.step = "asking for a capture"
        job_id = await self._authorized(lambda metadata: self._request(window, metadata))
        attempt.job_id, attempt.step = job_id, "waiting for the capture"
        screenshot_id = await self._authorized(lambda metadata: self._outcome(job_id, attempt, metadata))
        attempt.step = "reading the screenshot"
        png, size = await self._authorized(lambda metadata: self._read(screenshot_id, metadata))
        return Frame(screenshot_id, hashlib.sha256(png).hexdigest(), png, size, window.area)

    def _stub(self) -> ScreenCaptureAsyncStub:
        if self._channel is None:
            self._channel = grpc.aio.insecure_channel(f"unix:{self._socket}")
        # grpc's own hints do not tell an aio channel from a blocking one; the generated overload needs that.
        return cast("ScreenCaptureAsyncStub", cpb_grpc.ScreenCaptureStub(self._channel))

    async def _authorized(self, call: Callable[[Metadata], Awaitable[T]]) -> T:
        """`call` with vision's session; once more with a new one when capture no longer takes the old
        (expired or revoked: UNAUTHENTICATED over TCP, PERMISSION_DENIED as a local caller)."""
        fresh = self._session is None or time.monotonic() >= self._session.renew_at
        metadata = await self._bearer()
        try:
            return await call(metadata)
        except grpc.aio.AioRpcError as error:
            if fresh or error.code() not in _STALE_SESSION:
                raise
        self._session = None
        return await call(await self._bearer())

    async def _bearer(self) -> Metadata:
        session = self._session
        if session is None or time.monotonic() >= session.renew_at:
            session = self._session = await self._sign_in()
        return session.metadata

    async def _sign_in(self) -> _Session:
        try:
            key = await asyncio.to_thread(load_private_key, self._key_path)
        except KeyFileError as error:
            raise ScreenshotUnavailable(
                f"{error}: the vision service makes one when it starts; then register it with "
                f"`{self.register_command()}`"
            ) from None
        stub = self._stub()
        challenge = await stub.BeginChallenge(
            cpb.ChallengeRequest(client_id=self._client_id), timeout=self._timeout
        )
        try:
            session = await stub.Authenticate(
                cpb.AuthenticateRequest(
                    challenge_id=challenge.challenge_id,
                    client_id=self._client_id,
                    signature=key.sign(challenge.nonce),
                ),
                timeout=self._timeout,
            )
        except grpc.aio.AioRpcError as error:
            if error.code() is not grpc.StatusCode.UNAUTHENTICATED:
                raise
            raise ScreenshotUnavailable(
                f"capture does not accept vision's key ({error.details()}): register it with "
                f"`{self.register_command()}`"
            ) from None
        missing = [name for name in _NEEDED if name not in session.capabilities]
        if missing:
            raise ScreenshotUnavailable(
                f"capture lets vision in without {' and '.join(missing)}: register it again with "
                f"`{self.register_command()}` (its default capabilities are the ones vision needs)"
            )
        lifetime = (session.expires_at.ToDatetime(tzinfo=UTC) - datetime.now(UTC)).total_seconds()
        renew_at = time.monotonic() + max(0.0, lifetime - min(_RENEW_MARGIN_S, lifetime / 2))
        return _Session((("authorization", f"Bearer {session.session_token}"),), renew_at)

    async def _request(self, window: FrontWindow, metadata: Metadata) -> str:
        request = cpb.CaptureRequest(
            process_id=window.pid,
            app_name=window.app_name,
            app_start_time=window.start_time_ms,
            window_id=window.window_id,
            bypass=cpb.STRICT,
            burst_count=_BURST_COUNT,
            priority=cpb.HIGH,
            ttl_ms=self._ttl_ms,
            requester=REQUESTER,
        )
        job = await self._stub().RequestScreenCapture(request, metadata=metadata, timeout=self._timeout)
        return str(job.job_id)

    async def _outcome(self, job_id: str, attempt: _Attempt, metadata: Metadata) -> str:
        """The job's screenshot id once it persisted; ScreenshotUnavailable when it ended without one."""
        last: cpb.CaptureStatus | None = None
        call = self._stub().WatchCapture(
            cpb.CaptureJobId(job_id=job_id), metadata=metadata, timeout=self._timeout
        )
        try:
            async for status in call:
                last = status
                attempt.status = cpb.CaptureStatusCode.Name(status.status)
                if status.status in _TERMINAL:
                    break
        finally:
            call.cancel()
        if last is None or last.status not in _TERMINAL:
            raise ScreenshotUnavailable(f"capture's status stream of job {job_id} ended before the job did")
        if last.status != cpb.PERSISTED:
            ended = cpb.CaptureStatusCode.Name(last.status).lower()
            raise ScreenshotUnavailable(
                f"capture's job {job_id} for the window in front ended {ended}: "
                f"{last.reason or 'capture gave no reason'}"
            )
        return str(last.primary_screenshot_id)

    async def _read(self, screenshot_id: str, metadata: Metadata) -> tuple[bytes, tuple[int, int]]:
        stub = self._stub()
        token = await stub.IssueToken(
            cpb.IssueTokenRequest(screenshot_id=screenshot_id), metadata=metadata, timeout=self._timeout
        )
        request = cpb.GetScreenshotRequest(
            screenshot_id=screenshot_id, single_use_token=token.single_use_token
        )
        chunks = [
            chunk async for chunk in stub.GetScreenshot(request, metadata=metadata, timeout=self._timeout)
        ]
        if not chunks or not chunks[0].data:
            raise ScreenshotUnavailable(f"capture sent no image for screenshot {screenshot_id}")
        return b"".join(chunk.data for chunk in chunks), (int(chunks[0].width), int(chunks[0].height))

    def _sentence(self, error: grpc.aio.AioRpcError, attempt: _Attempt) -> str:
        code = error.code()
        details = error.details() or code.name.lower()
        if code is grpc.StatusCode.UNAVAILABLE and any(word in details.lower() for word in _NOBODY_THERE):
            return f"capture is not running (nothing answers at {self._socket}): start it with `kronii up`"
        if code is grpc.StatusCode.DEADLINE_EXCEEDED:
            return f"capture gave no frame within {self._timeout:g} s ({attempt.progress()})"
        if code is grpc.StatusCode.RESOURCE_EXHAUSTED:
            return f"capture takes no more requests from vision for now: {details}"
        if code in _STALE_SESSION:
            return (
                f"capture refused vision while {attempt.step}: {details} "
                "(`kronii capture clients list` shows what vision may do)"
            )
        return f"capture failed while {attempt.step} ({code.name}): {details}"


def capture_socket(settings: VisionSettings) -> Path:
    """capture's Unix socket, as capture itself places it (its KRONII_CAPTURE_SOCKET_DIR included)."""
    configured = os.environ.get("KRONII_CAPTURE_SOCKET_DIR", "").strip()
    return capture_socket_path(Path(settings.data_dir), Path(configured) if configured else None)
