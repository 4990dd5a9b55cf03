"""Child processes that die with their parent and whose output is streamed with a name prefix."""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import IO

__all__ = ["Child", "LineSink", "infra_sink", "split_sink", "stdout_sink", "stop_all"]

LineSink = Callable[[str, str], None]
_PR_SET_PDEATHSIG = 1
_print_lock = threading.Lock()


def stdout_sink(width: int = 9) -> LineSink:
    def sink(name: str, line: str) -> None:
        with _print_lock:
            sys.stdout.write(f"{name:<{width}}| {line}\n")
            sys.stdout.flush()

    return sink


def infra_sink(out: LineSink) -> LineSink:
    """Infrastructure servers are chatty at start; show their warnings and errors only."""
    markers = ("[WRN]", "[ERR]", "[FTL]", " # ", "WARNING", "ERROR", "FATAL", "PANIC")
    # Redis logs its start and stop banners at warning level; they are not news.
    benign = (
        "Memory overcommit",
        "Redis is starting",
        "Redis version=",
        "Configuration loaded",
        "Server initialized",
        "User requested shutdown",
        "ready to exit",
        "scheduling shutdown",
        "Saving the final RDB",
        "DB saved on disk",
        "Calling fsync() on the AOF",
    )

    def sink(name: str, line: str) -> None:
        if any(marker in line for marker in markers) and not any(text in line for text in benign):
            out(name, line)

    return sink


def split_sink(out: LineSink, names: list[str]) -> LineSink:
    """For a child that runs several services and starts each line with "<service> | ": each line goes
    to `out` under its service's name, and a line the child logs under its own name, or prints without
    a prefix, under the child's (shown once: never "services | services | ...")."""
    known = set(names)

    def sink(name: str, line: str) -> None:
        service, separator, rest = line.partition(" | ")
        if separator and (service in known or service == name):
            out(service, rest)
        else:
            out(name, line)

    return sink


def _die_with_parent(death_signal: int) -> Callable[[], None]:
    def prepare() -> None:
        # If the launcher is killed outright, the kernel still stops its children.
        with contextlib.suppress(OSError, AttributeError):
            ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, death_signal)

    return prepare


class Child:
    """A named child process. `stop()` sends `stop_signal`, waits, then kills.

    It runs under umask 077 unless told otherwise: nothing it creates is readable by other users.
    """

    def __init__(
        self,
        name: str,
        argv: Sequence[str],
        *,
        sink: LineSink | None,
        env: dict[str, str] | None = None,
        cwd: Path | None = None,
        user: int | None = None,
        group: int | None = None,
        stop_signal: int = signal.SIGTERM,
        death_signal: int = signal.SIGTERM,
        umask: int = 0o077,
    ) -> None:
        self.name = name
        self.stop_signal = stop_signal
        self._sink = sink
        self.lines: list[str] = []
        self.process = subprocess.Popen(
            list(argv),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            env=env,
            cwd=cwd,
            user=user,
            group=group,
            extra_groups=[] if user is not None else None,
            start_new_session=True,
            # What a child creates in the data directory is its owner's alone, whatever the caller's umask.
            umask=umask,
            preexec_fn=_die_with_parent(death_signal),
            text=True,
            errors="replace",
            bufsize=1,
        )
        self._reader = threading.Thread(target=self._pump, args=(self.process.stdout,), daemon=True)
        self._reader.start()

    @property
    def pid(self) -> int:
        return self.process.pid

    def _pump(self, stream: IO[str] | None) -> None:
        if stream is None:
            return
        for raw in stream:
            line = raw.rstrip("\n")
            if len(self.lines) < 400:
                self.lines.append(line)
            if self._sink is not None:
                self._sink(self.name, line)

    def alive(self) -> bool:
        return self.process.poll() is None

    def exit_reason(self) -> str:
        """'signal 9' or 'code 1': how the child ended (empty while it runs)."""
        code = self.process.poll()
        if code is None:
            return ""
        return f"signal {-code}" if code < 0 else f"code {code}"

    def group_gone(self) -> bool:
        """True when no process is left in the child's process group (orphans of a killed server)."""
        try:
            os.killpg(self.process.pid, 0)
        except ProcessLookupError:
            return True
        except PermissionError:
            return False
        return False

    def stop(self, timeout: float) -> int | None:
        """Stop politely, then by force; return the exit code (None if it could not be reaped)."""
        if self.alive():
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.process.pid, self.stop_signal)
            try:
                self.process.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(self.process.pid, signal.SIGKILL)
                with contextlib.suppress(subprocess.TimeoutExpired):
                    self.process.wait(timeout=2)
        # Anything the child left in its process group goes too.
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.process.pid, signal.SIGKILL)
        self._reader.join(timeout=1)
        return self.process.poll()

    def wait_for(self, predicate: Callable[[], bool], timeout: float, interval: float = 0.05) -> bool:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if predicate():
                return True
            if not self.alive():
                return False
            time.sleep(interval)
        return predicate()


def stop_all(children: list[Child], timeout: float) -> None:
    """Signal every child at once, then give them one shared deadline."""
    for child in children:
        if child.alive():
            with contextlib.suppress(ProcessLookupError):
                os.killpg(child.pid, child.stop_signal)
    deadline = time.monotonic() + timeout
    for child in children:
        child.stop(max(0.05, deadline - time.monotonic()))
