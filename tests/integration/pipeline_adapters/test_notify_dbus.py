"""Desktop notifications over a private D-Bus session bus, received by a small real notification
server exported there with dbus-fast (Notify, GetCapabilities, CloseNotification, ActionInvoked)."""

from __future__ import annotations

import asyncio
from typing import Any

from dbus_fast import BusType, Message, Variant
from dbus_fast.aio import MessageBus
from kronii.pipeline.adapters.notifications import new_notification
from kronii.pipeline.adapters.notify_dbus import (
    NOTIFICATIONS_INTERFACE,
    NOTIFICATIONS_PATH,
    DesktopNotifier,
)

from tests.notification_server import serve


def note() -> Any:
    return new_notification(
        channel="desktop", title="Tests failed", body="2 failed in test_parser.py <fix & rerun>",
        source_summary="tmux pane: pytest", source_key="plugin:tmux", run_id="run-1", now=1.0,
    )  # fmt: skip


async def test_a_notification_reaches_the_desktop_server_with_its_actions(
    session_bus: str, server_bus: MessageBus
) -> None:
    server = await serve(server_bus, ["body", "actions"])
    acted: asyncio.Queue[tuple[str, str]] = asyncio.Queue()

    async def on_action(notification_id: str, key: str) -> None:
        await acted.put((notification_id, key))

    notifier = DesktopNotifier(bus_address=session_bus, on_action=on_action)
    assert await notifier.start()
    try:
        message = note()
        server_id = await notifier.notify(message)
        assert server_id == 1
        (got,) = server.received
        assert got["app_name"] == "kronii" and got["summary"] == "Tests failed"
        assert got["body"] == "2 failed in test_parser.py <fix & rerun>\n\ntmux pane: pytest"
        assert got["actions"] == ["snooze", "Snooze", "disable", "Don't show again"]
        assert got["hints"]["urgency"] == Variant("y", 1)

        server.invoke_action(server_id, "snooze")
        assert await asyncio.wait_for(acted.get(), 5) == (message.id, "snooze")

        await notifier.close(server_id)
        assert server.closed == [server_id]
    finally:
        await notifier.stop()


async def test_a_server_without_actions_gets_none_and_markup_is_escaped(
    session_bus: str, server_bus: MessageBus
) -> None:
    server = await serve(server_bus, ["body", "body-markup"])
    notifier = DesktopNotifier(bus_address=session_bus)
    assert await notifier.start()
    try:
        await notifier.notify(note())
        assert server.received[0]["actions"] == []
        assert "&lt;fix &amp; rerun&gt;" in server.received[0]["body"]
    finally:
        await notifier.stop()


async def test_without_a_notification_server_the_notifier_is_unavailable(session_bus: str) -> None:
    notifier = DesktopNotifier(bus_address=session_bus, timeout_s=2)
    assert not await notifier.start()
    assert not notifier.available
    assert await notifier.notify(note()) is None


async def test_without_a_session_bus_the_notifier_is_unavailable() -> None:
    notifier = DesktopNotifier(bus_address="")
    assert not await notifier.start()
    assert await notifier.notify(note()) is None


async def test_a_click_signal_from_a_process_that_is_not_the_notification_server_is_ignored(
    session_bus: str, server_bus: MessageBus
) -> None:
    server = await serve(server_bus, ["body", "actions"])
    acted: asyncio.Queue[tuple[str, str]] = asyncio.Queue()

    async def on_action(notification_id: str, key: str) -> None:
        await acted.put((notification_id, key))

    notifier = DesktopNotifier(bus_address=session_bus, on_action=on_action)
    assert await notifier.start()
    forger = await MessageBus(bus_address=session_bus, bus_type=BusType.SESSION).connect()
    try:
        server_id = await notifier.notify(note())
        assert server_id is not None
        # Another process of the same user sends the click straight to the notifier's connection.
        assert notifier._bus is not None
        forged = Message.new_signal(
            NOTIFICATIONS_PATH, NOTIFICATIONS_INTERFACE, "ActionInvoked", "us", [server_id, "snooze"]
        )
        forged.destination = notifier._bus.unique_name
        forger.send(forged)
        await asyncio.sleep(0.3)
        assert acted.empty()
        server.invoke_action(server_id, "snooze")  # the server's own click still counts
        assert (await asyncio.wait_for(acted.get(), 5))[1] == "snooze"
    finally:
        forger.disconnect()
        await notifier.stop()
