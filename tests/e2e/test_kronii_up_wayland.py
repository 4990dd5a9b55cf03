"""`kronii up`, `kronii status` and `kronii doctor` in real sessions: a headless sway (wlroots' protocols), a
headless cage (another wlroots compositor, with screen copy and idle but no window list), a headless
weston (none of them) and Xvfb (X11). Each says which host agent works there and, where one
cannot, why in a sentence; an X display beside a Wayland session (XWayland's place) is not taken for it."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.desktop import start_xvfb
from tests.mesh import Proc, standalone_env
from tests.wayland import CLIENTS, Sway, foot_showing, start_cage, start_sway, start_weston

pytestmark = pytest.mark.e2e

KRONII = str(Path(sys.executable).parent / "kronii")


def _doctor(env: dict[str, str]) -> tuple[int, dict[str, object], str]:
    table = subprocess.run([KRONII, "doctor"], env=env, capture_output=True, text=True, timeout=30)
    done = subprocess.run([KRONII, "doctor", "--json"], env=env, capture_output=True, text=True, timeout=30)
    assert done.returncode == table.returncode
    return done.returncode, json.loads(done.stdout), table.stdout


def _works(body: dict[str, object]) -> dict[str, bool]:
    rows = body["capabilities"]
    assert isinstance(rows, list)
    return {f"{row['agent']} {row['capability']}": row["works"] for row in rows}


def _details(body: dict[str, object]) -> dict[str, str]:
    rows = body["capabilities"]
    assert isinstance(rows, list)
    return {f"{row['agent']} {row['capability']}": row["detail"] for row in rows}


@pytest.fixture(scope="module")
def sway() -> Iterator[Sway]:
    with start_sway() as session:
        session.open(CLIENTS[0])
        yield session


@pytest.fixture(scope="module")
def x_display() -> Iterator[str]:
    with start_xvfb() as display:
        yield display


def test_kronii_status_on_sway_says_which_host_agents_work_and_why_the_others_do_not(
    sway: Sway, x_display: str, tmp_path: Path
) -> None:
    env = {
        **standalone_env(tmp_path / "data"),
        **sway.env(),
        "DISPLAY": x_display,
        "KRONII_TEST_FAST_PG": "1",
    }
    up = Proc([KRONII, "up"], env)
    try:
        up.wait_for_line(lambda line: line.strip() == "kronii is up", 120)
        status = subprocess.run([KRONII, "status"], env=env, capture_output=True, text=True, timeout=30)
    finally:
        code, _ = up.terminate(30)
    rows = {line.split()[0]: line for line in status.stdout.splitlines()[1:] if line.strip()}
    _, doctor, _ = _doctor(env)
    works, details = _works(doctor), _details(doctor)
    assert works["sensor focus"] and works["capture frames"] and works["broker input"]
    for agent, capability in (
        ("sensor", "focus"),
        ("capture", "frames"),
        ("broker", "input"),
        ("vision", "act"),
    ):
        if works[f"{agent} {capability}"]:
            assert "display:" not in rows[agent], rows[agent]
        else:  # the same sentence in kronii status as in kronii doctor
            assert details[f"{agent} {capability}"] in rows[agent], (rows[agent], details)
    assert "kronii-agent" in details["broker input"]
    # the X display named anywhere (":2", "DISPLAY=:2"), not a port that starts with its digits ("127.0.0.1:27186")
    named = re.compile(rf"(?<![\w.]){re.escape(x_display)}(?![\d.])")
    assert not named.search(rows["broker"] + rows["vision"] + rows["sensor"])
    assert code == 0, up.output[-3000:]


def test_kronii_doctor_on_sway_names_the_protocols_each_agent_uses(sway: Sway, x_display: str) -> None:
    code, body, table = _doctor({**sway.env(), "DISPLAY": x_display})
    assert code == (0 if all(_works(body).values()) else 1)
    session = body["session"]
    assert isinstance(session, dict)
    assert session["kind"] == "wayland" and session["compositor"] == "sway"
    works = _works(body)
    assert (
        works["sensor focus"] and works["sensor idle"] and works["capture frames"] and works["broker input"]
    )
    assert "zwlr_foreign_toplevel_manager_v1" in _details(body)["sensor focus"]
    assert f"DISPLAY={x_display} is XWayland's" in table.splitlines()[0]


def test_kronii_doctor_on_a_compositor_without_those_protocols_says_what_each_agent_misses() -> None:
    with start_weston() as weston:
        code, body, _ = _doctor(weston.env())
    assert code == 1
    assert not any(_works(body).values())
    details = _details(body)
    assert details["sensor focus"] == (
        "Wayland (weston): weston offers no window list (zwlr_foreign_toplevel_manager_v1): "
        "the sensor cannot tell which window is focused"
    )
    assert "no screen copy" in details["capture frames"]
    assert "no virtual keyboard" in details["broker input"]


def test_kronii_doctor_on_cage_names_it_from_its_socket_and_says_what_each_agent_can_do_there(
    tmp_path: Path,
) -> None:
    # cage sets no variable of its own: its name comes from the process that answers on the socket
    shown = tmp_path / "shown.txt"
    shown.write_text("a kiosk\n")
    with start_cage(foot_showing(shown, "kronii-kiosk")) as cage:
        code, body, table = _doctor(cage.env())
    assert code == 1
    session = body["session"]
    assert isinstance(session, dict) and session["compositor"] == "cage"
    assert table.startswith("session: Wayland, cage, socket ")
    works, details = _works(body), _details(body)
    assert works == {
        "sensor focus": False,
        "sensor idle": True,
        "capture frames": False,  # cage copies its screen, but nothing says which window a frame shows
        "broker input": False,
        "vision act": False,
    }
    assert details["sensor focus"] == (
        "Wayland (cage): cage offers no window list (zwlr_foreign_toplevel_manager_v1): "
        "the sensor cannot tell which window is focused"
    )
    assert details["capture frames"].startswith(details["sensor focus"])
    assert "capture cannot check that its frames show the window asked for" in details["capture frames"]
    assert "no virtual keyboard" in details["broker input"]


def test_kronii_doctor_on_x11_says_every_agent_works_through_x(x_display: str) -> None:
    env = {k: v for k, v in standalone_env(Path("/nonexistent")).items() if k != "WAYLAND_DISPLAY"}
    code, body, table = _doctor({**env, "DISPLAY": x_display})
    assert code == 0, table
    assert all(_works(body).values())
    assert "MIT-SCREEN-SAVER" in _details(body)["sensor idle"]
    assert table.startswith(f"session: X11, DISPLAY={x_display}")


def test_kronii_doctor_without_any_session_says_so() -> None:
    env = {
        k: v
        for k, v in standalone_env(Path("/nonexistent")).items()
        if k not in ("WAYLAND_DISPLAY", "DISPLAY")
    }
    code, body, _ = _doctor(env)
    assert code == 1
    session = body["session"]
    assert isinstance(session, dict)
    assert session["problem"] == "no desktop session: neither WAYLAND_DISPLAY nor DISPLAY is set"
