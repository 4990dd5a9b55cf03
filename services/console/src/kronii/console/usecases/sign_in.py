"""Signing in to the console: `kronii console` asks for a one-time link, the browser opens it and gets a
session, and every later request is judged against that session. Every login and refused link is
audited (`console.link`, `console.login`); a session never outlives its idle time."""

from __future__ import annotations

import secrets
from collections.abc import Callable
from dataclasses import dataclass

from kronii.console.core.session import (
    LINK_SENTENCES,
    TOKEN_BYTES,
    LinkVerdict,
    LoginLink,
    Session,
    SessionVerdict,
    judge_link,
    judge_session,
    token_looks_valid,
)
from kronii.console.ports import SessionStore
from kronii.foundation.audit_trail import AuditTrail
from kronii.foundation.clock import Clock
from kronii.foundation.errors import PermissionDenied

__all__ = ["LinkRefused", "SignIn"]

# A used or expired link is remembered this long after it expires, so its 403 says why.
_REMEMBER_SECS = 600.0
# A session's last use is written at most this often (not on every request of a page).
_TOUCH_EVERY_SECS = 30.0


def new_token() -> str:
    return secrets.token_urlsafe(TOKEN_BYTES)


class LinkRefused(PermissionDenied):
    def __init__(self, verdict: LinkVerdict) -> None:
        super().__init__(LINK_SENTENCES[verdict] + "; run `kronii console` for a new one")
        self.verdict = verdict


@dataclass(frozen=True)
class IssuedLink:
    token: str
    expires_in_secs: float


class SignIn:
    def __init__(
        self,
        store: SessionStore,
        clock: Clock,
        record: AuditTrail,
        *,
        link_secs: float,
        idle_secs: float,
        tokens: Callable[[], str] = new_token,
    ) -> None:
        self._store = store
        self._clock = clock
        self._record = record
        self._link_secs = link_secs
        self._idle_secs = idle_secs
        self._tokens = tokens

    async def issue_link(self, actor: str) -> IssuedLink:
        now = self._clock.wall()
        link = LoginLink(self._tokens(), issued_at=now, expires_at=now + self._link_secs)
        await self._store.keep_link(link, forget_after_secs=self._link_secs + _REMEMBER_SECS)
        await self._record(
            actor=actor, action="console.link", outcome="issued", expires_in_secs=self._link_secs
        )
        return IssuedLink(link.token, self._link_secs)

    async def open_session(self, token: str | None, actor: str) -> Session:
        """The session a good link opens; LinkRefused (403) for any other link, audited either way."""
        now = self._clock.wall()
        link = await self._store.claim_link(token, now) if token and token_looks_valid(token) else None
        verdict = judge_link(link, now)
        if verdict is not LinkVerdict.GOOD:
            await self._record(actor=actor, action="console.login", outcome=f"refused_{verdict.value}")
            raise LinkRefused(verdict)
        session = Session(
            self._tokens(), self._tokens(), created_at=now, last_seen=now, idle_secs=self._idle_secs
        )
        await self._store.keep_session(session)
        await self._record(actor=actor, action="console.login", outcome="ok")
        return session

    async def current(self, session_id: str | None) -> tuple[SessionVerdict, Session | None]:
        """The session a cookie names, if it is still good (its last use noted now and then)."""
        if not token_looks_valid(session_id):
            return SessionVerdict.MISSING, None
        assert session_id is not None
        session = await self._store.session(session_id)
        now = self._clock.wall()
        verdict = judge_session(session, now)
        if verdict is not SessionVerdict.GOOD or session is None:
            return verdict, None
        if now - session.last_seen >= _TOUCH_EVERY_SECS:
            session = session.seen(now)
            await self._store.keep_session(session)
        return verdict, session

    async def end(self, session: Session, actor: str) -> None:
        await self._store.end_session(session.session_id)
        await self._record(actor=actor, action="console.logout", outcome="ok")
