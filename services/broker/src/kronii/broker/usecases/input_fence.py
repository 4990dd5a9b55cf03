"""The one thing any thread may do to agents' input at once: close the current epoch to it.

The control session's table decides on the event loop, and under a flood of agents' actions the loop
can be a turn or more behind the X server. The person's input (seen by the X watcher's thread), a STOP
(the stop socket's thread, the STOP keys) and unbrokered automation close the fence first, from the
thread that saw them, and then hand the event to the loop for the table to decide and record. The
injector asks the fence before every X event (InputLane's still_valid), so nothing more of an agent's
action is written once the person is seen, whatever the loop is doing.

Closing is monotonic and per epoch: every epoch up to the current one is closed; a new lease (a grant,
an acquire) has a new epoch and starts open.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

__all__ = ["InputFence"]


class InputFence:
    def __init__(self, current_epoch: Callable[[], int]) -> None:
        self._current_epoch = current_epoch
        self._lock = threading.Lock()
        self._closed_through = -1
        self._cause = ""

    def close(self, cause: str) -> bool:
        """Close every epoch up to the current one to agents' input, from any thread. True when this
        call closed it (it was open): the caller's event is news for the table."""
        epoch = self._current_epoch()
        with self._lock:
            if epoch <= self._closed_through:
                return False
            self._closed_through, self._cause = epoch, cause
            return True

    def open_for(self, epoch: int) -> bool:
        """Whether input sent under ``epoch`` may still be written (read lock-free: one int)."""
        return epoch > self._closed_through

    @property
    def closed_through(self) -> int:
        """The last epoch closed to agents' input (-1 while none was): what a STOP answers."""
        return self._closed_through

    @property
    def cause(self) -> str:
        """What closed it last ("user_input", "stop_now", "unbrokered_input"; "" if never)."""
        return self._cause
