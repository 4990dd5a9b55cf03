"""`TriggerMachine`: interprets `TABLE` for one trigger. No I/O, no clock: each signal comes with
`now`, and the machine answers with the effects the adapters carry out."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, ClassVar

from kronii.supervisor.core.model import Backend, ErrorCode, Result
from kronii.supervisor.core.params import SupervisorParams
from kronii.supervisor.core.table import TABLE, Action, Guard, Phase, Row, Signal

__all__ = [
    "Defer",
    "Deliver",
    "Effect",
    "EmitCollision",
    "Finish",
    "LaunchResume",
    "LaunchSpawn",
    "MarkOperatorBusy",
    "Resubmit",
    "TriggerMachine",
    "UnexpectedSignal",
    "WaitAck",
]


# ---- effects ---------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Deliver:
    """Write the prompt to the pane and submit it. `attempt` counts from 1; a retry first looks at
    the input box and only submits if the text is still there."""

    attempt: int


@dataclass(frozen=True, slots=True)
class WaitAck:
    deadline: float


@dataclass(frozen=True, slots=True)
class Resubmit:
    """Send the submit key once more (typed, not submitted)."""


@dataclass(frozen=True, slots=True)
class Defer:
    until: float
    code: ErrorCode


@dataclass(frozen=True, slots=True)
class MarkOperatorBusy:
    pass


@dataclass(frozen=True, slots=True)
class EmitCollision:
    busy_since: float | None


@dataclass(frozen=True, slots=True)
class LaunchResume:
    attempt: int


@dataclass(frozen=True, slots=True)
class LaunchSpawn:
    reason: str


@dataclass(frozen=True, slots=True)
class Finish:
    result: Result
    backend: Backend
    code: ErrorCode | None
    fallback_used: str


Effect = (
    Deliver
    | WaitAck
    | Resubmit
    | Defer
    | MarkOperatorBusy
    | EmitCollision
    | LaunchResume
    | LaunchSpawn
    | Finish
)


class UnexpectedSignal(ValueError):
    """A signal no row accepts in the current phase (a bug in the caller, never silently dropped)."""


@dataclass
class _State:
    phase: Phase = Phase.RECEIVED
    deliveries: int = 0
    resubmitted: bool = False
    resume_attempts: int = 0
    timed_out: bool = False
    recovered: bool = False
    busy_since: float | None = None
    deferred_until: float | None = None
    code: ErrorCode | None = None
    chain: list[str] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class _Step:
    """What one handled signal gives its row's actions."""

    row: Row
    now: float
    defer_until: float | None
    code: ErrorCode | None


def _final_code(row: Row, result: Result, code_so_far: ErrorCode | None) -> ErrorCode | None:
    """The code a finished trigger reports: the row's own, else the one its result implies."""
    if row.code is not None:
        return row.code
    if result is Result.FAILED:
        return code_so_far
    if result is Result.TIMEOUT:
        return ErrorCode.ACK_TIMEOUT
    if row.backend is Backend.TMUX:
        return None
    # Delivered through the fallback chain: the code says why the pane was skipped.
    return code_so_far


class TriggerMachine:
    """One trigger's lifecycle. `can_resume` and `can_spawn` say what the fallback chain allows for
    the target (a resume template and a session id; a spawn template)."""

    def __init__(
        self, params: SupervisorParams, *, can_resume: bool, can_spawn: bool, state: _State | None = None
    ) -> None:
        self._params = params
        self.can_resume = can_resume
        self.can_spawn = can_spawn
        self._s = state or _State()
        self._fired: Counter[str] = Counter()
        self._guards: Mapping[Guard, Callable[[], bool]] = MappingProxyType(
            {
                Guard.NONE: lambda: True,
                Guard.CAN_RESUME: lambda: self.can_resume,
                Guard.CAN_SPAWN: lambda: self.can_spawn,
                Guard.RETRIES_LEFT: lambda: self._s.deliveries <= params.ack_retries,
                Guard.NOT_RESUBMITTED: lambda: not self._s.resubmitted,
                Guard.RESUME_ATTEMPTS_LEFT: lambda: self._s.resume_attempts < params.resume_max_attempts,
                Guard.RECOVERED: lambda: self._s.recovered,
            }
        )

    # ---- read-only view ---------------------------------------------------------------------------

    @property
    def params(self) -> SupervisorParams:
        return self._params

    @property
    def phase(self) -> Phase:
        return self._s.phase

    @property
    def done(self) -> bool:
        return self._s.phase is Phase.DONE

    @property
    def deliveries(self) -> int:
        return self._s.deliveries

    @property
    def resume_attempts(self) -> int:
        return self._s.resume_attempts

    @property
    def recovered(self) -> bool:
        return self._s.recovered

    @property
    def busy_since(self) -> float | None:
        return self._s.busy_since

    @property
    def deferred_until(self) -> float | None:
        return self._s.deferred_until

    @property
    def code(self) -> ErrorCode | None:
        return self._s.code

    @property
    def chain(self) -> tuple[str, ...]:
        """The fallback chain so far, for the audit log: e.g. tmux, resume:failed, spawn."""
        return tuple(self._s.chain)

    @property
    def row_fire_counts(self) -> Mapping[str, int]:
        return MappingProxyType(dict(self._fired))

    # ---- intake -----------------------------------------------------------------------------------

    def match(self, signal: Signal) -> Row | None:
        for row in TABLE:
            if self._s.phase in row.phases and row.signal is signal and self._guards[row.guard]():
                return row
        return None

    def handle(
        self,
        signal: Signal,
        now: float,
        *,
        defer_until: float | None = None,
        code: ErrorCode | None = None,
    ) -> list[Effect]:
        row = self.match(signal)
        if row is None:
            raise UnexpectedSignal(f"no row takes {signal.value} in phase {self._s.phase.value}")
        self._fired[row.name] += 1
        self._note(signal)
        if code is not None:
            self._s.code = code
        self._s.phase = row.to
        effects: list[Effect] = []
        step = _Step(row, now, defer_until, code)
        for action in row.actions:
            self._act(action, step, effects)
        if row.to is not Phase.DEFERRED:
            self._s.deferred_until = None
        return effects

    def _note(self, signal: Signal) -> None:
        chain = self._s.chain
        if signal is Signal.RESUME_FAILED:
            chain.append("resume:failed")
        elif signal is Signal.RESUME_OK:
            chain.append("resume")
        elif signal is Signal.SPAWN_FAILED:
            chain.append("spawn:failed")
        elif signal is Signal.SPAWN_OK:
            chain.append("spawn")
        elif signal is Signal.ACK_TIMEOUT:
            chain.append("tmux:ack_timeout")
        elif signal is Signal.WRITE_FAILED:
            chain.append("tmux:write_failed")
        elif signal is Signal.ACKED:
            chain.append("tmux")
        elif signal is Signal.PERSON_KEYS_WHILE_TYPING:
            # The typed text was taken back: the next delivery types it afresh (attempt 1).
            self._s.deliveries = 0

    def _act(self, action: Action, step: _Step, effects: list[Effect]) -> None:
        effect = self._ACTIONS[action](self, step)
        if effect is not None:
            effects.append(effect)

    # ---- actions: each changes the state and names at most one effect -----------------------------

    def _deliver(self, step: _Step) -> Effect | None:
        self._s.deliveries += 1
        return Deliver(self._s.deliveries)

    def _wait_ack(self, step: _Step) -> Effect | None:
        return WaitAck(step.now + self._params.ack_timeout_secs)

    def _resubmit(self, step: _Step) -> Effect | None:
        self._s.resubmitted = True
        return Resubmit()

    def _defer(self, step: _Step) -> Effect | None:
        until = step.defer_until if step.defer_until is not None else step.now + self._params.recheck_secs
        self._s.deferred_until = until
        return Defer(until, step.code or ErrorCode.OPERATOR_BUSY)

    def _mark_operator_busy(self, step: _Step) -> Effect | None:
        self._note_wait(step)
        return MarkOperatorBusy()

    def _note_wait(self, step: _Step) -> Effect | None:
        if self._s.busy_since is None:
            self._s.busy_since = step.now
        return None

    def _mark_recovered(self, step: _Step) -> Effect | None:
        self._s.recovered = True
        return None

    def _emit_collision(self, step: _Step) -> Effect | None:
        return EmitCollision(self._s.busy_since)

    def _launch_resume(self, step: _Step) -> Effect | None:
        self._s.resume_attempts += 1
        return LaunchResume(self._s.resume_attempts)

    def _launch_spawn(self, step: _Step) -> Effect | None:
        return LaunchSpawn(step.row.name)

    def _mark_timed_out(self, step: _Step) -> Effect | None:
        self._s.timed_out = True
        self._s.code = ErrorCode.ACK_TIMEOUT
        return None

    def _finish(self, step: _Step) -> Effect | None:
        row = step.row
        result = row.result or (Result.TIMEOUT if self._s.timed_out else Result.DELIVERED)
        self._s.code = _final_code(row, result, self._s.code)
        fallback = row.backend.value if row.backend in (Backend.RESUME, Backend.SPAWN) else ""
        return Finish(result, row.backend, self._s.code, fallback)

    _ACTIONS: ClassVar[Mapping[Action, Callable[[TriggerMachine, _Step], Effect | None]]] = MappingProxyType(
        {
            Action.DELIVER: _deliver,
            Action.WAIT_ACK: _wait_ack,
            Action.RESUBMIT: _resubmit,
            Action.DEFER: _defer,
            Action.MARK_OPERATOR_BUSY: _mark_operator_busy,
            Action.NOTE_WAIT: _note_wait,
            Action.MARK_RECOVERED: _mark_recovered,
            Action.EMIT_COLLISION: _emit_collision,
            Action.LAUNCH_RESUME: _launch_resume,
            Action.LAUNCH_SPAWN: _launch_spawn,
            Action.MARK_TIMED_OUT: _mark_timed_out,
            Action.FINISH: _finish,
        }
    )

    # ---- persistence ------------------------------------------------------------------------------

    def to_dict(self) -> dict[str, Any]:
        s = self._s
        return {
            "phase": s.phase.value,
            "deliveries": s.deliveries,
            "resubmitted": s.resubmitted,
            "resume_attempts": s.resume_attempts,
            "timed_out": s.timed_out,
            "recovered": s.recovered,
            "busy_since": s.busy_since,
            "deferred_until": s.deferred_until,
            "code": s.code.value if s.code else None,
            "chain": list(s.chain),
            "can_resume": self.can_resume,
            "can_spawn": self.can_spawn,
        }

    @classmethod
    def from_dict(cls, params: SupervisorParams, data: Mapping[str, Any]) -> TriggerMachine:
        state = _State(
            phase=Phase(data["phase"]),
            deliveries=int(data["deliveries"]),
            resubmitted=bool(data["resubmitted"]),
            resume_attempts=int(data["resume_attempts"]),
            timed_out=bool(data["timed_out"]),
            recovered=bool(data.get("recovered", False)),
            busy_since=data.get("busy_since"),
            deferred_until=data.get("deferred_until"),
            code=ErrorCode(data["code"]) if data.get("code") else None,
            chain=list(data.get("chain", [])),
        )
        return cls(
            params, can_resume=bool(data["can_resume"]), can_spawn=bool(data["can_spawn"]), state=state
        )
