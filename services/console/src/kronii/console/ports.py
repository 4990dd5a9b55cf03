"""What the console's use cases need of the outside: where login links and sessions are kept, the
sensor's activity history, and the exceptions their adapters raise."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from kronii.console.core.agents import Runtime, Trigger, TriggerAsk
from kronii.console.core.captures import Forgotten, Frame, FrameUsage
from kronii.console.core.control import DesktopState, PlanView
from kronii.console.core.decisions import Control, Decision
from kronii.console.core.privacy import AuditEntry, ChainCheck, TableSize
from kronii.console.core.session import LoginLink, Session
from kronii.console.core.shell import Cluster, ShellHit
from kronii.console.core.timeline import Span, SummaryRow
from kronii.foundation.errors import Unavailable

__all__ = ["ActivityHistory", "ActivitySummary", "ServiceNotAnswering", "SessionStore", "SpanPage"]


class SessionStore(Protocol):
    """Login links and sessions, keyed by a digest of their token (the store never holds a token that
    would open anything). Links and sessions are forgotten by the store after their lives."""

    async def keep_link(self, link: LoginLink, *, forget_after_secs: float) -> None: ...

    async def claim_link(self, token: str, now: float) -> LoginLink | None:
        """The link as it was before this call (None when unknown), marked used from now on. Two
        claims of one link at once: only one sees it unused."""
        ...

    async def keep_session(self, session: Session) -> None: ...

    async def session(self, session_id: str) -> Session | None: ...

    async def end_session(self, session_id: str) -> None: ...


@dataclass(frozen=True)
class SpanPage:
    spans: list[Span]
    next_cursor: str | None


@dataclass(frozen=True)
class ActivitySummary:
    by: str
    total_seconds: float
    rows: list[SummaryRow]


class ActivityHistory(Protocol):
    """The sensor's history of spans (GET /v1/activity/spans and /summary); times are Unix seconds."""

    async def spans(self, since: float, until: float, *, kind: str, cursor: str | None) -> SpanPage: ...

    async def summary(self, since: float, until: float, *, by: str) -> ActivitySummary: ...


class ServiceNotAnswering(Unavailable):
    """Another service did not answer, or refused. `status` is its HTTP status (None: no answer); a page
    shows the message as it is: "<service> is not answering: <reason>" or "<service> refused: <reason>"."""

    def __init__(self, service: str, reason: str, *, status: int | None = None) -> None:
        verb = "refused" if status is not None and status < 500 else "is not answering"
        super().__init__(f"{service} {verb}: {reason}")
        self.service = service
        self.status = status
        self.reason = reason


# ---- the Agents and Control pages (helper C) -------------------------------------------------------


class SupervisorAgents(Protocol):
    """The supervisor's registry and trigger API (adapters/supervisor_api.py): refusals and silence
    raise kronii.foundation.errors (a sentence the page shows)."""

    async def runtimes(self) -> list[Runtime]: ...

    async def triggers(self, *, result: str = "", limit: int = 50) -> list[Trigger]: ...

    async def pane(self, runtime_id: str, lines: int) -> list[str]:
        """The pane's last lines, redacted by the supervisor before they leave it."""
        ...

    async def trigger(self, ask: TriggerAsk) -> Trigger: ...

    async def set_paused(self, runtime_id: str, paused: bool, reason: str) -> Runtime: ...

    async def force(self, trigger_id: str, reason: str) -> Trigger: ...


class InputBroker(Protocol):
    """The input broker's control state and the person's intents (adapters/broker_api.py)."""

    async def state(self) -> DesktopState: ...

    async def intent(self, intent: str) -> DesktopState:
        """WAIT, SAFE_INTERRUPT or STOP_NOW, as `kronii control` asks it."""
        ...


class VisionPlans(Protocol):
    """The vision engine's plans, approvals and denials (adapters/vision_api.py)."""

    async def plans(self) -> list[PlanView]: ...

    async def plan(self, plan_id: str) -> PlanView: ...

    async def approve(self, plan_id: str) -> PlanView: ...

    async def deny(self, plan_id: str) -> PlanView: ...


# ---- the Captures, Decisions, Shell and Privacy pages (helper D) ------------------------------------


class CaptureFrames(Protocol):
    """The capture service's stored REDACTED frames (adapters/capture_api.py): its person's routes for
    the listing, thumbnails, usage and deletes; a full frame through its Unix socket, which asks for
    the person's proof of presence as `kronii capture get` does (PermissionDenied with capture's
    sentence when there is none). Times are Unix seconds."""

    async def frames(self, since: float, until: float) -> list[Frame]: ...

    async def thumbnail(self, screenshot_id: str) -> bytes: ...

    async def open_frame(self, screenshot_id: str) -> bytes: ...

    async def usage(self) -> FrameUsage: ...

    async def forget_one(self, screenshot_id: str) -> Forgotten: ...

    async def forget_between(self, since: float, until: float) -> Forgotten: ...

    async def forget_all(self) -> Forgotten: ...


class PipelineDecisions(Protocol):
    """The pipeline's runs and the snoozes and mutes on its notifications' sources
    (adapters/pipeline_api.py)."""

    async def runs(self, limit: int, before: float | None) -> tuple[list[Decision], float | None]: ...

    async def controls(self) -> list[Control]: ...

    async def snooze(self, notification_id: str, seconds: int) -> Control: ...

    async def mute(self, notification_id: str) -> Control: ...

    async def clear(self, source_key: str) -> None: ...


class DecisionEraser(Protocol):
    """The pipeline's delete of its runs and the notifications sent then (adapters/pipeline_api.py):
    (runs deleted, notifications deleted)."""

    async def forget_between(self, since: float, until: float) -> tuple[int, int]: ...

    async def forget_all(self) -> tuple[int, int]: ...


class CriticRecords(Protocol):
    """The critic's kept shell records (adapters/critic_api.py): its own search (by meaning when its
    model is there, else keywords), the failures similar to one, and the nightly clusters."""

    async def search(self, text: str, take: int, failed_only: bool) -> list[ShellHit]: ...

    async def similar(self, record_id: str, k: int) -> list[ShellHit]: ...

    async def clusters(self) -> list[Cluster]: ...


class AuditChain(Protocol):
    """The audit log (adapters/audit_log.py): its last rows and the walk that verifies the chain, from
    where the last walk stopped, or from the first row when `whole`."""

    async def tail(self, limit: int) -> list[AuditEntry]: ...

    async def verify(self, whole: bool = False) -> ChainCheck: ...


class StoreSizes(Protocol):
    """Rows and bytes of PostgreSQL tables (adapters/audit_log.py); a table that does not exist is
    left out."""

    async def sizes(self, tables: Sequence[str]) -> list[TableSize]: ...


class ActivityEraser(Protocol):
    """The sensor's delete of its activity history (adapters/sensor_history_api.py):
    (spans deleted, raw events deleted)."""

    async def delete_between(self, since: float, until: float) -> tuple[int, int]: ...

    async def delete_app(self, app: str) -> tuple[int, int]: ...

    async def delete_all(self) -> tuple[int, int]: ...
