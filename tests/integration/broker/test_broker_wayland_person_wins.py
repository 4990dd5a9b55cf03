"""The broker on a real headless sway: an agent with the person's grant types into a real foot window through
the broker's HTTP API (on the broker's own seat, kronii-agent), and the person's key on their own seat takes
the desktop back at once: at most the one agent key in flight at that instant lands after the person's
(Wayland has no grab to order them; X11's broker has, and lets none). The person is a keyboard on seat0 (a virtual one: a physical keyboard is a device
of seat0 just the same, and the compositor's idle notifications, which the broker reads, do not tell them
apart). What happened is read independently of the broker: what the terminal received, in order (`cat`
writes it to a file)."""

from __future__ import annotations

import subprocess
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest
from kronii.agents.broker_client import BrokerClient, BrokerError, InputResult
from kronii.desktop.wayland_input import VirtualKeyboard, seat_named
from kronii.desktop.wayland_wire import WaylandConnection

from tests.infra import InfraUrls
from tests.integration.broker.broker_support import Broker, start_broker
from tests.mesh import wait_until
from tests.wayland import Sway, WaylandClient, start_sway


@dataclass
class Desk:
    sway: Sway
    broker: Broker
    typed: Path
    person: VirtualKeyboard

    def text(self) -> str:
        return self.typed.read_text()

    def person_types(self, text: str) -> None:
        assert self.person.type_text(text, lambda: True)


@pytest.fixture(scope="module")
def desk(
    infra: InfraUrls, migrated_database: str, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Desk]:
    folder = tmp_path_factory.mktemp("broker-wayland")
    typed = folder / "typed.txt"
    typed.touch()
    typed.chmod(0o666)
    with start_sway() as sway:
        catter = WaylandClient("foot", ("foot", "--app-id", "catter", "sh", "-c", f"cat > {typed}"), "catter")
        sway.open(catter)
        sway.focus("catter")  # the person's seat (seat0) is in the terminal
        settings = {
            "WAYLAND_DISPLAY": str(sway.socket),
            "SWAYSOCK": str(sway.ipc),
            "KRONII_BROKER_DISPLAY": "",
            "DISPLAY": "",
        }
        with start_broker(infra, migrated_database, "", folder, settings=settings) as broker:
            # The person's keyboard joins seat0 after the broker made its seat (sway leaves a virtual
            # device made before a seat change on no seat; a physical one it attaches again).
            person_wire = WaylandConnection(sway.socket)
            seat = seat_named(person_wire, "seat0")
            assert seat is not None
            person = VirtualKeyboard(person_wire, seat)
            person_wire.roundtrip()
            wait_until(lambda: broker.state().get("interactive") is True, 15, "the person attached")
            yield Desk(sway, broker, typed, person)
            person_wire.close()


def _lease(desk: Desk) -> tuple[BrokerClient, str]:
    agent = desk.broker.agent()
    name = agent.client_id
    desk.broker.grant(name, seconds=60)
    return agent, name


def test_readyz_says_the_agent_types_on_a_seat_of_its_own(desk: Desk) -> None:
    display = httpx.get(f"{desk.broker.url}/readyz", timeout=10).json()["dependencies"]["display"]
    assert display["ready"] is True, display
    assert "kronii-agent" in display["detail"]
    seats = {seat["name"] for seat in desk.sway.msg("-t", "get_seats")}
    assert seats == {"seat0", "kronii-agent"}


def test_an_agent_with_the_persons_grant_types_into_the_window_the_person_is_in(desk: Desk) -> None:
    agent, _ = _lease(desk)
    before = desk.text()
    agent.type_text("hello from the agent seat\n")
    wait_until(lambda: desk.text() != before, 10, "the agent's line in the terminal")
    assert desk.text()[len(before) :] == "hello from the agent seat\n"


@pytest.mark.parametrize("pause_s", [0.0, 0.25, 0.7])
def test_the_persons_key_takes_the_desktop_back_and_no_agent_key_lands_after_it(
    desk: Desk, pause_s: float
) -> None:
    agent, _ = _lease(desk)
    before = desk.text()
    long_text = "".join(("ab" * 32) + "\n" for _ in range(150))  # 9,750 characters
    outcome: list[object] = []

    def type_long() -> None:
        try:
            outcome.append(agent.type_text(long_text))
        except BrokerError as error:
            outcome.append(error)

    typing = threading.Thread(target=type_long)
    typing.start()
    wait_until(lambda: len(desk.text()) > len(before), 20, "the agent typing")  # its first line is in
    time.sleep(pause_s)
    desk.person_types("|")
    typing.join(30)
    time.sleep(0.3)
    desk.person_types("\n")
    wait_until(lambda: "|" in desk.text()[len(before) :], 10, "the person's key in the terminal")
    after_person = desk.text()[len(before) :].split("|", 1)[1]
    # Wayland has no grab: the key the broker sent in the instant the person pressed theirs (after its
    # last check, before the compositor's news of the person) can land after it; never a second one.
    assert len(after_person.replace("\n", "")) <= 1, f"agent keys after the person's: {after_person!r}"
    result = outcome[0] if outcome else None
    assert isinstance(result, BrokerError) or (isinstance(result, InputResult) and not result.injected), (
        outcome
    )
    assert len(desk.text()) - len(before) < len(long_text)  # the agent was cut off, not done
    state = desk.broker.state()
    assert state["holder"] in ("", None, "user"), state


def test_wtype_typing_on_the_brokers_seat_around_it_takes_an_agents_lease_back(desk: Desk) -> None:
    """wtype makes its own virtual keyboard on the last seat the compositor lists: the broker's. The
    broker did not send that input, so it is a program going around it, as xdotool is on X11."""
    _, name = _lease(desk)
    assert desk.broker.state()["holder"] == name
    subprocess.run(["wtype", "x"], env=desk.sway.env(), check=True, timeout=10)
    wait_until(lambda: desk.broker.state()["holder"] != name, 10, "the lease taken back")
    wait_until(
        lambda: any("around the broker" in line for line in desk.broker.proc.lines),
        10,
        "the broker's sentence",
    )


def test_an_agents_click_gives_its_seat_the_clicked_window_and_the_persons_seat_stays(desk: Desk) -> None:
    agent, _ = _lease(desk)
    other = desk.sway.open(WaylandClient("foot", ("foot", "--app-id", "clicked"), "clicked"))
    desk.sway.focus("catter")
    rect = other["rect"]
    agent.click(rect["x"] + rect["width"] // 2, rect["y"] + rect["height"] // 2)
    seats = {seat["name"]: seat["focus"] for seat in desk.sway.msg("-t", "get_seats")}
    assert seats["kronii-agent"] == other["id"]
    assert seats["seat0"] != other["id"]  # the person's own focus did not move


def test_a_typed_carriage_return_is_a_return_and_another_control_character_is_refused_with_a_sentence(
    desk: Desk,
) -> None:
    agent, _ = _lease(desk)
    desk.sway.focus("catter")
    desk.broker.grant(agent.client_id, seconds=60)  # the lease's window is the one the person is in again
    before = desk.text()
    agent.type_text("carriage\r\n")
    wait_until(lambda: desk.text() != before, 10, "the line")
    assert desk.text()[len(before) :].endswith("carriage\n")  # (after what wtype left on the line, if it ran)
    assert "\r" not in desk.text()
    with pytest.raises(BrokerError) as refused:
        agent.type_text("bell\x07")
    assert refused.value.status == 400
    assert "control" in str(refused.value)
