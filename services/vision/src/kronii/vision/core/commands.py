"""What the vision engine's use cases are asked and what a planner answers, as values: the API (HTTP,
gRPC, the notification's buttons) builds a command, the facade hands it to its use case."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from kronii.vision.core.actions import Action

__all__ = ["CallFacts", "ConfirmationAnswer", "PlanAnswer", "PlanCommand", "PlanDecision"]


@dataclass(frozen=True)
class PlanCommand:
    """Plan `intent` on the screen as it is now for `requester`; with `execute`, run it at once when the
    safety layer flags nothing."""

    intent: str
    requester: str
    execute: bool = False


@dataclass(frozen=True)
class PlanDecision:
    """A yes or a no about a held plan, and who said it (a person's actor name, or the caller's)."""

    plan_id: str
    actor: str


@dataclass(frozen=True)
class ConfirmationAnswer:
    """A click on the confirmation notification: the plan and the button's key ("approve", "deny")."""

    plan_id: str
    key: str


@dataclass(frozen=True)
class PlanAnswer:
    """What a planner proposes: actions, or none and why; the model call's record when there was one."""

    actions: tuple[Action, ...]
    note: str = ""
    backend: str = "rules"
    call: dict[str, Any] | None = None


@dataclass(frozen=True)
class CallFacts:
    """What the transport says about a call: the peer's loopback address (registered by the local
    socket for a local process) and the TTY binding's claim."""

    peer_host: str
    peer_port: int
    tty: str = ""
    session: str = ""
