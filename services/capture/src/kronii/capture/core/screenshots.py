"""What a stored screenshot is, as the API layers and the orchestration see it (no bytes, no path)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Literal

__all__ = ["KINDS", "ObjectKind", "ObjectMeta"]

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
