"""The Agents page's values: a runtime as the person sees it (its live state in five words), a
trigger with its true outcome, and what the person asks of an agent. Pure: times are epoch seconds
given in, nothing here reads a clock or the network."""

from __future__ import annotations

from dataclasses import dataclass, field

__all__ = [
    "FORCE_PREFIX",
    "MAX_PROMPT_CHARS",
    "MAX_REASON_CHARS",
    "AgentCard",
    "AgentsView",
    "Runtime",
    "Trigger",
    "TriggerAsk",
    "live_state",
]

# The supervisor's force needs a reason with this prefix (or coordinator_override:); a person's is human.
FORCE_PREFIX = "human_override:"
# A prompt typed into a page: the supervisor strips control characters and caps the bytes itself.
MAX_PROMPT_CHARS = 16_000
MAX_REASON_CHARS = 300

# The screen's word (the supervisor's agent_state) as the person's: "blocked" is a dialog waiting.
_SCREEN_WORDS = {"idle": "idle", "working": "working", "draft": "draft", "blocked": "dialog"}


def live_state(status: str, agent_state: str) -> str:
    """idle, working, draft, dialog or offline (the issue's five), else starting or exited as the
    supervisor saw them, else unknown (the pane was not looked at yet)."""
    if status == "offline" or agent_state == "exited":
        return "offline"
    if agent_state in _SCREEN_WORDS:
        return _SCREEN_WORDS[agent_state]
    return agent_state or "unknown"


@dataclass(frozen=True)
class Runtime:
    runtime_id: str
    agent_id: str
    workspace_id: str
    kind: str
    role: str
    status: str
    agent_state: str
    paused: bool = False
    operator_busy: bool = False
    cwd: str = ""
    offline_reason: str = ""
    last_activity_at: float | None = None

    @property
    def state(self) -> str:
        return live_state(self.status, self.agent_state)


@dataclass(frozen=True)
class Trigger:
    """One trigger and its true outcome as the supervisor recorded it (the prompt is never kept)."""

    trigger_id: str
    agent_id: str
    workspace_id: str
    result: str
    runtime_id: str = ""
    thread_id: str = ""
    error_code: str = ""
    detail: str = ""
    delivery_backend: str = ""
    fallback_chain: tuple[str, ...] = ()
    acked_by: str = ""
    delivered_at: float | None = None
    deferred_until: float | None = None
    created_at: float | None = None
    updated_at: float | None = None

    @property
    def waiting(self) -> bool:
        return self.result == "deferred"


@dataclass(frozen=True)
class AgentCard:
    """One agent's runtime with its recent triggers, newest first."""

    runtime: Runtime
    triggers: tuple[Trigger, ...] = ()


@dataclass(frozen=True)
class AgentsView:
    cards: tuple[AgentCard, ...]
    deferred: tuple[Trigger, ...]
    # Triggers of agents with no runtime listed (gone, or in a workspace no runtime is in now).
    orphans: tuple[Trigger, ...] = ()
    problems: tuple[str, ...] = field(default_factory=tuple)


@dataclass(frozen=True)
class TriggerAsk:
    """What the supervisor's trigger API is sent for a person's prompt from the page."""

    trigger_id: str
    workspace_id: str
    agent_id: str
    prompt: str
    reason: str
