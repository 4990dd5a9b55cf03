"""Two clocks in epoch seconds: one nobody can set, for durations, and the wall clock, for records.

A step of the wall clock (NTP, a person setting the time) must move no duration: a cooldown of
60 s set while the clock is 2 h ahead lasts 60 s after it is stepped back, and a +2 h step does not
end it early. `AnchoredClock()` is the monotonic clock anchored to the wall clock once, when it is
made (process start), so the times it gives are epoch seconds and the ones kept in Redis stay
comparable across a restart; `wall()` is the wall clock, for what is shown or written down.
`on_the_wall` says a time of the first clock on the second one."""

from __future__ import annotations

import time
from collections.abc import Callable

__all__ = ["AnchoredClock", "on_the_wall"]


class AnchoredClock:
    """Called: the monotonic clock anchored to the wall clock when this object is made, in epoch
    seconds, for every duration and deadline. `wall()`: the wall clock, for records. The time
    sources (nanoseconds) are injectable so that a test can step the wall clock."""

    def __init__(
        self,
        wall_ns: Callable[[], int] = time.time_ns,
        monotonic_ns: Callable[[], int] = time.monotonic_ns,
    ) -> None:
        self._wall_ns = wall_ns
        self._monotonic_ns = monotonic_ns
        self._anchor_ns = wall_ns() - monotonic_ns()

    def __call__(self) -> float:
        return (self._anchor_ns + self._monotonic_ns()) / 1e9

    def wall(self) -> float:
        return self._wall_ns() / 1e9


def on_the_wall(clock: AnchoredClock, at: float) -> float:
    """`at`, a time on the clock's duration scale, said on its wall clock (for people)."""
    return clock.wall() + (at - clock())
