"""Vocabulary of the supervisor core: results, error codes, runtime facts and the effects the
lifecycle asks the adapters for. Times are epoch seconds passed in; the core never reads a clock."""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Any

from kronii.desktop.hold import DesktopHold


class Result(enum.StrEnum):
    """The trigger outcome of seed 002, section 10.2, plus `typed_not_submitted`: the prompt sits
    in the agent's input box and the submit key did not send it (nothing falls back, since the
    text is there for a person to see and send)."""

    DELIVERED = "delivered"
    ALREADY_ACTIVE = "already_active"
    DEFERRED = "deferred"
    TIMEOUT = "timeout"
    FAILED = "failed"
    TYPED_NOT_SUBMITTED = "typed_not_submitted"


class Backend(enum.StrEnum):
    """How the prompt reached the agent: its live pane, a resumed session, or a fresh one."""

    NONE = ""
    TMUX = "tmux"
    RESUME = "resume"
    SPAWN = "spawn"


class RuntimeStatus(enum.StrEnum):
    """Section 8.2: the registry's status of a runtime. `superseded`: the fallback chain started a
    fresh session that is now the agent's runtime; this one still runs (left on screen, never
    killed) but takes no trigger, and goes offline when its process ends."""

    ACTIVE = "active"
    IDLE = "idle"
    SUPERSEDED = "superseded"
    OFFLINE = "offline"

    @property
    def current(self) -> bool:
        """The agent's runtime a trigger may go to: neither replaced nor gone."""
        return self not in (RuntimeStatus.SUPERSEDED, RuntimeStatus.OFFLINE)


@dataclass(frozen=True, slots=True)
class RuntimeRecord:
    """One registered agent runtime (section 8.2): where it runs and what the supervisor knows of it."""

    runtime_id: str
    agent_id: str
    workspace_id: str
    pty_target: str
    registered_at: float
    session_id: str = ""
    pty_backend: str = "tmux"
    pid: int = 0
    status: RuntimeStatus = RuntimeStatus.IDLE
    kind: str = "generic"
    role: str = ""
    managed: bool = False
    paused: bool = False
    operator_busy: bool = False
    command: tuple[str, ...] = field(default_factory=tuple)
    last_heartbeat_at: float | None = None
    last_activity_at: float | None = None
    offline_reason: str = ""
    cwd: str = ""


class ErrorCode(enum.StrEnum):
    """Deterministic classifications carried in `error_code`."""

    TRIGGER_RATE_LIMITED = "TRIGGER_RATE_LIMITED"
    THREAD_AUTO_BLOCKED = "THREAD_AUTO_BLOCKED"
    TRIGGER_LOOP_SUPPRESSED = "TRIGGER_LOOP_SUPPRESSED"
    TRIGGER_COOLDOWN = "TRIGGER_COOLDOWN"
    RUNTIME_PAUSED = "RUNTIME_PAUSED"
    OPERATOR_BUSY = "OPERATOR_BUSY"
    COLLISION_MAX_DEFER = "COLLISION_MAX_DEFER"
    PANE_NOT_AGENT = "PANE_NOT_AGENT"
    RUNTIME_OFFLINE = "RUNTIME_OFFLINE"
    WRITE_FAILED = "WRITE_FAILED"
    ACK_TIMEOUT = "ACK_TIMEOUT"
    RESUME_FAILED = "RESUME_FAILED"
    SPAWN_FAILED = "SPAWN_FAILED"
    FALLBACK_EXHAUSTED = "FALLBACK_EXHAUSTED"
    TRIGGER_IN_FLIGHT = "TRIGGER_IN_FLIGHT"
    AGENT_BLOCKED = "AGENT_BLOCKED"
    AGENT_STARTING = "AGENT_STARTING"
    # The agent is running what it was given and shows no input line (a busy REPL).
    AGENT_BUSY = "AGENT_BUSY"
    TYPED_NOT_SUBMITTED = "TYPED_NOT_SUBMITTED"
    # The person took the desktop back (the input broker says so): nothing is typed until it ends.
    USER_HOLDS_DESKTOP = "USER_HOLDS_DESKTOP"
    # tmux could not be asked about the pane (its control connection was being opened, ended or
    # gave no answer): the pane's state is unknown, so the trigger waits; it is never taken as gone.
    TMUX_UNAVAILABLE = "TMUX_UNAVAILABLE"


class OverrideIntent(enum.StrEnum):
    HUMAN = "human_override"
    COORDINATOR = "coordinator_override"


class CollisionGate(enum.StrEnum):
    ENFORCED = "enforced"
    BYPASSED = "bypassed"
    NOT_EVALUATED = "not_evaluated"


# ---- what the adapters observed, handed to the policies ---------------------------------------------


@dataclass(frozen=True, slots=True)
class PaneFacts:
    """One look at the target pane: is the registered agent in the foreground, is a person there."""

    exists: bool = True
    # The pane's foreground process group belongs to the registered pid (not a shell).
    agent_in_foreground: bool = True
    foreground_command: str = ""
    # Latest keyboard activity of an attached (non-control) client on the pane's session, epoch s.
    human_activity_at: float | None = None
    # Text sitting in the agent's input line that the supervisor did not put there.
    draft: str = ""
    # The agent's state read off its screen (core.agent_state.AgentState values).
    agent_state: str = "idle"
    # The agent's input line is at the cursor. A REPL running what it was given has none: what is
    # typed then goes to the program it runs, so nothing is typed until the line is back.
    input_line: bool = True
    # The dialog line when the agent is blocked.
    dialog: str = ""
    # Why tmux could not be asked about the pane ("" when it answered). When set, nothing above
    # is known: the pane is neither gone nor ready.
    unanswered: str = ""


@dataclass(frozen=True, slots=True)
class RuntimeFacts:
    """The registry's view of the target runtime, with liveness checked by the adapters."""

    runtime_id: str
    kind: str
    managed: bool = True
    status: RuntimeStatus = RuntimeStatus.IDLE
    pid_alive: bool = True
    paused: bool = False
    session_id: str = ""
    last_heartbeat_at: float | None = None


@dataclass(frozen=True, slots=True)
class GuardFacts:
    """Counters the guardrails read (kept in Redis by the adapters)."""

    # Attempt times on this thread and agent within the rate window, oldest first.
    recent_attempts: tuple[float, ...] = ()
    # Recent failure times of this agent's runtimes (crash-loop detection), oldest first.
    recent_failures: tuple[float, ...] = ()
    consecutive_failures: int = 0
    last_failure_at: float | None = None
    thread_blocked: bool = False
    # Same prompt as the previous trigger on this thread and agent, with no runtime progress since.
    repeats_without_progress: bool = False


@dataclass(frozen=True, slots=True)
class Situation:
    """Everything the admission step needs, gathered by the adapters at `now`."""

    runtime: RuntimeFacts | None
    pane: PaneFacts | None
    guards: GuardFacts = field(default_factory=GuardFacts)
    force_override: bool = False
    # The input broker's hold on the desktop this supervisor's panes are on, when one is in force.
    desktop_hold: DesktopHold | None = None


@dataclass(frozen=True, slots=True)
class Snapshot:
    """The guardrail counters of one trigger, read in one round trip."""

    attempts: tuple[float, ...]
    failures: tuple[float, ...]
    streak: int
    last_failure_at: float | None
    thread: dict[str, Any]
    progress_epoch: int
