"""Retention: which day files are archived and which rows pruned for RetentionDays; the day files'
archive step and their record format."""

from __future__ import annotations

import gzip
import stat
from dataclasses import replace
from datetime import UTC, date, datetime
from pathlib import Path

import numpy as np
import pytest
from kronii.critic.adapters.daily_files import DailyFiles, decode_record, encode_record
from kronii.critic.core.retention import DAY_MS, day_of_file_name, plan_retention, prune_before_ms

from tests.unit.critic.memory_history import random_unit, record


def _ms(day: date) -> int:
    return int(datetime(day.year, day.month, day.day, 12, tzinfo=UTC).timestamp() * 1000)


def test_days_older_than_retention_days_are_archived_and_the_rest_kept() -> None:
    today = date(2025, 3, 31)
    days = [date(2025, 3, 1), date(2025, 2, 27), date(2025, 2, 28), date(2025, 3, 30), today]
    plan = plan_retention(days, today, _ms(today), 30)
    assert plan.archive_days == (date(2025, 2, 27), date(2025, 2, 28))


def test_a_retention_of_one_day_keeps_yesterday_and_today() -> None:
    today = date(2025, 1, 2)
    plan = plan_retention([date(2024, 12, 31), date(2025, 1, 1), today], today, _ms(today), 1)
    assert plan.archive_days == (date(2024, 12, 31),)


def test_rows_are_pruned_before_now_minus_retention_days() -> None:
    now_ms = 1_750_000_000_000
    assert prune_before_ms(now_ms, 30) == now_ms - 30 * DAY_MS
    assert plan_retention([], date(2025, 6, 15), now_ms, 7).prune_before_ms == now_ms - 7 * DAY_MS


def test_a_retention_below_one_day_is_refused() -> None:
    with pytest.raises(ValueError, match="at least 1"):
        prune_before_ms(0, 0)


@pytest.mark.parametrize(
    ("name", "day"),
    [
        ("critic-20250301.tsv", date(2025, 3, 1)),
        ("events-20250301.jsonl", date(2025, 3, 1)),
        ("diagnostics-20241231.log", date(2024, 12, 31)),
        ("clusters-20250102.json", date(2025, 1, 2)),
        ("critic-20250230.tsv", None),
        ("critic-20250301.tsv.gz", None),
        ("notes-20250301.txt", None),
    ],
)
def test_day_files_are_recognised_by_their_name(name: str, day: date | None) -> None:
    assert day_of_file_name(name) == day


def test_archiving_gzips_every_file_of_the_day_and_removes_the_original(tmp_path: Path) -> None:
    files = DailyFiles(tmp_path / "critic", tz=UTC)
    old, kept = date(2025, 1, 1), date(2025, 2, 15)
    files.append_record(record("old", timestamp_ms=_ms(old)))
    files.append_event({"kind": "started"}, _ms(old))
    files.append_diagnostic("hook seen", _ms(old))
    files.append_record(record("kept", timestamp_ms=_ms(kept)))
    plan = plan_retention(files.file_days(), date(2025, 2, 15), _ms(kept), 30)
    archives = files.archive(plan.archive_days)
    assert sorted(path.name for path in archives) == [
        "critic-20250101.tsv.gz", "diagnostics-20250101.log.gz", "events-20250101.jsonl.gz",
    ]  # fmt: skip
    assert files.file_days() == [kept]
    with gzip.open(tmp_path / "critic" / "archive" / "critic-20250101.tsv.gz", "rt") as packed:
        assert packed.read().splitlines()[1].startswith("old\t")
    assert stat.S_IMODE((tmp_path / "critic" / "archive").stat().st_mode) == 0o700
    assert all(stat.S_IMODE(path.stat().st_mode) == 0o600 for path in archives)


def test_day_files_are_private_and_records_go_to_the_file_of_their_day(tmp_path: Path) -> None:
    files = DailyFiles(tmp_path / "critic", tz=UTC)
    files.append_record(record("a", timestamp_ms=_ms(date(2025, 5, 1))))
    files.append_record(record("b", timestamp_ms=_ms(date(2025, 5, 2))))
    assert stat.S_IMODE((tmp_path / "critic").stat().st_mode) == 0o700
    for name in ("critic-20250501.tsv", "critic-20250502.tsv"):
        assert stat.S_IMODE((tmp_path / "critic" / name).stat().st_mode) == 0o600
    assert [item.record_id for item in files.read_day(date(2025, 5, 2))] == ["b"]


def test_a_record_line_round_trips_tabs_newlines_backslashes_and_its_embedding() -> None:
    vector = random_unit(np.random.default_rng(4), 1)[0]
    item = replace(
        record("t1", vector, command_line='printf "a\\tb\\n" \\\\ \tx', error_message="line 1\nline 2\r\n"),
        summary="back\\slash",
        redactions=2,
    )
    line = encode_record(item)
    assert line.count("\n") == 1 and line.count("\t") == 14
    assert decode_record(line) == replace(item, embedding=tuple(float(v) for v in vector.astype(np.float32)))


def test_the_last_line_of_a_record_wins_and_a_torn_line_is_skipped(tmp_path: Path) -> None:
    files = DailyFiles(tmp_path, tz=UTC)
    vector = random_unit(np.random.default_rng(5), 1)[0]
    files.append_record(record("a"))
    files.append_record(record("b"))
    files.append_record(record("a", vector))
    files.close()
    with (
        tmp_path / f"critic-{datetime.fromtimestamp(record('a').timestamp_ms / 1000, UTC):%Y%m%d}.tsv"
    ).open("a") as f:
        f.write("c\t17500")  # a crash in the middle of a line
    day = files.day_of(record("a").timestamp_ms)
    read = files.read_day(day)
    assert [item.record_id for item in read] == ["a", "b"]
    assert len(read[0].embedding) == 384
