"""Retention (seed 003, "Retention"): which day files to archive and which PostgreSQL rows to prune
for RetentionDays. Pure: the day and the time are passed in.

A day's files are archived once the whole day is older than RetentionDays: with 30, on 2025-03-31
the files of 2025-02-28 and before go to archive/, those of 2025-03-01 stay. Rows go by their own
timestamp: older than now minus RetentionDays days.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import date, timedelta

__all__ = [
    "DEFAULT_RETENTION_DAYS",
    "RetentionPlan",
    "day_of_file_name",
    "day_stamp",
    "plan_retention",
    "prune_before_ms",
]

DEFAULT_RETENTION_DAYS = 30
DAY_MS = 86_400_000
# critic-YYYYMMDD.tsv, events-YYYYMMDD.jsonl, diagnostics-YYYYMMDD.log, clusters-YYYYMMDD.json
_DAY_FILE = re.compile(r"^(critic|events|diagnostics|clusters)-(\d{8})\.(tsv|jsonl|log|json)$")


@dataclass(frozen=True)
class RetentionPlan:
    archive_days: tuple[date, ...]  # oldest first
    prune_before_ms: int


def day_stamp(day: date) -> str:
    return day.strftime("%Y%m%d")


def day_of_file_name(name: str) -> date | None:
    """The day a daily file is for, or None for any other name."""
    match = _DAY_FILE.match(name)
    if match is None:
        return None
    stamp = match.group(2)
    try:
        return date(int(stamp[:4]), int(stamp[4:6]), int(stamp[6:]))
    except ValueError:
        return None


def _checked(retention_days: int) -> int:
    if retention_days < 1:
        raise ValueError("RetentionDays is at least 1")
    return retention_days


def prune_before_ms(now_ms: int, retention_days: int) -> int:
    return now_ms - _checked(retention_days) * DAY_MS


def plan_retention(file_days: Iterable[date], today: date, now_ms: int, retention_days: int) -> RetentionPlan:
    oldest_kept = today - timedelta(days=_checked(retention_days))
    archive = sorted({day for day in file_days if day < oldest_kept})
    return RetentionPlan(tuple(archive), prune_before_ms(now_ms, retention_days))
