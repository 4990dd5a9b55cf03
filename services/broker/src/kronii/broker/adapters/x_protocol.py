"""XInput2 requests and events that python-xlib 0.33 lacks, in its own `rq` style.

python-xlib's Xlib.ext.xinput has XIQueryDevice and XISelectEvents, but not the hierarchy and focus
requests the broker's own master device needs (XIChangeHierarchy 43, XISetClientPointer 44,
XISetFocus 49, XIGetFocus 50), and it parses no XI2 raw event (RawKeyPress 13 .. RawMotion 17). Its
XIQueryVersion helper also always announces 2.0, while raw events carry their `sourceid` (the slave
that produced them) and reach master-device selections only for clients that announced 2.1 or later.

Layouts follow XI2proto (xXIChangeHierarchyReq, xXIAddMasterInfo, xXIRemoveMasterInfo,
xXISetClientPointerReq, xXISetFocusReq, xXIGetFocusReq/Reply, xXIRawEvent). XIChangeHierarchy takes a
list of changes of mixed shapes; the broker only ever sends one at a time, so each change is its own
request class with `num_changes` fixed at 1.
"""

from __future__ import annotations

from typing import Any

from Xlib.ext import xinput
from Xlib.protocol import rq

__all__ = [
    "CORE_XTEST_DEVICES",
    "RAW_EVENT_TYPES",
    "RawEventData",
    "add_master",
    "get_focus",
    "query_version",
    "register_raw_events",
    "remove_master",
    "set_client_pointer",
    "set_focus",
]

# The slaves every plain XTEST client's events come from (xdotool, pyautogui, a script's python-xlib):
# shared by all of them, unlike the XTEST slaves of another master (the broker's, a VNC viewer's).
CORE_XTEST_DEVICES = frozenset({"Virtual core XTEST keyboard", "Virtual core XTEST pointer"})

XI_CHANGE_HIERARCHY = 43
XI_SET_CLIENT_POINTER = 44
XI_QUERY_VERSION = 47
XI_SET_FOCUS = 49
XI_GET_FOCUS = 50

RAW_EVENT_TYPES = (
    xinput.RawKeyPress,
    xinput.RawKeyRelease,
    xinput.RawButtonPress,
    xinput.RawButtonRelease,
    xinput.RawMotion,
)

# The fixed head of xXIRawEvent after the generic-event header (python-xlib's GenericEvent hands over
# everything from `deviceid` on). The valuator mask and axis values that follow are not needed here.
RawEventData = rq.Struct(
    xinput.DEVICEID("deviceid"),
    rq.Card32("time"),
    rq.Card32("detail"),
    xinput.DEVICEID("sourceid"),
    rq.Card16("valuators_len"),
    rq.Card32("flags"),
    rq.Pad(4),
)


class XIQueryVersion(rq.ReplyRequest):  # type: ignore[misc]  # Xlib is untyped
    _request = rq.Struct(
        rq.Card8("opcode"),
        rq.Opcode(XI_QUERY_VERSION),
        rq.RequestLength(),
        rq.Card16("major_version"),
        rq.Card16("minor_version"),
    )
    _reply = rq.Struct(
        rq.ReplyCode(),
        rq.Pad(1),
        rq.Card16("sequence_number"),
        rq.ReplyLength(),
        rq.Card16("major_version"),
        rq.Card16("minor_version"),
        rq.Pad(20),
    )


class XIAddMaster(rq.Request):  # type: ignore[misc]  # Xlib is untyped
    _request = rq.Struct(
        rq.Card8("opcode"),
        rq.Opcode(XI_CHANGE_HIERARCHY),
        rq.RequestLength(),
        rq.Card8("num_changes"),
        rq.Pad(3),
        rq.Card16("type"),
        rq.Card16("length"),
        rq.LengthOf("name", 2),
        rq.Bool("send_core"),
        rq.Bool("enable"),
        rq.String8("name"),
    )


class XIRemoveMaster(rq.Request):  # type: ignore[misc]  # Xlib is untyped
    _request = rq.Struct(
        rq.Card8("opcode"),
        rq.Opcode(XI_CHANGE_HIERARCHY),
        rq.RequestLength(),
        rq.Card8("num_changes"),
        rq.Pad(3),
        rq.Card16("type"),
        rq.Card16("length"),
        xinput.DEVICEID("deviceid"),
        rq.Card8("return_mode"),
        rq.Pad(1),
        xinput.DEVICEID("return_pointer"),
        xinput.DEVICEID("return_keyboard"),
    )


class XISetClientPointer(rq.Request):  # type: ignore[misc]  # Xlib is untyped
    _request = rq.Struct(
        rq.Card8("opcode"),
        rq.Opcode(XI_SET_CLIENT_POINTER),
        rq.RequestLength(),
        rq.Window("window"),
        xinput.DEVICEID("deviceid"),
        rq.Pad(2),
    )


class XISetFocus(rq.Request):  # type: ignore[misc]  # Xlib is untyped
    _request = rq.Struct(
        rq.Card8("opcode"),
        rq.Opcode(XI_SET_FOCUS),
        rq.RequestLength(),
        rq.Window("focus"),
        rq.Card32("time"),
        xinput.DEVICEID("deviceid"),
        rq.Pad(2),
    )


class XIGetFocus(rq.ReplyRequest):  # type: ignore[misc]  # Xlib is untyped
    _request = rq.Struct(
        rq.Card8("opcode"),
        rq.Opcode(XI_GET_FOCUS),
        rq.RequestLength(),
        xinput.DEVICEID("deviceid"),
        rq.Pad(2),
    )
    _reply = rq.Struct(
        rq.ReplyCode(),
        rq.Pad(1),
        rq.Card16("sequence_number"),
        rq.ReplyLength(),
        rq.Card32("focus"),
        rq.Pad(20),
    )


def _opcode(display: Any) -> int:
    return int(display.display.get_extension_major(xinput.extname))


def query_version(display: Any, major: int = 2, minor: int = 2) -> tuple[int, int]:
    """Announce the XI2 version this client speaks; returns the version the server agreed to."""
    reply = XIQueryVersion(
        display=display.display, opcode=_opcode(display), major_version=major, minor_version=minor
    )
    return int(reply.major_version), int(reply.minor_version)


def add_master(
    display: Any, name: str, send_core: bool = True, enable: bool = True, onerror: Any = None
) -> None:
    """XIChangeHierarchy(AddMaster): the server creates "<name> pointer"/"<name> keyboard" and their
    XTEST slaves "<name> XTEST pointer"/"<name> XTEST keyboard"."""
    encoded = name.encode()
    padded = len(encoded) + (-len(encoded)) % 4
    XIAddMaster(
        display=display.display,
        onerror=onerror,
        opcode=_opcode(display),
        num_changes=1,
        type=xinput.AddMaster,
        length=2 + padded // 4,
        send_core=send_core,
        enable=enable,
        name=encoded,
    )


def remove_master(display: Any, deviceid: int, return_pointer: int, return_keyboard: int) -> None:
    """XIChangeHierarchy(RemoveMaster): removes the master pair; its physical slaves go back to the
    given masters (the XTEST slaves die with it)."""
    XIRemoveMaster(
        display=display.display,
        opcode=_opcode(display),
        num_changes=1,
        type=xinput.RemoveMaster,
        length=3,
        deviceid=deviceid,
        return_mode=xinput.AttachToMaster,
        return_pointer=return_pointer,
        return_keyboard=return_keyboard,
    )


def set_client_pointer(display: Any, deviceid: int, window: int = 0) -> None:
    """XISetClientPointer; window 0 means this very connection, so its core and XTEST requests
    act through `deviceid`'s master pair."""
    XISetClientPointer(display=display.display, opcode=_opcode(display), window=window, deviceid=deviceid)


def set_focus(display: Any, deviceid: int, window: int, time: int = 0) -> None:
    """XISetFocus of one master keyboard, leaving every other master's focus alone."""
    XISetFocus(display=display.display, opcode=_opcode(display), focus=window, time=time, deviceid=deviceid)


def get_focus(display: Any, deviceid: int) -> int:
    """The focus window of one master keyboard (0 None, 1 PointerRoot)."""
    reply = XIGetFocus(display=display.display, opcode=_opcode(display), deviceid=deviceid)
    return int(reply.focus)


def register_raw_events(display: Any) -> None:
    """Teach this connection to parse XI2 raw events (their `data` gets deviceid/sourceid/detail)."""
    opcode = _opcode(display)
    for event_type in RAW_EVENT_TYPES:
        display.ge_add_event_data(opcode, event_type, RawEventData)
