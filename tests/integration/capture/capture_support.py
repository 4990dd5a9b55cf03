"""Shared by the capture service's integration and end-to-end tests: an xterm showing planted
values (its real X window id and pid), the service as a process, a stand-in sensor that publishes
focus on NATS and keeps a snapshot in Redis, a scan of responses for filesystem paths, commands run
on a real pseudo-terminal (a person's terminal: reading screenshots needs one), and a registered
agent's session for tests whose reader is an agent."""

from __future__ import annotations

import asyncio
import contextlib
import io
import itertools
import os
import re
import subprocess
import tempfile
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import grpc
import redis.asyncio as aioredis
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat
from google.protobuf.timestamp_pb2 import Timestamp
from kronii.activity.v1 import activity_pb2 as apb
from kronii.capture.adapters.callers import client_sessions
from kronii.capture.core.capabilities import Capability, names
from kronii.capture.v1 import capture_pb2 as pb
from kronii.capture.v1 import capture_pb2_grpc as pb_grpc
from kronii.launcher.infra import free_port
from kronii.runtime.rendezvous import SENSOR_SNAPSHOT_KEY
from kronii.stores import subjects
from kronii.stores.bus import Bus
from kronii.stores.db import make_engine, make_sessionmaker
from PIL import Image

from tests.desktop import stop_process
from tests.infra import InfraUrls
from tests.mesh import Proc, start_service
from tests.terminal import TerminalRun, run_on_terminal
from tests.unit.redaction_pixels.pixels_support import FILLER, PLANTS, wait_until_window_drawn

__all__ = [
    "NO_SYSTEM_BUS",
    "PLANTED_TEXT",
    "PLANTS",
    "CaptureProc",
    "FakeSensor",
    "Metadata",
    "PlantedWindow",
    "TerminalRun",
    "agent_bearer",
    "capture_env",
    "path_like",
    "planted_window",
    "run_on_terminal",
    "start_capture",
]

# No polkit authority unless a test starts one: the TTY binding is the proof of presence.
NO_SYSTEM_BUS = "unix:path=/nonexistent/kronii-test-system-bus"

PLANTED_TEXT = "\n".join(
    line
    for n, plant in enumerate(PLANTS)
    for line in (FILLER[n % len(FILLER)], plant.before + plant.value + plant.after)
)
# Absolute paths of the kinds a leak would show: a home, a temp or runtime dir, the data dir.
_PATH = re.compile(r"(?<![A-Za-z0-9_.:-])/(?:tmp|home|root|run|var|work|proc|usr|etc)(?:/|\b)")


def path_like(text: str) -> list[str]:
    """Filesystem-path-looking fragments in `text` (what no response may contain)."""
    return [text[max(0, m.start() - 20) : m.end() + 40] for m in _PATH.finditer(text)]


_serial = itertools.count()


@dataclass
class PlantedWindow:
    display: str
    process: subprocess.Popen[bytes]
    window_id: int
    wm_class: str

    @property
    def pid(self) -> int:
        return self.process.pid


def _start_ms(pid: int) -> int:
    """The process start time in epoch ms as the sensor computes it (/proc ticks since boot)."""
    ticks = int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[19])
    boot = next(
        int(line.split()[1])
        for line in Path("/proc/stat").read_text().splitlines()
        if line.startswith("btime")
    )
    return int((boot + ticks / os.sysconf("SC_CLK_TCK")) * 1000)


@contextlib.contextmanager
def planted_window(
    display: str, text: str = PLANTED_TEXT, *, geometry: str = "72x12+40+60", then_bash: bool = False
) -> Iterator[PlantedWindow]:
    """An xterm printing `text` (DejaVu Sans Mono 12, light), mapped and drawn; then waiting with no
    cursor, or with `then_bash` a bash without rc files where typed lines run."""
    wm_class = f"KroniiCapture{os.getpid()}x{next(_serial)}"
    with tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False) as handle:
        handle.write(text)
    then = "exec bash --norc --noprofile -i" if then_bash else "printf '\\033[?25l'; sleep 600"
    command = [
        "xterm", "-class", wm_class, "-fa", "DejaVu Sans Mono", "-fs", "12", "-bg", "#ffffff", "-fg", "#000000",
        "+sb", "-b", "4", "-xrm", "XTerm*cursorBlink: false", "-geometry", geometry,
        "-e", "sh", "-c", f"cat '{handle.name}'; {then}",
    ]  # fmt: skip
    env = {**os.environ, "DISPLAY": display, "PS1": "$ ", "HISTFILE": os.devnull}
    process = subprocess.Popen(
        command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True
    )
    try:
        found = subprocess.run(
            ["xdotool", "search", "--sync", "--onlyvisible", "--class", f"^{wm_class}$"],
            env=env, capture_output=True, text=True, timeout=10, check=True,
        )  # fmt: skip
        window_id = int(found.stdout.split()[0])
        wait_until_window_drawn(display, window_id)  # its text drawn and still
        yield PlantedWindow(display, process, window_id, wm_class)
    finally:
        stop_process(process, timeout_s=3)
        os.unlink(handle.name)


def focus_message(window: PlantedWindow | None) -> apb.Focus:
    if window is None:
        return apb.Focus()
    return apb.Focus(
        app_name=window.wm_class,
        wm_class=f"{window.wm_class.lower()}.{window.wm_class}",
        window_id=window.window_id,
        title="terminal",
        pid=window.pid,
        app_start_time=_start_ms(window.pid),
    )


class FakeSensor:
    """What the capture service reads from the sensor: a Redis snapshot and focus_changed events."""

    def __init__(self, infra: InfraUrls) -> None:
        self._infra = infra
        self.bus = Bus("test-sensor")
        self.redis: aioredis.Redis | None = None
        self.focused: PlantedWindow | None = None

    async def start(self) -> None:
        await self.bus.connect(self._infra.nats)
        self.redis = aioredis.from_url(self._infra.redis)
        await self._snapshot()

    async def close(self) -> None:
        await self.bus.close()
        if self.redis is not None:
            await self.redis.aclose()

    async def focus(self, window: PlantedWindow | None) -> None:
        previous, self.focused = self.focused, window
        now = Timestamp()
        now.GetCurrentTime()
        await self._snapshot()
        await self.bus.publish(
            subjects.FOCUS_CHANGED,
            apb.FocusChanged(
                previous=focus_message(previous), current=focus_message(window), at=now, change="app"
            ),
        )

    async def _snapshot(self) -> None:
        assert self.redis is not None
        now = Timestamp()
        now.GetCurrentTime()
        snapshot = apb.Snapshot(
            focus=focus_message(self.focused),
            idle_ms=60_000,
            locked=False,
            updated_at=now,
            display_available=True,
        )
        await self.redis.set(SENSOR_SNAPSHOT_KEY, snapshot.SerializeToString())


def capture_env(infra: InfraUrls, database: str, data_dir: Path, display: str | None) -> dict[str, str]:
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith("KRONII_") and k not in ("DISPLAY", "XDG_RUNTIME_DIR")
    }
    env.update(infra.env())
    env.update(
        KRONII_DATABASE_URL=database,
        KRONII_DATA_DIR=str(data_dir),
        KRONII_LOG_FORMAT="text",
        KRONII_CAPTURE_HTTP_PORT=str(free_port()),
        KRONII_CAPTURE_GRPC_PORT=str(free_port()),
        KRONII_CAPTURE_SOCKET_DIR=str(data_dir / "sock"),
        KRONII_CAPTURE_USE_SECRET_SERVICE="false",
        KRONII_CAPTURE_INPUT_BACKOFF_MS="0",
        KRONII_CAPTURE_MERGE_WINDOW_MS="2000",
        DBUS_SESSION_BUS_ADDRESS="unix:path=/nonexistent/kronii-test-bus",
        DBUS_SYSTEM_BUS_ADDRESS=NO_SYSTEM_BUS,
    )
    if display:
        env["KRONII_CAPTURE_DISPLAY"] = display
    return env


@dataclass
class CaptureProc:
    proc: Proc
    http: str
    grpc_port: int
    socket: Path

    @property
    def unix_target(self) -> str:
        return f"unix:{self.socket}"


@contextlib.contextmanager
def start_capture(env: dict[str, str]) -> Iterator[CaptureProc]:
    with start_service("capture", env, timeout=60) as capture:
        socket = Path(env["KRONII_CAPTURE_SOCKET_DIR"]) / "capture.sock"
        yield CaptureProc(capture.proc, capture.url, capture.grpc_port, socket)


Metadata = tuple[tuple[str, str], ...]


async def agent_bearer(target: str, redis_url: str, database: str, capabilities: Capability) -> Metadata:
    """Register a fresh Ed25519 agent with ``capabilities`` and log it in by challenge-response over
    ``target``; the call metadata that carries its session."""
    key = Ed25519PrivateKey.generate()
    client_id = f"it-agent-{uuid.uuid4().hex[:10]}"
    engine = make_engine(database)
    redis = aioredis.from_url(redis_url)
    try:
        await client_sessions(redis, make_sessionmaker(engine)).register_client(
            client_id, key.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw), names(capabilities)
        )
    finally:
        await redis.aclose()
        await engine.dispose()
    async with grpc.aio.insecure_channel(target) as channel:
        stub = pb_grpc.ScreenCaptureStub(channel)
        challenge = await stub.BeginChallenge(pb.ChallengeRequest(client_id=client_id), timeout=10)
        session = await stub.Authenticate(
            pb.AuthenticateRequest(
                challenge_id=challenge.challenge_id,
                client_id=client_id,
                signature=key.sign(challenge.nonce),
            ),
            timeout=10,
        )
    return (("authorization", f"Bearer {session.session_token}"),)


PROGRESSION = [pb.QUEUED, pb.WAITING, pb.CAPTURING, pb.SCORING, pb.REDACTING, pb.PERSISTED]


async def strict_capture(
    stub: pb_grpc.ScreenCaptureStub,
    reader: Metadata,
    sensor: FakeSensor,
    window: PlantedWindow,
    requester: str,
) -> tuple[pb.CaptureResult, Image.Image]:
    """A STRICT request for `window` made while the sensor names no window, the window then focused: the job
    goes through every status to PERSISTED; its result and its stored (redacted) screenshot, read with a
    reader's single-use token."""
    await sensor.focus(None)
    request = pb.CaptureRequest(
        process_id=window.pid, window_id=window.window_id, app_name=window.wm_class, bypass=pb.STRICT,
        requester=requester,
    )  # fmt: skip
    job = await stub.RequestScreenCapture(request, timeout=10)
    watch = asyncio.create_task(_statuses(stub, job.job_id))
    await asyncio.sleep(0.3)
    await sensor.focus(window)
    seen = await watch
    assert [status.status for status in seen] == PROGRESSION, seen
    result = await stub.GetCaptureResult(job, timeout=10)
    screenshot_id = seen[-1].primary_screenshot_id
    token = await stub.IssueToken(
        pb.IssueTokenRequest(screenshot_id=screenshot_id), metadata=reader, timeout=10
    )
    wanted = pb.GetScreenshotRequest(screenshot_id=screenshot_id, single_use_token=token.single_use_token)
    chunks = [chunk async for chunk in stub.GetScreenshot(wanted, metadata=reader, timeout=30)]
    return result, Image.open(io.BytesIO(b"".join(chunk.data for chunk in chunks)))


async def _statuses(stub: pb_grpc.ScreenCaptureStub, job_id: str) -> list[pb.CaptureStatus]:
    return [status async for status in stub.WatchCapture(pb.CaptureJobId(job_id=job_id), timeout=90)]
