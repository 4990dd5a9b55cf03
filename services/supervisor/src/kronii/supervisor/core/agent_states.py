"""The agent state last read off each runtime's screen (idle, working, blocked, ...): the trigger
path and the reconcile loop write it when tmux answers, the registry's answers show it."""

from __future__ import annotations

from collections.abc import Callable

from kronii.supervisor.core.model import RuntimeRecord, RuntimeStatus

__all__ = ["AgentStates"]


class AgentStates:
    def __init__(self) -> None:
        self._by_runtime: dict[str, str] = {}
        self._watchers: list[Callable[[str, str, str], None]] = []

    def watch(self, watcher: Callable[[str, str, str], None]) -> None:
        """`watcher(runtime_id, before, now)` whenever a runtime's state changes."""
        self._watchers.append(watcher)

    def read(self, runtime_id: str, state: str) -> None:
        """What a look at the runtime's screen showed just now."""
        before = self._by_runtime.get(runtime_id, "")
        self._by_runtime[runtime_id] = state
        if state != before:
            for watcher in self._watchers:
                watcher(runtime_id, before, state)

    def last(self, runtime_id: str) -> str:
        """The state last read ("" when none was)."""
        return self._by_runtime.get(runtime_id, "")

    def shown(self, record: RuntimeRecord) -> str:
        """The state a runtime is shown with: "exited" once it is offline."""
        return "exited" if record.status is RuntimeStatus.OFFLINE else self.last(record.runtime_id)

    def as_dict(self) -> dict[str, str]:
        return dict(self._by_runtime)
