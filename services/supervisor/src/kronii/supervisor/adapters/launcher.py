"""Launching `resume` commands (section 9.2): an argument vector, never a shell; non-blocking.
A launch succeeded when the process is still running after the grace period or has exited 0
within it; a missing program or a non-zero exit within the grace is a failure."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

__all__ = ["LaunchResult", "Launcher"]

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class LaunchResult:
    ok: bool
    pid: int = 0
    exit_code: int | None = None
    error: str = ""


class Launcher:
    def __init__(self, grace_secs: float) -> None:
        self.grace_secs = grace_secs
        self._running: set[asyncio.Task[None]] = set()

    async def launch(self, argv: Sequence[str], env: Mapping[str, str] | None = None) -> LaunchResult:
        if not argv or not argv[0]:
            return LaunchResult(False, error="empty command")
        try:
            proc = await asyncio.create_subprocess_exec(
                *argv,
                stdin=asyncio.subprocess.DEVNULL,
                stdout=asyncio.subprocess.DEVNULL,
                stderr=asyncio.subprocess.DEVNULL,
                env=dict(env) if env is not None else None,
                start_new_session=True,
            )
        except OSError as error:
            return LaunchResult(False, error=f"cannot start {argv[0]}: {error.strerror or error}")
        try:
            code = await asyncio.wait_for(proc.wait(), self.grace_secs)
        except TimeoutError:
            task = asyncio.create_task(self._reap(proc))
            self._running.add(task)
            task.add_done_callback(self._running.discard)
            return LaunchResult(True, pid=proc.pid)
        if code == 0:
            return LaunchResult(True, pid=proc.pid, exit_code=0)
        return LaunchResult(False, pid=proc.pid, exit_code=code, error=f"{argv[0]} exited with {code}")

    async def _reap(self, proc: asyncio.subprocess.Process) -> None:
        code = await proc.wait()
        log.info("a launched resume process exited with %s", code)

    async def close(self) -> None:
        for task in list(self._running):
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
