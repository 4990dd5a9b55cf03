"""`kronii keys rotate|status`: the capture vault's master key.

``rotate`` makes a new master key version and rewraps every live content key under it; the sealed
image files are never opened. ``status`` shows the provider, its current version and how many
objects each version wraps. Exit codes: 0 done; 1 some keys could not be rewrapped or the
database is unreachable; 2 bad settings.

The main `kronii` CLI mounts this through the ``kronii.commands`` entry point ``keys``
(:func:`add_keys_parser`); ``python -m kronii.capture.keys`` runs it alone.
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from kronii.capture.adapters.access import AuditRecorder
from kronii.capture.adapters.vault import ObjectVault, RotationReport, default_vault_root
from kronii.crypto import CryptoError, MasterKeyProvider, select_provider

__all__ = ["add_keys_parser", "key_directory", "main", "master_key_provider", "run_keys"]


def key_directory(data_dir: Path) -> Path:
    """Where the master key file lives when neither Vault nor the Secret Service is available: a 0700
    directory of its own under the data directory (the data directory itself may have to be
    traversable by the embedded PostgreSQL's user, so it cannot hold the key)."""
    return data_dir / "capture" / "keys"


def master_key_provider(
    *,
    data_dir: Path,
    vault_url: str | None = None,
    vault_token: str | None = None,
    vault_key_name: str = "kronii-capture",
    use_secret_service: bool = True,
) -> MasterKeyProvider:
    """The capture service's master key provider; the service and this CLI must both use it."""
    return select_provider(
        data_dir=key_directory(data_dir),
        vault_url=vault_url,
        vault_token=vault_token,
        vault_key_name=vault_key_name,
        use_secret_service=use_secret_service,
    )


def add_keys_parser(subparsers: Any) -> argparse.ArgumentParser:
    keys: argparse.ArgumentParser = subparsers.add_parser(
        "keys", help="rotate or inspect the master key that wraps captured images' content keys"
    )
    sub = keys.add_subparsers(dest="keys_command", metavar="ACTION")
    sub.required = True
    rotate = sub.add_parser(
        "rotate", help="make a new master key version and rewrap every content key (images untouched)"
    )
    rotate.add_argument(
        "--no-new-version",
        action="store_true",
        help="do not create a version; rewrap keys still under older versions (finishes a rotation)",
    )
    rotate.add_argument("--batch-size", type=int, default=200, help="rows per batch (default 200)")
    rotate.add_argument("--json", action="store_true", help="print the summary as JSON")
    status = sub.add_parser("status", help="the provider, its current version and objects per version")
    status.add_argument("--json", action="store_true", help="print JSON")
    keys.set_defaults(handler=run_keys)
    return keys


def _provider() -> MasterKeyProvider:
    from kronii.capture.settings import CaptureSettings
    from kronii.common.settings import load_settings

    settings = load_settings(CaptureSettings)
    return master_key_provider(
        data_dir=settings.data_dir,
        vault_url=settings.vault_url,
        vault_token=settings.vault_token,
        vault_key_name=settings.vault_key_name,
        use_secret_service=settings.use_secret_service,
    )


def _data_dir() -> Path:
    from kronii.common.settings import KroniiSettings, load_settings

    return load_settings(KroniiSettings).data_dir


def _database_url() -> str:
    # The same lookup as `kronii migrate`: KRONII_DATABASE_URL, else the database `kronii up` runs.
    from kronii.common.status import infra_url

    return infra_url("postgres")


def _recorder(audit: Any) -> AuditRecorder:
    async def record(*, actor: str, action: str, subject: str = "", outcome: str = "", **detail: Any) -> None:
        await audit.append(actor=actor, action=action, subject=subject, outcome=outcome, detail=detail)

    return record


async def rotate_keys(
    database_url: str,
    provider: MasterKeyProvider,
    *,
    data_dir: Path,
    new_version: bool = True,
    batch_size: int = 200,
    out: Any = None,
) -> RotationReport:
    """Rotate and rewrap against ``database_url``; progress lines go to ``out``. Returns the report."""
    from kronii.common.audit import AuditLog
    from kronii.common.db import make_engine, make_sessionmaker

    stream = out if out is not None else sys.stdout
    engine = make_engine(database_url)
    try:
        sessions = make_sessionmaker(engine)
        vault = ObjectVault(
            default_vault_root(data_dir),
            sessions,
            provider,
            record=_recorder(AuditLog(sessions, "capture")),
        )

        def progress(done: int, total: int) -> None:
            print(f"rewrapped {done} of {total} content keys", file=stream, flush=True)

        return await vault.rotate(new_version=new_version, batch_size=batch_size, progress=progress)
    finally:
        await engine.dispose()


async def key_status(database_url: str, provider: MasterKeyProvider, *, data_dir: Path) -> dict[str, Any]:
    from kronii.common.db import make_engine, make_sessionmaker

    engine = make_engine(database_url)
    try:
        vault = ObjectVault(default_vault_root(data_dir), make_sessionmaker(engine), provider)
        counts = await vault.key_versions()
    finally:
        await engine.dispose()
    current = provider.current_version
    stale = sum(n for (name, version), n in counts.items() if name != provider.name or version != current)
    return {
        "provider": provider.name,
        "current_version": current,
        "objects": sum(counts.values()),
        "objects_not_on_current_version": stale,
        "by_version": [
            {"provider": name, "key_version": version, "objects": n}
            for (name, version), n in sorted(counts.items())
        ],
    }


def run_keys(args: argparse.Namespace) -> int:
    try:
        provider = _provider()
        database_url = _database_url()
        data_dir = _data_dir()
        if args.keys_command == "rotate":
            if args.batch_size < 1:
                print("kronii: --batch-size must be a positive number", file=sys.stderr)
                return 2
            report = asyncio.run(
                rotate_keys(
                    database_url,
                    provider,
                    data_dir=data_dir,
                    new_version=not args.no_new_version,
                    batch_size=args.batch_size,
                    out=sys.stderr if args.json else sys.stdout,
                )
            )
            if args.json:
                print(json.dumps(dataclasses.asdict(report)))
            else:
                print(
                    f"rewrapped {report.rewrapped} content keys under master key version "
                    f"{report.key_version}; {report.image_files_touched} image files touched"
                )
            if report.failed:
                print(
                    f"kronii: {report.failed} content keys could not be unwrapped and were left as they are; "
                    "the capture service's log names their objects",
                    file=sys.stderr,
                )
                return 1
            return 0
        status = asyncio.run(key_status(database_url, provider, data_dir=data_dir))
        if args.json:
            print(json.dumps(status))
        else:
            print(f"master key provider {status['provider']}, current version {status['current_version']}")
            for row in status["by_version"]:
                print(f"  {row['provider']} version {row['key_version']}: {row['objects']} objects")
            print(
                f"{status['objects']} live objects, {status['objects_not_on_current_version']} "
                "not yet under the current version"
            )
        return 0
    except CryptoError as error:
        print(f"kronii: the master key is not available: {error}", file=sys.stderr)
        return 1


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="kronii")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    add_keys_parser(sub)
    args = parser.parse_args(argv)
    return run_keys(args)


if __name__ == "__main__":
    raise SystemExit(main())
