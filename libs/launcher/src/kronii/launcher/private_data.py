"""The kronii data directory kept private: directories 0700, files 0600, and the credentials kronii
generates once and keeps there (the embedded servers' passwords, the mesh token)."""

from __future__ import annotations

import contextlib
import os
import secrets
import stat
from pathlib import Path

from kronii.launcher.posix_acl import has_acl

__all__ = ["ensure_private_dir", "mesh_token", "secret", "tighten_private_tree", "write_private"]


def ensure_private_dir(path: Path) -> Path:
    path.mkdir(parents=True, exist_ok=True, mode=0o700)
    # With an ACL the group bits are its mask: clearing them would also take the PostgreSQL user's
    # traverse entry away (the mask's --x opens nothing to the owning group, whose entry is empty).
    wanted = 0o700 | (0o010 if has_acl(path) else 0)
    if path.stat().st_mode & 0o777 != wanted:
        path.chmod(wanted)
    return path


def tighten_private_tree(root: Path) -> int:
    """Take group and other permissions off everything under `root` (files an older kronii left
    readable); returns how many entries changed. Symbolic links are not followed."""
    changed = 0
    for directory, dirs, files in os.walk(root):
        for name in [*dirs, *files]:
            path = Path(directory) / name
            with contextlib.suppress(FileNotFoundError):
                info = path.lstat()
                if not stat.S_ISLNK(info.st_mode) and info.st_mode & 0o077 and not has_acl(path):
                    path.chmod(stat.S_IMODE(info.st_mode) & 0o700)
                    changed += 1
    return changed


def secret(directory: Path, name: str) -> str:
    """A credential generated once and kept 0600 in the data directory."""
    secrets_dir = ensure_private_dir(directory / "secrets")
    file = secrets_dir / name
    if not file.exists():
        fd = os.open(file, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w") as handle:
            handle.write(secrets.token_urlsafe(24))
    return file.read_text().strip()


def mesh_token(data_dir: Path) -> str:
    """The token kronii's own services present where the kernel cannot tell who is calling."""
    return secret(ensure_private_dir(data_dir), "api_token")


def write_private(path: Path, content: str) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as handle:
        handle.write(content)
    with contextlib.suppress(OSError):
        path.chmod(0o600)
