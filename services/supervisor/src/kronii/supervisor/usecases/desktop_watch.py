"""The input broker's word on who holds this host's desktop (`kronii.broker.control`): every pane
of this supervisor is on that desktop, so a hold in force defers every trigger (core/policy.py).
`session` narrows it to one broker session; empty, a hold on any session counts."""

from __future__ import annotations

import logging

from kronii.desktop.hold import DesktopHold, DesktopHolds

__all__ = ["DesktopWatch"]

log = logging.getLogger(__name__)


class DesktopWatch:
    def __init__(self, session: str = "") -> None:
        self._session = session
        self._holds = DesktopHolds()

    def heard(self, hold: DesktopHold) -> None:
        """What the broker said of one of its sessions (api/bus.py reads it off the bus)."""
        before = self._holds.by_session.get(hold.session_id)
        self._holds = self._holds.updated(hold)
        kept = self._holds.by_session.get(hold.session_id)
        if kept is hold and (before is None or before.until != hold.until):
            if hold.until is None and before is None:
                return  # a session first heard of, that nobody holds: nothing to say
            if hold.until is None:
                log.info("broker session %r: the user no longer holds the desktop", hold.session_id)
            else:
                log.info("broker session %r: %s until %.3f", hold.session_id, hold.describe(), hold.until)

    def hold(self, now: float) -> DesktopHold | None:
        """The hold that keeps triggers out of the panes at `now`, if any."""
        return self._holds.holding(now, self._session)
