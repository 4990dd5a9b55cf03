"""The X SYNC extension's IDLETIME counter, with alarms: the X server itself tells when the person's
idle time crosses a mark (a positive transition) and when input comes back (a negative one), so
nothing has to ask it every second.

python-xlib has no SYNC module, so the few requests used are declared here from the protocol
(https://www.x.org/releases/X11R7.7/doc/xextproto/sync.html): Initialize, ListSystemCounters,
QueryCounter, CreateAlarm and the AlarmNotify event; the alarms go when their connection closes.
INT64 values travel as a signed high word and an unsigned low word.
"""

from __future__ import annotations

import logging
import struct
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from Xlib.protocol import rq

__all__ = ["SYNC_EXTENSION", "IdleAlarms", "IdleCrossing", "IdleKnown"]

log = logging.getLogger(__name__)

SYNC_EXTENSION = "SYNC"
_IDLETIME = "IDLETIME"
_ALARM_NOTIFY = 1  # event number after the extension's first event

# CreateAlarm's value mask and values.
_CA_COUNTER = 1 << 0
_CA_VALUE_TYPE = 1 << 1
_CA_VALUE = 1 << 2
_CA_TEST_TYPE = 1 << 3
_CA_DELTA = 1 << 4
_CA_EVENTS = 1 << 5
_ABSOLUTE = 0
_POSITIVE_TRANSITION = 0
_NEGATIVE_TRANSITION = 1


def _int64(high: int, low: int) -> int:
    return (high << 32) | (low & 0xFFFFFFFF)


def _split64(value: int) -> tuple[int, int]:
    return value >> 32, value & 0xFFFFFFFF


class _Initialize(rq.ReplyRequest):  # type: ignore[misc]  # python-xlib is untyped
    _request = rq.Struct(
        rq.Card8("opcode"),
        rq.Opcode(0),
        rq.RequestLength(),
        rq.Card8("major_version"),
        rq.Card8("minor_version"),
        rq.Pad(2),
    )
    _reply = rq.Struct(
        rq.ReplyCode(),
        rq.Pad(1),
        rq.Card16("sequence_number"),
        rq.ReplyLength(),
        rq.Card8("major_version"),
        rq.Card8("minor_version"),
        rq.Pad(22),
    )


class _SystemCounter:
    """One SYSTEMCOUNTER of ListSystemCounters' reply: id, resolution, name, padded to 4 bytes."""

    structcode = None

    @staticmethod
    def parse_binary(data: bytes, display: Any) -> tuple[tuple[int, str], bytes]:
        # python-xlib speaks the machine's byte order to the server ("=" in its struct codes).
        (counter,) = struct.unpack("=I", data[0:4])
        (name_len,) = struct.unpack("=H", data[12:14])
        name = bytes(data[14 : 14 + name_len]).decode("latin-1")
        size = (14 + name_len + 3) & ~3
        return (counter, name), data[size:]


class _ListSystemCounters(rq.ReplyRequest):  # type: ignore[misc]  # python-xlib is untyped
    _request = rq.Struct(rq.Card8("opcode"), rq.Opcode(1), rq.RequestLength())
    _reply = rq.Struct(
        rq.ReplyCode(),
        rq.Pad(1),
        rq.Card16("sequence_number"),
        rq.ReplyLength(),
        rq.LengthOf("counters", 4),
        rq.Pad(20),
        rq.List("counters", _SystemCounter),
    )


class _QueryCounter(rq.ReplyRequest):  # type: ignore[misc]  # python-xlib is untyped
    _request = rq.Struct(rq.Card8("opcode"), rq.Opcode(5), rq.RequestLength(), rq.Card32("counter"))
    _reply = rq.Struct(
        rq.ReplyCode(),
        rq.Pad(1),
        rq.Card16("sequence_number"),
        rq.ReplyLength(),
        rq.Int32("value_hi"),
        rq.Card32("value_lo"),
        rq.Pad(16),
    )


class _CreateAlarm(rq.Request):  # type: ignore[misc]  # python-xlib is untyped
    # Every attribute is given, in mask order: counter, value type, value, test type, delta, events.
    _request = rq.Struct(
        rq.Card8("opcode"),
        rq.Opcode(8),
        rq.RequestLength(),
        rq.Card32("alarm"),
        rq.Card32("value_mask"),
        rq.Card32("counter"),
        rq.Card32("value_type"),
        rq.Int32("value_hi"),
        rq.Card32("value_lo"),
        rq.Card32("test_type"),
        rq.Int32("delta_hi"),
        rq.Card32("delta_lo"),
        rq.Card32("events"),
    )


class _AlarmNotify(rq.Event):  # type: ignore[misc]  # python-xlib is untyped
    _code = None
    _fields = rq.Struct(
        rq.Card8("type"),
        rq.Card8("kind"),
        rq.Card16("sequence_number"),
        rq.Card32("alarm"),
        rq.Int32("counter_hi"),
        rq.Card32("counter_lo"),
        rq.Int32("alarm_hi"),
        rq.Card32("alarm_lo"),
        rq.Card32("time"),
        rq.Card8("state"),
        rq.Pad(3),
    )


@dataclass(frozen=True, slots=True)
class IdleCrossing:
    """An alarm fired: the idle time went up through `mark_ms` (`rising`), or input came back and
    it fell below it; `idle_ms` is the counter's value when the server sent it."""

    mark_ms: int
    rising: bool
    idle_ms: int


class IdleAlarms:
    """Alarms on IDLETIME over one connection, whose owner reads its events and hands each to
    `crossing()`. `IdleAlarms.create` returns None when the server has no SYNC or no IDLETIME."""

    def __init__(self, dpy: Any, opcode: int, event_code: int, counter: int) -> None:
        self._dpy = dpy
        self._opcode = opcode
        self._event_code = event_code
        self._counter = counter
        self._alarms: dict[int, tuple[int, bool]] = {}

    @classmethod
    def create(cls, dpy: Any) -> IdleAlarms | None:
        # has_extension() knows only the extensions python-xlib has modules for.
        info = dpy.query_extension(SYNC_EXTENSION)
        if info is None or not info.present:
            return None
        _Initialize(display=dpy.display, opcode=info.major_opcode, major_version=3, minor_version=1)
        reply = _ListSystemCounters(display=dpy.display, opcode=info.major_opcode)
        counter = next((cid for cid, name in reply.counters if name == _IDLETIME), None)
        if counter is None:
            return None
        event_code = info.first_event + _ALARM_NOTIFY
        dpy.display.add_extension_event(event_code, _AlarmNotify)
        return cls(dpy, info.major_opcode, event_code, counter)

    def idle_ms(self) -> int:
        """The counter now (a round trip; used once at start)."""
        reply = _QueryCounter(display=self._dpy.display, opcode=self._opcode, counter=self._counter)
        return _int64(reply.value_hi, reply.value_lo)

    def arm(self, marks_ms: Iterable[int], *, returns_below_ms: int) -> None:
        """An alarm as the idle time rises through each mark, and one as it falls below
        `returns_below_ms` (input after at least that long without any). Transition alarms with a
        delta of 0 stay armed after they fire: each crossing is told once. The falling mark must be
        below the rising ones: the server watches for a fall only below the counter's last value."""
        for mark in sorted(set(marks_ms)):
            self._create(mark, rising=True)
        self._create(returns_below_ms, rising=False)

    def _create(self, mark_ms: int, *, rising: bool) -> None:
        alarm = self._dpy.display.allocate_resource_id()
        value_hi, value_lo = _split64(mark_ms)
        _CreateAlarm(
            display=self._dpy.display,
            opcode=self._opcode,
            alarm=alarm,
            value_mask=_CA_COUNTER | _CA_VALUE_TYPE | _CA_VALUE | _CA_TEST_TYPE | _CA_DELTA | _CA_EVENTS,
            counter=self._counter,
            value_type=_ABSOLUTE,
            value_hi=value_hi,
            value_lo=value_lo,
            test_type=_POSITIVE_TRANSITION if rising else _NEGATIVE_TRANSITION,
            delta_hi=0,
            delta_lo=0,
            events=1,
        )
        self._alarms[alarm] = (mark_ms, rising)

    def crossing(self, event: Any) -> IdleCrossing | None:
        """The crossing an event tells, or None when it is no alarm of these."""
        if event.type & 0x7F != self._event_code:
            return None
        armed = self._alarms.get(int(event.alarm))
        if armed is None:
            return None
        mark_ms, rising = armed
        return IdleCrossing(mark_ms, rising, max(0, _int64(event.counter_hi, event.counter_lo)))


class IdleKnown:
    """The idle time as two alarms tell it, readable from any thread without a round trip.

    A rising alarm at `quiet_ms` says the person has been still that long, and when their last
    input was (the counter's value at the alarm); a falling one at half of it says input came back.
    Between the two the person is busy: their last input is less than `quiet_ms` old and no older
    than the last one known, so the idle time answered is the smaller of the two bounds (never
    shorter than the truth: a burst of keys never reads as fresher input than it is, and the
    rising alarm gives the exact time as soon as it ends). Two marks, not one per threshold: the X
    server does not always wake itself for a second rising mark before the next input (seen on
    Xvfb 21), and the thresholds are the state machine's to apply to the last input time anyway.
    """

    def __init__(self, quiet_ms: int, clock: Callable[[], float] = time.monotonic) -> None:
        self.quiet_ms = quiet_ms
        self.returns_below_ms = quiet_ms // 2
        self._clock = clock
        # (still, last input on the monotonic clock); one tuple, so a reader never sees half of it.
        self._state: tuple[bool, float] | None = None

    def begin(self, idle_ms: int) -> None:
        """Where the alarms start from: the counter read once when they are armed."""
        self._state = (idle_ms >= self.quiet_ms, self._clock() - idle_ms / 1000)

    def take(self, crossing: IdleCrossing) -> None:
        self._state = (crossing.rising, self._clock() - crossing.idle_ms / 1000)

    def idle_ms(self) -> int | None:
        """Milliseconds since the last input; None before the alarms are armed."""
        state = self._state
        if state is None:
            return None
        still, last_input = state
        idle = max(0, int((self._clock() - last_input) * 1000))
        return idle if still else min(idle, self.quiet_ms)
