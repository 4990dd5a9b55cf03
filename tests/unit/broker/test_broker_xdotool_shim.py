"""The PATH-shadowing xdotool, run as automation runs it (the shadow script first on PATH, a fake
real xdotool after it) against the in-process fake broker, plus its command-line reading in process."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from kronii.broker.cli import xdotool_chain as chain
from kronii.broker.cli.xdotool_shim import EXIT_REFUSED, EXIT_UNREACHABLE, EXIT_USAGE, write_shadow_script

from tests.unit.broker.broker_fakes import AGENT, FakeBroker, new_key, serve, write_pem_key

REPO = Path(__file__).resolve().parents[3]
SHADOW = REPO / "services" / "broker" / "shadow"
FAKE_REAL = """#!/bin/sh
echo "$@" >> "$(dirname "$0")/calls"
case "$1" in
  getmouselocation) echo X=40; echo Y=50; echo SCREEN=0; echo WINDOW=7 ;;
  *) echo 4194311 ;;
esac
"""


@dataclass
class Desktop:
    broker: FakeBroker
    env: dict[str, str]
    real_calls: Path

    def xdotool(self, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [str(SHADOW / "xdotool"), *args], env=self.env, capture_output=True, text=True, timeout=30
        )


def _sent(desktop: Desktop) -> list[dict[str, object]]:
    """The input actions the broker received, without the lease epoch each names."""
    return [{k: v for k, v in body.items() if k != "epoch"} for body in desktop.broker.inputs]


@pytest.fixture
def desktop(tmp_path: Path) -> Iterator[Desktop]:
    broker = FakeBroker()
    key = new_key()
    broker.register(AGENT, key)
    broker.grant(AGENT)
    real_dir = tmp_path / "bin"
    real_dir.mkdir()
    (real_dir / "xdotool").write_text(FAKE_REAL)
    (real_dir / "xdotool").chmod(0o755)
    with serve(broker) as url:
        env = {
            "PATH": os.pathsep.join([str(SHADOW), str(real_dir), os.environ.get("PATH", "")]),
            "PYTHONPATH": str(REPO / "services" / "broker" / "src"),
            "KRONII_PYTHON": sys.executable,
            "KRONII_BROKER_URL": url,
            "KRONII_BROKER_CLIENT_ID": AGENT,
            "KRONII_BROKER_KEY_FILE": str(write_pem_key(tmp_path / "agent.key", key)),
            "XDG_RUNTIME_DIR": str(tmp_path / "run"),
            "XDG_CONFIG_HOME": str(tmp_path / "config"),
            "HOME": str(tmp_path),
        }
        yield Desktop(broker, env, real_dir / "calls")


def test_type_is_forwarded_as_a_type_action(desktop: Desktop) -> None:
    done = desktop.xdotool("type", "hello")

    assert done.returncode == 0, done.stderr
    assert _sent(desktop) == [{"kind": "type", "text": "hello"}]
    assert not desktop.real_calls.exists()


def test_key_is_forwarded_as_a_key_action(desktop: Desktop) -> None:
    done = desktop.xdotool("key", "--clearmodifiers", "ctrl+s")

    assert done.returncode == 0, done.stderr
    assert _sent(desktop) == [{"kind": "key", "keys": "ctrl+s"}]


def test_a_move_then_click_clicks_where_it_moved(desktop: Desktop) -> None:
    done = desktop.xdotool("mousemove", "10", "20", "click", "1")

    assert done.returncode == 0, done.stderr
    assert _sent(desktop) == [
        {"kind": "move", "x": 10, "y": 20},
        {"kind": "click", "x": 10, "y": 20, "button": 1},
    ]


def test_a_click_alone_asks_the_real_xdotool_where_the_pointer_is(desktop: Desktop) -> None:
    done = desktop.xdotool("click", "3")

    assert done.returncode == 0, done.stderr
    assert _sent(desktop) == [{"kind": "click", "x": 40, "y": 50, "button": 3}]
    assert desktop.real_calls.read_text().split("\n")[0] == "getmouselocation --shell"


def test_windowactivate_is_refused_and_nothing_is_sent(desktop: Desktop) -> None:
    done = desktop.xdotool("windowactivate", "--sync", "4194311")

    assert done.returncode == EXIT_REFUSED
    assert "windowactivate is refused" in done.stderr
    assert desktop.broker.calls == []
    assert not desktop.real_calls.exists()


def test_a_lookup_chained_into_a_focus_change_is_refused(desktop: Desktop) -> None:
    done = desktop.xdotool("search", "--name", "Editor", "windowactivate")

    assert done.returncode == EXIT_REFUSED
    assert not desktop.real_calls.exists()


def test_getactivewindow_runs_the_real_xdotool_later_on_path(desktop: Desktop) -> None:
    done = desktop.xdotool("getactivewindow")

    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "4194311"
    assert desktop.real_calls.read_text() == "getactivewindow\n"
    assert desktop.broker.calls == []


def test_a_dropped_input_exits_1_with_the_brokers_reason(desktop: Desktop) -> None:
    desktop.broker.revoke()

    done = desktop.xdotool("key", "ctrl+s")

    assert done.returncode == EXIT_REFUSED
    assert "kronii broker:" in done.stderr
    assert "no lease: ask the desktop user to run `kronii control grant`" in done.stderr


def test_a_chain_stops_at_the_first_dropped_input(desktop: Desktop) -> None:
    desktop.broker.drops = ["user_control"]

    done = desktop.xdotool("key", "ctrl+a", "type", "replaced")

    assert done.returncode == EXIT_REFUSED
    assert "the desktop user has control" in done.stderr
    assert len(desktop.broker.inputs) == 1


def test_nothing_answering_exits_5(desktop: Desktop) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    desktop.env["KRONII_BROKER_URL"] = f"http://127.0.0.1:{port}"

    done = desktop.xdotool("type", "hello")

    assert done.returncode == EXIT_UNREACHABLE
    assert "did not answer" in done.stderr


def test_the_session_token_is_cached_0600_and_reused(desktop: Desktop) -> None:
    assert desktop.xdotool("key", "Return").returncode == 0
    assert desktop.xdotool("key", "Return").returncode == 0

    assert desktop.broker.count("/v1/broker/agents/challenge") == 1
    cache = Path(desktop.env["XDG_RUNTIME_DIR"]) / "kronii" / f"broker-token-{AGENT}.json"
    assert cache.stat().st_mode & 0o777 == 0o600


def test_a_revoked_cached_token_is_replaced_by_a_new_sign_in(desktop: Desktop) -> None:
    assert desktop.xdotool("key", "Return").returncode == 0
    desktop.broker._tokens.clear()  # the broker restarted: the cached token is unknown now

    done = desktop.xdotool("key", "Return")

    assert done.returncode == 0, done.stderr
    assert desktop.broker.count("/v1/broker/agents/challenge") == 2


def test_a_key_file_others_can_read_is_refused(desktop: Desktop) -> None:
    Path(desktop.env["KRONII_BROKER_KEY_FILE"]).chmod(0o644)

    done = desktop.xdotool("type", "hello")

    assert done.returncode == EXIT_USAGE
    assert "chmod 600" in done.stderr
    assert _sent(desktop) == []


def test_an_unknown_verb_is_a_usage_error(desktop: Desktop) -> None:
    assert desktop.xdotool("frobnicate").returncode == EXIT_USAGE


# -- reading the command line, in process --------------------------------------------------------


def test_type_joins_its_arguments_like_xdotool() -> None:
    assert chain.parse(["type", "hello", " world"]) == [chain.Send({"kind": "type", "text": "hello world"})]


def test_key_takes_sequences_up_to_the_next_verb() -> None:
    plan = chain.parse(["key", "ctrl+l", "Return", "sleep", "0.1", "type", "x"])

    assert plan == [
        chain.Send({"kind": "key", "keys": "ctrl+l"}),
        chain.Send({"kind": "key", "keys": "Return"}),
        chain.Sleep(0.1),
        chain.Send({"kind": "type", "text": "x"}),
    ]


def test_click_repeat_and_wheel_buttons() -> None:
    assert chain.parse(["click", "--repeat", "2", "1"]) == [chain.ClickHere(1), chain.ClickHere(1)]
    assert chain.parse(["click", "5"]) == [chain.Send({"kind": "scroll", "dx": 0, "dy": 1})]


def test_mousemove_relative_takes_negative_offsets_after_the_separator() -> None:
    assert chain.parse(["mousemove_relative", "--", "-5", "7"]) == [chain.MoveBy(-5, 7)]


@pytest.mark.parametrize("verb", ["keydown", "keyup", "mousedown", "mouseup", "windowfocus", "set_window"])
def test_half_presses_and_window_changes_are_refused(verb: str) -> None:
    with pytest.raises(chain.Refused):
        chain.route([verb, "x"])


def test_input_to_a_named_window_is_refused() -> None:
    with pytest.raises(chain.Refused, match="--window"):
        chain.parse(["key", "--window", "123", "ctrl+s"])


def test_a_lookup_chained_into_input_is_a_usage_error() -> None:
    with pytest.raises(chain.UsageError):
        chain.route(["search", "--name", "Editor", "key", "ctrl+s"])


def test_a_malformed_key_is_a_usage_error_before_anything_is_sent() -> None:
    with pytest.raises(chain.UsageError, match="key chord"):
        chain.parse(["key", "ctrl+s", "rm -rf"])


def test_a_written_shadow_script_runs_the_shim_with_its_interpreter(desktop: Desktop, tmp_path: Path) -> None:
    script = write_shadow_script(tmp_path / "shadow", python=sys.executable)
    env = {**desktop.env, "PATH": f"{script.parent}{os.pathsep}{desktop.env['PATH']}"}
    del env["KRONII_PYTHON"]

    done = subprocess.run([str(script), "key", "Return"], env=env, capture_output=True, text=True, timeout=30)

    assert done.returncode == 0, done.stderr
    assert _sent(desktop) == [{"kind": "key", "keys": "Return"}]
