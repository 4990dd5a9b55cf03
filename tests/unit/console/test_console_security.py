"""The console's edge in process (api/security.py behind the shared limits): every page needs the
session a one-time link opened, every state change its CSRF token, Host and Origin must be the
console's own, bodies over 64 KiB are refused unread, and every answer carries the security headers.
The same refusals against the real console under `kronii up`, and another uid, are in
tests/integration/console/test_console_hostile.py."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from tests.unit.console.console_core_harness import BASE, Console, build_console

LINK = {"x-kronii-console": "link"}


@pytest.fixture
def console() -> Console:
    return build_console()


def _csrf(page: str) -> str:
    marker = '"X-CSRF-Token": "'
    start = page.index(marker) + len(marker)
    return page[start : page.index('"', start)]


async def test_a_page_without_the_session_cookie_is_a_401_saying_to_run_kronii_console(
    console: Console,
) -> None:
    async with console.client() as client:
        answer = await client.get("/today")
    assert answer.status_code == 401
    assert "kronii console" in answer.text
    assert console.sensor.calls == []


async def test_a_cookie_no_session_has_is_refused_like_no_cookie(console: Console) -> None:
    async with console.client() as client:
        client.cookies.set("kronii_console", "A" * 43)
        answer = await client.get("/today")
    assert answer.status_code == 401


async def test_the_login_link_sets_a_strict_http_only_cookie_and_goes_to_today(console: Console) -> None:
    async with console.client() as client:
        link = (await client.post("/console/link", headers=LINK)).json()["url"]
        assert link.startswith(f"{BASE}/login?token=")
        answer = await client.get(link.removeprefix(BASE))
        assert answer.status_code == 303
        assert answer.headers["location"] == "/today"
        cookie = answer.headers["set-cookie"].lower()
        assert "httponly" in cookie and "samesite=strict" in cookie and "path=/" in cookie
        page = await client.get("/today")
    assert page.status_code == 200
    assert [row["outcome"] for row in console.audit if row["action"] == "console.login"] == ["ok"]


async def test_a_used_login_link_is_refused_with_a_sentence(console: Console) -> None:
    async with console.client() as client:
        link = (await client.post("/console/link", headers=LINK)).json()["url"].removeprefix(BASE)
        assert (await client.get(link)).status_code == 303
    async with console.client() as other:
        answer = await other.get(link)
    assert answer.status_code == 403
    assert "already used" in answer.text
    assert "set-cookie" not in answer.headers


async def test_a_login_link_older_than_two_minutes_is_refused(console: Console) -> None:
    async with console.client() as client:
        link = (await client.post("/console/link", headers=LINK)).json()["url"].removeprefix(BASE)
        console.clock.advance(121)
        answer = await client.get(link)
    assert answer.status_code == 403
    assert "expired" in answer.text


async def test_a_made_up_login_token_is_refused(console: Console) -> None:
    async with console.client() as client:
        answer = await client.get("/login?token=" + "x" * 43)
    assert answer.status_code == 403
    assert "not one the console issued" in answer.text


@pytest.mark.parametrize(
    "headers",
    [{}, {"x-kronii-console": "yes"}, {**LINK, "origin": BASE}, {**LINK, "sec-fetch-mode": "cors"}],
    ids=["no-header", "wrong-header", "with-origin", "from-a-browser"],
)
async def test_only_the_cli_can_ask_for_a_login_link(console: Console, headers: dict[str, str]) -> None:
    async with console.client() as client:
        answer = await client.post("/console/link", headers=headers)
    assert answer.status_code == 403
    assert not [row for row in console.audit if row["action"] == "console.link"]


@pytest.fixture
async def signed_in(console: Console) -> AsyncIterator[tuple[object, str]]:
    client = await console.logged_in()
    page = await client.get("/today")
    try:
        yield client, _csrf(page.text)
    finally:
        await client.aclose()


async def test_a_state_change_without_the_csrf_token_is_refused_and_changes_nothing(
    console: Console, signed_in: tuple[object, str]
) -> None:
    client, _token = signed_in
    answer = await client.post("/logout")  # type: ignore[attr-defined]
    assert answer.status_code == 403
    assert "CSRF token is missing" in answer.text
    assert (await client.get("/today")).status_code == 200  # type: ignore[attr-defined]  # still signed in
    assert [row["outcome"] for row in console.audit if row["action"] == "console.refused"] == ["csrf"]


async def test_a_state_change_with_another_token_is_refused(signed_in: tuple[object, str]) -> None:
    client, token = signed_in
    answer = await client.post("/logout", headers={"x-csrf-token": token[::-1]})  # type: ignore[attr-defined]
    assert answer.status_code == 403
    assert "does not belong to this session" in answer.text
    assert answer.headers["x-kronii-refusal"] == "csrf"


async def test_the_csrf_token_in_the_header_or_in_a_form_field_lets_the_change_through(
    console: Console, signed_in: tuple[object, str]
) -> None:
    client, token = signed_in
    answer = await client.post("/logout", data={"csrf_token": token})  # type: ignore[attr-defined]
    assert answer.status_code == 303
    assert (await client.get("/today")).status_code == 401  # type: ignore[attr-defined]
    second = await console.logged_in()
    token2 = _csrf((await second.get("/today")).text)
    assert (await second.post("/logout", headers={"x-csrf-token": token2})).status_code == 303
    await second.aclose()


@pytest.mark.parametrize("host", ["evil.example:8109", "127.0.0.1:9999", "kronii.local"])
async def test_a_foreign_host_header_is_refused_before_anything_else(console: Console, host: str) -> None:
    async with console.client(host=host) as client:
        answer = await client.post("/console/link", headers=LINK)
    assert answer.status_code == 421
    assert [(row["action"], row["outcome"]) for row in console.audit] == [("console.refused", "misdirected")]


async def test_localhost_is_the_consoles_own_host(console: Console) -> None:
    async with console.client(host="localhost:8109") as client:
        assert (await client.post("/console/link", headers=LINK)).status_code == 200


@pytest.mark.parametrize(
    "headers",
    [{"origin": "http://evil.example"}, {"origin": "http://127.0.0.1:8000"}, {"origin": "null"},
     {"sec-fetch-site": "cross-site"}, {"sec-fetch-site": "same-site"}],
    ids=["other-site", "other-port", "null", "cross-site", "same-site"],
)  # fmt: skip
async def test_a_request_from_another_page_is_refused(
    console: Console, signed_in: tuple[object, str], headers: dict[str, str]
) -> None:
    client, token = signed_in
    answer = await client.post("/logout", headers={"x-csrf-token": token, **headers})  # type: ignore[attr-defined]
    assert answer.status_code == 403
    assert (await client.get("/today")).status_code == 200  # type: ignore[attr-defined]


async def test_the_consoles_own_origin_is_accepted(signed_in: tuple[object, str]) -> None:
    client, token = signed_in
    answer = await client.post("/logout", headers={"x-csrf-token": token, "origin": BASE})  # type: ignore[attr-defined]
    assert answer.status_code == 303


async def test_a_body_over_64_kib_is_refused_from_its_declared_length(
    console: Console, signed_in: tuple[object, str]
) -> None:
    client, token = signed_in
    answer = await client.post(  # type: ignore[attr-defined]
        "/logout", headers={"x-csrf-token": token}, content=b"x" * (64 * 1024 + 1)
    )
    assert answer.status_code == 413
    assert (await client.get("/today")).status_code == 200  # type: ignore[attr-defined]


async def test_a_streamed_body_is_refused_once_it_passes_64_kib(
    console: Console, signed_in: tuple[object, str]
) -> None:
    client, token = signed_in
    sent: list[int] = []

    async def chunks() -> AsyncIterator[bytes]:
        for _ in range(1000):  # 16 MB offered, 16 KiB at a time
            sent.append(1)
            yield b"y" * 16384

    answer = await client.post("/logout", headers={"x-csrf-token": token}, content=chunks())  # type: ignore[attr-defined]
    assert answer.status_code == 413
    assert len(sent) < 1000


async def test_every_answer_carries_the_security_headers(
    console: Console, signed_in: tuple[object, str]
) -> None:
    client, _token = signed_in
    for path in ("/today", "/static/console.css", "/nowhere"):
        answer = await client.get(path)  # type: ignore[attr-defined]
        csp = answer.headers["content-security-policy"]
        assert "default-src 'self'" in csp and "script-src 'self'" in csp and "'unsafe-inline'" not in csp
        assert answer.headers["x-frame-options"] == "DENY"
        assert answer.headers["referrer-policy"] == "same-origin"
        assert answer.headers["x-content-type-options"] == "nosniff"
    async with console.client() as anonymous:
        refused = await anonymous.get("/today")
    assert refused.headers["x-frame-options"] == "DENY"


async def test_an_idle_session_expires(console: Console, signed_in: tuple[object, str]) -> None:
    client, _token = signed_in
    console.clock.advance(3599)
    assert (await client.get("/today")).status_code == 200  # type: ignore[attr-defined]
    console.clock.advance(3599)  # used a moment ago: still alive
    assert (await client.get("/today")).status_code == 200  # type: ignore[attr-defined]
    console.clock.advance(3601)
    answer = await client.get("/today")  # type: ignore[attr-defined]
    assert answer.status_code == 401
    assert "expired" in answer.text


async def test_the_page_has_no_inline_script(signed_in: tuple[object, str]) -> None:
    client, _token = signed_in
    page = (await client.get("/today")).text  # type: ignore[attr-defined]
    assert "<script>" not in page and "<script " in page
    assert all('src="/static/' in line for line in page.splitlines() if "<script" in line)
    assert " style=" not in page
