"""`kronii`: run the mesh, look at it, migrate its database, check its audit log."""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
from collections.abc import Sequence

__all__ = ["main"]

# Start-up cost matters: `echo x | kronii redact` used to spend seconds importing SQLAlchemy, Redis, gRPC and
# pydantic for one line. Heavy modules are imported inside the handlers that need them, and the commands of
# other packages (entry points, whose modules pull in their services) are loaded only when the command asked
# for is not one of these.
_BUILT_IN = frozenset({"up", "status", "migrate", "redact", "audit", "config", "service"})


def _wants_plugins(argv: Sequence[str]) -> bool:
    """Whether parsing `argv` needs the other packages' commands: for help, errors and their own commands."""
    return not argv or argv[0] not in _BUILT_IN


def _parser(*, plugins: bool = True) -> argparse.ArgumentParser:
    from kronii.redaction.cli import add_redact_parser

    parser = argparse.ArgumentParser(
        prog="kronii",
        description="kronii: privacy-first context engine and agent supervisor for your desktop.",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True

    up = sub.add_parser("up", help="run the whole mesh on this machine (Ctrl-C stops it)")
    up.add_argument(
        "--stop-agents",
        action="store_true",
        help="stop the agents' tmux sessions too when kronii stops (default: they keep running)",
    )
    up.add_argument(
        "--autostart",
        action="store_true",
        help="as the desktop's autostart entry runs it: step aside when the systemd user unit runs kronii",
    )

    status = sub.add_parser("status", help="show each server and service, its address and readiness")
    status.add_argument("--json", action="store_true", help="print JSON instead of a table")

    migrate = sub.add_parser("migrate", help="apply database migrations (default: up to the latest)")
    migrate.add_argument("revision", nargs="?", default="head", help="target revision (default: head)")
    migrate.add_argument("--down", action="store_true", help="migrate down to REVISION (e.g. base)")

    add_redact_parser(sub)
    from kronii.common.cli.config_cmd import add_config_parser
    from kronii.common.cli.service_cmd import add_service_parser

    add_config_parser(sub)
    add_service_parser(sub)
    # Commands of other installed packages (`kronii agents` from the supervisor, ...).
    if plugins:
        from importlib.metadata import entry_points

        for entry in sorted(entry_points(group="kronii.commands"), key=lambda item: item.name):
            entry.load()(sub)

    audit = sub.add_parser("audit", help="check or read the audit log")
    audit_sub = audit.add_subparsers(dest="audit_command", metavar="ACTION")
    audit_sub.required = True
    audit_sub.add_parser("verify", help="walk the hash chain and report the first broken row")
    tail = audit_sub.add_parser("tail", help="show the most recent audit rows")
    tail.add_argument("-n", "--lines", type=int, default=20, help="how many rows (default 20)")
    tail.add_argument("--json", action="store_true", help="one JSON object per row")
    return parser


def _database_url() -> str:
    from kronii.common.status import infra_url

    return infra_url("postgres")


def _cmd_up(stop_agents: bool) -> int:
    from kronii.common.launcher import Launcher, LauncherSettings
    from kronii.common.settings import load_settings

    settings = load_settings(LauncherSettings, **({"stop_agents": True} if stop_agents else {}))
    return Launcher(settings, log_format="text" if sys.stdout.isatty() else None).run()


def _cmd_status(as_json: bool) -> int:
    import asyncio

    from kronii.common.status import collect_status, render_table

    rows = asyncio.run(collect_status())
    if as_json:
        print(json.dumps([row.__dict__ for row in rows], indent=2))
    else:
        print(render_table(rows))
    return 0 if all(row.ready for row in rows) else 1


def _cmd_migrate(revision: str, down: bool) -> int:
    from kronii.common.db import migrate_down, migrate_up

    url = _database_url()
    if down:
        if revision == "head":
            print(
                "kronii: --down needs a target revision, e.g. `kronii migrate --down base`", file=sys.stderr
            )
            return 2
        migrate_down(url, revision)
        print(f"kronii: database migrated down to {revision}")
    else:
        migrate_up(url, revision)
        print(f"kronii: database migrated up to {revision}")
    return 0


async def _audit(command: str, lines: int, as_json: bool) -> int:
    from kronii.common.audit import AuditLog
    from kronii.common.db import make_engine, make_sessionmaker

    engine = make_engine(_database_url())
    try:
        audit = AuditLog(make_sessionmaker(engine), service="cli")
        if command == "verify":
            report = await audit.verify()
            if report.ok:
                print(f"audit chain intact: {report.rows_checked} rows verified")
                return 0
            print(f"audit chain BROKEN at row {report.first_broken_id}: {report.reason}")
            return 1
        for row in await audit.tail(lines):
            if as_json:
                print(
                    json.dumps(
                        {
                            "id": row.id,
                            "at": row.at.isoformat(),
                            "service": row.service,
                            "actor": row.actor,
                            "action": row.action,
                            "subject": row.subject,
                            "outcome": row.outcome,
                            "detail": row.detail,
                            "row_hash": row.row_hash,
                        }
                    )
                )
            else:
                detail = " ".join(f"{k}={v}" for k, v in sorted(row.detail.items()))
                print(
                    f"{row.id:>6}  {row.at.isoformat(timespec='seconds')}  {row.service:<9} {row.action:<18} "
                    f"{row.actor:<12} {row.outcome:<10} {row.subject} {detail}".rstrip()
                )
        return 0
    finally:
        await engine.dispose()


def _settings_error_message(error: SystemExit) -> str | None:
    """The sentence of a `SettingsError` (a SystemExit), else None. Its module is looked up, not imported:
    a command that never loaded the settings (pydantic) cannot have raised one."""
    settings = sys.modules.get("kronii.common.settings")
    error_type = getattr(settings, "SettingsError", None)
    if error_type is None or not isinstance(error, error_type):
        return None
    return str(getattr(error, "message", error))


def main(argv: Sequence[str] | None = None) -> int:
    arguments = list(sys.argv[1:] if argv is None else argv)
    args = _parser(plugins=_wants_plugins(arguments)).parse_args(arguments)
    try:
        if args.command == "up":
            if args.autostart:
                from kronii.common.desktop_units import unit_enabled

                if unit_enabled():
                    print("kronii: the kronii.service user unit runs kronii in this session")
                    return 0
            return _cmd_up(args.stop_agents)
        if args.command == "status":
            return _cmd_status(args.json)
        if args.command == "migrate":
            return _cmd_migrate(args.revision, args.down)
        if args.command == "service":
            from kronii.common.cli.service_cmd import run_service_command

            return run_service_command(args)
        if args.command == "config":
            from kronii.common.cli.config_cmd import run_config

            return run_config(args)
        if args.command == "redact":
            from kronii.redaction.cli import run_redact

            return run_redact(args)
        handler = getattr(args, "handler", None)
        if handler is not None:
            return int(handler(args))
        if args.command == "audit":
            if getattr(args, "lines", 1) <= 0:
                print("kronii: --lines must be a positive number", file=sys.stderr)
                return 2
            import asyncio

            return asyncio.run(
                _audit(args.audit_command, getattr(args, "lines", 20), getattr(args, "json", False))
            )
    except SystemExit as error:
        message = _settings_error_message(error)
        if message is None:
            raise
        print(message, file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        # The reader left (`kronii status | head -3`): as for any Unix tool, stop quietly.
        with contextlib.suppress(OSError):
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141
    except Exception as error:  # a sentence, not a traceback, for the person at the terminal
        print(f"kronii: {args.command} failed: {type(error).__name__}: {error}", file=sys.stderr)
        return 1
    return 2


if __name__ == "__main__":
    raise SystemExit(main())
