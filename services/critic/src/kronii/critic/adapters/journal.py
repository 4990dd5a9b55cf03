"""The day files as the journal that loses nothing it took: a record the files refuse (a full disk,
a quota) waits here, in the order it came, and is written at the next append or retry once there
is room again; records of the same id keep only their newest version. Until then the pending
records still count: ``pending()`` hands them to export and to the doctor. Only beyond
PENDING_LIMIT records (days of a full disk) is the oldest dropped, and counted in ``lost``."""

from __future__ import annotations

import logging
from collections import OrderedDict

from kronii.critic.adapters.daily_files import DailyFiles
from kronii.critic.core.model import InvocationRecord

__all__ = ["PENDING_LIMIT", "Journal"]

log = logging.getLogger(__name__)

PENDING_LIMIT = 10_000


class Journal:
    def __init__(self, files: DailyFiles, limit: int = PENDING_LIMIT) -> None:
        self._files = files
        self._limit = limit
        self._pending: OrderedDict[str, InvocationRecord] = OrderedDict()
        self.failures = 0  # appends the file system refused
        self.lost = 0
        self.rewritten = 0  # records written late, once there was room

    def append(self, record: InvocationRecord) -> bool:
        """Write ``record`` after any that wait; True when it is in its day file now. Never raises
        for a refusal of the file system: the record waits."""
        if self._pending:
            self.flush()
        if not self._pending:
            try:
                self._files.append_record(record)
                return True
            except OSError as error:
                self.failures += 1
                log.warning("critic: the day file could not take a record (%s); it waits", error.strerror)
        self._wait(record)
        return False

    def flush(self) -> bool:
        """Write what waits, oldest first, until the files refuse one; True when nothing waits."""
        while self._pending:
            record_id, record = next(iter(self._pending.items()))
            try:
                self._files.append_record(record)
            except OSError as error:
                self.failures += 1
                log.debug("critic: the day file still refuses (%s)", error.strerror)
                return False
            del self._pending[record_id]
            self.rewritten += 1
            if not self._pending:
                log.info("critic: the day files took the records that waited (%d so far)", self.rewritten)
        return True

    def pending(self) -> list[InvocationRecord]:
        """The records not in the day files yet, in the order they came."""
        return list(self._pending.values())

    def _wait(self, record: InvocationRecord) -> None:
        self._pending.pop(record.record_id, None)
        self._pending[record.record_id] = record
        while len(self._pending) > self._limit:
            self._pending.popitem(last=False)
            self.lost += 1
