"""The vault's files on disk: one 0700 directory of sealed objects, each a 0600 file named by its id.

Nothing here raises or logs a filesystem path: errors cross the API as sentences.
"""

from __future__ import annotations

import contextlib
import os
import re
import stat
from pathlib import Path

from kronii.capture.ports import ObjectMissing

__all__ = [
    "ObjectNotFound",
    "UnsafeVaultDirectory",
    "VaultError",
    "check_object_id",
    "default_vault_root",
    "object_path",
    "prepare_root",
    "read_private",
    "write_private",
]

# Ids arrive from API callers; only this shape may ever be joined to the vault directory.
_OBJECT_ID = re.compile(r"^[A-Za-z0-9_-]{16,64}$")
_SUFFIX = ".sealed"


def default_vault_root(data_dir: Path) -> Path:
    """Where the service keeps sealed objects under its data directory."""
    return data_dir / "capture" / "objects"


class VaultError(Exception):
    """Base of the vault's errors; every message is a sentence without a path."""


class ObjectNotFound(VaultError, ObjectMissing):
    """No live object of that id and kind: unknown, of another kind, expired or purged (the port's
    ObjectMissing, which the use cases catch)."""

    def __init__(self, object_id: str) -> None:
        super().__init__("no such screenshot (unknown, expired or purged)")
        self.object_id = object_id


class UnsafeVaultDirectory(VaultError):
    """The vault directory is not a private directory of this user."""


def check_object_id(object_id: str) -> None:
    if not _OBJECT_ID.fullmatch(object_id):
        raise ObjectNotFound(object_id)


def object_path(root: Path, object_id: str) -> Path:
    check_object_id(object_id)
    return root / f"{object_id}{_SUFFIX}"


def prepare_root(root: Path) -> None:
    """Create the directory 0700 if missing; refuse one that another user owns or others can enter."""
    try:
        root.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        root.mkdir(mode=0o700, exist_ok=True)
        info = os.lstat(root)
    except OSError as error:
        raise UnsafeVaultDirectory(f"the screenshot store cannot be created: {error.strerror}") from None
    if not stat.S_ISDIR(info.st_mode):
        raise UnsafeVaultDirectory("the screenshot store is not a directory")
    if info.st_uid != os.getuid():
        raise UnsafeVaultDirectory("the screenshot store is owned by another user")
    mode = stat.S_IMODE(info.st_mode)
    if mode & 0o077:
        raise UnsafeVaultDirectory(
            f"the screenshot store has mode {mode:04o}, open to group or others; it must be 0700"
        )


def write_private(directory: Path, name: str, data: bytes) -> None:
    """Write ``data`` as a new 0600 file, durably: fsync the file, rename it in place, fsync the directory."""
    final = directory / name
    partial = directory / f".{name}.partial"
    fd = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    try:
        with os.fdopen(fd, "wb") as handle:
            os.fchmod(handle.fileno(), 0o600)
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.rename(partial, final)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(partial)
        raise
    dir_fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(dir_fd)
    finally:
        os.close(dir_fd)


def read_private(path: Path) -> bytes:
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    with os.fdopen(fd, "rb") as handle:
        return handle.read()
