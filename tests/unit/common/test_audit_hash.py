"""The audit row hash covers every field and the link to the previous row."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone
from typing import Any

import pytest
from kronii.stores.audit import GENESIS_HASH, row_hash

BASE: dict[str, Any] = {
    "row_id": 7,
    "at": datetime(2026, 11, 22, 1, 2, 3, 456789, tzinfo=UTC),
    "service": "sensor",
    "actor": "logind",
    "action": "session.lock",
    "subject": "",
    "outcome": "recorded",
    "detail": {"n": 1},
    "prev_hash": GENESIS_HASH,
}


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("row_id", 8),
        ("at", BASE["at"] + timedelta(microseconds=1)),
        ("service", "capture"),
        ("actor", "mallory"),
        ("action", "session.unlock"),
        ("subject", "x"),
        ("outcome", "denied"),
        ("detail", {"n": 2}),
        ("prev_hash", "f" * 64),
    ],
)
def test_changing_any_field_changes_the_hash(field: str, value: Any) -> None:
    assert row_hash(**{**BASE, field: value}) != row_hash(**BASE)


def test_hash_does_not_depend_on_the_time_zone_or_key_order() -> None:
    shifted = BASE["at"].astimezone(timezone(timedelta(hours=5)))
    assert row_hash(**{**BASE, "at": shifted}) == row_hash(**BASE)
    assert row_hash(**{**BASE, "detail": {"b": 1, "a": 2}}) == row_hash(
        **{**BASE, "detail": {"a": 2, "b": 1}}
    )
    assert len(row_hash(**BASE)) == 64
