"""AT-SPI adapter: reads the desktop's accessibility tree and performs semantic actions over D-Bus.

The accessibility bus (the session bus's `org.a11y.Bus.GetAddress`) holds every application's objects
under its unique bus name; a ref is "<bus name>|<object path>", valid while the object lives. A password's text is never read: an object with role "password text" (what GTK, Qt, Firefox and
Chromium give password fields; AT-SPI has no "secured" state, but one is honoured should a bridge
ever report it) gets text "" and secured=True, and no Text call is ever sent to it.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any

from dbus_fast import DBusFastError, Message, MessageType, Variant
from dbus_fast.aio import MessageBus
from kronii.vision.core.context import Bounds, RawNode

__all__ = ["STATE_NAMES", "AccessibilityError", "AtspiReader", "EventCallback", "decode_states", "split_ref"]

# AtspiStateType in at-spi2-core's order (2.46): bit n of GetState's uint32[2] is STATE_NAMES[n].
STATE_NAMES: tuple[str, ...] = (
    "invalid", "active", "armed", "busy", "checked", "collapsed", "defunct", "editable", "enabled",
    "expandable", "expanded", "focusable", "focused", "has_tooltip", "horizontal", "iconified", "modal",
    "multi_line", "multiselectable", "opaque", "pressed", "resizable", "selectable", "selected",
    "sensitive", "showing", "single_line", "stale", "transient", "vertical", "visible",
    "manages_descendants", "indeterminate", "required", "truncated", "animated", "invalid_entry",
    "supports_autocompletion", "selectable_text", "is_default", "visited", "checkable", "has_popup",
    "read_only",
)  # fmt: skip

A11Y_BUS_NAME = "org.a11y.Bus"
A11Y_BUS_PATH = "/org/a11y/bus"
REGISTRY_NAME = "org.a11y.atspi.Registry"
REGISTRY_PATH = "/org/a11y/atspi/registry"
ROOT_PATH = "/org/a11y/atspi/accessible/root"
ACCESSIBLE = "org.a11y.atspi.Accessible"
ACTION = "org.a11y.atspi.Action"
COMPONENT = "org.a11y.atspi.Component"
EDITABLE_TEXT = "org.a11y.atspi.EditableText"
TEXT = "org.a11y.atspi.Text"
PROPERTIES = "org.freedesktop.DBus.Properties"
DBUS_NAME = "org.freedesktop.DBus"
DBUS_PATH = "/org/freedesktop/DBus"
SCREEN = 0  # ATSPI_COORD_TYPE_SCREEN
MAX_CALLS_IN_FLIGHT = 64

WINDOW_ROLES = frozenset({"frame", "window", "dialog", "alert", "file chooser"})
# A document's whole text is not what a plan needs, and this bounds what one reply can cost.
MAX_TEXT_CHARS = 10_000

_OBJECT_EVENT = "org.a11y.atspi.Event.Object"
# (registry event name, signal interface, signal member, first argument or None) per watched event.
WATCHED_EVENTS: tuple[tuple[str, str, str, str | None], ...] = (
    ("object:state-changed:focused", _OBJECT_EVENT, "StateChanged", "focused"),
    ("object:children-changed", _OBJECT_EVENT, "ChildrenChanged", None),
    ("object:property-change:accessible-name", _OBJECT_EVENT, "PropertyChange", "accessible-name"),
    ("window:activate", "org.a11y.atspi.Event.Window", "Activate", None),
    ("window:deactivate", "org.a11y.atspi.Event.Window", "Deactivate", None),
    ("object:bounds-changed", _OBJECT_EVENT, "BoundsChanged", None),
)

_ERROR = "org.freedesktop.DBus.Error."
_GONE_ERRORS = frozenset(
    _ERROR + name for name in ("UnknownObject", "ServiceUnknown", "NameHasNoOwner", "NoReply", "Disconnected")
)
_NO_INTERFACE_ERRORS = frozenset(_ERROR + n for n in ("UnknownMethod", "UnknownInterface", "UnknownProperty"))

EventCallback = Callable[[str, str], None]


class AccessibilityError(RuntimeError):
    """An accessibility call failed; the message is a sentence fit for a log or a plan's notes."""


class DBusCallError(Exception):
    """A D-Bus error reply, kept inside the adapter (public methods turn it into AccessibilityError)."""

    def __init__(self, name: str, text: str) -> None:
        super().__init__(f"{name}: {text}")
        self.name = name


def decode_states(words: Sequence[int]) -> frozenset[str]:
    """AT-SPI's state bitset (uint32 words, low word first) as lower-case state names."""
    names: set[str] = set()
    for word_index, word in enumerate(words):
        for bit in range(32):
            if word & (1 << bit):
                index = word_index * 32 + bit
                names.add(STATE_NAMES[index] if index < len(STATE_NAMES) else f"state_{index}")
    names.discard("invalid")
    return frozenset(names)


def split_ref(ref: str) -> tuple[str, str]:
    bus_name, sep, path = ref.partition("|")
    if not sep or not bus_name or not path.startswith("/"):
        raise AccessibilityError(f"{ref!r} is not an accessibility ref ('<bus name>|<object path>').")
    return bus_name, path


class A11yBus:
    """One connection to the accessibility bus: method calls bounded in time, errors as DBusCallError."""

    def __init__(self, bus: MessageBus, call_timeout_s: float) -> None:
        self.bus = bus
        self.call_timeout_s = call_timeout_s
        # dbus-fast drops the whole connection when the socket's send buffer is full (EAGAIN in its
        # write callback, dbus-next issue #153), which some hundred queued calls reach: so few fly at once.
        self._in_flight = asyncio.Semaphore(MAX_CALLS_IN_FLIGHT)

    async def call(
        self,
        destination: str,
        path: str,
        interface: str,
        member: str,
        signature: str = "",
        body: Sequence[Any] = (),
    ) -> list[Any]:
        """The reply's body; TimeoutError after `call_timeout_s`, DBusCallError on an error reply."""
        try:
            message = Message(destination, path, interface, member, signature=signature, body=list(body))
        except DBusFastError as exc:
            raise DBusCallError("org.freedesktop.DBus.Error.InvalidArgs", str(exc)) from exc
        async with self._in_flight:
            reply = await asyncio.wait_for(self.bus.call(message), self.call_timeout_s)
        if reply.message_type == MessageType.ERROR:
            text = reply.body[0] if reply.body and isinstance(reply.body[0], str) else ""
            raise DBusCallError(reply.error_name or "unknown error", text.strip())
        return list(reply.body)

    async def first(
        self, dest: str, path: str, iface: str, member: str, sig: str = "", body: Sequence[Any] = ()
    ) -> Any:
        """The first value of the reply's body."""
        return (await self.call(dest, path, iface, member, sig, body))[0]

    async def action_names(self, destination: str, path: str) -> list[str]:
        """The actions' names, not GetActions' localized ones ("Click"): plans name "click" anywhere."""
        (count,) = await self.call(destination, path, PROPERTIES, "Get", "ss", [ACTION, "NActions"])
        calls = (self.call(destination, path, ACTION, "GetName", "i", [i]) for i in range(int(count.value)))
        return [str(reply[0]) for reply in await _settle(*calls)]

    async def pid_of(self, bus_name: str) -> int:
        """The process behind a bus name, or 0 when the bus will not say."""
        try:
            pid = await self.first(
                DBUS_NAME, DBUS_PATH, DBUS_NAME, "GetConnectionUnixProcessID", "s", [bus_name]
            )
        except (DBusCallError, TimeoutError):
            return 0
        return int(pid)


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

    async def snapshot(self, max_depth: int = 12, max_objects: int = 400) -> tuple[RawNode, ...]:
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

    async def _act(
        self, ref: str, what: str, interface: str, member: str, signature: str = "", body: Sequence[Any] = ()
    ) -> list[Any]:
        bus_name, path = split_ref(ref)
        try:
            return await self._require().call(bus_name, path, interface, member, signature, body)
        except (DBusCallError, TimeoutError) as exc:
            raise _explain(ref, what, exc) from exc

    async def watch(self, callback: EventCallback) -> None:
        """Call `callback(kind, ref)` on the event loop for focus, children, name and window activation
        events, e.g. ("object:children-changed:add", ref of the parent). Stops at close()."""
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


@dataclass(frozen=True, slots=True)
class _Place:
    """Where an object sits in the walk, known before it is read."""

    bus_name: str
    path: str
    depth: int
    parent: str | None
    window_title: str
    pid: int


@dataclass(frozen=True, slots=True)
class _Read:
    node: RawNode
    children: list[tuple[str, str]]


async def _settle(*calls: Awaitable[Any]) -> list[Any]:
    """Await every call; a timeout anywhere wins over any other error, so a hung app is noticed."""
    results = await asyncio.gather(*calls, return_exceptions=True)
    for result in results:
        if isinstance(result, TimeoutError):
            raise result
    for result in results:
        if isinstance(result, BaseException):
            raise result
    return results


async def _optional(wanted: bool, ask: Callable[..., Awaitable[Any]], *args: Any) -> Any:
    """What `ask(*args)` answers; None when not `wanted` (nothing is then sent) or when the object
    cannot answer it. A timeout still raises."""
    if not wanted:
        return None
    try:
        return await ask(*args)
    except DBusCallError:
        return None


class TreeWalk:
    """One depth-first read of the tree: each object's children are read together (one wave of
    concurrent calls for the basics, one for extents/actions/text), then visited in order.
    Cache.GetItems would give a whole application in one reply, but GTK3's bridge (at-spi2-core 2.46)
    answers it with UnknownMethod."""

    def __init__(self, a11y: A11yBus, *, max_depth: int, max_objects: int, deadline: float) -> None:
        self._a11y = a11y
        self._max_depth = max_depth
        self._remaining = max_objects
        self._deadline = deadline
        self.nodes: list[RawNode] = []
        self.notes: list[str] = []

    async def run(self) -> list[RawNode]:
        try:
            apps = await self._a11y.first(REGISTRY_NAME, ROOT_PATH, ACCESSIBLE, "GetChildren")
        except (DBusCallError, TimeoutError) as exc:
            raise AccessibilityError(f"The accessibility registry did not list applications: {exc}.") from exc
        own_name = self._a11y.bus.unique_name
        for bus_name, path in self._take([ref for ref in apps if ref[0] != own_name], "applications"):
            await self._walk_app(str(bus_name), str(path))
        return self.nodes

    async def _walk_app(self, bus_name: str, path: str) -> None:
        first = len(self.nodes)
        try:
            pid = await self._a11y.pid_of(bus_name)
            root = await self._read(_Place(bus_name, path, 0, None, "", pid))
            if root is not None:
                await self._visit(root)
        except TimeoutError:
            # A half-read application would look like a smaller one; it is left out whole.
            del self.nodes[first:]
            self.notes.append(f"application {bus_name} did not answer within {self._a11y.call_timeout_s} s")
        except (TypeError, ValueError, IndexError, AttributeError):
            del self.nodes[first:]
            self.notes.append(f"application {bus_name} answered with malformed accessibility data; skipped")

    async def _visit(self, read: _Read) -> None:
        self.nodes.append(read.node)
        if not read.children:
            return
        if read.node.depth >= self._max_depth:
            self._note_once(f"objects deeper than max_depth={self._max_depth} were not read")
            return
        if time.perf_counter() > self._deadline:
            self._note_once("the walk stopped at its time budget")
            return
        node = read.node
        places = [
            _Place(bus, path, node.depth + 1, node.ref, node.window_title, node.pid)
            for bus, path in self._take(read.children, "objects")
        ]
        for child in await self._read_group(places):
            if child is not None:
                await self._visit(child)

    def _take(self, refs: Sequence[tuple[str, str]], what: str) -> Sequence[tuple[str, str]]:
        """As many of `refs` as max_objects still allows, counted as read."""
        taken = refs[: max(self._remaining, 0)]
        if len(taken) < len(refs):
            self._note_once(f"the walk stopped at max_objects; some {what} were not read")
        self._remaining -= len(taken)
        return taken

    def _note_once(self, note: str) -> None:
        if note not in self.notes:
            self.notes.append(note)

    async def _read_group(self, places: Sequence[_Place]) -> list[_Read | None]:
        return await _settle(*(self._read(place) for place in places))

    async def _read(self, place: _Place) -> _Read | None:
        """One object, or None when it vanished while being read."""
        a11y, bus, path = self._a11y, place.bus_name, place.path
        try:
            role, name, state, interfaces, children = await _settle(
                a11y.first(bus, path, ACCESSIBLE, "GetRoleName"),
                a11y.first(bus, path, PROPERTIES, "Get", "ss", [ACCESSIBLE, "Name"]),
                a11y.first(bus, path, ACCESSIBLE, "GetState"),
                a11y.first(bus, path, ACCESSIBLE, "GetInterfaces"),
                a11y.first(bus, path, ACCESSIBLE, "GetChildren"),
            )
        except DBusCallError:
            return None
        states = decode_states(state)
        secured = role == "password text" or "secured" in states
        # The Text call is never even made for a secured object: not the secret, nor its bullet mask.
        wants_text = TEXT in interfaces and not secured
        extents, actions, text = await _settle(
            _optional(COMPONENT in interfaces, a11y.first, bus, path, COMPONENT, "GetExtents", "u", [SCREEN]),
            _optional(ACTION in interfaces, a11y.action_names, bus, path),
            _optional(wants_text, a11y.first, bus, path, TEXT, "GetText", "ii", [0, -1]),
        )
        title = str(name.value)
        node = RawNode(
            ref=f"{bus}|{path}",
            role=str(role),
            name=title,
            states=states,
            bounds=None if extents is None else Bounds(*(int(v) for v in extents)),
            actions=tuple(actions or ()),
            editable=EDITABLE_TEXT in interfaces and "editable" in states,
            text="" if secured or text is None else str(text)[:MAX_TEXT_CHARS],
            depth=place.depth,
            parent=place.parent,
            secured=secured,
            window_title=title if role in WINDOW_ROLES else place.window_title,
            pid=place.pid,
        )
        return _Read(node, [(str(b), str(p)) for b, p in children])
