"""What the API asks of the broker's use cases, as values: one command per operation, built from the
wire (HTTP JSON or gRPC) by `api/`, carried to `usecases/operations.BrokerOperations` with the
caller the transport named. `session_id` may be `current`, the broker's own desktop session."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Generic, TypeVar

from kronii.broker.core.table import Event

__all__ = [
    "GrantCommand",
    "InputCommand",
    "IntentCommand",
    "LeaseCommand",
    "SafePointCommand",
    "SignInCommand",
]


@dataclass(frozen=True)
class IntentCommand:
    """The person's (or anyone's, for STOP_NOW and SAFE_INTERRUPT) choice: the intent's name as sent."""

    session_id: str
    intent: str


@dataclass(frozen=True)
class GrantCommand:
    """The desktop user gives ``agent`` the desktop; 0 seconds is the default lease, window 0 the
    window the person has in front of them."""

    session_id: str
    agent: str
    lease_seconds: int = 0
    window: int = 0


@dataclass(frozen=True)
class LeaseCommand:
    """EXTEND by the person, or ACQUIRE, RENEW and RELEASE by the calling agent."""

    session_id: str
    event: Event
    lease_seconds: int = 0


@dataclass(frozen=True)
class SafePointCommand:
    session_id: str
    step: str
    sequence: int = 0


# What an input action is (kronii.desktop.input_actions.InputAction) is the agents' vocabulary, a
# library beside the broker: the core names it only as a parameter, the use case fixes it.
Action = TypeVar("Action")


@dataclass(frozen=True)
class InputCommand(Generic[Action]):
    """One action of the calling agent; epoch 0 takes the current grant's."""

    session_id: str
    action: Action
    epoch: int = 0


@dataclass(frozen=True)
class SignInCommand:
    challenge_id: str
    client_id: str
    signature: bytes
