"""`kronii keys rotate|status|migrate`: the capture vault's master key.

``rotate`` makes a new master key version and rewraps every live content key under it; the sealed
image files are never opened. ``status`` says where the master key is kept and why, the provider,
its current version and how many objects each version wraps. ``migrate`` moves a key file's master
keys into the Secret Service's default keyring when it is unlocked (the key file is removed once the
keyring's copy reads back equal). Exit codes (kronii.launcher.cli.exits): 0 done; 1 some keys could
not be rewrapped, or the master key is not available; 2 bad arguments or settings; 4 the keyring is
locked or has no default keyring; 5 the database or the Secret Service is unreachable.

The main `kronii` CLI mounts the click group ``keys_command`` through the ``kronii.commands`` entry
point ``keys``; ``python -m kronii.capture.cli keys`` runs the same command. The vault, the crypto
providers and the database load inside the commands (the master key is chosen as the service
chooses it, in :mod:`kronii.capture.adapters.master_key`): `kronii keys --help` needs only click.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import json
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click
from kronii.capture.adapters.master_key import key_directory, master_key_choice
from kronii.launcher.cli import exits
from kronii.launcher.cli.exits import CommandError

if TYPE_CHECKING:
    from kronii.capture.adapters.vault_rotation import RotationReport
    from kronii.capture.settings import CaptureSettings
    from kronii.crypto import MasterKeyChoice, MasterKeyProvider
    from kronii.foundation.audit_trail import AuditTrail

__all__ = ["key_status", "keys_command", "main", "rotate_keys"]


def _settings() -> CaptureSettings:
    from kronii.capture.settings import CaptureSettings
    from kronii.foundation.settings import load_settings

    return load_settings(CaptureSettings)


def _choice() -> MasterKeyChoice:
    settings = _settings()
    return master_key_choice(
        data_dir=settings.data_dir,
        vault_url=settings.vault_url,
        vault_token=settings.vault_token,
        vault_key_name=settings.vault_key_name,
        use_secret_service=settings.use_secret_service,
        secret_service_timeout_s=settings.secret_service_timeout_secs,
    )


def _provider() -> MasterKeyProvider:
    return _choice().provider


def _data_dir() -> Path:
    from kronii.foundation.settings import KroniiSettings, load_settings

    return load_settings(KroniiSettings).data_dir


def _database_url() -> str:
    # The same lookup as `kronii migrate`: KRONII_DATABASE_URL, else the database `kronii up` runs.
    from kronii.launcher.status import infra_url

    return infra_url("postgres")


def _recorder(audit: Any) -> AuditTrail:
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
    from kronii.capture.adapters.vault import ObjectVault
    from kronii.capture.adapters.vault_files import default_vault_root
    from kronii.stores.audit import AuditLog
    from kronii.stores.db import make_engine, make_sessionmaker

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
    from kronii.capture.adapters.vault import ObjectVault
    from kronii.capture.adapters.vault_files import default_vault_root
    from kronii.stores.db import make_engine, make_sessionmaker

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


@contextlib.contextmanager
def _master_key_and_database() -> Iterator[None]:
    """A missing master key and a database that does not answer become sentences with exit codes."""
    from kronii.crypto import CryptoError

    try:
        yield
    except CryptoError as error:
        raise CommandError(f"kronii: the master key is not available: {error}", exits.FAILED) from None
    except Exception as error:
        if isinstance(error, exits.CommandError):
            raise  # already a sentence (no database configured): not worth the drivers' second of imports
        import psycopg
        from kronii.stores.durable import is_store_error

        if not (is_store_error(error) or isinstance(error, (psycopg.OperationalError, ConnectionError))):
            raise
        raise CommandError(
            "kronii: PostgreSQL is not reachable: start kronii with `kronii up`, or set KRONII_DATABASE_URL",
            exits.UNREACHABLE,
        ) from None


@click.group(
    "keys",
    context_settings={"help_option_names": ["-h", "--help"]},
    epilog="Exit codes: 0 done, 1 some keys could not be rewrapped or the master key is missing, 2 usage, "
    "4 the keyring is locked or has no default keyring, 5 PostgreSQL or the Secret Service unreachable.",
)
def keys_command() -> None:
    """Rotate, inspect or move the master key that wraps captured images' content keys."""


@keys_command.command(
    "rotate", short_help="make a new master key version and rewrap every content key (images untouched)"
)
@click.option(
    "--no-new-version",
    is_flag=True,
    help="do not create a version; rewrap keys still under older versions (finishes a rotation)",
)
@click.option(
    "--batch-size", type=click.IntRange(min=1), default=200, show_default=True, help="rows per batch"
)
@click.option("--json", "as_json", is_flag=True, help="print the summary as JSON (progress goes to stderr)")
def rotate(no_new_version: bool, batch_size: int, as_json: bool) -> None:
    """Make a new master key version and rewrap every live content key under it; the sealed image
    files are never opened. Exit 1 when some keys could not be rewrapped."""
    with _master_key_and_database():
        provider, database_url, data_dir = _provider(), _database_url(), _data_dir()
        report = asyncio.run(
            rotate_keys(
                database_url, provider, data_dir=data_dir, new_version=not no_new_version,
                batch_size=batch_size, out=sys.stderr if as_json else sys.stdout,
            )
        )  # fmt: skip
    if as_json:
        click.echo(json.dumps(dataclasses.asdict(report)))
    else:
        click.echo(
            f"rewrapped {report.rewrapped} content keys under master key version "
            f"{report.key_version}; {report.image_files_touched} image files touched"
        )
    if report.failed:
        raise CommandError(
            f"kronii: {report.failed} content keys could not be unwrapped and were left as they are; "
            "the capture service's log names their objects",
            exits.FAILED,
        )


@keys_command.command("status", short_help="the provider, its current version and objects per version")
@click.option("--json", "as_json", is_flag=True, help="print JSON")
def status(as_json: bool) -> None:
    """Where the master key is kept and why, the provider, its current version and how many objects
    each version wraps."""
    with _master_key_and_database():
        # The database first: with none, that is said before the key store is looked at.
        database_url = _database_url()
        choice, data_dir = _choice(), _data_dir()
        kept = choice.describe(str(choice.key_file)) if choice.key_file else choice.line
        summary: dict[str, Any] = {"store": choice.store, "kept": kept}
        summary |= asyncio.run(key_status(database_url, choice.provider, data_dir=data_dir))
    if as_json:
        click.echo(json.dumps(summary))
        return
    click.echo(kept)
    click.echo(f"master key provider {summary['provider']}, current version {summary['current_version']}")
    for row in summary["by_version"]:
        click.echo(f"  {row['provider']} version {row['key_version']}: {row['objects']} objects")
    click.echo(
        f"{summary['objects']} live objects, {summary['objects_not_on_current_version']} "
        "not yet under the current version"
    )


@keys_command.command("migrate", short_help="move the master key from its key file into the Secret Service")
def migrate() -> None:
    """Move the master keys of the key file into the Secret Service's default keyring, which must be
    unlocked (kronii never opens a keyring prompt). The key file is removed only once a fresh read of
    the keyring's copy is equal; images sealed under it stay readable. Exit 4 when the keyring is
    locked or has no default keyring, 5 when no Secret Service answers; the key file is then kept."""
    from kronii.crypto import CryptoError, SecretServiceNotReadyError, migrate_key_file

    settings = _settings()
    if settings.vault_url or settings.vault_token:
        raise CommandError(
            "kronii: the master key is kept in Vault transit: there is no key file to move", exits.USAGE
        )
    if not settings.use_secret_service:
        raise CommandError(
            "kronii: use_secret_service is off: set KRONII_CAPTURE_USE_SECRET_SERVICE=true first, "
            "or the capture service would not use the keyring",
            exits.USAGE,
        )
    directory = key_directory(settings.data_dir)
    try:
        moved = migrate_key_file(directory, timeout_s=settings.secret_service_timeout_secs)
    except SecretServiceNotReadyError as error:
        raise CommandError(
            f"kronii: the master key stays in {directory / 'master.key'}: {error.reason}. Unlock the "
            "desktop's keyring (or create a default one) and run `kronii keys migrate` again",
            exits.UNREACHABLE if error.unreachable else exits.REFUSED,
        ) from None
    except CryptoError as error:
        raise CommandError(
            f"kronii: the master key stays in {directory / 'master.key'}: {error}", exits.FAILED
        ) from None
    if not moved.versions:
        click.echo(f"nothing to move: there is no key file at {moved.key_file}")
        return
    versions = ", ".join(str(v) for v in moved.versions)
    click.echo(
        f"master key: moved from {moved.key_file} into the Secret Service's default keyring "
        f"(version {versions}); the key file is removed"
    )
    click.echo("restart kronii (`kronii up`) for the capture service to use the keyring")


def main(argv: Sequence[str] | None = None) -> int:
    """`kronii keys ...` as `kronii` runs it (same errors and exit codes); a leading "keys" is optional."""
    from kronii.launcher.cli.main import main as kronii_main

    arguments = list(sys.argv[1:] if argv is None else argv)
    if arguments[:1] == ["keys"]:
        arguments = arguments[1:]
    return kronii_main(["keys", *arguments])
