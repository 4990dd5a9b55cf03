"""The Control page's values: who holds the desktop (the input broker's control state) and the time
its lease has left, the person's three intents, and a vision plan waiting for the person's yes with
its flagged rows. Pure: `now` is given in."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = [
    "GRANT_DEFAULT_MINUTES",
    "GRANT_MINUTES",
    "INTENTS",
    "INTENT_SAID",
    "VISION_AGENT",
    "Ambiguity",
    "Box",
    "DesktopState",
    "PlanAction",
    "PlanView",
    "grant_agents",
    "holder_sentence",
]

# The page's buttons and the broker's words for them (`kronii control wait|interrupt|stop`).
INTENTS = {"wait": "WAIT", "interrupt": "SAFE_INTERRUPT", "stop": "STOP_NOW"}
# How long the page lets an agent use the desktop: whole minutes, 2 unless the person picks another.
GRANT_MINUTES = tuple(range(1, 11))
GRANT_DEFAULT_MINUTES = 2
# The vision engine's client id at the broker (`kronii control grant vision`): a plan's engine.
VISION_AGENT = "vision"
# What each intent did, in the words `kronii control` says it.
INTENT_SAID = {
    "WAIT": "the agent may go on while its lease lasts",
    "SAFE_INTERRUPT": "the agent pauses at its next safe point, then control is yours",
    "STOP_NOW": "the agent is stopped, its lease revoked and its queued input dropped; control is yours",
}


@dataclass(frozen=True)
class DesktopState:
    session_id: str
    control_mode: str
    holder: str = ""
    lease_expiry: float | None = None
    window: int = 0
    user_intent: str = "WAIT"
    agent_status: str = "IDLE"
    interactive: bool = False
    interactive_reason: str = ""
    epoch: int = 0
    user_holds_until: float | None = None

    @property
    def agent_holds(self) -> bool:
        return self.control_mode == "AGENT" and bool(self.holder)

    def seconds_left(self, now: float) -> float | None:
        """The lease's time left (0 when it has lapsed); None when no agent holds a lease."""
        if not self.agent_holds or self.lease_expiry is None:
            return None
        return max(0.0, self.lease_expiry - now)


def holder_sentence(state: DesktopState, now: float) -> str:
    """Who holds the desktop, in the words `kronii control status` uses."""
    if state.agent_holds:
        left = state.seconds_left(now)
        until = "its lease has lapsed" if not left else f"{round(left)} s left on its lease"
        window = f", window {state.window:#x}" if state.window else ", whichever window has the focus"
        return f"{state.holder} (an agent), {until}{window}"
    if state.user_holds_until is not None and state.user_holds_until > now:
        return f"you; the mesh leaves the desktop alone for {round(state.user_holds_until - now)} s more"
    return "you (the desktop user)"


def grant_agents(state: DesktopState | None) -> tuple[str, ...]:
    """The agents the page offers the desktop to: the vision engine (whose plans wait here) first, and
    the agent that holds the desktop now when it is another."""
    holder = state.holder if state and state.agent_holds else ""
    return (VISION_AGENT,) if holder in ("", VISION_AGENT) else (VISION_AGENT, holder)


@dataclass(frozen=True)
class Box:
    """A rectangle in the redacted screenshot's pixels."""

    x: int
    y: int
    width: int
    height: int


@dataclass(frozen=True)
class PlanAction:
    description: str
    needs_yes: bool = False
    why: str = ""
    box: Box | None = None


@dataclass(frozen=True)
class Ambiguity:
    """A name that matches more than one element (safety row R4) and where each one is."""

    name: str
    candidates: tuple[tuple[str, str, Box | None], ...]


@dataclass(frozen=True)
class PlanView:
    plan_id: str
    intent: str
    state: str
    focused_title: str = ""
    reason: str = ""
    safety_rows: tuple[str, ...] = ()
    actions: tuple[PlanAction, ...] = ()
    ambiguities: tuple[Ambiguity, ...] = ()
    results: tuple[str, ...] = ()
    approved_by: str = ""
    replanned_as: str = ""
    created_at: float | None = None

    @property
    def waiting(self) -> bool:
        return self.state == "awaiting_confirmation"

    @property
    def boxes(self) -> tuple[Box, ...]:
        """Every rectangle the plan names, to draw its screen."""
        found = [a.box for a in self.actions if a.box] + [
            box for amb in self.ambiguities for _, _, box in amb.candidates if box
        ]
        return tuple(found)
