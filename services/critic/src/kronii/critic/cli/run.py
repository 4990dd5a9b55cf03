"""`kronii run -- CMD ARGS...`: run a command as the shell would (standard input and output are the
terminal's), copy its stderr to the terminal as it comes while keeping the last 8 KB, then tell the
console critic what happened (the command line, where, the exit status, how long, and for a failing
command the error text), and exit with the command's own status.

The critic is told within a short deadline; when it is not running nothing is said and nothing waits.
The command's stderr is a pipe, not the terminal, so a program that colours only a terminal prints
plain text on stderr. Ctrl-C reaches the command (it is in the terminal's foreground group); this
process outlives it to report, and exits 128 + N for a command killed by signal N, as shells do.

Only the standard library loads before the command runs."""

from __future__ import annotations

import contextlib
import os
import shlex
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from datetime import UTC, datetime
from types import FrameType
from typing import Any

import click
from kronii.critic.cli.http import SESSION_ENV, critic_url

__all__ = ["REPORT_TIMEOUT_SECS", "TAIL_BYTES", "main", "run_command", "run_teeing"]

TAIL_BYTES = 8 * 1024
# Connecting to a local port that nothing listens on fails at once; this bounds a critic that
# accepts but does not answer.
REPORT_TIMEOUT_SECS = 0.3
_NOT_FOUND, _NOT_EXECUTABLE = 127, 126


def _stderr_writer() -> Callable[[bytes], None]:
    stream: Any = sys.stderr
    binary = getattr(stream, "buffer", None)

    def write(chunk: bytes) -> None:
        try:
            if binary is not None:
                binary.write(chunk)
                binary.flush()
            else:
                stream.write(chunk.decode("utf-8", errors="replace"))
                stream.flush()
        except (OSError, ValueError):  # the terminal went away: the command still runs to its end
            pass

    return write


@contextlib.contextmanager
def _signals_for(child: subprocess.Popen[bytes]) -> Iterator[None]:
    """While the command runs: Ctrl-C and Ctrl-\\ are the command's to handle (the terminal sends
    them to it too), and a SIGTERM or SIGHUP sent to this process is passed on to it."""

    def ignore(signum: int, frame: FrameType | None) -> None:
        pass

    def forward(signum: int, frame: FrameType | None) -> None:
        with contextlib.suppress(ProcessLookupError):
            child.send_signal(signum)

    wanted: dict[int, Callable[[int, FrameType | None], None]] = {
        signal.SIGINT: ignore,
        signal.SIGQUIT: ignore,
        signal.SIGTERM: forward,
        signal.SIGHUP: forward,
    }
    previous: dict[int, Any] = {}
    try:
        for signum, handler in wanted.items():
            previous[signum] = signal.signal(signum, handler)
    except ValueError:  # not the main thread: leave the signals alone
        pass
    try:
        yield
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)


def run_teeing(argv: Sequence[str], echo: Callable[[bytes], None]) -> tuple[int, bytes]:
    """Run ``argv`` with stdin and stdout inherited and stderr copied to ``echo``; (its exit status
    as a shell reports it, the last TAIL_BYTES of its stderr)."""
    try:
        # Handlers set with signal.signal are reset to the default in the child by exec.
        child = subprocess.Popen(list(argv), stderr=subprocess.PIPE)
    except OSError as error:
        status = _NOT_FOUND if isinstance(error, FileNotFoundError) else _NOT_EXECUTABLE
        reason = "command not found" if status == _NOT_FOUND else (error.strerror or str(error))
        said = f"kronii: run: {argv[0]}: {reason}\n".encode()
        echo(said)
        return status, said
    assert child.stderr is not None
    tail = bytearray()
    with _signals_for(child):
        source = child.stderr.fileno()
        while chunk := os.read(source, 65536):
            echo(chunk)
            tail += chunk
            del tail[:-TAIL_BYTES]
        child.stderr.close()
        code = child.wait()
    return (128 - code if code < 0 else code), bytes(tail)


def _tty() -> str:
    try:
        return os.ttyname(0) if os.isatty(0) else ""
    except OSError:
        return ""


def _cwd() -> str:
    try:
        return os.getcwd()
    except OSError:
        return ""


def report(event: dict[str, Any], url: str | None = None) -> None:
    """Tell the critic, quietly: a critic that is down, slow or refusing changes nothing here."""
    try:
        from kronii.launcher.local_http import JsonClient

        JsonClient(url or critic_url(), REPORT_TIMEOUT_SECS).request("POST", "/v1/critic/events", json=event)
    except (OSError, SystemExit, ValueError):  # SystemExit: the settings are invalid (SettingsError)
        pass


def event_body(
    argv: Sequence[str], cwd: str, status: int, started_ms: int, duration_ms: int, tail: bytes
) -> dict[str, Any]:
    """The InvocationEvent to report. Error text only for a failing command: what a command that
    succeeded wrote to stderr stays here."""
    started = datetime.fromtimestamp(started_ms / 1000, UTC).isoformat(timespec="milliseconds")
    return {
        "shell": "run",
        "session": os.environ.get(SESSION_ENV, ""),
        "tty": _tty(),
        "cwd": cwd,
        "command_line": shlex.join(argv),
        "exit_status": status,
        "started": started.replace("+00:00", "Z"),
        "duration_ms": duration_ms,
        "error_text": tail.decode("utf-8", errors="replace") if status else "",
    }


@click.command(
    "run",
    context_settings={
        "help_option_names": ["-h", "--help"],
        "ignore_unknown_options": True,
        "allow_interspersed_args": False,
    },
    short_help="run a command and tell the critic how it went (its stderr too)",
)
@click.argument("command", nargs=-1, required=True, type=click.UNPROCESSED, metavar="-- CMD [ARGS]...")
def run_command(command: tuple[str, ...]) -> None:
    """Run CMD with your terminal, show its stderr as it comes and keep its last 8 KB, then tell the
    console critic the command line, directory, exit status, duration and (when it failed) the error
    text. Exits with CMD's own status; says nothing when the critic is not running."""
    argv = list(command)
    cwd, started_ms, began = _cwd(), time.time_ns() // 1_000_000, time.monotonic()
    status, tail = run_teeing(argv, _stderr_writer())
    duration_ms = int((time.monotonic() - began) * 1000)
    report(event_body(argv, cwd, status, started_ms, duration_ms, tail))
    raise SystemExit(status)


def main(argv: Sequence[str] | None = None) -> int:
    """`kronii run ...` as `kronii` runs it; a leading "run" is optional."""
    from kronii.launcher.cli.main import main as kronii_main

    arguments = list(sys.argv[1:] if argv is None else argv)
    if arguments[:1] == ["run"]:
        arguments = arguments[1:]
    return kronii_main(["run", *arguments])
