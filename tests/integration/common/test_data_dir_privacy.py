"""After a real `kronii up`, nothing in the data directory is open to other users: no group or other
permission bit anywhere, except the traverse-only ACL entry that lets PostgreSQL's system user (when
root runs kronii) walk to its own directory; and another user really cannot read or list anything.
The directories above the data directory keep their mode: they are not opened to every user."""

from __future__ import annotations

import os
import pwd
import shutil
import stat
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from kronii.launcher.embedded_postgres import POSTGRES_SYSTEM_USER
from kronii.launcher.posix_acl import GROUP, GROUP_OBJ, MASK, OTHER, USER, read_acl

from tests.mesh import Proc, kronii_process_pids, standalone_env, wait_until

KRONII = str(Path(sys.executable).parent / "kronii")
# Lists each path the calling user can read (files) or list (directories).
PROBE = 'for p; do if [ -d "$p" ]; then ls "$p" >/dev/null 2>&1 && echo "$p"; else cat "$p" >/dev/null 2>&1 && echo "$p"; fi; done'


def _readable_as(user: str, paths: list[Path]) -> list[str]:
    entry = pwd.getpwnam(user)
    result = subprocess.run(
        ["setpriv", f"--reuid={entry.pw_uid}", f"--regid={entry.pw_gid}", "--clear-groups",
         "sh", "-c", PROBE, "probe", *map(str, paths)],
        capture_output=True, text=True, timeout=30, check=False,
    )  # fmt: skip
    return result.stdout.split()


def _traverse_only_acl(path: Path, pg_uid: int) -> bool:
    """Its ACL grants the group class nothing but `u:<PostgreSQL user>:--x`."""
    entries = read_acl(path)
    named = [(tag, perm, ident) for tag, perm, ident in entries if tag in (USER, GROUP)]
    group_obj = [perm for tag, perm, _ in entries if tag == GROUP_OBJ]
    others = [perm for tag, perm, _ in entries if tag == OTHER]
    mask = [perm for tag, perm, _ in entries if tag == MASK]
    return named == [(USER, 1, pg_uid)] and group_obj == [0] and others == [0] and mask == [1]


@pytest.fixture
def open_parent() -> Iterator[Path]:
    """A directory every user may enter (0755, in the temporary directory): what keeps other users
    out of the data directory inside it can only be the data directory's own permissions."""
    parent = Path(tempfile.mkdtemp(prefix="kronii-privacy-"))
    parent.chmod(0o755)
    try:
        yield parent
    finally:
        shutil.rmtree(parent, ignore_errors=True)


@pytest.mark.skipif(shutil.which("setpriv") is None, reason="needs setpriv to act as another user")
@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to act as another user")
def test_nothing_in_the_data_directory_is_open_to_other_users(open_parent: Path) -> None:
    data_dir = open_parent / "kronii-data"
    ancestors = [open_parent, *open_parent.parents]
    before = {path: stat.S_IMODE(path.stat().st_mode) for path in ancestors}
    control = open_parent / "world-readable"
    control.write_text("anyone may read this")
    control.chmod(0o644)

    proc = Proc([KRONII, "up"], {**standalone_env(data_dir), "KRONII_TEST_FAST_PG": "1"})
    try:
        proc.wait_for_line(lambda line: line.strip() == "kronii is up", 120)
        pg_uid = pwd.getpwnam(POSTGRES_SYSTEM_USER).pw_uid
        entries = [data_dir, *sorted(data_dir.rglob("*"))]
        names = {path.relative_to(data_dir).as_posix() for path in entries[1:]}
        assert {"up.lock", "redis/appendonly.aof", "capture", "secrets/api_token", "run/up.json"} <= names
        assert any(name.startswith("nats/jetstream/") for name in names)
        assert "postgres/PG_VERSION" in names

        for path in entries:
            info = path.lstat()
            if stat.S_ISLNK(info.st_mode) or not info.st_mode & 0o077:
                continue
            assert stat.S_ISDIR(info.st_mode) and stat.S_IMODE(info.st_mode) == 0o710, (
                path,
                oct(info.st_mode),
            )
            assert _traverse_only_acl(path, pg_uid), (path, read_acl(path))
        assert _traverse_only_acl(data_dir, pg_uid), "PostgreSQL's user lost its way to its data"

        # The probe sees what another user can read (the control file), and nothing of kronii's.
        assert _readable_as("nobody", [control, *entries]) == [str(control)]
        pg_readable = _readable_as(POSTGRES_SYSTEM_USER, [control, *entries])
        assert all(
            path == str(control) or path.startswith(str(data_dir / "postgres")) for path in pg_readable
        )
        assert str(data_dir / "postgres" / "PG_VERSION") in pg_readable

        # The directories above were given an ACL entry at most, never a mode bit for everyone.
        for path in ancestors:
            assert stat.S_IMODE(path.stat().st_mode) & 0o007 == before[path] & 0o007, path
    finally:
        if proc.process.poll() is None:
            proc.terminate(timeout=20)
        wait_until(lambda: not kronii_process_pids(str(data_dir)), 10, "kronii's processes to exit")
