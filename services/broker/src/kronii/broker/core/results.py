"""What the broker's use cases answer, as values: `api/convert` turns them into broker.proto's
messages, the NATS publisher into its event."""

from __future__ import annotations

from dataclasses import dataclass

from kronii.broker.core.model import ControlState, SafePointAction

__all__ = ["AgentSession", "ControlChange", "InputResult", "SafePointAnswer", "SignInChallenge"]


@dataclass(frozen=True)
class ControlChange:
    """A session's state after a change, its cause (the event) and the signal an agent gets."""

    state: ControlState
    cause: str
    signal: str
    at_ms: int


@dataclass(frozen=True)
class InputResult:
    """True only once the X server has the action's events; otherwise why it was dropped."""

    injected: bool
    dropped: str
    epoch: int


@dataclass(frozen=True)
class SafePointAnswer:
    """CONTINUE, PAUSE or STOP for the holder at a step boundary, and the state it leaves."""

    action: SafePointAction
    state: ControlState


@dataclass(frozen=True)
class SignInChallenge:
    challenge_id: str
    nonce: bytes


@dataclass(frozen=True)
class AgentSession:
    client_id: str
    token: str
    expires_at_ms: int
