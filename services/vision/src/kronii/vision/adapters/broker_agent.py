"""The input broker, as the vision engine's agent client: the shared BrokerClient (kronii.agents.
broker_client: sign-in with the engine's Ed25519 key, lease, safe points, input under the lease), run
in a worker thread so the event loop never waits on the broker.

What this adapter adds is the engine's reading of the answers: a session token the broker no longer
knows is replaced by signing in again, once; a safe point's STOP that the person did not ask for
(their own input ended the lease) is TAKEN_BACK; a lease the engine already held when a plan began
(the person's `kronii control grant vision`) is theirs, so the plan's end does not give it back
early (it ends when it runs out or the person takes the desktop); and every refusal (not registered, nobody granted,
the person took the desktop back, the broker down) is LeaseRefused with the broker's own sentence."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from kronii.agents.broker_client import BAD_KEY, UNREACHABLE, BrokerClient, BrokerError, InputResult
from kronii.vision.ports import LeaseRefused
from kronii.vision.settings import VisionSettings

__all__ = ["BrokerAgent", "broker_url"]

T = TypeVar("T")


class BrokerAgent:
    def __init__(self, url: str, client_id: str, key_path: Path, *, timeout: float = 5.0) -> None:
        self._client = BrokerClient(url, timeout=timeout)
        self._client_id = client_id
        self._key_path = key_path
        self._signed_in = False
        self._persons_grant = False

    async def acquire(self, lease_seconds: int) -> None:
        self._persons_grant = await asyncio.to_thread(self._signed, lambda: self._acquire(lease_seconds))

    def _acquire(self, lease_seconds: int) -> bool:
        """Take the lease; True when the desktop was already held for the engine (the person's grant:
        the broker answers the acquire with that lease, as it was granted)."""
        held = self._client.state().held_by(self._client_id)
        self._client.acquire(lease_seconds)
        return held

    async def safe_point(self, step: str, sequence: int) -> str:
        decision = await asyncio.to_thread(self._signed, lambda: self._client.safe_point(step, sequence))
        if decision.action == "STOP" and decision.state.user_intent != "STOP_NOW":
            return "TAKEN_BACK"  # the person's own input ended the lease: not a STOP they asked for
        return decision.action

    async def click(self, x: int, y: int) -> None:
        self._injected(await asyncio.to_thread(self._signed, lambda: self._client.click(x, y)))

    async def type_text(self, text: str) -> None:
        self._injected(await asyncio.to_thread(self._signed, lambda: self._client.type_text(text)))

    async def release(self) -> None:
        if self._persons_grant:
            return  # the person's grant, for as long as they gave it: not the engine's to end
        await asyncio.to_thread(self._signed, self._client.release)

    def _signed(self, call: Callable[[], T]) -> T:
        """`call` with a session: signed in first if need be, and again once if the broker has
        forgotten the token (it restarted, or the session expired)."""
        try:
            if not self._signed_in:
                self._sign_in()
            try:
                return call()
            except BrokerError as error:
                if error.status != 401:
                    raise
            self._sign_in()
            return call()
        except BrokerError as error:
            raise LeaseRefused(_sentence(error)) from None

    def _sign_in(self) -> None:
        self._signed_in = False
        try:
            self._client.sign_in(self._client_id, self._key_path)
        except BrokerError as error:
            if error.code == BAD_KEY:
                raise LeaseRefused(
                    f"the vision engine's key {self._key_path} cannot be read: {error}"
                ) from None
            if error.status != 401:
                raise
            raise LeaseRefused(
                f"the input broker does not accept the vision engine's key ({_sentence(error)}): register "
                "it once as the person at the desktop, `kronii vision setup` prints the command"
            ) from None
        self._signed_in = True

    @staticmethod
    def _injected(result: InputResult) -> None:
        if not result.injected:
            raise LeaseRefused(f"the broker dropped the input ({result.dropped or 'no reason'})")


def _sentence(error: BrokerError) -> str:
    if error.code == UNREACHABLE:
        return f"{error}: start it with `kronii up`"
    return f"{error} (HTTP {error.status})" if error.status else str(error)


def broker_url(settings: VisionSettings) -> str:
    if settings.broker_url:
        return settings.broker_url
    return (
        os.environ.get("KRONII_BROKER_URL")
        or f"http://127.0.0.1:{os.environ.get('KRONII_BROKER_HTTP_PORT', '8106')}"
    )
