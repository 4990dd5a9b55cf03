"""Retention of stored images (seed 000: raw originals N days, default 1; redacted M days,
default 7). 0 days means that kind is not kept at all: it is never stored."""

from __future__ import annotations

from typing import Literal

DAY_MS = 86_400_000
DEFAULT_RAW_DAYS = 1
DEFAULT_REDACTED_DAYS = 7
MAX_RETENTION_DAYS = 3_650

ObjectKind = Literal["raw", "redacted"]


def _check_days(name: str, days: int) -> None:
    if not 0 <= days <= MAX_RETENTION_DAYS:
        raise ValueError(f"{name} must be between 0 and {MAX_RETENTION_DAYS}, got {days}.")


def keep_raw(raw_days: int) -> bool:
    """Whether raw originals are stored at all (raw_days 0 keeps none)."""
    _check_days("raw_days", raw_days)
    return raw_days > 0


def keep_redacted(redacted_days: int) -> bool:
    _check_days("redacted_days", redacted_days)
    return redacted_days > 0


def expires_at_ms(kind: ObjectKind, created_ms: int, *, raw_days: int, redacted_days: int) -> int | None:
    """When an object of `kind` created at `created_ms` must be purged.

    None means the kind is not kept (its days are 0): do not store it. It never means "forever".
    """
    _check_days("raw_days", raw_days)
    _check_days("redacted_days", redacted_days)
    if kind == "raw":
        days = raw_days
    elif kind == "redacted":
        days = redacted_days
    else:
        raise ValueError(f"kind must be 'raw' or 'redacted', got {kind!r}.")
    if days == 0:
        return None
    return created_ms + days * DAY_MS


def is_expired(expires_at: int, now_ms: int) -> bool:
    return now_ms >= expires_at
