"""polkit as the proof of presence: the real polkitd (Debian's polkitd) on a system bus of the test's
own, with kronii's shipped action file and a rule file of the test's (tests/private_polkit.py). The
capture service runs as a process pointed at that bus; the capture CLI's `list` runs without a
terminal, so only polkit can let it read. It runs as `nobody` (polkit authorizes uid 0 for
everything, so a root subject would prove nothing), through a socket the test opens to that user."""

from __future__ import annotations

import asyncio
import os
import pwd
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psycopg
import pytest
from kronii.capture.adapters.callers import ACTION_READ_SCREENSHOTS
from kronii.foundation.urls import libpq_url

from tests.infra import InfraUrls
from tests.integration.capture.capture_support import CaptureProc, capture_env, start_capture
from tests.private_polkit import POLICY_DIR, POLKIT_SKIPS, polkit_rule, polkit_workdir, private_system_bus
from tests.private_polkit import Polkitd as SharedPolkitd

POLICY = POLICY_DIR / f"{ACTION_READ_SCREENSHOTS}.policy"

pytestmark = POLKIT_SKIPS

NOBODY = pwd.getpwnam("nobody").pw_uid
AS_NOBODY = ("setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups")


@pytest.fixture(scope="module")
def workdir() -> Iterator[Path]:
    with polkit_workdir() as base:
        yield base


@pytest.fixture(scope="module")
def system_bus(workdir: Path) -> Iterator[str]:
    with private_system_bus(workdir) as address:
        yield address


class Polkitd:
    def __init__(self, workdir: Path, bus: str) -> None:
        self._daemon = SharedPolkitd(workdir, bus, [POLICY])

    async def start(self, result: str | None) -> None:
        """polkitd with a rule that answers ``result`` (YES, NO) for nobody, or no rule at all (the
        action's own default, auth_self)."""
        rule = None if result is None else polkit_rule(ACTION_READ_SCREENSHOTS, "nobody", result)
        await asyncio.to_thread(self._daemon.start, rule)

    def stop(self) -> None:
        self._daemon.stop()


@pytest.fixture(scope="module")
def nobody_can_run_the_cli() -> None:
    probe = subprocess.run(
        [*AS_NOBODY, sys.executable, "-c", "import grpc, kronii.capture.cli.capture"],
        capture_output=True,
        timeout=60,
        check=False,
    )
    if probe.returncode != 0:
        pytest.skip("nobody cannot run this checkout's Python (its directories are private)")


@pytest.fixture
def polkitd(workdir: Path, system_bus: str, nobody_can_run_the_cli: None) -> Iterator[Polkitd]:
    daemon = Polkitd(workdir, system_bus)
    try:
        yield daemon
    finally:
        daemon.stop()


@pytest.fixture(scope="module")
def polkit_capture(
    infra: InfraUrls,
    capture_database: str,
    system_bus: str,
    workdir: Path,
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[CaptureProc]:
    env = capture_env(infra, capture_database, tmp_path_factory.mktemp("capture-polkit"), None)
    env.update(
        DBUS_SYSTEM_BUS_ADDRESS=system_bus,
        KRONII_CAPTURE_BREAKER_FAILURES="1000",
        KRONII_CAPTURE_SOCKET_DIR=str(workdir / "sock"),
        KRONII_CAPTURE_ALLOWED_UIDS=f"{os.getuid()} {NOBODY}",
    )
    with start_capture(env) as service:
        # Opened to nobody on purpose (the service makes them 0700 and 0600).
        service.socket.parent.chmod(0o755)
        service.socket.chmod(0o666)
        yield service


@dataclass(frozen=True)
class Listed:
    returncode: int
    stderr: str
    session: int


def _list(service: CaptureProc) -> Listed:
    process = subprocess.Popen(
        [
            *AS_NOBODY,
            sys.executable,
            "-m",
            "kronii.capture.cli",
            "capture",
            "--socket",
            str(service.socket),
            "list",
        ],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={k: v for k, v in os.environ.items() if not k.startswith("KRONII_")},
        start_new_session=True,
    )
    try:
        _, err = process.communicate(timeout=90)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    return Listed(process.returncode, err, process.pid)


async def list_without_a_terminal(service: CaptureProc) -> Listed:
    """The capture CLI's `list` as nobody, in a new session with no terminal at all (setpriv execs
    it, so its sid is the pid)."""
    return await asyncio.to_thread(_list, service)


def proof_of(database: str, listed: Listed) -> tuple[str, dict[str, Any]]:
    """The one capture.presence audit row of that run."""
    with psycopg.connect(libpq_url(database)) as conn:
        rows = conn.execute(
            "SELECT outcome, detail FROM audit_log WHERE action = 'capture.presence' "
            "AND (detail->>'session')::bigint = %s",
            (listed.session,),
        ).fetchall()
    assert len(rows) == 1, rows
    return rows[0][0], rows[0][1]


async def test_with_no_authority_on_the_system_bus_the_tty_binding_decides(
    polkit_capture: CaptureProc, capture_database: str, nobody_can_run_the_cli: None
) -> None:
    listed = await list_without_a_terminal(polkit_capture)

    assert listed.returncode == 4  # refused
    assert "reading screenshots needs a person at a terminal" in listed.stderr
    outcome, detail = proof_of(capture_database, listed)
    assert (outcome, detail["method"]) == ("refused", "tty")


async def test_polkit_authorizes_a_read_when_its_rule_says_yes(
    polkit_capture: CaptureProc, polkitd: Polkitd, capture_database: str
) -> None:
    await polkitd.start("YES")

    listed = await list_without_a_terminal(polkit_capture)

    assert listed.returncode == 0, listed.stderr + polkit_capture.proc.output[-3000:]
    outcome, detail = proof_of(capture_database, listed)
    assert (outcome, detail["method"], detail["polkit_action"]) == ("ok", "polkit", ACTION_READ_SCREENSHOTS)
    assert detail["capabilities"] == ["READ_REDACTED", "LIST_META"]
    assert detail["pid"] > 0 and detail["uid"] == NOBODY and detail["reason"] == ""


async def test_polkit_refuses_a_read_when_its_rule_says_no(
    polkit_capture: CaptureProc, polkitd: Polkitd, capture_database: str
) -> None:
    await polkitd.start("NO")

    listed = await list_without_a_terminal(polkit_capture)

    assert listed.returncode == 4  # refused
    assert (
        "kronii: capture list refused: polkit does not allow this user to read screenshots" in listed.stderr
    )
    outcome, detail = proof_of(capture_database, listed)
    assert (outcome, detail["method"]) == ("refused", "polkit")
    assert detail["reason"].startswith("polkit does not allow")


async def test_polkit_refuses_when_nobody_is_there_to_authenticate(
    polkit_capture: CaptureProc, polkitd: Polkitd, capture_database: str
) -> None:
    # No rule: the shipped action's auth_self, and no authentication agent to ask anyone.
    await polkitd.start(None)

    listed = await list_without_a_terminal(polkit_capture)

    assert listed.returncode == 4  # refused
    assert "nobody confirmed with their password" in listed.stderr
    outcome, detail = proof_of(capture_database, listed)
    assert (outcome, detail["method"]) == ("refused", "polkit")
