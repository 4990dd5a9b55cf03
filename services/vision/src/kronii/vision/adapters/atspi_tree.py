"""One read of the desktop's accessibility tree, depth first, within a depth, a count and a time
budget. A password's text is never read: an object with role "password text" (what GTK, Qt, Firefox
and Chromium give password fields; AT-SPI has no "secured" state, but one is honoured should a bridge
ever report it) gets text "" and secured=True, and no Text call is ever sent to it.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any

from kronii.vision.adapters.atspi_bus import (
    ACCESSIBLE,
    ACTION,
    COMPONENT,
    EDITABLE_TEXT,
    PROPERTIES,
    REGISTRY_NAME,
    ROOT_PATH,
    SCREEN,
    TEXT,
    A11yBus,
    AccessibilityError,
    DBusCallError,
    settle,
)
from kronii.vision.core.context import Bounds, RawNode
from kronii.vision.core.targets import FIELD_ROLES

__all__ = ["STATE_NAMES", "TreeWalk", "decode_states"]

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

# AtspiRelationType: the object is labelled by the relation's targets.
LABELLED_BY = 2

WINDOW_ROLES = frozenset({"frame", "window", "dialog", "alert", "file chooser"})
# A document's whole text is not what a plan needs, and this bounds what one reply can cost.
MAX_TEXT_CHARS = 10_000


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


async def _optional(wanted: bool, ask: Callable[..., Awaitable[Any]], *args: Any) -> Any:
    """What `ask(*args)` answers; None when not `wanted` (nothing is then sent) or when the object
    cannot answer it. A timeout still raises."""
    if not wanted:
        return None
    try:
        return await ask(*args)
    except DBusCallError:
        return None


def _is_field(role: str, interfaces: Sequence[str], secured: bool) -> bool:
    """Whether a person may name the object as a field (its label relation is then worth a call)."""
    return EDITABLE_TEXT in interfaces or secured or role in FIELD_ROLES or role == "combo box"


def _placeholder(attributes: Any) -> str:
    """The hint an empty field shows: GTK's placeholder-text, Chromium's and Qt's placeholder."""
    if not isinstance(attributes, dict):
        return ""
    return str(attributes.get("placeholder-text") or attributes.get("placeholder") or "")[:200]


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
        # The applications answer at once, each on its own connection: walked together, a desktop
        # costs its largest application's walk, not the sum of them.
        taken = self._take([ref for ref in apps if ref[0] != own_name], "applications")
        walks = await asyncio.gather(*(self._walk_app(str(bus), str(path)) for bus, path in taken))
        self.nodes = [node for walk in walks for node in walk]
        return self.nodes

    async def _walk_app(self, bus_name: str, path: str) -> list[RawNode]:
        into: list[RawNode] = []
        try:
            pid = await self._a11y.pid_of(bus_name)
            root = await self._read(_Place(bus_name, path, 0, None, "", pid))
            if root is not None:
                await self._visit(root, into)
        except TimeoutError:
            # A half-read application would look like a smaller one; it is left out whole.
            self.notes.append(f"application {bus_name} did not answer within {self._a11y.call_timeout_s} s")
            return []
        except (TypeError, ValueError, IndexError, AttributeError):
            self.notes.append(f"application {bus_name} answered with malformed accessibility data; skipped")
            return []
        return into

    async def _visit(self, read: _Read, into: list[RawNode]) -> None:
        into.append(read.node)
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
                await self._visit(child, into)

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

    async def _label_names(self, bus: str, path: str) -> list[str]:
        """The names of the objects a field's labelled-by relation points at."""
        relations = await self._a11y.first(bus, path, ACCESSIBLE, "GetRelationSet")
        targets = [tuple(t) for kind, found in relations if kind == LABELLED_BY for t in found]
        names = await settle(
            *(
                self._a11y.first(str(b), str(p), PROPERTIES, "Get", "ss", [ACCESSIBLE, "Name"])
                for b, p in targets[:3]
            )
        )
        return [str(name.value) for name in names if str(name.value).strip()]

    async def _read_group(self, places: Sequence[_Place]) -> list[_Read | None]:
        return await settle(*(self._read(place) for place in places))

    async def _read(self, place: _Place) -> _Read | None:
        """One object, or None when it vanished while being read."""
        a11y, bus, path = self._a11y, place.bus_name, place.path
        try:
            role, name, state, interfaces, children = await settle(
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
        field = _is_field(str(role), interfaces, secured)
        extents, actions, text, labels, attributes = await settle(
            _optional(COMPONENT in interfaces, a11y.first, bus, path, COMPONENT, "GetExtents", "u", [SCREEN]),
            _optional(ACTION in interfaces, a11y.action_names, bus, path),
            _optional(wants_text, a11y.first, bus, path, TEXT, "GetText", "ii", [0, -1]),
            _optional(field, self._label_names, bus, path),
            _optional(field, a11y.first, bus, path, ACCESSIBLE, "GetAttributes"),
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
            labelled_by=tuple(labels or ()),
            placeholder=_placeholder(attributes),
        )
        return _Read(node, [(str(b), str(p)) for b, p in children])
