"""Which registered runtime a question is about, answered from the records in memory. Pure: the
registry adapter keeps these records in step with PostgreSQL, and tests fill them directly, so both
answer `for_agent` and `query` with the same rules."""

from __future__ import annotations

from kronii.supervisor.core.model import RuntimeRecord, RuntimeStatus

__all__ = ["RuntimeIndex"]


class RuntimeIndex:
    def __init__(self) -> None:
        self._records: dict[str, RuntimeRecord] = {}

    def get(self, runtime_id: str) -> RuntimeRecord | None:
        return self._records.get(runtime_id)

    def all(self) -> list[RuntimeRecord]:
        return sorted(self._records.values(), key=lambda r: r.registered_at)

    def query(
        self, *, workspace_id: str = "", agent_id: str = "", include_offline: bool = False
    ) -> list[RuntimeRecord]:
        return [
            r
            for r in self.all()
            if (not workspace_id or r.workspace_id == workspace_id)
            and (not agent_id or r.agent_id == agent_id)
            and (include_offline or r.status is not RuntimeStatus.OFFLINE)
        ]

    def for_agent(self, workspace_id: str, agent_id: str) -> RuntimeRecord | None:
        """The runtime a trigger for this agent goes to: the newest current one (neither offline nor
        superseded), else the newest that was not replaced, else the newest of any status (its kind
        and session id still tell the fallback chain what to do). A superseded runtime still runs,
        but a fresh session took its place: it is never where a trigger goes while another is."""
        candidates = self.query(workspace_id=workspace_id, agent_id=agent_id, include_offline=True)
        current = [r for r in candidates if r.status.current]
        kept = [r for r in candidates if r.status is not RuntimeStatus.SUPERSEDED]
        pool = current or kept or candidates
        return pool[-1] if pool else None
