"""Which desktop session the host agents run in, and what each of them can do there, in one sentence each.

The session is found from what the environment and the sockets say, not from a list of desktops:
`WAYLAND_DISPLAY` (a name in `XDG_RUNTIME_DIR` or a path) that answers is a Wayland session, whatever
`DISPLAY` says (on Wayland, `DISPLAY` is XWayland's: its windows are a few of the person's, and its focus
is not theirs); else a `DISPLAY` is an X11 session. On Wayland, what the agents can do follows from the
protocols the compositor offers (its globals): the family is named from them too (`zwlr_*`: wlroots;
`org_kde_plasma_*`: KDE Plasma; `gtk_shell1` without wlroots' protocols: GNOME's mutter; `weston_*`:
weston), and `XDG_CURRENT_DESKTOP` only adds a name.

`assess` is pure (facts in, capabilities out); `probe` reads the environment and the sockets.
"""

from __future__ import annotations

import asyncio
import os
import shutil
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from dbus_fast import DBusFastError, Message, MessageType
from dbus_fast.aio import MessageBus

from .kwin_screenshot import ALLOW_COMMAND, grant_for
from .wayland_wire import WaylandConnection, WaylandError, socket_path

__all__ = [
    "AGENTS",
    "GNOME_EXTENSION_BUS",
    "GNOME_EXTENSION_MISSING",
    "KWIN_BUS",
    "SCREENCAST_BUS",
    "Capability",
    "SessionFacts",
    "assess",
    "bus_name_owned",
    "capability",
    "pipewire_socket",
    "probe",
    "screencast_problem",
    "session_bus_address",
    "wayland_refusal",
]

AGENTS = ("sensor", "capture", "broker", "vision")

_TOPLEVELS = "zwlr_foreign_toplevel_manager_v1"
_IDLE = ("ext_idle_notifier_v1", "org_kde_kwin_idle")
_SCREENCOPY = "zwlr_screencopy_manager_v1"
_VIRTUAL_KEYBOARD = "zwp_virtual_keyboard_manager_v1"
_VIRTUAL_POINTER = "zwlr_virtual_pointer_manager_v1"
GNOME_EXTENSION_BUS = "org.kronii.Shell1"  # kronii.desktop.gnome_extension's extension owns it
GNOME_EXTENSION_MISSING = (
    "GNOME does not let other programs read the focused window: install the kronii GNOME Shell extension "
    "with `kronii gnome-extension install` (then log out and in)"
)
_MUTTER_IDLE = "org.gnome.Mutter.IdleMonitor"
SCREENCAST_BUS = "org.gnome.Mutter.ScreenCast"  # kronii.desktop.mutter_screencast records through it
KWIN_BUS = "org.kde.KWin"  # KWin's scripting: the sensor loads kronii's KWin script through it
_GST = "gst-launch-1.0"
_AGENT_SEAT = (
    "kronii-agent"  # kronii.desktop.wayland_toplevels.AGENT_SEAT (that module imports this one's wire)
)


@dataclass(frozen=True)
class SessionFacts:
    """What was found: the kind ("x11", "wayland" or "none"), the compositor's family and name, the
    Wayland socket and its globals, the X display (XWayland's, on Wayland), and why a
    socket did not answer."""

    kind: str
    family: str = ""  # wlroots, gnome, kde, weston, other
    name: str = ""  # sway, Hyprland, GNOME, ... (for sentences)
    wayland_socket: Path | None = None
    x_display: str = ""
    offered: frozenset[str] = frozenset()
    problem: str = ""
    gnome_extension: bool = False  # GNOME: kronii's Shell extension owns its bus name (GNOME_EXTENSION_BUS)
    screencast_problem: str = ""  # GNOME: why mutter's screen cast cannot give frames ("": it can)
    kwin_scripting: bool = False  # KDE: KWin's scripting answers on the session bus (KWIN_BUS)
    kwin_screenshot_problem: str = ""  # KDE: why the person's ScreenShot2 grant does not hold ("": it does)


@dataclass(frozen=True)
class Capability:
    """One thing one host agent does: whether it can here, and the sentence that says how or why not."""

    agent: str
    name: str
    ok: bool
    detail: str


@dataclass(frozen=True)
class _Need:
    agent: str
    name: str
    x11: str
    check: Callable[[SessionFacts], str | None]  # None: works; else why not
    how: Callable[[SessionFacts], str] = field(default=lambda facts: "")


def _family(offered: frozenset[str]) -> str:
    # Plasma's own globals first: KWin offers some wlroots protocols too (zwlr_layer_shell_v1,
    # zwlr_data_control_manager_v1, seen on KWin 5.27), and wlroots compositors some of KDE's
    # (org_kde_kwin_idle), but none offers org_kde_plasma_*.
    if any(name.startswith("org_kde_plasma_") for name in offered):
        return "kde"
    if any(name.startswith("zwlr_") for name in offered):
        return "wlroots"
    if "gtk_shell1" in offered:
        return "gnome"
    if any(name.startswith("weston_") for name in offered):
        return "weston"
    return "other"


_FAMILY_NAMES = {
    "wlroots": "a wlroots compositor",
    "kde": "KDE Plasma (KWin)",
    "gnome": "GNOME (mutter)",
    "weston": "weston",
    "other": "an unknown compositor",
}


def _display_name(family: str, env: Mapping[str, str], program: str = "") -> str:
    """A name for sentences. A wlroots compositor or an unknown one is named by the program that
    answers on the socket (cage, labwc, river, Hyprland...: what the kernel says, not a list of
    compositors), else by its own variable (a SWAYSOCK left in the environment of another
    compositor's session does not make it sway); GNOME and KDE by their family."""
    if family in ("wlroots", "other"):
        if family == "wlroots" and env.get("SWAYSOCK") and Path(env["SWAYSOCK"]).exists():
            return "sway"
        if program:
            return program
        if env.get("HYPRLAND_INSTANCE_SIGNATURE"):
            return "Hyprland"
        desktop = env.get("XDG_CURRENT_DESKTOP", "").split(":")[0]
        if desktop and desktop.lower() not in ("gnome", "kde"):
            return desktop
    return _FAMILY_NAMES[family]


def _focus(facts: SessionFacts) -> str | None:
    if _TOPLEVELS in facts.offered:
        return None
    if facts.family == "gnome":
        return None if facts.gnome_extension else GNOME_EXTENSION_MISSING
    if facts.family == "kde":
        if facts.kwin_scripting:
            return None
        return (
            f"KWin does not list its windows to other programs, and its scripting ({KWIN_BUS} on the session "
            "bus), through which kronii's KWin script would tell the sensor, does not answer: the sensor "
            "follows idle and lock only"
        )
    return (
        f"{facts.name} offers no window list ({_TOPLEVELS}): the sensor cannot tell which window is focused"
    )


def _idle(facts: SessionFacts) -> str | None:
    if any(name in facts.offered for name in _IDLE) or facts.family == "gnome":
        return None  # GNOME: mutter's IdleMonitor on the session bus, there in every GNOME session
    return (
        f"{facts.name} offers no idle notification ({' or '.join(_IDLE)}): idle comes from focus changes only"
    )


def _frames(facts: SessionFacts) -> str | None:
    problem = _frames_taken(facts)
    if problem is not None:
        return problem
    # A request is served only once capture has checked that the focused window is the one asked for
    # (kronii.capture.core.bypass): with no focus known, every request would wait for ever.
    unknown_focus = _focus(facts)
    if unknown_focus is not None:
        return f"{unknown_focus}, so capture cannot check that its frames show the window asked for and takes none"
    return None


def _frames_taken(facts: SessionFacts) -> str | None:
    if _SCREENCOPY in facts.offered:
        return None  # taken in process (kronii.desktop.wayland_screencopy): no tool to install
    if facts.family == "gnome":
        problem = facts.screencast_problem
        return (
            f"GNOME gives other programs frames only through its screen cast, and {problem}"
            if problem
            else None
        )
    if facts.family == "kde":
        # Seen on KWin 5.27: ScreenShot2 answers NoAuthorized to a program no desktop file authorises.
        return facts.kwin_screenshot_problem or None
    return f"{facts.name} offers no screen copy ({_SCREENCOPY}): capture cannot take frames"


def _focus_how(facts: SessionFacts) -> str:
    if _TOPLEVELS in facts.offered:
        return f"the focused window from {_TOPLEVELS}"
    if facts.family == "kde":
        return f"the focused window from kronii's KWin script, loaded into KWin's scripting ({KWIN_BUS})"
    return f"the focused window from kronii's GNOME Shell extension ({GNOME_EXTENSION_BUS})"


def _frames_how(facts: SessionFacts) -> str:
    if facts.family == "kde":
        return (
            "the focused window's own pixels through KWin's ScreenShot2, taken by kronii's interpreter copy "
            f"that you authorised (`{ALLOW_COMMAND}`)"
        )
    if facts.family == "gnome":
        return (
            f"the focused window's own pixels through mutter's screen cast ({SCREENCAST_BUS}) and PipeWire; "
            "GNOME shows its screen-sharing indicator during each burst"
        )
    where = (
        "the focused window's rectangle from sway's IPC"
        if facts.name == "sway"
        else f"the whole output: {facts.name} tells no other program where the focused window is"
    )
    return f"frames in process through {_SCREENCOPY}, {where}"


def screencast_problem(env: Mapping[str, str], on_bus: bool) -> str:
    """Why mutter's screen cast cannot give frames in this session ("" when everything it needs is there)."""
    if not on_bus:
        return f"mutter's screen cast ({SCREENCAST_BUS}) is not on the session bus"
    if pipewire_socket(env) is None:
        return "PipeWire is not running in this session (GNOME's screen cast sends its frames through it)"
    if shutil.which(_GST, path=env.get("PATH")) is None:
        return f"{_GST} is missing: install gstreamer1.0-tools and gstreamer1.0-pipewire"
    return ""


def pipewire_socket(env: Mapping[str, str]) -> Path | None:
    """PipeWire's socket in this session, or None when it is not there."""
    runtime = env.get("PIPEWIRE_RUNTIME_DIR") or env.get("XDG_RUNTIME_DIR")
    if not runtime:
        return None
    path = Path(runtime) / (env.get("PIPEWIRE_REMOTE") or "pipewire-0")
    return path if path.exists() else None


def _input(facts: SessionFacts) -> str | None:
    if facts.family == "gnome":
        # Seen on gnome-shell 43: keys sent through RemoteDesktop reset mutter's IdleMonitor like a person's,
        # and no Shell hook reliably sees each key's device (docs/architecture.md, "Why the broker does not
        # type on GNOME").
        return (
            "GNOME takes other programs' input only through its remote desktop (org.gnome.Mutter.RemoteDesktop), "
            "those keys count as yours in its idle monitor, and GNOME tells no program reliably which device "
            "typed each key: the broker could not tell your input from an agent's, so agents do not type on GNOME"
        )
    if facts.family == "kde":
        # KWin lists org_kde_kwin_fake_input only to a client a desktop file authorises (not seen by others).
        return (
            "KWin gives a virtual keyboard and pointer (org_kde_kwin_fake_input) only to a program a desktop "
            "file authorises, on your own seat, and kronii has no way yet to tell your input from an agent's "
            "there: agents do not type on KDE"
        )
    missing = [name for name in (_VIRTUAL_KEYBOARD, _VIRTUAL_POINTER) if name not in facts.offered]
    if missing:
        return f"{facts.name} offers no virtual keyboard or pointer ({', '.join(missing)}): agents cannot type here"
    if facts.name != "sway":
        return (
            f"the broker needs a seat of its own ({_AGENT_SEAT}) to tell your input from an agent's; sway makes "
            f"one on request, {facts.name} only from its own configuration (declare a seat named {_AGENT_SEAT})"
        )
    return None


def _act(facts: SessionFacts) -> str | None:
    if facts.name == "sway" and _SCREENCOPY in facts.offered:
        # windows' places from sway's IPC, frames through wlr-screencopy, input through the broker
        return None
    if facts.family == "gnome":
        return (
            "vision on GNOME is not built yet: GNOME tells no other program where its windows are, and the "
            "broker cannot type there: plans are refused here"
        )
    if _SCREENCOPY not in facts.offered:
        return (
            f"vision needs the screen's frames and {facts.name} offers no screen copy ({_SCREENCOPY}): "
            "plans are refused here"
        )
    return (
        f"vision places AT-SPI's window-relative bounds on the screen through sway's IPC, and {facts.name} "
        "tells no other program where its windows are: plans are refused here"
    )


_NEEDS = (
    _Need("sensor", "focus", "the focused window from EWMH (_NET_ACTIVE_WINDOW)", _focus, lambda f: _focus_how(f)),
    _Need("sensor", "idle", "idle time from MIT-SCREEN-SAVER", _idle,
          lambda f: "idle from " + next((name for name in _IDLE if name in f.offered), _MUTTER_IDLE)),
    _Need("capture", "frames", "frames through XGetImage", _frames, lambda f: _frames_how(f)),
    _Need("broker", "input", "agent input through XTEST on a master device of its own", _input,
          lambda f: f"agent input on a seat of its own ({_AGENT_SEAT}: virtual keyboard and pointer); "
          "your input seen on your seats' idle notifications"),
    _Need("vision", "act", "plans act through the broker; windows read through AT-SPI", _act,
          lambda f: "windows read through AT-SPI, placed on the screen through sway's IPC; frames through "
          f"{_SCREENCOPY}; plans act through the broker"),
)  # fmt: skip


def capability(facts: SessionFacts, agent: str, name: str) -> Capability:
    return next(item for item in assess(facts) if item.agent == agent and item.name == name)


def assess(facts: SessionFacts) -> list[Capability]:
    """Each host agent's capabilities in this session, with a sentence each."""
    out = []
    for need in _NEEDS:
        if facts.kind == "x11":
            out.append(Capability(need.agent, need.name, True, f"X11 {facts.x_display}: {need.x11}"))
        elif facts.kind == "none":
            out.append(Capability(need.agent, need.name, False, facts.problem))
        else:
            problem = need.check(facts)
            detail = problem if problem is not None else need.how(facts)
            out.append(
                Capability(need.agent, need.name, problem is None, f"Wayland ({facts.name}): {detail}")
            )
    return out


def _globals(path: Path) -> tuple[frozenset[str], str]:
    """The globals the compositor on `path` offers, and the name of the program that answers there
    ("" where /proc does not say)."""
    connection = WaylandConnection(path, timeout_s=2.0)
    try:
        offered = frozenset(item.interface for item in connection.globals.values())
        return offered, _program_name(connection.peer_pid())
    finally:
        connection.close()


def _program_name(pid: int | None) -> str:
    if pid is None:
        return ""
    try:
        return (Path("/proc") / str(pid) / "comm").read_text(encoding="utf-8", errors="replace").strip()
    except OSError:
        return ""


def _x_answers(display: str) -> bool:
    """Whether an X server listens for `display` (":N" on its local socket; a host:N is taken on trust)."""
    if not display.startswith(":"):
        return bool(display)
    number = display[1:].split(".")[0]
    return (_X_SOCKETS / f"X{number}").exists()


# Where every local X server listens: a place X fixes, not a temporary file of ours.
_X_SOCKETS = Path("/tmp/.X11-unix")  # noqa: S108


def probe(env: Mapping[str, str] | None = None) -> SessionFacts:
    """The session these variables name (default: this process's environment)."""
    env = os.environ if env is None else env
    x_display = env.get("DISPLAY", "")
    wayland = socket_path(env.get("WAYLAND_DISPLAY"), env.get("XDG_RUNTIME_DIR"))
    problem = ""
    if wayland is not None:
        try:
            offered, program = _globals(wayland)
        except WaylandError as error:
            problem = f"WAYLAND_DISPLAY names {wayland}, which does not answer ({error})"
        else:
            family = _family(offered)
            name = _display_name(family, env, program)
            bus = session_bus_address(env)
            if family == "kde":
                scripting = bus_name_owned(KWIN_BUS, bus)
                return SessionFacts(
                    "wayland", family, name, wayland, x_display, offered, kwin_scripting=scripting,
                    kwin_screenshot_problem=grant_for(env).problem(),
                )  # fmt: skip
            if family != "gnome":
                return SessionFacts("wayland", family, name, wayland, x_display, offered)
            return SessionFacts(
                "wayland", family, name, wayland, x_display, offered,
                gnome_extension=bus_name_owned(GNOME_EXTENSION_BUS, bus),
                screencast_problem=screencast_problem(env, bus_name_owned(SCREENCAST_BUS, bus)),
            )  # fmt: skip
    if x_display and _x_answers(x_display):
        return SessionFacts("x11", "x11", "X11", None, x_display, problem=problem)
    if not problem:
        problem = "no desktop session: neither WAYLAND_DISPLAY nor DISPLAY is set"
        if x_display:
            problem = f"no desktop session: DISPLAY={x_display} has no X server listening"
    return SessionFacts("none", x_display=x_display, problem=problem)


def session_bus_address(env: Mapping[str, str]) -> str | None:
    """The session bus these variables name: DBUS_SESSION_BUS_ADDRESS, else systemd's $XDG_RUNTIME_DIR/bus."""
    if env.get("DBUS_SESSION_BUS_ADDRESS"):
        return env["DBUS_SESSION_BUS_ADDRESS"]
    runtime = env.get("XDG_RUNTIME_DIR")
    if runtime and (Path(runtime) / "bus").exists():
        return f"unix:path={runtime}/bus"
    return None


def bus_name_owned(name: str, address: str | None, timeout_s: float = 2.0) -> bool:
    """Whether `name` has an owner on the bus at `address` (one NameHasOwner call); False when the bus
    does not answer. Blocks: its own event loop on a thread of its own, so a caller inside a running
    loop may call it too."""
    if not address:
        return False
    with ThreadPoolExecutor(max_workers=1) as pool:
        try:
            return pool.submit(asyncio.run, _name_has_owner(name, address, timeout_s)).result()
        except (OSError, EOFError, TimeoutError, DBusFastError, ValueError):
            return False


async def _name_has_owner(name: str, address: str, timeout_s: float) -> bool:
    bus = MessageBus(bus_address=address)
    try:
        await asyncio.wait_for(bus.connect(), timeout_s)
        call = Message(
            destination="org.freedesktop.DBus",
            path="/org/freedesktop/DBus",
            interface="org.freedesktop.DBus",
            member="NameHasOwner",
            signature="s",
            body=[name],
        )
        reply = await asyncio.wait_for(bus.call(call), timeout_s)
        return reply.message_type == MessageType.METHOD_RETURN and bool(reply.body[0])
    finally:
        bus.disconnect()


def wayland_refusal(
    agent: str, display: str | None = None, env: Mapping[str, str] | None = None
) -> str | None:
    """In a Wayland session, why `agent` cannot do its work there (its capabilities' sentences); None in
    an X11 session or when it can. An X11-only agent asks this before it opens DISPLAY (`display`, its own
    setting, overrides the environment's): on Wayland that is XWayland's, which shows and takes input for a
    few of the person's windows and sees none of their input."""
    variables = dict(os.environ if env is None else env)
    if display:
        variables["DISPLAY"] = display
    facts = probe(variables)
    if facts.kind != "wayland":
        return None
    missing = [item.detail for item in assess(facts) if item.agent == agent and not item.ok]
    return "; ".join(missing) or None
