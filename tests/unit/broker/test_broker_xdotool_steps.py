"""The xdotool shadow as a step runner (issue 30): the broker's safe point before every action and
every piece of a long `type`, PAUSE and STOP obeyed with nothing more sent. The shadow runs as
automation runs it (its script first on PATH) against the in-process fake broker; the runner's
bookkeeping (epoch pinning, a new sign-in mid-chain) is checked in process with a scripted client."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from kronii.agents.broker_client import BrokerError, InputResult, SafePointDecision, SessionState
from kronii.broker.cli import xdotool_chain as chain
from kronii.broker.cli import xdotool_shim
from kronii.broker.cli.xdotool_shim import EXIT_PAUSED, EXIT_REFUSED
from kronii.broker.cli.xdotool_steps import StepsRunner, drop_halt, safe_point_halt

from tests.unit.broker.broker_fakes import AGENT, FakeBroker, new_key, serve, write_pem_key

REPO = Path(__file__).resolve().parents[3]
SHADOW = REPO / "services" / "broker" / "shadow"


@dataclass
class Shadow:
    broker: FakeBroker
    env: dict[str, str]

    def xdotool(self, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [str(SHADOW / "xdotool"), *args], env=self.env, capture_output=True, text=True, timeout=30
        )

    def verbs(self) -> list[str]:
        """What the broker was asked, in order: "safe_point" or the input action's kind."""
        asked = []
        for call in self.broker.calls:
            if call.path.endswith("/agent/safe_point"):
                asked.append("safe_point")
            elif call.path.endswith("/agent/input"):
                asked.append(str(call.body["kind"]))
        return asked


@pytest.fixture
def shadow(tmp_path: Path) -> Iterator[Shadow]:
    broker = FakeBroker(interactive=True)
    key = new_key()
    broker.register(AGENT, key)
    broker.grant(AGENT)
    with serve(broker) as url:
        env = {
            "PATH": os.pathsep.join([str(SHADOW), os.environ.get("PATH", "")]),
            "PYTHONPATH": str(REPO / "services" / "broker" / "src"),
            "KRONII_PYTHON": sys.executable,
            "KRONII_BROKER_URL": url,
            "KRONII_BROKER_CLIENT_ID": AGENT,
            "KRONII_BROKER_KEY_FILE": str(write_pem_key(tmp_path / "agent.key", key)),
            "XDG_RUNTIME_DIR": str(tmp_path / "run"),
            "XDG_CONFIG_HOME": str(tmp_path / "config"),
            "HOME": str(tmp_path),
        }
        yield Shadow(broker, env)


def test_every_action_of_a_chain_waits_for_the_brokers_safe_point(shadow: Shadow) -> None:
    done = shadow.xdotool("key", "ctrl+a", "mousemove", "5", "6", "sleep", "0", "type", "hi")

    assert done.returncode == 0, done.stderr
    assert shadow.verbs() == ["safe_point", "key", "safe_point", "move", "safe_point", "type"]


def test_a_long_type_is_sent_in_pieces_with_a_safe_point_before_each(shadow: Shadow) -> None:
    text = "".join(chr(ord("a") + i % 26) for i in range(chain.TYPE_STEP_CHARS * 2 + 7))

    done = shadow.xdotool("type", text)

    assert done.returncode == 0, done.stderr
    assert shadow.verbs() == ["safe_point", "type"] * 3
    pieces = [str(body["text"]) for body in shadow.broker.inputs]
    assert "".join(pieces) == text and max(map(len, pieces)) == chain.TYPE_STEP_CHARS


def test_safe_interrupt_mid_chain_stops_at_the_next_safe_point_and_exits_3(shadow: Shadow) -> None:
    shadow.broker.safe_points = ["CONTINUE", "PAUSE"]  # the person's interrupt, seen at the second

    done = shadow.xdotool("key", "a", "key", "Return", "type", "never")

    assert done.returncode == EXIT_PAUSED, done
    assert "SAFE_INTERRUPT" in done.stderr and "1 of 3 input actions were sent" in done.stderr
    assert shadow.broker.inputs == [{"kind": "key", "keys": "a", "epoch": 1}]
    assert shadow.verbs()[-1] == "safe_point"


def test_stop_now_mid_chain_stops_at_the_next_safe_point_and_exits_1(shadow: Shadow) -> None:
    shadow.broker.safe_points = ["CONTINUE", "STOP"]
    shadow.broker.user_intent = "STOP_NOW"

    done = shadow.xdotool("key", "a", "key", "b")

    assert done.returncode == EXIT_REFUSED, done
    assert "stopped the agent" in done.stderr and "1 of 2 input actions were sent" in done.stderr
    assert [body["keys"] for body in shadow.broker.inputs] == ["a"]


def test_the_persons_own_input_seen_at_a_safe_point_says_they_took_the_desktop_back(shadow: Shadow) -> None:
    shadow.broker.safe_points = ["STOP"]  # the broker's STOP after the person's input (row S1), no STOP_NOW

    done = shadow.xdotool("type", "x")

    assert done.returncode == EXIT_REFUSED
    assert "took the desktop back" in done.stderr and "0 of 1 input actions were sent" in done.stderr
    assert shadow.broker.inputs == []


# -- in process: what a safe point's answer means, and the runner's bookkeeping -------------------


def _state(**fields: Any) -> SessionState:
    base: dict[str, Any] = {
        "session_id": "s",
        "interactive": True,
        "control_mode": "AGENT",
        "lease_expiry": "2099-01-01T00:00:00+00:00",
        "user_intent": "WAIT",
        "agent_status": "RUNNING",
        "epoch": 4,
        "holder": AGENT,
    }
    return SessionState(**{**base, **fields})


_USER = {"control_mode": "USER", "holder": "", "lease_expiry": None}


@pytest.mark.parametrize(
    ("action", "fields", "code", "words"),
    [
        ("PAUSE", {**_USER, "agent_status": "PAUSED", "user_intent": "SAFE_INTERRUPT"}, 3, "SAFE_INTERRUPT"),
        ("PAUSE", {**_USER, "agent_status": "IDLE"}, 1, "user control"),
        ("PAUSE", {**_USER, "agent_status": "IDLE", "interactive": False}, 1, "no lease"),
        ("PAUSE", {"holder": "another"}, 1, "not holder"),
        ("STOP", {**_USER, "agent_status": "STOPPED", "user_intent": "STOP_NOW"}, 1, "stopped the agent"),
        ("STOP", {**_USER, "agent_status": "STOPPED"}, 1, "took the desktop back"),
    ],
)
def test_each_safe_point_answer_ends_the_chain_with_its_exit_code_and_sentence(
    action: str, fields: dict[str, Any], code: int, words: str
) -> None:
    halt = safe_point_halt(SafePointDecision(action, _state(**fields)), AGENT)
    assert halt is not None and halt.code == code and words in halt.sentence


@pytest.mark.parametrize(
    ("fields", "code", "words"),
    [
        ({**_USER, "agent_status": "STOPPED", "user_intent": "STOP_NOW"}, 1, "stopped the agent"),
        ({**_USER, "agent_status": "PAUSED", "user_intent": "SAFE_INTERRUPT"}, 3, "SAFE_INTERRUPT"),
        ({**_USER, "agent_status": "STOPPED"}, 1, "took the desktop back"),
        ({"epoch": 9}, 1, "stale epoch"),  # a new grant since: the old lease is all that is known
    ],
)
def test_an_input_dropped_as_stale_says_who_ended_the_lease(
    fields: dict[str, Any], code: int, words: str
) -> None:
    halt = drop_halt("stale_epoch", _state(**fields))
    assert halt.code == code and words in halt.sentence


def test_continue_goes_on() -> None:
    assert safe_point_halt(SafePointDecision("CONTINUE", _state()), AGENT) is None


@dataclass
class ScriptedClient:
    """A signed-in BrokerClient as the runner uses it: safe points answered from ``answers``
    (CONTINUE when empty), every input injected unless ``fail_send_at`` says to raise a 401."""

    client_id: str = AGENT
    epoch: int | None = None
    answers: list[SafePointDecision] = field(default_factory=list)
    sent: list[dict[str, object]] = field(default_factory=list)
    fail_send_at: int = -1

    def state(self) -> SessionState:
        return _state()

    def safe_point(self, step: str, sequence: int) -> SafePointDecision:
        return self.answers.pop(0) if self.answers else SafePointDecision("CONTINUE", _state())

    def send(self, body: dict[str, object]) -> InputResult:
        if len(self.sent) == self.fail_send_at:
            self.fail_send_at = -1
            raise BrokerError("unauthenticated", "sign in first", status=401)
        self.sent.append({**body, "epoch": self.epoch})
        return InputResult(True, "", self.epoch or 0)


def test_the_first_safe_point_pins_the_lease_epoch_for_the_whole_chain() -> None:
    client = ScriptedClient()
    plan = chain.parse(["key", "a", "key", "b"])

    assert StepsRunner(client, plan, lambda: (0, 0)).run() is None  # type: ignore[arg-type]

    assert [body["epoch"] for body in client.sent] == [4, 4]


def test_a_new_sign_in_mid_chain_goes_on_from_where_it_was_and_sends_nothing_twice(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    first = ScriptedClient(fail_send_at=1)
    second = ScriptedClient()
    clients = iter([first, second])
    monkeypatch.setattr(xdotool_shim, "signed_in_client", lambda *args, **kwargs: next(clients))
    monkeypatch.setenv("KRONII_BROKER_CLIENT_ID", AGENT)

    code = xdotool_shim.main(["key", "a", "key", "b", "key", "c"])

    assert code == 0
    assert [body["keys"] for body in first.sent] == ["a"]
    assert [body["keys"] for body in second.sent] == ["b", "c"]
    assert second.sent[0]["epoch"] == 4  # the lease the chain started under, carried over
