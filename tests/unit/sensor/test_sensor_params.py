"""SensorParams defaults and validation, and the idle-to-state mapping row 2 resolves to."""

from __future__ import annotations

import pytest
from kronii.sensor.core.model import ActivityState
from kronii.sensor.core.params import SensorParams, natural_state


def test_params_defaults_follow_the_seed() -> None:
    params = SensorParams()

    assert (params.active_grace_secs, params.idle_threshold_secs, params.title_interval_secs) == (
        30.0,
        300.0,
        5.0,
    )


@pytest.mark.parametrize(
    "kwargs",
    [
        {"active_grace_secs": 0.0},
        {"active_grace_secs": 300.0, "idle_threshold_secs": 300.0},
        {"title_interval_secs": -1.0},
    ],
    ids=["grace_not_positive", "threshold_not_above_grace", "negative_title_interval"],
)
def test_params_reject_inconsistent_values(kwargs: dict[str, float]) -> None:
    with pytest.raises(ValueError, match="must"):
        SensorParams(**kwargs)


@pytest.mark.parametrize(
    ("idle_secs", "expected"),
    [
        (0.0, ActivityState.ACTIVE),
        (29.9, ActivityState.ACTIVE),
        (30.0, ActivityState.PASSIVE),
        (299.9, ActivityState.PASSIVE),
        (300.0, ActivityState.INACTIVE),
    ],
)
def test_natural_state_boundaries(idle_secs: float, expected: ActivityState) -> None:
    assert natural_state(SensorParams(), idle_secs) is expected
