"""The conformance table: real applications from Debian (GTK3, GTK4, Qt5, Chromium), and for each the
intents a person would type, what the engine must answer, and the effect the tester checks on the app
itself. Written as data so that bench/vision_intent.py runs the same table.

Expected outcomes: `done` (and the effect is there), `blocked` (with a sentence; a safety row where one
is named), `awaiting_confirmation` (the ambiguity listed: name and count), or, where the intent cannot
have its effect (a disabled button), `failed` or `blocked` with a sentence: the case says why."""

from __future__ import annotations

import itertools
from dataclasses import dataclass

from tests.integration.vision.conformance.apps import AppSpec, Seen, chromium_argv, plain, zenity
from tests.integration.vision.conformance.effects import (
    Effect,
    all_of,
    exits,
    item_showing,
    nothing_happens,
    printed,
    state_on,
    text_shows,
    window_opens,
)

__all__ = ["APPS", "CASES", "Case", "Expect"]

GTK3, GTK4, QT5, CHROMIUM = "GTK3", "GTK4", "Qt5", "Chromium"
PAGE_SECRET = "Pw-s3cret-Quokka"  # the page's password field holds it from the start

APPS: dict[str, AppSpec] = {
    spec.key: spec
    for spec in (
        AppSpec("zenity-form", GTK3, zenity("--forms", "--title=Sign up", "--text=Create your account",
                                            "--add-entry=Name", "--add-password=Password")),
        AppSpec("zenity-entry", GTK3, zenity("--entry", "--title=City", "--text=Your city")),
        AppSpec("zenity-list", GTK3, zenity("--list", "--title=Fruit", "--checklist", "--column=Pick",
                                            "--column=Fruit", "FALSE", "Apple", "FALSE", "Banana", "FALSE",
                                            "Cherry", "--separator=,")),
        AppSpec("zenity-question", GTK3, zenity("--question", "--title=Confirm", "--text=Delete the file?",
                                                "--ok-label=Yes", "--cancel-label=No", "--extra-button=Yes"),
                ready_objects=5),
        AppSpec("galculator", GTK3, plain("galculator"), ready_objects=40, reset=(("AC", "click"),)),
        AppSpec("gnome-calculator", GTK4, plain("gnome-calculator"), ready_objects=40),
        AppSpec("gnome-text-editor", GTK4, plain("gnome-text-editor", "--standalone"), ready_objects=20),
        AppSpec("featherpad", QT5, plain("featherpad", "--standalone"), ready_objects=40),
        AppSpec("chromium", CHROMIUM, chromium_argv, ready_objects=25, keep="CONSOLE", stderr_output=True),
    )
}  # fmt: skip


@dataclass(frozen=True)
class Expect:
    """The engine's answer: the plan's state (one of `states`), the safety row that must have fired,
    and for an ambiguity the name ("" for any) and how many elements carry it."""

    states: frozenset[str]
    row: str = ""
    ask: tuple[str, int] | None = None


DONE = Expect(frozenset({"done"}))
NOT_ON_SCREEN = Expect(frozenset({"blocked"}))
NOT_ALLOWED = Expect(frozenset({"blocked"}), row="R3")
SECURED = Expect(frozenset({"blocked"}), row="S1")


def asks(name: str, count: int) -> Expect:
    return Expect(frozenset({"awaiting_confirmation"}), row="R4", ask=(name, count))


@dataclass(frozen=True)
class Case:
    app: str
    intent: str
    expect: Expect
    effect: Effect
    # Why this outcome, where it is not plain `done`.
    why: str = ""
    # The app is started again after this case (the case closed it or left a menu or a dialog open).
    fresh: bool = False
    # Text that must never appear in the context or the plan.
    secret: str = ""
    # A limit of kronii's found by this case and not yet lifted: the case is expected to fail (strictly:
    # once it passes, the mark must go), and the reason is printed with every run.
    known_limit: str = ""

    @property
    def toolkit(self) -> str:
        return APPS[self.app].toolkit

    @property
    def id(self) -> str:
        return f"{self.app}: {self.intent}"


def _checked_row(fruit: str) -> Effect:
    """zenity's checklist: the toggle cell just before the row's text cell is checked."""

    def check(before: Seen, after: Seen) -> str | None:
        cells = [n for n in after.nodes if n.role == "table cell"]
        for toggle, text in itertools.pairwise(cells):
            if text.name == fruit:
                return None if "checked" in toggle.states else f"{fruit}'s box is {sorted(toggle.states)}"
        return f"no row {fruit!r}"

    return check


def _more(role: str, name: str | None = None) -> Effect:
    """One more showing object of `role` (and `name`) than before: a new tab."""

    def count(seen: Seen) -> int:
        return sum(1 for n in seen.nodes if n.role == role and name in (None, n.name) and seen.shown(n))

    def check(before: Seen, after: Seen) -> str | None:
        return (
            None if count(after) > count(before) else f"{count(after)} {role} objects, {count(before)} before"
        )

    return check


def _no_line(fragment: str) -> Effect:
    def check(before: Seen, after: Seen) -> str | None:
        new = after.output[len(before.output) :]
        return f"it printed {fragment!r}" if any(fragment in line for line in new) else None

    return check


# Chromium 156 offers no EditableText calls (SetTextContents, InsertText) on AT-SPI, so text goes in as
# keys through the broker, on the broker's own XInput2 master keyboard; Chromium takes keys only from
# the newest master keyboard on the server (seen here: of two masters made before it, keys from the
# first never arrived, from the second they did; clicks from either did), and the broker's viewer
# master is made after the agent's. The engine ends these `failed` with "the field holds ''": never done.
CHROMIUM_KEYS = (
    "Chromium ignores keys from the broker's agent master keyboard (it takes the newest master's only)"
)

TEXT = frozenset({"text"})
TEXT_BOX = frozenset({"text box"})
DISABLED = "MR is disabled until something is in memory: it cannot be pressed, so not done"

CASES: tuple[Case, ...] = (
    # zenity (GTK3): a form with an unnamed entry beside its label and a password field
    Case("zenity-form", "type Ada into Name", DONE, text_shows("Ada", roles=TEXT)),
    Case("zenity-form", "type hunter2 into Password", SECURED, nothing_happens, "a password field"),
    Case("zenity-form", "click the Submit button", NOT_ON_SCREEN, nothing_happens, "no Submit on screen"),
    Case("zenity-form", "open gedit", NOT_ALLOWED, nothing_happens, "gedit is not in the allowlist"),
    Case("zenity-form", "press OK", DONE, exits(0), fresh=True),
    Case("zenity-entry", "type Paris into the text field", DONE, text_shows("Paris", roles=TEXT)),
    Case("zenity-list", "check Banana", DONE, _checked_row("Banana")),
    Case("zenity-list", "select the third row", DONE, state_on("Cherry", "selected")),
    Case("zenity-list", "select Apple", DONE, state_on("Apple", "selected")),
    Case("zenity-list", "press Cancel", DONE, exits(1), fresh=True),
    Case("zenity-question", "click Yes", asks("Yes", 2), nothing_happens, "two buttons are called Yes"),
    Case("zenity-question", "press No", DONE, all_of(exits(1), _no_line("Yes")), fresh=True),
    # galculator (GTK3): buttons, a display, a menu bar; the tester presses AC before each case
    Case("galculator", "click the 7 button", DONE, text_shows("7", roles=TEXT)),
    Case("galculator", "click 4 then click + then click 5 then click =", DONE, text_shows("9", roles=TEXT)),
    Case("galculator", "press the 9 button then press sqrt", DONE, text_shows("3", roles=TEXT)),
    Case("galculator", "press the MR button", Expect(frozenset({"blocked", "failed"})), nothing_happens, DISABLED),
    Case("galculator", "click the Equals button", NOT_ON_SCREEN, nothing_happens, "the button is called ="),
    Case("galculator", "open gnome-calculator", NOT_ALLOWED, nothing_happens, "not in the allowlist"),
    Case("galculator", "open the Edit menu", DONE, item_showing("Copy Display Value"), fresh=True),
    Case("galculator", "open the View menu then click Scientific Mode", DONE,
         state_on("Scientific Mode", "checked"), fresh=True),
    # gnome-calculator (GTK4): buttons whose text is a label inside them (the "7" case)
    Case("gnome-calculator", "click the 7 button", DONE, text_shows("7", roles=TEXT_BOX), fresh=True),
    Case("gnome-calculator", "click 2 then click \u00d7 then click 3 then click =", DONE,
         text_shows("6", roles=TEXT_BOX), fresh=True),
    Case("gnome-calculator", "click √ then click 9 then click =", DONE, text_shows("3", roles=TEXT_BOX),
         fresh=True),
    Case("gnome-calculator", "click the π button", DONE, text_shows("π", roles=TEXT_BOX), fresh=True),
    Case("gnome-calculator", "type 12+30 into the text field", DONE, text_shows("12+30", roles=TEXT_BOX),
         fresh=True),
    Case("gnome-calculator", "click the Sine button", NOT_ON_SCREEN, nothing_happens, "no sine in Basic mode"),
    Case("gnome-calculator", "open gedit", NOT_ALLOWED, nothing_happens, "not in the allowlist"),
    Case("gnome-calculator", "open the Basic menu", DONE, item_showing("Advanced"), fresh=True),
    # gnome-text-editor (GTK4): one document view, header-bar buttons, a popover menu
    Case("gnome-text-editor", "type hello into the text field", DONE, text_shows("hello", roles=TEXT_BOX)),
    Case("gnome-text-editor", "type world", DONE, text_shows("world", roles=TEXT_BOX, exact=False)),
    Case("gnome-text-editor", "click the Print button", NOT_ON_SCREEN, nothing_happens, "no Print on screen"),
    Case("gnome-text-editor", "open firefox", NOT_ALLOWED, nothing_happens, "not in the allowlist"),
    Case("gnome-text-editor", "click the New tab button", DONE, _more("widget", "AdwTab"), fresh=True),
    # Its Open button opens a popover of recent documents (with a Browse button), not a file chooser.
    Case("gnome-text-editor", "click the Open button", DONE, _more("widget", "EditorOpenPopover"), fresh=True),
    Case("gnome-text-editor", "open the main menu", DONE, item_showing("Save As…"), fresh=True),
    Case("gnome-text-editor", "click the Menu button then click Save As", DONE, window_opens("Save"),
         fresh=True),
    # featherpad (Qt5): an editor with a menu bar and a tool bar
    # Its search bar shows a second, unnamed text field below the document: "the" field is ambiguous.
    Case("featherpad", "type hello into the text field", asks("", 2), nothing_happens,
         "two unnamed text fields show (the document and the search bar)"),
    Case("featherpad", "type world", DONE, text_shows("world", roles=TEXT, exact=False)),
    Case("featherpad", "click the Compile button", NOT_ON_SCREEN, nothing_happens, "no Compile on screen"),
    Case("featherpad", "open gedit", NOT_ALLOWED, nothing_happens, "not in the allowlist"),
    Case("featherpad", "press the New button", DONE, _more("page tab"), fresh=True),
    Case("featherpad", "open the Edit menu", DONE, item_showing("Select All"), fresh=True),
    Case("featherpad", "open the Options menu then click Line Numbers", DONE,
         state_on("Line Numbers", "checked"), fresh=True),
    Case("featherpad", "open the File menu then click Save As", DONE, window_opens("Save"), fresh=True),
    # Chromium: a local page (labelled, placeholder-only and password inputs, a list box, a check box,
    # two buttons called Delete, a menu button); it logs every event to its console
    Case("chromium", "click the Send button", DONE, printed("CLICKED Send")),
    Case("chromium", "type hello into Email", DONE, printed("EMAIL hello"), known_limit=CHROMIUM_KEYS),
    Case("chromium", "type kiwi into Search", DONE, printed("SEARCH kiwi"), known_limit=CHROMIUM_KEYS),
    Case("chromium", "select the third row", DONE, printed("FRUIT Cherry")),
    Case("chromium", "select Banana", DONE, printed("FRUIT Banana")),
    Case("chromium", "check Remember me", DONE, printed("REMEMBER true")),
    Case("chromium", "click the Delete button", asks("Delete", 2), nothing_happens, "two buttons are called Delete"),
    Case("chromium", "click the Launch button", NOT_ON_SCREEN, nothing_happens, "no Launch on the page"),
    Case("chromium", "open firefox", NOT_ALLOWED, nothing_happens, "not in the allowlist"),
    Case("chromium", "type hunter2 into Password", SECURED, nothing_happens, "a password field",
         secret=PAGE_SECRET),
    Case("chromium", "open the File menu then click Save As", DONE, printed("CHOSE Save As")),
)  # fmt: skip
