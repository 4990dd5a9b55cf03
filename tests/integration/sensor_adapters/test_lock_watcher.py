"""LockWatcher against private dbus-daemons: one as the session bus, one standing in for the system bus."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest
from dbus_fast import Message, MessageType, RequestNameReply
from dbus_fast.aio import MessageBus
from kronii.sensor.adapters.lock import LockWatcher

from tests.desktop import emit_screensaver_active, emit_signal

NO_BUS = "unix:path=/nonexistent/kronii-test-bus"
OUR_SESSION = "/org/freedesktop/login1/session/_31"
OTHER_SESSION = "/org/freedesktop/login1/session/_32"


class LockInbox:
    def __init__(self) -> None:
        self.events: list[tuple[bool, str]] = []

    def __call__(self, locked: bool, source: str) -> None:
        self.events.append((locked, source))

    async def wait_for_count(self, count: int, timeout_s: float = 3.0) -> list[tuple[bool, str]]:
        async with asyncio.timeout(timeout_s):
            while len(self.events) < count:
                await asyncio.sleep(0.01)
        return self.events

    async def assert_quiet(self, count: int, for_s: float = 0.3) -> None:
        await asyncio.sleep(for_s)
        assert len(self.events) == count, self.events


async def started(watcher: LockWatcher) -> LockInbox:
    inbox = LockInbox()
    await watcher.start(inbox)
    return inbox


@pytest.fixture
async def fake_logind(fake_system_bus: str) -> AsyncIterator[MessageBus]:
    """A connection owning org.freedesktop.login1 on the fake system bus, to emit genuine signals."""
    bus = await MessageBus(bus_address=fake_system_bus).connect()
    reply = await bus.request_name("org.freedesktop.login1")
    assert reply == RequestNameReply.PRIMARY_OWNER
    yield bus
    bus.disconnect()
    await bus.wait_for_disconnect()  # type: ignore[no-untyped-call]


async def emit_logind(bus: MessageBus, path: str, member: str) -> None:
    await bus.send(Message.new_signal(path, "org.freedesktop.login1.Session", member))


async def test_screensaver_active_changed_true_then_false_reports_lock_then_unlock(session_bus: str) -> None:
    watcher = LockWatcher(session_address=session_bus, system_address=NO_BUS)
    inbox = await started(watcher)
    try:
        assert watcher.sources == ["screensaver"]
        emit_screensaver_active(session_bus, True)
        emit_screensaver_active(session_bus, False)
        assert await inbox.wait_for_count(2) == [(True, "screensaver"), (False, "screensaver")]
    finally:
        await watcher.stop()


async def test_gnome_screensaver_interface_is_heard_on_any_object_path(session_bus: str) -> None:
    watcher = LockWatcher(session_address=session_bus, system_address=NO_BUS)
    inbox = await started(watcher)
    try:
        emit_screensaver_active(session_bus, True, interface="org.gnome.ScreenSaver", path="/ScreenSaver")
        emit_screensaver_active(
            session_bus, False, interface="org.gnome.ScreenSaver", path="/org/gnome/ScreenSaver"
        )
        assert await inbox.wait_for_count(2) == [(True, "screensaver"), (False, "screensaver")]
    finally:
        await watcher.stop()


async def test_one_change_announced_on_both_screensaver_interfaces_is_reported_once(session_bus: str) -> None:
    watcher = LockWatcher(session_address=session_bus, system_address=NO_BUS)
    inbox = await started(watcher)
    try:
        emit_screensaver_active(session_bus, True, interface="org.gnome.ScreenSaver")
        emit_screensaver_active(session_bus, True, interface="org.freedesktop.ScreenSaver")
        assert await inbox.wait_for_count(1) == [(True, "screensaver")]
        await inbox.assert_quiet(1)
    finally:
        await watcher.stop()


async def test_unrelated_signals_and_wrong_signatures_are_ignored(session_bus: str) -> None:
    watcher = LockWatcher(session_address=session_bus, system_address=NO_BUS)
    inbox = await started(watcher)
    try:
        emit_signal(
            session_bus,
            "/org/freedesktop/ScreenSaver",
            "org.freedesktop.ScreenSaver",
            "ActiveChanged",
            "string:yes",
        )
        emit_signal(session_bus, "/org/example", "org.example.ScreenSaver", "ActiveChanged", "boolean:true")
        emit_signal(
            session_bus, "/org/freedesktop/ScreenSaver", "org.freedesktop.ScreenSaver", "WakeUpScreen"
        )
        await inbox.assert_quiet(0)
        emit_screensaver_active(session_bus, True)
        assert await inbox.wait_for_count(1) == [(True, "screensaver")]
    finally:
        await watcher.stop()


async def test_missing_buses_are_not_errors_and_leave_no_sources() -> None:
    watcher = LockWatcher(session_address=NO_BUS, system_address=NO_BUS)
    await started(watcher)
    assert watcher.sources == []
    await watcher.stop()


async def test_logind_lock_and_unlock_of_our_session_are_reported(
    session_bus: str, fake_system_bus: str, fake_logind: MessageBus
) -> None:
    watcher = LockWatcher(
        session_address=session_bus, system_address=fake_system_bus, logind_session_path=OUR_SESSION
    )
    inbox = await started(watcher)
    try:
        assert watcher.sources == ["screensaver", "logind"]
        await emit_logind(fake_logind, OUR_SESSION, "Lock")
        await emit_logind(fake_logind, OUR_SESSION, "Unlock")
        assert await inbox.wait_for_count(2) == [(True, "logind"), (False, "logind")]
    finally:
        await watcher.stop()


async def test_logind_signals_of_other_sessions_or_from_impostors_are_ignored(
    fake_system_bus: str, fake_logind: MessageBus
) -> None:
    watcher = LockWatcher(
        session_address=NO_BUS, system_address=fake_system_bus, logind_session_path=OUR_SESSION
    )
    inbox = await started(watcher)
    try:
        assert watcher.sources == ["logind"]
        await emit_logind(fake_logind, OTHER_SESSION, "Lock")
        # dbus-send does not own org.freedesktop.login1, so this is a forgery.
        emit_signal(fake_system_bus, OUR_SESSION, "org.freedesktop.login1.Session", "Lock")
        await inbox.assert_quiet(0)

        await emit_logind(fake_logind, OUR_SESSION, "Lock")
        assert await inbox.wait_for_count(1) == [(True, "logind")]
    finally:
        await watcher.stop()


async def test_logind_signals_are_not_believed_when_sent_directly_to_the_watcher(
    fake_system_bus: str, fake_logind: MessageBus
) -> None:
    watcher = LockWatcher(
        session_address=NO_BUS, system_address=fake_system_bus, logind_session_path=OUR_SESSION
    )
    inbox = await started(watcher)
    try:
        impostor = await MessageBus(bus_address=fake_system_bus).connect()
        try:
            names = await impostor.call(
                Message(
                    destination="org.freedesktop.DBus",
                    path="/org/freedesktop/DBus",
                    interface="org.freedesktop.DBus",
                    member="ListNames",
                )
            )
            known = {impostor.unique_name, fake_logind.unique_name}
            watcher_names = [n for n in names.body[0] if n.startswith(":") and n not in known]
            assert len(watcher_names) == 1
            # A unicast signal skips the bus daemon's match rules, sender check included, and
            # here it even comes from the real owner of org.freedesktop.login1.
            for sender in (impostor, fake_logind):
                await sender.send(
                    Message(
                        destination=watcher_names[0],
                        path=OUR_SESSION,
                        interface="org.freedesktop.login1.Session",
                        member="Lock",
                        message_type=MessageType.SIGNAL,
                    )
                )
        finally:
            impostor.disconnect()
        await inbox.assert_quiet(0)
    finally:
        await watcher.stop()


async def test_logind_session_unresolvable_means_every_session_counts(
    fake_system_bus: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("XDG_SESSION_ID", raising=False)
    # Nobody owns org.freedesktop.login1 yet, so GetSession("auto") fails.
    watcher = LockWatcher(session_address=NO_BUS, system_address=fake_system_bus, connect_timeout_s=2.0)
    inbox = await started(watcher)
    logind = await MessageBus(bus_address=fake_system_bus).connect()
    try:
        assert watcher.sources == ["logind"]
        assert watcher.logind_session_path is None
        await logind.request_name("org.freedesktop.login1")
        await emit_logind(logind, OTHER_SESSION, "Lock")
        assert await inbox.wait_for_count(1) == [(True, "logind")]
    finally:
        logind.disconnect()
        await watcher.stop()


async def test_stopped_watcher_reports_nothing_and_has_no_sources(session_bus: str) -> None:
    watcher = LockWatcher(session_address=session_bus, system_address=NO_BUS)
    inbox = await started(watcher)
    await watcher.stop()
    assert watcher.sources == []
    emit_screensaver_active(session_bus, True)
    await inbox.assert_quiet(0)


async def test_starting_while_the_screen_saver_is_active_reports_locked_at_once(session_bus: str) -> None:
    """A screen saver service on the bus answers GetActive=true; no ActiveChanged ever comes."""
    saver = await MessageBus(bus_address=session_bus).connect()
    assert await saver.request_name("org.freedesktop.ScreenSaver") == RequestNameReply.PRIMARY_OWNER

    def answer(message: Message) -> Message | None:
        if message.message_type == MessageType.METHOD_CALL and message.member == "GetActive":
            return Message.new_method_return(message, "b", [True])
        return None

    saver.add_message_handler(answer)
    watcher = LockWatcher(session_address=session_bus, system_address=NO_BUS)
    try:
        inbox = await started(watcher)
        assert await inbox.wait_for_count(1) == [(True, "screensaver")]
        emit_screensaver_active(session_bus, False)
        assert await inbox.wait_for_count(2) == [(True, "screensaver"), (False, "screensaver")]
    finally:
        await watcher.stop()
        saver.disconnect()


async def test_starting_while_unlocked_reports_nothing(session_bus: str) -> None:
    saver = await MessageBus(bus_address=session_bus).connect()
    assert await saver.request_name("org.freedesktop.ScreenSaver") == RequestNameReply.PRIMARY_OWNER
    saver.add_message_handler(
        lambda m: Message.new_method_return(m, "b", [False]) if m.member == "GetActive" else None
    )
    watcher = LockWatcher(session_address=session_bus, system_address=NO_BUS)
    try:
        inbox = await started(watcher)
        await inbox.assert_quiet(0)
    finally:
        await watcher.stop()
        saver.disconnect()
