"""The one clock of every service: two time scales, in epoch seconds or milliseconds.

A step of the wall clock (NTP, a person setting the time) must move no duration: a cooldown of
60 s set while the clock is 2 h ahead lasts 60 s after it is stepped back, and a +2 h step does not
end it early. So every duration, deadline, lease and queue time is kept on `monotonic()`: the
monotonic clock anchored to the wall clock once, when the clock is made (process start), so its
values are epoch seconds and the ones kept in Redis stay comparable across a restart. `wall()` is
the wall clock, only for what is written down or shown to people (records, audit rows, token
expiry). `on_the_wall` says a time of the first scale on the second.

`Clock` is the port a use case takes; `SystemClock` is the real one, `ManualClock` a clock a test
moves by hand (and steps: its wall clock can jump without moving the monotonic one)."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Protocol

__all__ = ["Clock", "ManualClock", "SystemClock", "on_the_wall", "on_the_wall_ms"]


class Clock(Protocol):
    def wall(self) -> float:
        """Epoch seconds of the wall clock: only for records and for people."""
        ...

    def monotonic(self) -> float:
        """Epoch seconds of the anchored monotonic clock: every duration and deadline."""
        ...

    def wall_ms(self) -> int: ...

    def monotonic_ms(self) -> int: ...


class SystemClock:
    """The system's clocks. The time sources (nanoseconds) are injectable so that a test can step
    the wall clock under a real SystemClock."""

    def __init__(
        self,
        wall_ns: Callable[[], int] = time.time_ns,
        monotonic_ns: Callable[[], int] = time.monotonic_ns,
    ) -> None:
        self._wall_ns = wall_ns
        self._monotonic_ns = monotonic_ns
        self._anchor_ns = wall_ns() - monotonic_ns()

    def wall(self) -> float:
        return self._wall_ns() / 1e9

    def monotonic(self) -> float:
        return (self._anchor_ns + self._monotonic_ns()) / 1e9

    def wall_ms(self) -> int:
        return self._wall_ns() // 1_000_000

    def monotonic_ms(self) -> int:
        return (self._anchor_ns + self._monotonic_ns()) // 1_000_000


class ManualClock:
    """A clock that moves only when told: `advance` is time passing (both scales), `step_wall` is a
    person or NTP setting the wall clock (the monotonic scale does not move)."""

    def __init__(self, start: float = 1_700_000_000.0) -> None:
        self._monotonic = start
        self._wall = start

    def advance(self, seconds: float) -> None:
        self._monotonic += seconds
        self._wall += seconds

    def step_wall(self, seconds: float) -> None:
        self._wall += seconds

    def wall(self) -> float:
        return self._wall

    def monotonic(self) -> float:
        return self._monotonic

    def wall_ms(self) -> int:
        return int(self._wall * 1000)

    def monotonic_ms(self) -> int:
        return int(self._monotonic * 1000)


def on_the_wall(clock: Clock, at: float) -> float:
    """`at`, seconds on the clock's monotonic scale, said on its wall clock (for people)."""
    return clock.wall() + (at - clock.monotonic())


def on_the_wall_ms(clock: Clock, at_ms: int) -> int:
    """`at_ms`, milliseconds on the clock's monotonic scale, said on its wall clock."""
    return clock.wall_ms() + (at_ms - clock.monotonic_ms())
