"""The message bus: NATS with protobuf payloads and OpenTelemetry trace context in headers.

nats-py reconnects on its own and replays subscriptions on the new connection; the Bus only has to
ask for unlimited reconnects and report the connection state.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import nats
from google.protobuf import descriptor_pool, message_factory
from google.protobuf.message import DecodeError, Message
from kronii.foundation.telemetry import CommonMetrics
from kronii.foundation.urls import redact_url
from kronii.stores.subjects import RequestTopic, Topic, topic_for
from nats.aio.client import Client
from nats.aio.msg import Msg
from nats.aio.subscription import Subscription
from nats.js.api import StreamConfig
from opentelemetry import propagate, trace
from opentelemetry.trace import SpanKind
from prometheus_client import Counter

__all__ = ["TYPE_HEADER", "Bus", "BusError", "JetStreamUnavailable", "decode_message"]

log = logging.getLogger(__name__)
_tracer = trace.get_tracer(__name__)

TYPE_HEADER = "Kronii-Type"
M = TypeVar("M", bound=Message)
R = TypeVar("R", bound=Message)


class BusError(RuntimeError):
    pass


class JetStreamUnavailable(BusError):
    """The NATS server answers but has no JetStream: a setting to change, not a failure to retry."""

    def __init__(self, url: str) -> None:
        super().__init__(
            f"the NATS server at {redact_url(url)} has no JetStream; enable it (nats-server -js) "
            "or unset KRONII_NATS_URL to use the embedded one"
        )


def decode_message(type_name: str, payload: bytes) -> Message:
    """Decode a payload by its protobuf full name (the Kronii-Type header)."""
    try:
        descriptor = descriptor_pool.Default().FindMessageTypeByName(type_name)
    except KeyError:
        raise BusError(f"unknown message type {type_name!r}") from None
    message = message_factory.GetMessageClass(descriptor)()
    message.ParseFromString(payload)
    return message


class Bus:
    def __init__(self, service: str, metrics: CommonMetrics | None = None) -> None:
        self.service = service
        self._metrics = metrics
        self._client: Client | None = None
        self._closing = False
        self._url = ""
        # None until a connect has asked the server (or when it did not answer in time).
        self._jetstream: bool | None = None

    @property
    def connected(self) -> bool:
        return self._client is not None and self._client.is_connected

    @property
    def client(self) -> Client:
        if self._client is None:
            raise BusError("the bus is not connected")
        return self._client

    async def connect(self, url: str, *, connect_timeout: float = 5.0, wait_for_server: bool = True) -> None:
        """Connect, and reconnect without limit whenever the connection drops. A service waits for a
        server that is not up yet; a command (`wait_for_server=False`) is told at once, by an
        OSError, that nothing listens at `url`."""
        if not wait_for_server:
            await _listens(url, connect_timeout)

        async def on_disconnect() -> None:
            if not self._closing:
                log.warning("bus disconnected; reconnecting")

        async def on_reconnect() -> None:
            log.info("bus reconnected")

        async def on_error(error: Exception) -> None:
            log.warning("bus error: %s", error)

        self._closing = False
        self._client = await nats.connect(
            servers=[url],
            name=f"kronii-{self.service}",
            connect_timeout=connect_timeout,
            allow_reconnect=True,
            max_reconnect_attempts=-1,
            reconnect_time_wait=0.5,
            disconnected_cb=on_disconnect,
            reconnected_cb=on_reconnect,
            error_cb=on_error,
        )
        self._url = url
        self._jetstream = await self._probe_jetstream()

    @property
    def jetstream(self) -> bool | None:
        """Whether the server has JetStream, as asked at connect; None when it did not answer in time."""
        return self._jetstream

    async def _probe_jetstream(self) -> bool | None:
        try:
            await self.client.jetstream(timeout=2.0).account_info()
        except (nats.errors.NoRespondersError, nats.js.errors.ServiceUnavailableError):
            return False
        except TimeoutError:
            log.warning("the NATS server did not say within 2 s whether it has JetStream")
            return None
        return True

    def require_jetstream(self) -> None:
        """Raise JetStreamUnavailable (its message is the sentence to show) when the server has none."""
        if self._jetstream is False:
            raise JetStreamUnavailable(self._url)

    async def close(self) -> None:
        self._closing = True
        if self._client is not None and not self._client.is_closed:
            # Draining needs a live connection; while reconnecting (the server is being restarted)
            # there is nothing in flight to drain, and nats-py refuses to.
            if self._client.is_connecting or self._client.is_reconnecting:
                await self._client.close()
            else:
                await self._client.drain()
        self._client = None

    async def ensure_stream(self, name: str, subjects: list[str], max_age_secs: float) -> None:
        """Keep a JetStream stream over `subjects` so late consumers can replay events."""
        self.require_jetstream()
        js = self.client.jetstream()
        config = StreamConfig(name=name, subjects=subjects, max_age=max_age_secs)
        try:
            await js.update_stream(config)
        except nats.js.errors.NotFoundError:
            await js.add_stream(config)
        except nats.errors.NoRespondersError:  # the probe timed out, or a reconnect found another server
            raise JetStreamUnavailable(self._url) from None

    async def publish(self, topic: Topic[M], message: M, *tokens: str) -> None:
        """Publish `message` on the topic's subject (its `*`s filled by `tokens`)."""
        _check_payload(topic, message)
        await self._send(topic, topic.subject(*tokens), message)

    async def publish_on(self, subject: str, message: Message) -> None:
        """Publish on a concrete subject (a replayed recording's), checked against its topic."""
        topic = topic_for(subject)
        if topic is None:
            raise ValueError(f"{subject!r} is no subject kronii uses (kronii.stores.subjects)")
        _check_payload(topic, message)
        await self._send(topic, subject, message)

    async def _send(self, topic: Topic[Any], subject: str, message: Message) -> None:
        with _tracer.start_as_current_span(f"publish {topic.pattern}", kind=SpanKind.PRODUCER) as span:
            span.set_attribute("messaging.system", "nats")
            span.set_attribute("messaging.destination.name", subject)
            headers: dict[str, str] = {TYPE_HEADER: message.DESCRIPTOR.full_name}
            propagate.inject(headers)
            await self.client.publish(subject, message.SerializeToString(), headers=headers)
        self._count(self._metrics.bus_published if self._metrics else None, topic)

    async def subscribe(
        self,
        topic: Topic[M],
        handler: Callable[[str, M], Awaitable[None]],
        *tokens: str,
        queue: str = "",
    ) -> Subscription:
        """Call `handler(subject, message)` for each message on the topic (one subject of a family
        when `tokens` are given), inside a span linked to the publisher's."""

        async def on_message(msg: Msg) -> None:
            message = _decode(topic, msg)
            if message is not None:
                await self._dispatch(msg, topic, lambda: handler(msg.subject, message))

        subject = topic.subject(*tokens) if tokens else topic.pattern
        return await self.client.subscribe(subject, queue=queue, cb=on_message)

    async def subscribe_any(
        self, wildcard: str, handler: Callable[[str, Message], Awaitable[None]], *, queue: str = ""
    ) -> Subscription:
        """Subscribe to a wildcard over several topics (e.g. subjects.ACTIVITY_ALL); each message is
        decoded as its subject's topic says. Messages on subjects kronii does not use are dropped."""

        async def on_message(msg: Msg) -> None:
            topic = topic_for(msg.subject)
            message = _decode(topic, msg) if topic is not None else None
            if topic is None:
                log.warning("dropped a message on %s: no topic in kronii.stores.subjects", msg.subject)
            elif message is not None:
                await self._dispatch(msg, topic, lambda: handler(msg.subject, message))

        return await self.client.subscribe(wildcard, queue=queue, cb=on_message)

    async def request(self, topic: RequestTopic[M, R], message: M, *tokens: str, wait_secs: float) -> R:
        """Ask and wait for the one reply. Raises nats' NoRespondersError or TimeoutError when no one
        answers, and DecodeError when the answer is not a `reply_type`."""
        _check_payload(topic, message)
        headers = {TYPE_HEADER: message.DESCRIPTOR.full_name}
        self._count(self._metrics.bus_published if self._metrics else None, topic)
        answer = await self.client.request(
            topic.subject(*tokens), message.SerializeToString(), timeout=wait_secs, headers=headers
        )
        reply = topic.reply_type()
        reply.ParseFromString(answer.data)
        return reply

    async def serve(
        self,
        topic: RequestTopic[M, R],
        handler: Callable[[M], Awaitable[R]],
        *tokens: str,
        queue: str,
        on_undecodable: Callable[[str], R],
    ) -> Subscription:
        """Answer each request on the topic with `handler(request)`; an undecodable request is
        answered with `on_undecodable(reason)` so the caller is not left waiting for a timeout."""

        async def answer(msg: Msg) -> None:
            self._count(self._metrics.bus_received if self._metrics else None, topic)
            request = topic.message_type()
            try:
                request.ParseFromString(msg.data)
                reply = await handler(request)
            except DecodeError:
                reply = on_undecodable(f"the payload is not a {topic.message_type.DESCRIPTOR.full_name}")
            except Exception:
                log.exception("answering a request on %s failed", msg.subject)
                return
            if not isinstance(reply, topic.reply_type):
                log.error("%s", _wrong_type(topic.pattern, topic.reply_type, reply, "reply"))
                return
            if msg.reply:
                headers = {TYPE_HEADER: reply.DESCRIPTOR.full_name}
                await self.client.publish(msg.reply, reply.SerializeToString(), headers=headers)

        subject = topic.subject(*tokens) if tokens else topic.pattern
        return await self.client.subscribe(subject, queue=queue, cb=answer)

    def _count(self, counter: Counter | None, topic: Topic[Any]) -> None:
        # The pattern, never the concrete subject: one series per topic, not one per job or app.
        if counter is not None:
            counter.labels(self.service, topic.pattern).inc()

    async def _dispatch(self, msg: Msg, topic: Topic[Any], call: Callable[[], Awaitable[None]]) -> None:
        context = propagate.extract(dict(msg.headers or {}))
        with _tracer.start_as_current_span(
            f"receive {topic.pattern}", context=context, kind=SpanKind.CONSUMER
        ) as span:
            span.set_attribute("messaging.system", "nats")
            span.set_attribute("messaging.destination.name", msg.subject)
            self._count(self._metrics.bus_received if self._metrics else None, topic)
            try:
                await call()
            except Exception:
                log.exception("handler for %s failed", msg.subject)


def _check_payload(topic: Topic[Any], message: Message) -> None:
    if not isinstance(message, topic.message_type):
        raise TypeError(_wrong_type(topic.pattern, topic.message_type, message, "message"))


def _wrong_type(pattern: str, expected: type[Message], got: object, what: str) -> str:
    name = got.DESCRIPTOR.full_name if isinstance(got, Message) else type(got).__name__
    return (
        f"{pattern} carries {expected.DESCRIPTOR.full_name}, not {name}: "
        f"the {what} was not sent (see kronii.stores.subjects)"
    )


def _decode(topic: Topic[M], msg: Msg) -> M | None:
    """The payload as the topic's type; None (and a warning) when it is not one."""
    sent_as = (msg.headers or {}).get(TYPE_HEADER)
    expected = topic.message_type.DESCRIPTOR.full_name
    if sent_as is not None and sent_as != expected:
        log.warning("dropped a %s on %s, which carries %s", sent_as, msg.subject, expected)
        return None
    message = topic.message_type()
    try:
        message.ParseFromString(msg.data)
    except DecodeError:
        log.warning("dropped an undecodable message on %s", msg.subject)
        return None
    return message


async def _listens(url: str, within_secs: float) -> None:
    """Raise OSError (ConnectionRefusedError, TimeoutError) unless a server accepts a TCP connection at `url`."""
    from urllib.parse import urlsplit

    parts = urlsplit(url)
    _, writer = await asyncio.wait_for(
        asyncio.open_connection(parts.hostname or "127.0.0.1", parts.port or 4222), within_secs
    )
    writer.close()
    with contextlib.suppress(OSError):
        await writer.wait_closed()
