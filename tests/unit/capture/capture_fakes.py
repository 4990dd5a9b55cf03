"""In-memory stand-ins for the capture service's ports (kronii.capture.ports) and a clock the test moves.

Each fake keeps what it was given so a test can assert on it; none reaches Redis, PostgreSQL, NATS,
X or Tesseract."""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from types import SimpleNamespace
from typing import Any, cast

import numpy as np
from google.protobuf.message import Message
from kronii.capture.core.bypass import WindowFacts
from kronii.capture.core.capabilities import Capability, names
from kronii.capture.core.desktop import SensorSnapshot
from kronii.capture.core.frames import Frame, Geometry
from kronii.capture.core.scoring import FrameScore, Scored
from kronii.capture.core.screenshots import ObjectKind, ObjectMeta, PurgeReport
from kronii.capture.core.status import StoredJob
from kronii.capture.metrics import CaptureMetrics
from kronii.capture.ports import ObjectMissing
from kronii.capture.settings import CaptureSettings
from kronii.capture.usecases.follow_desktop import DesktopView
from kronii.edge.client_sessions import AuthError, Challenge, Session
from kronii.edge.peers import PeerIdentity
from kronii.edge.presence import Presence, PresenceRefused
from kronii.redaction import Level
from kronii.redaction.pixels import ImageRedaction
from kronii.runtime.service import ServiceContext
from kronii.stores.subjects import Topic
from PIL import Image
from prometheus_client import CollectorRegistry

START_MS = 1_700_000_000_000
START = datetime.fromtimestamp(START_MS / 1000, UTC)
TARGET = WindowFacts(
    pid=4242,
    app_name="editor",
    app_start_time_ms=0,
    window_id=77,
    wm_class="Editor",
    title="notes",
    focus_seq=0,
)


class Clock:
    """kronii.foundation.clock.Clock moved by hand in whole milliseconds (both scales move together)."""

    def __init__(self, now_ms: int = START_MS) -> None:
        self.now_ms = now_ms

    def wall(self) -> float:
        return self.now_ms / 1000

    def monotonic(self) -> float:
        return self.now_ms / 1000

    def wall_ms(self) -> int:
        return self.now_ms

    def monotonic_ms(self) -> int:
        return self.now_ms

    def advance(self, ms: int) -> None:
        self.now_ms += ms


def metrics() -> CaptureMetrics:
    return CaptureMetrics(cast(ServiceContext, SimpleNamespace(registry=CollectorRegistry())))


def settings(**changes: Any) -> CaptureSettings:
    return CaptureSettings(display=None, vault_url=None, vault_token=None, **changes)


def sample(counter: Any, *labels: str) -> float:
    """The current value of a labelled Prometheus counter or gauge."""
    child = counter.labels(*labels) if labels else counter
    return float(child._value.get())


@dataclass
class Audit:
    rows: list[dict[str, Any]] = field(default_factory=list)

    async def __call__(
        self, *, actor: str, action: str, subject: str = "", outcome: str = "", **detail: Any
    ) -> None:
        self.rows.append({"actor": actor, "action": action, "subject": subject, "outcome": outcome, **detail})


@dataclass
class Bus:
    published: list[tuple[str, Message]] = field(default_factory=list)

    async def publish(self, topic: Topic[Any], message: Any, *tokens: str) -> None:
        self.published.append((topic.subject(*tokens), message))


class JobStore:
    """The job store's contract: merge window by key, a queue, saved records."""

    def __init__(self) -> None:
        self.saved: dict[str, StoredJob] = {}
        self.queue: list[str] = []
        self.merges: dict[str, str] = {}

    async def claim_merge(self, merge_key: str, job_id: str, window_ms: int) -> str | None:
        if window_ms <= 0:
            return None
        holder = self.merges.get(merge_key)
        if holder is not None:
            return holder
        self.merges[merge_key] = job_id
        return None

    async def release_merge(self, merge_key: str, job_id: str) -> None:
        if self.merges.get(merge_key) == job_id:
            del self.merges[merge_key]

    async def save(self, job: StoredJob) -> None:
        self.saved[job.record.job_id] = job

    async def enqueue(self, job: StoredJob) -> None:
        await self.save(job)
        self.queue.append(job.record.job_id)

    async def pop_queued(self, limit: int = 32) -> list[str]:
        popped, self.queue = self.queue[:limit], self.queue[limit:]
        return popped

    async def load(self, job_id: str) -> StoredJob | None:
        return self.saved.get(job_id)

    async def active_ids(self) -> list[str]:
        return sorted(job_id for job_id, job in self.saved.items() if not job.record.terminal)


class Frames:
    """A display whose windows all have one geometry; a burst is `count` flat grey frames."""

    display = ":99"

    def __init__(self) -> None:
        self.bursts: list[tuple[Geometry, int, int]] = []

    def check(self) -> None:
        return None

    def geometry(self, window_id: int) -> Geometry:
        return (0, 0, 8, 6)

    def burst(self, region: Geometry, count: int, interval_ms: int, window_id: int = 0) -> list[Frame]:
        self.bursts.append((region, count, interval_ms))
        return [
            Frame(np.full((6, 8, 3), 40 * index, dtype=np.uint8), START_MS + index) for index in range(count)
        ]


def _score(index: int, total: float) -> FrameScore:
    return FrameScore(index, 0.5, 0.0, 0.1, 0.0, 0.0, 0.0, total)


class Work:
    """Scores the last frame best; redacts to a 4x3 image at `level` (None: refuses the frame)."""

    def __init__(self, level: Level | None = Level.GREEN) -> None:
        self.level = level
        self.redacted: list[Frame] = []

    def score(self, frames: Sequence[Frame], *, wm_class: str, title: str) -> Scored:
        ranked = [_score(index, 0.9 - 0.1 * (len(frames) - 1 - index)) for index in range(len(frames))]
        return Scored(sorted(ranked, key=lambda score: -score.total), ocr_calls=len(frames))

    def redact(self, frame: Frame, *, app: str) -> ImageRedaction:
        self.redacted.append(frame)
        if self.level is None:
            return ImageRedaction(None, Level.RED, "a password field", masked_share=0.6)
        return ImageRedaction(Image.new("RGB", (4, 3)), self.level, "", masked_share=0.25)

    def raw_png(self, frame: Frame) -> bytes:
        return b"raw-png:" + bytes([int(frame.rgb[0, 0, 0])])

    def redacted_png(self, image: Image.Image) -> bytes:
        return b"redacted-png"


@dataclass
class _Stored:
    meta: ObjectMeta
    png: bytes


class Vault:
    """Objects by id, with their kind; purge takes every object whose expiry has passed."""

    def __init__(self) -> None:
        self.objects: dict[str, _Stored] = {}
        self._ids = itertools.count(1)

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
    ) -> str:
        object_id = f"object-{next(self._ids):04d}-{kind}"
        meta = ObjectMeta(
            object_id, job_id, kind, "editor", width, height, score, redaction_level, masked_fraction, 1,
            len(png), START, expires_at,
        )  # fmt: skip
        self.objects[object_id] = _Stored(meta, png)
        return object_id

    def _live(self, object_id: str, kind: ObjectKind | None) -> _Stored:
        stored = self.objects.get(object_id)
        if stored is None or (kind is not None and stored.meta.kind != kind):
            raise ObjectMissing("no such screenshot (unknown, expired or purged)")
        return stored

    async def open_plain(self, object_id: str, kind: ObjectKind) -> bytes:
        return self._live(object_id, kind).png

    async def sealed_bytes(self, object_id: str, *, kind: ObjectKind | None = None) -> tuple[bytes, int]:
        return b"sealed:" + self._live(object_id, kind).png, 3

    async def meta(self, object_id: str) -> ObjectMeta:
        return self._live(object_id, None).meta

    async def list_meta(self, limit: int = 50, *, kind: ObjectKind | None = None) -> list[ObjectMeta]:
        found = [item.meta for item in self.objects.values() if kind is None or item.meta.kind == kind]
        return found[:limit]

    async def purge_expired(self, now: datetime | None = None) -> PurgeReport:
        moment = now or START + timedelta(days=30)
        due = [
            object_id
            for object_id, item in self.objects.items()
            if item.meta.expires_at is not None and item.meta.expires_at <= moment
        ]
        kinds = [self.objects.pop(object_id).meta.kind for object_id in due]
        return PurgeReport(kinds.count("raw"), kinds.count("redacted"), 0, tuple(due))


class Tokens:
    def __init__(self) -> None:
        self._grants: dict[str, str] = {}
        self._ids = itertools.count(1)

    async def issue(self, screenshot_id: str, identity: str) -> tuple[str, datetime]:
        token = f"token-{next(self._ids)}"
        self._grants[token] = screenshot_id
        return token, START + timedelta(seconds=60)

    async def redeem(self, screenshot_id: str, token: str) -> bool:
        return self._grants.pop(token, None) == screenshot_id


class Clients:
    """One registered agent, `agent-1`, whose signature is b"good"."""

    def __init__(self, capabilities: Capability) -> None:
        self.capabilities = capabilities
        self.sessions: dict[str, Session] = {}

    async def begin(self, client_id: str) -> Challenge:
        if " " in client_id:
            raise AuthError("bad_client_id", "the client id is malformed")
        return Challenge("challenge-1", b"nonce", START)

    async def authenticate(self, challenge_id: str, client_id: str, signature: bytes) -> Session:
        if client_id != "agent-1" or signature != b"good":
            raise AuthError("bad_signature", "the signature does not verify")
        session = Session("session-1", client_id, START, tuple(names(self.capabilities)))
        self.sessions[session.token] = session
        return session

    async def resolve(self, token: str) -> Session | None:
        return self.sessions.get(token)


class PresenceProof:
    """A person's proof: granted with `capabilities`, or refused with a sentence."""

    def __init__(self, capabilities: Capability | None) -> None:
        self.capabilities = capabilities
        self.asked: list[PeerIdentity] = []

    async def window(self, peer: PeerIdentity, metadata: Mapping[str, str]) -> Presence:
        self.asked.append(peer)
        if self.capabilities is None:
            raise PresenceRefused("no one confirmed being at the screen")
        return Presence(tuple(names(self.capabilities)), "tty")


class Snapshots:
    """The sensor's snapshot store: `snapshot` as it is (None: the sensor wrote none yet)."""

    def __init__(self, snapshot: SensorSnapshot | None = None) -> None:
        self.snapshot = snapshot
        self.refreshed = 0

    async def read(self) -> SensorSnapshot | None:
        self.refreshed += 1
        return self.snapshot


def focus(view: DesktopView, facts: WindowFacts = TARGET) -> None:
    """The sensor reports `facts` as the focused window (a new focus switch)."""
    view.focus_seq += 1
    view.current = WindowFacts(
        facts.pid, facts.app_name, facts.app_start_time_ms, facts.window_id, facts.wm_class, facts.title,
        view.focus_seq,
    )  # fmt: skip
    view.changed.set()
