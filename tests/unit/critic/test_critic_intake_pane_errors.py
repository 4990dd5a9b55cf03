"""The intake with the opt-in pane error text: a failing command from a shell hook gets the text its
pane shows, redacted like any error text before anything keeps it; a command that passed, one that
brought its own error text (`kronii run`) and a pane reader that fails leave the event as it came."""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest
from kronii.critic.core.model import InvocationEvent
from kronii.critic.usecases.record_command import RecordCommand
from kronii.redaction import RedactionContext, RedactionEngine

from tests.unit.critic.test_critic_intake import (
    NOW,
    TOKEN,
    Catalog,
    FakeClock,
    FakeMemory,
    FakeMetrics,
    FixedPolicy,
    Sinks,
)

PANE_TEXT = f"Traceback (most recent call last):\nValueError: token {TOKEN} was refused"


@dataclass
class FakePanes:
    text: str = PANE_TEXT
    broken: bool = False
    asked: list[tuple[str, str]] = field(default_factory=list)

    def error_text(self, tty: str, command_line: str) -> str:
        self.asked.append((tty, command_line))
        if self.broken:
            raise OSError("tmux went away")
        return self.text


@dataclass
class PaneRig:
    intake: RecordCommand
    memory: FakeMemory
    panes: FakePanes


@pytest.fixture
def pane_rig() -> PaneRig:
    memory, sinks, panes = FakeMemory(), Sinks(), FakePanes()
    intake = RecordCommand(
        memory=memory, hints=sinks, notifications=sinks, embeddings=sinks, policy=FixedPolicy(),
        commands=Catalog(), metrics=FakeMetrics(), clock=FakeClock(), engine=RedactionEngine(),
        context=RedactionContext.random(), pane_errors=panes,
    )  # fmt: skip
    return PaneRig(intake, memory, panes)


def shell_event(reporter: str = "bash", exit_status: int = 1, error_text: str = "") -> InvocationEvent:
    return InvocationEvent(
        reporter, "s1", "/dev/pts/7", "/srv/app", "python app.py", exit_status, NOW, 30, error_text
    )


async def test_a_failing_hook_command_gets_its_pane_text_redacted_before_it_is_kept(
    pane_rig: PaneRig,
) -> None:
    reported = await pane_rig.intake.report(shell_event())

    assert pane_rig.panes.asked == [("/dev/pts/7", "python app.py")]
    assert reported.record is not None
    kept = pane_rig.memory.records[reported.record.record_id]
    assert kept.error_type == "ValueError" and "was refused" in kept.error_message
    assert TOKEN not in repr(kept) and kept.redactions >= 1


@pytest.mark.parametrize(
    "given",
    [
        pytest.param(shell_event(exit_status=0), id="passed"),
        pytest.param(shell_event(reporter="run", error_text="from the wrapper"), id="run-wrapper"),
        pytest.param(shell_event(reporter="run"), id="run-wrapper-silent"),
        pytest.param(shell_event(error_text="already there"), id="has-error-text"),
    ],
)
async def test_the_pane_is_not_read_for_other_events(pane_rig: PaneRig, given: InvocationEvent) -> None:
    reported = await pane_rig.intake.report(given)

    assert pane_rig.panes.asked == []
    assert reported.record is not None and TOKEN not in repr(pane_rig.memory.records)


async def test_a_pane_reader_that_fails_leaves_the_command_remembered_without_error_text(
    pane_rig: PaneRig,
) -> None:
    pane_rig.panes.broken = True

    reported = await pane_rig.intake.report(shell_event())

    assert reported.record is not None
    kept = pane_rig.memory.records[reported.record.record_id]
    assert kept.command_line == "python app.py" and kept.error_message == "" and kept.exit_status == 1
