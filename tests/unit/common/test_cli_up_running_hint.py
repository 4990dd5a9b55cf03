"""A command whose service does not answer says "start it with `kronii up`" only when no `kronii up`
runs: while one holds the data directory (its services stopped, hung or starting), the command says
that the service does not answer though `kronii up` runs, with the pid of the lock's holder (read from
the kernel's lock table, without taking the lock)."""

from __future__ import annotations

import fcntl
import json
import os
from pathlib import Path

import pytest
from kronii.launcher.cli.main import _with_up_running

MESSAGE = (
    "kronii: the supervisor is not reachable at http://127.0.0.1:1 (timed out): start it with `kronii up`"
)


def test_the_advice_to_start_kronii_up_is_kept_when_none_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("KRONII_DATA_DIR", str(tmp_path))
    assert _with_up_running(MESSAGE) == MESSAGE
    (tmp_path / "up.lock").touch()  # a lock file nobody holds: a kronii up that ended
    assert _with_up_running(MESSAGE) == MESSAGE


def test_while_kronii_up_holds_the_data_directory_the_command_says_so_with_its_pid(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("KRONII_DATA_DIR", str(tmp_path))
    (tmp_path / "run").mkdir()
    (tmp_path / "run" / "up.json").write_text(json.dumps({"pid": 4242}))  # stale: the lock's holder counts
    fd = os.open(tmp_path / "up.lock", os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # as kronii up holds it (a lock of its own file)
        said = _with_up_running(MESSAGE)
    finally:
        os.close(fd)
    assert "start it with `kronii up`" not in said
    assert said.startswith("kronii: the supervisor is not reachable at http://127.0.0.1:1 (timed out): ")
    assert f"it does not answer, though `kronii up` is running (pid {os.getpid()})" in said
