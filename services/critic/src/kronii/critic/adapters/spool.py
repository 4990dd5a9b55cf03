"""The critic's end of the shell hooks (see kronii.critic.adapters.shell_init for the directory):
SpoolReader turns the lines the hooks append into InvocationEvents, HintBox puts a hint where a
shell's next prompt reads it.

Reading without losing a line: a pass renames ``spool`` to ``spool.draining.<n>`` and reads it; a
hook appending after the rename creates a new ``spool`` (its ``>>`` does), and one that opened the
file just before the rename still writes into the renamed one, so that file is read again (through
the descriptor the reader holds) at each pass for DRAINING_GRACE_S. Malformed lines are counted and
skipped.

No clear text left behind: once the events of a renamed file have been handed over (the consumer
asked for the next ones, see ``events``), its name is removed at once; the reader keeps reading it
through its descriptor for the rest of the grace and the kernel frees it when that closes. A reader
that stopped before handing its events over (a crash) leaves the file, and the next reader reads it
again: every event carries ``event_id``, made from the renamed file's name and the line's byte
offset in it, so the same line read twice is the same command, kept once under that id.

Waking up: inotify on the directory (through ctypes: not in the standard library) wakes the reader
within a millisecond of an append, which the bash and zsh hooks need (they wait at most 20 ms for
a hint after a failing command). Without inotify it polls the spool's size: every 5 ms while lines
arrive, backing off to 50 ms when idle."""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import dataclasses
import hashlib
import os
import re
import stat
import struct
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from pathlib import Path

from kronii.critic.adapters.shell_init import CLOCK_PREFIX, HINT_PREFIX, HISTORY_PREFIX, PID_NAME, SPOOL_NAME
from kronii.critic.core.model import InvocationEvent
from kronii.critic.core.spool_line import MalformedLine, decode_line

__all__ = ["HintBox", "SpoolReader", "session_alive"]

DRAINING_PREFIX = SPOOL_NAME + ".draining."
# A hook that opened the spool just before it was renamed writes within microseconds; a renamed file
# is read again for this long (a writer held up longer than this between open and write loses its line).
DRAINING_GRACE_S = 2.0
BUSY_POLL_S = 0.005
IDLE_POLL_S = 0.05
# How long polling stays fast after the last line arrived.
_BUSY_FOR_S = 1.0
# Even with inotify, look now and then (a missed event costs at most this).
_INOTIFY_SAFETY_S = 1.0
_IN_MODIFY, _IN_CLOSE_WRITE, _IN_MOVED_TO, _IN_CREATE = 0x2, 0x8, 0x80, 0x100
_EVENT_HEADER = struct.Struct("iIII")
_SESSION = re.compile(r"^(\d{1,10})-(\d{1,20})$")
_UNPRINTABLE = re.compile(r"[\x00-\x1f\x7f-\x9f]+")
_HINT_MAX_CHARS = 200


def _wall_ms() -> int:
    return time.time_ns() // 1_000_000


class _Inotify:
    """A non-blocking inotify descriptor watching one directory, or None when the kernel or libc
    has none."""

    def __init__(self, fd: int) -> None:
        self.fd = fd

    @classmethod
    def watch(cls, directory: Path) -> _Inotify | None:
        try:
            libc = ctypes.CDLL(None, use_errno=True)
            fd = int(libc.inotify_init1(os.O_NONBLOCK | os.O_CLOEXEC))
        except (OSError, AttributeError):
            return None
        if fd < 0:
            return None
        mask = _IN_MODIFY | _IN_CLOSE_WRITE | _IN_MOVED_TO | _IN_CREATE
        if int(libc.inotify_add_watch(fd, os.fsencode(directory), mask)) < 0:
            os.close(fd)
            return None
        return cls(fd)

    def spool_touched(self) -> bool:
        """Reads every pending event; True when one was about the spool or a renamed one."""
        touched = False
        while True:
            try:
                data = os.read(self.fd, 65536)
            except BlockingIOError:
                return touched
            offset = 0
            while offset + _EVENT_HEADER.size <= len(data):
                _, _, _, length = _EVENT_HEADER.unpack_from(data, offset)
                name = data[offset + _EVENT_HEADER.size : offset + _EVENT_HEADER.size + length]
                touched = touched or name.startswith(SPOOL_NAME.encode())
                offset += _EVENT_HEADER.size + length

    def close(self) -> None:
        with contextlib.suppress(OSError):
            os.close(self.fd)


@dataclass
class _Draining:
    """A renamed spool still read: a hook that opened it just before the rename writes into it."""

    path: Path
    fd: int
    renamed_at: float  # time.monotonic()
    pending: bytearray = field(default_factory=bytearray)  # a line without its end yet
    consumed: int = 0  # bytes of whole lines read so far: the next line's offset
    unlinked: bool = False


def event_id(spool_name: str, offset: int) -> str:
    """The id of the line at byte ``offset`` of the renamed spool ``spool_name``: 32 hex digits, the
    same each time that line is read."""
    return hashlib.sha256(f"{spool_name}:{offset}".encode()).hexdigest()[:32]


class SpoolReader:
    """Reads the hooks' spool in ``directory``; ``events()`` yields them as they arrive. Counters:
    ``lines`` read, ``malformed`` skipped."""

    def __init__(self, directory: Path, *, clock_ms: Callable[[], int] = _wall_ms) -> None:
        self.directory = Path(directory)
        self._clock_ms = clock_ms
        self._draining: list[_Draining] = []
        self.lines = 0
        self.malformed = 0

    @property
    def spool(self) -> Path:
        return self.directory / SPOOL_NAME

    def read_available(self) -> list[InvocationEvent]:
        """One pass: what the renamed files still get (each is let go DRAINING_GRACE_S after its
        rename), files a stopped reader left, then what the spool has (renamed in turn)."""
        now = time.monotonic()
        self.acknowledge()  # the caller is back for more: what it was given before is taken
        events: list[InvocationEvent] = []
        for draining in list(self._draining):
            events += self._read(draining, final=now - draining.renamed_at >= DRAINING_GRACE_S)
        held = {draining.path for draining in self._draining}
        for leftover in sorted(self.directory.glob(DRAINING_PREFIX + "*")):
            if leftover not in held:
                events += self._read(self._hold(leftover, float("-inf")), final=True)
        try:
            size = os.stat(self.spool).st_size
        except FileNotFoundError:
            return events
        if size:
            renamed = self.directory / f"{DRAINING_PREFIX}{time.time_ns()}"
            os.replace(self.spool, renamed)
            self._recreate_spool()
            events += self._read(self._hold(renamed, now), final=False)
        return events

    def acknowledge(self) -> None:
        """The events read so far were taken: the names of the renamed files they came from go (the
        files themselves are still read through their descriptors until their grace ends)."""
        for draining in self._draining:
            if not draining.unlinked:
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(draining.path)
                draining.unlinked = True

    def _recreate_spool(self) -> None:
        # Ahead of the hooks, so that their `>>` finds a 0600 file and not one made with their umask
        # (a hook that appended in between made it: it is tightened).
        try:
            os.close(os.open(self.spool, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600))
        except FileExistsError:
            with contextlib.suppress(OSError):
                if os.lstat(self.spool).st_mode & 0o077:
                    os.chmod(self.spool, 0o600, follow_symlinks=False)

    def _hold(self, path: Path, renamed_at: float) -> _Draining:
        draining = _Draining(path, os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC), renamed_at)
        self._draining.append(draining)
        return draining

    def _read(self, draining: _Draining, *, final: bool) -> list[InvocationEvent]:
        while chunk := os.read(draining.fd, 1 << 20):
            draining.pending += chunk
        cut = draining.pending.rfind(b"\n") + 1
        complete = bytes(draining.pending[:cut])
        del draining.pending[:cut]
        start = draining.consumed
        draining.consumed += cut
        if final:
            self._let_go(draining)
        return self._decode(complete, draining.path.name, start)

    def _let_go(self, draining: _Draining) -> None:
        self._draining.remove(draining)
        os.close(draining.fd)
        if draining.pending.strip():
            self.malformed += 1  # a line without its end: not written by a hook
        with contextlib.suppress(FileNotFoundError):
            os.unlink(draining.path)

    def _decode(self, data: bytes, name: str, start: int) -> list[InvocationEvent]:
        events = []
        read_at = self._clock_ms()
        offset = start
        for raw in data.split(b"\n")[:-1]:  # every line ends with its newline
            at, offset = offset, offset + len(raw) + 1
            if not raw.strip():
                continue
            self.lines += 1
            try:
                event = decode_line(raw.decode("utf-8", "replace"), read_at_ms=read_at).event
            except MalformedLine:
                self.malformed += 1
                continue
            events.append(dataclasses.replace(event, event_id=event_id(name, at)))
        return events

    async def events(self) -> AsyncIterator[InvocationEvent]:
        """Every event, as it arrives, until cancelled."""
        inotify = _Inotify.watch(self.directory)
        wake = asyncio.Event()
        loop = asyncio.get_running_loop()
        if inotify is not None:
            watcher = inotify

            def on_inotify() -> None:
                if watcher.spool_touched():
                    wake.set()

            loop.add_reader(inotify.fd, on_inotify)
        last_line = float("-inf")
        try:
            while True:
                events = self.read_available()
                for event in events:
                    yield event
                self.acknowledge()  # the consumer came back: it has taken every event of the pass
                if events:
                    last_line = time.monotonic()
                await self._pause(wake, inotify is not None, time.monotonic() - last_line)
        finally:
            if inotify is not None:
                loop.remove_reader(inotify.fd)
                inotify.close()
            self.close()

    async def _pause(self, wake: asyncio.Event, notified: bool, since_last_line: float) -> None:
        if notified:
            timeout = _INOTIFY_SAFETY_S
            if self._draining:
                oldest = min(draining.renamed_at for draining in self._draining)
                timeout = max(0.0, min(timeout, oldest + DRAINING_GRACE_S - time.monotonic()))
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(wake.wait(), timeout)
        else:
            await asyncio.sleep(BUSY_POLL_S if since_last_line < _BUSY_FOR_S else IDLE_POLL_S)
        wake.clear()

    def close(self) -> list[InvocationEvent]:
        """Reads the renamed files a last time, removes them and returns what that read found (a
        cancelled events() drops those: lines written in its last milliseconds)."""
        events: list[InvocationEvent] = []
        for draining in list(self._draining):
            events += self._read(draining, final=True)
        return events


def _process_start(pid: int) -> str | None:
    """Field 22 of /proc/<pid>/stat (start time in clock ticks since boot), None without it."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text("ascii", "replace")
    except OSError:
        return None
    fields = text.rpartition(")")[2].split()
    return fields[19] if len(fields) > 19 else None


def session_alive(session: str) -> bool:
    """Whether the shell of ``session`` ("<pid>-<start>", as the hooks make it) still runs: the pid
    exists and, where /proc tells, started at that same tick (a reused pid is not it)."""
    match = _SESSION.match(session)
    if match is None:
        return False
    pid = int(match.group(1))
    started = _process_start(pid)
    if started is not None:
        return started == match.group(2)
    if Path("/proc/self/stat").exists():
        return False  # /proc works, and has no such process
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def one_line(text: str, max_chars: int = _HINT_MAX_CHARS) -> str:
    """A hint as the prompt prints it: one line, no control characters (no terminal escapes from a
    command's text), at most ``max_chars``."""
    flat = _UNPRINTABLE.sub(" ", text).strip()
    return flat if len(flat) <= max_chars else flat[: max_chars - 1].rstrip() + "…"


class HintBox:
    """The critic's hints to the shells' prompts. bash and zsh read a FIFO, ``hint-<session>``, that
    their init made: HintBox keeps it open read-write and non-blocking, so a write never blocks and
    stays in the pipe until the prompt reads it; an unread older hint is dropped first, so a prompt
    shows the newest. fish reads a plain file of that name (it has no read with a timeout)."""

    def __init__(self, directory: Path, *, alive: Callable[[str], bool] = session_alive) -> None:
        self.directory = Path(directory)
        self._alive = alive
        self._fifos: dict[str, int] = {}
        self.sent = 0
        self.dropped = 0

    def start(self) -> None:
        """Says the critic runs (critic.pid, which makes the hooks wait briefly after a failure)."""
        self.directory.mkdir(mode=0o700, parents=True, exist_ok=True)
        temporary = self.directory / f".{PID_NAME}.{os.getpid()}"
        fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
        with os.fdopen(fd, "w") as handle:
            handle.write(f"{os.getpid()}\n")
        os.replace(temporary, self.directory / PID_NAME)

    def send(self, session: str, text: str) -> bool:
        """Queues ``text`` (made one short line) for the next prompt of ``session``; False when the
        shell is gone or its hint could not be written."""
        line = one_line(text)
        if not line:
            return False  # nothing to say; a hint still waiting in the FIFO stays there
        if not self._alive(session):
            self._forget(session)
            return False
        path = self.directory / f"{HINT_PREFIX}{session}"
        data = (line + "\n").encode("utf-8", "replace")
        try:
            mode = os.lstat(path).st_mode
        except FileNotFoundError:
            mode = 0
        try:
            if stat.S_ISFIFO(mode):
                self._write_fifo(session, path, data)
            else:
                self._append_file(path, data)
        except OSError:
            self.dropped += 1
            return False
        self.sent += 1
        return True

    def _write_fifo(self, session: str, path: Path, data: bytes) -> None:
        fd = self._fifos.get(session)
        if fd is None:
            fd = os.open(path, os.O_RDWR | os.O_NONBLOCK | os.O_CLOEXEC)
            self._fifos[session] = fd
        with contextlib.suppress(BlockingIOError):
            while os.read(fd, 65536):  # an older hint the prompt has not shown: the new one wins
                pass
        os.write(fd, data)

    def _append_file(self, path: Path, data: bytes) -> None:
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
        try:
            os.write(fd, data)
        finally:
            os.close(fd)

    def forget_gone(self) -> list[str]:
        """Closes and removes the FIFOs and scratch files of shells that have exited."""
        sessions = set(self._fifos)
        for entry in os.scandir(self.directory):
            for prefix in (HINT_PREFIX, HISTORY_PREFIX, CLOCK_PREFIX):
                if entry.name.startswith(prefix):
                    sessions.add(entry.name[len(prefix) :])
        gone = sorted(session for session in sessions if not self._alive(session))
        for session in gone:
            self._forget(session)
        return gone

    def _forget(self, session: str) -> None:
        fd = self._fifos.pop(session, None)
        if fd is not None:
            os.close(fd)
        if _SESSION.match(session) is None:
            return
        for prefix in (HINT_PREFIX, HISTORY_PREFIX, CLOCK_PREFIX):
            with contextlib.suppress(FileNotFoundError):
                os.unlink(self.directory / f"{prefix}{session}")

    def close(self) -> None:
        """Lets every FIFO go and withdraws critic.pid when it is this process's."""
        for fd in self._fifos.values():
            os.close(fd)
        self._fifos.clear()
        pid_file = self.directory / PID_NAME
        with contextlib.suppress(OSError):
            if pid_file.read_text().strip() == str(os.getpid()):
                pid_file.unlink()
