"""Reading the focused window's EWMH/ICCCM properties over one X connection (the X11 adapter's
query connection and its watcher's each have one)."""

from __future__ import annotations

from typing import Any

from kronii.sensor.adapters.processes import ProcessReader
from kronii.sensor.core.model import Focus
from kronii.sensor.core.prompts import WindowFacts, prompt_kind
from Xlib import X, Xatom

__all__ = ["FocusReader"]


def _decode_text(raw: bytes, utf8: bool) -> str:
    if utf8:
        return raw.decode("utf-8", errors="replace")
    # ICCCM says STRING is Latin-1, yet many clients (xdotool among them) store UTF-8 there. Valid
    # UTF-8 that is not ASCII is very unlikely to be intended Latin-1, so try UTF-8 first.
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        return raw.decode("latin-1")


def _as_bytes(value: Any) -> bytes:
    if isinstance(value, bytes):
        return value
    if isinstance(value, str):
        return value.encode("latin-1", errors="replace")
    return bytes(value)


class FocusReader:
    """Reads EWMH/ICCCM properties over one connection. Raises Xlib errors; callers decide."""

    def __init__(self, dpy: Any, processes: ProcessReader) -> None:
        self._dpy = dpy
        self._processes = processes
        self.root = dpy.screen().root
        self.net_active_window = dpy.intern_atom("_NET_ACTIVE_WINDOW")
        self.net_wm_name = dpy.intern_atom("_NET_WM_NAME")
        self._net_wm_pid = dpy.intern_atom("_NET_WM_PID")
        self._net_wm_window_type = dpy.intern_atom("_NET_WM_WINDOW_TYPE")
        self._atom_names: dict[int, str] = {}
        self._utf8_string = dpy.intern_atom("UTF8_STRING")
        self.wm_name = Xatom.WM_NAME

    def active_window_id(self) -> int:
        prop = self.root.get_full_property(self.net_active_window, X.AnyPropertyType)
        if prop is None or len(prop.value) == 0:
            return 0
        return int(prop.value[0])

    def read(self, window_id: int) -> Focus:
        if window_id == 0:
            return Focus()
        window = self._dpy.create_resource_object("window", window_id)
        pid = 0
        pid_prop = window.get_full_property(self._net_wm_pid, X.AnyPropertyType)
        if pid_prop is not None and len(pid_prop.value) > 0:
            pid = int(pid_prop.value[0])
        instance, klass = window.get_wm_class() or ("", "")
        facts = WindowFacts(instance, klass, self._processes.program(pid), self._window_types(window))
        return Focus(
            app_name=klass,
            wm_class=f"{instance}.{klass}" if instance or klass else "",
            window_id=window_id,
            title=self._title(window),
            pid=pid,
            app_start_time_ms=self._processes.start_time_ms(pid),
            prompt=prompt_kind(facts),
        )

    def _window_types(self, window: Any) -> tuple[str, ...]:
        prop = window.get_full_property(self._net_wm_window_type, Xatom.ATOM)
        if prop is None:
            return ()
        names = []
        for atom in prop.value:
            if int(atom) not in self._atom_names:
                self._atom_names[int(atom)] = self._dpy.get_atom_name(int(atom))
            names.append(self._atom_names[int(atom)])
        return tuple(names)

    def _title(self, window: Any) -> str:
        net = window.get_full_property(self.net_wm_name, X.AnyPropertyType)
        if net is not None:
            # EWMH defines _NET_WM_NAME as UTF-8 whatever type the client tagged it with.
            return _decode_text(_as_bytes(net.value), utf8=True)
        legacy = window.get_full_property(self.wm_name, X.AnyPropertyType)
        if legacy is None:
            return ""
        return _decode_text(_as_bytes(legacy.value), utf8=legacy.property_type == self._utf8_string)
