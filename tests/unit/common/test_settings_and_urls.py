"""Settings fail with a sentence naming the variable; URLs are printed without their secrets."""

from __future__ import annotations

from pathlib import Path

import pytest
from kronii.foundation.settings import KroniiSettings, SettingsError, default_data_dir, load_settings
from kronii.foundation.urls import libpq_url, redact_url, sqlalchemy_url
from kronii.sensor.settings import SensorSettings


def test_invalid_port_names_the_variable_and_the_value(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KRONII_SENSOR_GRPC_PORT", "seventy")
    with pytest.raises(SettingsError) as caught:
        load_settings(SensorSettings)
    assert "KRONII_SENSOR_GRPC_PORT is invalid" in caught.value.message
    assert "'seventy'" in caught.value.message


def test_out_of_range_port_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KRONII_SENSOR_HTTP_PORT", "70000")
    with pytest.raises(SettingsError, match="KRONII_SENSOR_HTTP_PORT is invalid"):
        load_settings(SensorSettings)


def test_shared_url_with_the_wrong_scheme_names_the_shared_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KRONII_REDIS_URL", "http://localhost:6379")
    with pytest.raises(SettingsError) as caught:
        load_settings(SensorSettings)
    assert "KRONII_REDIS_URL is invalid" in caught.value.message
    assert "redis://" in caught.value.message


def test_idle_threshold_must_exceed_active_grace(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KRONII_SENSOR_ACTIVE_GRACE_SECS", "60")
    monkeypatch.setenv("KRONII_SENSOR_IDLE_THRESHOLD_SECS", "30")
    with pytest.raises(SettingsError, match="KRONII_SENSOR_IDLE_THRESHOLD_SECS must be greater"):
        load_settings(SensorSettings)


def test_sensor_defaults_follow_the_port_plan_and_the_seed(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("KRONII_SENSOR_HTTP_PORT", "KRONII_SENSOR_GRPC_PORT"):
        monkeypatch.delenv(name, raising=False)
    settings = load_settings(SensorSettings)
    assert (settings.http_port, settings.grpc_port) == (8101, 7101)
    assert (settings.active_grace_secs, settings.idle_threshold_secs) == (30.0, 300.0)


def test_data_dir_follows_xdg_data_home(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("KRONII_DATA_DIR", raising=False)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path))
    assert default_data_dir() == tmp_path / "kronii"
    assert load_settings(KroniiSettings).data_dir == tmp_path / "kronii"
    monkeypatch.setenv("KRONII_DATA_DIR", str(tmp_path / "elsewhere"))
    assert load_settings(KroniiSettings).data_dir == tmp_path / "elsewhere"


def test_log_level_is_case_insensitive_and_checked(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KRONII_LOG_LEVEL", "debug")
    assert load_settings(KroniiSettings).log_level == "DEBUG"
    monkeypatch.setenv("KRONII_LOG_LEVEL", "chatty")
    with pytest.raises(SettingsError, match="KRONII_LOG_LEVEL is invalid"):
        load_settings(KroniiSettings)


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        ("nats://s3cr3t-token@127.0.0.1:14222", "nats://127.0.0.1:14222"),
        ("redis://:hunter2@127.0.0.1:16379/0", "redis://127.0.0.1:16379/0"),
        ("postgresql://kronii:pa%25ss@db:5432/kronii", "postgresql://kronii@db:5432/kronii"),
        ("nats://127.0.0.1:4222", "nats://127.0.0.1:4222"),
    ],
)
def test_redact_url_never_shows_a_password_or_token(url: str, shown: str) -> None:
    assert redact_url(url) == shown


def test_database_urls_select_the_psycopg_driver_and_back() -> None:
    assert sqlalchemy_url("postgresql://u:p@h/db") == "postgresql+psycopg://u:p@h/db"
    assert sqlalchemy_url("postgres://u:p@h/db") == "postgresql+psycopg://u:p@h/db"
    assert libpq_url("postgresql+psycopg://u:p@h/db") == "postgresql://u:p@h/db"
    with pytest.raises(ValueError, match="postgresql://"):
        sqlalchemy_url("mysql://u:p@h/db")
