"""Acknowledgements (section 12): a hook, a heartbeat or a message on the bus saying an agent took
its prompt, handed to the trigger waiting for it (trigger_lifecycle.py's wait for the ack)."""

from __future__ import annotations

import asyncio

from kronii.foundation.errors import InvalidArgument, NotFound
from kronii.supervisor.core.runtime_calls import Ack, AckAnswer
from kronii.supervisor.core.tokens import Claims
from kronii.supervisor.ports import Runtimes, TriggerState
from kronii.supervisor.usecases.access import need

__all__ = ["AckBoard"]


class AckBoard:
    def __init__(self, registry: Runtimes, state: TriggerState) -> None:
        self._registry = registry
        self._state = state
        self._events: dict[str, asyncio.Event] = {}
        self._sources: dict[str, str] = {}
        self._awaiting: dict[str, set[str]] = {}

    async def ack(self, req: Ack, claims: Claims | None) -> AckAnswer:
        """An ack from a caller (claims), or from the bus (None: the bus is inside the mesh)."""
        trigger_id = req.trigger_id
        if not trigger_id and not req.runtime_id:
            raise InvalidArgument("give trigger_id or runtime_id")
        if req.runtime_id:
            record = self._registry.get(req.runtime_id)
            if record is None:
                raise NotFound(f"no runtime {req.runtime_id!r} is registered")
            if claims is not None:
                need(claims, "operate", record.workspace_id, runtime_id=req.runtime_id)
            await self._state.bump_progress(req.runtime_id)
            ids = self.acknowledge_runtime(req.runtime_id, "ack")
            return AckAnswer(accepted=bool(ids) or True, trigger_id=ids[0] if ids else "")
        event = self._events.get(trigger_id)
        if event is None:
            stored = await self._state.get_outcome(trigger_id)
            if stored is None:
                raise NotFound(f"no trigger {trigger_id!r}")
            return AckAnswer(accepted=False, trigger_id=trigger_id)
        self._sources[trigger_id] = "ack"
        event.set()
        return AckAnswer(accepted=True, trigger_id=trigger_id)

    def acknowledge_runtime(self, runtime_id: str, how: str) -> list[str]:
        ids = sorted(self._awaiting.get(runtime_id, set()))
        for trigger_id in ids:
            self._sources.setdefault(trigger_id, how)
            if trigger_id in self._events:
                self._events[trigger_id].set()
        return ids

    def expect(self, trigger_id: str, runtime_id: str) -> asyncio.Event:
        """Start waiting for the trigger's ack: the event is set when one arrives."""
        event = self._events.setdefault(trigger_id, asyncio.Event())
        self._awaiting.setdefault(runtime_id, set()).add(trigger_id)
        return event

    def source(self, trigger_id: str) -> str:
        """How the ack arrived ("ack", "heartbeat"), once: it is forgotten after being read."""
        return self._sources.pop(trigger_id, "ack")

    def stop_expecting(self, trigger_id: str, runtime_id: str) -> None:
        self._awaiting.setdefault(runtime_id, set()).discard(trigger_id)
        self._events.pop(trigger_id, None)
