"""The tmux sessions of the agents the supervisor spawned (`<prefix><workspace>`, default
`agents_web`), looked up and stopped by `kronii up` when it stops. Only those sessions: the user's
own sessions on the same tmux server are never touched, and the server itself is stopped only when
it is kronii's own socket (the supervisor's `tmux_socket`) and nothing else is left on it.

`kronii up` reaches it through the supervisor's spec (`ServiceSpec.leftovers`), with the supervisor's
own settings (environment and config file alike)."""

from __future__ import annotations

import shutil
import subprocess
from dataclasses import dataclass

from kronii.supervisor.settings import SupervisorSettings

__all__ = ["AgentSessions"]

_TIMEOUT_S = 5.0


@dataclass(frozen=True)
class AgentSessions:
    """Where the supervisor keeps its agents, from the supervisor's own settings."""

    socket: str | None
    prefix: str
    binary: str

    @classmethod
    def from_settings(cls, settings: SupervisorSettings) -> AgentSessions:
        return cls(
            socket=settings.tmux_socket or None, prefix=settings.session_prefix, binary=settings.tmux_binary
        )

    def _tmux(self, *args: str) -> subprocess.CompletedProcess[str] | None:
        if shutil.which(self.binary) is None:
            return None
        command = [self.binary, *(["-S", self.socket] if self.socket else []), *args]
        try:
            return subprocess.run(command, capture_output=True, text=True, timeout=_TIMEOUT_S, check=False)
        except (OSError, subprocess.TimeoutExpired):
            return None

    def _all_sessions(self) -> list[str]:
        listed = self._tmux("list-sessions", "-F", "#{session_name}")
        if listed is None or listed.returncode != 0:  # no server: no sessions
            return []
        return [line for line in listed.stdout.splitlines() if line]

    def running(self) -> list[str]:
        """The agents' sessions that are running now."""
        return [name for name in self._all_sessions() if name.startswith(self.prefix)]

    def stop(self) -> list[str]:
        """Stop the agents' sessions; the names of those stopped."""
        stopped = []
        for name in self.running():
            done = self._tmux("kill-session", "-t", f"={name}")
            if done is not None and done.returncode == 0:
                stopped.append(name)
        if self.socket and not self._all_sessions():
            self._tmux("kill-server")  # kronii's own server, now empty
        return stopped

    def how_to_stop(self, names: list[str]) -> str:
        socket = f" -S {self.socket}" if self.socket else ""
        return (
            f"{len(names)} agent session(s) keep running in tmux ({', '.join(names)}): "
            f"`tmux{socket} kill-session -t {names[0]}` stops one; "
            "`kronii up --stop-agents` (or KRONII_STOP_AGENTS=true) stops them whenever kronii stops"
        )
