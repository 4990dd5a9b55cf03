"""NATS request/reply with protobuf payloads. The shared Bus publishes and subscribes; answering a
request needs the raw message's reply subject, so this helper subscribes on the Bus's client."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import TypeVar

from google.protobuf.message import DecodeError, Message
from kronii.common.bus import TYPE_HEADER, Bus
from nats.aio.msg import Msg
from nats.aio.subscription import Subscription

__all__ = ["serve_requests"]

log = logging.getLogger(__name__)

Req = TypeVar("Req", bound=Message)


async def serve_requests(
    bus: Bus,
    subject: str,
    request_type: type[Req],
    handler: Callable[[Req], Awaitable[Message]],
    *,
    queue: str,
    on_undecodable: Callable[[str], Message],
) -> Subscription:
    """Answer each request on `subject` with `handler(request)`; an undecodable payload is answered
    with `on_undecodable(reason)` so the caller is not left waiting for a timeout."""

    async def on_message(msg: Msg) -> None:
        request = request_type()
        try:
            request.ParseFromString(msg.data)
            response = await handler(request)
        except DecodeError:
            response = on_undecodable(f"the payload is not a {request_type.DESCRIPTOR.full_name}")
        except Exception:
            log.exception("answering a request on %s failed", subject)
            return
        if msg.reply:
            headers = {TYPE_HEADER: response.DESCRIPTOR.full_name}
            await bus.client.publish(msg.reply, response.SerializeToString(), headers=headers)

    return await bus.client.subscribe(subject, queue=queue, cb=on_message)
