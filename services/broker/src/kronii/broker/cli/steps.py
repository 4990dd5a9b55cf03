"""Automation as named steps with the broker's safe points between them (seed 004, "Safe Interrupt
Semantics"): the third adapter approach, for automation that can be rewritten around the client.

Before each step the runner asks the broker's safe point: CONTINUE runs the step, PAUSE waits for
the person to grant the desktop again (or for the token to be cancelled) and asks again, STOP
cancels the token and raises Stopped with nothing more run. Inside a step, an input the broker
dropped because the person took over (user_control), stopped the agent (stopped) or revoked the
lease it was sent under (stale_epoch) cancels the token and raises Stopped from that input call, so
the rest of the step does not run either. While steps run, the lease is renewed at half its length.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from kronii.agents.broker_client import BrokerClient, BrokerError, InputResult, SessionState

__all__ = ["TAKEOVER_DROPS", "CancellationToken", "Step", "StepRunner", "Stopped"]

# Drop reasons that mean the person has the desktop: the automation must not go on.
TAKEOVER_DROPS = frozenset({"user_control", "stopped", "stale_epoch"})


class Stopped(Exception):
    """The run ended before its last step: ``reason`` says why, ``completed`` names the steps that ran."""

    def __init__(self, reason: str, completed: Sequence[str] = ()) -> None:
        super().__init__(f"automation stopped: {reason}")
        self.reason = reason
        self.completed = list(completed)


class CancellationToken:
    """Cancelled once, by the runner or by anyone holding it (a signal handler, another thread)."""

    def __init__(self) -> None:
        self._event = threading.Event()
        self.reason = ""

    @property
    def cancelled(self) -> bool:
        return self._event.is_set()

    def cancel(self, reason: str) -> None:
        if not self._event.is_set():
            self.reason = reason
            self._event.set()

    def wait(self, timeout: float) -> bool:
        """Sleep up to ``timeout`` seconds; True as soon as the token is cancelled."""
        return self._event.wait(timeout)

    def raise_if_cancelled(self) -> None:
        if self._event.is_set():
            raise Stopped(self.reason)


@dataclass(frozen=True)
class Step:
    name: str
    run: Callable[[BrokerClient], object]


class _Renewer:
    """Renews the lease at half its length until stopped or refused (a refusal means the lease is
    gone: the next safe point or input says what happened)."""

    def __init__(self, client: BrokerClient, lease_seconds: int, token: CancellationToken) -> None:
        self.client = client
        self.lease_seconds = lease_seconds
        self.token = token
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="broker-lease-renewal", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None

    def _loop(self) -> None:
        while not self._stop.wait(self.lease_seconds / 2) and not self.token.cancelled:
            try:
                self.client.renew(self.lease_seconds)
            except BrokerError:
                return


class StepRunner:
    """Runs ``steps`` in order under a lease on ``client``'s session. ``client`` must be signed in;
    when it does not hold a lease yet, ``run`` acquires one (which the broker allows only where no
    person is watching; elsewhere its refusal, a BrokerError, says to ask for a grant). The lease is
    released when the run ends, however it ends, unless ``release_when_done`` is False."""

    def __init__(
        self,
        client: BrokerClient,
        steps: Sequence[Step],
        *,
        token: CancellationToken | None = None,
        lease_seconds: int = 30,
        poll_interval: float = 0.2,
        release_when_done: bool = True,
    ) -> None:
        self.client = client
        self.steps = list(steps)
        self.token = token or CancellationToken()
        self.lease_seconds = lease_seconds
        self.poll_interval = poll_interval
        self.release_when_done = release_when_done
        self.completed: list[str] = []
        self._sequence = 0
        self._renewer = _Renewer(client, lease_seconds, self.token)

    def run(self) -> list[str]:
        """The names of the steps run (all of them), or Stopped naming those that ran."""
        self._hold_lease()
        self.client.on_input = self._watch_input
        self.client.before_input = self.token.raise_if_cancelled
        self._renewer.start()
        try:
            for step in self.steps:
                self._wait_for_go(step.name)
                step.run(self.client)
                self.completed.append(step.name)
        except Stopped as stopped:
            raise Stopped(stopped.reason, self.completed) from None
        finally:
            self._renewer.stop()
            self.client.on_input = None
            self.client.before_input = None
            # Also after a stop or a failing step: a lease the run no longer uses goes back at once,
            # not when it runs out (the broker refuses quietly when it has already taken it back).
            if self.release_when_done:
                self._release_quietly()
        return list(self.completed)

    def _hold_lease(self) -> None:
        state = self.client.state()
        if state.held_by(self.client.client_id):
            self.client.epoch = state.epoch
            return
        self.client.acquire(self.lease_seconds)

    def _wait_for_go(self, step: str) -> None:
        while True:
            self.token.raise_if_cancelled()
            self._sequence += 1
            decision = self.client.safe_point(step, self._sequence)
            if decision.action == "CONTINUE":
                return
            if decision.action == "STOP":
                self.token.cancel("the broker answered STOP at a safe point")
                self.token.raise_if_cancelled()
            self._renewer.stop()
            self._wait_for_grant()
            self._renewer.start()

    def _wait_for_grant(self) -> None:
        """Paused at a safe point: poll until the person grants this agent the desktop again."""
        while not self.token.wait(self.poll_interval):
            state = self.client.state()
            if state.held_by(self.client.client_id):
                self.client.epoch = state.epoch
                return
            if _stopped_while_paused(state):
                self.token.cancel("the person stopped the agent while it was paused")
        self.token.raise_if_cancelled()

    def _watch_input(self, result: InputResult) -> None:
        if not result.injected and result.dropped in TAKEOVER_DROPS:
            self.token.cancel(f"the broker dropped input ({result.dropped}): the person took the desktop")
            self.token.raise_if_cancelled()

    def _release_quietly(self) -> None:
        try:
            self.client.release()
        except BrokerError:
            pass  # already released: the person took the desktop back or the lease ran out


def _stopped_while_paused(state: SessionState) -> bool:
    return state.agent_status == "STOPPED" or state.user_intent == "STOP_NOW"
