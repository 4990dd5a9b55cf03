"""The error text of a failing command in a pane that kronii's supervisor owns (opt-in: the
critic's `pane_error_text` setting): the pane whose terminal is the command's, looked for only in
the supervisor's agent sessions (`<prefix><workspace>` on the supervisor's tmux server), is
captured with tmux and the text after the command kept (core.pane_text). A terminal that is not
such a pane is never read. Blocking (tmux runs as a child): call it off the event loop."""

from __future__ import annotations

import logging
import shutil
import subprocess
import time

from kronii.critic.core.pane_text import text_after_command
from kronii.critic.settings import CriticSettings

__all__ = ["CAPTURE_HISTORY_LINES", "TMUX_TIMEOUT_S", "PaneErrors"]

log = logging.getLogger(__name__)

# Both tmux calls together; a wedged server costs one event's error text, never the intake.
TMUX_TIMEOUT_S = 1.0
# Lines above the visible screen that are read too: enough for a command whose output scrolled a
# little, and a bound on what is read from a pane that printed a build log.
CAPTURE_HISTORY_LINES = 60


class PaneErrors:
    def __init__(
        self,
        *,
        enabled: bool,
        socket: str | None,
        prefix: str,
        binary: str = "tmux",
        timeout_s: float = TMUX_TIMEOUT_S,
    ) -> None:
        self._enabled = enabled
        self._socket = socket
        # An empty prefix would take every session on the server for the supervisor's.
        self._prefix = prefix
        self._binary = binary
        self._timeout_s = timeout_s

    @classmethod
    def from_settings(cls, settings: CriticSettings) -> PaneErrors:
        return cls(
            enabled=settings.pane_error_text,
            socket=settings.supervisor_tmux_socket,
            prefix=settings.supervisor_session_prefix,
            binary=settings.supervisor_tmux_binary,
        )

    @property
    def enabled(self) -> bool:
        return self._enabled and bool(self._prefix)

    def error_text(self, tty: str, command_line: str) -> str:
        """What the command printed after its prompt line in the supervisor's pane on ``tty``; ""
        when the setting is off, the terminal is not such a pane, or tmux does not answer in time."""
        if not self.enabled or not tty or not command_line.strip():
            return ""
        deadline = time.monotonic() + self._timeout_s
        pane = self._pane_on(tty, deadline)
        if pane is None:
            return ""
        captured = self._tmux(
            deadline, "capture-pane", "-p", "-J", "-t", pane, "-S", f"-{CAPTURE_HISTORY_LINES}"
        )
        if captured is None:
            return ""
        return text_after_command(captured.splitlines(), command_line)

    def _pane_on(self, tty: str, deadline: float) -> str | None:
        listed = self._tmux(deadline, "list-panes", "-a", "-F", "#{pane_tty}\t#{pane_id}\t#{session_name}")
        if listed is None:
            return None
        for row in listed.splitlines():
            pane_tty, _, rest = row.partition("\t")
            pane_id, _, session = rest.partition("\t")
            if pane_tty == tty and pane_id and session.startswith(self._prefix):
                return pane_id
        return None

    def _tmux(self, deadline: float, *args: str) -> str | None:
        left = deadline - time.monotonic()
        if left <= 0 or shutil.which(self._binary) is None:
            return None
        command = [self._binary, *(["-S", self._socket] if self._socket else []), *args]
        try:
            done = subprocess.run(
                command, capture_output=True, text=True, errors="replace", timeout=left, check=False
            )
        except (OSError, subprocess.TimeoutExpired) as error:
            log.debug("critic: tmux %s did not answer: %s", args[0], error)
            return None
        # No server on the socket (the supervisor is not running) is a non-zero exit: no pane.
        return done.stdout if done.returncode == 0 else None
