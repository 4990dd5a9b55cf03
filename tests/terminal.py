"""A command run as a person at a terminal runs it: a new session whose controlling terminal is a
fresh pseudo-terminal (the TTY binding of the presence checks sees a person there)."""

from __future__ import annotations

import os
import select
import subprocess
import time
from dataclasses import dataclass

__all__ = ["TerminalRun", "run_on_terminal"]


@dataclass(frozen=True)
class TerminalRun:
    code: int
    shown: str
    # The session id: the shell's pid, which setsid made a session leader without forking.
    session: int


def run_on_terminal(script: str, env: dict[str, str], timeout: float = 90) -> TerminalRun:
    """Run ``sh -c script`` as a person's terminal session would: a new session whose controlling
    terminal is a fresh pseudo-terminal, standard input, output and error on it. (exit code, what
    the terminal showed, session id)."""
    master, slave = os.openpty()
    try:
        process = subprocess.Popen(
            ["setsid", "--ctty", "sh", "-c", script],
            stdin=slave,
            stdout=slave,
            stderr=slave,
            env=env,
            close_fds=True,
        )
    finally:
        os.close(slave)
    shown = bytearray()
    deadline = time.monotonic() + timeout
    try:
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError(f"the terminal command did not finish in {timeout} s: {shown[-500:]!r}")
            ready, _, _ = select.select([master], [], [], min(left, 0.5))
            if not ready:
                continue
            try:
                chunk = os.read(master, 65536)
            except OSError:  # EIO: every process holding the terminal has exited
                break
            if not chunk:
                break
            shown += chunk
        code = process.wait(timeout=10)
        return TerminalRun(code, shown.decode(errors="replace").replace("\r\n", "\n"), process.pid)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
        os.close(master)
