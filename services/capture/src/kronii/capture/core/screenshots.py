"""What a stored screenshot is, as the API layers and the use cases see it (no bytes, no path), and
what a retention purge removed; the person's view of the stored screenshots (listing, usage) and
what their delete removed."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Literal

__all__ = ["KINDS", "ForgetReport", "ObjectKind", "ObjectMeta", "PurgeReport", "ShelfItem", "ShelfUsage"]

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


@dataclass(frozen=True)
class ShelfItem:
    """One stored redacted screenshot as the person's listing shows it."""

    screenshot_id: str
    job_id: str
    app_name: str
    width: int
    height: int
    redaction_level: str
    masked_fraction: float
    size_bytes: int
    created_at: datetime


@dataclass(frozen=True)
class ShelfUsage:
    """What the vault holds now (live objects and their sealed bytes), and the oldest one's time."""

    redacted_objects: int
    redacted_bytes: int
    raw_objects: int
    raw_bytes: int
    oldest: datetime | None


@dataclass(frozen=True)
class ForgetReport:
    """What a person's delete removed: rows and files (object ids only). ``files_kept`` could not be
    removed from disk and keep their rows, for the next delete."""

    objects_deleted: int
    files_removed: int
    files_missing: int
    files_kept: int
    object_ids: tuple[str, ...]
