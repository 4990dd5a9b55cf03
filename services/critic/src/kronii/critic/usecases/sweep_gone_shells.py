"""Now and every KRONII_CRITIC_GONE_SWEEP_SECS (30 s): the scratch files and hint FIFOs of shells that
ended without their exit hook (killed, or the person's own EXIT trap replaced the critic's) are
removed."""

from __future__ import annotations

import asyncio
import logging

from kronii.critic.ports import GoneShells, ShellFilesUnusable

__all__ = ["SweepGoneShells"]

log = logging.getLogger(__name__)


class SweepGoneShells:
    def __init__(self, shells: GoneShells, every_s: float) -> None:
        self._shells = shells
        self._every_s = every_s

    async def run(self) -> None:
        """Until cancelled (the service's stop)."""
        while True:
            try:
                gone = await asyncio.to_thread(self._shells.forget_gone)
                if gone:
                    log.info("critic: removed the files of %d shell(s) that are gone", len(gone))
            except ShellFilesUnusable as error:
                log.warning("critic: could not sweep the files of ended shells: %s", error)
            await asyncio.sleep(self._every_s)
