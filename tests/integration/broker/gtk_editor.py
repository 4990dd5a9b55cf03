"""A plain GTK3 text editor the broker's person-wins tests type into and read back over AT-SPI. Run it
with the system python (python3-gi and gir1.2-gtk-3.0); the project's venv cannot import gi.

    /usr/bin/python3 gtk_editor.py

Window "Kronii Editor": one TextView named "Editor" (wrapping by character, so a long line of typed
text stays cheap to lay out). It prints, flushed, READY once the window is mapped with the text view
focused, and reads commands from stdin, one per line: `clear` (empties the text, then prints CLEARED)
and `quit`. What was typed is never printed: the tests read it over AT-SPI, as any assistive tool would.
"""

from __future__ import annotations

import os
import sys
from typing import Any

import gi  # type: ignore[import-not-found]  # the system python's, absent from the venv

gi.require_version("Gtk", "3.0")
from gi.repository import GLib, Gtk  # type: ignore[import-not-found]  # noqa: E402

TITLE = "Kronii Editor"


def say(line: str) -> None:
    print(line, flush=True)


class Editor:
    def __init__(self) -> None:
        self.window = Gtk.Window(title=TITLE)
        self.window.set_default_size(640, 400)
        self.window.connect("destroy", Gtk.main_quit)
        self.window.connect("map-event", self._on_mapped)
        scrolled = Gtk.ScrolledWindow()
        self.view = Gtk.TextView()
        self.view.set_wrap_mode(Gtk.WrapMode.CHAR)
        self.view.get_accessible().set_name("Editor")
        scrolled.add(self.view)
        self.window.add(scrolled)
        self._ready = False

    def command(self, line: str) -> bool:
        """Run one stdin command; False once the editor should stop reading."""
        word = line.strip()
        if word == "quit":
            Gtk.main_quit()
            return False
        if word == "clear":
            self.view.get_buffer().set_text("")
            say("CLEARED")
        return True

    def _on_mapped(self, *_: Any) -> bool:
        if not self._ready:
            self._ready = True
            self.view.grab_focus()
            say("READY")
        return False


def main() -> None:
    editor = Editor()
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
            if not editor.command(line.decode()):
                return False
        return True

    GLib.io_add_watch(
        GLib.IOChannel.unix_new(sys.stdin.fileno()),
        GLib.PRIORITY_DEFAULT,
        GLib.IOCondition.IN | GLib.IOCondition.HUP | GLib.IOCondition.ERR,
        on_stdin,
    )
    editor.window.show_all()
    Gtk.main()


if __name__ == "__main__":
    main()
