"""The tiered memory's nightly upkeep (ports.MemoryUpkeep): yesterday's failures grouped into
clusters of near-duplicates (clusters-YYYYMMDD.json; searches merge by them), then retention: day
files past the window archived, PostgreSQL's rows before it pruned."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from datetime import date, timedelta
from typing import Any

from kronii.critic.adapters.daily_files import DailyFiles
from kronii.critic.core.clusters import ClusterGroup, greedy_clusters, groups_of
from kronii.critic.core.memory import MemoryOptions, RetentionDone
from kronii.critic.core.retention import day_stamp, plan_retention
from kronii.critic.ports import LongTier

__all__ = ["MemoryUpkeeper"]

log = logging.getLogger(__name__)


class MemoryUpkeeper:
    """Owns the clusters searches merge by (``cluster_of``: record id -> cluster id) and counts the
    times PostgreSQL did not answer a prune (the tiered memory adds them to its own count)."""

    def __init__(
        self, files: DailyFiles, long_tier: LongTier | None, options: MemoryOptions, clock: Callable[[], int]
    ) -> None:
        self._files = files
        self._long = long_tier
        self._options = options
        self._clock = clock
        self.cluster_of: dict[str, str] = {}
        self.database_failures = 0

    async def run_nightly(self) -> tuple[list[list[str]], RetentionDone]:
        """What the service schedules once a night: cluster yesterday's failures, then retention."""
        now_ms = self._clock()
        groups = self.cluster_day(self._files.day_of(now_ms) - timedelta(days=1))
        return groups, await self.run_retention(now_ms)

    def cluster_day(self, day: date) -> list[list[str]]:
        """Group the day's failing records that are near-duplicates (cosine above the threshold),
        write clusters-YYYYMMDD.json, and merge by these groups from now on."""
        failures = sorted(
            (record for record in self._files.read_day(day) if record.failed and record.embedding),
            key=lambda record: record.timestamp_ms,
        )
        by_id = {record.record_id: record for record in failures}
        groups = greedy_clusters(
            [(r.record_id, r.embedding) for r in failures], self._options.cluster_threshold
        )
        content = {
            "day": day.isoformat(),
            "threshold": self._options.cluster_threshold,
            "groups": [
                {
                    "cluster_id": f"{day_stamp(day)}-{number}",
                    "record_ids": group,
                    "command_line": by_id[group[0]].command_line,
                    "error_message": by_id[group[0]].error_message,
                }
                for number, group in enumerate(groups, 1)
            ],
        }
        self._files.write_clusters(day, content)
        self._remember_clusters(content)
        return groups

    def load_clusters(self, today: date) -> None:
        """Merge by the clusters of the retention window's day files."""
        for offset in range(self._options.retention_days + 1):
            content = self._files.read_clusters(today - timedelta(days=offset))
            if content is not None:
                self._remember_clusters(content)

    def recent_clusters(self) -> list[ClusterGroup]:
        """The kept clusters of the retention window's days, newest day first."""
        today = self._files.day_of(self._clock())
        found: list[ClusterGroup] = []
        for offset in range(self._options.retention_days + 1):
            content = self._files.read_clusters(today - timedelta(days=offset))
            if content is not None:
                found.extend(groups_of(content))
        return found

    def _remember_clusters(self, content: dict[str, Any]) -> None:
        for group in content.get("groups", []):
            for record_id in group.get("record_ids", []):
                self.cluster_of[str(record_id)] = str(group.get("cluster_id", ""))

    async def run_retention(self, now_ms: int) -> RetentionDone:
        plan = plan_retention(
            self._files.file_days(), self._files.day_of(now_ms), now_ms, self._options.retention_days
        )
        self._files.archive(plan.archive_days)
        pruned: int | None = None
        if self._long is not None:
            try:
                async with asyncio.timeout(self._options.db_timeout_secs * 6):
                    pruned = await self._long.prune(plan.prune_before_ms)
            except Exception as error:
                self.database_failures += 1
                log.warning("critic: rows not pruned, PostgreSQL away (%s)", type(error).__name__)
        return RetentionDone(plan.archive_days, pruned)
