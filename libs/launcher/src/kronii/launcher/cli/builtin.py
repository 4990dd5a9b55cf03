"""The commands `kronii` itself carries: up, status, doctor, migrate, audit, config, service, completion.
Defining them is light (click only); each imports what it needs when it runs."""

from __future__ import annotations

import asyncio
import contextlib
import json
import sys
from collections.abc import Iterator, Sequence
from datetime import datetime
from typing import Any

import click
from kronii.launcher.cli import exits
from kronii.launcher.cli.config_cmd import config
from kronii.launcher.cli.doctor import doctor
from kronii.launcher.cli.groups import SuggestingGroup
from kronii.launcher.cli.service_cmd import service

__all__ = ["BUILT_IN", "audit", "completion", "config", "doctor", "migrate", "service", "status", "up"]


@click.command("up", help="run the whole mesh on this machine (Ctrl-C stops it)")
@click.option(
    "--stop-agents",
    is_flag=True,
    help="stop the agents' tmux sessions too when kronii stops (default: they keep running)",
)
@click.option(
    "--autostart",
    is_flag=True,
    help="as the desktop's autostart entry runs it: step aside when a running systemd user manager runs the "
    "kronii unit",
)
def up(stop_agents: bool, autostart: bool) -> None:
    if autostart:
        from kronii.launcher.desktop_units import unit_runs_kronii

        runs = unit_runs_kronii()  # only a running user manager counts, not a unit file linked offline
        if runs is not None:
            click.echo(f"kronii: {runs}")
            raise SystemExit(exits.OK)
    from kronii.foundation.settings import load_settings
    from kronii.launcher.up import Launcher, LauncherSettings

    settings = load_settings(LauncherSettings, **({"stop_agents": True} if stop_agents else {}))
    launcher = Launcher(settings, log_format="text" if sys.stdout.isatty() else None)
    code = launcher.run()
    if launcher.output_gone:
        raise BrokenPipeError  # kronii stopped because its reader left: quiet, exit 141, as every command
    raise SystemExit(code)


@click.command(
    "status", help="each server and service: its address, readiness and restarts (exit 1 if one is not ready)"
)
@click.option("--json", "as_json", is_flag=True, help="print JSON instead of a table")
def status(as_json: bool) -> None:
    from kronii.launcher.cli.tables import print_table
    from kronii.launcher.status import STATUS_COLUMNS, collect_status, row_json, table_rows

    rows = asyncio.run(collect_status())
    if as_json:
        click.echo(json.dumps([row_json(row) for row in rows], indent=2))
    else:
        print_table(STATUS_COLUMNS, table_rows(rows))
        if not any(row.ready for row in rows):
            click.echo("kronii: nothing answers: start kronii with `kronii up`", err=True)
    raise SystemExit(exits.OK if all(row.ready for row in rows) else exits.FAILED)


@click.command("migrate", help="apply database migrations (default: up to the latest)")
@click.argument("revision", default="head")
@click.option("--down", is_flag=True, help="migrate down to REVISION (e.g. base)")
def migrate(revision: str, down: bool) -> None:
    from kronii.launcher.status import infra_url
    from kronii.stores.db import migrate_down, migrate_up

    if down and revision == "head":
        raise click.UsageError("--down needs a target revision, e.g. `kronii migrate --down base`")
    url = infra_url("postgres")
    with _postgres_or_sentence():
        (migrate_down if down else migrate_up)(url, revision)
    click.echo(f"kronii: database migrated {'down' if down else 'up'} to {revision}")


@contextlib.contextmanager
def _postgres_or_sentence() -> Iterator[None]:
    """PostgreSQL unreachable becomes one sentence and the UNREACHABLE exit code, not a driver's trace."""
    try:
        yield
    except Exception as error:
        if isinstance(error, exits.CommandError):
            raise  # already a sentence (no database configured): not worth the drivers' second of imports
        import psycopg
        from kronii.stores.durable import is_store_error

        if not (is_store_error(error) or isinstance(error, psycopg.OperationalError)):
            raise
        click.echo(
            "kronii: PostgreSQL is not reachable: start kronii with `kronii up`, or set KRONII_DATABASE_URL",
            err=True,
        )
        raise SystemExit(exits.UNREACHABLE) from None


@click.group("audit", cls=SuggestingGroup, help="check or read the audit log")
def audit() -> None:
    pass


async def _audit_log() -> Any:
    from kronii.launcher.status import infra_url

    url = infra_url("postgres")  # no database is said before the driver's second of imports
    from kronii.stores.audit import AuditLog
    from kronii.stores.db import make_engine, make_sessionmaker

    engine = make_engine(url)
    return engine, AuditLog(make_sessionmaker(engine), service="cli")


@audit.command("verify", help="walk the hash chain and report the first broken row (exit 1 if broken)")
@click.option("--json", "as_json", is_flag=True, help="print JSON")
def audit_verify(as_json: bool) -> None:
    async def run() -> int:
        engine, log = await _audit_log()
        try:
            report = await log.verify()
        finally:
            await engine.dispose()
        if as_json:
            click.echo(json.dumps({"ok": report.ok, "rows_checked": report.rows_checked,
                                   "first_broken_id": report.first_broken_id, "reason": report.reason}))  # fmt: skip
        elif report.ok:
            click.echo(f"audit chain intact: {report.rows_checked} rows verified")
        else:
            click.echo(f"audit chain BROKEN at row {report.first_broken_id}: {report.reason}")
        return exits.OK if report.ok else exits.FAILED

    with _postgres_or_sentence():
        raise SystemExit(asyncio.run(run()))


def _when(at: datetime) -> str:
    """Local time, to the second: what a person reads in a log."""
    return at.astimezone().strftime("%Y-%m-%d %H:%M:%S")


@audit.command("tail", help="the most recent audit rows, oldest first")
@click.option(
    "-n", "--lines", type=click.IntRange(min=1), default=20, show_default=True, help="how many rows"
)
@click.option("--json", "as_json", is_flag=True, help="one JSON object per row")
def audit_tail(lines: int, as_json: bool) -> None:
    async def run() -> int:
        engine, log = await _audit_log()
        try:
            rows = await log.tail(lines)
        finally:
            await engine.dispose()
        if as_json:
            for row in rows:
                click.echo(json.dumps({"id": row.id, "at": row.at.isoformat(), "service": row.service,
                                       "actor": row.actor, "action": row.action, "subject": row.subject,
                                       "outcome": row.outcome, "detail": row.detail, "row_hash": row.row_hash}))  # fmt: skip
            return exits.OK
        _print_audit_rows(rows)
        return exits.OK

    with _postgres_or_sentence():
        raise SystemExit(asyncio.run(run()))


def _print_audit_rows(rows: Sequence[Any]) -> None:
    """Columns as wide as their longest value (an action or actor longer than a fixed width pushed
    every later column out of line); the subject and detail, of any length, come last."""
    from kronii.launcher.cli.tables import print_table

    header = ("ID", "AT", "SERVICE", "ACTION", "ACTOR", "OUTCOME", "SUBJECT")
    print_table(
        header,
        [
            (str(row.id), _when(row.at), row.service, row.action, row.actor, row.outcome,
             " ".join([row.subject, *(f"{k}={v}" for k, v in sorted(row.detail.items()))]).strip())
            for row in rows
        ],
    )  # fmt: skip


@click.command("completion", help='print the shell completion script: eval "$(kronii completion bash)"')
@click.argument("shell", type=click.Choice(["bash", "zsh", "fish"]))
@click.pass_context
def completion(ctx: click.Context, shell: str) -> None:
    from click.shell_completion import get_completion_class

    completer = get_completion_class(shell)
    assert completer is not None  # the three choices are click's own
    # The root group this command was reached from (`kronii`): completion covers all of it.
    root = ctx.find_root().command
    click.echo(completer(root, {}, "kronii", "_KRONII_COMPLETE").source())


BUILT_IN: dict[str, click.Command] = {
    command.name or "": command
    for command in (up, status, doctor, migrate, audit, config, service, completion)
}
