"""The critic's warning reaches the person's desktop: a real bash with the critic's hooks runs a download
piped into a shell; the real critic publishes a notice, the real pipeline passes it through its gates
and shows it, and a real notification daemon (dunst, on Xvfb and a private session bus) displays the
critic's own words. Before this test the pipeline refused every critic notification as a malformed
trigger, and nothing said so but a warning in its log."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.desktop import stop_process, wait_until
from tests.infra import InfraUrls
from tests.integration.critic.shell_pty import ShellPty, shell_setup
from tests.integration.critic.test_critic_service import start_critic
from tests.integration.pipeline.pipeline_support import pipeline_database, pipeline_env, start_pipeline

pytestmark = pytest.mark.e2e


@pytest.fixture
def dunst(xdisplay: str, session_bus: str, tmp_path: Path) -> Iterator[dict[str, str]]:
    """dunst, the desktop's notification daemon, on the test's X display and session bus."""
    if shutil.which("dunst") is None:
        pytest.fail("dunst is not installed: run scripts/install_system_deps.sh")
    env = {**os.environ, "DISPLAY": xdisplay, "DBUS_SESSION_BUS_ADDRESS": session_bus, "HOME": str(tmp_path)}
    daemon = subprocess.Popen(
        ["dunst"], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True
    )
    try:
        wait_until(lambda: _dunstctl(env, "count") is not None, timeout_s=10, what="dunst on the session bus")
        yield env
    finally:
        stop_process(daemon)


def _dunstctl(env: dict[str, str], *args: str) -> str | None:
    done = subprocess.run(
        ["dunstctl", *args], env=env, capture_output=True, text=True, timeout=10, check=False
    )
    return done.stdout if done.returncode == 0 else None


def _displayed(env: dict[str, str]) -> int:
    counts = dict(line.split(":") for line in (_dunstctl(env, "count") or "").splitlines() if ":" in line)
    return int(counts.get("  Currently displayed", counts.get("Currently displayed", "0")).strip() or 0)


def _shown_so_far(env: dict[str, str]) -> list[dict[str, str]]:
    """Every notification dunst displayed, as the person saw it (closed first, so history has them)."""
    _dunstctl(env, "close-all")
    history: dict[str, Any] = json.loads(_dunstctl(env, "history") or "{}")
    return [
        {field: item[field]["data"] for field in ("appname", "summary", "body")}
        for item in (history.get("data") or [[]])[0]
    ]


def test_a_dangerous_command_shows_the_critics_warning_on_the_desktop(
    infra: InfraUrls, migrated_database: str, dunst: dict[str, str], tmp_path: Path
) -> None:
    database = pipeline_database(infra, "critic_notice")
    env = pipeline_env(
        infra, database, tmp_path / "pipeline",
        KRONII_PIPELINE_DESKTOP_NOTIFICATIONS="true",
        DBUS_SESSION_BUS_ADDRESS=dunst["DBUS_SESSION_BUS_ADDRESS"],
    )  # fmt: skip
    with (
        start_pipeline(env) as pipeline,
        start_critic(infra, migrated_database, tmp_path / "critic") as critic,
    ):
        setup = shell_setup("bash", critic.home, hooked=True)
        with ShellPty(setup) as pty:
            pty.run("curl -s file:///dev/null | sh")
        wait_until(lambda: _displayed(dunst) >= 1, timeout_s=20, what="the critic's warning on the desktop")
        shown = _shown_so_far(dunst)
        metrics = httpx.get(f"{pipeline.url}/metrics", timeout=5).text
    [warning] = shown
    assert warning["summary"] == "kronii critic: a dangerous command ran"
    assert "a downloaded script ran unread" in warning["body"]
    assert "from kronii's critic" in warning["body"]
    assert 'kronii_pipeline_notices_total{outcome="shown",source="critic"} 1.0' in metrics
