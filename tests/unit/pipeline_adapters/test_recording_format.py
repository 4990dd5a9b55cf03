"""The recorded activity format: JSON lines of bus events with subject and monotonic offset, and
replay at real speed or as fast as possible."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from google.protobuf.message import Message
from kronii.activity.v1 import activity_pb2 as apb
from kronii.pipeline.adapters.recording import (
    RecordedEvent,
    RecordingError,
    encode_line,
    read_recording,
    replay,
)
from kronii.stores import subjects


def focus(title: str) -> apb.FocusChanged:
    return apb.FocusChanged(
        current=apb.Focus(app_name="code", wm_class="Code", title=title, window_id=7), change="app"
    )


def test_a_line_round_trips_subject_offset_and_message(tmp_path: Path) -> None:
    path = tmp_path / "rec.jsonl"
    lines = [
        encode_line(0, subjects.FOCUS_CHANGED.subject(), focus("main.py")),
        encode_line(250, subjects.LOCK_CHANGED.subject(), apb.LockChanged(locked=True, source="screensaver")),
    ]
    path.write_text("\n".join(lines) + "\n\n", encoding="utf-8")
    events = list(read_recording(path))
    assert [(e.offset_ms, e.subject) for e in events] == [
        (0, "kronii.activity.focus_changed"),
        (250, "kronii.activity.lock_changed"),
    ]
    assert events[0].message == focus("main.py")
    _, _, message = events[1]
    assert isinstance(message, apb.LockChanged) and message.locked


def test_the_format_is_the_one_the_benchmark_recorder_writes() -> None:
    data = json.loads(encode_line(12, "kronii.activity.focus_changed", focus("a")))
    assert set(data) == {"offset_ms", "subject", "type", "event"}
    assert data["type"] == "kronii.activity.v1.FocusChanged"
    assert data["event"]["current"]["wm_class"] == "Code"  # proto field names


@pytest.mark.parametrize(
    ("line", "reason"),
    [
        ("{not json", "line 2: not JSON"),
        (
            '{"offset_ms": -1, "subject": "s", "type": "kronii.activity.v1.LockChanged", "event": {}}',
            "offset_ms",
        ),
        ('{"offset_ms": 5, "subject": "s", "type": "no.such.Type", "event": {}}', "unknown message type"),
        (
            '{"offset_ms": 5, "subject": "s", "type": "kronii.activity.v1.LockChanged", "event": {"nope": 1}}',
            "nope",
        ),
        (
            '{"offset_ms": 1, "subject": "s", "type": "kronii.activity.v1.LockChanged", "event": {}}',
            "goes back",
        ),
    ],
)
def test_a_bad_line_is_reported_with_its_number(tmp_path: Path, line: str, reason: str) -> None:
    path = tmp_path / "rec.jsonl"
    path.write_text(encode_line(3, "s", apb.LockChanged()) + "\n" + line + "\n", encoding="utf-8")
    with pytest.raises(RecordingError, match=reason) as raised:
        list(read_recording(path))
    assert str(raised.value).startswith("line 2:")


class FakeTime:
    def __init__(self) -> None:
        self.now = 100.0
        self.sleeps: list[float] = []

    def clock(self) -> float:
        return self.now

    async def sleep(self, secs: float) -> None:
        self.sleeps.append(round(secs, 6))
        self.now += secs


def events() -> list[RecordedEvent]:
    return [RecordedEvent(o, f"kronii.activity.s{o}", apb.LockChanged()) for o in (0, 1000, 1500)]


async def test_replay_in_real_time_waits_for_each_offset_at_the_given_speed() -> None:
    time = FakeTime()
    published: list[tuple[str, float]] = []

    async def publish(subject: str, message: Message) -> None:
        published.append((subject, time.now))

    count = await replay(events(), publish, speed=2.0, clock=time.clock, sleep=time.sleep)
    assert count == 3
    assert published == [
        ("kronii.activity.s0", 100.0),
        ("kronii.activity.s1000", 100.5),
        ("kronii.activity.s1500", 100.75),
    ]
    assert time.sleeps == [0.5, 0.25]


async def test_replay_as_fast_as_possible_never_sleeps() -> None:
    time = FakeTime()
    subjects_seen: list[str] = []

    async def publish(subject: str, message: Message) -> None:
        subjects_seen.append(subject)

    assert await replay(events(), publish, speed=None, clock=time.clock, sleep=time.sleep) == 3
    assert time.sleeps == [] and len(subjects_seen) == 3
