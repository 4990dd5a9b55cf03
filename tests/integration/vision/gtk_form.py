"""A small GTK3 form the vision engine's AT-SPI tests read and drive. Run it with the system python
(python3-gi and gir1.2-gtk-3.0); the project's venv cannot import gi.

    /usr/bin/python3 gtk_form.py --secret VALUE

Window "Kronii Test Form": an entry named "Name", a password entry named "Password" holding VALUE,
buttons "OK", "OK" and "Cancel" (with --hot-zone also an area named "Hot Zone" with no action), and a
status label showing the last click. It prints, flushed, one line per event:
    READY                  once the window is mapped
    CLICKED <label> <n>    a button was activated; n is the button's number (1, 2, 3 ... in creation order)
    NAME <text>            the Name entry's text changed
and reads commands from stdin, one per line: `relabel OLD NEW` (the first button labelled OLD),
`add LABEL` (a new button) and `quit`.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any

import gi  # type: ignore[import-not-found]  # the system python's, absent from the venv

gi.require_version("Gtk", "3.0")
from gi.repository import GLib, Gtk  # type: ignore[import-not-found]  # noqa: E402

TITLE = "Kronii Test Form"


def say(line: str) -> None:
    print(line, flush=True)


class Form:
    def __init__(self, secret: str) -> None:
        self.window = Gtk.Window(title=TITLE)
        self.window.set_default_size(420, 220)
        self.window.connect("destroy", Gtk.main_quit)
        self.window.connect("map-event", self._on_mapped)
        self.box = Gtk.Box(orientation=Gtk.Orientation.VERTICAL, spacing=6)
        self.window.add(self.box)
        self.name_entry = Gtk.Entry()
        self.name_entry.get_accessible().set_name("Name")
        self.name_entry.connect("changed", lambda entry: say(f"NAME {entry.get_text()}"))
        self.box.pack_start(self.name_entry, False, False, 0)
        password = Gtk.Entry()
        password.set_visibility(False)
        password.set_text(secret)
        password.get_accessible().set_name("Password")
        self.box.pack_start(password, False, False, 0)
        # What a person sees a click do (a real form answers on screen, not only on its stdout): the
        # engine's look for each action's effect reads it in the tree.
        self.status = Gtk.Label(label="Nothing clicked yet")
        self.box.pack_end(self.status, False, False, 0)
        self.buttons: list[Gtk.Button] = []
        for label in ("OK", "OK", "Cancel"):
            self.add_button(label)
        self._ready = False

    def add_button(self, label: str) -> None:
        button = Gtk.Button(label=label)
        number = len(self.buttons) + 1
        button.connect("clicked", lambda b: self.clicked(f"{b.get_label()} {number}"))
        self.buttons.append(button)
        # Container.add, not pack_start: only the container's "add" signal makes GTK's accessible
        # announce the new child (object:children-changed:add).
        self.box.add(button)
        button.show()

    def add_hot_zone(self) -> None:
        """An area that takes clicks but offers no accessibility action (an EventBox): a plan can only
        click it by its bounds, so where the click lands tests the pixel conversion."""
        zone = Gtk.EventBox()
        zone.set_size_request(-1, 60)
        zone.add(Gtk.Label(label="zone"))
        zone.get_accessible().set_name("Hot Zone")
        zone.connect("button-press-event", self._hot_zone_pressed)
        self.box.add(zone)

    def clicked(self, what: str) -> None:
        say(f"CLICKED {what}")
        self.status.set_text(f"Clicked {what}")

    def _hot_zone_pressed(self, *_: Any) -> bool:
        self.clicked("Hot Zone")
        return True

    def command(self, line: str) -> bool:
        """Run one stdin command; False once the form should stop reading."""
        words = line.split()
        if not words:
            return True
        if words[0] == "quit":
            Gtk.main_quit()
            return False
        if words[0] == "relabel" and len(words) == 3:
            for button in self.buttons:
                if button.get_label() == words[1]:
                    button.set_label(words[2])
                    break
        elif words[0] == "add" and len(words) == 2:
            self.add_button(words[1])
        return True

    def _on_mapped(self, *_: Any) -> bool:
        if not self._ready:
            self._ready = True
            say("READY")
        return False


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--secret", default="")
    parser.add_argument("--hot-zone", action="store_true")
    args = parser.parse_args()
    form = Form(args.secret)
    if args.hot_zone:
        form.add_hot_zone()

    pending = bytearray()

    def on_stdin(channel: GLib.IOChannel, condition: GLib.IOCondition) -> bool:
        # Raw reads, not sys.stdin.readline(): a line left in Python's buffer would wake no watch.
        chunk = os.read(sys.stdin.fileno(), 4096) if condition & GLib.IOCondition.IN else b""
        if not chunk:
            Gtk.main_quit()
            return False
        pending.extend(chunk)
        while b"\n" in pending:
            line, _, rest = bytes(pending).partition(b"\n")
            pending[:] = rest
            if not form.command(line.decode()):
                return False
        return True

    GLib.io_add_watch(
        GLib.IOChannel.unix_new(sys.stdin.fileno()),
        GLib.PRIORITY_DEFAULT,
        GLib.IOCondition.IN | GLib.IOCondition.HUP | GLib.IOCondition.ERR,
        on_stdin,
    )
    form.window.show_all()
    Gtk.main()


if __name__ == "__main__":
    main()
