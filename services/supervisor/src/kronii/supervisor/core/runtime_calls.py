"""The registry's calls as the use cases speak of them (sections 10.1, 10.3, 10.4, 12, 13): what a
caller asks (register a pane, heartbeat, spawn, acknowledge) and what it is told (a runtime as
shown, a spawn's attach command, an ack taken or not, a pane's lines). The API turns its wire
messages into these and back."""

from __future__ import annotations

from dataclasses import dataclass, field

from kronii.supervisor.core.model import RuntimeRecord

__all__ = [
    "Ack",
    "AckAnswer",
    "Heartbeat",
    "PaneLines",
    "RegisterRuntime",
    "RuntimeQuery",
    "RuntimeView",
    "SpawnRuntime",
    "Spawned",
]


@dataclass(frozen=True, slots=True)
class RuntimeView:
    """A runtime as it is shown: its record and the agent state last read off its screen."""

    record: RuntimeRecord
    agent_state: str = ""


@dataclass(frozen=True, slots=True)
class RegisterRuntime:
    agent_id: str
    workspace_id: str
    pty_target: str
    pty_backend: str = ""
    pid: int = 0
    session_id: str = ""
    kind: str = ""
    role: str = ""
    cwd: str = ""


@dataclass(frozen=True, slots=True)
class Heartbeat:
    runtime_id: str
    status: str = ""
    # Epoch seconds; None: now.
    last_activity_at: float | None = None


@dataclass(frozen=True, slots=True)
class RuntimeQuery:
    workspace_id: str = ""
    agent_id: str = ""
    include_offline: bool = False


@dataclass(frozen=True, slots=True)
class SpawnRuntime:
    agent_id: str
    workspace_id: str
    command: tuple[str, ...] = field(default_factory=tuple)
    kind: str = ""
    role: str = ""
    cwd: str = ""
    session_id: str = ""


@dataclass(frozen=True, slots=True)
class Spawned:
    runtime: RuntimeView
    attach_command: str


@dataclass(frozen=True, slots=True)
class PaneLines:
    runtime_id: str
    lines: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Ack:
    """An agent took its prompt: the trigger named, or whatever its runtime waits on."""

    trigger_id: str = ""
    runtime_id: str = ""


@dataclass(frozen=True, slots=True)
class AckAnswer:
    accepted: bool
    trigger_id: str
