"""AT-SPI adapter: reads the desktop's accessibility tree (adapters/atspi_tree.py) and performs
semantic actions over D-Bus (adapters/atspi_bus.py), and passes on the tree's events.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Sequence
from typing import Any

from dbus_fast import DBusFastError, Message, MessageType, Variant
from dbus_fast.aio import MessageBus
from kronii.vision.adapters.atspi_bus import (
    A11Y_BUS_NAME,
    A11Y_BUS_PATH,
    ACCESSIBLE,
    ACTION,
    COMPONENT,
    DBUS_NAME,
    DBUS_PATH,
    EDITABLE_TEXT,
    PROPERTIES,
    REGISTRY_NAME,
    REGISTRY_PATH,
    SELECTION,
    TABLE,
    A11yBus,
    AccessibilityError,
    DBusCallError,
    split_ref,
)
from kronii.vision.adapters.atspi_tree import TreeWalk
from kronii.vision.core.context import RawNode

__all__ = ["AtspiReader", "EventCallback"]

_OBJECT_EVENT = "org.a11y.atspi.Event.Object"
# (registry event name, signal interface, signal member, first argument or None) per watched event.
WATCHED_EVENTS: tuple[tuple[str, str, str, str | None], ...] = (
    ("object:state-changed:focused", _OBJECT_EVENT, "StateChanged", "focused"),
    ("object:children-changed", _OBJECT_EVENT, "ChildrenChanged", None),
    ("object:property-change:accessible-name", _OBJECT_EVENT, "PropertyChange", "accessible-name"),
    ("window:activate", "org.a11y.atspi.Event.Window", "Activate", None),
    ("window:deactivate", "org.a11y.atspi.Event.Window", "Deactivate", None),
    ("object:bounds-changed", _OBJECT_EVENT, "BoundsChanged", None),
    # What an application says it did: a toggle pressed and let go at once, a display rewritten with
    # the same text. A look at the tree afterwards can miss both; the event is not missed.
    ("object:state-changed", _OBJECT_EVENT, "StateChanged", None),
    ("object:text-changed", _OBJECT_EVENT, "TextChanged", None),
    ("object:property-change:accessible-value", _OBJECT_EVENT, "PropertyChange", "accessible-value"),
)

_ERROR = "org.freedesktop.DBus.Error."
_GONE_ERRORS = frozenset(
    _ERROR + name for name in ("UnknownObject", "ServiceUnknown", "NameHasNoOwner", "NoReply", "Disconnected")
)
_NO_INTERFACE_ERRORS = frozenset(_ERROR + n for n in ("UnknownMethod", "UnknownInterface", "UnknownProperty"))

EventCallback = Callable[[str, str], None]


def _explain(ref: str, what: str, exc: BaseException) -> AccessibilityError:
    if isinstance(exc, TimeoutError):
        return AccessibilityError(f"The application owning {ref} did not answer in time to {what}.")
    if isinstance(exc, DBusCallError) and exc.name in _GONE_ERRORS:
        return AccessibilityError(f"The accessible object {ref} does not exist (now), so it cannot {what}.")
    if isinstance(exc, DBusCallError) and exc.name in _NO_INTERFACE_ERRORS:
        return AccessibilityError(f"The accessible object {ref} does not support the call needed to {what}.")
    return AccessibilityError(f"The accessible object {ref} refused to {what}: {exc}.")


class AtspiReader:
    """Reads the AT-SPI tree of the desktop and acts on its objects.

    `session_bus_address` names the session bus that owns org.a11y.Bus (None: the environment's).
    `enable_accessibility` sets org.a11y.Status.IsEnabled when it is off. On this machine (GTK 3.24,
    at-spi2-core 2.46) GTK3 applications register on the accessibility bus whether or not it is set;
    Qt applications register only once it is true (not checked here: no Qt on this machine).
    at-spi-bus-launcher also writes it to the persistent gsetting org.gnome.desktop.interface
    toolkit-accessibility, so the reader only ever switches it on, never off.
    """

    def __init__(
        self,
        session_bus_address: str | None = None,
        *,
        call_timeout_s: float = 0.5,
        time_budget_s: float = 5.0,
        enable_accessibility: bool = True,
    ) -> None:
        self._session_address = session_bus_address
        self._call_timeout_s = call_timeout_s
        self._time_budget_s = time_budget_s
        self._enable = enable_accessibility
        self._session: MessageBus | None = None
        self._a11y: A11yBus | None = None
        self._callbacks: list[EventCallback] = []
        self._subscribed = False
        self.notes: tuple[str, ...] = ()
        self.last_read_ms: float = 0.0

    async def connect(self) -> None:
        if self._a11y is not None:
            return
        try:
            session = await MessageBus(bus_address=self._session_address).connect()
        except (OSError, DBusFastError, ValueError) as exc:
            raise AccessibilityError(f"The session bus is out of reach: {exc}.") from exc
        self._session = session
        try:
            if self._enable:
                await self._switch_accessibility_on(session)
            address = await self._a11y_address(session)
            bus = await MessageBus(bus_address=address).connect()
        except BaseException as exc:
            session.disconnect()
            self._session = None
            if isinstance(exc, (OSError, DBusFastError)):
                raise AccessibilityError(f"The accessibility bus is out of reach: {exc}.") from exc
            raise
        self._a11y = A11yBus(bus, self._call_timeout_s)

    async def close(self) -> None:
        if self._a11y is not None:
            self._a11y.bus.disconnect()
            self._a11y = None
        if self._session is not None:
            self._session.disconnect()
            self._session = None
        self._callbacks.clear()
        self._subscribed = False

    async def snapshot(self, max_depth: int = 32, max_objects: int = 1500) -> tuple[RawNode, ...]:
        """Every application's objects, depth first (applications at depth 0), within both limits and
        the time budget. What was skipped (a hung application, a cut walk) is in `notes` afterwards."""
        a11y = self._require()
        started = time.perf_counter()
        deadline = started + self._time_budget_s
        walk = TreeWalk(a11y, max_depth=max_depth, max_objects=max_objects, deadline=deadline)
        nodes = await walk.run()
        self.last_read_ms = (time.perf_counter() - started) * 1000
        self.notes = tuple(walk.notes)
        return tuple(nodes)

    async def do_action(self, ref: str, name: str = "click") -> bool:
        """Run the object's action called `name` (its only action if it has exactly one)."""
        bus_name, path = split_ref(ref)
        try:
            actions = await self._require().action_names(bus_name, path)
        except (DBusCallError, TimeoutError) as exc:
            raise _explain(ref, f"list its actions for {name!r}", exc) from exc
        if name in actions:
            index = actions.index(name)
        elif len(actions) == 1:
            index = 0
        else:
            raise AccessibilityError(f"The accessible object {ref} has no action {name!r}, only {actions}.")
        (done,) = await self._act(ref, f"do its action {actions[index]!r}", ACTION, "DoAction", "i", [index])
        return bool(done)

    async def set_text(self, ref: str, text: str) -> bool:
        return bool((await self._act(ref, "set its text", EDITABLE_TEXT, "SetTextContents", "s", [text]))[0])

    async def grab_focus(self, ref: str) -> bool:
        return bool((await self._act(ref, "take the focus", COMPONENT, "GrabFocus"))[0])

    async def select(self, ref: str, parent: str) -> bool:
        """Select the object in its container, as a person's single click would: the container's
        Selection.SelectChild with the object's index (GTK's tree views map a cell to its row)."""
        (index,) = await self._act(ref, "say where it is in its list", ACCESSIBLE, "GetIndexInParent")
        if int(index) < 0:
            return False
        with contextlib.suppress(AccessibilityError):
            if (await self._act(parent, "select its child", SELECTION, "SelectChild", "i", [int(index)]))[0]:
                return True
        # GTK3's tree views refuse SelectChild with more than one column; their Table selects rows.
        (row,) = await self._act(
            parent, "say which row holds the cell", TABLE, "GetRowAtIndex", "i", [int(index)]
        )
        if int(row) < 0:
            return False
        return bool((await self._act(parent, "select the row", TABLE, "AddRowSelection", "i", [int(row)]))[0])

    async def _act(
        self, ref: str, what: str, interface: str, member: str, signature: str = "", body: Sequence[Any] = ()
    ) -> list[Any]:
        bus_name, path = split_ref(ref)
        try:
            return await self._require().call(bus_name, path, interface, member, signature, body)
        except (DBusCallError, TimeoutError) as exc:
            raise _explain(ref, what, exc) from exc

    async def watch(self, callback: EventCallback) -> None:
        """Call `callback(kind, ref)` on the event loop for focus, children, name, value, state, text and
        window activation events, e.g. ("object:children-changed:add", ref of the parent),
        ("object:state-changed:checked", ref of the button). Stops at close()."""
        a11y = self._require()
        if not self._subscribed:
            a11y.bus.add_message_handler(self._on_message)
            try:
                await self._subscribe(a11y)
            except (DBusCallError, TimeoutError) as exc:
                a11y.bus.remove_message_handler(self._on_message)
                raise AccessibilityError(f"The accessibility registry refused the events: {exc}.") from exc
            self._subscribed = True
        self._callbacks.append(callback)

    @staticmethod
    async def _subscribe(a11y: A11yBus) -> None:
        for event, interface, member, arg0 in WATCHED_EVENTS:
            rule = f"type='signal',interface='{interface}',member='{member}'"
            if arg0 is not None:
                rule += f",arg0='{arg0}'"
            await a11y.call(DBUS_NAME, DBUS_PATH, DBUS_NAME, "AddMatch", "s", [rule])
            # Toolkits emit an event only once some listener registered it with the registry.
            everywhere = [event, [], ""]  # no extra properties, from every application
            await a11y.call(REGISTRY_NAME, REGISTRY_PATH, REGISTRY_NAME, "RegisterEvent", "sass", everywhere)

    def _on_message(self, message: Message) -> None:
        if message.message_type != MessageType.SIGNAL or not message.sender or not message.path:
            return
        for event, interface, member, arg0 in WATCHED_EVENTS:
            if message.interface != interface or message.member != member:
                continue
            detail = message.body[0] if message.body and isinstance(message.body[0], str) else ""
            if arg0 is not None and detail != arg0:
                continue
            kind = f"{event}:{detail}" if arg0 is None and detail else event
            for callback in list(self._callbacks):
                callback(kind, f"{message.sender}|{message.path}")
            return

    def _require(self) -> A11yBus:
        if self._a11y is None:
            raise AccessibilityError("The AT-SPI reader is not connected; call connect() first.")
        return self._a11y

    async def _switch_accessibility_on(self, session: MessageBus) -> None:
        bus = A11yBus(session, max(self._call_timeout_s, 2.0))
        status = ["org.a11y.Status", "IsEnabled"]
        try:
            (enabled,) = await bus.call(A11Y_BUS_NAME, A11Y_BUS_PATH, PROPERTIES, "Get", "ss", status)
            if not (isinstance(enabled, Variant) and enabled.value is True):
                switch_on = [*status, Variant("b", True)]
                await bus.call(A11Y_BUS_NAME, A11Y_BUS_PATH, PROPERTIES, "Set", "ssv", switch_on)
        except (DBusCallError, TimeoutError) as exc:
            raise AccessibilityError(f"org.a11y.Bus did not switch accessibility on: {exc}.") from exc

    async def _a11y_address(self, session: MessageBus) -> str:
        # The first call may start at-spi-bus-launcher through D-Bus activation, which takes a moment.
        bus = A11yBus(session, max(self._call_timeout_s, 5.0))
        try:
            return str((await bus.call(A11Y_BUS_NAME, A11Y_BUS_PATH, A11Y_BUS_NAME, "GetAddress"))[0])
        except (DBusCallError, TimeoutError) as exc:
            raise AccessibilityError(f"org.a11y.Bus did not give the a11y bus's address: {exc}.") from exc
