"""The confirmation dialog (seed 001, step 8) as a desktop notification: what the plan would do, the
ambiguous names with their candidates (R4), and Approve / Deny buttons. A click is the person's answer
(only the notification server's own signals count); `kronii vision approve|deny` is the same from a
terminal, and `kronii vision do` asks on the keyboard."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from kronii.desktop.notify import URGENCY_CRITICAL, DesktopNotifier
from kronii.vision.core.plan_book import PlanRecord

__all__ = ["ConfirmationNotice", "dialog_text"]

CHOICES = (("approve", "Approve"), ("deny", "Deny"))
Answer = Callable[[str, str], Awaitable[None]]


def dialog_text(record: PlanRecord) -> str:
    """What the person reads before saying yes: every action, each reason, every ambiguous name."""
    lines = [f"For “{record.intent}” kronii would:"]
    for action in record.evaluation.actions:
        why = action.metadata.get("confirm_reason", "")
        lines.append(f"• {action.describe()}" + (f" ({why})" if why else ""))
    for ambiguity in record.evaluation.ambiguities:
        places = ", ".join(
            f"{n.id} {n.role} at {n.bounds.x},{n.bounds.y}" if n.bounds else f"{n.id} {n.role}"
            for n in ambiguity.candidates
        )
        lines.append(f"Ambiguous: “{ambiguity.name}” matches {len(ambiguity.candidates)} elements: {places}")
    lines.append(f"Plan {record.id}. Or: kronii vision approve {record.id} / deny {record.id}")
    return "\n".join(lines)


class ConfirmationNotice:
    """Asks from when it is made (a plan can be flagged before the bus answers: then nobody is asked);
    the person's clicks go to `on_answer` once started."""

    def __init__(self, *, bus_address: str | None = None) -> None:
        self._on_answer: Answer | None = None
        self._notifier = DesktopNotifier(bus_address=bus_address, on_action=self._clicked)

    @property
    def available(self) -> bool:
        return self._notifier.available

    async def start(self, on_answer: Answer) -> bool:
        self._on_answer = on_answer
        return await self._notifier.start()

    async def stop(self) -> None:
        await self._notifier.stop()

    async def ask(self, record: PlanRecord) -> None:
        await self._notifier.show(
            record.id,
            "kronii vision: approve this plan?",
            dialog_text(record),
            CHOICES,
            category="x-kronii.confirmation",
            urgency=URGENCY_CRITICAL,
        )

    async def _clicked(self, plan_id: str, key: str) -> None:
        if self._on_answer is not None:
            await self._on_answer(plan_id, key)
