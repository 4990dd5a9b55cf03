"""Test harness for the supervisor: a private tmux server, the fake Codex on PATH, and a second
tmux client on a pseudo-terminal that a test types into as a person would."""

from __future__ import annotations

import asyncio
import base64
import contextlib
import json
import os
import pty
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = [
    "FAKE_CODEX",
    "AttachedClient",
    "CodexBin",
    "codex_bin",
    "private_socket",
    "read_jsonl",
    "wait_for",
]

FAKE_CODEX = Path(__file__).with_name("fake_codex.py")


@contextlib.contextmanager
def private_socket() -> Iterator[str]:
    """A tmux socket path short enough for AF_UNIX, in its own 0700 directory; the server on it
    is killed afterwards."""
    folder = tempfile.mkdtemp(prefix="kx-", dir="/tmp")
    socket = os.path.join(folder, "tmux.sock")
    try:
        yield socket
    finally:
        subprocess.run(["tmux", "-S", socket, "kill-server"], capture_output=True, check=False)
        shutil.rmtree(folder, ignore_errors=True)


@dataclass(frozen=True)
class CodexBin:
    """A folder with a `codex` that runs the fake, and where it writes."""

    bin_dir: Path
    submit_log: Path
    argv_log: Path

    def env(self, **extra: str) -> dict[str, str]:
        return {
            "PATH": f"{self.bin_dir}:{os.environ.get('PATH', '/usr/bin:/bin')}",
            "FAKE_CODEX_LOG": str(self.submit_log),
            "FAKE_CODEX_ARGV_LOG": str(self.argv_log),
            **extra,
        }

    def submits(self) -> list[dict[str, Any]]:
        return read_jsonl(self.submit_log)

    def launches(self) -> list[dict[str, Any]]:
        return read_jsonl(self.argv_log)

    @staticmethod
    def raw(entry: dict[str, Any]) -> bytes:
        return base64.b64decode(entry["raw"])


def codex_bin(folder: Path) -> CodexBin:
    bin_dir = folder / "bin"
    bin_dir.mkdir(parents=True, exist_ok=True)
    script = bin_dir / "codex"
    script.write_text(f'#!/bin/sh\nexec {sys.executable} {FAKE_CODEX} "$@"\n', encoding="utf-8")
    script.chmod(0o755)
    return CodexBin(bin_dir, folder / "submits.jsonl", folder / "argv.jsonl")


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    if not path.exists():
        return []
    out: list[dict[str, Any]] = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        try:
            out.append(json.loads(line))
        except ValueError:
            break  # the writer is part way through its last line
    return out


async def wait_for(
    check: Callable[[], Awaitable[bool]] | Callable[[], bool], timeout: float, what: str
) -> None:
    """Poll an outside process's state (never a timer of ours) until it holds."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        result = check()
        if asyncio.iscoroutine(result):
            result = await result
        if result:
            return
        await asyncio.sleep(0.02)
    raise AssertionError(f"timed out after {timeout} s waiting for {what}")


class AttachedClient:
    """`tmux attach` on a pseudo-terminal: a person at the keyboard, driven by the test."""

    def __init__(self, socket: str, session: str, *, window: str | None = None) -> None:
        self.master, slave = pty.openpty()
        env = {k: v for k, v in os.environ.items() if k not in ("TMUX", "TMUX_PANE")}
        env["TERM"] = "xterm-256color"
        target = f"{session}:{window}" if window else session
        self.process = subprocess.Popen(
            ["tmux", "-S", socket, "attach", "-t", target],
            stdin=slave,
            stdout=slave,
            stderr=slave,
            env=env,
            start_new_session=True,
        )
        os.close(slave)
        self._stop = False
        self._drain = threading.Thread(target=self._read, daemon=True)
        self._drain.start()

    def _read(self) -> None:
        while not self._stop:
            try:
                if not os.read(self.master, 65536):
                    return
            except OSError:
                return

    def type(self, text: str, *, gap: float = 0.03) -> None:
        """Key by key, as a person types (slower than any paste burst)."""
        for char in text:
            os.write(self.master, char.encode())
            time.sleep(gap)

    def close(self) -> None:
        self._stop = True
        with contextlib.suppress(ProcessLookupError):
            self.process.terminate()
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.process.wait(5)
        with contextlib.suppress(OSError):
            os.close(self.master)
