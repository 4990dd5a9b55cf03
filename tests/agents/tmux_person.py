"""A person at a terminal attached to a test's tmux session: a second tmux client (`tmux attach` on a
pseudo-terminal of its own), whose keys reach the pane the way a person's do.

What tmux 3.3 shows about who typed (tests/data/agents/README.md, "Who typed"):

- `#{client_activity}` of the attached client, and `#{session_activity}`, move (to the second) when a
  key arrives through that client: typed, or a bracketed paste from its terminal.
- `tmux send-keys` and `paste-buffer` (from a plain command or a control-mode client, `tmux -C`) move
  neither; a control client's own `client_activity` stays at the time it attached.
- `#{window_activity}` moves on any output of the pane, whoever caused it.

The client's terminal is one row taller than the window, for tmux's status line, so attaching does not
resize the 120x40 window the agent runs in.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import struct
import subprocess
import termios
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field

__all__ = ["KEYS", "PersonClient", "client_activity", "person_client"]

# The bytes a terminal sends for tmux's key names (xterm, normal cursor mode).
KEYS: dict[str, bytes] = {
    "Enter": b"\r",
    "BSpace": b"\x7f",
    "Tab": b"\t",
    "Escape": b"\x1b",
    "Up": b"\x1b[A",
    "Down": b"\x1b[B",
    "Right": b"\x1b[C",
    "Left": b"\x1b[D",
    "Home": b"\x1b[H",
    "End": b"\x1b[F",
    "C-a": b"\x01",
    "C-c": b"\x03",
    "C-d": b"\x04",
    "C-e": b"\x05",
    "C-j": b"\n",
    "C-k": b"\x0b",
    "C-u": b"\x15",
    "C-w": b"\x17",
}


def _tmux(socket: str, *args: str) -> str:
    done = subprocess.run(
        ["tmux", "-S", socket, *args], capture_output=True, text=True, timeout=30, check=False
    )
    if done.returncode != 0:
        raise RuntimeError(f"tmux {' '.join(args)} failed: {done.stderr.strip()}")
    return done.stdout


def client_activity(socket: str) -> dict[str, int]:
    """`#{client_activity}` (epoch seconds) of every client of the server, by client name (a tty such
    as /dev/pts/3, or `client-<pid>` for a control client)."""
    rows = _tmux(socket, "list-clients", "-F", "#{client_name} #{client_activity}").splitlines()
    return {name: int(when) for name, when in (row.rsplit(" ", 1) for row in rows if row.strip())}


@dataclass
class PersonClient:
    """An attached tmux client; its keys are written to the terminal it reads, as a keyboard does."""

    socket: str
    session: str
    master: int
    process: subprocess.Popen[bytes]
    name: str = ""
    _reader: threading.Thread | None = field(default=None, repr=False)

    def write(self, data: bytes) -> None:
        os.write(self.master, data)

    def type(self, text: str, *, gap: float = 0.05) -> None:
        """Key by key, `gap` seconds apart, as a person types."""
        for char in text:
            self.write(char.encode())
            time.sleep(gap)

    def keys(self, *names: str) -> None:
        """tmux key names (Enter, BSpace, C-u, Escape, ...; see KEYS)."""
        for key in names:
            self.write(KEYS[key])

    def paste(self, text: str) -> None:
        """A paste from the person's terminal: bracketed, as terminals send it to tmux, which passes
        the brackets on only when the program asked for bracketed paste."""
        self.write(b"\x1b[200~" + text.encode() + b"\x1b[201~")

    def activity(self) -> int:
        """This client's `#{client_activity}` (epoch seconds of its last key)."""
        return client_activity(self.socket)[self.name]


def _drain(master: int) -> None:
    """Read what tmux draws on the client's terminal, so that tmux never blocks on a full pty."""
    while True:
        try:
            if not os.read(master, 65536):
                return
        except OSError:
            return


@contextlib.contextmanager
def person_client(
    socket: str, session: str, *, width: int = 120, height: int = 40, timeout: float = 10.0
) -> Iterator[PersonClient]:
    """Attach a second client to `session` on a new pseudo-terminal of width x (height + 1), the
    extra row for tmux's status line; yields it once tmux lists it; detaches it afterwards."""
    before = set(client_activity(socket))
    master, slave = os.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", height + 1, width, 0, 0))
    env = {k: v for k, v in os.environ.items() if k not in ("TMUX", "TMUX_PANE")}
    env["TERM"] = "xterm-256color"
    process = subprocess.Popen(
        ["tmux", "-S", socket, "attach-session", "-t", session],
        stdin=slave,
        stdout=slave,
        stderr=slave,
        env=env,
        start_new_session=True,
    )
    os.close(slave)
    reader = threading.Thread(target=_drain, args=(master,), daemon=True)
    reader.start()
    client = PersonClient(socket, session, master, process, _reader=reader)
    try:
        deadline = time.monotonic() + timeout
        while not client.name:
            new = set(client_activity(socket)) - before
            if new:
                client.name = new.pop()
            elif time.monotonic() > deadline or process.poll() is not None:
                raise RuntimeError(f"tmux attach to {session} did not show up as a client")
            else:
                time.sleep(0.02)
        yield client
    finally:
        with contextlib.suppress(RuntimeError):
            if client.name:
                _tmux(socket, "detach-client", "-t", client.name)
        try:
            process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=5)
        with contextlib.suppress(OSError):
            os.close(master)
        reader.join(timeout=2)
