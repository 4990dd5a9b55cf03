"""A real polkitd (Debian's polkitd) for tests, on a system bus of the test's own (dbus-daemon with a
private address), with kronii's shipped action files and a rule file of the test's, both bind-mounted
over polkit's directories in a private mount namespace (the machine's own polkit configuration is not
touched). A service is pointed at it with DBUS_SYSTEM_BUS_ADDRESS, which kronii.edge.polkit reads.

polkit authorizes uid 0 for everything: a test that wants the rule to decide asks about a process of
another user (``nobody``). Needs root (the mount namespace) and polkitd, dbus-daemon and unshare:
``POLKIT_SKIPS`` are the marks of a module that uses it."""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import subprocess
import tempfile
import threading
import time
from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest
from kronii.edge.polkit import PolkitClient

from tests.desktop import stop_process

__all__ = [
    "POLICY_DIR",
    "POLKIT_SKIPS",
    "Polkitd",
    "polkit_rule",
    "polkit_workdir",
    "private_system_bus",
]

POLKITD = "/usr/lib/polkit-1/polkitd"
POLICY_DIR = Path(__file__).resolve().parents[1] / "deploy" / "polkit"
# polkit's own directories, hidden from the test's polkitd behind the test's files.
ACTIONS_DIR = "/usr/share/polkit-1/actions"
RULES_DIRS = ("/etc/polkit-1/rules.d", "/usr/share/polkit-1/rules.d")

# Only root can give polkitd a private mount namespace: a developer running the suite as themselves has
# no way to, so that alone skips. A missing program fails (polkit_workdir) with the install hint.
POLKIT_SKIPS = [
    pytest.mark.skipif(os.getuid() != 0, reason="a private mount namespace for polkitd needs root")
]


def _require_polkit_tools() -> None:
    missing = [POLKITD] if not os.path.exists(POLKITD) else []
    missing += [tool for tool in ("dbus-daemon", "unshare") if shutil.which(tool) is None]
    if missing:
        raise RuntimeError(f"missing {missing}: run scripts/install_system_deps.sh as root")


_BUS_CONFIG = """<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>system</type>
  <listen>unix:path={socket}</listen>
  <auth>EXTERNAL</auth>
  <policy context="default">
    <allow user="*"/>
    <allow own="*"/>
    <allow send_type="method_call"/>
    <allow send_type="signal"/>
    <allow send_requested_reply="true" send_type="method_return"/>
    <allow send_requested_reply="true" send_type="error"/>
    <allow receive_type="method_call"/>
    <allow receive_type="method_return"/>
    <allow receive_type="error"/>
    <allow receive_type="signal"/>
  </policy>
</busconfig>
"""

_RULE = """polkit.addRule(function(action, subject) {{
    if (action.id == "{action}" && subject.user == "{user}") {{
        return polkit.Result.{result};
    }}
}});
"""


def polkit_rule(action: str, user: str, result: str) -> str:
    """A rules.d file answering ``result`` (YES, NO, AUTH_SELF...) for ``action`` asked by ``user``."""
    return _RULE.format(action=action, user=user, result=result)


@contextlib.contextmanager
def polkit_workdir() -> Iterator[Path]:
    """A directory polkitd (its own user) can reach: the bus socket, the actions and the rules."""
    _require_polkit_tools()
    base = Path(tempfile.mkdtemp(prefix="kronii-polkit-"))
    base.chmod(0o755)
    try:
        yield base
    finally:
        shutil.rmtree(base, ignore_errors=True)


@contextlib.contextmanager
def private_system_bus(workdir: Path) -> Iterator[str]:
    """A dbus-daemon of type system on a socket in ``workdir``; yields its address."""
    socket = workdir / "system_bus_socket"
    config = workdir / "bus.conf"
    config.write_text(_BUS_CONFIG.format(socket=socket))
    daemon = subprocess.Popen(
        ["dbus-daemon", f"--config-file={config}", "--nofork", "--nopidfile"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 10
        while not socket.exists():
            assert daemon.poll() is None and time.monotonic() < deadline, "dbus-daemon did not start"
            time.sleep(0.05)
        yield f"unix:path={socket}"
    finally:
        stop_process(daemon)


def _start_polkitd(
    workdir: Path, bus: str, policies: Sequence[Path], rule: str | None
) -> subprocess.Popen[bytes]:
    actions, rules, empty = workdir / "actions", workdir / "rules", workdir / "empty"
    for directory in (actions, rules, empty):
        shutil.rmtree(directory, ignore_errors=True)
        directory.mkdir(mode=0o755)
    for policy in policies:
        shutil.copy(policy, actions / policy.name)
    if rule is not None:
        (rules / "10-kronii-test.rules").write_text(rule)
    mounts = " && ".join(
        f"mount --bind '{source}' '{target}'"
        for source, target in ((actions, ACTIONS_DIR), (rules, RULES_DIRS[0]), (empty, RULES_DIRS[1]))
    )
    return subprocess.Popen(
        ["unshare", "--mount", "sh", "-c", f"{mounts} && exec {POLKITD} --no-debug"],
        env={**os.environ, "DBUS_SYSTEM_BUS_ADDRESS": bus},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )


async def _owned(bus: str, timeout: float) -> bool:
    client = PolkitClient(bus_address=bus)
    deadline = time.monotonic() + timeout
    while not await client.available():
        if time.monotonic() >= deadline:
            return False
        await asyncio.sleep(0.1)
    return True


def _owned_soon(bus: str, timeout: float = 15) -> bool:
    # Its own event loop on a thread: callable from a test's running loop and from a plain test.
    answer: list[bool] = []
    thread = threading.Thread(target=lambda: answer.append(asyncio.run(_owned(bus, timeout))))
    thread.start()
    thread.join()
    return bool(answer and answer[0])


class Polkitd:
    """polkitd on ``bus`` with the action files ``policies`` (kronii's own, from deploy/polkit)."""

    def __init__(self, workdir: Path, bus: str, policies: Sequence[Path]) -> None:
        self._workdir, self._bus, self._policies = workdir, bus, tuple(policies)
        self._process: subprocess.Popen[bytes] | None = None

    def start(self, rule: str | None) -> None:
        """(Re)start it with that rules.d file, or none (the actions' own defaults); skips the test
        when polkitd cannot run here (no mount namespace, no polkitd user)."""
        self.stop()
        self._process = _start_polkitd(self._workdir, self._bus, self._policies, rule)
        if not _owned_soon(self._bus):
            self.stop()
            pytest.skip("polkitd cannot run here (a private mount namespace or its user is missing)")

    def stop(self) -> None:
        if self._process is not None:
            stop_process(self._process)
            self._process = None
