"""While the person holds the desktop (the input broker's `user_holds_until` is ahead), the pipeline
still thinks (its rounds run, the Planner is asked, the plan goes to the scheduler) but starts no
action: the notification is not sent and the run notes why. In process, with fakes of the ports."""

from __future__ import annotations

from dataclasses import dataclass, field

from kronii.desktop.hold import DesktopHold
from kronii.pipeline.core.roles.values import Called, Notification, Plan, PlanHistory, Synthesis
from kronii.pipeline.core.round import RunnerConfig
from kronii.pipeline.core.states import Priority, RunState
from kronii.pipeline.usecases.runner import Runner

from tests.unit.pipeline.runner_fakes import FakeBackend, FakeClock, Fakes, focus

COOLDOWN_MS = 120_000


def hold(
    clock: FakeClock, secs: float | None, *, session: str = "s1", reason: str = "stop_now"
) -> DesktopHold:
    now = clock.now_ms / 1000
    return DesktopHold(session, None if secs is None else now + secs, reason, at=now)


async def one_round(runner: Runner, clock: FakeClock) -> None:
    await runner.submit(focus(clock.now_ms, priority=Priority.HIGH))
    await runner.advance()


async def test_a_round_while_the_user_holds_the_desktop_thinks_but_sends_nothing_and_says_why() -> None:
    fakes, clock = Fakes(), FakeClock()
    runner = Runner(fakes.ports(), clock)
    runner.desktop_changed(hold(clock, 300))

    await one_round(runner, clock)

    [record] = fakes.runs.records.values()
    assert record.decision == "silent" and fakes.notifier.sent == []
    assert "silent: the user holds the desktop of session 's1' (stop_now)" in record.notes
    assert "planner" in [call.role for call in record.model_calls]
    assert len(fakes.scheduler.plans) == 1 and runner.state is RunState.COOLING


async def test_a_hold_that_ended_or_was_never_set_lets_the_notification_go() -> None:
    fakes, clock = Fakes(), FakeClock()
    runner = Runner(fakes.ports(), clock)
    runner.desktop_changed(hold(clock, -1, session="s1"))
    runner.desktop_changed(hold(clock, None, session="s2", reason="grant"))

    await one_round(runner, clock)

    [record] = fakes.runs.records.values()
    assert record.decision == "notify" and len(fakes.notifier.sent) == 1


async def test_after_the_broker_ends_the_hold_the_next_round_notifies_again() -> None:
    fakes, clock = Fakes(), FakeClock()
    runner = Runner(fakes.ports(), clock, RunnerConfig(max_cooldown_ms=COOLDOWN_MS))
    runner.desktop_changed(hold(clock, 3600))
    await one_round(runner, clock)
    assert fakes.notifier.sent == []

    clock.advance(COOLDOWN_MS + 1)
    runner.desktop_changed(hold(clock, None, reason="wait"))
    await runner.advance()  # the cooldown ends
    await one_round(runner, clock)

    decisions = sorted(record.decision for record in fakes.runs.records.values())
    assert decisions == ["notify", "silent"] and len(fakes.notifier.sent) == 1


@dataclass
class WatchingBackend(FakeBackend):
    """Remembers what each Planner call was told was surfaced today; `on_notify` runs while the
    Notifier writes."""

    surfaced: list[frozenset[str]] = field(default_factory=list)
    on_notify: list[DesktopHold] = field(default_factory=list)
    runner: Runner | None = None

    async def plan(self, synthesis: Synthesis, history: PlanHistory) -> Called[Plan]:
        self.surfaced.append(frozenset(history.surfaced_today))
        return await super().plan(synthesis, history)

    async def notify(self, plan: Plan, synthesis: Synthesis) -> Called[Notification | None]:
        if self.runner is not None:
            for taken in self.on_notify:
                self.runner.desktop_changed(taken)
        return await super().notify(plan, synthesis)


async def test_a_suggestion_held_back_is_not_counted_as_surfaced() -> None:
    backend = WatchingBackend()
    fakes, clock = Fakes(backend=backend), FakeClock()
    runner = Runner(fakes.ports(), clock, RunnerConfig(max_cooldown_ms=COOLDOWN_MS))
    runner.desktop_changed(hold(clock, 3600))
    await one_round(runner, clock)

    clock.advance(COOLDOWN_MS + 1)
    await runner.advance()
    await one_round(runner, clock)

    assert len(backend.surfaced) == 2 and "review:notes" not in backend.surfaced[1]


async def test_a_hold_taken_while_the_notifier_writes_stops_the_notification() -> None:
    backend = WatchingBackend()
    fakes, clock = Fakes(backend=backend), FakeClock()
    runner = Runner(fakes.ports(), clock)
    backend.runner = runner
    backend.on_notify.append(hold(clock, 300, reason="user_input_override"))

    await one_round(runner, clock)

    [record] = fakes.runs.records.values()
    assert record.decision == "silent" and fakes.notifier.sent == []
    assert "notifier" in [call.role for call in record.model_calls]
    assert any("user_input_override" in note for note in record.notes)
    assert runner.state is RunState.COOLING
