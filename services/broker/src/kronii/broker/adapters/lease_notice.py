"""The desktop notification while an agent holds a lease: who holds it, until when, and the
person's three choices as buttons (Wait, Interrupt, Stop). A click comes back as the person's
choice; the bubble is replaced on a new grant and taken down when the lease ends."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime

from kronii.broker.core.model import ControlState
from kronii.desktop.notify import URGENCY_CRITICAL, DesktopNotifier

__all__ = ["LeaseNotice"]

CHOICES = (("wait", "Wait"), ("interrupt", "Interrupt"), ("stop", "Stop"))


class LeaseNotice:
    def __init__(self, on_choice: Callable[[str], None], *, bus_address: str | None = None) -> None:
        self._on_choice = on_choice
        self._notifier = DesktopNotifier(bus_address=bus_address, on_action=self._clicked)
        self._shown = 0
        self._notices = 0

    @property
    def available(self) -> bool:
        return self._notifier.available

    async def start(self) -> bool:
        return await self._notifier.start()

    async def stop(self) -> None:
        await self.close()
        await self._notifier.stop()

    async def show_lease(self, state: ControlState) -> None:
        until = ""
        if state.lease_expiry_ms is not None:
            until = " until " + datetime.fromtimestamp(state.lease_expiry_ms / 1000).strftime("%H:%M:%S")
        body = (
            f"{state.holder} may use the keyboard and mouse{until}. Any key or mouse move of yours takes "
            "control back at once. Wait lets it go on, Interrupt pauses it at its next step, Stop ends it now."
        )
        shown = await self._notifier.show(
            f"lease:{state.session_id}:{state.epoch}",
            "An agent has the desktop",
            body,
            CHOICES,
            category="x-kronii.lease",
            urgency=URGENCY_CRITICAL,
            replaces=self._shown,
        )
        self._shown = shown or 0

    async def show_notice(self, title: str, sentence: str) -> None:
        """A notice of its own (the lease's bubble is closed apart from it): no buttons."""
        self._notices += 1
        await self._notifier.show(
            f"notice:{self._notices}",
            title,
            sentence,
            (),
            category="x-kronii.notice",
            urgency=URGENCY_CRITICAL,
        )

    async def close(self) -> None:
        if self._shown:
            shown, self._shown = self._shown, 0
            await self._notifier.close(shown)

    async def _clicked(self, _notification_id: str, key: str) -> None:
        self._on_choice(key)
