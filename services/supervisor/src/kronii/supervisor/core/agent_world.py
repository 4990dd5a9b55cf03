"""The agent's world: the environment and working directory it runs in (HOME, XDG_*, CODEX_HOME,
CLAUDE_CONFIG_DIR, its keys and every other variable it was given), read from its process or
recorded while it ran. The fallback chain's resume and fresh session run in it, never in the
supervisor's own: where an agent keeps its config, sign-in and sessions is what its environment
says, and the supervisor's HOME is not the agent's."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

__all__ = ["SUPERVISOR_VARS", "TERMINAL_VARS", "AgentWorld", "launch_env", "names_to_clear"]

# What a terminal gives each process it runs: the new window's own, never copied from the old pane.
TERMINAL_VARS = frozenset({"TERM", "TMUX", "TMUX_PANE", "COLUMNS", "LINES"})
# What the supervisor gives each runtime it starts: a new runtime gets its own.
SUPERVISOR_VARS = frozenset(
    {"KRONII_RUNTIME_ID", "KRONII_RUNTIME_TOKEN", "KRONII_SUPERVISOR_URL", "KRONII_EXIT_FILE"}
)


@dataclass(frozen=True, slots=True)
class AgentWorld:
    """An agent's whole environment and working directory. `pid` is the process it was read from
    (0 when it was not read from one); `source` says where it came from, for the attempt's detail."""

    env: Mapping[str, str] = field(default_factory=dict)
    cwd: str = ""
    pid: int = 0
    source: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {"env": dict(self.env), "cwd": self.cwd, "pid": self.pid, "source": self.source}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> AgentWorld:
        env = data.get("env")
        if not isinstance(env, Mapping):
            raise ValueError("an agent's world needs its environment as a mapping")
        return cls(
            env={str(k): str(v) for k, v in env.items()},
            cwd=str(data.get("cwd", "")),
            pid=int(data.get("pid", 0)),
            source=str(data.get("source", "")),
        )


def launch_env(world: AgentWorld | None, own: Mapping[str, str]) -> dict[str, str]:
    """The whole environment a resume or a fresh session of the agent starts with: its world,
    without what belonged to its old terminal and runtime, plus the new runtime's own variables."""
    env = {
        key: value
        for key, value in (world.env if world is not None else {}).items()
        if key not in TERMINAL_VARS and key not in SUPERVISOR_VARS
    }
    env.update(own)
    return env


def names_to_clear(present: Iterable[str], env: Mapping[str, str]) -> list[str]:
    """The variables a new window would get from elsewhere (the tmux server, the supervisor) that
    the agent's environment does not have: they are removed before the agent starts. What the
    terminal gives (TERM, TMUX, TMUX_PANE) stays: it describes the new window."""
    return sorted(
        {
            name
            for name in present
            if name and "=" not in name and name not in env and name not in TERMINAL_VARS
        }
    )
