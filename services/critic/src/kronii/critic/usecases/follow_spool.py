"""The shells' commands as their hooks wrote them to the spool: each one is taken (RecordCommand),
its shell's hook counted as seen, and the spool's malformed lines counted; one command that cannot
be taken does not stop the next ones. A `kronii run -- CMD` line is not taken: the run reported the
command itself, with its error text (taken twice, it would count as the same failure twice)."""

from __future__ import annotations

import logging

from kronii.critic.core.command_line import reports_itself
from kronii.critic.core.doctor import HookTally
from kronii.critic.metrics import CriticMetrics
from kronii.critic.ports import ShellSpool
from kronii.critic.usecases.record_command import RecordCommand
from kronii.foundation.clock import Clock

__all__ = ["FollowSpool"]

log = logging.getLogger(__name__)


class FollowSpool:
    def __init__(
        self, spool: ShellSpool, record: RecordCommand, hooks: HookTally, metrics: CriticMetrics, clock: Clock
    ) -> None:
        self._spool = spool
        self._record = record
        self._hooks = hooks
        self._metrics = metrics
        self._clock = clock

    async def run(self) -> None:
        """Until cancelled (the service's stop)."""
        malformed = 0
        async for event in self._spool.events():
            self._hooks.seen(event.shell, self._clock.wall_ms())
            try:
                if not reports_itself(event.command_line):
                    await self._record.report(event)
            except Exception:  # one bad event must not stop the shells' hints
                log.exception("critic: a command from %s could not be taken", event.shell)
            if self._spool.malformed > malformed:
                self._metrics.spool_malformed.inc(self._spool.malformed - malformed)
                malformed = self._spool.malformed
