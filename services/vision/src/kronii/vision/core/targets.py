"""Which element a person means (issue 31): what they would press, not whatever carries the words.

Every role belongs to one kind, and the kind decides both which elements a phrase can name and what
"click" does to one: a push button is pressed, a list row or table cell is selected (never activated: a
list's `activate` is its double-click, which closes a dialog), a check box is toggled, a menu is opened,
a field is typed into. A label is never pressed: a label inside a button names the button.

Names are matched as a person reads them: without case, mnemonic marks, a trailing colon or ellipsis;
GTK4's "7 7" (its label given twice) is "7"; toolkit class names that stand in for a missing name
("GtkButton", "AdwGizmo", "QWidget") are no name at all."""

from __future__ import annotations

import enum
import re
from collections.abc import Sequence
from dataclasses import dataclass

from kronii.vision.core.context import RawNode, UiNode

__all__ = [
    "ACTIONS_BY_KIND",
    "FIELD_ROLES",
    "LABEL_ROLES",
    "ROW_ROLES",
    "Kind",
    "Pick",
    "called",
    "distinct",
    "find",
    "kind_of",
    "names_of",
    "nth_row",
    "ordinal",
    "rows_of",
    "spoken",
    "useful_name",
]


class Kind(enum.StrEnum):
    PRESS = "press"
    TOGGLE = "toggle"
    ROW = "row"
    MENU = "menu"
    FIELD = "field"
    LABEL = "label"
    OTHER = "other"


_PRESS = frozenset({"push button", "button", "toggle button", "link", "page tab", "icon", "image"})
_TOGGLE = frozenset({"check box", "radio button", "check menu item", "radio menu item", "switch"})
ROW_ROLES = _ROW = frozenset(
    {"list item", "table cell", "tree item", "table row", "option", "tree table cell"}
)
FIELD_ROLES = frozenset(
    {"text", "entry", "password text", "spin button", "text box", "editbar", "search box", "terminal"}
)
LABEL_ROLES = frozenset({"label", "static", "heading", "paragraph", "caption"})
# The actions that are "click" for each kind, in the order tried (compared without case: Qt says
# "Press", GTK "click"). Nothing else is ever run: not clipboard.copy, not a list's activate.
ACTIONS_BY_KIND: dict[Kind, tuple[str, ...]] = {
    Kind.PRESS: ("click", "press", "activate", "jump", "open"),
    Kind.TOGGLE: ("toggle", "check", "uncheck", "click", "press", "activate"),
    Kind.ROW: ("select",),
    Kind.MENU: ("click", "showmenu", "press", "open", "expand"),
    Kind.FIELD: (),
    Kind.LABEL: (),
    Kind.OTHER: ("click", "press"),
}

# A toolkit's class name where the accessible name should be: GTK4 and libadwaita give their widget
# class ("GtkButton", "AdwGizmo"), applications their own ("EditorSourceView", "HistoryView").
_CLASS_NAME = re.compile(
    r"^(?:(?:Gtk|Gdk|Gsk|Adw|Hdy|Q|Kf?)[A-Z][A-Za-z0-9]+"
    r"|(?:[A-Z][a-z0-9]+)+(?:View|Widget|Gizmo|Bin|Box|Bar|Area|Stack|Pane|Popover|Grid|Leaflet|Flap"
    r"|Clamp|Overlay|Revealer|Image|Label|Window|Row|Button|Entry|Page)[A-Za-z0-9]*)$"
)
_MNEMONIC = re.compile(r"_(?=\w)")
_TRAILING = re.compile(r"(?:\s*(?:\.\.\.|\u2026|:))+$")


def useful_name(name: str) -> str:
    """The name, or "" when it is a toolkit's class name standing in for none."""
    name = name.strip()
    return "" if _CLASS_NAME.match(name) else name


def spoken(text: str) -> str:
    """`text` as it is compared: lower case, single spaces, no mnemonic mark, no trailing ':' or '...'."""
    said = " ".join(_MNEMONIC.sub("", text).split()).lower()
    trimmed = _TRAILING.sub("", said)
    return trimmed or said


def _halves(name: str) -> str:
    """GTK4 names a button by its label twice ("7 7", "mod mod"): the label once."""
    words = name.split()
    half = len(words) // 2
    if len(words) % 2 == 0 and half and words[:half] == words[half:]:
        return " ".join(words[:half])
    return name


def kind_of(node: UiNode | RawNode) -> Kind:
    role = node.role
    if role == "menu" or (role == "menu item" and _opens_menu(node)):
        return Kind.MENU
    if role == "menu item":
        return Kind.PRESS
    if role in _TOGGLE:
        return Kind.TOGGLE
    if role in _ROW:
        # A list's check column (zenity --checklist, GTK's toggle renderer) is a check box in a cell.
        return Kind.TOGGLE if any(a.lower() == "toggle" for a in node.actions) else Kind.ROW
    if role in FIELD_ROLES or node.editable or node.secured:
        return Kind.FIELD
    if role == "combo box":
        return Kind.PRESS
    if role in _PRESS:
        return Kind.PRESS
    if role in LABEL_ROLES:
        return Kind.LABEL
    return Kind.OTHER


def _opens_menu(node: UiNode | RawNode) -> bool:
    actions = {a.lower() for a in node.actions}
    return "has_popup" in node.states or "showmenu" in actions


def called(node: UiNode) -> str:
    """The one name a person would use for `node` (for sentences and for R4's count)."""
    name = _halves(_MNEMONIC.sub("", useful_name(node.name)))
    return name or next(iter(node.inner), "") or node.label or node.placeholder


def names_of(node: UiNode) -> frozenset[str]:
    """Every way a person may call `node`: its name (once, for GTK4's doubled names), the text of the
    label inside it, its label (relation or the label beside it) and placeholder for a field."""
    said = {
        spoken(_halves(_MNEMONIC.sub("", n))) for n in (useful_name(node.name), *node.inner, node.label) if n
    }
    if kind_of(node) is Kind.FIELD and node.placeholder:
        said.add(spoken(node.placeholder))
    return frozenset(s for s in said if s)


@dataclass(frozen=True)
class Pick:
    """What a phrase names: `nodes` (one: the element; several: ambiguous, the person must choose),
    or none with `note` saying why in a sentence."""

    nodes: tuple[UiNode, ...]
    note: str = ""

    @property
    def one(self) -> UiNode | None:
        return self.nodes[0] if len(self.nodes) == 1 else None


_FIELD_WORDS = frozenset(
    {"text field", "field", "text box", "entry", "box", "input", "text", "text area", "editor"}
)
_KIND_WORDS = {
    Kind.FIELD: "field",
    Kind.PRESS: "button",
    Kind.ROW: "row",
    Kind.TOGGLE: "check box",
    Kind.MENU: "menu",
}


def _with_kind(nodes: Sequence[UiNode], kinds: frozenset[Kind]) -> list[UiNode]:
    return [n for n in nodes if n.depth > 0 and kind_of(n) in kinds]


def find(nodes: Sequence[UiNode], phrase: str, kinds: frozenset[Kind]) -> Pick:
    """The elements of `kinds` that `phrase` names: by exact name first, then by the name starting
    with the phrase, then containing it. Several equally good matches are an ambiguity, not a guess."""
    wanted = spoken(phrase)
    candidates = _with_kind(nodes, kinds)
    if Kind.FIELD in kinds and wanted in _FIELD_WORDS:
        return _the_field(candidates)
    for matches in (
        [n for n in candidates if wanted in names_of(n)],
        [n for n in candidates if any(name.startswith(wanted) for name in names_of(n))],
        [n for n in candidates if len(wanted) >= 3 and any(wanted in name for name in names_of(n))],
    ):
        if matches:
            return Pick(tuple(_enabled_first(distinct(matches))))
    what = " or ".join(sorted({_KIND_WORDS.get(k, k.value) for k in kinds}))
    return Pick((), f"no {what} named {phrase!r} is in the window in front")


def distinct(nodes: Sequence[UiNode]) -> list[UiNode]:
    """One element per control: GTK4 wraps a menu button's inner button (which has the action) in an
    outer one of the same name (which has none); the pair is one thing a person presses."""

    def wrapper(outer: UiNode) -> bool:
        return not outer.actions and any(
            inner is not outer and inner.actions and outer.bounds is not None and inner.bounds is not None
            and outer.bounds.contains(inner.bounds) and names_of(inner) & names_of(outer)
            for inner in nodes
        )  # fmt: skip

    return [n for n in nodes if not wrapper(n)]


def _enabled_first(matches: list[UiNode]) -> list[UiNode]:
    """A disabled element is never the one meant when an enabled one has the same name."""
    enabled = [n for n in matches if "sensitive" in n.states or "enabled" in n.states]
    return enabled or matches


def _the_field(fields: list[UiNode]) -> Pick:
    if len(fields) == 1:
        return Pick((fields[0],))
    if not fields:
        return Pick((), "there is no text field in the window in front")
    names = ", ".join(sorted({sorted(names_of(f))[0] for f in fields if names_of(f)})) or "none has a name"
    return Pick(tuple(fields), f"{len(fields)} fields are in the window ({names}): say which")


def rows_of(nodes: Sequence[UiNode]) -> list[list[UiNode]]:
    """The rows of the first list or table in reading order, each a list of its cells: cells of one
    container on the same line are one row (a table's cells are siblings, a list's items are rows)."""
    cells = [n for n in _with_kind(nodes, frozenset({Kind.ROW})) if n.bounds is not None]
    if not cells:
        return []
    container = cells[0].parent
    cells = [c for c in cells if c.parent == container]
    rows: list[list[UiNode]] = []
    for cell in sorted(cells, key=lambda c: (c.bounds.y, c.bounds.x) if c.bounds else (0, 0)):
        assert cell.bounds is not None
        last = rows[-1][0].bounds if rows else None
        if last is not None and abs(last.y - cell.bounds.y) < max(4, last.height // 2):
            rows[-1].append(cell)
        else:
            rows.append([cell])
    return rows


_ORDINALS = {
    "first": 1, "second": 2, "third": 3, "fourth": 4, "fifth": 5, "sixth": 6, "seventh": 7,
    "eighth": 8, "ninth": 9, "tenth": 10, "last": -1,
}  # fmt: skip
_ORDINAL = re.compile(
    r"^(?:the\s+)?(?:(?P<word>first|second|third|fourth|fifth|sixth|seventh|eighth|ninth|tenth|last)"
    r"|(?P<num>\d+)(?:st|nd|rd|th))\s+(?:row|item|entry|line|option|one)$"
    r"|^(?:row|item|line|option)\s+(?:number\s+)?(?P<after>\d+)$",
    re.I,
)


def ordinal(phrase: str) -> int | None:
    """ "the second row" -> 2, "row 3" -> 3, "the last item" -> -1; None when not an ordinal."""
    match = _ORDINAL.match(" ".join(phrase.split()))
    if match is None:
        return None
    if match["word"]:
        return _ORDINALS[match["word"].lower()]
    return int(match["num"] or match["after"])


def nth_row(nodes: Sequence[UiNode], position: int) -> Pick:
    rows = rows_of(nodes)
    if not rows:
        return Pick((), "there is no list or table in the window in front")
    index = position - 1 if position > 0 else len(rows) + position
    if not 0 <= index < len(rows):
        return Pick((), f"the list has {len(rows)} rows, so there is no row {position}")
    return Pick((rows[index][0],))
