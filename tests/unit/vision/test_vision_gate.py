"""R1 and the cadence (core/gate.py): when a tick may call the model, and how often ticks come."""

from __future__ import annotations

import pytest
from kronii.vision.core.gate import Cadence, should_call_model


@pytest.mark.parametrize("diff", [0.0, 0.0001, 0.0099])
def test_r1_a_diff_under_001_without_a_focus_change_makes_no_model_call(diff: float) -> None:
    assert should_call_model(diff, focus_changed=False) is False


@pytest.mark.parametrize("diff", [0.0, 0.0099])
def test_r1_a_focus_change_calls_the_model_even_on_the_same_pixels(diff: float) -> None:
    assert should_call_model(diff, focus_changed=True) is True


@pytest.mark.parametrize("diff", [0.01, 0.03, 1.0])
def test_r1_a_diff_of_001_or_more_calls_the_model(diff: float) -> None:
    assert should_call_model(diff, focus_changed=False) is True


@pytest.mark.parametrize("cpu_share", [0.0, 0.5, 1.0])
def test_cadence_watches_nothing_while_no_plan_is_active(cpu_share: float) -> None:
    assert Cadence().interval(plan_active=False, cpu_share=cpu_share) is None


@pytest.mark.parametrize("cpu_share", [0.0, 0.02, 0.05])
def test_cadence_ticks_fastest_well_under_the_cpu_budget(cpu_share: float) -> None:
    assert Cadence().interval(plan_active=True, cpu_share=cpu_share) == 0.5


@pytest.mark.parametrize("cpu_share", [0.1, 0.4, 1.0])
def test_cadence_ticks_slowest_at_or_over_the_cpu_budget(cpu_share: float) -> None:
    assert Cadence().interval(plan_active=True, cpu_share=cpu_share) == 2.0


@pytest.mark.parametrize(("cpu_share", "seconds"), [(0.0625, 0.875), (0.075, 1.25), (0.0875, 1.625)])
def test_cadence_slows_linearly_between_half_the_budget_and_the_budget(
    cpu_share: float, seconds: float
) -> None:
    interval = Cadence().interval(plan_active=True, cpu_share=cpu_share)
    assert interval == pytest.approx(seconds)


def test_cadence_uses_its_own_bounds_and_budget() -> None:
    cadence = Cadence(fastest_secs=1.0, slowest_secs=3.0, cpu_budget=0.5)
    assert cadence.interval(True, 0.2) == 1.0
    assert cadence.interval(True, 0.375) == pytest.approx(2.0)
    assert cadence.interval(True, 0.5) == 3.0


@pytest.mark.parametrize(
    ("fastest", "slowest", "budget"),
    [(0.0, 2.0, 0.1), (-1.0, 2.0, 0.1), (3.0, 2.0, 0.1), (0.5, 2.0, 0.0), (0.5, 2.0, 1.5)],
    ids=[
        "zero-fastest",
        "negative-fastest",
        "fastest-slower-than-slowest",
        "no-budget",
        "budget-over-a-core",
    ],
)
def test_an_invalid_cadence_raises_value_error(fastest: float, slowest: float, budget: float) -> None:
    with pytest.raises(ValueError, match=r"fastest tick|CPU budget"):
        Cadence(fastest_secs=fastest, slowest_secs=slowest, cpu_budget=budget)
