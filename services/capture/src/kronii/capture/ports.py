"""What the orchestration needs of the outside world, and what the API layers need of the orchestration.

The adapters (adapters/, worker.py) satisfy the first group, the orchestration (desk.py, guard.py)
the second; the in-process tests drive the orchestration with fakes of the first and an injected clock.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any, Protocol

from kronii.capture.core.capabilities import Capability
from kronii.capture.core.identity import Identity
from kronii.capture.core.screenshots import ObjectKind, ObjectMeta
from kronii.capture.core.status import JobRecord, StoredJob
from kronii.common.errors import KroniiError
from kronii.common.peers import PeerIdentity

if TYPE_CHECKING:
    from kronii.capture.adapters.frames import Frame, Geometry
    from kronii.capture.adapters.vault import PurgeReport
    from kronii.capture.v1.capture_pb2 import CaptureStatus
    from kronii.capture.worker import Scored
    from kronii.common.client_sessions import Challenge, Session
    from kronii.common.presence import Presence
    from kronii.common.subjects import Topic
    from kronii.redaction.pixels import ImageRedaction
    from PIL.Image import Image

__all__ = [
    "BurstWork",
    "CallerAccess",
    "CaptureOperations",
    "ClientDirectory",
    "Clock",
    "FrameSource",
    "JobRepository",
    "ObjectStore",
    "PresenceCheck",
    "SnapshotSource",
    "StatusBus",
    "TokenLedger",
]

Clock = Callable[[], int]
"""Now, in epoch milliseconds."""


# ---- what the orchestration needs ----------------------------------------------------------------


class StatusBus(Protocol):
    """The NATS bus (kronii.common.bus.Bus), for the jobs' statuses."""

    async def publish(self, topic: Topic[CaptureStatus], message: CaptureStatus, *tokens: str) -> None: ...


class JobRepository(Protocol):
    """Where jobs live (adapters.jobs.JobStore): the queue, the records, the merge window."""

    async def claim_merge(self, merge_key: str, job_id: str, window_ms: int) -> str | None: ...
    async def release_merge(self, merge_key: str, job_id: str) -> None: ...
    async def save(self, job: StoredJob) -> None: ...
    async def enqueue(self, job: StoredJob) -> None: ...
    async def pop_queued(self, limit: int = 32) -> list[str]: ...
    async def load(self, job_id: str) -> StoredJob | None: ...
    async def active_ids(self) -> list[str]: ...


class FrameSource(Protocol):
    """The display (adapters.frames.FrameGrabber). Blocking: called in a thread."""

    @property
    def display(self) -> str: ...
    def check(self) -> None: ...
    def geometry(self, window_id: int) -> Geometry: ...
    def burst(self, region: Geometry, count: int, interval_ms: int) -> list[Frame]: ...


class BurstWork(Protocol):
    """Scoring, redaction and PNG encoding of a burst (worker.BurstWorker). Blocking: called in a thread."""

    def score(self, frames: Sequence[Frame], *, wm_class: str, title: str) -> Scored: ...
    def redact(self, frame: Frame, *, app: str) -> ImageRedaction: ...
    def raw_png(self, frame: Frame) -> bytes: ...
    def redacted_png(self, image: Image) -> bytes: ...


class SnapshotSource(Protocol):
    """The sensor's snapshot (adapters.matcher_feed.MatcherFeed): idle time, and a missed focus event."""

    async def refresh_snapshot(self) -> bool: ...


class ObjectStore(Protocol):
    """The sealed screenshots (adapters.vault.ObjectVault)."""

    async def put(
        self,
        *,
        job_id: str,
        kind: ObjectKind,
        png: bytes,
        width: int,
        height: int,
        score: float = 0.0,
        redaction_level: str = "",
        masked_fraction: float = 0.0,
        expires_at: datetime | None,
    ) -> str: ...
    async def open_plain(self, object_id: str, kind: ObjectKind) -> bytes: ...
    async def sealed_bytes(self, object_id: str, *, kind: ObjectKind | None = None) -> tuple[bytes, int]: ...
    async def meta(self, object_id: str) -> ObjectMeta: ...
    async def list_meta(self, limit: int = 50, *, kind: ObjectKind | None = None) -> list[ObjectMeta]: ...
    async def purge_expired(self, now: datetime | None = None) -> PurgeReport: ...


class TokenLedger(Protocol):
    """Single-use screenshot tokens (adapters.tokens.TokenBook)."""

    async def issue(self, screenshot_id: str, identity: str) -> tuple[str, datetime]: ...
    async def redeem(self, screenshot_id: str, token: str) -> bool: ...


class ClientDirectory(Protocol):
    """Registered agents and their sessions (kronii.common.client_sessions.ClientSessions, adapters.callers.client_sessions)."""

    async def begin(self, client_id: str) -> Challenge: ...
    async def authenticate(self, challenge_id: str, client_id: str, signature: bytes) -> Session: ...
    async def resolve(self, token: str) -> Session | None: ...


class PresenceCheck(Protocol):
    """A person's proof of presence for a local reader (kronii.common.presence.PresenceGate, adapters.callers.presence_gate)."""

    async def window(self, peer: PeerIdentity, metadata: Mapping[str, str]) -> Presence: ...


# ---- what the API layers need ----------------------------------------------------------------------


class CaptureOperations(Protocol):
    """The operations, called by api/ once ``access`` has admitted the caller (desk.CaptureDesk)."""

    @property
    def access(self) -> CallerAccess: ...
    async def request_capture(self, identity: Identity, fields: dict[str, Any]) -> tuple[str, bool]: ...
    async def job(self, job_id: str) -> JobRecord: ...
    async def cancel(self, job_id: str) -> JobRecord: ...
    def watch(self, job_id: str) -> AsyncIterator[tuple[int, JobRecord]]: ...
    async def issue_token(self, identity: Identity, screenshot_id: str) -> tuple[str, datetime]: ...
    async def screenshot(self, screenshot_id: str, token: str) -> tuple[bytes, ObjectMeta]: ...
    async def list_meta(self, limit: int) -> list[ObjectMeta]: ...
    async def raw_encrypted(self, screenshot_id: str) -> tuple[bytes, int]: ...


class CallerAccess(Protocol):
    """Who is calling, may they, the breaker and the audit row; agents' sign-in (guard.Guard)."""

    async def identify_or_count(self, peer: str, authorization: str | None) -> Identity: ...
    async def authorize(
        self, peer: str, identity: Identity, needed: Capability, metadata: Mapping[str, str]
    ) -> Identity: ...
    def admit(self, key: str) -> None: ...
    async def outcome(
        self,
        *,
        key: str,
        identity: Identity | None,
        operation: str,
        error: KroniiError | None,
        subject: str = "",
        **detail: Any,
    ) -> None: ...
    async def begin_challenge(self, client_id: str) -> Challenge: ...
    async def authenticate(self, challenge_id: str, client_id: str, signature: bytes) -> Session: ...
