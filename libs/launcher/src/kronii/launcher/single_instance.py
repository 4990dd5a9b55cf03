"""One `kronii up` per data directory: a lock file held while it runs, a clear sentence (with the
running one's pid) for a second one, and the data directory's permissions tightened on the way in."""

from __future__ import annotations

import contextlib
import fcntl
import os
from collections.abc import Iterator
from pathlib import Path

from kronii.launcher.private_data import ensure_private_dir, tighten_private_tree
from kronii.runtime.up_settings import running_pid, state_path

__all__ = ["AlreadyRunning", "single_instance"]


class AlreadyRunning(RuntimeError):
    pass


@contextlib.contextmanager
def single_instance(data_dir: Path) -> Iterator[None]:
    """Hold the data directory's lock until the block ends, then remove the state file."""
    data_dir = ensure_private_dir(data_dir)
    lock_file = data_dir / "up.lock"
    fd = os.open(lock_file, os.O_RDWR | os.O_CREAT, 0o600)
    os.fchmod(fd, 0o600)
    handle = os.fdopen(fd, "a+")
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        handle.close()
        pid = running_pid(data_dir)
        where = f" (pid {pid})" if pid else ""
        raise AlreadyRunning(
            f"kronii is already running{where} with data in {data_dir}; "
            f"stop it with Ctrl-C in its terminal{f' or `kill {pid}`' if pid else ''}, "
            "or use another KRONII_DATA_DIR"
        ) from None
    # Files an older kronii (or a command run under a loose umask) left readable to others.
    tighten_private_tree(data_dir)
    try:
        yield
    finally:
        state_path(data_dir).unlink(missing_ok=True)
        fcntl.flock(handle, fcntl.LOCK_UN)
        handle.close()
