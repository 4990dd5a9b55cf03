"""`kronii status`: each infrastructure server and service, its address, and whether it is ready.

It speaks NATS, Redis (RESP) and HTTP itself with the standard library, and imports the PostgreSQL driver
only once the port answers: a status command should answer in a fraction of a second, not wait on the
import of four client libraries."""

from __future__ import annotations

import asyncio
import json
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlsplit

from kronii.foundation.settings import load_settings
from kronii.foundation.urls import libpq_url, redact_url
from kronii.launcher.local_http import get_json
from kronii.runtime.rendezvous import connect_host, service_http_url
from kronii.runtime.services import installed_services
from kronii.runtime.up_settings import LauncherSettings, state_path

__all__ = ["STATUS_COLUMNS", "StatusRow", "collect_status", "infra_url", "row_json", "table_rows"]


@dataclass(frozen=True)
class StatusRow:
    name: str
    kind: str
    address: str
    ready: bool
    detail: str
    restarts: int = 0


def outage_note(entry: dict[str, Any]) -> tuple[int, str]:
    """(restarts, a few words) from an embedded server's record in the state file of `kronii up`:
    'restarted 1 time, last down 1.4 s at 10:02:11', or how long it has been down so far."""
    restarts = int(entry.get("restarts") or 0)
    down_since = entry.get("down_since")
    if isinstance(down_since, (int, float)):
        at = time.strftime("%H:%M:%S", time.localtime(down_since))
        return restarts, f"down since {at} ({time.time() - down_since:.1f} s), kronii up is restarting it"
    outages = entry.get("outages") or []
    if not restarts or not outages:
        return restarts, ""
    last = outages[-1]
    at = time.strftime("%H:%M:%S", time.localtime(float(last["died_at"])))
    times = "time" if restarts == 1 else "times"
    return restarts, f"restarted {restarts} {times}, last down {float(last['down_secs']):.1f} s at {at}"


def _secret(data_dir: Path, name: str) -> str | None:
    try:
        return (data_dir / "secrets" / name).read_text().strip()
    except OSError:
        return None


def infra_url(name: str) -> str:
    """The URL (with credentials) a command on this host uses for `name` (nats, redis or postgres):
    the configured KRONII_*_URL, else the embedded server of `kronii up` in the data directory.

    Raises SettingsError with a sentence when neither exists yet.
    """

    settings = load_settings(LauncherSettings)
    # A running `kronii up` may use other ports than these settings say: its state file knows.
    try:
        state: dict[str, Any] = json.loads(state_path(settings.data_dir).read_text())
        port = urlsplit(str(state["infra"][name]["url"])).port
        if port and state["infra"][name].get("embedded", True):
            field = {
                "nats": "embedded_nats_port",
                "redis": "embedded_redis_port",
                "postgres": "embedded_postgres_port",
            }
            settings = load_settings(LauncherSettings, **{field[name]: port})
    except (OSError, ValueError, KeyError, TypeError):
        pass
    url, kind = _infra_urls(settings, {})[name]
    secret = {"nats": "nats_token", "redis": "redis_password", "postgres": "postgres_password"}[name]
    if kind == "embedded" and _secret(settings.data_dir, secret) is None:
        variable = {
            "nats": "KRONII_NATS_URL",
            "redis": "KRONII_REDIS_URL",
            "postgres": "KRONII_DATABASE_URL",
        }[name]
        from kronii.launcher.cli.exits import UNREACHABLE, CommandError

        raise CommandError(
            f"kronii: {variable} is not set and no embedded {name} exists yet: start kronii with `kronii up`",
            UNREACHABLE,
        )
    return url


def _infra_urls(settings: LauncherSettings, state: dict[str, Any]) -> dict[str, tuple[str, str]]:
    """(url with credentials, kind) per server: configured URLs, else the embedded servers' ports."""
    d = settings.data_dir
    embedded = {
        "nats": f"nats://{_secret(d, 'nats_token') or ''}@127.0.0.1:{settings.embedded_nats_port}",
        "redis": f"redis://:{_secret(d, 'redis_password') or ''}@127.0.0.1:{settings.embedded_redis_port}/0",
        "postgres": (
            f"postgresql://kronii:{quote(_secret(d, 'postgres_password') or '', safe='')}"
            f"@127.0.0.1:{settings.embedded_postgres_port}/kronii"
        ),
    }
    configured = {"nats": settings.nats_url, "redis": settings.redis_url, "postgres": settings.database_url}
    result: dict[str, tuple[str, str]] = {}
    for name in ("nats", "redis", "postgres"):
        url = configured[name]
        if url:
            result[name] = (url, "configured")
        else:
            running = state.get("infra", {}).get(name, {})
            result[name] = (embedded[name], "embedded" if running.get("embedded", True) else "configured")
    return result


async def _check_nats(url: str) -> str:
    """Speak the NATS protocol directly: INFO tells the version, PING/PONG proves the credentials."""
    parts = urlsplit(url)
    reader, writer = await asyncio.open_connection(parts.hostname or "127.0.0.1", parts.port or 4222)
    try:
        line = await reader.readline()
        if not line.startswith(b"INFO "):
            raise ConnectionError("not a NATS server")
        info = json.loads(line[5:])
        connect: dict[str, object] = {"verbose": False, "pedantic": False, "name": "kronii-status"}
        if parts.username and not parts.password:
            connect["auth_token"] = parts.username
        elif parts.username:
            connect.update(user=parts.username, **{"pass": parts.password})
        writer.write(b"CONNECT " + json.dumps(connect).encode() + b"\r\nPING\r\n")
        await writer.drain()
        answer = await reader.readline()
        if not answer.startswith(b"PONG"):
            raise ConnectionError(answer.decode(errors="replace").strip() or "no PONG")
        jetstream = "JetStream on" if info.get("jetstream") else "JetStream off"
        return f"nats-server {info.get('version', '?')}, {jetstream}"
    finally:
        writer.close()


def _resp_command(*words: str) -> bytes:
    parts = [f"*{len(words)}\r\n".encode()]
    for word in words:
        data = word.encode()
        parts.append(b"$%d\r\n%s\r\n" % (len(data), data))
    return b"".join(parts)


async def _resp_reply(reader: asyncio.StreamReader) -> bytes:
    """One RESP reply: a simple string or a bulk string; an error reply raises."""
    line = (await reader.readline()).rstrip(b"\r\n")
    if line.startswith(b"-"):
        raise ConnectionError(line[1:].decode(errors="replace"))
    if line.startswith(b"$"):
        return (await reader.readexactly(int(line[1:]) + 2))[:-2]
    if line.startswith(b"+"):
        return line[1:]
    raise ConnectionError("not a Redis server")


async def _check_redis_tls(url: str) -> str:
    import redis.asyncio as aioredis

    client = aioredis.from_url(url, socket_connect_timeout=1.5, socket_timeout=1.5)
    try:
        info = await client.info("server")
        return f"redis {info.get('redis_version', '?')}"
    finally:
        await client.aclose()


async def _check_redis(url: str) -> str:
    parts = urlsplit(url)
    if parts.scheme == "rediss":
        return await _check_redis_tls(url)
    reader, writer = await asyncio.open_connection(parts.hostname or "127.0.0.1", parts.port or 6379)
    try:
        if parts.password:
            auth = (parts.username, parts.password) if parts.username else (parts.password,)
            writer.write(_resp_command("AUTH", *auth))
            await _resp_reply(reader)
        writer.write(_resp_command("INFO", "server"))
        info = (await _resp_reply(reader)).decode(errors="replace")
        version = next(
            (line.split(":", 1)[1] for line in info.splitlines() if line.startswith("redis_version:")), "?"
        )
        return f"redis {version.strip()}"
    finally:
        writer.close()


async def _check_postgres(url: str) -> str:
    parts = urlsplit(url)
    _, probe = await asyncio.open_connection(parts.hostname or "127.0.0.1", parts.port or 5432)
    probe.close()
    import psycopg  # only for a port that answers: the driver takes longer to import than the rest

    conn = await psycopg.AsyncConnection.connect(libpq_url(url), connect_timeout=2)
    try:
        row = await (await conn.execute("SHOW server_version")).fetchone()
        migrated = (
            await (await conn.execute("SELECT version_num FROM alembic_version LIMIT 1")).fetchone()
            if await _has_table(conn, "alembic_version")
            else None
        )
        schema = f", schema {migrated[0]}" if migrated else ", not migrated"
        return f"PostgreSQL {row[0] if row else '?'}{schema}"
    finally:
        await conn.close()


async def _has_table(conn: Any, table: str) -> bool:
    row = await (await conn.execute("SELECT to_regclass(%s) IS NOT NULL", (table,))).fetchone()
    return bool(row and row[0])


async def _check_service(url: str) -> tuple[bool, str]:
    _, body = await asyncio.to_thread(get_json, f"{url}/readyz", 3.0)
    notes = []
    for name, item in body.get("dependencies", {}).items():
        if not item.get("ready"):
            notes.append(f"{name}: {item.get('detail') or 'not ready'}")
    return bool(body.get("ready")), "; ".join(notes) or "all dependencies ready"


def _reason(error: Exception) -> str:
    """A few words a person reads at a glance, not an errno and a tuple."""
    if isinstance(error, ConnectionRefusedError):
        return "connection refused"
    if isinstance(error, TimeoutError):
        return "no answer within 4 s"
    text = str(error).strip()
    return text.splitlines()[0] if text else type(error).__name__


async def _row(name: str, kind: str, address: str, check: Any) -> StatusRow:
    try:
        result = await asyncio.wait_for(check, 4)
    except Exception as error:
        return StatusRow(name, kind, address, False, f"not reachable: {_reason(error)[:120]}")
    if isinstance(result, tuple):
        return StatusRow(name, kind, address, result[0], result[1])
    return StatusRow(name, kind, address, True, str(result))


async def _infra_row(name: str, kind: str, url: str, check: Any, entry: dict[str, Any]) -> StatusRow:
    row = await _row(name, kind, redact_url(url), check)
    try:
        restarts, note = outage_note(entry)
    except (KeyError, TypeError, ValueError):
        return row
    detail = f"{row.detail}; {note}" if note else row.detail
    return StatusRow(row.name, row.kind, row.address, row.ready, detail, restarts)


async def collect_status(settings: LauncherSettings | None = None) -> list[StatusRow]:
    settings = settings or load_settings(LauncherSettings)
    try:
        state: dict[str, Any] = json.loads(state_path(settings.data_dir).read_text())
    except (OSError, ValueError):
        state = {}
    urls = _infra_urls(settings, state)
    checks = {"nats": _check_nats, "redis": _check_redis, "postgres": _check_postgres}
    tasks = [
        _infra_row(name, kind, url, checks[name](url), state.get("infra", {}).get(name, {}))
        for name, (url, kind) in urls.items()
    ]
    for spec in installed_services():
        # The address `kronii agents` and other commands use too (rendezvous.service_http_url).
        service_settings = load_settings(spec.settings_cls)
        found = service_http_url(spec.name, spec.settings_cls, data_dir=settings.data_dir)
        http = found.url
        grpc = found.grpc or (
            f"{connect_host(service_settings.host)}:{service_settings.grpc_port}"
            if service_settings.grpc_port
            else ""
        )
        address = f"{http}" + (f"  grpc {grpc}" if grpc else "")
        entry = state.get("services", {}).get(spec.name, {})
        tasks.append(_service_row(spec.name, address, _check_service(http), entry))
    return list(await asyncio.gather(*tasks))


async def _service_row(name: str, address: str, check: Any, entry: dict[str, Any]) -> StatusRow:
    """A service's row, with how many times `kronii up` started its process again (its state file)."""
    row = await _row(name, "service", address, check)
    try:
        restarts = int(entry.get("restarts") or 0)
        last = entry.get("last_restart")
        at = time.strftime("%H:%M:%S", time.localtime(float(last))) if last else ""
    except (TypeError, ValueError):
        return row
    if not restarts:
        return row
    times = "time" if restarts == 1 else "times"
    note = f"its process restarted {restarts} {times}" + (f", last at {at}" if at else "")
    return StatusRow(row.name, row.kind, row.address, row.ready, f"{row.detail}; {note}", restarts)


def row_json(row: StatusRow) -> dict[str, Any]:
    """One row for `kronii status --json`: each address in its own field."""
    http, _, grpc = row.address.partition("  grpc ")
    data: dict[str, Any] = {"name": row.name, "kind": row.kind}
    if row.kind == "service":
        data.update(http=http, grpc=grpc or None)
    else:
        data["url"] = row.address
    data.update(ready=row.ready, detail=row.detail, restarts=row.restarts)
    return data


STATUS_COLUMNS = ("NAME", "KIND", "ADDRESS", "READY", "DETAIL")


def table_rows(rows: list[StatusRow]) -> list[tuple[str, ...]]:
    return [(r.name, r.kind, r.address, "yes" if r.ready else "NO", r.detail) for r in rows]
