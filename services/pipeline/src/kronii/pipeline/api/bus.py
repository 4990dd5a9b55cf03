"""Every NATS message the pipeline takes: sensor activity, plugin events, scheduler Ticks and
kronii.pipeline.trigger as triggers; notices other kronii services compose
(kronii.pipeline.notice); the input broker's word on the desktop (kronii.broker.control); plugin
registrations (kronii.plugin.register). Each handler decodes the message, builds the core's
command and calls PipelineOperations."""

from __future__ import annotations

import logging

from google.protobuf.message import Message
from kronii.broker.v1 import broker_pb2 as bpb
from kronii.desktop.hold import DesktopHold
from kronii.pipeline.api.convert import notice_from_message, registration_from_message, trigger_from_message
from kronii.pipeline.api.source import OperationsSource
from kronii.pipeline.v1 import pipeline_pb2 as pb
from kronii.stores import subjects
from kronii.stores.bus import Bus
from nats.aio.subscription import Subscription

__all__ = ["BusHandlers"]

log = logging.getLogger(__name__)


class BusHandlers:
    def __init__(self, operations: OperationsSource) -> None:
        self._operations = operations

    async def subscribe(self, bus: Bus) -> list[Subscription]:
        return [
            await bus.subscribe_any(subjects.ACTIVITY_ALL, self.on_trigger),
            await bus.subscribe(subjects.PLUGIN_EVENT, self.on_trigger),
            await bus.subscribe(subjects.SCHEDULER_TICK, self.on_trigger),
            await bus.subscribe(subjects.PIPELINE_TRIGGER, self.on_trigger),
            await bus.subscribe(subjects.PIPELINE_NOTICE, self.on_notice),
            await bus.subscribe(subjects.BROKER_CONTROL, self.on_control),
            # One pipeline replica at a time stores a registration.
            await bus.subscribe(subjects.PLUGIN_REGISTER, self.on_register, queue="pipeline-registry"),
        ]

    async def on_trigger(self, subject: str, message: Message) -> None:
        command = trigger_from_message(message)
        if command is None:
            return
        try:
            await self._operations().submit(command)
        except ValueError as error:
            log.warning("dropped a trigger from %s: %s", subject, error)

    async def on_notice(self, _subject: str, message: pb.Notice) -> None:
        operations = self._operations()
        try:
            notice = notice_from_message(message, operations.now_ms())
        except ValueError as error:
            operations.count_invalid_notice(message.source)
            log.warning("dropped a notice from %r: %s", message.source[:64], error)
            return
        await operations.receive_notice(notice)

    async def on_control(self, _subject: str, message: bpb.ControlChanged) -> None:
        self._operations().desktop_changed(DesktopHold.from_message(message))

    async def on_register(self, _subject: str, message: pb.PluginRegistration) -> None:
        await self._operations().register_plugin(registration_from_message(message))
