"""What the use cases need of the outside world, and the exceptions the adapters raise for it.

The adapters (adapters/) satisfy these Protocols and turn their libraries' errors (Xlib, mss, Redis,
the vault's files) into the exceptions below; the use cases catch only these and
kronii.foundation.errors. The in-process tests drive the use cases with fakes of these ports and a clock
they move by hand. Every port takes and returns core types, never a wire message.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Protocol

from kronii.capture.core.desktop import SensorSnapshot
from kronii.capture.core.frames import Frame, Geometry
from kronii.capture.core.scoring import Scored
from kronii.capture.core.screenshots import (
    ForgetReport,
    ObjectKind,
    ObjectMeta,
    PurgeReport,
    ShelfItem,
    ShelfUsage,
)
from kronii.capture.core.status import JobRecord, StoredJob
from kronii.edge.peers import PeerIdentity

if TYPE_CHECKING:
    from kronii.edge.client_sessions import Challenge, Session
    from kronii.edge.presence import Presence
    from kronii.redaction.pixels import ImageRedaction
    from PIL.Image import Image

__all__ = [
    "BurstWork",
    "CaptureUnavailable",
    "ClientDirectory",
    "FrameSource",
    "JobRepository",
    "ObjectMissing",
    "ObjectStore",
    "PresenceCheck",
    "ScreenshotShelf",
    "SensorSnapshots",
    "SnapshotUnavailable",
    "StatusFeed",
    "TokenLedger",
    "WindowGone",
]


# ---- what the adapters raise -----------------------------------------------------------------------


class CaptureUnavailable(Exception):
    """The display cannot be read (not set, unreachable, or lost)."""


class WindowGone(Exception):
    """The window to capture no longer exists, is not mapped, or lies off screen."""


class ObjectMissing(Exception):
    """No live stored object of that id and kind: unknown, of another kind, expired or purged."""


class SnapshotUnavailable(Exception):
    """The sensor's snapshot could not be read (its store did not answer)."""


# ---- what the use cases need -----------------------------------------------------------------------


class StatusFeed(Protocol):
    """Where every status change of a job is announced (adapters.status_bus.StatusPublisher: NATS)."""

    async def publish(self, job: JobRecord) -> None: ...


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
    """The display (adapters.frames.FrameGrabber on X11, adapters.wayland_frames.WaylandFrames on a
    wlroots compositor, which takes the focused window whatever `window_id` says, adapters.gnome_frames.
    GnomeFrames on GNOME, which records the window `window_id` names and needs no region). Blocking:
    called in a thread. Raises CaptureUnavailable or WindowGone."""

    @property
    def display(self) -> str: ...
    def check(self) -> None: ...
    def geometry(self, window_id: int) -> Geometry: ...
    def burst(self, region: Geometry, count: int, interval_ms: int, window_id: int = 0) -> list[Frame]: ...


class BurstWork(Protocol):
    """Scoring, redaction and PNG encoding of a burst (adapters.burst_work.BurstWorker). Blocking:
    called in a thread."""

    def score(self, frames: Sequence[Frame], *, wm_class: str, title: str) -> Scored: ...
    def redact(self, frame: Frame, *, app: str) -> ImageRedaction: ...
    def raw_png(self, frame: Frame) -> bytes: ...
    def redacted_png(self, image: Image) -> bytes: ...


class SensorSnapshots(Protocol):
    """The sensor's latest snapshot (adapters.sensor_snapshot.SnapshotReader): idle time, lock, and
    the focus, which heals a missed focus event. None when there is none yet; SnapshotUnavailable
    when its store does not answer."""

    async def read(self) -> SensorSnapshot | None: ...


class ObjectStore(Protocol):
    """The sealed screenshots (adapters.vault.ObjectVault). A missing object is ObjectMissing."""

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
    """Registered agents and their sessions (kronii.edge.client_sessions.ClientSessions, adapters.callers.client_sessions)."""

    async def begin(self, client_id: str) -> Challenge: ...
    async def authenticate(self, challenge_id: str, client_id: str, signature: bytes) -> Session: ...
    async def resolve(self, token: str) -> Session | None: ...


class PresenceCheck(Protocol):
    """A person's proof of presence for a local reader (kronii.edge.presence.PresenceGate, adapters.callers.presence_gate)."""

    async def window(self, peer: PeerIdentity, metadata: Mapping[str, str]) -> Presence: ...


class ScreenshotShelf(Protocol):
    """The person's view of the vault (adapters.vault_shelf.VaultShelf): a range's redacted
    screenshots, a redacted thumbnail, usage, and a delete of files and rows. An unknown id is
    ObjectMissing."""

    async def between(self, since: datetime, until: datetime, limit: int) -> list[ShelfItem]: ...
    async def thumbnail(self, screenshot_id: str, max_side: int) -> bytes: ...
    async def usage(self) -> ShelfUsage: ...
    async def forget_one(self, screenshot_id: str) -> ForgetReport: ...
    async def forget_between(self, since: datetime, until: datetime) -> ForgetReport: ...
    async def forget_all(self) -> ForgetReport: ...
