"""The core's check "is this source snoozed or disabled now?" (pure; the store is in integration)."""

from __future__ import annotations

from kronii.pipeline.adapters.controls import SourceControl, is_muted, muted_reason


def test_a_source_without_a_control_may_notify() -> None:
    assert muted_reason(None, 100.0) is None
    assert not is_muted({}, "app:x", 100.0)


def test_a_snooze_mutes_until_its_end_and_not_after() -> None:
    control = SourceControl("app:x", snoozed_until=200.0)
    assert muted_reason(control, 199.9) == "snoozed until 1970-01-01T00:03:20+00:00"
    assert muted_reason(control, 200.0) is None
    assert is_muted({"app:x": control}, "app:x", 150.0)
    assert not is_muted({"app:x": control}, "app:y", 150.0)


def test_disabled_mutes_whatever_the_snooze_says() -> None:
    control = SourceControl("plugin:tmux", snoozed_until=50.0, disabled=True)
    assert muted_reason(control, 10_000.0) == "disabled by the user"
