"""tmux through one control-mode connection (`tmux -C`): each command is a line on its stdin and
its answer a %begin/%end block, so a trigger costs no process start (libtmux and the tmux CLI
start one process per call; see docs/benchmarks.md for the measured difference).

The connection attaches to its own small session (`_kronii_control`), never to an agent's, so it
is not an attached client of any workspace and it does not resize anyone's window. What the
supervisor asks over it (probes, screens, keys, new windows) is adapters/tmux.py's.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import re
from collections import deque
from collections.abc import Sequence

from kronii.supervisor.ports import TerminalError

__all__ = [
    "ANSWER_TIMEOUT_SECS",
    "ATTACH_TIMEOUT_SECS",
    "CONTROL_SESSION",
    "TmuxConnection",
    "TmuxError",
    "TmuxUnanswered",
    "environment_without_tmux",
    "quote",
    "says_gone",
]

log = logging.getLogger(__name__)

CONTROL_SESSION = "_kronii_control"
_BLOCK = re.compile(r"^%(begin|end|error) (\d+) (\d+) (\d+)$")


class TmuxError(TerminalError):
    """tmux answered a command with an error (`%error`): the message is tmux's own."""


class TmuxUnanswered(TmuxError):
    """tmux could not be asked: the control connection is not attached yet, ended, or gave no
    answer in time. Says nothing about any pane."""


# How long tmux may take to attach a new control client, and to answer a batch of commands.
ATTACH_TIMEOUT_SECS = 10.0
ANSWER_TIMEOUT_SECS = 10.0


def says_gone(error: Exception) -> bool:
    """Whether tmux itself answered that the target does not exist ("can't find pane: %3",
    "can't find session: ..."); a connection that could not ask says nothing of the kind."""
    return (
        isinstance(error, TmuxError) and not isinstance(error, TmuxUnanswered) and "can't find" in str(error)
    )


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


class _Connection:
    """One control client: its process, its reader, and the answers it still owes, in the order
    the commands were written. A connection that ended fails only its own commands, never those of
    the one opened after it."""

    def __init__(self, proc: asyncio.subprocess.Process) -> None:
        self.proc = proc
        self.pending: deque[asyncio.Future[list[str]]] = deque()
        # Done when tmux ran the client's own command (new-session -A): attached, so commands
        # that need a current client (refresh-client) can be sent.
        self.attached: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self.reader: asyncio.Task[None] | None = None
        self.ended = False

    @property
    def alive(self) -> bool:
        return not self.ended and self.proc.returncode is None

    def fail_pending(self, error: Exception) -> None:
        while self.pending:
            future = self.pending.popleft()
            if not future.done():
                future.set_exception(error)
        if not self.attached.done():
            self.attached.set_exception(error)
            self.attached.exception()  # retrieved: nobody may be waiting for it any more


class TmuxConnection:
    """A tmux server reached through one control-mode client. Commands are pipelined and answered
    in order; a lost connection is re-opened on the next command, and a new one takes commands
    only once tmux attached it."""

    def __init__(self, socket: str | None = None, binary: str = "tmux") -> None:
        self.socket = socket
        self.binary = binary
        self._conn: _Connection | None = None
        self._lock = asyncio.Lock()
        self._closing = False

    def base_argv(self) -> list[str]:
        return [self.binary, *(["-S", self.socket] if self.socket else [])]

    @property
    def connected(self) -> bool:
        return self._conn is not None and self._conn.alive

    @property
    def pid(self) -> int | None:
        """The control client's process id, while it runs."""
        return self._conn.proc.pid if self.connected and self._conn is not None else None

    async def start(self) -> None:
        """Open the control connection and wait until tmux attached it (commands read before
        that fail when they need a current client: "no current client", ~1 start in 100)."""
        async with self._lock:
            if self.connected:
                return
            self._closing = False
            argv = [
                *self.base_argv(), "-C", "new-session", "-A", "-s", CONTROL_SESSION, "-x", "80", "-y", "24",
                "sleep", "2147483647",
            ]  # fmt: skip
            proc = await asyncio.create_subprocess_exec(
                *argv,
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.DEVNULL,
                limit=4 * 1024 * 1024,
                start_new_session=True,
                env=environment_without_tmux(),
            )
            conn = _Connection(proc)
            conn.reader = asyncio.create_task(self._read(conn), name="tmux-control")
            try:
                await asyncio.wait_for(asyncio.shield(conn.attached), ATTACH_TIMEOUT_SECS)
            except (TmuxError, TimeoutError) as error:
                await self._end(conn)
                late = isinstance(error, TimeoutError)
                why = f"did not attach within {ATTACH_TIMEOUT_SECS:g} s" if late else f"was refused: {error}"
                raise TmuxUnanswered(f"tmux's control client {why}") from None
            self._conn = conn
            # No output notifications: the supervisor reads screens when it needs them.
            try:
                await self._send(conn, [["refresh-client", "-f", "no-output"]])
            except TmuxError as error:
                log.warning("tmux kept output notifications on for its control client: %s", error)

    async def close(self) -> None:
        self._closing = True
        conn, self._conn = self._conn, None
        if conn is not None:
            await self._end(conn)

    async def _end(self, conn: _Connection) -> None:
        proc = conn.proc
        if proc.returncode is None:
            with contextlib.suppress(Exception):
                assert proc.stdin is not None
                proc.stdin.close()
            try:
                await asyncio.wait_for(proc.wait(), 2.0)
            except TimeoutError:
                with contextlib.suppress(ProcessLookupError):
                    proc.kill()
                await proc.wait()
        if conn.reader is not None:
            conn.reader.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await conn.reader
        conn.ended = True
        conn.fail_pending(TmuxUnanswered("the tmux control connection closed"))

    async def _read(self, conn: _Connection) -> None:
        assert conn.proc.stdout is not None
        block: list[str] | None = None
        number = ""
        mine = False
        try:
            while True:
                raw = await conn.proc.stdout.readline()
                if not raw:
                    break
                line = raw.decode("utf-8", errors="replace").rstrip("\n")
                marker = _BLOCK.match(line)
                if block is None:
                    if marker and marker.group(1) == "begin":
                        block, number, mine = [], marker.group(3), marker.group(4) == "1"
                    continue  # notifications outside blocks are not needed
                if marker and marker.group(1) in ("end", "error") and marker.group(3) == number:
                    self._close_block(conn, block, failed=marker.group(1) == "error", mine=mine)
                    block = None
                    continue
                block.append(line)
        finally:
            conn.ended = True
            if not self._closing and conn is self._conn:
                log.warning("the tmux control connection ended; it is re-opened on the next command")
            conn.fail_pending(TmuxUnanswered("the tmux control connection ended"))

    @classmethod
    def _close_block(cls, conn: _Connection, block: list[str], *, failed: bool, mine: bool) -> None:
        """A command's output block ended: its answer, or the client's own new-session -A."""
        if mine:
            cls._answer(conn, block, failed)
        elif not conn.attached.done():
            # The client's own command (new-session -A) ran: attached, or refused.
            if failed:
                conn.attached.set_exception(TmuxError("; ".join(block) or "new-session failed"))
            else:
                conn.attached.set_result(None)

    @staticmethod
    def _answer(conn: _Connection, block: list[str], failed: bool) -> None:
        future = conn.pending.popleft() if conn.pending else None
        if future is None or future.done():
            return  # nobody asked, or its caller gave up waiting (a timeout)
        if failed:
            future.set_exception(TmuxError("; ".join(block) or "tmux command failed"))
        else:
            future.set_result(block)

    async def command(self, *args: str) -> list[str]:
        """Run one tmux command and return its output lines (TmuxError on %error)."""
        return await self.commands([list(args)])

    async def commands(self, commands: Sequence[Sequence[str]]) -> list[str]:
        """Several commands pipelined, one line each (tmux answers each line with its own block,
        and a failing line cannot swallow the next one's answer); their output concatenated.
        TmuxUnanswered when tmux could not be asked, TmuxError when it answered with an error."""
        if not self.connected:
            await self.start()
        conn = self._conn
        if conn is None or not conn.alive:
            raise TmuxUnanswered("the tmux control connection ended while it was opened")
        return await self._send(conn, commands)

    async def _send(self, conn: _Connection, commands: Sequence[Sequence[str]]) -> list[str]:
        stdin = conn.proc.stdin
        assert stdin is not None
        loop = asyncio.get_running_loop()
        futures: list[asyncio.Future[list[str]]] = []
        lines: list[bytes] = []
        for command in commands:
            future: asyncio.Future[list[str]] = loop.create_future()
            futures.append(future)
            conn.pending.append(future)
            lines.append(" ".join(quote(arg) for arg in command).encode("utf-8") + b"\n")
        try:
            stdin.write(b"".join(lines))
            await stdin.drain()
        except (ConnectionError, BrokenPipeError, RuntimeError) as error:
            raise TmuxUnanswered(f"the tmux control connection is gone: {error}") from None
        try:
            results = await asyncio.wait_for(
                asyncio.gather(*futures, return_exceptions=True), ANSWER_TIMEOUT_SECS
            )
        except TimeoutError:
            raise TmuxUnanswered(f"tmux gave no answer within {ANSWER_TIMEOUT_SECS:g} s") from None
        out: list[str] = []
        for result in results:
            if isinstance(result, BaseException):
                raise result
            out.extend(result)
        return out


def environment_without_tmux() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if k not in ("TMUX", "TMUX_PANE")}
