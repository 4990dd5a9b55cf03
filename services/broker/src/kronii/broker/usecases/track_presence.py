"""Who is at the desktop, as the X server and the viewer hooks report it: the person's own input
(which revokes a lease at once, P1), automation that went around the broker (which revokes it too,
is audited and shown to the person, and is never taken for the person), the STOP keys and the lease
notification's buttons (the person's choices without a terminal), and whether the session is
interactive (a viewer attached, a person's devices present, or the flag; "unknown" while the broker
cannot see its viewers) turned into INTERACTIVE / NOT_INTERACTIVE events.

Called on the event loop (the X watcher thread hands over with call_soon_threadsafe); it is the
DesktopWitness the desktop's adapters report to."""

from __future__ import annotations

import logging

from kronii.broker.core.facts import UnbrokeredInput, UserInputSeen
from kronii.broker.core.interactive import UNKNOWN, interactive_reason
from kronii.broker.core.machine import Happening
from kronii.broker.core.table import Event
from kronii.broker.metrics import BrokerMetrics
from kronii.broker.usecases.control_session import ControlSession
from kronii.foundation.clock import Clock, SystemClock

__all__ = ["Attachment"]

log = logging.getLogger(__name__)

# A click on the lease notification is itself the person's input, so it has already taken the
# lease back when the choice arrives: Wait and Interrupt give the same agent the rest of its lease
# again (Interrupt with a pause asked for at its next safe point); Stop stops.
_REGRANT = {"wait": (), "interrupt": (Event.SAFE_INTERRUPT,)}
_DID = {"key": "typed on", "button": "clicked on", "motion": "moved the pointer on", "input": "used"}


class Attachment:
    def __init__(
        self,
        desk: ControlSession,
        metrics: BrokerMetrics,
        *,
        flag: bool,
        devices_make_interactive: bool,
        clock: Clock | None = None,
    ) -> None:
        self._desk = desk
        self._metrics = metrics
        self._flag = flag
        self._devices_count = devices_make_interactive
        self._clock = clock or SystemClock()
        self._viewers = 0
        self._viewer_problem = ""
        self._devices = 0
        self.last_revocation_s: float | None = None
        # The lease the person's input last took back: (holder, window, expiry in ms).
        self._taken_back: tuple[str, int, int] | None = None

    def close_fence(self, cause: str) -> bool:
        return self._desk.fence.close(cause)

    def fence_still_closed(self) -> bool:
        """From any thread: no lease has begun since the fence last closed."""
        return not self._desk.fence.open_for(self._desk.state.epoch)

    def user_input(self, seen: UserInputSeen) -> None:
        before = self._desk.state
        decision = self._desk.handle(Happening(Event.USER_INPUT), actor="person")
        if decision.changed:
            if before.lease_expiry_ms is not None:
                self._taken_back = (before.holder, before.window, before.lease_expiry_ms)
            latency = max(0.0, self._clock.monotonic() - seen.at)
            self.last_revocation_s = latency
            self._metrics.revocation.observe(latency)
            log.info(
                "broker: the person's %s took control back from the agent (%.1f ms)",
                seen.kind,
                latency * 1000,
            )

    def unbrokered_input(self, found: UnbrokeredInput) -> None:
        """Input from the core XTEST device (xdotool and the like, not through the broker): it takes
        an agent's lease back as the person's would (the watcher closed the fence already), but it
        is recorded as the program that sent it, where it could be found, and shown to the person."""
        before = self._desk.state
        who = found.who()
        decision = self._desk.handle(
            Happening(Event.UNBROKERED_INPUT), actor=f"unbrokered:{who}" if who else "unbrokered"
        )
        if not decision.changed:
            return
        sender = who or "a program (not found)"
        sentence = (
            f"{sender} {_DID[found.seen.kind]} the desktop around the broker while agent {before.holder}"
            " held control: control taken back."
        )
        others = ", ".join(sender.describe() for sender in found.senders[1:])
        log.warning("broker: %s%s", sentence, f" (also connected just then: {others})" if others else "")
        self._desk.tell_person("Input around the broker", sentence)

    def at_screen(self, delay_s: float, late_events: int) -> None:
        """What reached the screen after the person's event that interrupted an agent."""
        self._metrics.revocation_at_screen.observe(delay_s)
        if late_events:
            self._metrics.events_after_person.inc(late_events)
            log.warning(
                "broker: %d agent input event(s) reached the X server after the person's (%.1f ms later)",
                late_events,
                delay_s * 1000,
            )

    def stop_keys(self) -> None:
        self.stop_now("person:stop-keys")

    def stop_now(self, actor: str) -> None:
        """STOP_NOW as the person asked it without a terminal's HTTP (a STOP key, the stop socket):
        the thread that saw it has closed the fence already; the table decides and records here."""
        self._desk.handle(Happening(Event.STOP_NOW), actor=actor)

    def notification_choice(self, key: str) -> None:
        actor = "person:notification"
        if key == "stop":
            self._desk.handle(Happening(Event.STOP_NOW), actor=actor)
            return
        if key not in _REGRANT:
            return
        taken, self._taken_back = self._taken_back, None
        left = taken[2] - self._desk.now_ms() if taken is not None else 0
        if taken is None or left <= 0:
            return  # nothing to give back: the lease had run out, or nobody held one
        holder, window, _ = taken
        self._desk.handle(Happening(Event.GRANT, agent=holder, lease_ms=left, window=window), actor=actor)
        for event in _REGRANT[key]:
            self._desk.handle(Happening(event), actor=actor)

    def viewers(self, count: int) -> None:
        self._viewers = count
        self.reassess()

    def viewers_unseen(self, problem: str) -> None:
        """Why the broker cannot see its viewers now (a sentence), or "" once it can again."""
        self._viewer_problem = problem
        self.reassess()

    @property
    def presence_problem(self) -> str:
        """Why nobody can tell whether a person watches; "" when the state says who does."""
        return self._viewer_problem if self._desk.state.interactive_reason == UNKNOWN else ""

    def devices(self, count: int) -> None:
        self._devices = count
        self.reassess()

    def reassess(self) -> None:
        reason = interactive_reason(
            flag=self._flag,
            viewers=self._viewers,
            physical_devices=self._devices,
            # Without the setting only a viewer or the flag says a person is there.
            viewer_authoritative=not self._devices_count,
            viewers_known=not self._viewer_problem,
        )
        state = self._desk.state
        if reason == state.interactive_reason and bool(reason) == state.interactive:
            return
        event = Event.INTERACTIVE if reason else Event.NOT_INTERACTIVE
        self._desk.handle(Happening(event, reason=reason), actor="kronii")
