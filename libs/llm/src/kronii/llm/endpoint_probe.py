"""Whether a configured model endpoint answers, for a service's readiness: one cheap request (GET
`<base>/v1/models`) in the background every few seconds, its result kept, so that /readyz and `kronii
status` read it at once and never wait on the model. Any HTTP answer (200, 401, 404...) means the
server is there; no connection or no answer within the timeout means it is not."""

from __future__ import annotations

import asyncio
import contextlib
import time

import httpx
from kronii.foundation.urls import redact_url
from kronii.runtime.spec import DependencyStatus

__all__ = ["CHECK_EVERY_SECS", "EndpointProbe"]

CHECK_EVERY_SECS = 5.0
CHECK_TIMEOUT_SECS = 2.0


def models_url(base_url: str) -> str:
    base = base_url.rstrip("/").removesuffix("/v1")
    return f"{base}/v1/models"


class EndpointProbe:
    def __init__(
        self,
        base_url: str,
        *,
        every_secs: float = CHECK_EVERY_SECS,
        timeout_secs: float = CHECK_TIMEOUT_SECS,
    ) -> None:
        self.base_url = base_url
        self.shown_url = redact_url(base_url)
        self.every_secs = every_secs
        self.timeout_secs = timeout_secs
        self.answers: bool | None = None  # None: not asked yet
        self.reason = ""
        self.checked_at = 0.0
        self._task: asyncio.Task[None] | None = None

    async def check(self) -> bool:
        """Ask once; remember and return whether the endpoint answered."""
        try:
            async with httpx.AsyncClient(timeout=self.timeout_secs, trust_env=False) as client:
                await client.get(models_url(self.base_url))
            self.answers, self.reason = True, ""
        except (httpx.HTTPError, OSError) as error:
            self.answers, self.reason = False, _reason(error, self.timeout_secs)
        self.checked_at = time.monotonic()
        return self.answers

    async def _keep_checking(self) -> None:
        while True:
            await self.check()
            await asyncio.sleep(self.every_secs)

    def start(self) -> None:
        if self._task is None:
            self._task = asyncio.create_task(self._keep_checking(), name="model-endpoint-probe")

    async def stop(self) -> None:
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task

    def status(self) -> DependencyStatus:
        # Not required: the service works without its model (the pipeline's rules floor every role; a
        # plan says the model did not answer), and a model server started after `kronii up` must not
        # stop the mesh at its readiness wait. /readyz and `kronii status` still name it as not ready.
        if self.answers is None:
            return DependencyStatus(
                False, f"the model endpoint at {self.shown_url} has not been reached yet", required=False
            )
        if self.answers:
            return DependencyStatus(True, f"the model endpoint at {self.shown_url} answers", required=False)
        return DependencyStatus(
            False, f"the model endpoint at {self.shown_url} does not answer ({self.reason})", required=False
        )


def _reason(error: Exception, timeout: float) -> str:
    if isinstance(error, httpx.TimeoutException):
        return f"no answer within {timeout:.0f} s"
    cause: BaseException | None = error
    while cause is not None:  # httpx wraps the socket's error
        if isinstance(cause, ConnectionRefusedError) or "refused" in str(cause).lower():
            return "connection refused"
        cause = cause.__cause__ or cause.__context__
    if isinstance(error, httpx.ConnectError):
        return "cannot connect"
    return type(error).__name__
