"""What the Captures and Privacy pages' real-browser tests share: a real capture of a real window
through `kronii capture request` (a local process may ask without presence; only reading needs it),
the mesh's embedded PostgreSQL, and the capture vault's directory on disk."""

from __future__ import annotations

import json
from datetime import datetime, timedelta
from pathlib import Path
from urllib.parse import quote

import psycopg

from tests.desktop import WindowHandle, focus_window, send_input
from tests.e2e.console.conftest import ConsoleMesh


def captured(mesh: ConsoleMesh, window: WindowHandle) -> str:
    """Focus the window, ask for a capture of it, wait until it is persisted; its job id."""
    focus_window(mesh.display, window.window_id)
    send_input(mesh.display)
    done = mesh.kronii(
        "capture", "request", "--window", hex(window.window_id), "--wait", "--json", timeout=120
    )
    assert done.returncode == 0, done.stdout + done.stderr
    lines = [json.loads(line) for line in done.stdout.splitlines() if line.strip()]
    assert lines[-1].get("status") in ("PERSISTED", "persisted"), lines
    return str(lines[0]["job_id"])


def database_url(mesh: ConsoleMesh) -> str:
    """The mesh's embedded PostgreSQL, as `kronii up` made it (its password in the data directory)."""
    password = (mesh.data_dir / "secrets" / "postgres_password").read_text().strip()
    port = mesh.env["KRONII_EMBEDDED_POSTGRES_PORT"]
    return f"postgresql://kronii:{quote(password, safe='')}@127.0.0.1:{port}/kronii"


def count(mesh: ConsoleMesh, sql: str, *args: object) -> int:
    with psycopg.connect(database_url(mesh)) as connection:
        row = connection.execute(sql, args).fetchone()
    return int(row[0]) if row else 0


def vault_files(mesh: ConsoleMesh) -> list[Path]:
    """The sealed frames on disk (the capture service's default vault directory)."""
    root = mesh.data_dir / "capture" / "objects"
    return sorted(path for path in root.iterdir() if path.is_file()) if root.is_dir() else []


def local_day(now: datetime | None = None) -> tuple[str, datetime, datetime]:
    """Today in the system's local zone (the console's when no timezone is set): its name and bounds."""
    moment = (now or datetime.now()).astimezone()
    start = moment.replace(hour=0, minute=0, second=0, microsecond=0)
    end = (start + timedelta(days=1, hours=2)).replace(hour=0)
    return start.date().isoformat(), start, end
