"""A trigger as the use cases speak of it: the command that asks for one (TriggerCommand), the one
outcome it ends with (TriggerOutcome: answered, stored for repeats, recorded and published), and the
event a collision with a person's typing is (Collision). The API turns its wire messages into
these and back once; the stores keep them in their own form inside their adapters."""

from __future__ import annotations

from dataclasses import dataclass, field

__all__ = ["LIST_LIMIT", "PENDING", "Collision", "TriggerCommand", "TriggerOutcome", "TriggerQuery"]

# The outcome a trigger_id holds while its first request is still working on it.
PENDING = "pending"


@dataclass(frozen=True, slots=True)
class TriggerCommand:
    """trigger_runtime (section 10.2): type `prompt` into the agent's pane, once per trigger_id."""

    trigger_id: str
    agent_id: str
    workspace_id: str
    prompt: str
    thread_id: str = ""
    runtime_id: str = ""
    # 0: the configured ack timeout.
    ack_timeout_ms: int = 0
    force_override: bool = False
    reason: str = ""
    progress_marker: str = ""
    finding_key: str = ""
    # The caller's request id for the logs ("" : one is made up).
    request_id: str = ""


@dataclass(frozen=True, slots=True)
class TriggerOutcome:
    """How a trigger ended, or stands: `result` is a core.model.Result value, or PENDING. Times are
    epoch seconds on the wall clock (they are shown to people)."""

    trigger_id: str
    result: str
    agent_id: str = ""
    workspace_id: str = ""
    thread_id: str = ""
    delivery_backend: str = ""
    error_code: str = ""
    runtime_id: str = ""
    fallback_used: str = ""
    fallback_chain: tuple[str, ...] = field(default_factory=tuple)
    typed_not_submitted: bool = False
    attempts: int = 0
    acked_by: str = ""
    detail: str = ""
    delivered_at: float | None = None
    deferred_until: float | None = None
    # The answer to a trigger_id seen before (never stored: each answer says it).
    duplicate: bool = False
    # When the trigger's row was made and last changed: only for a trigger read back from PostgreSQL.
    created_at: float | None = None
    updated_at: float | None = None


# The most triggers one listing answers, and how many when the caller names no limit.
LIST_LIMIT = 500
LIST_DEFAULT = 50


@dataclass(frozen=True, slots=True)
class TriggerQuery:
    """The recent triggers (ListTriggers), the most recently changed first; empty filters match all.
    `result` "deferred" is the queue of triggers waiting to be delivered."""

    workspace_id: str = ""
    agent_id: str = ""
    runtime_id: str = ""
    result: str = ""
    limit: int = LIST_DEFAULT


@dataclass(frozen=True, slots=True)
class Collision:
    """The fallback chain went on while a person was typing in the agent's pane (section 13.2)."""

    trigger_id: str
    runtime_id: str
    agent_id: str
    workspace_id: str
    fallback: str
    at: float
    busy_since: float | None = None
