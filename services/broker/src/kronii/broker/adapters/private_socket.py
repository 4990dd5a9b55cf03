"""A Unix socket only this user can reach, as the broker's viewer-hook and stop sockets are: a 0700
directory owned by the user, a stale socket from a dead broker replaced (a live one refused), and a
listener 0600 from the moment it is bound. Failures are `error(sentence)`; the sentences carry no path."""

from __future__ import annotations

import os
import socket
import stat
from collections.abc import Callable
from pathlib import Path

__all__ = ["listen_private"]


def _private_directory(directory: Path, what: str, error: Callable[[str], Exception]) -> None:
    try:
        directory.mkdir(mode=0o700, parents=True, exist_ok=True)
        info = os.lstat(directory)
    except OSError as failure:
        raise error(f"the {what}'s directory cannot be created: {failure.strerror}") from None
    if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.getuid():
        raise error(f"the {what}'s directory is not a directory owned by this user")
    if stat.S_IMODE(info.st_mode) != 0o700:
        os.chmod(directory, 0o700)


def _clear_stale(path: Path, what: str, error: Callable[[str], Exception]) -> None:
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return
    if not stat.S_ISSOCK(info.st_mode):
        raise error(f"something that is not a socket is in the way of the {what}")
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as probe:
        probe.settimeout(0.5)
        if probe.connect_ex(str(path)) == 0:
            raise error(f"another broker is already listening on the {what}")
    path.unlink()


def listen_private(path: Path, what: str, error: Callable[[str], Exception]) -> socket.socket:
    """A listening socket at `path` (blocking; the caller sets what it needs)."""
    _private_directory(path.parent, what, error)
    _clear_stale(path, what, error)
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    previous = os.umask(0o177)  # 0600 from the bind on, not only after the chmod
    try:
        listener.bind(str(path))
    except OSError:
        listener.close()
        raise
    finally:
        os.umask(previous)
    os.chmod(path, 0o600)
    listener.listen(16)
    return listener
