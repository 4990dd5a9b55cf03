"""Helpers to drive kronii processes from tests: start, wait for readiness, read output, stop."""

from __future__ import annotations

import contextlib
import os
import queue
import signal
import ssl
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal

import httpx
import psutil

from tests import desktop

if TYPE_CHECKING:
    import pytest

__all__ = [
    "Proc",
    "RunningService",
    "kronii_process_pids",
    "note_last_users",
    "service_ports",
    "share_httpx_ssl_contexts",
    "standalone_env",
    "start_service",
    "stop_after_last_use",
    "stop_service",
    "stop_what_item_used_last",
    "wait_http_ready",
    "wait_until",
]


class Proc:
    """A process whose combined output is collected line by line on a thread."""

    def __init__(self, argv: Sequence[str], env: dict[str, str], cwd: Path | None = None) -> None:
        self.argv = list(argv)
        self.lines: list[str] = []
        self._queue: queue.Queue[str] = queue.Queue()
        self.process = subprocess.Popen(
            self.argv,
            env=env,
            cwd=cwd,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            bufsize=1,
            start_new_session=True,
        )
        self._reader = threading.Thread(target=self._pump, daemon=True)
        self._reader.start()

    def _pump(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self.lines.append(line.rstrip("\n"))
            self._queue.put(line.rstrip("\n"))

    @property
    def output(self) -> str:
        return "\n".join(self.lines)

    def wait_for_line(self, predicate: Callable[[str], bool], timeout: float) -> str:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                line = self._queue.get(timeout=0.1)
            except queue.Empty:
                if self.process.poll() is not None and self._queue.empty():
                    self._reader.join(1)
                    break
                continue
            if predicate(line):
                return line
        raise AssertionError(f"no matching line within {timeout} s; output so far:\n{self.output[-4000:]}")

    def terminate(self, timeout: float = 15.0) -> tuple[int, float]:
        """SIGTERM; returns (exit code, seconds it took)."""
        started = time.monotonic()
        with contextlib.suppress(ProcessLookupError):
            self.process.send_signal(signal.SIGTERM)
        code = self.process.wait(timeout=timeout)
        self._reader.join(2)
        return code, time.monotonic() - started

    def kill(self) -> None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.process.pid, signal.SIGKILL)
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.process.wait(5)


def python_module(module: str, *args: str) -> list[str]:
    return [sys.executable, "-m", module, *args]


def wait_http_ready(url: str, timeout: float = 30.0, proc: Proc | None = None) -> httpx.Response:
    deadline = time.monotonic() + timeout
    last: object = None
    while time.monotonic() < deadline:
        if proc is not None and proc.process.poll() is not None:
            raise AssertionError(f"process exited with {proc.process.returncode}:\n{proc.output[-3000:]}")
        try:
            response = httpx.get(f"{url}/readyz", timeout=2)
            if response.status_code == 200:
                return response
            last = response.text
        except httpx.HTTPError as error:
            last = error
        time.sleep(0.1)
    raise AssertionError(f"{url} not ready within {timeout} s: {last}")


def wait_until(predicate: Callable[[], bool], timeout: float, what: str, interval: float = 0.05) -> None:
    """Poll until `predicate()` holds; the desktop helpers' poller, with this module's argument names."""
    desktop.wait_until(predicate, timeout_s=timeout, interval_s=interval, what=what)


def kronii_process_pids(marker: str) -> list[int]:
    """Pids of live processes whose command line or environment-free argv mentions `marker`."""
    found: list[int] = []
    for proc in psutil.process_iter(["pid", "cmdline", "status"]):
        with contextlib.suppress(psutil.Error):
            if proc.info["status"] == psutil.STATUS_ZOMBIE:
                continue
            if any(marker in part for part in proc.info["cmdline"] or []):
                found.append(proc.info["pid"])
    return found


@contextlib.contextmanager
def running(proc: Proc) -> Iterator[Proc]:
    try:
        yield proc
    finally:
        if proc.process.poll() is None:
            proc.kill()


@dataclass(frozen=True)
class RunningService:
    """A kronii service started by `start_service`: its process, the environment it runs with and its
    ports (0 where the environment holds no port number, as in a test of a bad setting)."""

    name: str
    proc: Proc
    env: dict[str, str]
    http_port: int
    grpc_port: int

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.http_port}"


def service_ports(name: str, env: Mapping[str, str]) -> dict[str, str]:
    """`env` with KRONII_<NAME>_HTTP_PORT and _GRPC_PORT on free ports, except where the test set one
    itself (a restart on the same ports, a bad value): one inherited from this process's environment
    (a person's own kronii) is never used."""
    from kronii.launcher.infra import free_port

    out = dict(env)
    for kind in ("HTTP", "GRPC"):
        variable = f"KRONII_{name.upper()}_{kind}_PORT"
        if out.get(variable) in (None, os.environ.get(variable)):
            out[variable] = str(free_port())
    return out


def _port(value: str) -> int:
    return int(value) if value.isdigit() else 0


def stop_service(proc: Proc, how: Literal["terminate", "kill"] = "terminate") -> None:
    """Stop a service's process if it still runs (SIGTERM and a wait, or SIGKILL), then kill what is
    left of its process group, so no child outlives the test. A service that does not stop on SIGTERM
    within the wait is killed and the wait's error raised."""
    try:
        if proc.process.poll() is None:
            if how == "kill":
                proc.kill()
            else:
                try:
                    proc.terminate()
                except subprocess.TimeoutExpired:
                    proc.kill()
                    raise
    finally:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.process.pid, signal.SIGKILL)


@contextlib.contextmanager
def start_service(
    name: str,
    env: Mapping[str, str],
    *,
    ready: bool = True,
    timeout: float = 30.0,
    stop: Literal["terminate", "kill"] = "terminate",
) -> Iterator[RunningService]:
    """Run `python -m kronii.<name>` with `env` (its HTTP and gRPC ports added from `free_port` where
    `env` has none) in a process group of its own; with `ready`, wait until /readyz answers 200 (an
    early exit fails with its output). Leaving the block stops it (`stop_service`)."""
    env = service_ports(name, env)
    proc = Proc(python_module(f"kronii.{name}"), env)
    prefix = f"KRONII_{name.upper()}_"
    service = RunningService(
        name, proc, env, _port(env[f"{prefix}HTTP_PORT"]), _port(env[f"{prefix}GRPC_PORT"])
    )
    try:
        if ready:
            wait_http_ready(service.url, proc=proc, timeout=timeout)
        yield service
    finally:
        stop_service(proc, stop)


def standalone_env(data_dir: Path) -> dict[str, str]:
    """The environment for a `kronii up` of its own: no configured servers, no display, no D-Bus, every
    port free, its own data directory."""
    from kronii.launcher.infra import free_port
    from kronii.runtime.services import installed_services

    env = {k: v for k, v in os.environ.items() if not k.startswith("KRONII_") and k != "DISPLAY"}
    for spec in installed_services():
        env[f"KRONII_{spec.name.upper()}_HTTP_PORT"] = str(free_port())
        env[f"KRONII_{spec.name.upper()}_GRPC_PORT"] = str(free_port())
    env.update(
        KRONII_DATA_DIR=str(data_dir),
        KRONII_EMBEDDED_NATS_PORT=str(free_port()),
        KRONII_EMBEDDED_REDIS_PORT=str(free_port()),
        KRONII_EMBEDDED_POSTGRES_PORT=str(free_port()),
        DBUS_SESSION_BUS_ADDRESS="unix:path=/nonexistent/kronii-test-bus",
        DBUS_SYSTEM_BUS_ADDRESS="unix:path=/nonexistent/kronii-test-bus",
    )
    return env


# Session fixtures that start processes for a few modules (the hostile-input mesh) stop right after
# the run's last test that uses them, not at the end of the run: left idle, they would take CPU from
# every test that follows. Their own teardown still closes them if that test never ran.
_STOP_AFTER_LAST_USE: dict[str, contextlib.ExitStack] = {}
_LAST_USER: dict[str, str] = {}


def stop_after_last_use(request: pytest.FixtureRequest, stack: contextlib.ExitStack) -> None:
    """Close `stack` (what the session fixture `request.fixturename` started) after the last test of
    the run that uses that fixture."""
    assert request.fixturename is not None
    _STOP_AFTER_LAST_USE[request.fixturename] = stack


def note_last_users(items: Sequence[pytest.Item]) -> None:
    """Remember, for each fixture, the last of the collected tests that uses it (conftest's hook)."""
    _LAST_USER.clear()
    for item in items:
        for name in getattr(item, "fixturenames", ()):
            _LAST_USER[name] = item.nodeid


def stop_what_item_used_last(item: pytest.Item) -> None:
    """After `item`'s teardown: close what it was the last user of."""
    for name, stack in list(_STOP_AFTER_LAST_USE.items()):
        if _LAST_USER.get(name) == item.nodeid:
            del _STOP_AFTER_LAST_USE[name]
            stack.close()


def share_httpx_ssl_contexts() -> None:
    """One SSL context per setting for every httpx client of the test process. httpx builds one for each
    client, loading the CA bundle (about 20 ms of CPU), and each `httpx.get` is a client of its own: the
    suite's waits poll ten to fifty times a second, so they spent a fifth of a core or more on it while
    the services they wait for start on the same two cores. TLS is set up exactly as before; a client
    certificate or a context passed in goes through untouched."""
    import httpx._config
    import httpx._transports.default

    original = httpx._config.create_ssl_context
    if getattr(original, "shared", False):
        return
    made: dict[tuple[object, ...], ssl.SSLContext] = {}

    def create_ssl_context(
        verify: ssl.SSLContext | str | bool = True, cert: object = None, trust_env: bool = True
    ) -> ssl.SSLContext:
        if cert is not None or not isinstance(verify, bool):
            return original(verify=verify, cert=cert, trust_env=trust_env)  # type: ignore[arg-type]
        key = (verify, trust_env, os.environ.get("SSL_CERT_FILE"), os.environ.get("SSL_CERT_DIR"))
        if key not in made:
            made[key] = original(verify=verify, trust_env=trust_env)
        return made[key]

    create_ssl_context.shared = True  # type: ignore[attr-defined]
    httpx._config.create_ssl_context = create_ssl_context
    httpx._transports.default.create_ssl_context = create_ssl_context  # type: ignore[attr-defined]
