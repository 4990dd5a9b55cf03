"""The Agents page's picture: every runtime with its live state and its recent triggers' true
outcomes, the deferred queue, and an agent's pane as the supervisor gives it (redacted)."""

from __future__ import annotations

import asyncio
from collections import defaultdict

from kronii.console.core.agents import AgentCard, AgentsView, Runtime, Trigger
from kronii.console.ports import SupervisorAgents
from kronii.foundation.errors import InvalidArgument

__all__ = ["PANE_LINES", "ShowAgents"]

# How many of the recent triggers are asked for, and how many each agent's card shows.
RECENT_TRIGGERS = 200
PER_AGENT = 6
PANE_LINES = 60


def _newest_first(runtimes: list[Runtime]) -> list[Runtime]:
    """Live runtimes first, then by the agent's name; a stable order the page can keep."""
    return sorted(runtimes, key=lambda r: (r.state == "offline", r.workspace_id, r.agent_id, r.runtime_id))


class ShowAgents:
    def __init__(self, supervisor: SupervisorAgents, *, per_agent: int = PER_AGENT) -> None:
        self._supervisor = supervisor
        self._per_agent = per_agent

    async def view(self) -> AgentsView:
        # Asked together: the page is re-fetched every few seconds while it is open.
        runtimes, recent, deferred = await asyncio.gather(
            self._supervisor.runtimes(),
            self._supervisor.triggers(limit=RECENT_TRIGGERS),
            self._supervisor.triggers(result="deferred", limit=RECENT_TRIGGERS),
        )
        return _arrange(_newest_first(runtimes), recent, deferred, self._per_agent)

    async def pane(self, runtime_id: str, lines: int = PANE_LINES) -> list[str]:
        """The pane's last lines, through the supervisor's redaction engine (its logs route)."""
        if not runtime_id:
            raise InvalidArgument("name the runtime whose pane to show")
        return await self._supervisor.pane(runtime_id, lines)


def _arrange(
    runtimes: list[Runtime], recent: list[Trigger], deferred: list[Trigger], per_agent: int
) -> AgentsView:
    """Each trigger goes to the card of the runtime it ran on, else to the first card of its agent;
    a trigger of an agent with no runtime listed is an orphan (shown apart, never dropped)."""
    by_runtime = {r.runtime_id: r for r in runtimes}
    first_of_agent: dict[tuple[str, str], str] = {}
    for runtime in runtimes:
        first_of_agent.setdefault((runtime.workspace_id, runtime.agent_id), runtime.runtime_id)
    placed: dict[str, list[Trigger]] = defaultdict(list)
    orphans: list[Trigger] = []
    for trigger in recent:
        home = (
            trigger.runtime_id
            if trigger.runtime_id in by_runtime
            else first_of_agent.get((trigger.workspace_id, trigger.agent_id))
        )
        if home is None:
            orphans.append(trigger)
        else:
            placed[home].append(trigger)
    cards = tuple(AgentCard(r, tuple(placed[r.runtime_id][:per_agent])) for r in runtimes)
    return AgentsView(cards=cards, deferred=tuple(deferred), orphans=tuple(orphans[:per_agent]))
