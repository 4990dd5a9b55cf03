"""The scheduler's settings: the issue's defaults, and a bad variable named in one sentence."""

from __future__ import annotations

import pytest
from kronii.foundation.settings import SettingsError, load_settings
from kronii.scheduler.service import SERVICE
from kronii.scheduler.settings import SchedulerSettings


def test_defaults_are_port_8104_30_runs_an_hour_10_per_app_and_a_300_s_safety_net(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    for name in ("HTTP_PORT", "GRPC_PORT", "GLOBAL_RUNS_PER_HOUR", "APP_RUNS_PER_HOUR"):
        monkeypatch.delenv(f"KRONII_SCHEDULER_{name}", raising=False)
    settings = load_settings(SchedulerSettings)
    assert (settings.http_port, settings.grpc_port) == (8104, 7104)
    limits = settings.limits()
    assert (limits.global_runs_per_hour, limits.app_runs_per_hour) == (30, 10)
    assert limits.safety_net_interval_secs == 300
    assert SERVICE.name == "scheduler" and SERVICE.order == 4
    assert {"nats", "redis", "postgres"} <= SERVICE.needs


def test_a_zero_ceiling_is_refused_naming_the_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KRONII_SCHEDULER_GLOBAL_RUNS_PER_HOUR", "0")
    with pytest.raises(SettingsError) as caught:
        load_settings(SchedulerSettings)
    assert "KRONII_SCHEDULER_GLOBAL_RUNS_PER_HOUR" in caught.value.message


def test_a_key_prefix_with_spaces_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KRONII_SCHEDULER_KEY_PREFIX", "two words")
    with pytest.raises(SettingsError) as caught:
        load_settings(SchedulerSettings)
    assert "KRONII_SCHEDULER_KEY_PREFIX" in caught.value.message
