"""What the Control page's real-browser tests share: a `kronii up` of their own on an Xvfb desktop with
its own accessibility bus (the shared console mesh's broker sees nobody attached, so no grant can be
made there), the input broker told a person is attached (KRONII_BROKER_INTERACTIVE, as a person at
the desktop is) and the vision engine's key registered (`kronii vision setup --yes`); the GTK form
with two buttons named OK the vision engine sees; a plan made for it."""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx

from tests.agents.harness import private_socket
from tests.e2e.console.conftest import KRONII, UP_TIMEOUT_S, ConsoleMesh
from tests.integration.vision.conftest import FORM_SECRET
from tests.integration.vision.vision_desktop import A11yDesktop, GtkForm, start_a11y_desktop, start_gtk_form
from tests.mesh import Proc, standalone_env, wait_until

__all__ = ["gtk_form_seen_by_vision", "plan_on_a_still_screen", "start_steer_mesh"]


def start_steer_mesh(
    stack: contextlib.ExitStack, data_dir: Path, extra_env: dict[str, str] | None = None
) -> ConsoleMesh:
    """`kronii up` on its own accessibility desktop, closed with ``stack``; ``extra_env`` on top."""
    desktop = stack.enter_context(start_a11y_desktop(screen="1280x800x24"))
    socket = stack.enter_context(private_socket())
    env = standalone_env(data_dir)
    env.update(
        DISPLAY=desktop.display,
        DBUS_SESSION_BUS_ADDRESS=desktop.bus_address,
        XDG_RUNTIME_DIR=desktop.runtime_dir,
        KRONII_SUPERVISOR_TMUX_SOCKET=socket,
        KRONII_TEST_FAST_PG="1",
        KRONII_LOG_FORMAT="text",
        KRONII_BROKER_INTERACTIVE="true",
        KRONII_BROKER_REMOTE_VIEW="false",
        KRONII_BROKER_NOTIFY="false",
        KRONII_VISION_USE_CAPTURE="false",
        KRONII_VISION_NOTIFY="false",
        **(extra_env or {}),
    )
    proc = Proc([KRONII, "up"], env)
    stack.callback(lambda: proc.terminate(timeout=30) if proc.process.poll() is None else None)
    try:
        proc.wait_for_line(lambda line: line.strip() == "kronii is up", UP_TIMEOUT_S)
    except BaseException:
        print(proc.output[-6000:])
        raise
    mesh = ConsoleMesh(proc, env, data_dir, desktop.display, socket)
    setup = mesh.kronii("vision", "setup", "--yes", timeout=120)
    assert setup.returncode == 0, setup.stdout + setup.stderr
    return mesh


@contextlib.contextmanager
def gtk_form_seen_by_vision(mesh: ConsoleMesh) -> Iterator[GtkForm]:
    """The GTK form (two buttons named OK) on the mesh's desktop, once the vision engine sees it."""
    desktop = A11yDesktop(mesh.display, mesh.env["DBUS_SESSION_BUS_ADDRESS"], mesh.env["XDG_RUNTIME_DIR"])
    with start_gtk_form(desktop, FORM_SECRET) as opened:
        vision = mesh.url("vision")
        wait_until(
            lambda: "Cancel" in httpx.get(f"{vision}/v1/vision/context", timeout=30).text,
            timeout=20,
            what="the vision engine seeing the form",
        )
        yield opened


def plan_on_a_still_screen(mesh: ConsoleMesh, intent: str) -> dict[str, Any]:
    """The engine's plan for ``intent`` (to execute once approved), made when two looks at the screen
    agree (the form has finished painting)."""
    vision = mesh.url("vision")
    last = None
    for _ in range(15):
        now = httpx.get(f"{vision}/v1/vision/context", timeout=30).json().get("screenshot_hash")
        if now is not None and now == last:
            break
        last = now
        time.sleep(0.2)
    made = httpx.post(f"{vision}/v1/vision/plans", json={"intent": intent, "execute": True}, timeout=60)
    assert made.status_code == 200, made.text
    return dict(made.json())
