"""The xdotool shadow obeys the person's SAFE_INTERRUPT and STOP_NOW (issue 30): a real broker on
Xvfb with the interactive flag, an xterm that writes down every key it receives, the shadow first on
an agent's PATH typing a long chain under the person's grant, and the person's `kronii control
interrupt` / `kronii control stop` from a terminal mid-way. The shadow must end at its next safe
point, well within a second, say why, and nothing more may reach the window afterwards."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from kronii.broker.cli.xdotool_shim import EXIT_PAUSED, EXIT_REFUSED, write_shadow_script

from tests.desktop import wait_until
from tests.infra import InfraUrls
from tests.integration.broker.broker_support import Broker, register_agent, start_broker

KRONII = str(Path(sys.executable).with_name("kronii"))
# Letters only: one key each, whatever the keyboard map.
TEXT = "".join(chr(ord("a") + (i * 7) % 26) for i in range(6_000))
STOPPED_WITHIN_S = 1.0


@dataclass
class Scene:
    broker: Broker
    terminal: Any
    env: dict[str, str]


@pytest.fixture
def scene(
    infra: InfraUrls, migrated_database: str, x_display: str, tmp_path: Path, recording_terminal: Any
) -> Iterator[Scene]:
    settings = {"KRONII_BROKER_INTERACTIVE": "true", "KRONII_BROKER_REMOTE_VIEW": "false"}
    with start_broker(infra, migrated_database, x_display, tmp_path / "b", settings=settings) as broker:
        terminal = recording_terminal("StepsTerm")
        key = Ed25519PrivateKey.generate()
        key_file = tmp_path / "macro.key"
        pem = key.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
        )
        key_file.write_bytes(pem)
        key_file.chmod(0o600)
        asyncio.run(register_agent(infra.redis, migrated_database, "macro", key))
        (tmp_path / "agent-run").mkdir(mode=0o700)
        shadow = write_shadow_script(tmp_path / "shadow")
        env = {
            **os.environ,
            "PATH": f"{shadow.parent}{os.pathsep}{os.environ['PATH']}",
            "DISPLAY": broker.display,
            "KRONII_BROKER_URL": broker.url,
            "KRONII_BROKER_CLIENT_ID": "macro",
            "KRONII_BROKER_KEY_FILE": str(key_file),
            "XDG_RUNTIME_DIR": str(tmp_path / "agent-run"),
        }
        broker.grant("macro", seconds=120, window=terminal.window_id)
        yield Scene(broker, terminal, env)


@dataclass
class Typing:
    """The shadow typing TEXT as one `type` verb (automation that knows nothing of kronii), and the
    wall-clock moment it exited, taken by a thread that waits on it."""

    process: subprocess.Popen[str]
    exited_at: float = 0.0
    stderr: str = ""
    done: threading.Event = field(default_factory=threading.Event)

    @classmethod
    def start(cls, scene: Scene) -> Typing:
        process = subprocess.Popen(
            ["xdotool", "type", TEXT],
            env=scene.env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        typing = cls(process)
        threading.Thread(target=typing._wait, daemon=True).start()
        return typing

    def _wait(self) -> None:
        _, self.stderr = self.process.communicate(timeout=60)
        self.exited_at = time.time()
        self.done.set()

    def ended(self) -> tuple[int, str]:
        assert self.done.wait(60), "the shadow never ended"
        return self.process.returncode, self.stderr


def _person(scene: Scene, verb: str) -> None:
    """`kronii control VERB` as the person types it."""
    done = subprocess.run(
        [KRONII, "control", "--url", scene.broker.url, verb],
        env=scene.broker.env,
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert done.returncode == 0, done


def _decided_at(scene: Scene, event: str) -> float:
    """When the broker decided the person's intent (its journal's time, the wall clock)."""
    rows = [row for row in scene.broker.journal() if row["event"] == event]
    assert rows, scene.broker.journal()[-5:]
    return datetime.fromisoformat(rows[-1]["ts"]).timestamp()


def _nothing_more_arrives(scene: Scene) -> str:
    """What the window had once the shadow ended; it must not grow afterwards."""
    landed = scene.terminal.received()
    time.sleep(0.5)  # a settle window: anything still in flight would show up here
    assert scene.terminal.received() == landed
    return str(landed)


def test_kronii_control_interrupt_ends_the_shadows_chain_at_its_next_safe_point(scene: Scene) -> None:
    typing = Typing.start(scene)
    wait_until(lambda: len(scene.terminal.received()) > 200, timeout_s=30, what="the shadow typing")

    _person(scene, "interrupt")
    code, stderr = typing.ended()
    took = typing.exited_at - _decided_at(scene, "safe_interrupt")

    assert code == EXIT_PAUSED, stderr
    assert "SAFE_INTERRUPT" in stderr and "stopped at a safe point" in stderr, stderr
    assert took < STOPPED_WITHIN_S, f"the shadow went on for {took:.2f} s after the interrupt"
    landed = _nothing_more_arrives(scene)
    assert 0 < len(landed) < len(TEXT) and TEXT.startswith(landed)
    paused = [row for row in scene.broker.journal() if row.get("row") == "S5"]
    assert paused and paused[-1]["actor"] == "agent:macro", scene.broker.journal()[-5:]
    assert scene.broker.state()["agent_status"] == "PAUSED"


def test_kronii_control_stop_ends_the_shadows_chain_at_once(scene: Scene) -> None:
    typing = Typing.start(scene)
    wait_until(lambda: len(scene.terminal.received()) > 200, timeout_s=30, what="the shadow typing")

    _person(scene, "stop")
    code, stderr = typing.ended()
    took = typing.exited_at - _decided_at(scene, "stop_now")

    assert code == EXIT_REFUSED, stderr
    assert "stopped the agent" in stderr, stderr
    assert took < STOPPED_WITHIN_S, f"the shadow went on for {took:.2f} s after the stop"
    landed = _nothing_more_arrives(scene)
    assert 0 < len(landed) < len(TEXT) and TEXT.startswith(landed)
    assert scene.broker.state()["user_intent"] == "STOP_NOW"
