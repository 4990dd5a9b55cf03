"""What `kronii up` does when an embedded server dies: start it again on the same data, port and
credentials, say when it is back (and after how long), and stop kronii when it keeps dying or does not
come back in time."""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping

from kronii.launcher.embedded_server import InfraError, InfraServer
from kronii.launcher.infra import EmbeddedInfra
from kronii.launcher.up_state import ServerRecord
from kronii.runtime.up_settings import MAX_RESTARTS, RESTART_WINDOW_SECS

__all__ = ["ServerRestarts"]


class ServerRestarts:
    def __init__(
        self,
        infra: EmbeddedInfra | None,
        servers: Mapping[str, InfraServer],
        records: dict[str, ServerRecord],
        *,
        ready_timeout_secs: float,
        say: Callable[[str], None],
        changed: Callable[[], None],
    ) -> None:
        self.infra = infra
        self.servers = servers
        self.records = records
        self.ready_timeout_secs = ready_timeout_secs
        self.say = say
        # Called when a server's record changed (kronii up writes its state file).
        self.changed = changed

    def check(self) -> int | None:
        """Restart a dead embedded server; between ticks, look once whether a restarted one answers,
        so that a slow PostgreSQL recovery never holds up the watch of the other children. An exit code
        when kronii must stop."""
        for server in self.servers.values():
            if server.child is None:
                continue
            record = self.records.setdefault(server.name, ServerRecord())
            if not server.child.alive():
                code = self._server_died(server, record)
                if code is not None:
                    return code
            elif record.down_since is not None:
                if self.infra is not None and self.infra.answers(server.name):
                    self._server_back(server, record)
                elif time.monotonic() > record.deadline:
                    self.say(
                        f"kronii: the embedded {server.name} did not come back within "
                        f"{self.ready_timeout_secs:.0f} s; stopping kronii"
                    )
                    return 1
        return None

    def _server_died(self, server: InfraServer, record: ServerRecord) -> int | None:
        assert server.child is not None and self.infra is not None
        reason = server.child.exit_reason()
        now = time.monotonic()
        record.deaths = [at for at in record.deaths if now - at < RESTART_WINDOW_SECS]
        if len(record.deaths) >= MAX_RESTARTS:
            self.say(
                f"kronii: the embedded {server.name} exited ({reason}) {MAX_RESTARTS + 1} times "
                f"within {RESTART_WINDOW_SECS:.0f} s; stopping kronii"
            )
            return 1
        record.deaths.append(now)
        if record.down_since is None:
            record.down_since, record.down_since_wall, record.reason = now, time.time(), reason
            self.say(f"kronii: the embedded {server.name} exited unexpectedly ({reason}); restarting it")
        else:
            self.say(
                f"kronii: the embedded {server.name} exited again while starting ({reason}); restarting it"
            )
        record.deadline = now + self.ready_timeout_secs
        try:
            self.infra.respawn(server.name)
        except (InfraError, OSError) as error:
            self.say(f"kronii: the embedded {server.name} cannot be started again: {error}; stopping kronii")
            return 1
        record.restarts += 1
        self.changed()
        return None

    def _server_back(self, server: InfraServer, record: ServerRecord) -> None:
        assert record.down_since is not None
        down = time.monotonic() - record.down_since
        record.outages.append(
            {"died_at": record.down_since_wall, "down_secs": round(down, 2), "reason": record.reason}
        )
        record.down_since = None
        self.say(f"kronii: {server.name} is back after {down:.1f} s")
        self.changed()
