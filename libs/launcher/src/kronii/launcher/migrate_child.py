"""`kronii up` applies the migrations in a short-lived child process: Alembic, SQLAlchemy's schema
machinery and the database driver (about 35 MB) then leave with it, instead of staying resident in the
launcher for the whole session. For the embedded PostgreSQL the child first creates kronii's database if
it is missing. The URL travels in the child's environment, never on its command line (which other users
can read)."""

from __future__ import annotations

import os
import subprocess
import sys

__all__ = ["MigrationFailed", "migrate_in_child"]

_URL_VARIABLE = "KRONII_MIGRATE_DATABASE_URL"
_CREATE_VARIABLE = "KRONII_MIGRATE_CREATE_DATABASE"
_TIMEOUT_SECS = 300


class MigrationFailed(RuntimeError):
    pass


def migrate_in_child(url: str, *, create_database: bool = False) -> None:
    """Bring the database at `url` to the newest schema; with `create_database`, create it first
    (as the server's owner, from its `postgres` database) when it does not exist."""
    env = {**os.environ, _URL_VARIABLE: url}
    if create_database:
        env[_CREATE_VARIABLE] = "1"
    try:
        done = subprocess.run(
            [sys.executable, "-m", "kronii.launcher.migrate_child"],
            env=env,
            capture_output=True,
            text=True,
            timeout=_TIMEOUT_SECS,
            check=False,
        )
    except subprocess.TimeoutExpired:
        raise MigrationFailed(f"the database migrations did not finish within {_TIMEOUT_SECS} s") from None
    if done.returncode != 0:
        lines = [line for line in done.stderr.strip().splitlines() if line.strip()]
        reason = lines[-1] if lines else f"exit code {done.returncode}"
        raise MigrationFailed(f"the database migrations failed: {reason}")


def _one_line(error: BaseException) -> str:
    """The driver's own first line (no traceback, no link to a web page)."""
    cause: BaseException = error.__cause__ or error
    lines = [line.strip() for line in str(cause).splitlines() if line.strip()]
    return lines[0] if lines else type(cause).__name__


def create_database_if_missing(url: str) -> None:
    import psycopg
    from kronii.foundation.urls import libpq_url
    from psycopg import sql

    conninfo = libpq_url(url)
    name = str(psycopg.conninfo.conninfo_to_dict(conninfo).get("dbname") or "kronii")
    server = psycopg.conninfo.make_conninfo(conninfo, dbname="postgres")
    with psycopg.connect(server, autocommit=True) as conn:
        if conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", (name,)).fetchone() is None:
            conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))


if __name__ == "__main__":
    from kronii.stores.db import migrate_up

    try:
        if os.environ.get(_CREATE_VARIABLE):
            create_database_if_missing(os.environ[_URL_VARIABLE])
        migrate_up(os.environ[_URL_VARIABLE])
    except Exception as failure:
        print(_one_line(failure), file=sys.stderr)
        raise SystemExit(1) from None
