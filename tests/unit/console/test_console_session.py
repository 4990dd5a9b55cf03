"""The console's sign-in rules (core/session.py) as tables, and the sign-in use case over the memory
store with a ManualClock: a link opens one session, once, within its two minutes; a session lives
while it is used; CSRF tokens are compared whole."""

from __future__ import annotations

import asyncio

import pytest
from kronii.console.adapters.sessions import MemorySessions
from kronii.console.core.session import (
    LinkVerdict,
    LoginLink,
    Session,
    SessionVerdict,
    judge_link,
    judge_session,
    same_token,
    token_looks_valid,
)
from kronii.console.usecases.sign_in import LinkRefused, SignIn, new_token
from kronii.foundation.clock import ManualClock

LINK = LoginLink("t" * 43, issued_at=100.0, expires_at=220.0)


@pytest.mark.parametrize(
    ("link", "now", "verdict"),
    [
        (None, 150.0, LinkVerdict.UNKNOWN),
        (LINK, 150.0, LinkVerdict.GOOD),
        (LINK, 219.9, LinkVerdict.GOOD),
        (LINK, 220.0, LinkVerdict.EXPIRED),
        (LINK.used(150.0), 160.0, LinkVerdict.USED),
        (LINK.used(150.0), 500.0, LinkVerdict.USED),
    ],
    ids=["unknown", "fresh", "last-moment", "expired", "used", "used-then-expired"],
)
def test_a_link_is_judged_by_its_row(link: LoginLink | None, now: float, verdict: LinkVerdict) -> None:
    assert judge_link(link, now) is verdict


SESSION = Session("s" * 43, "c" * 43, created_at=0.0, last_seen=1000.0, idle_secs=600.0)


@pytest.mark.parametrize(
    ("session", "now", "verdict"),
    [(None, 0.0, SessionVerdict.MISSING), (SESSION, 1599.0, SessionVerdict.GOOD),
     (SESSION, 1600.0, SessionVerdict.EXPIRED), (SESSION.seen(1500.0), 2000.0, SessionVerdict.GOOD)],
    ids=["missing", "used-recently", "idle-too-long", "use-extends-it"],
)  # fmt: skip
def test_a_session_is_judged_by_its_idle_time(
    session: Session | None, now: float, verdict: SessionVerdict
) -> None:
    assert judge_session(session, now) is verdict


@pytest.mark.parametrize(
    ("given", "same"),
    [("c" * 43, True), ("c" * 42 + "d", False), ("c" * 42, False), ("", False), (None, False)],
    ids=["equal", "last-char", "prefix", "empty", "absent"],
)
def test_csrf_tokens_are_compared_whole(given: str | None, same: bool) -> None:
    assert same_token("c" * 43, given) is same


def test_only_tokens_the_console_could_have_made_are_looked_up() -> None:
    assert token_looks_valid(new_token())
    assert len(new_token()) == 43 and new_token() != new_token()
    for hostile in ("", "short", "x" * 65, "a" * 42 + "/", "a" * 42 + "\n", None):
        assert not token_looks_valid(hostile)


def _sign_in(clock: ManualClock, rows: list[dict[str, object]]) -> SignIn:
    async def record(**row: object) -> None:
        rows.append(row)

    return SignIn(MemorySessions(), clock, record, link_secs=120, idle_secs=600)


async def test_a_link_opens_exactly_one_session_even_when_opened_twice_at_once() -> None:
    clock, rows = ManualClock(), list[dict[str, object]]()
    sign_in = _sign_in(clock, rows)
    link = await sign_in.issue_link("person:uid:1000")
    results = await asyncio.gather(
        sign_in.open_session(link.token, "a"), sign_in.open_session(link.token, "b"), return_exceptions=True
    )
    sessions = [result for result in results if isinstance(result, Session)]
    refused = [result for result in results if isinstance(result, LinkRefused)]
    assert len(sessions) == 1 and len(refused) == 1
    assert refused[0].verdict is LinkVerdict.USED
    assert [row["outcome"] for row in rows if row["action"] == "console.login"].count("ok") == 1


async def test_a_session_has_its_own_random_csrf_token_and_ends_on_sign_out() -> None:
    clock, rows = ManualClock(), list[dict[str, object]]()
    sign_in = _sign_in(clock, rows)
    first = await sign_in.open_session((await sign_in.issue_link("p")).token, "p")
    second = await sign_in.open_session((await sign_in.issue_link("p")).token, "p")
    assert first.csrf_token != second.csrf_token and first.session_id != second.session_id
    assert first.csrf_token != first.session_id
    await sign_in.end(first, "p")
    assert (await sign_in.current(first.session_id))[0] is SessionVerdict.MISSING
    assert (await sign_in.current(second.session_id))[0] is SessionVerdict.GOOD


async def test_an_expired_link_is_refused_and_audited() -> None:
    clock, rows = ManualClock(), list[dict[str, object]]()
    sign_in = _sign_in(clock, rows)
    link = await sign_in.issue_link("p")
    clock.advance(120)
    with pytest.raises(LinkRefused) as refused:
        await sign_in.open_session(link.token, "p")
    assert refused.value.verdict is LinkVerdict.EXPIRED
    assert refused.value.http_status == 403
    assert "kronii console" in refused.value.message
    assert rows[-1] == {"actor": "p", "action": "console.login", "outcome": "refused_expired"}
