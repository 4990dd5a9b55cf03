"""What a stored screenshot is, as the API layers and the use cases see it (no bytes, no path), and
what a retention purge removed."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Literal

__all__ = ["KINDS", "ObjectKind", "ObjectMeta", "PurgeReport"]

ObjectKind = Literal["raw", "redacted"]
KINDS: tuple[ObjectKind, ...] = ("raw", "redacted")


@dataclass(frozen=True)
class ObjectMeta:
    object_id: str
    job_id: str
    kind: ObjectKind
    app_name: str
    width: int
    height: int
    score: float
    redaction_level: str
    masked_fraction: float
    key_version: int
    size_bytes: int
    created_at: datetime
    expires_at: datetime | None


@dataclass(frozen=True)
class PurgeReport:
    """What one retention purge removed (object ids only, never a path)."""

    raw_purged: int
    redacted_purged: int
    files_missing: int
    object_ids: tuple[str, ...]

    @property
    def purged(self) -> int:
        return self.raw_purged + self.redacted_purged
