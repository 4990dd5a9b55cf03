"""Capability bits (seed 000 "Authorization and least privilege") and retention days."""

from __future__ import annotations

import pytest
from kronii.capture.core.capabilities import (
    AGENT_DEFAULT,
    HUMAN_WINDOW,
    LOCAL_DEFAULT,
    Capability,
    names,
    parse_capabilities,
)
from kronii.capture.core.retention import DAY_MS, expires_at_ms, is_expired, keep_raw, keep_redacted

T0 = 1_700_000_000_000


def test_capabilities_parse_from_names_in_any_case() -> None:
    parsed = parse_capabilities(["read_redacted", " LIST_META "])
    assert parsed == Capability.READ_REDACTED | Capability.LIST_META
    assert parse_capabilities([]) == Capability.NONE


def test_unknown_capability_is_a_value_error_sentence() -> None:
    with pytest.raises(
        ValueError, match=r"unknown capability 'READ_EVERYTHING'; known capabilities are .*\.$"
    ):
        parse_capabilities(["READ_REDACTED", "READ_EVERYTHING"])


def test_names_round_trip_in_declaration_order() -> None:
    everything = parse_capabilities(["READ_RAW_ENCRYPTED", "REQUEST_CAPTURE", "LIST_META", "READ_REDACTED"])
    assert names(everything) == ["READ_REDACTED", "LIST_META", "REQUEST_CAPTURE", "READ_RAW_ENCRYPTED"]
    assert parse_capabilities(names(LOCAL_DEFAULT)) == LOCAL_DEFAULT
    assert names(Capability.NONE) == []


def test_raw_encrypted_reading_is_off_in_both_defaults() -> None:
    assert Capability.READ_RAW_ENCRYPTED not in LOCAL_DEFAULT
    assert Capability.READ_RAW_ENCRYPTED not in AGENT_DEFAULT
    assert names(AGENT_DEFAULT) == ["READ_REDACTED", "REQUEST_CAPTURE"]


def test_an_unproven_local_process_may_only_request_and_a_persons_window_may_only_read() -> None:
    assert names(LOCAL_DEFAULT) == ["REQUEST_CAPTURE"]
    assert names(HUMAN_WINDOW) == ["READ_REDACTED", "LIST_META"]
    assert Capability.REQUEST_CAPTURE not in HUMAN_WINDOW
    assert Capability.READ_RAW_ENCRYPTED not in HUMAN_WINDOW


def test_raw_and_redacted_expire_after_their_own_days() -> None:
    assert expires_at_ms("raw", T0, raw_days=1, redacted_days=7) == T0 + DAY_MS
    assert expires_at_ms("redacted", T0, raw_days=1, redacted_days=7) == T0 + 7 * DAY_MS


def test_zero_raw_days_keeps_no_raw_original() -> None:
    assert not keep_raw(0)
    assert keep_raw(1)
    assert expires_at_ms("raw", T0, raw_days=0, redacted_days=7) is None
    assert expires_at_ms("redacted", T0, raw_days=0, redacted_days=7) == T0 + 7 * DAY_MS
    assert not keep_redacted(0)


def test_object_is_expired_from_its_expiry_on() -> None:
    expiry = expires_at_ms("raw", T0, raw_days=1, redacted_days=7)
    assert expiry is not None
    assert not is_expired(expiry, expiry - 1)
    assert is_expired(expiry, expiry)


@pytest.mark.parametrize(("raw_days", "redacted_days"), [(-1, 7), (1, -1), (1, 100_000)])
def test_retention_refuses_days_out_of_range(raw_days: int, redacted_days: int) -> None:
    with pytest.raises(ValueError, match="_days must be between"):
        expires_at_ms("raw", T0, raw_days=raw_days, redacted_days=redacted_days)


def test_retention_refuses_an_unknown_kind() -> None:
    with pytest.raises(ValueError, match="kind"):
        expires_at_ms("thumbnail", T0, raw_days=1, redacted_days=7)  # type: ignore[arg-type]
