"""The lease notification on a private session bus, shown by a notification server answered by
hand: who holds the desktop and until when, the three buttons, a click coming back as the person's
choice, and the bubble taken down when the lease ends."""

from __future__ import annotations

import asyncio

from dbus_fast.aio import MessageBus
from kronii.broker.adapters.lease_notice import LeaseNotice
from kronii.broker.core.model import ControlMode, ControlState

from tests.notification_server import serve


async def test_the_lease_bubble_offers_wait_interrupt_stop_and_a_click_is_the_persons_choice(
    session_bus: str, server_bus: MessageBus
) -> None:
    server = await serve(server_bus, ["body", "actions"])
    chosen: asyncio.Queue[str] = asyncio.Queue()
    notice = LeaseNotice(chosen.put_nowait, bus_address=session_bus)
    assert await notice.start()
    try:
        state = ControlState(
            "s1", True, "viewer", ControlMode.AGENT, 1_900_000_000_000, holder="codex-1", epoch=3
        )
        await notice.show_lease(state)
        (shown,) = server.received
        assert shown["summary"] == "An agent has the desktop"
        assert "codex-1" in shown["body"] and "takes control back at once" in shown["body"]
        assert shown["actions"] == ["wait", "Wait", "interrupt", "Interrupt", "stop", "Stop"]
        server.invoke_action(1, "stop")
        assert await asyncio.wait_for(chosen.get(), 5) == "stop"
        await notice.close()
        assert server.closed == [1]
    finally:
        await notice.stop()


async def test_a_notice_of_unbrokered_input_is_a_bubble_of_its_own_that_the_leases_end_leaves_up(
    session_bus: str, server_bus: MessageBus
) -> None:
    server = await serve(server_bus, ["body", "actions"])
    notice = LeaseNotice(lambda choice: None, bus_address=session_bus)
    assert await notice.start()
    try:
        state = ControlState(
            "s1", True, "viewer", ControlMode.AGENT, 1_900_000_000_000, holder="codex-1", epoch=3
        )
        await notice.show_lease(state)
        sentence = (
            "xdotool (pid 812) typed on the desktop around the broker while agent codex-1 held control:"
            " control taken back."
        )
        # What the control session does on row B1: the lease's bubble is closed, the notice shown.
        await notice.close()
        await notice.show_notice("Input around the broker", sentence)
        _lease, told = server.received
        assert told["summary"] == "Input around the broker" and told["body"] == sentence
        assert told["actions"] == [] and told["hints"]["urgency"].value == 2
        assert server.closed == [1]
    finally:
        await notice.stop()
