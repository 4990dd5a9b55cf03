"""Seed 004's rules as data: what every event does in every state. `core.machine` interprets this
table; nothing else encodes these transitions. For each event the first row whose guards all hold
wins; every event's last row has no guard, so every event has an answer.

P0 (non-preemption): ACQUIRE is refused in an interactive session (A1) and only the person's GRANT
gives an agent control there (G2), whose own ACQUIRE then finds the desktop held for it (AG, the
person's lease unchanged); a viewer attaching ends a lease taken by policy (V1). A session
whose viewers the broker cannot see counts as interactive (fail closed): A0 refuses saying so, and
V0 ends a lease taken by policy when the broker loses sight of its viewers.
P1 (the user always wins): USER_INPUT revokes any lease (U1). Automation that went around the broker
(UNBROKERED_INPUT: another program's XTEST) revokes it too (B1), but it is not the person: no hold
starts. P2: WAIT, SAFE_INTERRUPT (paused at the next safe point, S5) and STOP_NOW (T1). P3: a
session nobody watches may be acquired (A5). The core rules 1-4 are rows I2, U1, T1 and S5.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from kronii.broker.core.model import AgentStatus, ControlMode, DropReason, SafePointAction, UserIntent

__all__ = [
    "ROWS",
    "Action",
    "Change",
    "Event",
    "Guard",
    "Hold",
    "Lease",
    "Refusal",
    "Row",
    "cleared_as",
    "rows_for",
]


class Event(enum.StrEnum):
    GRANT = "grant"  # the person grants a lease (the local socket, a person's proof)
    EXTEND = "extend"  # the person extends the holder's live lease (no new epoch)
    ACQUIRE = "acquire"  # an agent takes a session nobody watches (P3)
    RENEW = "renew"
    RELEASE = "release"
    AGENT_INPUT = "agent_input"
    SAFE_POINT = "safe_point"
    USER_INPUT = "user_input"  # the person's input: a physical device or an attached viewer's own
    UNBROKERED_INPUT = "unbrokered_input"  # automation around the broker: the core XTEST device
    WAIT = "wait"
    SAFE_INTERRUPT = "safe_interrupt"
    STOP_NOW = "stop_now"
    TICK = "tick"  # time passed: a lease may have run out
    INTERACTIVE = "interactive"  # a viewer attached, a person's devices appeared, or the flag
    NOT_INTERACTIVE = "not_interactive"


class Guard(enum.StrEnum):
    INTERACTIVE = "interactive"
    NOT_INTERACTIVE = "not_interactive"
    MODE_AGENT = "mode_agent"
    MODE_USER = "mode_user"
    LEASE_LIVE = "lease_live"
    LEASE_ENDED = "lease_ended"  # AGENT mode, but the lease ran out
    CALLER_HOLDS = "caller_holds"  # the calling agent holds a live lease
    CALLER_NOT_HOLDER = "caller_not_holder"
    HELD_BY_OTHER = "held_by_other"
    STALE_EPOCH = "stale_epoch"  # the agent names an epoch that is not the current one
    INTERRUPT_PENDING = "interrupt_pending"
    STOP_SET = "stop_set"
    AGENT_STOPPED = "agent_stopped"
    AGENT_PAUSED = "agent_paused"
    POLICY_REFUSES = "policy_refuses"  # the operator turned P3 acquisition off
    NOT_GRANTED_BY_USER = "not_granted_by_user"
    GRANTED_BY_USER = "granted_by_user"  # the live lease is one the person granted (G2)
    PRESENCE_UNKNOWN = "presence_unknown"  # the session is interactive because nobody can tell
    BECOMES_UNKNOWN = "becomes_unknown"  # the event says the broker can no longer see its viewers


class Action(enum.StrEnum):
    INJECT = "inject"
    CLEAR_QUEUE = "clear_queue"
    SIGNAL_AGENT = "signal_agent"  # tell the agent why it lost control (Row.signal)
    PUBLISH = "publish"  # kronii.broker.control
    AUDIT = "audit"  # a hash-chained audit row: grants, overrides, stops, pauses
    NOTIFY_LEASE = "notify_lease"  # the desktop notification with Wait / Interrupt / Stop
    CLOSE_NOTIFICATION = "close_notification"


class Refusal(enum.StrEnum):
    NOT_INTERACTIVE = "not_interactive"
    GRANT_NEEDED = "grant_needed"
    STOPPED_BY_USER = "stopped_by_user"
    POLICY = "policy"
    HELD = "held"
    NO_LEASE = "no_lease"
    OVERRIDE_PENDING = "override_pending"
    PRESENCE_UNKNOWN = "presence_unknown"


class Lease(enum.Enum):
    KEEP = "keep"
    SET = "set"  # a new lease for the caller, from now
    EXTEND = "extend"  # the holder's lease, from now
    CLEAR = "clear"


class Hold(enum.Enum):
    KEEP = "keep"
    START = "start"  # the person took the desktop back: the mesh leaves it alone for a while
    CLEAR = "clear"


@dataclass(frozen=True)
class Change:
    """How the state changes; None and KEEP leave a field as it is."""

    mode: ControlMode | None = None
    lease: Lease = Lease.KEEP
    intent: UserIntent | None = None
    status: AgentStatus | None = None
    bump_epoch: bool = False
    granted_by_user: bool | None = None
    hold: Hold = Hold.KEEP
    interactive: bool | None = None


NO_CHANGE = Change()


def _revoke(
    status: AgentStatus,
    *,
    intent: UserIntent | None = None,
    hold: Hold = Hold.KEEP,
    interactive: bool | None = None,
) -> Change:
    """The agent loses control: back to the person, and nothing it queued survives (a new epoch)."""
    return Change(ControlMode.USER, Lease.CLEAR, intent, status, True, None, hold, interactive)


@dataclass(frozen=True)
class Row:
    id: str
    event: Event
    guards: tuple[Guard, ...]
    outcome: str
    change: Change = NO_CHANGE
    actions: tuple[Action, ...] = ()
    refusal: Refusal | None = None
    drop: DropReason | None = None
    answer: SafePointAction | None = None
    signal: str = ""


_G, _A = Guard, Action
_LOST = (_A.CLEAR_QUEUE, _A.SIGNAL_AGENT, _A.PUBLISH, _A.AUDIT, _A.CLOSE_NOTIFICATION)

# fmt: off
ROWS: tuple[Row, ...] = (
    # ---- the person grants (interactive sessions only) ------------------------------------------
    Row("G1", Event.GRANT, (_G.NOT_INTERACTIVE,), "refused", refusal=Refusal.NOT_INTERACTIVE),
    Row(
        "G2",
        Event.GRANT,
        (),
        "granted",
        Change(ControlMode.AGENT, Lease.SET, UserIntent.WAIT, AgentStatus.RUNNING, True, True, Hold.CLEAR),
        (_A.CLEAR_QUEUE, _A.PUBLISH, _A.AUDIT, _A.NOTIFY_LEASE),
    ),
    Row("E1", Event.EXTEND, (_G.LEASE_LIVE,), "extended", Change(lease=Lease.EXTEND), (_A.PUBLISH, _A.NOTIFY_LEASE)),
    Row("E2", Event.EXTEND, (), "refused", refusal=Refusal.NO_LEASE),
    # ---- an agent acquires a session nobody watches (P3) ---------------------------------------
    # The agent the person granted asks for the desktop it already holds (the vision engine starting a
    # plan under `kronii control grant vision`): it has it, while the person watches; the person's
    # lease stays as they gave it (the agent never lengthens a grant), and their input still ends it (U1).
    Row("AG", Event.ACQUIRE, (_G.CALLER_HOLDS, _G.GRANTED_BY_USER), "held", actions=(_A.PUBLISH, _A.AUDIT)),
    # The broker cannot tell whether a person watches: fail closed, and say why (not "a person is here").
    Row("A0", Event.ACQUIRE, (_G.PRESENCE_UNKNOWN,), "refused", refusal=Refusal.PRESENCE_UNKNOWN),
    Row("A1", Event.ACQUIRE, (_G.INTERACTIVE,), "refused", refusal=Refusal.GRANT_NEEDED),
    Row("A2", Event.ACQUIRE, (_G.STOP_SET,), "refused", refusal=Refusal.STOPPED_BY_USER),
    Row("A3", Event.ACQUIRE, (_G.POLICY_REFUSES,), "refused", refusal=Refusal.POLICY),
    Row("A4", Event.ACQUIRE, (_G.HELD_BY_OTHER,), "refused", refusal=Refusal.HELD),
    Row("A5", Event.ACQUIRE, (_G.CALLER_HOLDS,), "renewed", Change(lease=Lease.EXTEND), (_A.PUBLISH,)),
    Row(
        "A6",
        Event.ACQUIRE,
        (),
        "acquired",
        Change(ControlMode.AGENT, Lease.SET, None, AgentStatus.RUNNING, True, False),
        (_A.CLEAR_QUEUE, _A.PUBLISH, _A.AUDIT),
    ),
    # ---- the holder renews or lets go ----------------------------------------------------------
    Row("R1", Event.RENEW, (_G.CALLER_NOT_HOLDER,), "refused", refusal=Refusal.NO_LEASE),
    Row("R2", Event.RENEW, (_G.INTERRUPT_PENDING,), "refused", refusal=Refusal.OVERRIDE_PENDING),
    Row("R3", Event.RENEW, (), "renewed", Change(lease=Lease.EXTEND), (_A.PUBLISH,)),
    Row("L1", Event.RELEASE, (_G.CALLER_NOT_HOLDER,), "refused", refusal=Refusal.NO_LEASE),
    Row(
        "L2",
        Event.RELEASE,
        (),
        "released",
        _revoke(AgentStatus.IDLE),
        (_A.CLEAR_QUEUE, _A.PUBLISH, _A.AUDIT, _A.CLOSE_NOTIFICATION),
    ),
    # ---- agent input (core rules 1 and 3) -------------------------------------------------------
    Row("I1", Event.AGENT_INPUT, (_G.STALE_EPOCH,), "dropped", drop=DropReason.STALE_EPOCH),
    Row("I2", Event.AGENT_INPUT, (_G.MODE_USER, _G.AGENT_STOPPED), "dropped", drop=DropReason.STOPPED),
    Row("I3", Event.AGENT_INPUT, (_G.MODE_USER, _G.AGENT_PAUSED), "dropped", drop=DropReason.PAUSED),
    Row("I4", Event.AGENT_INPUT, (_G.MODE_USER, _G.INTERACTIVE), "dropped", drop=DropReason.USER_CONTROL),
    Row("I5", Event.AGENT_INPUT, (_G.MODE_USER,), "dropped", drop=DropReason.NO_LEASE),
    Row(
        "I6",
        Event.AGENT_INPUT,
        (_G.LEASE_ENDED,),
        "expired",
        _revoke(AgentStatus.IDLE),
        _LOST,
        drop=DropReason.LEASE_EXPIRED,
        signal="lease_expired",
    ),
    Row("I7", Event.AGENT_INPUT, (_G.CALLER_NOT_HOLDER,), "dropped", drop=DropReason.NOT_HOLDER),
    Row("I8", Event.AGENT_INPUT, (), "injected", actions=(_A.INJECT,)),
    # ---- safe points (SAFE_INTERRUPT semantics) -------------------------------------------------
    Row("S1", Event.SAFE_POINT, (_G.MODE_USER, _G.AGENT_STOPPED), "stop", answer=SafePointAction.STOP),
    Row("S2", Event.SAFE_POINT, (_G.MODE_USER,), "pause", answer=SafePointAction.PAUSE),
    Row(
        "S3",
        Event.SAFE_POINT,
        (_G.LEASE_ENDED,),
        "expired",
        _revoke(AgentStatus.IDLE),
        _LOST,
        answer=SafePointAction.PAUSE,
        signal="lease_expired",
    ),
    Row("S4", Event.SAFE_POINT, (_G.CALLER_NOT_HOLDER,), "pause", answer=SafePointAction.PAUSE),
    Row(
        "S5",
        Event.SAFE_POINT,
        (_G.INTERRUPT_PENDING,),
        "paused",
        _revoke(AgentStatus.PAUSED, hold=Hold.START),
        _LOST,
        answer=SafePointAction.PAUSE,
        signal="safe_interrupt",
    ),
    Row("S6", Event.SAFE_POINT, (), "continue", answer=SafePointAction.CONTINUE),
    # ---- the person's own input (P1) ------------------------------------------------------------
    Row(
        "U1",
        Event.USER_INPUT,
        (_G.MODE_AGENT,),
        "overridden",
        _revoke(AgentStatus.STOPPED, hold=Hold.START),
        _LOST,
        signal="user_input_override",
    ),
    Row("U2", Event.USER_INPUT, (), "unchanged"),
    # ---- automation that went around the broker (another program's XTEST) -------------------------
    # It revokes like the person's input (no agent input lands in between), but it is not the person:
    # no hold starts, since nobody is known to be at the desk and the mesh is not told one is.
    Row(
        "B1",
        Event.UNBROKERED_INPUT,
        (_G.MODE_AGENT,),
        "overridden_unbrokered",
        _revoke(AgentStatus.STOPPED),
        _LOST,
        signal="unbrokered_input",
    ),
    Row("B2", Event.UNBROKERED_INPUT, (), "unchanged"),
    # ---- the person's three choices (P2) --------------------------------------------------------
    Row(
        "T1",
        Event.STOP_NOW,
        (),
        "stopped",
        _revoke(AgentStatus.STOPPED, intent=UserIntent.STOP_NOW, hold=Hold.START),
        _LOST,
        signal="stop_now",
    ),
    Row(
        "N1",
        Event.SAFE_INTERRUPT,
        (_G.LEASE_LIVE,),
        "interrupt_requested",
        Change(intent=UserIntent.SAFE_INTERRUPT, status=AgentStatus.STOPPING),
        (_A.SIGNAL_AGENT, _A.PUBLISH),
        signal="safe_interrupt",
    ),
    Row(
        "N2",
        Event.SAFE_INTERRUPT,
        (),
        "interrupt_noted",
        Change(intent=UserIntent.SAFE_INTERRUPT),
        (_A.PUBLISH,),
    ),
    Row(
        "W1",
        Event.WAIT,
        (_G.INTERRUPT_PENDING, _G.LEASE_LIVE),
        "interrupt_cleared",
        Change(intent=UserIntent.WAIT, status=AgentStatus.RUNNING),
        (_A.PUBLISH,),
    ),
    Row("W2", Event.WAIT, (), "wait", Change(intent=UserIntent.WAIT, hold=Hold.CLEAR), (_A.PUBLISH,)),
    # ---- time and attachment --------------------------------------------------------------------
    Row(
        "K1",
        Event.TICK,
        (_G.LEASE_ENDED,),
        "expired",
        _revoke(AgentStatus.IDLE),
        _LOST,
        signal="lease_expired",
    ),
    Row("K2", Event.TICK, (), "unchanged"),
    Row(
        "V0",
        Event.INTERACTIVE,
        (_G.MODE_AGENT, _G.NOT_GRANTED_BY_USER, _G.BECOMES_UNKNOWN),
        "revoked",
        _revoke(AgentStatus.STOPPED, interactive=True),
        _LOST,
        signal="presence_unknown",
    ),
    Row(
        "V1",
        Event.INTERACTIVE,
        (_G.MODE_AGENT, _G.NOT_GRANTED_BY_USER),
        "revoked",
        _revoke(AgentStatus.STOPPED, interactive=True),
        _LOST,
        signal="viewer_attached",
    ),
    Row("V2", Event.INTERACTIVE, (), "interactive", Change(interactive=True), (_A.PUBLISH,)),
    Row("X1", Event.NOT_INTERACTIVE, (), "not_interactive", Change(interactive=False), (_A.PUBLISH,)),
)
# fmt: on


def rows_for(event: Event) -> tuple[Row, ...]:
    return _BY_EVENT[event]


_BY_EVENT: dict[Event, tuple[Row, ...]] = {
    event: tuple(row for row in ROWS if row.event is event) for event in Event
}


# What an agent's queued actions are told when a row clears the queue: why they will never land.
_CLEARED_AS = {
    "stop_now": DropReason.STOPPED,
    "user_input_override": DropReason.STOPPED,
    "unbrokered_input": DropReason.STOPPED,
    "viewer_attached": DropReason.STOPPED,
    "presence_unknown": DropReason.STOPPED,
    "safe_interrupt": DropReason.PAUSED,
    "lease_expired": DropReason.LEASE_EXPIRED,
}


def cleared_as(row: Row) -> DropReason:
    """The drop reason for input a row's CLEAR_QUEUE throws away (a new lease: the old epoch's)."""
    if row.event is Event.RELEASE:
        return DropReason.NO_LEASE
    return _CLEARED_AS.get(row.signal, DropReason.STALE_EPOCH)
