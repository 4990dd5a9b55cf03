"""The recorded activity stream behind `kronii record` and `kronii replay FILE`.

One JSON object per line, in the order the events arrived:

    {"offset_ms": 1234, "subject": "kronii.activity.focus_changed",
     "type": "kronii.activity.v1.FocusChanged", "event": {...}}

`offset_ms` is monotonic time since the recording started, `event` the protobuf message as JSON
(google.protobuf.json_format, proto field names) and `type` its full name, so a reader needs no
table of subjects. bench/record_activity.py writes the same format."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Awaitable, Callable, Iterable, Iterator
from pathlib import Path
from typing import Any, NamedTuple, TextIO

import kronii.activity.v1.activity_pb2  # noqa: F401  (registers the activity types for decoding)
from google.protobuf import descriptor_pool, json_format, message_factory
from google.protobuf.message import Message
from kronii.stores import subjects
from kronii.stores.bus import Bus

__all__ = [
    "RecordedEvent",
    "RecordingError",
    "decode_line",
    "encode_line",
    "read_recording",
    "record_from_bus",
    "replay",
]


class RecordingError(ValueError):
    """A recording line that cannot be read; the message names the line."""


class RecordedEvent(NamedTuple):
    offset_ms: int
    subject: str
    message: Message


def encode_line(offset_ms: int, subject: str, message: Message) -> str:
    """One line of a recording, without the newline."""
    line = {
        "offset_ms": offset_ms,
        "subject": subject,
        "type": message.DESCRIPTOR.full_name,
        "event": json_format.MessageToDict(message, preserving_proto_field_name=True),
    }
    return json.dumps(line, ensure_ascii=False)


def _message_class(type_name: str) -> type[Message]:
    try:
        descriptor = descriptor_pool.Default().FindMessageTypeByName(type_name)
    except KeyError:
        raise ValueError(f"unknown message type {type_name!r}") from None
    return message_factory.GetMessageClass(descriptor)


def decode_line(text: str, line_number: int = 0) -> RecordedEvent:
    where = f"line {line_number}: " if line_number else ""
    try:
        data: Any = json.loads(text)
    except json.JSONDecodeError as error:
        raise RecordingError(f"{where}not JSON ({error.msg})") from None
    if not isinstance(data, dict):
        raise RecordingError(f"{where}not a JSON object")
    offset, subject, type_name, event = (data.get(k) for k in ("offset_ms", "subject", "type", "event"))
    if isinstance(offset, bool) or not isinstance(offset, int) or offset < 0:
        raise RecordingError(f"{where}offset_ms must be a whole number of milliseconds, at least 0")
    if not isinstance(subject, str) or not subject:
        raise RecordingError(f"{where}subject is missing")
    if not isinstance(type_name, str) or not isinstance(event, dict):
        raise RecordingError(f"{where}type and event are missing")
    try:
        message = json_format.ParseDict(event, _message_class(type_name)())
    except (ValueError, json_format.ParseError) as error:
        raise RecordingError(f"{where}{error}") from None
    return RecordedEvent(offset, subject, message)


def read_recording(path: str | Path) -> Iterator[RecordedEvent]:
    """The events of a recording in order; RecordingError (with the line number) on a bad line or
    an offset that goes backwards. Blank lines are skipped."""
    last = 0
    with Path(path).open(encoding="utf-8") as handle:
        for number, text in enumerate(handle, start=1):
            if not text.strip():
                continue
            event = decode_line(text, number)
            if event.offset_ms < last:
                raise RecordingError(f"line {number}: offset_ms {event.offset_ms} goes back from {last}")
            last = event.offset_ms
            yield event


async def replay(
    events: Iterable[RecordedEvent],
    publish: Callable[[str, Message], Awaitable[None]],
    *,
    speed: float | None = 1.0,
    clock: Callable[[], float] = time.monotonic,
    sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
) -> int:
    """Publish each event at its offset (`speed` 2.0 is twice as fast; None is as fast as
    possible); returns how many were published. Lateness does not accumulate: each event is due
    at start + offset / speed."""
    if speed is not None and speed <= 0:
        raise ValueError("speed must be positive (or None for as fast as possible)")
    started = clock()
    count = 0
    for event in events:
        if speed is not None:
            delay = started + event.offset_ms / 1000 / speed - clock()
            if delay > 0:
                await sleep(delay)
        await publish(event.subject, event.message)
        count += 1
    return count


async def record_from_bus(
    bus: Bus,
    path: str | Path,
    duration: float,
    *,
    subject: str = subjects.ACTIVITY_ALL,
    stop: asyncio.Event | None = None,
    clock: Callable[[], float] = time.monotonic,
    ready: Callable[[], None] | None = None,
) -> int:
    """Write every message on `subject` for `duration` seconds (or until `stop` is set) to `path`;
    returns how many were written. Each line is flushed, so an interrupted recording keeps what
    it had. `ready` is called once the subscription is in place."""
    stop = stop if stop is not None else asyncio.Event()
    sink = await asyncio.to_thread(Path(path).open, "w", encoding="utf-8")
    with sink:
        started = clock()
        count = 0

        async def on_message(received_subject: str, message: Message) -> None:
            nonlocal count
            _write(sink, encode_line(round((clock() - started) * 1000), received_subject, message))
            count += 1

        subscription = await bus.subscribe_any(subject, on_message)
        await bus.client.flush()  # the server has the subscription: nothing published from now is missed
        if ready is not None:
            ready()
        try:
            await asyncio.wait_for(stop.wait(), duration)
        except TimeoutError:
            pass
        finally:
            await subscription.unsubscribe()
        return count


def _write(sink: TextIO, line: str) -> None:
    sink.write(line + "\n")
    sink.flush()
