"""The supervisor's settings: seed 002's defaults, and a sentence naming the variable when wrong."""

from __future__ import annotations

import pytest
from kronii.foundation.settings import SettingsError, load_settings
from kronii.supervisor.core.params import SupervisorParams
from kronii.supervisor.core.tokens import TokenError, issue_token, verify_token
from kronii.supervisor.settings import SupervisorSettings


def test_defaults_are_the_seeds_numbers_on_the_mesh_ports(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in list(__import__("os").environ):
        if name.startswith("KRONII_SUPERVISOR_"):
            monkeypatch.delenv(name)
    settings = load_settings(SupervisorSettings)
    assert (settings.http_port, settings.grpc_port) == (8105, 7105)
    assert settings.params() == SupervisorParams()
    params = settings.params()
    assert (params.ack_timeout_secs, params.ack_retries, params.resume_max_attempts) == (8.0, 2, 2)
    assert (params.quiet_window_secs, params.recheck_secs, params.max_defer_secs) == (20.0, 5.0, 60.0)
    assert (params.rate_limit, params.no_progress_turns, params.repeated_finding_cycles) == (10, 20, 3)


@pytest.mark.parametrize(
    ("variable", "value", "says"),
    [
        ("KRONII_SUPERVISOR_AGENT_KINDS", '{"codex": {"colour": "red"}}', "unknown field 'colour'"),
        ("KRONII_SUPERVISOR_MAX_DEFER_SECS", "1", "KRONII_SUPERVISOR_MAX_DEFER_SECS must be at least"),
        ("KRONII_SUPERVISOR_TOKEN_SECRET", "short", "at least 16 characters"),
        ("KRONII_SUPERVISOR_ACK_TIMEOUT_SECS", "soon", "KRONII_SUPERVISOR_ACK_TIMEOUT_SECS is invalid"),
    ],
)
def test_a_bad_setting_stops_start_up_with_a_sentence(
    monkeypatch: pytest.MonkeyPatch, variable: str, value: str, says: str
) -> None:
    monkeypatch.setenv(variable, value)
    with pytest.raises(SettingsError) as refused:
        load_settings(SupervisorSettings)
    assert says in refused.value.message


def test_tokens_verify_and_refuse_tampering_expiry_and_other_secrets() -> None:
    secret = b"s" * 32
    token = issue_token(
        secret, subject="orchestrator", scopes={"trigger"}, workspaces={"ws1"}, now=1000, ttl_secs=60
    )
    claims = verify_token(secret, token, now=1030)
    assert claims.subject == "orchestrator" and claims.has("trigger") and not claims.has("operate")
    assert claims.allows_workspace("ws1") and not claims.allows_workspace("ws2")
    with pytest.raises(TokenError, match="expired"):
        verify_token(secret, token, now=1061)
    with pytest.raises(TokenError, match="signature"):
        verify_token(b"t" * 32, token, now=1030)
    head, body, signature = token.split(".")
    with pytest.raises(TokenError, match="signature"):
        verify_token(secret, f"{head}.{body}x.{signature}", now=1030)
    with pytest.raises(TokenError, match="not a kronii service token"):
        verify_token(secret, "Bearer nonsense", now=1030)
