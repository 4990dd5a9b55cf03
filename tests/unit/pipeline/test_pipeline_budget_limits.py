"""Context budget (Base first, plugins by priority, screenshot by id only) and rate limits."""

from __future__ import annotations

import pytest
from kronii.pipeline.core.budget import ItemSource, PluginContent, budget_context, estimate_tokens
from kronii.pipeline.core.limits import RateLedger, RateLimits, check

T0 = 1_700_000_000_000


def test_estimate_tokens_is_chars_over_four_rounded_up() -> None:
    assert [estimate_tokens(x) for x in ("", "a", "abcd", "abcde")] == [0, 1, 1, 2]


def test_base_first_then_screenshot_reference_then_plugins_by_priority() -> None:
    plugins = [PluginContent("jira", "j" * 40, priority=1), PluginContent("vscode", "v" * 40, priority=9)]
    context = budget_context("b" * 40, plugins, max_tokens=100, screenshot_id="shot_1")
    assert [(i.source, i.name) for i in context.items] == [
        (ItemSource.BASE, "base"),
        (ItemSource.SCREENSHOT, "shot_1"),
        (ItemSource.PLUGIN, "vscode"),
        (ItemSource.PLUGIN, "jira"),
    ]
    assert context.dropped == ()
    assert context.used_tokens == sum(i.tokens for i in context.items) <= 100
    assert context.screenshot_id == "shot_1"


def test_plugin_that_does_not_fit_is_dropped_whole_and_reported() -> None:
    plugins = [PluginContent("big", "x" * 400, priority=9), PluginContent("small", "y" * 20, priority=1)]
    context = budget_context("b" * 40, plugins, max_tokens=30)
    assert [i.name for i in context.items] == ["base", "small"]
    [dropped] = context.dropped
    assert (dropped.name, dropped.tokens, dropped.reason) == ("big", 100, "over budget")


def test_oversized_base_is_truncated_and_the_cut_reported() -> None:
    context = budget_context("b" * 400, [PluginContent("p", "p")], max_tokens=20)
    base = context.items[0]
    assert base.truncated and base.tokens <= 20 and base.text.endswith("[...]")
    assert {d.name for d in context.dropped} == {"base", "p"}


@pytest.mark.parametrize("bad", ["../shots/1.png", "/home/ana/.cache/x", "a" * 129, "iVBORw0KGgo=..."])
def test_screenshot_is_only_ever_an_opaque_id(bad: str) -> None:
    with pytest.raises(ValueError, match="opaque id"):
        budget_context("base", [], max_tokens=100, screenshot_id=bad)


def test_screenshot_reference_text_carries_the_id_not_data() -> None:
    context = budget_context("base", [], max_tokens=100, screenshot_id="a1b2")
    [ref] = [i for i in context.items if i.source is ItemSource.SCREENSHOT]
    assert "a1b2" in ref.text and ref.tokens < 20


LIMITS = RateLimits(global_max=3, global_window_ms=60_000, per_app_max=2, per_app_window_ms=10_000)


def test_per_app_limit_refuses_then_frees_after_the_sliding_window() -> None:
    ledger = RateLedger().record("code", T0, LIMITS).record("code", T0 + 1_000, LIMITS)
    refused = check(ledger, "code", T0 + 2_000, LIMITS)
    assert not refused.allowed and "'code'" in refused.reason
    assert refused.retry_after_ms == 8_000
    assert check(ledger, "firefox", T0 + 2_000, LIMITS).allowed
    assert check(ledger, "code", T0 + 10_000, LIMITS).allowed


def test_global_limit_counts_all_apps() -> None:
    ledger = RateLedger()
    for i, app in enumerate(("a", "b", "c")):
        ledger = ledger.record(app, T0 + i, LIMITS)
    refused = check(ledger, "d", T0 + 10, LIMITS)
    assert not refused.allowed and refused.reason.startswith("global")
    assert refused.retry_after_ms == 60_000 - 10
    assert check(ledger, "d", T0 + 60_000, LIMITS).allowed


def test_ledger_forgets_events_older_than_both_windows() -> None:
    ledger = RateLedger().record("a", T0, LIMITS).record("a", T0 + 60_000, LIMITS)
    assert ledger.events == (("a", T0 + 60_000),)


def test_invalid_limits_are_refused() -> None:
    with pytest.raises(ValueError, match="windows > 0"):
        RateLimits(global_max=1, global_window_ms=0, per_app_max=1, per_app_window_ms=1)
