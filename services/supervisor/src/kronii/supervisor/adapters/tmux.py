"""tmux through one control-mode connection (`tmux -C`): each command is a line on its stdin and
its answer a %begin/%end block, so a trigger costs no process start (libtmux and the tmux CLI
start one process per call; see docs/benchmarks.md for the measured difference).

The connection attaches to its own small session (`_kronii_control`), never to an agent's, so it
is not an attached client of any workspace and it does not resize anyone's window.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import re
import uuid
from collections import deque
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

__all__ = [
    "CONTROL_SESSION",
    "SHELLS",
    "PaneProbe",
    "TmuxControl",
    "TmuxError",
    "foreground_of",
    "quote",
]

log = logging.getLogger(__name__)

CONTROL_SESSION = "_kronii_control"
SHELLS = frozenset(
    {"sh", "bash", "dash", "zsh", "fish", "ksh", "mksh", "tcsh", "csh", "ash", "busybox", "nu"}
)
_BLOCK = re.compile(r"^%(begin|end|error) (\d+) (\d+) (\d+)$")
_PANE_FORMAT = "P\t#{pane_id}\t#{pane_pid}\t#{pane_dead}\t#{cursor_y}\t#{pane_height}\t#{session_name}\t#{cursor_x}\t#{pane_current_command}"
_CLIENT_FORMAT = "C\t#{client_control_mode}\t#{client_activity}"


# Waits for the go line, runs the command, and leaves its exit status in $KRONII_EXIT_FILE.
_REPORT_EXIT = 'IFS= read -r _; "$@"; s=$?; printf "%s\\n" "$s" > "$KRONII_EXIT_FILE"; exit "$s"'


class TmuxError(RuntimeError):
    pass


def quote(arg: str) -> str:
    """One argument in tmux's command language: single quotes (no expansion inside), with single
    quotes and newlines spliced in from double-quoted pieces."""
    if arg == "":
        return "''"
    out: list[str] = []
    for index, part in enumerate(arg.split("\n")):
        if index:
            out.append('"\\n"')
        pieces = part.split("'")
        for j, piece in enumerate(pieces):
            if j:
                out.append('"\'"')
            if piece:
                out.append(f"'{piece}'")
    return "".join(out)


@dataclass(frozen=True, slots=True)
class PaneProbe:
    """One look at a pane, its session's clients and its screen."""

    pane_id: str
    pane_pid: int
    dead: bool
    cursor_y: int
    session: str
    current_command: str
    # Latest activity (epoch seconds) of each attached client that is not a control client.
    human_client_activity: tuple[float, ...]
    screen: tuple[str, ...]
    cursor_x: int = 0


def foreground_of(pane_pid: int) -> int | None:
    """The foreground process group of the pane's terminal, from /proc/<pane_pid>/stat (tpgid)."""
    try:
        raw = Path(f"/proc/{pane_pid}/stat").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    fields = raw[raw.rindex(")") + 2 :].split()
    # After "pid (comm) ": state ppid pgrp session tty_nr tpgid ...
    tpgid = int(fields[5])
    return tpgid if tpgid > 0 else None


def process_name(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/comm").read_text(encoding="utf-8").strip()
    except OSError:
        return ""


def pid_alive(pid: int) -> bool:
    if pid <= 0:
        return False
    try:
        state = Path(f"/proc/{pid}/stat").read_text(encoding="utf-8")
    except OSError:
        return False
    return state[state.rindex(")") + 2 :].split()[0] not in ("Z", "X")


class TmuxControl:
    """A tmux server reached through one control-mode client. Commands are pipelined and answered
    in order; a lost connection is re-opened on the next command."""

    def __init__(self, socket: str | None = None, binary: str = "tmux") -> None:
        self.socket = socket
        self.binary = binary
        self._proc: asyncio.subprocess.Process | None = None
        self._reader: asyncio.Task[None] | None = None
        self._pending: deque[asyncio.Future[list[str]]] = deque()
        self._lock = asyncio.Lock()
        self._closing = False

    def base_argv(self) -> list[str]:
        return [self.binary, *(["-S", self.socket] if self.socket else [])]

    @property
    def connected(self) -> bool:
        return self._proc is not None and self._proc.returncode is None

    async def start(self) -> None:
        async with self._lock:
            if self.connected:
                return
            self._closing = False
            argv = [
                *self.base_argv(), "-C", "new-session", "-A", "-s", CONTROL_SESSION, "-x", "80", "-y", "24",
                "sleep", "2147483647",
            ]  # fmt: skip
            self._proc = await asyncio.create_subprocess_exec(
                *argv,
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.DEVNULL,
                limit=4 * 1024 * 1024,
                start_new_session=True,
                env=environment_without_tmux(),
            )
            self._reader = asyncio.create_task(self._read(self._proc), name="tmux-control")
        # No output notifications: the supervisor reads screens when it needs them.
        await self.command("refresh-client", "-f", "no-output")

    async def close(self) -> None:
        self._closing = True
        proc, self._proc = self._proc, None
        if proc is not None and proc.returncode is None:
            with contextlib.suppress(Exception):
                assert proc.stdin is not None
                proc.stdin.close()
            try:
                await asyncio.wait_for(proc.wait(), 2.0)
            except TimeoutError:
                with contextlib.suppress(ProcessLookupError):
                    proc.kill()
                await proc.wait()
        if self._reader is not None:
            self._reader.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._reader
            self._reader = None
        self._fail_pending(TmuxError("the tmux control connection closed"))

    def _fail_pending(self, error: Exception) -> None:
        while self._pending:
            future = self._pending.popleft()
            if not future.done():
                future.set_exception(error)

    async def _read(self, proc: asyncio.subprocess.Process) -> None:
        assert proc.stdout is not None
        block: list[str] | None = None
        number = ""
        mine = False
        try:
            while True:
                raw = await proc.stdout.readline()
                if not raw:
                    break
                line = raw.decode("utf-8", errors="replace").rstrip("\n")
                marker = _BLOCK.match(line)
                if block is None:
                    if marker and marker.group(1) == "begin":
                        block, number, mine = [], marker.group(3), marker.group(4) == "1"
                    continue  # notifications outside blocks are not needed
                if marker and marker.group(1) in ("end", "error") and marker.group(3) == number:
                    if mine and self._pending:
                        future = self._pending.popleft()
                        if not future.done():
                            if marker.group(1) == "end":
                                future.set_result(block)
                            else:
                                future.set_exception(TmuxError("; ".join(block) or "tmux command failed"))
                    block = None
                    continue
                block.append(line)
        finally:
            if not self._closing:
                log.warning("the tmux control connection ended; it is re-opened on the next command")
            self._fail_pending(TmuxError("the tmux control connection ended"))

    async def command(self, *args: str) -> list[str]:
        """Run one tmux command and return its output lines (TmuxError on %error)."""
        return await self.commands([list(args)])

    async def commands(self, commands: Sequence[Sequence[str]]) -> list[str]:
        """Several commands pipelined, one line each (tmux answers each line with its own block,
        and a failing line cannot swallow the next one's answer); their output concatenated."""
        if not self.connected:
            await self.start()
        proc = self._proc
        assert proc is not None and proc.stdin is not None
        loop = asyncio.get_running_loop()
        futures: list[asyncio.Future[list[str]]] = []
        lines: list[bytes] = []
        for command in commands:
            future: asyncio.Future[list[str]] = loop.create_future()
            futures.append(future)
            self._pending.append(future)
            lines.append(" ".join(quote(arg) for arg in command).encode("utf-8") + b"\n")
        proc.stdin.write(b"".join(lines))
        try:
            await proc.stdin.drain()
        except (ConnectionError, BrokenPipeError) as error:
            raise TmuxError(f"the tmux control connection is gone: {error}") from None
        results = await asyncio.wait_for(asyncio.gather(*futures, return_exceptions=True), 10.0)
        out: list[str] = []
        for result in results:
            if isinstance(result, BaseException):
                raise result
            out.extend(result)
        return out

    # ---- what the supervisor asks of tmux ----------------------------------------------------------

    async def probe(self, target: str) -> PaneProbe:
        lines = await self.commands(
            [
                ["display-message", "-p", "-t", target, _PANE_FORMAT],
                ["list-clients", "-t", target, "-F", _CLIENT_FORMAT],
                ["capture-pane", "-p", "-e", "-t", target],
            ]
        )
        if not lines or not lines[0].startswith("P\t"):
            raise TmuxError(f"unexpected answer for pane {target}: {lines[:1]}")
        fields = lines[0].split("\t")
        height = int(fields[5] or 0)
        clients = lines[1 : len(lines) - height] if height else lines[1:]
        activity: list[float] = []
        for client in clients:
            parts = client.split("\t")
            if len(parts) == 3 and parts[0] == "C" and parts[1] != "1" and parts[2].isdigit():
                activity.append(float(parts[2]))
        return PaneProbe(
            pane_id=fields[1],
            pane_pid=int(fields[2] or 0),
            dead=fields[3] == "1",
            cursor_y=int(fields[4] or 0),
            session=fields[6],
            cursor_x=int(fields[7] or 0),
            current_command="\t".join(fields[8:]),
            human_client_activity=tuple(activity),
            screen=tuple(lines[len(lines) - height :]) if height else (),
        )

    async def screen(self, target: str) -> tuple[int, tuple[str, ...]]:
        """The cursor row and the visible screen, with its SGR attributes (`capture-pane -e`)."""
        _, cursor_y, lines = await self.screen_at(target)
        return cursor_y, lines

    async def screen_at(self, target: str) -> tuple[int, int, tuple[str, ...]]:
        """The cursor's column and row, and the visible screen with its SGR attributes, read in
        one round trip (whether the cursor is in the agent's input box depends on both)."""
        lines = await self.commands(
            [
                ["display-message", "-p", "-t", target, "#{cursor_x} #{cursor_y}"],
                ["capture-pane", "-p", "-e", "-t", target],
            ]
        )
        x, _, y = (lines[0] if lines else "0 0").partition(" ")
        return int(x or 0), int(y or 0), tuple(lines[1:])

    async def pane_exit(self, target: str) -> tuple[bool, int | None]:
        """Whether the pane's process has exited (the pane kept by remain-on-exit), and its status."""
        lines = await self.command("display-message", "-p", "-t", target, "#{pane_dead} #{pane_dead_status}")
        dead, _, status = (lines[0] if lines else "0 ").partition(" ")
        return dead == "1", int(status) if status.strip().lstrip("-").isdigit() else None

    async def send_literal(self, target: str, text: str) -> None:
        await self.command("send-keys", "-t", target, "-l", "--", text)

    async def paste(self, target: str, text: str) -> None:
        """A uniquely named buffer, pasted with bracketed paste (-p), LF kept (-r), then deleted (-d)."""
        name = f"kronii-{uuid.uuid4().hex[:12]}"
        await self.commands(
            [
                ["set-buffer", "-b", name, "--", text],
                ["paste-buffer", "-p", "-r", "-d", "-b", name, "-t", target],
            ]
        )

    async def send_keys(self, target: str, keys: Sequence[str]) -> None:
        await self.command("send-keys", "-t", target, *keys)

    async def has_session(self, session: str) -> bool:
        try:
            await self.command("has-session", "-t", f"={session}")
        except TmuxError:
            return False
        return True

    async def start_agent(
        self,
        session: str,
        window: str,
        argv: Sequence[str],
        *,
        env: Mapping[str, str] | None = None,
        cwd: str | None = None,
        width: int = 200,
        height: int = 50,
        keep_on_exit: bool = False,
        status_file: str | None = None,
    ) -> tuple[str, int]:
        """Start `argv` (executed directly, no shell) in a new window of `session` (created when
        missing); returns the pane id and the pid of the process. With `keep_on_exit` the pane
        stays on screen after the process ends, with its last output and exit status."""
        where: list[str] = []
        for key, value in (env or {}).items():
            where += ["-e", f"{key}={value}"]
        if cwd:
            where += ["-c", cwd]
        options: list[str] = ["-P", "-F", "#{pane_id}\t#{pane_pid}", "-n", window, *where]
        # With keep_on_exit the agent waits for one line on its terminal before it starts (the
        # same process then execs it, keeping pid and exit status): remain-on-exit must be on
        # before it runs, or one that fails at once takes its window, and its error, with it.
        # With a status file the shell stays as the pane's process and writes the agent's exit
        # status there (tmux's own #{pane_dead_status} is sometimes never filled in).
        first = list(argv)
        if status_file:
            options += ["-e", f"KRONII_EXIT_FILE={status_file}"]
            first = ["sh", "-c", _REPORT_EXIT, "kronii-start", *argv]
        elif keep_on_exit:
            first = ["sh", "-c", 'IFS= read -r _; exec "$@"', "kronii-start", *argv]
        if await self.has_session(session):
            lines = await self.command("new-window", "-d", "-t", f"={session}:", *options, "--", *first)
        else:
            lines = await self.command(
                "new-session",
                "-d",
                "-s",
                session,
                "-x",
                str(width),
                "-y",
                str(height),
                *options,
                "--",
                *first,
            )
        pane_id, _, pid = lines[0].partition("\t")
        if keep_on_exit or status_file:
            await self.commands(
                [
                    ["set-option", "-p", "-t", pane_id, "remain-on-exit", "on"],
                    ["send-keys", "-t", pane_id, "Enter"],
                ]
            )
        return pane_id, int(pid)

    async def pane_exists(self, pane_id: str) -> bool:
        try:
            lines = await self.command("display-message", "-p", "-t", pane_id, "#{pane_id} #{pane_dead}")
        except TmuxError:
            return False
        return bool(lines) and lines[0] == f"{pane_id} 0"

    async def kill_server(self) -> None:
        with contextlib.suppress(TmuxError, TimeoutError):
            await self.command("kill-server")
        await self.close()


def attach_command(socket: str | None, session: str) -> str:
    """What a person types to watch the agents of a workspace."""
    sock = f" -S {socket}" if socket else ""
    return f"tmux{sock} attach -t {session}"


def environment_without_tmux() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if k not in ("TMUX", "TMUX_PANE")}
