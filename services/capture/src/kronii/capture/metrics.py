"""The capture service's Prometheus metrics. Labels carry statuses, operations and outcomes only:
never a path, a title or an id."""

from __future__ import annotations

from kronii.capture.core.status import TERMINAL
from kronii.foundation import errors
from kronii.foundation.telemetry import CommonMetrics
from kronii.runtime.service import ServiceContext
from kronii.stores import subjects
from kronii.stores.metrics_zero import zero_common_series as start_at_zero
from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram

__all__ = [
    "ACCESS_OPERATIONS",
    "ACCESS_RESULTS",
    "AUDIT_ACTIONS",
    "PUBLISHES",
    "RECEIVES",
    "STAGES",
    "CaptureMetrics",
    "zero_common_series",
]

_STAGE_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)
# The worker's stages, in the order a job passes them.
STAGES = ("burst", "scoring", "redaction", "sealing")
# The `operation` the HTTP and gRPC edges hand the access guard, and what a call can end as: ok or
# the code of one of the shared errors. Each operation also writes the audit action capture.<operation>.
ACCESS_OPERATIONS = (
    "authenticate",
    "cancel",
    "challenge",
    "get_raw_encrypted",
    "get_screenshot",
    "issue_token",
    "list",
    "request",
    "result",
    "watch",
)
# Every error code kronii.foundation.errors declares (its classes; the module also exports functions).
_ERROR_KINDS = [getattr(errors, name) for name in errors.__all__]
ACCESS_RESULTS = (
    "ok",
    *sorted(
        {
            kind.code
            for kind in _ERROR_KINDS
            if isinstance(kind, type) and issubclass(kind, errors.KroniiError)
        }
    ),
)
PUBLISHES = (subjects.CAPTURE_STATUS,)
RECEIVES = (subjects.FOCUS_CHANGED, subjects.LOCK_CHANGED)
AUDIT_ACTIONS = (
    "capture.job",
    "capture.delete",
    "capture.purge",
    "capture.presence",
    "capture.connect",
    "capture.keys.rotate",
    *(f"capture.{operation}" for operation in ACCESS_OPERATIONS),
)


def zero_common_series(common: CommonMetrics) -> None:
    """The mesh-wide NATS and audit counters capture feeds, at 0 before its first job or call."""
    start_at_zero(common, publishes=PUBLISHES, receives=RECEIVES, audit_actions=AUDIT_ACTIONS)


class CaptureMetrics:
    def __init__(self, ctx: ServiceContext) -> None:
        self._count_jobs(ctx.registry)
        self._count_access_and_retention(ctx.registry)
        self._start_at_zero()

    def _count_jobs(self, registry: CollectorRegistry) -> None:
        """A job's way through the service: asked for, queued, each worker stage, its end."""
        self.jobs = Counter(
            "kronii_capture_jobs", "Capture jobs by final status", ["status"], registry=registry
        )
        self.requests = Counter(
            "kronii_capture_requests",
            "Capture requests by outcome (queued, merged, refused)",
            ["outcome"],
            registry=registry,
        )
        self.queue_depth = Gauge(
            "kronii_capture_jobs_active", "Jobs queued or waiting for their window", registry=registry
        )
        self.stage_seconds = Histogram(
            "kronii_capture_stage_seconds",
            "Time per worker stage (burst, scoring, redaction, sealing)",
            ["stage"],
            buckets=_STAGE_BUCKETS,
            registry=registry,
        )
        self.request_to_persisted = Histogram(
            "kronii_capture_request_to_persisted_seconds",
            "From the request to the persisted status",
            buckets=(0.5, 1.0, 1.5, 2.0, 3.0, 5.0, 10.0, 30.0, 60.0),
            registry=registry,
        )

    def _count_access_and_retention(self, registry: CollectorRegistry) -> None:
        """The calls and their results, frames that needed OCR, refused sockets, the breaker and retention."""
        self.access = Counter(
            "kronii_capture_access",
            "API calls by operation and result",
            ["operation", "result"],
            registry=registry,
        )
        self.ocr_frames = Counter(
            "kronii_capture_ocr_frames", "Frames whose text density needed OCR", registry=registry
        )
        self.purged = Counter(
            "kronii_capture_purged_objects", "Objects purged by retention", ["kind"], registry=registry
        )
        self.socket_refused = Counter(
            "kronii_capture_socket_refused",
            "Unix-socket connections refused by the peer check, by reason",
            ["reason"],
            registry=registry,
        )
        self.breaker_opened = Counter(
            "kronii_capture_breaker_opened",
            "Times a client's circuit breaker opened after repeated failures",
            registry=registry,
        )
        self.purge_runs = Counter(
            "kronii_capture_purge_runs",
            "Retention purge runs by outcome (ok, failed)",
            ["outcome"],
            registry=registry,
        )
        self.last_purge = Gauge(
            "kronii_capture_last_purge_timestamp_seconds",
            "When the retention purge last completed (Unix time)",
            registry=registry,
        )

    def _start_at_zero(self) -> None:
        """Every known label value starts at 0, so a panel or a rate shows 0 rather than no data."""
        for stage in STAGES:
            self.stage_seconds.labels(stage)
        for operation in ACCESS_OPERATIONS:
            for result in ACCESS_RESULTS:
                self.access.labels(operation, result)
        for status in sorted(TERMINAL):
            self.jobs.labels(status.value)
        for outcome in ("queued", "merged", "refused"):
            self.requests.labels(outcome)
        for kind in ("raw", "redacted"):
            self.purged.labels(kind)
        for reason in ("uid_not_allowed", "executable_unknown", "executable_not_allowed"):
            self.socket_refused.labels(reason)
        for outcome in ("ok", "failed"):
            self.purge_runs.labels(outcome)
