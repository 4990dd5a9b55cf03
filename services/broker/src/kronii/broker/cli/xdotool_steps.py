"""The xdotool shadow's chain, run as steps (seed 004, "Safe Interrupt Semantics"): before every input
action of the chain (each verb, and each piece of a long `type`, see xdotool_chain.TYPE_STEP_CHARS)
the shadow asks the broker's safe point and obeys it.

CONTINUE sends the action. PAUSE (the desktop user asked for a pause, SAFE_INTERRUPT, or the agent
holds no lease) and STOP (STOP_NOW, or the person's own input took the desktop back) end the chain
there: nothing after that point is sent, and the shadow exits with the sentence saying why and how
far it got. The first safe point pins the lease's epoch, so a chain never goes on under a later
grant (the broker drops it as stale_epoch, and the shadow reads the state to say who ended the
lease: STOP_NOW, a pause, the person's input). A `sleep` is not a step: the next action asks.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from kronii.agents.broker_client import BrokerClient, SafePointDecision, SessionState
from kronii.broker.cli import xdotool_chain as chain
from kronii.broker.cli.xdotool_chain import ClickHere, MoveBy, Send, Sleep

__all__ = [
    "DROP_SENTENCES",
    "EXIT_PAUSED",
    "EXIT_REFUSED",
    "Halt",
    "StepsRunner",
    "drop_halt",
    "safe_point_halt",
]

EXIT_REFUSED = 1
EXIT_PAUSED = 3
_GRANT_HINT = "ask the desktop user to run `kronii control grant`"
DROP_SENTENCES = {
    "user_control": f"the desktop user has control (user control: {_GRANT_HINT})",
    "no_lease": f"this agent holds no lease on the desktop (no lease: {_GRANT_HINT})",
    "lease_expired": f"this agent's lease ran out (lease expired: {_GRANT_HINT} again)",
    "stale_epoch": "the lease this input was sent under has been revoked (stale epoch)",
    "paused": "the desktop user asked the agent to pause (paused: wait for a new grant)",
    "not_holder": "another agent holds the desktop (not holder)",
    "stopped": "the desktop user stopped the agent (stopped)",
    "queue_full": "the broker's input queue is full (queue full: try again shortly)",
}
_INTERRUPTED = (
    "the desktop user asked the agent to pause (SAFE_INTERRUPT): the chain stopped at a safe point "
    "(wait for a new grant, then run it again)"
)
_TAKEN_BACK = "the desktop user took the desktop back (their own input): the chain stopped"


@dataclass(frozen=True)
class Halt:
    """Why the chain ended before its last action: the exit code and the sentence."""

    code: int
    sentence: str


def safe_point_halt(decision: SafePointDecision, client_id: str) -> Halt | None:
    """None for CONTINUE; else the exit code and sentence for the broker's PAUSE or STOP."""
    state = decision.state
    if decision.action == "CONTINUE":
        return None
    if decision.action == "STOP":
        stopped = state.user_intent == "STOP_NOW"
        return Halt(EXIT_REFUSED, DROP_SENTENCES["stopped"] if stopped else _TAKEN_BACK)
    if state.agent_status == "PAUSED":
        return Halt(EXIT_PAUSED, _INTERRUPTED)
    if state.control_mode == "AGENT" and state.holder != client_id:
        return Halt(EXIT_REFUSED, DROP_SENTENCES["not_holder"])
    return Halt(EXIT_REFUSED, DROP_SENTENCES["user_control" if state.interactive else "no_lease"])


def drop_halt(dropped: str, state: SessionState | None = None) -> Halt:
    """The exit code and sentence for an input the broker dropped. A stale epoch only says the lease
    it was sent under ended: ``state``, read just after, says who ended it."""
    if dropped == "stale_epoch" and state is not None:
        if state.user_intent == "STOP_NOW":
            dropped = "stopped"
        elif state.agent_status == "PAUSED":
            return Halt(EXIT_PAUSED, _INTERRUPTED)
        elif state.agent_status == "STOPPED":
            return Halt(EXIT_REFUSED, _TAKEN_BACK)
    sentence = DROP_SENTENCES.get(dropped, f"the broker dropped the input ({dropped})")
    return Halt(EXIT_PAUSED if dropped == "paused" else EXIT_REFUSED, sentence)


class StepsRunner:
    """Sends a parsed chain one checked step at a time, tracking the pointer so `mousemove X Y click 1`
    clicks at X,Y. ``client`` may be replaced between calls to ``run`` (a new sign-in): the chain
    goes on from the action it had reached, never sending one twice."""

    def __init__(
        self,
        client: BrokerClient,
        plan: Sequence[chain.Planned],
        pointer: Callable[[], tuple[int, int]],
        *,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.client = client
        self.plan = list(plan)
        self.position = 0  # the next item of the plan
        self.sent = 0
        self.total = sum(1 for item in self.plan if not isinstance(item, Sleep))
        self._where = pointer
        self._sleep = sleep
        self._pointer: tuple[int, int] | None = None
        self._sequence = 0

    def run(self) -> Halt | None:
        """None when every action was injected, else why the chain stopped (nothing after it sent)."""
        while self.position < len(self.plan):
            item = self.plan[self.position]
            if isinstance(item, Sleep):
                self._sleep(item.seconds)
                self.position += 1
                continue
            halt = self._ask(item)
            if halt is not None:
                return self._told(halt)
            result = self.client.send(self._body(item))
            self.position += 1
            if not result.injected:
                state = self.client.state() if result.dropped == "stale_epoch" else None
                return self._told(drop_halt(result.dropped, state))
            self.sent += 1
        return None

    def _ask(self, item: Send | ClickHere | MoveBy) -> Halt | None:
        self._sequence += 1
        step = f"xdotool {self.sent + 1}/{self.total} {_kind(item)}"
        decision = self.client.safe_point(step, self._sequence)
        halt = safe_point_halt(decision, self.client.client_id)
        if halt is None and self.client.epoch is None and decision.state.held_by(self.client.client_id):
            self.client.epoch = decision.state.epoch  # this chain runs under this lease only
        return halt

    def _told(self, halt: Halt) -> Halt:
        return Halt(halt.code, f"{halt.sentence}; {self.sent} of {self.total} input actions were sent")

    def _body(self, item: Send | ClickHere | MoveBy) -> dict[str, object]:
        if isinstance(item, Send):
            if item.body["kind"] == "move":
                self._pointer = (int(str(item.body["x"])), int(str(item.body["y"])))
            return item.body
        x, y = self._pointer if self._pointer is not None else self._where()
        if isinstance(item, MoveBy):
            self._pointer = (max(0, x + item.dx), max(0, y + item.dy))
            return {"kind": "move", "x": self._pointer[0], "y": self._pointer[1]}
        return {"kind": "click", "x": x, "y": y, "button": item.button}


def _kind(item: Send | ClickHere | MoveBy) -> str:
    if isinstance(item, Send):
        return str(item.body["kind"])
    return "click" if isinstance(item, ClickHere) else "move"
