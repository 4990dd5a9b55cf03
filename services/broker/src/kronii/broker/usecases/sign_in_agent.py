"""Agents' Ed25519 sign-in: a one-time nonce for a registered agent, then its signature over it for
a session token."""

from __future__ import annotations

from kronii.broker.core.commands import SignInCommand
from kronii.broker.core.results import AgentSession, SignInChallenge
from kronii.broker.ports import AgentSignIn

__all__ = ["SignInAgent"]


class SignInAgent:
    def __init__(self, sign_in: AgentSignIn) -> None:
        self._sign_in = sign_in

    async def begin(self, client_id: str) -> SignInChallenge:
        return await self._sign_in.begin(client_id)

    async def complete(self, command: SignInCommand) -> AgentSession:
        return await self._sign_in.authenticate(command.challenge_id, command.client_id, command.signature)
