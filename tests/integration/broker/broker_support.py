"""A real broker process on a private Xvfb + openbox, against the run's NATS, Redis and PostgreSQL:
agents registered with real Ed25519 keys, and the person's grant made as a person makes it (through
the broker's local socket, from a terminal)."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import shlex
import sys
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import redis.asyncio as aioredis
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat
from kronii.agents.broker_client import BrokerClient
from kronii.broker.adapters.callers import AgentRegistry
from kronii.runtime.rendezvous import broker_socket_path
from kronii.stores.db import make_engine, make_sessionmaker

from tests.infra import InfraUrls
from tests.mesh import Proc, service_ports, start_service
from tests.terminal import TerminalRun, run_on_terminal

__all__ = ["Broker", "register_agent", "start_broker"]


@dataclass
class Broker:
    proc: Proc
    url: str
    grpc_port: int
    display: str
    folder: Path
    env: dict[str, str]
    infra: InfraUrls
    database: str

    @property
    def socket(self) -> Path:
        return broker_socket_path(self.folder / "data", runtime_dir=str(self.folder / "run"))

    def state(self) -> dict[str, Any]:
        response = httpx.get(f"{self.url}/sessions/current", timeout=10)
        response.raise_for_status()
        return dict(response.json())

    def journal(self) -> list[dict[str, Any]]:
        path = self.folder / "data" / "broker" / "control.jsonl"
        return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]

    def agent(self, client_id: str | None = None) -> BrokerClient:
        """A registered, signed-in agent."""
        name = client_id or f"agent-{uuid.uuid4().hex[:8]}"
        key = Ed25519PrivateKey.generate()
        asyncio.run(register_agent(self.infra.redis, self.database, name, key))
        client = BrokerClient(self.url, timeout=15)
        client.sign_in(name, key)
        return client

    def as_person(self, method: str, path: str, body: dict[str, Any]) -> TerminalRun:
        """One call through the local socket from a terminal, with the TTY binding's headers."""
        script = (
            "import json, os, sys\n"
            "from kronii.launcher.local_http import JsonClient\n"
            "client = JsonClient('http://localhost', 10, unix_socket=sys.argv[1], headers={\n"
            "    'kronii-tty': os.ttyname(0), 'kronii-session': str(os.getsid(0))})\n"
            "answer = client.request(sys.argv[2], sys.argv[3], json=json.loads(sys.argv[4]))\n"
            "print('STATUS', answer.status, answer.text)\n"
        )
        command = [sys.executable, "-c", script, str(self.socket), method, path, json.dumps(body)]
        return run_on_terminal(shlex.join(command), self.env, timeout=30)

    def grant(self, agent: str, seconds: int = 30, window: int = 0) -> dict[str, Any]:
        run = self.as_person(
            "POST",
            "/sessions/current/control/grant",
            {"agent": agent, "lease_seconds": seconds, "window": window},
        )
        assert "STATUS 200" in run.shown, run.shown
        return dict(json.loads(run.shown.split("STATUS 200", 1)[1]))

    def intent(self, intent: str) -> dict[str, Any]:
        response = httpx.post(f"{self.url}/sessions/current/user_intent", json={"intent": intent}, timeout=10)
        assert response.status_code == 200, response.text
        return dict(response.json())


async def register_agent(redis_url: str, database: str, client_id: str, key: Ed25519PrivateKey) -> None:
    engine = make_engine(database)
    redis = aioredis.from_url(redis_url)
    try:
        registry = AgentRegistry(redis, make_sessionmaker(engine))
        public = key.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)
        await registry.clients.register_client(client_id, public)
    finally:
        await redis.aclose()
        await engine.dispose()


@contextlib.contextmanager
def start_broker(
    infra: InfraUrls,
    database: str,
    display: str,
    folder: Path,
    *,
    settings: dict[str, str] | None = None,
    ports: tuple[int, int] | None = None,
) -> Iterator[Broker]:
    """``ports`` (HTTP, gRPC): the ones an earlier broker of the same folder had, as after a restart."""
    (folder / "run").mkdir(mode=0o700, parents=True, exist_ok=True)
    env = dict(os.environ)
    env.update(infra.env())
    env.update(
        KRONII_DATABASE_URL=database,
        KRONII_DATA_DIR=str(folder / "data"),
        XDG_RUNTIME_DIR=str(folder / "run"),
        DISPLAY=display,
        KRONII_BROKER_DISPLAY=display,
        KRONII_BROKER_VNC_PORT="0",
        KRONII_BROKER_NOTIFY="false",
        KRONII_LOG_FORMAT="json",
    )
    if ports is not None:
        env.update(KRONII_BROKER_HTTP_PORT=str(ports[0]), KRONII_BROKER_GRPC_PORT=str(ports[1]))
    env.pop("DBUS_SESSION_BUS_ADDRESS", None)
    env.update(settings or {})
    env = service_ports("broker", env)
    with start_service("broker", env) as broker:
        yield Broker(broker.proc, broker.url, broker.grpc_port, display, folder, env, infra, database)
