"""The console as it really runs (`python -m kronii.console`, real uvicorn, real Redis for sessions,
real PostgreSQL for the audit chain) against hostile requests: another local uid, no cookie, a stale
and a used login link, a missing CSRF token, a foreign Host or Origin, a 10 MB form body. Each is
refused with a clear status and a sentence, and nothing changes: the session still works, no link or
logout is audited, only the refusals are. The login links come from the real `kronii console
--no-browser`."""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import psycopg
import pytest
from kronii.foundation.urls import libpq_url

from tests.infra import InfraUrls
from tests.mesh import RunningService, start_service

KRONII = str(Path(sys.executable).parent / "kronii")
LINK_SECS = 3


@dataclass
class Console:
    service: RunningService
    database: str
    started: float

    @property
    def url(self) -> str:
        return self.service.url

    def link(self) -> str:
        done = subprocess.run(
            [KRONII, "console", "--no-browser", "--url", self.url],
            env=self.service.env, capture_output=True, text=True, timeout=60,
        )  # fmt: skip
        assert done.returncode == 0, done.stdout + done.stderr
        return done.stdout.strip().splitlines()[-1]

    @contextlib.contextmanager
    def signed_in(self) -> Iterator[tuple[httpx.Client, str]]:
        """A client holding a session from a real link, and the session's CSRF token from its page."""
        with httpx.Client(base_url=self.url, timeout=10) as client:
            answer = client.get(self.link().removeprefix(self.url))
            assert answer.status_code == 303, answer.text
            token = re.search(r'"X-CSRF-Token": "([^"]+)"', client.get("/today").text)
            assert token, "the page carries no CSRF token"
            yield client, token.group(1)

    def audited(self) -> list[tuple[str, str]]:
        with psycopg.connect(libpq_url(self.database)) as connection:
            rows = connection.execute(
                "SELECT action, outcome FROM audit_log WHERE service = 'console' AND at >= to_timestamp(%s) ORDER BY id",
                (self.started,),
            ).fetchall()
        return [(str(action), str(outcome)) for action, outcome in rows]


def _still_signed_in(client: httpx.Client) -> bool:
    """The session still opens the page (no sensor runs here: Today says so, signed in)."""
    answer = client.get("/today")
    return (
        answer.status_code != 401 and "Sign out" in answer.text and "sensor is not answering" in answer.text
    )


@pytest.fixture(scope="module")
def console(
    infra: InfraUrls, migrated_database: str, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Console]:
    env = {key: value for key, value in os.environ.items() if not key.startswith("KRONII_")}
    env.update(infra.env())
    env.update(
        KRONII_DATABASE_URL=migrated_database,
        KRONII_DATA_DIR=str(tmp_path_factory.mktemp("console") / "data"),
        KRONII_CONFIG=str(tmp_path_factory.mktemp("config") / "none.toml"),
        KRONII_CONSOLE_LOGIN_LINK_SECS=str(LINK_SECS),
        KRONII_CONSOLE_KEY_PREFIX=f"kronii:console-hostile-{os.getpid()}",
        KRONII_LOG_FORMAT="text",
    )
    started = time.time() - 1
    with start_service("console", env, timeout=60) as service:
        yield Console(service, migrated_database, started)


def test_a_process_of_another_uid_is_refused_with_403_and_gets_no_link(console: Console) -> None:
    if os.geteuid() != 0 or shutil.which("setpriv") is None:
        pytest.fail("this test acts as another uid: it needs root and setpriv, as the suite's CI has")
    before = console.audited()
    probe = (
        "import http.client, json, sys\n"
        "answers = []\n"
        "for method, path, headers in json.loads(sys.argv[1]):\n"
        "    c = http.client.HTTPConnection('127.0.0.1', int(sys.argv[2]), timeout=10)\n"
        "    c.request(method, path, headers=headers)\n"
        "    r = c.getresponse()\n"
        "    answers.append([r.status, r.read().decode()])\n"
        "print(json.dumps(answers))\n"
    )
    calls = [["POST", "/console/link", {"x-kronii-console": "link"}], ["GET", "/today", {}],
             ["GET", "/login?token=" + "a" * 43, {}]]  # fmt: skip
    done = subprocess.run(
        ["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups", "/usr/bin/python3", "-c", probe,
         json.dumps(calls), str(console.service.http_port)],
        capture_output=True, text=True, timeout=60, cwd="/", env={"PATH": "/usr/bin:/bin"},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    for status, body in json.loads(done.stdout):
        assert status == 403
        assert "only the processes of the user it runs as" in body
    assert console.audited() == before  # refused before the console looked at anything


def test_a_page_without_the_cookie_is_401_saying_to_run_kronii_console(console: Console) -> None:
    answer = httpx.get(f"{console.url}/today", timeout=10)
    assert answer.status_code == 401
    assert "kronii console" in answer.text


def test_a_used_and_a_stale_login_link_are_refused_with_a_sentence(console: Console) -> None:
    link = console.link().removeprefix(console.url)
    with httpx.Client(base_url=console.url, timeout=10) as first:
        assert first.get(link).status_code == 303
    used = httpx.get(console.url + link, timeout=10)
    assert used.status_code == 403 and "already used" in used.text
    assert "set-cookie" not in used.headers
    stale = console.link().removeprefix(console.url)
    time.sleep(LINK_SECS + 0.5)
    expired = httpx.get(console.url + stale, timeout=10)
    assert expired.status_code == 403 and "expired" in expired.text
    outcomes = [outcome for action, outcome in console.audited() if action == "console.login"]
    assert outcomes[-3:] == ["ok", "refused_used", "refused_expired"]


def test_a_state_change_without_its_csrf_token_changes_nothing(console: Console) -> None:
    with console.signed_in() as (client, _token):
        refused = client.post("/logout")
        assert refused.status_code == 403 and "CSRF token is missing" in refused.text
        assert _still_signed_in(client)  # still signed in
    assert ("console.logout", "ok") not in console.audited()
    assert ("console.refused", "csrf") in console.audited()


@pytest.mark.parametrize(
    ("headers", "status"),
    [({"host": "evil.example"}, 421), ({"host": "localhost.evil.example"}, 421),
     ({"origin": "http://evil.example"}, 403), ({"origin": "http://localhost:1"}, 403),
     ({"sec-fetch-site": "cross-site"}, 403)],
    ids=["foreign-host", "rebound-name", "foreign-origin", "other-local-port", "cross-site"],
)  # fmt: skip
def test_a_foreign_host_or_origin_is_refused_even_with_a_good_session(
    console: Console, headers: dict[str, str], status: int
) -> None:
    with console.signed_in() as (client, token):
        answer = client.post("/logout", headers={"x-csrf-token": token, **headers})
        assert answer.status_code == status, answer.text
        assert answer.headers["x-kronii-refusal"] in {"misdirected", "foreign_origin", "foreign_site"}
        assert _still_signed_in(client)


def test_a_10_mb_form_body_is_refused_413_and_changes_nothing(console: Console) -> None:
    with console.signed_in() as (client, token):
        body = "csrf_token=" + token + "&note=" + "x" * (10 * 1024 * 1024)
        started = time.monotonic()
        answer = client.post(
            "/logout", content=body, headers={"content-type": "application/x-www-form-urlencoded"}
        )
        took = time.monotonic() - started
        assert answer.status_code == 413
        assert "larger than the console allows" in answer.text
        assert took < 5
        assert _still_signed_in(client)
    assert ("console.refused", "too_large") in console.audited()


def test_the_good_path_works_and_is_audited(console: Console) -> None:
    with console.signed_in() as (client, token):
        assert client.post("/logout", headers={"x-csrf-token": token}).status_code == 303
        assert client.get("/today").status_code == 401
    assert ("console.logout", "ok") in console.audited()
    assert ("console.link", "issued") in console.audited()
