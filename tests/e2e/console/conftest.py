"""The console's real-browser fixtures, shared by every page's tests (tests/e2e/console/):

- `console_mesh`: a real `kronii up` (every installed service, the console among them, on free ports,
  embedded NATS, Redis and PostgreSQL, its own data directory) on its own Xvfb with a window manager
  and a private D-Bus session bus and tmux server; started once for the run's console tests and
  stopped after the last of them. `mesh.kronii(...)` runs a `kronii` command against it,
  `mesh.url(name)` is a service's HTTP address, `mesh.console_url` the console's.
- `console_browser`: Playwright driving Debian's chromium (headless; Playwright's own download cannot
  work here), once per run.
- `console_page`: a fresh browser context signed in through a real one-time link that a real
  `kronii console --no-browser` printed, on Today; `screenshot(page, name)` writes a PNG into the
  test's tmp dir and returns its path, to look at.
"""

from __future__ import annotations

import contextlib
import shutil
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from playwright.sync_api import Browser, Page, sync_playwright

from tests.agents.harness import private_socket
from tests.desktop import start_session_bus, start_xvfb
from tests.mesh import Proc, standalone_env, stop_after_last_use

KRONII = str(Path(sys.executable).parent / "kronii")
UP_TIMEOUT_S = 150


@dataclass(frozen=True)
class ConsoleMesh:
    proc: Proc
    env: dict[str, str]
    data_dir: Path
    display: str
    tmux_socket: str

    def url(self, service: str) -> str:
        return f"http://127.0.0.1:{self.env[f'KRONII_{service.upper()}_HTTP_PORT']}"

    @property
    def console_url(self) -> str:
        return self.url("console")

    def kronii(self, *args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
        """`kronii <args>` against this mesh (its environment, its data directory)."""
        return subprocess.run([KRONII, *args], env=self.env, capture_output=True, text=True, timeout=timeout)

    def login_link(self) -> str:
        """A fresh one-time link, printed by a real `kronii console --no-browser`."""
        done = self.kronii("console", "--no-browser")
        assert done.returncode == 0, done.stdout + done.stderr
        link = done.stdout.strip().splitlines()[-1]
        assert link.startswith(f"{self.console_url}/login?token="), link
        return link


def _start_mesh(stack: contextlib.ExitStack, data_dir: Path) -> ConsoleMesh:
    display = stack.enter_context(start_xvfb(screen="1280x800x24"))
    bus = stack.enter_context(start_session_bus())
    socket = stack.enter_context(private_socket())
    env = standalone_env(data_dir)
    env.update(
        DISPLAY=display,
        DBUS_SESSION_BUS_ADDRESS=bus,
        KRONII_SUPERVISOR_TMUX_SOCKET=socket,
        KRONII_TEST_FAST_PG="1",
        KRONII_LOG_FORMAT="text",
        # Focus and titles are followed quickly, so a switch shows within a second.
        KRONII_SENSOR_TITLE_INTERVAL_SECS="0.5",
        KRONII_SENSOR_TICK_INTERVAL_SECS="0.2",
        KRONII_SENSOR_ACTIVITY_FLUSH_SECS="1",
    )
    proc = Proc([KRONII, "up"], env)
    stack.callback(lambda: proc.terminate(timeout=30) if proc.process.poll() is None else None)
    try:
        proc.wait_for_line(lambda line: line.strip() == "kronii is up", UP_TIMEOUT_S)
    except BaseException:
        print(proc.output[-6000:])
        raise
    return ConsoleMesh(proc, env, data_dir, display, socket)


@pytest.fixture(scope="session")
def console_mesh(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[ConsoleMesh]:
    with contextlib.ExitStack() as stack:
        mesh = _start_mesh(stack, tmp_path_factory.mktemp("console-mesh") / "data")
        stop_after_last_use(request, stack)
        yield mesh


@pytest.fixture(scope="session")
def console_browser(request: pytest.FixtureRequest) -> Iterator[Browser]:
    """One stack for Playwright and its browser, so the browser closes before Playwright stops."""
    chromium = shutil.which("chromium")
    assert chromium, "Debian's chromium is not installed (apt-get install chromium)"
    with contextlib.ExitStack() as stack:
        playwright = stack.enter_context(sync_playwright())
        browser = playwright.chromium.launch(
            executable_path=chromium, headless=True, args=["--no-sandbox", "--disable-dev-shm-usage"]
        )
        stack.callback(browser.close)
        stop_after_last_use(request, stack)
        yield browser


@pytest.fixture
def console_page(console_mesh: ConsoleMesh, console_browser: Browser) -> Iterator[Page]:
    context = console_browser.new_context(viewport={"width": 1280, "height": 860})
    try:
        page = context.new_page()
        page.goto(console_mesh.login_link())
        assert page.url == f"{console_mesh.console_url}/today", page.url
        yield page
    finally:
        context.close()


def screenshot(page: Page, directory: Path, name: str) -> Path:
    """A full-page PNG of what the person sees, to look at."""
    path = directory / f"{name}.png"
    page.screenshot(path=str(path), full_page=True)
    return path
