"""A real vision engine process on the test's accessible desktop (Xvfb + openbox, private session and
accessibility buses, the GTK3 form), with a real input broker on the same display, against the run's
NATS, Redis and PostgreSQL. The engine's Ed25519 key is made here and registered with the broker as
the person would (`kronii broker clients add vision`), so it signs in for real."""

from __future__ import annotations

import asyncio
import contextlib
import json
import shlex
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
from kronii.vision.adapters.capture_frames import ensure_key, load_private_key

from tests.infra import InfraUrls
from tests.integration.broker.broker_support import Broker, register_agent, start_broker
from tests.integration.vision.vision_desktop import A11yDesktop
from tests.mesh import Proc, service_ports, start_service
from tests.notification_server import NotificationServer, serve
from tests.terminal import TerminalRun, run_on_terminal

__all__ = ["NotificationDesk", "VisionEngine", "start_vision"]

KRONII = str(Path(sys.executable).with_name("kronii"))
FINAL = frozenset({"done", "failed", "stopped", "denied", "blocked", "stale", "expired"})


@dataclass
class VisionEngine:
    proc: Proc
    url: str
    grpc_port: int
    folder: Path
    env: dict[str, str]
    broker: Broker

    def plan(self, intent: str, *, execute: bool = True) -> dict[str, Any]:
        self.settle()
        response = httpx.post(
            f"{self.url}/v1/vision/plans", json={"intent": intent, "execute": execute}, timeout=30
        )
        assert response.status_code == 200, response.text
        return dict(response.json())

    def settle(self, timeout_s: float = 3.0) -> None:
        """Wait until two looks at the screen in a row are the same picture: a window that has just
        said READY may still be painting, and a plan made then is rightly refused at approval as
        made on another screen. A blinking caret never settles; then the wait ends at the timeout."""
        deadline = time.monotonic() + timeout_s
        last = None
        while time.monotonic() < deadline:
            now = httpx.get(f"{self.url}/v1/vision/context", timeout=30).json().get("screenshot_hash")
            if now is not None and now == last:
                return
            last = now
            time.sleep(0.2)

    def get(self, plan_id: str) -> dict[str, Any]:
        response = httpx.get(f"{self.url}/v1/vision/plans/{plan_id}", timeout=10)
        assert response.status_code == 200, response.text
        return dict(response.json())

    def wait_for(
        self, plan_id: str, states: frozenset[str] = FINAL, timeout_s: float = 20.0
    ) -> dict[str, Any]:
        deadline = time.monotonic() + timeout_s
        plan = self.get(plan_id)
        while plan["state"] not in states and time.monotonic() < deadline:
            time.sleep(0.1)
            plan = self.get(plan_id)
        assert plan["state"] in states, plan
        return plan

    def kronii(self, *args: str, timeout: float = 60) -> TerminalRun:
        """`kronii ARGS` run by the person at a terminal (the TTY binding proves presence)."""
        return run_on_terminal(shlex.join([KRONII, *args]), self.env, timeout=timeout)

    def audit_actions(self) -> list[dict[str, Any]]:
        import psycopg

        with psycopg.connect(self.broker.database.replace("postgresql+psycopg", "postgresql")) as conn:
            rows = conn.execute(
                "SELECT action, subject, outcome, detail FROM audit_log WHERE service = 'vision' ORDER BY id"
            ).fetchall()
        return [{"action": r[0], "subject": r[1], "outcome": r[2], "detail": r[3]} for r in rows]


class NotificationDesk:
    """A notification server answered by hand on the desktop's session bus, in a thread of its own."""

    def __init__(self, bus_address: str) -> None:
        self._address = bus_address
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)
        self.server: NotificationServer | None = None

    def __enter__(self) -> NotificationDesk:
        from dbus_fast import BusType
        from dbus_fast.aio import MessageBus

        self._thread.start()

        async def start() -> NotificationServer:
            bus = await MessageBus(bus_address=self._address, bus_type=BusType.SESSION).connect()
            return await serve(bus, ["actions", "body"])

        self.server = asyncio.run_coroutine_threadsafe(start(), self._loop).result(10)
        return self

    def click(self, server_id: int, key: str) -> None:
        assert self.server is not None
        self._loop.call_soon_threadsafe(self.server.invoke_action, server_id, key)

    def __exit__(self, *exc: object) -> None:
        if self.server is not None:
            self._loop.call_soon_threadsafe(self.server.bus.disconnect)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(5)


@contextlib.contextmanager
def start_vision(
    infra: InfraUrls,
    database: str,
    desktop: A11yDesktop,
    folder: Path,
    *,
    settings: dict[str, str] | None = None,
) -> Iterator[VisionEngine]:
    key_path = folder / "vision" / "vision.key"
    ensure_key(key_path)
    asyncio.run(register_agent(infra.redis, database, "vision", load_private_key(key_path)))
    with start_broker(infra, database, desktop.display, folder / "broker") as broker:
        env = service_ports("vision", {**desktop.env, **infra.env()})
        http_port = env["KRONII_VISION_HTTP_PORT"]
        env.update(
            KRONII_DATABASE_URL=database,
            KRONII_DATA_DIR=str(folder / "data"),
            KRONII_VISION_KEY_PATH=str(key_path),
            KRONII_VISION_BROKER_URL=broker.url,
            KRONII_VISION_USE_CAPTURE="false",
            KRONII_VISION_URL=f"http://127.0.0.1:{http_port}",
            KRONII_LOG_FORMAT="json",
        )
        env.update(settings or {})
        with start_service("vision", env) as vision:
            yield VisionEngine(vision.proc, vision.url, vision.grpc_port, folder, vision.env, broker)


def clicked(form_lines: list[str], label: str) -> bool:
    return any(line.startswith(f"CLICKED {label}") for line in form_lines)


def plan_json(run: TerminalRun) -> str:
    return json.dumps(run.shown)
