"""The plugin protocol on NATS, so a plugin can run in the pipeline's process or in its own.

A PluginHost serves one plugin: it announces the plugin's registration on `kronii.plugin.register`
(at start and then periodically, so a pipeline that starts later still learns of it), answers
snapshot requests on `kronii.plugin.snapshot.<app_id>` and publishes the plugin's events on
`kronii.plugin.event.<app_id>`. The pipeline's side is request_snapshot() and
serve_registrations()."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable, Mapping
from typing import Protocol

from google.protobuf.message import DecodeError
from kronii.pipeline.v1 import pipeline_pb2 as pb
from kronii.stores import subjects
from kronii.stores.bus import Bus
from nats.aio.subscription import Subscription
from nats.errors import NoRespondersError
from nats.errors import TimeoutError as NatsTimeoutError

__all__ = ["Plugin", "PluginHost", "PluginUnavailable", "request_snapshot", "serve_registrations"]

log = logging.getLogger(__name__)


class Plugin(Protocol):
    @property
    def registration(self) -> pb.PluginRegistration: ...

    async def snapshot(self, request: pb.PluginSnapshotRequest) -> pb.PluginSnapshot: ...


class PluginUnavailable(RuntimeError):
    """No plugin answered the snapshot request in time, or its answer was unreadable."""


class PluginHost:
    def __init__(
        self,
        bus: Bus,
        plugin: Plugin,
        *,
        announce_every_secs: float = 60.0,
        snapshot_timeout_secs: float = 5.0,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self._bus = bus
        self._plugin = plugin
        self._app_id = plugin.registration.app_id
        subjects.PLUGIN_SNAPSHOT.subject(self._app_id)  # an app_id must be a valid subject token
        self._announce_every_secs = announce_every_secs
        self._snapshot_timeout_secs = snapshot_timeout_secs
        self._clock = clock
        self._subscription: Subscription | None = None
        self._announcer: asyncio.Task[None] | None = None

    @property
    def app_id(self) -> str:
        return self._app_id

    async def start(self) -> None:
        # A queue group: two copies of one plugin answer each request once between them.
        self._subscription = await self._bus.serve(
            subjects.PLUGIN_SNAPSHOT,
            self._answer,
            self._app_id,
            queue=f"plugin-{self._app_id}",
            on_undecodable=self._undecodable,
        )
        await self.announce()
        self._announcer = asyncio.get_running_loop().create_task(self._announce_periodically())

    async def stop(self) -> None:
        if self._announcer is not None:
            self._announcer.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._announcer
            self._announcer = None
        if self._subscription is not None:
            with contextlib.suppress(Exception):  # the connection may already be closing
                await self._subscription.unsubscribe()
            self._subscription = None

    async def announce(self) -> None:
        registration = pb.PluginRegistration()
        registration.CopyFrom(self._plugin.registration)
        registration.at.FromNanoseconds(round(self._clock() * 1e9))
        await self._bus.publish(subjects.PLUGIN_REGISTER, registration)

    async def publish_event(self, kind: str, attributes: Mapping[str, str] | None = None) -> None:
        event = pb.PluginEvent(app_id=self._app_id, kind=kind, attributes=dict(attributes or {}))
        event.at.FromNanoseconds(round(self._clock() * 1e9))
        await self._bus.publish(subjects.PLUGIN_EVENT, event, self._app_id)

    async def _announce_periodically(self) -> None:
        while True:
            await asyncio.sleep(self._announce_every_secs)
            try:
                await self.announce()
            except Exception as error:  # the bus reconnects on its own; try again next time
                log.warning("could not announce plugin %s: %s", self._app_id, error)

    def _undecodable(self, _reason: str) -> pb.PluginSnapshot:
        return pb.PluginSnapshot(app_id=self._app_id, error="the snapshot request could not be decoded")

    async def _answer(self, request: pb.PluginSnapshotRequest) -> pb.PluginSnapshot:
        try:
            return await asyncio.wait_for(self._plugin.snapshot(request), self._snapshot_timeout_secs)
        except TimeoutError:
            error = f"the plugin took longer than {self._snapshot_timeout_secs:.1f} s"
        except Exception as failure:
            log.exception("plugin %s failed to take a snapshot", self._app_id)
            error = f"the plugin failed: {type(failure).__name__}"
        return pb.PluginSnapshot(app_id=self._app_id, detail=request.detail, error=error)


async def request_snapshot(
    bus: Bus,
    app_id: str,
    detail: pb.SnapshotDetail.ValueType = pb.SNAPSHOT_DETAIL_SUMMARY,
    *,
    run_id: str = "",
    max_chars: int = 0,
    timeout_secs: float = 2.0,
) -> pb.PluginSnapshot:
    """Ask a plugin for its summary or full data; PluginUnavailable if none answers in time."""
    request = pb.PluginSnapshotRequest(detail=detail, run_id=run_id, max_chars=max_chars)
    try:
        return await bus.request(subjects.PLUGIN_SNAPSHOT, request, app_id, wait_secs=timeout_secs)
    except NoRespondersError:
        raise PluginUnavailable(f"plugin {app_id!r} is not running") from None
    except (NatsTimeoutError, TimeoutError):
        raise PluginUnavailable(f"plugin {app_id!r} did not answer within {timeout_secs:.1f} s") from None
    except DecodeError:
        raise PluginUnavailable(f"plugin {app_id!r} answered with something that is not a snapshot") from None


async def serve_registrations(
    bus: Bus, on_register: Callable[[pb.PluginRegistration], Awaitable[None]]
) -> Subscription:
    """Hand every registration on `kronii.plugin.register` to `on_register` (e.g. a PluginStore's
    register with the clock), one pipeline replica at a time."""

    async def handle(_subject: str, registration: pb.PluginRegistration) -> None:
        await on_register(registration)

    return await bus.subscribe(subjects.PLUGIN_REGISTER, handle, queue="pipeline-registry")
