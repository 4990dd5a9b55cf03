"""The two sides a trigger's lifecycle works with, each handed over as one: the agent's side (where
the trigger goes, what its pane shows, the acks, the desktop's hold) and the trigger's books (its
queue entry and guard counters, its steps, its outcome, the metrics)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from kronii.desktop.hold import DesktopHold
from kronii.supervisor.core.agent_states import AgentStates
from kronii.supervisor.metrics import SupervisorMetrics
from kronii.supervisor.ports import Histories, Panes, Runtimes, TriggerLog, TriggerState
from kronii.supervisor.usecases.acknowledge import AckBoard
from kronii.supervisor.usecases.trigger_outcomes import Outcomes

__all__ = ["AgentSide", "TriggerBooks"]


def _nobody_holds(_now: float) -> DesktopHold | None:
    return None


@dataclass(frozen=True, slots=True)
class AgentSide:
    """Where a trigger goes and what it meets there."""

    registry: Runtimes
    panes: Panes
    acks: AckBoard
    agent_states: AgentStates
    pid_alive: Callable[[int], bool]
    # The input broker's hold on the desktop the panes are on, at a given wall time.
    desktop_hold: Callable[[float], DesktopHold | None] = _nobody_holds
    # The agents' own records of the prompts they took, for kinds that keep one.
    histories: Histories | None = None


@dataclass(frozen=True, slots=True)
class TriggerBooks:
    """What a trigger leaves behind as it goes."""

    state: TriggerState
    trigger_log: TriggerLog
    outcomes: Outcomes
    metrics: SupervisorMetrics
