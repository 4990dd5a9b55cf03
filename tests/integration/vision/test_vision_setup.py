"""`kronii vision setup` as a person runs it once: it makes the engine's key, says which of capture and
the broker do not know it, registers it there (with --yes, or a yes at the terminal), and says there is
nothing to do when both know it. On real PostgreSQL and Redis, through the services' own commands."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from kronii.stores.db import migrate_up

from tests.infra import InfraUrls, create_database

KRONII = str(Path(sys.executable).with_name("kronii"))


def _kronii(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [KRONII, *args], capture_output=True, text=True, timeout=120, env=env, stdin=subprocess.DEVNULL
    )


def test_setup_registers_the_key_with_capture_and_the_broker_once(infra: InfraUrls, tmp_path: Path) -> None:
    database = create_database(infra.database, "kronii_vision_setup")
    migrate_up(database)
    env = {k: v for k, v in os.environ.items() if not k.startswith("KRONII_")}
    env.update(
        KRONII_DATABASE_URL=database, KRONII_REDIS_URL=infra.redis, KRONII_DATA_DIR=str(tmp_path / "data"),
        KRONII_CONFIG=str(tmp_path / "none.toml"), KRONII_VISION_CLIENT_ID="vision-setup-test",
    )  # fmt: skip

    empty = _kronii(env, "broker", "clients", "list")
    assert (empty.returncode, empty.stdout) == (0, "")
    assert "no agents registered" in empty.stderr

    # Without a terminal and without --yes it only says what to run.
    shown = _kronii(env, "vision", "setup")
    assert shown.returncode == 0, shown.stderr
    assert "capture and broker do not know this key yet" in shown.stdout
    assert "kronii broker clients add vision-setup-test --public-key" in shown.stdout
    assert "registered" not in shown.stdout

    done = _kronii(env, "vision", "setup", "--yes")
    assert done.returncode == 0, done.stderr
    assert "capture: registered vision-setup-test" in done.stdout
    assert "broker: registered vision-setup-test" in done.stdout

    again = _kronii(env, "vision", "setup")
    assert again.returncode == 0, again.stderr
    assert "capture and the broker both know vision-setup-test's key: nothing to do" in again.stdout
    assert "clients add" not in again.stdout
