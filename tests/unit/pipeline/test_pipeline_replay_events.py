"""`replay_events` plays the scheduler's part: a Tick at every wake-up a Planner asked for and a safety-net
Tick every `tick_ms`; messages that are no trigger are counted as events only; `realtime` keeps the pace."""

from __future__ import annotations

import time

import pytest
from kronii.activity.v1 import activity_pb2 as apb
from kronii.pipeline.adapters.recording import RecordedEvent
from kronii.pipeline.cli.replay import replay_events
from kronii.pipeline.core.roles.rules import RulesBackend, RulesParams
from kronii.pipeline.core.round import RunnerConfig
from kronii.pipeline.core.states import Trigger, TriggerKind
from kronii.pipeline.usecases import replay_recording as replay
from kronii.pipeline.usecases.replay_recording import EPOCH_MS
from kronii.pipeline.usecases.runner import Runner

HOUR_MS = 3_600_000
IDE = apb.Focus(
    app_name="code", wm_class="Code", window_id=7, title="machine.py - kronii - Visual Studio Code"
)


def _focus(offset_ms: int, focus: apb.Focus = IDE) -> RecordedEvent:
    return RecordedEvent(
        offset_ms, "kronii.activity.focus_changed", apb.FocusChanged(current=focus, change="app")
    )


@pytest.fixture
def ticks(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The offsets of the Ticks replay submits to its Runner."""
    seen: list[int] = []

    class SpyRunner(Runner):
        async def submit(self, trigger: Trigger) -> str:
            if trigger.kind is TriggerKind.TICK:
                seen.append(trigger.at_ms - EPOCH_MS)
            return await super().submit(trigger)

    monkeypatch.setattr(replay, "Runner", SpyRunner)
    return seen


async def test_a_safety_net_tick_comes_every_tick_ms_when_nothing_is_planned(ticks: list[int]) -> None:
    terminal = apb.Focus(app_name="term", wm_class="XTerm", window_id=9, title="build")
    await replay_events([_focus(0, terminal), _focus(5 * 60_000, terminal)], RulesBackend(), tick_ms=60_000)
    assert ticks[:5] == [60_000, 120_000, 180_000, 240_000, 300_000]


async def test_a_planned_wakeup_gets_its_tick_without_waiting_for_the_safety_net(ticks: list[int]) -> None:
    backend = RulesBackend(RulesParams(notify_cooldown_ms=7 * 60_000))
    report = await replay_events([_focus(0), _focus(HOUR_MS // 2)], backend, tick_ms=10 * HOUR_MS)
    assert len(report.notified) == 1
    wakeup = report.notified[0].at_ms - EPOCH_MS + 7 * 60_000
    assert ticks and wakeup <= ticks[0] < wakeup + 1_000


async def test_a_message_that_is_no_trigger_counts_as_an_event_only() -> None:
    events = [_focus(0), RecordedEvent(1_000, "kronii.activity.focus", apb.Focus())]
    report = await replay_events(events, RulesBackend())
    assert (report.events, report.triggers) == (2, 1)


async def test_realtime_replay_takes_as_long_as_the_recording() -> None:
    config = RunnerConfig(coalesce_window_ms=100)
    started = time.monotonic()
    report = await replay_events([_focus(0), _focus(400)], RulesBackend(), realtime=True, config=config)
    # The recording's 0.4 s and the two coalesce windows replay plays on after its last event.
    assert time.monotonic() - started >= 0.6
    assert report.wall_secs >= 0.6
    fast = await replay_events([_focus(0), _focus(400)], RulesBackend(), config=config)
    assert fast.wall_secs < 0.6


async def test_an_empty_recording_gives_an_empty_report() -> None:
    report = await replay_events([], RulesBackend())
    assert (report.events, report.triggers, report.runs, report.duration_ms) == (0, 0, [], 0)
