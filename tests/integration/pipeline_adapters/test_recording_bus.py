"""record_from_bus writes what appears on kronii.activity.* with subjects and offsets; replaying
the file onto the bus publishes the same events in the same order."""

from __future__ import annotations

import asyncio
from pathlib import Path

from google.protobuf.message import Message
from kronii.activity.v1 import activity_pb2 as apb
from kronii.pipeline.adapters.recording import read_recording, record_from_bus, replay
from kronii.stores import subjects
from kronii.stores.bus import Bus
from kronii.supervisor.v1 import supervisor_pb2 as svpb


async def test_record_then_replay_round_trips_the_activity_stream(bus: Bus, tmp_path: Path) -> None:
    path = tmp_path / "activity.jsonl"
    stop = asyncio.Event()
    recording = asyncio.get_running_loop().create_task(record_from_bus(bus, path, 10.0, stop=stop))
    await asyncio.sleep(0.2)  # subscribed
    focus = apb.FocusChanged(current=apb.Focus(app_name="code", title="main.py"), change="app")
    lock = apb.LockChanged(locked=True, source="screensaver")
    await bus.publish(subjects.FOCUS_CHANGED, focus)
    await asyncio.sleep(0.1)
    await bus.publish(subjects.LOCK_CHANGED, lock)
    await bus.publish(subjects.SUPERVISOR_ACK, svpb.AckTriggerRequest())  # not activity: not recorded
    await bus.client.flush()
    await asyncio.sleep(0.2)
    stop.set()
    assert await recording == 2

    events = list(read_recording(path))
    assert [(e.subject, e.message) for e in events] == [
        ("kronii.activity.focus_changed", focus),
        ("kronii.activity.lock_changed", lock),
    ]
    assert events[1].offset_ms - events[0].offset_ms >= 90

    replayed: asyncio.Queue[tuple[str, Message]] = asyncio.Queue()

    async def collect(subject: str, message: Message) -> None:
        await replayed.put((subject, message))

    subscription = await bus.subscribe_any(subjects.ACTIVITY_ALL, collect)
    await bus.client.flush()
    assert await replay(events, bus.publish_on, speed=None) == 2
    got = [await asyncio.wait_for(replayed.get(), 5) for _ in range(2)]
    await subscription.unsubscribe()
    assert got == [(e.subject, e.message) for e in events]
