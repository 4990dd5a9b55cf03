"""The Router's trigger-to-prompt mapping (seed 000) and when it asks for a screenshot."""

from __future__ import annotations

import pytest
from kronii.pipeline.core.deferral import DeferReason
from kronii.pipeline.core.intake import Batch
from kronii.pipeline.core.router import (
    BaseOnly,
    BaseSnapshot,
    Capability,
    Defer,
    Family,
    PluginFull,
    PluginInfo,
    PluginLite,
    RouterHistory,
    RouterLimits,
    route,
)
from kronii.pipeline.core.states import Trigger, TriggerKind

K = TriggerKind
T0 = 1_700_000_000_000
CAPTURE = PluginInfo("screencapture", True, True, frozenset({Capability.SNAPSHOT}), 0.2, 1)
VSCODE = PluginInfo("vscode", True, True, frozenset({Capability.SNAPSHOT}), 0.1, 9)
JIRA_LIKE_VSCODE = PluginInfo("vscode", True, True, frozenset({Capability.SUMMARIZE}), 0.7, 3)
ZOOM = PluginInfo("zoom", True, True, frozenset({Capability.SUMMARIZE, Capability.EVENTS}), 0.3, 5)
IDE = BaseSnapshot(T0, app="vscode", wm_class="code", title="main.py - kronii - Visual Studio Code")
MEETING = BaseSnapshot(T0, app="zoom", wm_class="zoom", title="Zoom Meeting")


def batch(trigger: Trigger, high_frequency: bool = False) -> Batch:
    return Batch(
        first=trigger, last=trigger, count=1, opened_at_ms=trigger.at_ms, high_frequency=high_frequency
    )


def passive(at_ms: int) -> Batch:
    return batch(Trigger(K.STATE_CHANGED, at_ms, from_state="active", to_state="passive"))


def test_active_to_passive_is_observed_with_base_only() -> None:
    decision = route(passive(T0), IDE, (), RouterHistory(), T0)
    assert decision.family is Family.OBSERVE and decision.policy == BaseOnly()


def test_active_to_passive_repeated_within_5_minutes_defers() -> None:
    first = route(passive(T0), IDE, (), RouterHistory(), T0)
    history = RouterHistory().after(passive(T0), first, T0, RouterLimits())
    again = route(passive(T0 + 299_000), IDE, (), history, T0 + 299_000)
    assert again.policy == Defer(DeferReason.REPEATED)
    later = route(passive(T0 + 300_000), IDE, (), history, T0 + 300_000)
    assert later.family is Family.OBSERVE and later.policy == BaseOnly()


def test_focus_changed_to_ide_extracts_with_the_ide_plugin() -> None:
    decision = route(
        batch(Trigger(K.FOCUS_CHANGED, T0, app="vscode")), IDE, (VSCODE, ZOOM, CAPTURE), RouterHistory(), T0
    )
    assert decision.family is Family.EXTRACT
    assert decision.policy == PluginFull(("vscode",))
    assert not decision.needs_screenshot
    assert decision.window is not None and decision.window.artifact == "main.py"


def test_focus_changed_to_browser_without_plugins_extracts_base_only() -> None:
    base = BaseSnapshot(T0, wm_class="firefox", title="Pull request #12 · org/repo - Mozilla Firefox")
    decision = route(batch(Trigger(K.FOCUS_CHANGED, T0)), base, (), RouterHistory(), T0)
    assert decision.family is Family.EXTRACT and decision.policy == BaseOnly()


def test_risky_or_summary_only_plugin_gives_plugin_lite() -> None:
    decision = route(batch(Trigger(K.FOCUS_CHANGED, T0)), IDE, (JIRA_LIKE_VSCODE,), RouterHistory(), T0)
    assert decision.policy == PluginLite(("vscode",))


def test_disabled_or_uninstalled_plugins_are_not_used() -> None:
    off = PluginInfo("vscode", True, False, frozenset({Capability.SNAPSHOT}))
    gone = PluginInfo("vscode", False, True, frozenset({Capability.SNAPSHOT}))
    decision = route(batch(Trigger(K.FOCUS_CHANGED, T0)), IDE, (off, gone), RouterHistory(), T0)
    assert decision.policy == BaseOnly()


def test_focus_changed_to_meeting_needs_screenshot_when_capture_plugin_enabled() -> None:
    decision = route(batch(Trigger(K.FOCUS_CHANGED, T0)), MEETING, (ZOOM, CAPTURE), RouterHistory(), T0)
    assert decision.family is Family.EXTRACT and decision.needs_screenshot
    assert decision.policy == PluginLite(("zoom", "screencapture"))
    without_capture = route(batch(Trigger(K.FOCUS_CHANGED, T0)), MEETING, (ZOOM,), RouterHistory(), T0)
    assert not without_capture.needs_screenshot
    disabled = PluginInfo("screencapture", True, False, frozenset({Capability.SNAPSHOT}))
    assert not route(
        batch(Trigger(K.FOCUS_CHANGED, T0)), MEETING, (disabled,), RouterHistory(), T0
    ).needs_screenshot


def test_image_viewer_and_artifactless_ide_title_need_a_screenshot_but_a_named_file_does_not() -> None:
    viewer = BaseSnapshot(T0, wm_class="eog", title="diagram.png")
    decision = route(batch(Trigger(K.FOCUS_CHANGED, T0)), viewer, (CAPTURE,), RouterHistory(), T0)
    assert decision.family is Family.EXTRACT and decision.needs_screenshot
    assert decision.policy == PluginFull(("screencapture",))
    welcome = BaseSnapshot(T0, wm_class="code", title="Welcome - Visual Studio Code")
    assert route(
        batch(Trigger(K.FOCUS_CHANGED, T0)), welcome, (CAPTURE,), RouterHistory(), T0
    ).needs_screenshot
    assert not route(
        batch(Trigger(K.FOCUS_CHANGED, T0)), IDE, (CAPTURE,), RouterHistory(), T0
    ).needs_screenshot


def test_focus_thrash_defers() -> None:
    limits = RouterLimits(focus_thrash_changes=3, focus_thrash_window_ms=10_000)
    history = RouterHistory()
    decisions = []
    for i in range(4):
        b = batch(Trigger(K.FOCUS_CHANGED, T0 + i * 1_000, window_id=i))
        decision = route(b, IDE, (), history, T0 + i * 1_000, limits)
        history = history.after(b, decision, T0 + i * 1_000, limits)
        decisions.append(decision)
    assert [d.policy == Defer(DeferReason.FOCUS_THRASH) for d in decisions] == [False, False, False, True]


def test_high_frequency_title_changes_defer_and_a_single_new_file_title_extracts() -> None:
    churn = route(batch(Trigger(K.TITLE_CHANGED, T0), high_frequency=True), IDE, (), RouterHistory(), T0)
    assert churn.policy == Defer(DeferReason.TITLE_CHURN)
    single = route(batch(Trigger(K.TITLE_CHANGED, T0)), IDE, (), RouterHistory(), T0)
    assert single.family is Family.EXTRACT


def test_lock_end_extracts_unfinished_context_to_resume() -> None:
    decision = route(batch(Trigger(K.LOCK_END, T0)), IDE, (VSCODE,), RouterHistory(), T0)
    assert decision.family is Family.EXTRACT and "resume" in decision.reason
    assert decision.policy == PluginFull(("vscode",))


def test_plugin_event_meeting_joined_extracts_attendees_and_agenda() -> None:
    trigger = Trigger(K.PLUGIN_EVENT, T0, plugin_app_id="zoom", plugin_kind="meeting_joined")
    decision = route(
        batch(trigger),
        BaseSnapshot(T0, wm_class="firefox", title="Docs - Mozilla Firefox"),
        (ZOOM,),
        RouterHistory(),
        T0,
    )
    assert decision.family is Family.EXTRACT and "attendees" in decision.reason
    assert decision.policy == PluginLite(("zoom",))


def test_other_plugin_event_is_observed_with_its_plugin_summary() -> None:
    trigger = Trigger(K.PLUGIN_EVENT, T0, plugin_app_id="zoom", plugin_kind="chat_message")
    decision = route(batch(trigger), IDE, (ZOOM,), RouterHistory(), T0)
    assert decision.family is Family.OBSERVE and decision.policy == PluginLite(("zoom",))


def test_locked_desktop_or_inactive_user_defers() -> None:
    locked = BaseSnapshot(T0, wm_class="code", title="main.py - kronii - Visual Studio Code", locked=True)
    assert route(batch(Trigger(K.FOCUS_CHANGED, T0)), locked, (), RouterHistory(), T0).policy == Defer(
        DeferReason.LOCKED
    )
    away = batch(Trigger(K.STATE_CHANGED, T0, from_state="passive", to_state="inactive"))
    assert route(away, IDE, (), RouterHistory(), T0).policy == Defer(DeferReason.LOW_VALUE)


def test_tick_and_pulse_are_observed_base_only() -> None:
    for kind in (K.TICK, K.ACTIVITY_PULSE):
        decision = route(batch(Trigger(kind, T0)), IDE, (VSCODE,), RouterHistory(), T0)
        assert decision.family is Family.OBSERVE and decision.policy == BaseOnly()


TMUX = PluginInfo("tmux", True, True, frozenset({Capability.SNAPSHOT, Capability.SUMMARIZE}), 0.4, 4)
TERMINAL = BaseSnapshot(T0, app="kitty", wm_class="kitty", title="dev@workstation: ~/src/kronii")


def test_focus_changed_to_a_terminal_extracts_from_the_tmux_pane_when_the_plugin_is_there() -> None:
    decision = route(batch(Trigger(K.FOCUS_CHANGED, T0)), TERMINAL, (TMUX, CAPTURE), RouterHistory(), T0)
    assert decision.family is Family.EXTRACT
    assert decision.policy == PluginFull(("tmux",))
    assert not decision.needs_screenshot  # the pane's text is the context; no screenshot of it


def test_focus_changed_to_a_terminal_without_the_tmux_plugin_is_observed() -> None:
    decision = route(batch(Trigger(K.FOCUS_CHANGED, T0)), TERMINAL, (CAPTURE,), RouterHistory(), T0)
    assert decision.family is Family.OBSERVE and decision.policy == BaseOnly()


XTERM = BaseSnapshot(T0, app="xterm", wm_class="xterm", title="make build")


@pytest.mark.parametrize(
    ("trigger", "base", "plugins", "reason"),
    [
        (
            Trigger(K.STATE_CHANGED, T0, from_state="passive", to_state="active"),
            IDE,
            (),
            "state passive->active: observe",
        ),
        (Trigger(K.STATE_CHANGED, T0), IDE, (), "state ?->?: observe"),
        (
            Trigger(K.STATE_CHANGED, T0, from_state="active", to_state="passive"),
            IDE,
            (),
            "Active->Passive: observe",
        ),
        (Trigger(K.FOCUS_CHANGED, T0), IDE, (), "focus on ide: extract artifact"),
        (Trigger(K.FOCUS_CHANGED, T0), TERMINAL, (TMUX,), "focus on terminal: extract from its pane"),
        (Trigger(K.FOCUS_CHANGED, T0), XTERM, (), "focus on terminal window: observe"),
        (Trigger(K.TITLE_CHANGED, T0), IDE, (), "new ide artifact: extract"),
        (Trigger(K.TITLE_CHANGED, T0), XTERM, (), "title changed: observe"),
        (Trigger(K.LOCK_END, T0), IDE, (), "unlock: extract unfinished context to resume"),
        (Trigger(K.TICK, T0), IDE, (), "tick: observe"),
    ],
)
def test_each_route_names_its_reason(
    trigger: Trigger, base: BaseSnapshot, plugins: tuple[PluginInfo, ...], reason: str
) -> None:
    assert route(batch(trigger), base, plugins, RouterHistory(), T0).reason == reason


def test_a_title_change_without_an_artifact_is_observed_base_only() -> None:
    decision = route(batch(Trigger(K.TITLE_CHANGED, T0)), XTERM, (VSCODE, CAPTURE), RouterHistory(), T0)
    assert decision.family is Family.OBSERVE and decision.policy == BaseOnly()
    assert not decision.needs_screenshot


def test_a_plugin_event_from_a_plugin_without_context_is_observed_base_only() -> None:
    trigger = Trigger(K.PLUGIN_EVENT, T0, plugin_app_id="slack", plugin_kind="message")
    decision = route(batch(trigger), IDE, (ZOOM, VSCODE), RouterHistory(), T0)
    assert decision.family is Family.OBSERVE and decision.policy == BaseOnly()
    assert decision.reason == "plugin event from a plugin without context: observe"


def test_a_plugin_event_while_locked_defers_before_anything_else() -> None:
    locked = BaseSnapshot(T0, wm_class="zoom", title="Zoom Meeting", locked=True)
    trigger = Trigger(K.PLUGIN_EVENT, T0, plugin_app_id="zoom", plugin_kind="meeting_joined")
    decision = route(batch(trigger), locked, (ZOOM,), RouterHistory(), T0)
    assert decision.policy == Defer(DeferReason.LOCKED) and decision.reason == "desktop is locked"
