"""The tmux plugin in the running pipeline: it registers itself over the plugin protocol, and a focus
on a terminal routes through it, so the round's context is the focused pane's redacted summary."""

from __future__ import annotations

import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.infra import InfraUrls
from tests.integration.pipeline.pipeline_support import (
    Pipeline,
    pipeline_database,
    pipeline_env,
    start_pipeline,
)
from tests.mesh import wait_until

PANE_OUTPUT = "$ pytest -q tests/unit\\n2 failed, 40 passed in 3.1s\\n$ "


@pytest.fixture
def tmux_socket(tmp_path: Path) -> Iterator[Path]:
    socket = tmp_path / "tmux.sock"
    subprocess.run(
        [
            "tmux",
            "-S",
            str(socket),
            "-f",
            "/dev/null",
            "new-session",
            "-d",
            "-s",
            "work",
            "-x",
            "120",
            "-y",
            "30",
        ],
        check=True,
        timeout=10,
    )
    try:
        subprocess.run(
            ["tmux", "-S", str(socket), "send-keys", "-t", "work", f"printf '{PANE_OUTPUT}'", "Enter"],
            check=True,
            timeout=10,
        )
        yield socket
    finally:
        subprocess.run(["tmux", "-S", str(socket), "kill-server"], timeout=10, check=False)


def test_a_focused_terminal_is_read_through_the_tmux_plugin(
    infra: InfraUrls, tmp_path: Path, tmux_socket: Path
) -> None:
    database = pipeline_database(infra, "tmux")
    env = pipeline_env(
        infra,
        database,
        tmp_path / "data",
        KRONII_PIPELINE_TMUX_PLUGIN="true",
        KRONII_PIPELINE_TMUX_SOCKET=str(tmux_socket),
    )
    with start_pipeline(env) as pipeline:
        wait_until(lambda: _plugin(pipeline) is not None, 20, "the tmux plugin to register")
        plugin = _plugin(pipeline)
        assert plugin is not None and plugin["enabled"] and plugin["capabilities"]["snapshot"]
        time.sleep(0.5)
        response = pipeline.trigger(
            kind="focus_changed",
            source="test",
            app_id="kitty",
            high_priority=True,
            attributes={"wm_class": "kitty", "title": "dev@workstation: ~/src/kronii", "window_id": "77"},
        )
        assert response.status_code == 202, response.text
        run = pipeline.wait_for_run(lambda r: "tmux" in r["plugins_used"], 30)
    path = [visit["state"] for visit in run["states"]]
    assert path[:3] == ["idle", "collecting", "routing"] and "extracting" in path, path
    assert run["route"].startswith("plugin"), run["route"]


def _plugin(pipeline: Pipeline) -> dict[str, Any] | None:
    plugins = pipeline.get("/v1/plugins")["plugins"]
    return next((p for p in plugins if p["app_id"] == "tmux"), None)
