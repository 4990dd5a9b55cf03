"""`kronii capture request|watch|get|list|targets|clients`: the capture service's gRPC API over its
local Unix socket (the same calls agents make; the socket's peer check admits this user). `request`
and `watch` need nothing more; `get` and `list` read screenshots, which needs a person: polkit asks
them (when it runs on the system bus), or else they run this from their own terminal (standard input
a terminal, which the service checks against /proc). One proof opens a short read-only window.

Exit codes (kronii.launcher.cli.exits): 0 done (for `request --wait` and `watch`: the job persisted);
1 the job ended without an image (expired, rejected, failed, cancelled); 2 bad arguments; 3 no such
screenshot, job or window; 4 refused (not allowed, no person present, rate limited); 5 the capture
service (or, for the focused window, the sensor) is not running.

gRPC, httpx and the settings load inside the commands that use them: `kronii capture --help` and
shell completion need only click."""

from __future__ import annotations

import contextlib
import json
import os
import sys
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace
from datetime import UTC
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click
from kronii.capture.cli.clients import clients_command
from kronii.capture.cli.kde import kde_command
from kronii.launcher.cli import exits
from kronii.launcher.cli.exits import CommandError
from kronii.launcher.cli.tables import print_table

if TYPE_CHECKING:
    from datetime import datetime

    import grpc
    from kronii.capture.v1 import capture_pb2_grpc as pb_grpc

__all__ = ["capture_command", "focused_window", "main", "presence_metadata"]

_BYPASS = {"strict": 1, "window_relaxed": 2, "app_relaxed": 3, "focus_next": 4}
_PRIORITY = {"low": 1, "normal": 2, "high": 3}

Metadata = tuple[tuple[str, str], ...]


@dataclass(frozen=True)
class Options:
    """The group's options: where the service listens and how long each call may take."""

    socket: str | None
    timeout: float


@dataclass(frozen=True)
class Target:
    """What a request names: the process, its window, its app, and the policy that follows."""

    pid: int
    window: int
    app: str
    start_time: int
    bypass: str | None


class FocusUnknown(Exception):
    """The sensor cannot tell which window has the focus (it is down, or nothing has the focus)."""

    def __init__(self, message: str, code: int) -> None:
        super().__init__(message)
        self.code = code


def focused_window() -> dict[str, Any]:
    """The sensor's current focus (pid, app_name, app_start_time, window_id), from its snapshot."""
    import httpx
    from kronii.capture.settings import CaptureSettings
    from kronii.foundation.settings import load_settings
    from kronii.launcher.up import state_path

    # The sensor's address as `kronii up` recorded it; else its default port on this host.
    settings = load_settings(CaptureSettings)
    try:
        state = json.loads(state_path(settings.data_dir).read_text())
        base = str(state["services"]["sensor"]["http"])
    except (OSError, ValueError, KeyError, TypeError):
        base = f"http://127.0.0.1:{os.environ.get('KRONII_SENSOR_HTTP_PORT', '8101')}"
    try:
        snapshot = httpx.get(f"{base}/v1/snapshot", timeout=5.0).json()
    except (httpx.HTTPError, ValueError) as error:
        raise FocusUnknown(
            f"the sensor did not answer at {base} ({type(error).__name__}); name the target with --pid and --window",
            exits.UNREACHABLE,
        ) from None
    focus = snapshot.get("focus") or {}
    if not focus.get("window_id"):
        raise FocusUnknown(
            "no window has the focus now; name the target with --pid and --window, or use --bypass focus_next",
            exits.NOT_FOUND,
        )
    return dict(focus)


def _socket_target(socket: str | None) -> str:
    if socket:
        path = Path(socket)
    else:
        from kronii.capture.settings import CaptureSettings
        from kronii.foundation.settings import load_settings
        from kronii.runtime.rendezvous import capture_socket_path

        settings = load_settings(CaptureSettings)
        path = capture_socket_path(settings.data_dir, settings.socket_dir)
    if not path.exists():
        raise CommandError(
            f"kronii: capture is not running (no socket at {path}): start it with `kronii up`",
            exits.UNREACHABLE,
        )
    return f"unix:{path}"


def presence_metadata() -> Metadata:
    """What the service's TTY binding cross-checks with /proc: the terminal on standard input and
    this process's session. Nothing when standard input is not a terminal (the service then
    refuses reads, unless polkit asks the person or their read-only window is still open)."""
    from kronii.edge.presence_rules import SESSION_HEADER, TTY_HEADER

    try:
        if not os.isatty(0):
            return ()
        return ((TTY_HEADER, os.ttyname(0)), (SESSION_HEADER, str(os.getsid(0))))
    except OSError:
        return ()


def rpc_error(error: grpc.RpcError, action: str) -> CommandError:
    code = exits.exit_for_grpc_status(error.code().name)
    if code == exits.UNREACHABLE:
        return CommandError(
            f"kronii: capture is not running or does not answer ({error.details()}): start it with `kronii up`",
            code,
        )
    return CommandError(f"kronii: capture {action} refused: {error.details()}", code)


@contextlib.contextmanager
def _service(options: Options, action: str) -> Iterator[pb_grpc.ScreenCaptureStub]:
    """A stub on the service's socket; what goes wrong becomes a sentence and its exit code."""
    import grpc
    from kronii.capture.core.targets import TargetError
    from kronii.capture.v1 import capture_pb2_grpc as pb_grpc

    target = _socket_target(options.socket)
    try:
        with grpc.insecure_channel(target) as channel:
            yield pb_grpc.ScreenCaptureStub(channel)
    except grpc.RpcError as error:
        raise rpc_error(error, action) from None
    except TargetError as error:
        raise CommandError(f"kronii: capture request: {error}", exits.NOT_FOUND) from None
    except FocusUnknown as error:
        raise CommandError(f"kronii: capture request: {error}", error.code) from None
    except BrokenPipeError:
        raise  # the reader left: `kronii` ends quietly
    except OSError as error:
        raise CommandError(
            f"kronii: capture {action} failed: {error.strerror or error}", exits.FAILED
        ) from None


def _utc(at: Any) -> datetime:
    stamp: datetime = at.ToDatetime(tzinfo=UTC)
    return stamp


def _iso_utc(at: Any, timespec: str = "milliseconds") -> str:
    return _utc(at).isoformat(timespec=timespec).replace("+00:00", "Z")


def watch_job(
    stub: pb_grpc.ScreenCaptureStub, job_id: str, timeout: float, metadata: Metadata, as_json: bool
) -> int:
    """Print each status of the job until it ends: local time of day (one word, so a script can
    still cut the status name out) or JSON lines. OK when the job persisted."""
    from kronii.capture.v1 import capture_pb2 as pb

    final = 0
    for status in stub.WatchCapture(pb.CaptureJobId(job_id=job_id), timeout=timeout, metadata=metadata):
        name = pb.CaptureStatusCode.Name(status.status).lower()
        if as_json:
            click.echo(json.dumps({"job_id": job_id, "at": _iso_utc(status.at), "status": name,
                                   "reason": status.reason, "screenshot_id": status.primary_screenshot_id or None}))  # fmt: skip
        else:
            line = f"{_utc(status.at).astimezone().strftime('%H:%M:%S.%f')[:-3]}  {name}"
            line += f"  {status.reason}" if status.reason else ""
            line += f"  screenshot {status.primary_screenshot_id}" if status.primary_screenshot_id else ""
            click.echo(line)
        sys.stdout.flush()
        final = status.status
    return exits.OK if final == pb.PERSISTED else exits.FAILED


def _exit(code: int) -> None:
    if code != exits.OK:
        raise SystemExit(code)


@click.group(
    "capture",
    context_settings={"help_option_names": ["-h", "--help"]},
    epilog="Exit codes: 0 done, 1 the job ended without an image, 2 usage, 3 not found, 4 refused, "
    "5 unreachable.",
)
@click.option(
    "--socket",
    type=click.Path(dir_okay=False),
    default=None,
    help="the service's Unix socket (default: where the service puts it)",
)
@click.option(
    "--timeout", type=click.FloatRange(min=0, min_open=True), default=60.0, show_default=True,
    help="seconds per call",
)  # fmt: skip
@click.pass_context
def capture_command(ctx: click.Context, socket: str | None, timeout: float) -> None:
    """Request, watch and fetch redacted window captures (the capture service)."""
    ctx.obj = Options(socket, timeout)


capture_command.add_command(clients_command)
capture_command.add_command(kde_command)


def named_target(named: Target, window: str) -> Target:
    """Resolve the pid, window, app and policy from what the person named (`window`: an id or a piece
    of a title), on this display."""
    from kronii.capture.adapters.x_windows import DisplayUnavailable, list_windows
    from kronii.capture.core.targets import TargetError, parse_window_id, resolve_target

    number = parse_window_id(window) if window else None
    try:
        windows = list_windows()
    except DisplayUnavailable as error:
        if number is not None and named.pid:  # both named in full: nothing to look up
            return replace(named, window=number, bypass=named.bypass or "strict")
        raise TargetError(f"{error}; name the target with --pid and --window <id>") from None
    found = resolve_target(windows, window=window, pid=named.pid, app=named.app, bypass=named.bypass)
    click.echo(f"target: {found.why} ({found.bypass})", err=True)
    return replace(named, pid=found.pid, window=found.window_id, app=found.app, bypass=found.bypass)


def focused_target() -> Target:
    focus = focused_window()
    target = Target(
        pid=int(focus.get("pid", 0)), window=int(focus.get("window_id", 0)), app=str(focus.get("app_name", "")),
        start_time=int(focus.get("app_start_time", 0)), bypass="strict",
    )  # fmt: skip
    click.echo(
        f"target: the focused window {target.window:#x} ({target.app or 'unknown app'}, pid {target.pid})",
        err=True,
    )
    return target


@capture_command.command(
    "request",
    short_help="ask for a burst of one window (by default the focused one); prints the job id",
    epilog="Without --pid, --window or --app, and with --bypass strict, the target is the window that has "
    "the focus now, as the sensor reports it.",
)
@click.option(
    "--window",
    default="",
    help="a window: its id (0x1a00007 or decimal) or a piece of its title; that window only (strict)",
)
@click.option(
    "--pid", type=click.IntRange(min=0), default=0, help="a process id: any of its windows (window_relaxed)"
)
@click.option(
    "--app",
    default="",
    help="an app name (WM_CLASS class, e.g. XTerm): that app, even restarted (app_relaxed)",
)
@click.option("--start-time", type=click.IntRange(min=0), default=0, help="the process start time, epoch ms")
@click.option(
    "--bypass", type=click.Choice(sorted(_BYPASS)), default=None,
    help="override the policy picked from what was named (`kronii capture targets` lists what can be named)",
)  # fmt: skip
@click.option("--burst-count", type=int, default=0, help="frames in the burst (default: the service's)")
@click.option("--burst-interval-ms", type=int, default=0, help="between frames (default: the service's)")
@click.option("--priority", type=click.Choice(sorted(_PRIORITY)), default="normal", show_default=True)
@click.option("--ttl-ms", type=int, default=0, help="give up after this long (default: the service's)")
@click.option("--requester", default="", help="who asks, for the audit log")
@click.option("--wait", is_flag=True, help="follow the job until it ends")
@click.option("--json", "as_json", is_flag=True, help="JSON lines: the job id, then (--wait) each status")
@click.pass_obj
def request(
    options: Options, window: str, pid: int, app: str, start_time: int, bypass: str | None, burst_count: int,
    burst_interval_ms: int, priority: str, ttl_ms: int, requester: str, wait: bool, as_json: bool,
) -> None:  # fmt: skip
    """Ask for a burst of captures of one window (by default the focused one); prints the job id."""
    from kronii.capture.v1 import capture_pb2 as pb

    named = Target(pid=pid, window=0, app=app, start_time=start_time, bypass=bypass)
    with _service(options, "request") as stub:
        if window or pid or app:
            target = named_target(named, window)
        elif bypass in (None, "strict"):
            target = focused_target()
        else:
            target = named
        metadata = presence_metadata()
        reply = stub.RequestScreenCapture(
            pb.CaptureRequest(
                process_id=target.pid, app_name=target.app, app_start_time=target.start_time,
                window_id=target.window, bypass=_BYPASS[target.bypass or "strict"],  # type: ignore[arg-type]
                burst_count=burst_count, burst_interval_ms=burst_interval_ms,
                priority=_PRIORITY[priority],  # type: ignore[arg-type]
                ttl_ms=ttl_ms, requester=requester,
            ),
            timeout=options.timeout, metadata=metadata,
        )  # fmt: skip
        click.echo(json.dumps({"job_id": reply.job_id}) if as_json else reply.job_id)
        sys.stdout.flush()
        if wait:
            _exit(watch_job(stub, reply.job_id, options.timeout, metadata, as_json))


@capture_command.command("watch", short_help="follow a job's statuses until it ends")
@click.argument("job_id")
@click.option("--json", "as_json", is_flag=True, help="one JSON object per status")
@click.pass_obj
def watch(options: Options, job_id: str, as_json: bool) -> None:
    """Follow JOB_ID's statuses until it ends (times are local). Exit 1 when it ended without an image."""
    with _service(options, "watch") as stub:
        _exit(watch_job(stub, job_id, options.timeout, presence_metadata(), as_json))


@capture_command.command("get", short_help="write a screenshot's redacted PNG to a file (or - for stdout)")
@click.argument("screenshot_id")
@click.argument("file", required=False, type=click.Path(dir_okay=False, allow_dash=True))
@click.option(
    "-o", "--output", type=click.Path(dir_okay=False, allow_dash=True),
    help="file to write, or - for standard output (or FILE after the id)",
)  # fmt: skip
@click.pass_obj
def get(options: Options, screenshot_id: str, file: str | None, output: str | None) -> None:
    """Write SCREENSHOT_ID's redacted PNG (job:<job id> for that job's primary) to FILE (or -o FILE),
    - for standard output."""
    from kronii.capture.v1 import capture_pb2 as pb

    if (file is None) == (output is None):
        raise click.UsageError(
            "name the file to write once: `kronii capture get ID FILE` (or -o FILE, - for stdout)"
        )
    output = file or output or "-"

    with _service(options, "get") as stub:
        metadata, timeout = presence_metadata(), options.timeout
        if screenshot_id.startswith("job:"):
            job = pb.CaptureJobId(job_id=screenshot_id[4:])
            result = stub.GetCaptureResult(job, timeout=timeout, metadata=metadata)
            if not result.primary_screenshot_id:
                raise CommandError("kronii: that job has no screenshot (it did not persist)", exits.NOT_FOUND)
            screenshot_id = result.primary_screenshot_id
        token = stub.IssueToken(
            pb.IssueTokenRequest(screenshot_id=screenshot_id), timeout=timeout, metadata=metadata
        )
        chunks = stub.GetScreenshot(
            pb.GetScreenshotRequest(screenshot_id=screenshot_id, single_use_token=token.single_use_token),
            timeout=timeout, metadata=metadata,
        )  # fmt: skip
        data = b"".join(chunk.data for chunk in chunks)
        if output == "-":
            sys.stdout.buffer.write(data)
            sys.stdout.buffer.flush()
        else:
            Path(output).write_bytes(data)
            click.echo(f"wrote {len(data)} bytes of redacted PNG", err=True)


def screenshot_json(item: Any) -> dict[str, Any]:
    return {
        "screenshot_id": item.screenshot_id,
        "created_at": _iso_utc(item.created_at, "seconds"),
        "app": item.app_name or None,
        "width": item.width,
        "height": item.height,
        "redaction_level": item.redaction_level,
        "score": round(item.score, 3),
        "job_id": item.job_id,
    }


SCREENSHOT_COLUMNS = ("ID", "CREATED", "APP", "SIZE", "LEVEL", "SCORE", "JOB")


def screenshot_row(item: Any) -> tuple[str, ...]:
    created = _utc(item.created_at).astimezone().strftime("%Y-%m-%d %H:%M:%S")
    return (
        item.screenshot_id, created, item.app_name or "?", f"{item.width}x{item.height}",
        item.redaction_level, f"{item.score:.2f}", item.job_id,
    )  # fmt: skip


@capture_command.command("list", short_help="the stored redacted screenshots, newest first")
@click.option("-n", "--limit", type=click.IntRange(min=1), default=20, show_default=True, help="how many")
@click.option("--json", "as_json", is_flag=True, help="one JSON array instead of lines")
@click.pass_obj
def list_screenshots(options: Options, limit: int, as_json: bool) -> None:
    """The stored redacted screenshots, newest first (times are local; --json's are UTC)."""
    from kronii.capture.v1 import capture_pb2 as pb

    with _service(options, "list") as stub:
        found = stub.ListScreenshots(
            pb.ListScreenshotsRequest(limit=limit), timeout=options.timeout, metadata=presence_metadata()
        )
    if as_json:
        click.echo(json.dumps([screenshot_json(item) for item in found.screenshots]))
        return
    if not found.screenshots:
        click.echo("no screenshots stored (take one with `kronii capture request`)", err=True)
        return
    print_table(SCREENSHOT_COLUMNS, [screenshot_row(item) for item in found.screenshots])


@capture_command.command("targets", short_help="the windows on this display that `request` can name")
@click.option("--json", "as_json", is_flag=True, help="one JSON array instead of a table")
def targets(as_json: bool) -> None:
    """The windows on this display that `request --window/--pid/--app` can name."""
    from kronii.capture.adapters.x_windows import DisplayUnavailable, list_windows

    try:
        windows = list_windows()
    except DisplayUnavailable as error:
        raise CommandError(f"kronii: capture targets: {error}", exits.UNREACHABLE) from None
    if as_json:
        click.echo(json.dumps([{"window": f"{w.window_id:#x}", "pid": w.pid, "app": w.app, "title": w.title}
                               for w in windows]))  # fmt: skip
        return
    rows = [(f"{w.window_id:#x}", str(w.pid or "?"), w.app or "?", w.title[:60]) for w in windows]
    print_table(("WINDOW", "PID", "APP", "TITLE"), rows)


def main(argv: Sequence[str] | None = None) -> int:
    """`kronii capture ...` as `kronii` runs it (same errors and exit codes); a leading "capture" is optional."""
    from kronii.launcher.cli.main import main as kronii_main

    arguments = list(sys.argv[1:] if argv is None else argv)
    if arguments[:1] == ["capture"]:
        arguments = arguments[1:]
    return kronii_main(["capture", *arguments])
