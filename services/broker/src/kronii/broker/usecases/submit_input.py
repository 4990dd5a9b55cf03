"""Agents' input, one action at a time, in order: queued with the epoch it was sent under, decided
by the table when its turn comes, injected in a worker thread that asks before every X event whether
the grant still stands. A stop clears the queue at once; anything in flight stops at its next event.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from kronii.broker.core.callers import Caller, Operation, check
from kronii.broker.core.commands import InputCommand
from kronii.broker.core.machine import Happening
from kronii.broker.core.model import ControlMode, DropReason
from kronii.broker.core.results import InputResult
from kronii.broker.core.table import Action, Event
from kronii.broker.metrics import BrokerMetrics
from kronii.broker.ports import InjectionGuard, Injector
from kronii.broker.usecases.control_session import ControlSession
from kronii.desktop.input_actions import InputAction
from kronii.foundation.clock import Clock, SystemClock

__all__ = ["InputLane"]

log = logging.getLogger(__name__)

# How long an interrupted action's answer waits for the table once the fence closed under its lease:
# the watcher's news is normally milliseconds behind the injector's own look at the X server.
TABLE_CATCH_UP_S = 2.0


@dataclass
class _Pending:
    agent: str
    action: InputAction
    epoch: int
    done: asyncio.Future[InputResult]


class InputLane:
    def __init__(
        self,
        desk: ControlSession,
        injector: Injector,
        metrics: BrokerMetrics,
        *,
        size: int,
        clock: Clock | None = None,
    ) -> None:
        self._desk = desk
        self._clock = clock or SystemClock()
        self._injector = injector
        self._metrics = metrics
        self._queue: asyncio.Queue[_Pending] = asyncio.Queue(maxsize=size)
        # One thread: X events from one connection, in order.
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="broker-inject")
        self._worker: asyncio.Task[None] | None = None
        desk.on_clear(self.clear)

    def start(self) -> None:
        self._worker = asyncio.get_running_loop().create_task(self._run(), name="broker-input-lane")

    async def stop(self) -> None:
        self.clear(DropReason.STOPPED)
        if self._worker is not None:
            self._worker.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._worker
        self._executor.shutdown(wait=True, cancel_futures=True)

    @property
    def waiting(self) -> int:
        return self._queue.qsize()

    async def act(self, caller: Caller, command: InputCommand[InputAction]) -> InputResult:
        """The calling agent's action on the session the command names, in turn."""
        check(caller, Operation.INPUT)
        self._desk.named(command.session_id)
        return await self.submit(caller.agent, command.action, command.epoch)

    async def submit(self, agent: str, action: InputAction, epoch: int = 0) -> InputResult:
        """Queue one action and wait for its outcome. ``epoch`` 0 takes the current one: input is
        always bound to the grant it was sent under."""
        epoch = epoch or self._desk.state.epoch
        done: asyncio.Future[InputResult] = asyncio.get_running_loop().create_future()
        try:
            self._queue.put_nowait(_Pending(agent, action, epoch, done))
        except asyncio.QueueFull:
            return self._dropped(DropReason.QUEUE_FULL, epoch)
        return await done

    def clear(self, reason: DropReason) -> None:
        """Answer every queued action ``reason`` now; none of them will be injected."""
        while True:
            try:
                pending = self._queue.get_nowait()
            except asyncio.QueueEmpty:
                return
            if not pending.done.done():
                pending.done.set_result(self._dropped(reason, pending.epoch))

    def _dropped(self, reason: DropReason, epoch: int) -> InputResult:
        self._metrics.dropped.labels(reason.value).inc()
        return InputResult(False, reason.value, epoch)

    async def _run(self) -> None:
        while True:
            pending = await self._queue.get()
            try:
                result = await self._one(pending)
            except Exception as error:
                log.exception("broker: injecting %s failed", pending.action.describe())
                if not pending.done.done():
                    pending.done.set_exception(error)
                continue
            if not pending.done.done():
                pending.done.set_result(result)

    async def _one(self, pending: _Pending) -> InputResult:
        happening = Happening(Event.AGENT_INPUT, agent=pending.agent, epoch=pending.epoch)
        decision = self._desk.handle(happening, actor=f"agent:{pending.agent}")
        if Action.INJECT not in decision.actions:
            return self._dropped(decision.drop or DropReason.STALE_EPOCH, pending.epoch)
        desk, fence, epoch = self._desk, self._desk.fence, pending.epoch

        def still_valid() -> bool:
            # Read from the worker thread before every X event: the state is an immutable value
            # swapped whole, and the fence is closed by the thread that saw the person, before the
            # loop has decided anything.
            state = desk.state
            return state.epoch == epoch and state.control_mode is ControlMode.AGENT and fence.open_for(epoch)

        def person_seen() -> None:
            fence.close("user_input")

        guard = InjectionGuard(epoch, still_valid, person_seen)
        started = self._clock.monotonic()
        window = decision.state.window
        loop = asyncio.get_running_loop()
        injected = await loop.run_in_executor(
            self._executor, self._injector.inject, pending.action, window, guard
        )
        if injected:
            self._metrics.injection.observe(self._clock.monotonic() - started)
            self._metrics.injected.inc()
            return InputResult(True, "", epoch)
        await self._table_decided(epoch)
        # Stopped part-way: say why as the state now stands (stopped, paused, lease ended), not
        # merely that the grant it was sent under is gone; the fence closed before the table
        # decided is the person's input or a STOP: stopped.
        current = Happening(Event.AGENT_INPUT, agent=pending.agent)
        reason = self._desk.peek(current).drop
        if reason is None:
            reason = DropReason.STALE_EPOCH if fence.open_for(epoch) else DropReason.STOPPED
        return self._dropped(reason, epoch)

    def _fence_ahead_of_table(self, epoch: int) -> bool:
        state = self._desk.state
        return (
            state.epoch == epoch
            and state.control_mode is ControlMode.AGENT
            and not self._desk.fence.open_for(epoch)
        )

    async def _table_decided(self, epoch: int) -> None:
        """When the fence closed under this lease before the table decided (the injector saw the
        person's event in the X server's queue before the watcher's news reached the loop), wait for
        the table, so the agent's answer and the state it can read agree: an agent told `stopped`
        never then reads that it still holds the desktop."""
        if not self._fence_ahead_of_table(epoch):
            return
        try:
            async with asyncio.timeout(TABLE_CATCH_UP_S), contextlib.aclosing(self._desk.watch()) as changes:
                async for _ in changes:
                    if not self._fence_ahead_of_table(epoch):
                        return
        except TimeoutError:
            log.warning(
                "broker: the input fence closed (%s) but the control table had not decided after %.0f s",
                self._desk.fence.cause,
                TABLE_CATCH_UP_S,
            )
