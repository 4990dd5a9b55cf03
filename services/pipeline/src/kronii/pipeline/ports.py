"""What the pipeline's orchestration and HTTP edge need of the outside world, as Protocols.

The runner reaches the sensor snapshot, the plugins, the capture service, the notifier, the
scheduler, the run store and the audit log only through `RunnerPorts`; `kronii replay` and the
in-process tests fill them with the null and in-memory parts below, the service with adapters/.
The api/ routers reach the stores only through the store Protocols at the end."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, Self

from kronii.pipeline.core.budget import PluginContent
from kronii.pipeline.core.router import BaseSnapshot, PluginInfo
from kronii.pipeline.core.states import CaptureStatus, Priority, Trigger
from kronii.pipeline.roles.backend import RoleBackend
from kronii.pipeline.roles.values import Notification, Plan
from kronii.pipeline.v1 import pipeline_pb2 as pb
from kronii.redaction import RedactionEngine

if TYPE_CHECKING:
    from kronii.pipeline.adapters.runs_store import RunRecord
    from sse_starlette import ServerSentEvent

__all__ = [
    "MAX_RUNS_PAGE",
    "SSE_SEPARATOR",
    "Admit",
    "AuditPort",
    "CaptureOutcome",
    "CapturePort",
    "Clock",
    "ControlStore",
    "ControlView",
    "InMemoryRuns",
    "JsonView",
    "NoCapture",
    "NotificationLookup",
    "NotificationStream",
    "NotifierPort",
    "PluginPort",
    "PluginRegistryStore",
    "RunReader",
    "RunSink",
    "RunView",
    "RunnerPorts",
    "SchedulerPort",
    "SnapshotPort",
    "StreamEvent",
    "StreamSubscription",
    "SystemClock",
    "UnknownPlugin",
    "on_the_wall",
]

# Milliseconds; the runner never reads the system clock itself. It is given two: the clock that
# measures every duration and deadline (deferrals, cooldowns, coalescing and rate windows, a
# capture's TTL, the Planner's wake-up), a monotonic clock anchored to the epoch once at start
# (SystemClock.__call__), and the wall clock for what is written down for people (a run's times,
# the status page's deadlines) and for the broker's wall-stamped desktop holds (SystemClock.wall).
# A step of the wall clock (NTP, a person setting the time) then moves no duration.
Clock = Callable[[], int]


class SystemClock:
    """The system's two clocks in epoch milliseconds: called, the monotonic clock anchored to the
    wall clock when this object is made (process start), for durations; `wall()`, the wall clock,
    for records. The time sources are injectable (nanoseconds) so a test can step the wall clock."""

    def __init__(
        self,
        wall_ns: Callable[[], int] = time.time_ns,
        monotonic_ns: Callable[[], int] = time.monotonic_ns,
    ) -> None:
        self._wall_ns = wall_ns
        self._monotonic_ns = monotonic_ns
        self._anchor_ns = wall_ns() - monotonic_ns()

    def __call__(self) -> int:
        return (self._anchor_ns + self._monotonic_ns()) // 1_000_000

    def wall(self) -> int:
        return self._wall_ns() // 1_000_000


def on_the_wall(now: Clock, wall: Clock, at_ms: int) -> int:
    """`at_ms`, a time on the duration clock `now`, said on the wall clock (for people)."""
    return wall() + (at_ms - now())


# The largest page of runs the run store answers.
MAX_RUNS_PAGE = 500


# ---- the runner's ports ------------------------------------------------------------------------


class SnapshotPort(Protocol):
    async def latest(self) -> BaseSnapshot | None: ...


class PluginPort(Protocol):
    async def infos(self) -> Sequence[PluginInfo]: ...

    async def pull(self, app_ids: Sequence[str], full: bool, run_id: str) -> Sequence[PluginContent]: ...


@dataclass(frozen=True, slots=True)
class CaptureOutcome:
    status: CaptureStatus
    screenshot_id: str = ""
    reason: str = ""


class CapturePort(Protocol):
    async def request(self, base: BaseSnapshot, priority: Priority, ttl_ms: int) -> str: ...

    async def outcome(self, job_id: str) -> CaptureOutcome: ...

    async def cancel(self, job_id: str) -> None: ...


class NotifierPort(Protocol):
    async def muted(self, source_key: str) -> str | None: ...

    async def notify(self, run_id: str, notification: Notification, source_key: str) -> str: ...


@dataclass(frozen=True, slots=True)
class Admit:
    allowed: bool
    reason: str = ""
    # When the refusing rules will have passed (the scheduler's retry_after_ms); 0 when unknown.
    retry_after_ms: int = 0


class SchedulerPort(Protocol):
    async def admit(self, app: str, trigger: Trigger) -> Admit | None:
        """None when the scheduler does not answer: the core's own limits decide."""
        ...

    async def plan(self, run_id: str, app: str, plan: Plan, now_ms: int) -> None: ...


class RunSink(Protocol):
    async def save(self, record: RunRecord) -> None: ...


class AuditPort(Protocol):
    async def __call__(
        self, *, actor: str, action: str, subject: str = "", outcome: str = "", **detail: Any
    ) -> None: ...


class NoCapture:
    """No ScreenCapture service: every request fails at once, and the round degrades (seed row 9)."""

    async def request(self, base: BaseSnapshot, priority: Priority, ttl_ms: int) -> str:
        return "none"

    async def outcome(self, job_id: str) -> CaptureOutcome:
        return CaptureOutcome(CaptureStatus.FAILED, reason="no capture service")

    async def cancel(self, job_id: str) -> None:
        return None


class InMemoryRuns:
    """A run store for replay and tests: the latest record of each run, in order of creation."""

    def __init__(self) -> None:
        self.records: dict[str, RunRecord] = {}

    async def save(self, record: RunRecord) -> None:
        self.records[record.run_id] = record


async def _no_audit(*, actor: str, action: str, subject: str = "", outcome: str = "", **detail: Any) -> None:
    return None


@dataclass
class RunnerPorts:
    snapshots: SnapshotPort
    plugins: PluginPort
    backend: RoleBackend
    notifier: NotifierPort
    scheduler: SchedulerPort
    runs: RunSink
    capture: CapturePort = field(default_factory=NoCapture)
    redaction: RedactionEngine = field(default_factory=RedactionEngine)
    audit: AuditPort = _no_audit


# ---- what the HTTP routers read and change -----------------------------------------------------


class JsonView(Protocol):
    """A stored record as the HTTP API shows it."""

    def as_json(self) -> dict[str, Any]: ...


class RunView(JsonView, Protocol):
    @property
    def created_at(self) -> float: ...


class RunReader(Protocol):
    async def get(self, run_id: str) -> RunView | None: ...

    async def list(
        self, *, limit: int = 50, before: float | None = None, decision: str = ""
    ) -> Sequence[RunView]:
        """Newest first; `before` (epoch seconds, exclusive) pages back through older runs."""
        ...


class UnknownPlugin(KeyError):
    def __str__(self) -> str:
        return f"no plugin {self.args[0]!r} is registered"


class PluginRegistryStore(Protocol):
    async def list(self) -> Sequence[JsonView]: ...

    async def get(self, app_id: str) -> JsonView | None: ...

    async def set_enabled(self, app_id: str, enabled: bool, *, now: float) -> JsonView:
        """UnknownPlugin if no plugin `app_id` is registered."""
        ...


class NotificationLookup(Protocol):
    async def get(self, notification_id: str) -> pb.Notification | None: ...


class ControlView(JsonView, Protocol):
    @property
    def source_key(self) -> str: ...


class ControlStore(Protocol):
    async def snooze(
        self, source_key: str, *, until: float, now: float, notification_id: str = ""
    ) -> ControlView: ...

    async def disable(self, source_key: str, *, now: float, notification_id: str = "") -> ControlView: ...

    async def clear(self, source_key: str) -> bool: ...

    async def active(self, now: float) -> Mapping[str, ControlView]: ...


class StreamEvent(Protocol):
    def frame(self) -> ServerSentEvent: ...


class StreamSubscription(Protocol):
    def __aiter__(self) -> AsyncIterator[StreamEvent]: ...

    async def __aenter__(self) -> Self: ...

    async def __aexit__(self, *exc: object) -> None: ...


# Plain newlines between the fields of every notification-stream frame (events, the opening, keep-alives),
# as the stream has always sent them; every SSE client accepts them.
SSE_SEPARATOR = "\n"


class NotificationStream(Protocol):
    def subscribe(self, last_event_id: int | None = None) -> StreamSubscription: ...
