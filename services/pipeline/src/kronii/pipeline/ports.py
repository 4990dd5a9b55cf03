"""What the pipeline's use cases need of the outside world, as Protocols, and the exceptions the
adapters raise for them. Every port takes and returns core types.

The runner reaches the sensor snapshot, the plugins, the capture service, the roles' backend, the
notifier, the scheduler, the run store and the audit trail only through `RunnerPorts`; `kronii
replay` and the in-process tests fill them with in-process parts (usecases/in_process.py), the
service with adapters/. PipelineOperations reaches the stores through the store Protocols at the end."""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol, Self

from kronii.foundation.audit_trail import AuditTrail
from kronii.pipeline.core.answers import Admit, CaptureOutcome
from kronii.pipeline.core.budget import PluginContent
from kronii.pipeline.core.controls import SourceControl
from kronii.pipeline.core.plugins import PluginRecord, PluginRegistration
from kronii.pipeline.core.roles.values import (
    Called,
    Fragment,
    Notification,
    Plan,
    PlanHistory,
    RoleContext,
    Synthesis,
)
from kronii.pipeline.core.router import BaseSnapshot, Family, PluginInfo
from kronii.pipeline.core.runs import RunRecord
from kronii.pipeline.core.states import Priority, Trigger
from kronii.redaction import RedactionEngine

__all__ = [
    "SSE_SEPARATOR",
    "CapturePort",
    "ControlStore",
    "NotificationLookup",
    "NotificationStream",
    "NotifierPort",
    "OfferAnswers",
    "PluginPort",
    "PluginRegistryStore",
    "RoleBackend",
    "RunEraser",
    "RunReader",
    "RunSink",
    "RunnerPorts",
    "SchedulerPort",
    "SnapshotPort",
    "StreamEvent",
    "StreamSubscription",
    "UnknownPlugin",
]


# ---- the runner's ports ------------------------------------------------------------------------


class SnapshotPort(Protocol):
    async def latest(self) -> BaseSnapshot | None: ...


class PluginPort(Protocol):
    async def infos(self) -> Sequence[PluginInfo]: ...

    async def pull(self, app_ids: Sequence[str], full: bool, run_id: str) -> Sequence[PluginContent]: ...


class CapturePort(Protocol):
    async def request(self, base: BaseSnapshot, priority: Priority, ttl_ms: int) -> str: ...

    async def outcome(self, job_id: str) -> CaptureOutcome: ...

    async def cancel(self, job_id: str) -> None: ...


class RoleBackend(Protocol):
    """The four role calls (`rules` in core/roles, a model in adapters/model_roles). Input is
    redacted context only; output must match the roles' schemas. Async because model backends wait
    on HTTP or a worker thread; the `rules` backend answers at once."""

    @property
    def name(self) -> str: ...

    async def extract(self, context: RoleContext, family: Family) -> Called[list[Fragment]]: ...

    async def synthesize(self, fragments: Sequence[Fragment]) -> Called[Synthesis]: ...

    async def plan(self, synthesis: Synthesis, history: PlanHistory) -> Called[Plan]: ...

    async def notify(self, plan: Plan, synthesis: Synthesis) -> Called[Notification | None]: ...


class NotifierPort(Protocol):
    async def muted(self, source_key: str) -> str | None: ...

    async def notify(
        self, run_id: str, notification: Notification, source_key: str, accept_label: str = ""
    ) -> str:
        """Show it on every channel; the notification's id. ``accept_label``: a button that says
        yes to an offer (the desktop sends its click back as core.notices.Button.ACCEPT)."""
        ...


class OfferAnswers(Protocol):
    """The person's yes to an offer another service made (the supervisor's hand-over of a failure
    to an agent): published on kronii.supervisor.offer.accept."""

    async def accept(self, offer_id: str) -> None: ...


class SchedulerPort(Protocol):
    async def admit(self, app: str, trigger: Trigger) -> Admit | None:
        """None when the scheduler does not answer: the core's own limits decide."""
        ...

    async def plan(self, run_id: str, app: str, plan: Plan, now_ms: int) -> None: ...


class RunSink(Protocol):
    async def save(self, record: RunRecord) -> None: ...


@dataclass
class RunnerPorts:
    snapshots: SnapshotPort
    plugins: PluginPort
    backend: RoleBackend
    notifier: NotifierPort
    scheduler: SchedulerPort
    runs: RunSink
    capture: CapturePort
    audit: AuditTrail
    redaction: RedactionEngine = field(default_factory=RedactionEngine)


# ---- the stores PipelineOperations reads and changes -------------------------------------------


class RunReader(Protocol):
    async def get(self, run_id: str) -> RunRecord | None: ...

    async def list(
        self, *, limit: int = 50, before: float | None = None, decision: str = ""
    ) -> Sequence[RunRecord]:
        """Newest first; `before` (epoch seconds, exclusive) pages back through older runs."""
        ...


class RunEraser(Protocol):
    async def forget(self, since: float | None, until: float | None) -> tuple[int, int]:
        """The runs made in [since, until) and the notifications sent then (all with no range)
        deleted: (runs, notifications)."""
        ...


class UnknownPlugin(KeyError):
    def __str__(self) -> str:
        return f"no plugin {self.args[0]!r} is registered"


class PluginRegistryStore(Protocol):
    async def register(self, registration: PluginRegistration, *, now: float) -> PluginRecord:
        """ValueError if the registration has no app_id or a risk score outside 0..1."""
        ...

    async def list(self) -> Sequence[PluginRecord]: ...

    async def get(self, app_id: str) -> PluginRecord | None: ...

    async def set_enabled(self, app_id: str, enabled: bool, *, now: float) -> PluginRecord:
        """UnknownPlugin if no plugin `app_id` is registered."""
        ...


class NotificationLookup(Protocol):
    async def source_key(self, notification_id: str) -> str | None:
        """The source the notification's snooze and disable act on ("" when it has none); None
        when there is no such notification."""
        ...


class ControlStore(Protocol):
    async def snooze(
        self, source_key: str, *, until: float, now: float, notification_id: str = ""
    ) -> SourceControl: ...

    async def disable(self, source_key: str, *, now: float, notification_id: str = "") -> SourceControl: ...

    async def clear(self, source_key: str) -> bool: ...

    async def active(self, now: float) -> Mapping[str, SourceControl]: ...


class StreamEvent(Protocol):
    """One event of the notification stream; the API frames it as a server-sent event."""

    @property
    def id(self) -> int: ...

    @property
    def event(self) -> str: ...

    @property
    def data(self) -> str: ...


class StreamSubscription(Protocol):
    def __aiter__(self) -> AsyncIterator[StreamEvent]: ...

    async def __aenter__(self) -> Self: ...

    async def __aexit__(self, *exc: object) -> None: ...


# Plain newlines between the fields of every notification-stream frame (events, the opening, keep-alives),
# as the stream has always sent them; every SSE client accepts them.
SSE_SEPARATOR = "\n"


class NotificationStream(Protocol):
    def subscribe(self, last_event_id: int | None = None) -> StreamSubscription: ...
