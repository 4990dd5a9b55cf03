"""`kronii capture request|watch|get|list`: the capture service's gRPC API over its local Unix
socket (the same calls agents make; the socket's peer check admits this user). `request` and
`watch` need nothing more; `get` and `list` read screenshots, which needs a person: polkit asks them
(when it runs on the system bus), or else they run this from their own terminal (standard input a
terminal, which the service checks against /proc). One proof opens a short read-only window.

Exit codes (kronii.common.cli.exits): 0 done (for `request --wait` and `watch`: the job persisted);
1 the job ended without an image (expired, rejected, failed, cancelled); 2 bad arguments; 3 no such
screenshot, job or window; 4 refused (not allowed, no person present, rate limited); 5 the capture
service (or, for the focused window, the sensor) is not running."""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import grpc
import httpx
from kronii.capture.adapters.socket import socket_path
from kronii.capture.clients import add_clients_parser, run_clients
from kronii.capture.core.presence import SESSION_HEADER, TTY_HEADER
from kronii.capture.core.targets import TargetError, parse_window_id, resolve_target
from kronii.capture.settings import CaptureSettings
from kronii.capture.v1 import capture_pb2 as pb
from kronii.capture.v1 import capture_pb2_grpc as pb_grpc
from kronii.common.cli import exits
from kronii.common.cli.exits import CommandError
from kronii.common.launcher import state_path
from kronii.common.settings import load_settings

__all__ = ["add_capture_parser", "main", "presence_metadata", "run_capture"]

_EXIT_FOR_STATUS = {
    grpc.StatusCode.INVALID_ARGUMENT: exits.USAGE,
    grpc.StatusCode.OUT_OF_RANGE: exits.USAGE,
    grpc.StatusCode.NOT_FOUND: exits.NOT_FOUND,
    grpc.StatusCode.PERMISSION_DENIED: exits.REFUSED,
    grpc.StatusCode.UNAUTHENTICATED: exits.REFUSED,
    grpc.StatusCode.RESOURCE_EXHAUSTED: exits.REFUSED,
    grpc.StatusCode.FAILED_PRECONDITION: exits.REFUSED,
    grpc.StatusCode.UNAVAILABLE: exits.UNREACHABLE,
    grpc.StatusCode.DEADLINE_EXCEEDED: exits.UNREACHABLE,
}
_BYPASS = {"strict": 1, "window_relaxed": 2, "app_relaxed": 3, "focus_next": 4}
_PRIORITY = {"low": 1, "normal": 2, "high": 3}


def add_capture_parser(subparsers: Any) -> argparse.ArgumentParser:
    capture: argparse.ArgumentParser = subparsers.add_parser(
        "capture", help="request, watch and fetch redacted window captures (the capture service)"
    )
    capture.add_argument(
        "--socket", default=None, help="the service's Unix socket (default: where the service puts it)"
    )
    capture.add_argument("--timeout", type=float, default=60.0, help="seconds per call (default 60)")
    sub = capture.add_subparsers(dest="capture_command", metavar="ACTION")
    sub.required = True

    request = sub.add_parser(
        "request",
        help="ask for a burst of one window (by default the focused one); prints the job id",
        description="Without --pid, --window or --app, and with --bypass strict, the target is the "
        "window that has the focus now, as the sensor reports it.",
    )
    request.add_argument(
        "--window",
        default="",
        help="a window: its id (0x1a00007 or decimal) or a piece of its title; that window only (strict)",
    )
    request.add_argument(
        "--pid", type=int, default=0, help="a process id: any window of that process (window_relaxed)"
    )
    request.add_argument(
        "--app",
        default="",
        help="an app name (WM_CLASS class, e.g. XTerm): that app, even restarted (app_relaxed)",
    )
    request.add_argument("--start-time", type=int, default=0, help="the process start time, epoch ms")
    request.add_argument(
        "--bypass",
        choices=sorted(_BYPASS),
        default=None,
        help="override the policy picked from what was named (`kronii capture targets` lists what can be named)",
    )
    request.add_argument("--burst-count", type=int, default=0)
    request.add_argument("--burst-interval-ms", type=int, default=0)
    request.add_argument("--priority", choices=sorted(_PRIORITY), default="normal")
    request.add_argument("--ttl-ms", type=int, default=0)
    request.add_argument("--requester", default="")
    request.add_argument("--wait", action="store_true", help="follow the job until it ends")

    watch = sub.add_parser("watch", help="follow a job's statuses until it ends")
    watch.add_argument("job_id")

    get = sub.add_parser("get", help="write a screenshot's redacted PNG to a file (or - for stdout)")
    get.add_argument("screenshot_id", help="a screenshot id, or job:<job id> for that job's primary")
    get.add_argument("-o", "--output", required=True, help="file to write, or - for standard output")

    listing = sub.add_parser("list", help="the stored redacted screenshots, newest first")
    listing.add_argument("-n", "--limit", type=int, default=20)
    listing.add_argument("--json", action="store_true", help="one JSON array instead of lines")

    targets = sub.add_parser(
        "targets", help="the windows on this display that `request --window/--pid/--app` can name"
    )
    targets.add_argument("--json", action="store_true", help="one JSON array instead of a table")
    add_clients_parser(sub)
    capture.set_defaults(handler=run_capture)
    return capture


class FocusUnknown(Exception):
    """The sensor cannot tell which window has the focus (it is down, or nothing has the focus)."""

    def __init__(self, message: str, code: int) -> None:
        super().__init__(message)
        self.code = code


def focused_window() -> dict[str, Any]:
    """The sensor's current focus (pid, app_name, app_start_time, window_id), from its snapshot."""
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
    return focus


def _target(args: argparse.Namespace) -> str:
    if args.socket:
        path = Path(args.socket)
    else:
        settings = load_settings(CaptureSettings)
        path = socket_path(settings.data_dir, settings.socket_dir)
    if not path.exists():
        raise CommandError(
            f"kronii: capture is not running (no socket at {path}): start it with `kronii up`",
            exits.UNREACHABLE,
        )
    return f"unix:{path}"


Metadata = tuple[tuple[str, str], ...]


def presence_metadata() -> Metadata:
    """What the service's TTY binding cross-checks with /proc: the terminal on standard input and
    this process's session. Nothing when standard input is not a terminal (the service then
    refuses reads, unless polkit asks the person or their read-only window is still open)."""
    try:
        if not os.isatty(0):
            return ()
        return ((TTY_HEADER, os.ttyname(0)), (SESSION_HEADER, str(os.getsid(0))))
    except OSError:
        return ()


def _watch(stub: pb_grpc.ScreenCaptureStub, job_id: str, timeout: float, metadata: Metadata = ()) -> int:
    final = 0
    stream: Iterator[pb.CaptureStatus] = stub.WatchCapture(
        pb.CaptureJobId(job_id=job_id), timeout=timeout, metadata=metadata
    )
    for status in stream:
        name = pb.CaptureStatusCode.Name(status.status).lower()
        line = f"{status.at.ToDatetime().isoformat(timespec='milliseconds')}Z  {name}"
        if status.reason:
            line += f"  {status.reason}"
        if status.primary_screenshot_id:
            line += f"  screenshot {status.primary_screenshot_id}"
        print(line, flush=True)
        final = status.status
    return 0 if final == pb.PERSISTED else 1


def _get(
    stub: pb_grpc.ScreenCaptureStub, screenshot_id: str, output: str, timeout: float, metadata: Metadata
) -> int:
    if screenshot_id.startswith("job:"):
        result = stub.GetCaptureResult(
            pb.CaptureJobId(job_id=screenshot_id[4:]), timeout=timeout, metadata=metadata
        )
        if not result.primary_screenshot_id:
            print("kronii: that job has no screenshot (it did not persist)", file=sys.stderr)
            return exits.NOT_FOUND
        screenshot_id = result.primary_screenshot_id
    token = stub.IssueToken(
        pb.IssueTokenRequest(screenshot_id=screenshot_id), timeout=timeout, metadata=metadata
    )
    chunks = stub.GetScreenshot(
        pb.GetScreenshotRequest(screenshot_id=screenshot_id, single_use_token=token.single_use_token),
        timeout=timeout,
        metadata=metadata,
    )
    data = b"".join(chunk.data for chunk in chunks)
    if output == "-":
        sys.stdout.buffer.write(data)
        sys.stdout.buffer.flush()
    else:
        Path(output).write_bytes(data)
        print(f"wrote {len(data)} bytes of redacted PNG", file=sys.stderr)
    return 0


def _targets(as_json: bool) -> int:
    from kronii.capture.adapters.x_windows import DisplayUnavailable, list_windows

    try:
        windows = list_windows()
    except DisplayUnavailable as error:
        print(f"kronii: capture targets: {error}", file=sys.stderr)
        return exits.UNREACHABLE
    if as_json:
        print(
            json.dumps(
                [
                    {"window": f"{w.window_id:#x}", "pid": w.pid, "app": w.app, "title": w.title}
                    for w in windows
                ]
            )
        )
        return 0
    print(f"{'WINDOW':<11} {'PID':>7}  {'APP':<16} TITLE")
    for w in windows:
        print(f"{w.window_id:<#11x} {w.pid or '?':>7}  {w.app or '?':<16} {w.title[:60]}")
    return 0


def _named_target(args: argparse.Namespace) -> None:
    """Fill the request's pid, window, app and bypass from what the person named."""
    from kronii.capture.adapters.x_windows import DisplayUnavailable, list_windows

    number = parse_window_id(args.window) if args.window else None
    try:
        windows = list_windows()
    except DisplayUnavailable as error:
        if number is not None and args.pid:  # both named in full: nothing to look up
            args.window, args.bypass = number, args.bypass or "strict"
            return
        raise TargetError(f"{error}; name the target with --pid and --window <id>") from None
    target = resolve_target(windows, window=args.window, pid=args.pid, app=args.app, bypass=args.bypass)
    args.pid, args.window, args.app, args.bypass = target.pid, target.window_id, target.app, target.bypass
    print(f"target: {target.why} ({target.bypass})", file=sys.stderr)


def run_capture(args: argparse.Namespace) -> int:
    if args.capture_command == "clients":
        return run_clients(args)
    if args.capture_command == "targets":
        return _targets(args.json)
    try:
        target = _target(args)
        with grpc.insecure_channel(target) as channel:
            stub = pb_grpc.ScreenCaptureStub(channel)
            return _dispatch(stub, args)
    except grpc.RpcError as error:
        code = _EXIT_FOR_STATUS.get(error.code(), exits.FAILED)
        if code == exits.UNREACHABLE:
            print(
                f"kronii: capture is not running or does not answer ({error.details()}): start it with `kronii up`",
                file=sys.stderr,
            )
        else:
            print(f"kronii: capture {args.capture_command} refused: {error.details()}", file=sys.stderr)
        return code
    except TargetError as error:
        print(f"kronii: capture request: {error}", file=sys.stderr)
        return exits.NOT_FOUND
    except FocusUnknown as error:
        print(f"kronii: capture request: {error}", file=sys.stderr)
        return error.code
    except OSError as error:
        print(f"kronii: capture {args.capture_command} failed: {error.strerror or error}", file=sys.stderr)
        return exits.FAILED


def _dispatch(stub: pb_grpc.ScreenCaptureStub, args: argparse.Namespace) -> int:
    timeout = args.timeout
    command = args.capture_command
    metadata = presence_metadata()
    if command == "request":
        if args.window or args.pid or args.app:
            _named_target(args)
        elif args.bypass in (None, "strict"):
            args.bypass = "strict"
            focus = focused_window()
            args.pid = int(focus.get("pid", 0))
            args.window = int(focus.get("window_id", 0))
            args.app = str(focus.get("app_name", ""))
            args.start_time = int(focus.get("app_start_time", 0))
            print(
                f"target: the focused window {args.window:#x} ({args.app or 'unknown app'}, pid {args.pid})",
                file=sys.stderr,
            )
        reply = stub.RequestScreenCapture(
            pb.CaptureRequest(
                process_id=args.pid,
                app_name=args.app,
                app_start_time=args.start_time,
                window_id=args.window,
                bypass=_BYPASS[args.bypass],  # type: ignore[arg-type]
                burst_count=args.burst_count,
                burst_interval_ms=args.burst_interval_ms,
                priority=_PRIORITY[args.priority],  # type: ignore[arg-type]
                ttl_ms=args.ttl_ms,
                requester=args.requester,
            ),
            timeout=timeout,
            metadata=metadata,
        )
        print(reply.job_id, flush=True)
        return _watch(stub, reply.job_id, timeout, metadata) if args.wait else 0
    if command == "watch":
        return _watch(stub, args.job_id, timeout, metadata)
    if command == "get":
        return _get(stub, args.screenshot_id, args.output, timeout, metadata)
    if command == "list":
        if args.limit <= 0:
            print("kronii: --limit must be a positive number", file=sys.stderr)
            return exits.USAGE
        found = stub.ListScreenshots(
            pb.ListScreenshotsRequest(limit=args.limit), timeout=timeout, metadata=metadata
        )
        if args.json:
            print(json.dumps([_screenshot_json(item) for item in found.screenshots]))
            return 0
        for item in found.screenshots:
            created = item.created_at.ToDatetime().isoformat(timespec="seconds")
            print(
                f"{item.screenshot_id}  {created}Z  {item.app_name or '?':<16} {item.width}x{item.height}  "
                f"{item.redaction_level:<6} score {item.score:.2f}  job {item.job_id}"
            )
        return 0
    return 2


def _screenshot_json(item: Any) -> dict[str, Any]:
    return {
        "screenshot_id": item.screenshot_id,
        "created_at": item.created_at.ToDatetime().isoformat(timespec="seconds") + "Z",
        "app": item.app_name or None,
        "width": item.width,
        "height": item.height,
        "redaction_level": item.redaction_level,
        "score": round(item.score, 3),
        "job_id": item.job_id,
    }


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="kronii")
    add_capture_parser(parser.add_subparsers(dest="command"))
    args = parser.parse_args(argv)
    return run_capture(args)


if __name__ == "__main__":
    raise SystemExit(main())
