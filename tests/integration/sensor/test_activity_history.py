"""The activity history on a real sensor process, on a real X display (Xvfb + openbox, two xterms the
test switches between with xdotool), against real PostgreSQL: the spans it writes, the pages of
/v1/activity/spans, the summary, retention at start, a person's delete (checked with SQL) and the
refusals of bad queries; and `kronii activity` over it."""

from __future__ import annotations

import itertools
import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import psycopg
import pytest
from kronii.foundation.urls import libpq_url
from kronii.stores.db import migrate_up

from tests.desktop import WindowHandle, focus_window, open_window, send_input, set_window_title, start_xvfb
from tests.infra import InfraUrls, create_database
from tests.mesh import start_service, wait_until

DAY = datetime(2026, 1, 14, tzinfo=UTC)  # the synthetic history lives on days long before the test runs


@dataclass
class Desk:
    url: str
    database: str
    alpha: WindowHandle
    beta: WindowHandle
    display: str

    def sql(self, query: str, *args: Any) -> list[tuple[Any, ...]]:
        with psycopg.connect(libpq_url(self.database), autocommit=True) as conn:
            cursor = conn.execute(query, args)
            return cursor.fetchall() if cursor.description else []


def _iso(at: datetime) -> str:
    return at.isoformat().replace("+00:00", "Z")


def _seed_old_and_recent_rows(database: str) -> None:
    """Rows retention must delete at start (40 days old) and rows it must keep (2 days old)."""
    old, recent = datetime.now(UTC) - timedelta(days=40), datetime.now(UTC) - timedelta(days=2)
    with psycopg.connect(libpq_url(database), autocommit=True) as conn:
        for at, tag in ((old, "retention-old"), (recent, "retention-recent")):
            conn.execute(
                "INSERT INTO activity_spans (kind, started_at, ended_at, app, title) VALUES ('focus', %s, %s, %s, 't')",
                (at, at + timedelta(minutes=5), tag),
            )
            conn.execute(
                "INSERT INTO activity_events (at, kind, state, detail) VALUES (%s, 'focus_changed', 'active', %s)",
                (at, json.dumps({"app": tag})),
            )


@pytest.fixture(scope="module")
def desk(infra: InfraUrls, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Desk]:
    database = create_database(infra.database, "kronii_activity_history")
    migrate_up(database)
    _seed_old_and_recent_rows(database)
    with (
        start_xvfb() as display,
        open_window(display, "alpha notes", "KroniiAlpha") as alpha,
        open_window(display, "beta log", "KroniiBeta") as beta,
    ):
        env = dict(os.environ)
        env.update(infra.env())
        env.update(
            KRONII_DATABASE_URL=database,
            KRONII_DATA_DIR=str(tmp_path_factory.mktemp("sensor") / "data"),
            DISPLAY=display,
            DBUS_SESSION_BUS_ADDRESS="unix:path=/nonexistent/kronii-test-bus",
            DBUS_SYSTEM_BUS_ADDRESS="unix:path=/nonexistent/kronii-test-bus",
            KRONII_SENSOR_TICK_INTERVAL_SECS="0.2",
            KRONII_SENSOR_ACTIVITY_PULSE_SECS="2",
            KRONII_SENSOR_ACTIVITY_FLUSH_SECS="0.5",
            KRONII_SENSOR_ACTIVITY_RETENTION_DAYS="30",
        )
        with start_service("sensor", env, stop="kill") as sensor:
            yield Desk(sensor.url, database, alpha, beta, display)


def _spans(desk: Desk, **params: Any) -> dict[str, Any]:
    answer = httpx.get(f"{desk.url}/v1/activity/spans", params=params, timeout=10)
    assert answer.status_code == 200, answer.text
    body: dict[str, Any] = answer.json()
    return body


def _import(desk: Desk, spans: list[dict[str, Any]]) -> dict[str, Any]:
    answer = httpx.post(f"{desk.url}/v1/activity/import", json={"source": "test", "spans": spans}, timeout=30)
    assert answer.status_code == 200, answer.text
    body: dict[str, Any] = answer.json()
    return body


def _focus_span(key: str, app: str, start: datetime, seconds: float, title: str = "t") -> dict[str, Any]:
    return {
        "key": key,
        "kind": "focus",
        "start": _iso(start),
        "end": _iso(start + timedelta(seconds=seconds)),
        "app": app,
        "title": title,
    }


def test_retention_at_start_deleted_old_spans_and_events_and_kept_recent_ones(desk: Desk) -> None:
    wait_until(
        lambda: not desk.sql("SELECT 1 FROM activity_spans WHERE app = 'retention-old'"),
        10,
        "retention at start",
    )
    assert desk.sql("SELECT count(*) FROM activity_events WHERE detail->>'app' = 'retention-old'") == [(0,)]
    assert desk.sql("SELECT count(*) FROM activity_spans WHERE app = 'retention-recent'") == [(1,)]
    assert desk.sql("SELECT count(*) FROM activity_events WHERE detail->>'app' = 'retention-recent'") == [
        (1,)
    ]


def test_focus_switches_between_two_windows_are_written_as_spans(desk: Desk) -> None:
    started = datetime.now(UTC)
    for window in (desk.alpha, desk.beta, desk.alpha, desk.beta):
        focus_window(desk.display, window.window_id)
        send_input(desk.display)
        time.sleep(1.0)

    def written() -> bool:
        apps = desk.sql(
            "SELECT app FROM activity_spans WHERE kind = 'focus' AND started_at >= %s - interval '2 seconds' "
            "AND app IN ('KroniiAlpha', 'KroniiBeta') ORDER BY started_at",
            started,
        )
        return [app for (app,) in apps][-4:] == ["KroniiAlpha", "KroniiBeta", "KroniiAlpha", "KroniiBeta"]

    wait_until(written, 10, "the four focus spans in PostgreSQL")
    rows = desk.sql(
        "SELECT app, title, window_id, wm_class, started_at, ended_at FROM activity_spans "
        "WHERE kind = 'focus' AND app IN ('KroniiAlpha', 'KroniiBeta') AND started_at >= %s - interval '2 seconds' "
        "ORDER BY started_at",
        started,
    )[-4:]
    assert [row[1] for row in rows] == ["alpha notes", "beta log", "alpha notes", "beta log"]
    assert [row[2] for row in rows] == [desk.alpha.window_id, desk.beta.window_id] * 2
    for earlier, later in itertools.pairwise(rows):
        # A switch closes one span where the next opens (openbox may leave the focus on no window
        # for a few milliseconds between: that moment is no app's).
        assert timedelta(0) <= later[4] - earlier[5] < timedelta(seconds=0.2)
        assert 0.5 < (earlier[5] - earlier[4]).total_seconds() < 3.0
    # The open span is answered with its end at now, marked open; the state series runs beside it.
    page = _spans(desk, since=_iso(started - timedelta(seconds=5)))
    focus = [span for span in page["spans"] if span["kind"] == "focus"]
    assert focus[-1]["app"] == "KroniiBeta" and focus[-1]["open"] is True
    end = datetime.fromisoformat(focus[-1]["end"].replace("Z", "+00:00"))
    assert abs((datetime.now(UTC) - end).total_seconds()) < 2.0
    assert any(span["kind"] == "state" and span["state"] == "active" for span in page["spans"])


def test_a_title_rewritten_many_times_a_second_is_sampled_not_a_span_per_rewrite(desk: Desk) -> None:
    focus_window(desk.display, desk.alpha.window_id)
    time.sleep(0.5)
    started = datetime.now(UTC)
    window = str(desk.alpha.window_id)
    rewrites: list[str] = []
    for count in range(60):  # one xdotool run: a title every 20 ms, as a build's progress would
        rewrites += ["set_window", "--name", f"building {count}/60", window, "sleep", "0.02"]
    subprocess.run(
        ["xdotool", *rewrites], env={**os.environ, "DISPLAY": desk.display}, check=True, timeout=30
    )
    took = (datetime.now(UTC) - started).total_seconds()
    set_window_title(desk.display, desk.alpha.window_id, "alpha notes")
    time.sleep(1.0)
    spans = _spans(desk, since=_iso(started), kind="focus")["spans"]
    building = [span for span in spans if span["title"].startswith("building")]
    # The Tick (0.2 s here, 1 s by default) samples the title, as ActivityWatch polls it.
    assert len(building) <= took / 0.2 + 2 < 60, (took, building)
    assert spans[-1]["title"] == "alpha notes"


def test_summary_by_app_counts_the_windows_time(desk: Desk) -> None:
    since = _iso(datetime.now(UTC) - timedelta(minutes=5))
    body = httpx.get(f"{desk.url}/v1/activity/summary", params={"since": since, "by": "app"}).json()
    seconds = {row["key"]: row["seconds"] for row in body["rows"]}
    assert seconds["KroniiAlpha"] > 1.0 and seconds["KroniiBeta"] > 1.0
    assert body["total_seconds"] == pytest.approx(sum(seconds.values()), abs=0.01)
    assert body["rows"] == sorted(body["rows"], key=lambda row: -row["seconds"])


def test_import_is_idempotent_and_pages_come_by_cursor_without_gaps_or_repeats(desk: Desk) -> None:
    spans = [
        _focus_span(f"page-{index}", f"app{index % 3}", DAY + timedelta(seconds=10 * index), 10)
        for index in range(1200)
    ]
    # Spans of January are older than the 30 days kept: the answer says the next retention run takes them.
    assert _import(desk, spans) == {"received": 1200, "added": 1200, "beyond_retention": 1200}
    assert _import(desk, spans) == {"received": 1200, "added": 0, "beyond_retention": 0}
    seen: list[dict[str, Any]] = []
    cursor, pages = None, 0
    while True:
        params: dict[str, Any] = {"since": _iso(DAY), "until": _iso(DAY + timedelta(hours=4)), "limit": 500}
        if cursor:
            params["cursor"] = cursor
        body = _spans(desk, **params)
        seen += body["spans"]
        pages += 1
        cursor = body["next_cursor"]
        if cursor is None:
            break
    assert pages == 3
    assert len({span["id"] for span in seen}) == len(seen) == 1200
    assert [span["start"] for span in seen] == sorted(span["start"] for span in seen)
    only = _spans(desk, since=_iso(DAY), until=_iso(DAY + timedelta(hours=4)), app="app1", limit=5000)[
        "spans"
    ]
    assert len(only) == 400 and {span["app"] for span in only} == {"app1"}


def test_summary_clips_spans_to_the_range(desk: Desk) -> None:
    start = DAY + timedelta(days=1)
    _import(
        desk,
        [
            _focus_span("clip-a", "clipper", start, 600, "long"),
            _focus_span("clip-b", "other", start + timedelta(seconds=600), 60),
        ],
    )
    body = httpx.get(
        f"{desk.url}/v1/activity/summary",
        params={
            "since": _iso(start + timedelta(seconds=300)),
            "until": _iso(start + timedelta(seconds=630)),
            "by": "title",
        },
    ).json()
    assert [(row["key"], row["app"], row["seconds"]) for row in body["rows"]] == [
        ("long", "clipper", 300.0),
        ("t", "other", 30.0),
    ]
    assert body["total_seconds"] == 330.0


def test_delete_a_range_deletes_spans_inside_cuts_those_across_and_deletes_its_events(desk: Desk) -> None:
    day = DAY + timedelta(days=3)
    _import(
        desk,
        [
            _focus_span("del-before", "edge", day - timedelta(minutes=10), 900),  # 5 min inside
            _focus_span("del-inside", "edge", day + timedelta(hours=3), 600),
            _focus_span("del-after", "edge", day + timedelta(hours=24) - timedelta(minutes=5), 600),
        ],
    )
    desk.sql(
        "INSERT INTO activity_events (at, kind, state, detail) VALUES (%s, 'focus_changed', 'active', '{\"app\": \"edge\"}'), "
        "(%s, 'focus_changed', 'active', '{\"app\": \"edge\"}')",
        day + timedelta(hours=3),
        day - timedelta(hours=1),
    )
    answer = httpx.delete(
        f"{desk.url}/v1/activity", params={"since": _iso(day), "until": _iso(day + timedelta(days=1))}
    )
    assert answer.status_code == 200, answer.text
    assert answer.json() == {"deleted_spans": 3, "deleted_events": 1}
    rows = desk.sql("SELECT started_at, ended_at FROM activity_spans WHERE app = 'edge' ORDER BY started_at")
    assert rows == [
        (day - timedelta(minutes=10), day),
        (day + timedelta(days=1), day + timedelta(days=1, minutes=5)),
    ]
    assert desk.sql("SELECT at FROM activity_events WHERE detail->>'app' = 'edge'") == [
        (day - timedelta(hours=1),)
    ]
    audit = desk.sql(
        "SELECT subject, detail FROM audit_log WHERE action = 'sensor.activity.delete' ORDER BY id DESC LIMIT 1"
    )
    assert audit[0][0].startswith("range ") and audit[0][1]["spans"] == 3 and audit[0][1]["events"] == 1


def test_delete_an_app_deletes_its_spans_and_its_events_only(desk: Desk) -> None:
    _import(
        desk,
        [
            _focus_span("app-x", "doomed", DAY + timedelta(days=5), 60),
            _focus_span("app-y", "kept", DAY + timedelta(days=5), 60),
        ],
    )
    desk.sql(
        "INSERT INTO activity_events (at, kind, state, detail) VALUES (now(), 'focus_changed', 'active', '{\"app\": \"doomed\"}')"
    )
    body = httpx.delete(f"{desk.url}/v1/activity", params={"app": "doomed"}).json()
    assert body == {"deleted_spans": 1, "deleted_events": 1}
    assert desk.sql("SELECT count(*) FROM activity_spans WHERE app = 'doomed'") == [(0,)]
    assert desk.sql("SELECT count(*) FROM activity_events WHERE detail->>'app' = 'doomed'") == [(0,)]
    assert desk.sql("SELECT count(*) FROM activity_spans WHERE app = 'kept'") == [(1,)]


@pytest.mark.parametrize(
    ("path", "params", "sentence"),
    [
        ("/v1/activity/spans", {"since": "last tuesday"}, "is not an ISO-8601 date and time"),
        (
            "/v1/activity/spans",
            {"since": "2026-12-06T10:00:00Z", "until": "2026-12-06T09:00:00Z"},
            "must be after since",
        ),
        (
            "/v1/activity/spans",
            {"since": "2024-01-01T00:00:00Z", "until": "2026-01-01T00:00:00Z"},
            "longer than 400 days",
        ),
        ("/v1/activity/spans", {"limit": "0"}, "limit must be between 1 and 5000"),
        ("/v1/activity/spans", {"kind": "mood"}, "kind must be focus or state"),
        ("/v1/activity/spans", {"cursor": "garbage"}, "not one this service gave out"),
        ("/v1/activity/summary", {"by": "colour"}, "by must be one of app, title, state"),
    ],
)
def test_a_bad_query_is_a_400_with_a_sentence(
    desk: Desk, path: str, params: dict[str, str], sentence: str
) -> None:
    answer = httpx.get(f"{desk.url}{path}", params=params)
    assert answer.status_code == 400
    assert sentence in answer.json()["detail"]


def test_a_delete_without_a_selector_is_a_400_and_deletes_nothing(desk: Desk) -> None:
    before = desk.sql("SELECT count(*) FROM activity_spans")
    answer = httpx.delete(f"{desk.url}/v1/activity")
    assert answer.status_code == 400
    assert "say what to delete" in answer.json()["detail"]
    assert desk.sql("SELECT count(*) FROM activity_spans") == before


def test_an_import_of_a_bad_span_is_refused_whole(desk: Desk) -> None:
    bad = [
        _focus_span("ok-1", "fine", DAY, 10),
        {
            "key": "bad",
            "kind": "focus",
            "start": _iso(DAY),
            "end": _iso(DAY - timedelta(seconds=1)),
            "app": "x",
        },
    ]
    answer = httpx.post(f"{desk.url}/v1/activity/import", json={"spans": bad})
    assert answer.status_code == 400
    assert "ends before it starts" in answer.json()["detail"]
    assert desk.sql("SELECT count(*) FROM activity_spans WHERE import_key = 'ok-1'") == [(0,)]


def _kronii(desk: Desk, *args: str) -> subprocess.CompletedProcess[str]:
    code = "import sys; from kronii.launcher.cli.main import main; sys.exit(main(sys.argv[1:]))"
    return subprocess.run(
        [sys.executable, "-c", code, "activity", "--url", desk.url, *args],
        capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL,
    )  # fmt: skip


def test_kronii_activity_report_shows_the_two_windows(desk: Desk) -> None:
    done = _kronii(desk, "report", "--since", "10m", "--json")
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    apps = {row["app"]: row["seconds"] for row in report["apps"]}
    assert apps["KroniiAlpha"] > 1.0 and apps["KroniiBeta"] > 1.0
    assert {row["title"] for row in report["titles"]} >= {"alpha notes", "beta log"}
    table = _kronii(desk, "report", "--since", "10m")
    assert table.returncode == 0, table.stderr
    assert "KroniiAlpha" in table.stdout and "alpha notes" in table.stdout


def test_kronii_activity_export_writes_csv_of_the_range(desk: Desk, tmp_path: Path) -> None:
    out = tmp_path / "spans.csv"
    since, until = _iso(DAY), _iso(DAY + timedelta(hours=4))
    done = _kronii(desk, "export", "--format", "csv", "--since", since, "--until", until, "-o", str(out))
    assert done.returncode == 0, done.stderr
    lines = out.read_text().splitlines()
    assert lines[0] == "id,kind,start,end,app,title,window_id,wm_class,state"
    assert len(lines) == 1 + 1200
    assert oct(out.stat().st_mode & 0o777) == "0o600"


def test_kronii_activity_delete_needs_yes_without_a_terminal_and_a_bad_day_is_usage(desk: Desk) -> None:
    done = _kronii(desk, "delete", "--day", "2026-01-14")
    assert done.returncode == 2 and "add --yes" in done.stderr
    bad = _kronii(desk, "delete", "--day", "14/01/2026", "--yes")
    assert bad.returncode == 2 and "is not a day" in bad.stderr


def test_delete_everything_leaves_no_span_and_no_event(desk: Desk) -> None:
    done = _kronii(desk, "delete", "--all", "--yes")
    assert done.returncode == 0, done.stderr
    assert "deleted" in done.stdout
    # The sensor keeps recording after the delete: only spans opened after it may exist.
    assert desk.sql("SELECT count(*) FROM activity_events WHERE at < now() - interval '1 second'") == [(0,)]
    assert desk.sql("SELECT count(*) FROM activity_spans WHERE started_at < now() - interval '1 second'") == [
        (0,)
    ]


def test_a_restarted_sensor_opens_a_new_span_and_the_old_one_ends_where_it_stopped(
    infra: InfraUrls, fresh_database: str, tmp_path: Path
) -> None:
    migrate_up(fresh_database)
    with start_xvfb() as display, open_window(display, "gamma", "KroniiGamma") as gamma:
        focus_window(display, gamma.window_id)
        env = dict(os.environ)
        env.update(infra.env())
        env.update(
            KRONII_DATABASE_URL=fresh_database,
            KRONII_DATA_DIR=str(tmp_path / "data"),
            DISPLAY=display,
            DBUS_SESSION_BUS_ADDRESS="unix:path=/nonexistent/kronii-test-bus",
            DBUS_SYSTEM_BUS_ADDRESS="unix:path=/nonexistent/kronii-test-bus",
            KRONII_SENSOR_TICK_INTERVAL_SECS="0.2",
            KRONII_SENSOR_ACTIVITY_PULSE_SECS="2",
            # No flush within the runs: the spans reach PostgreSQL only when the sensor stops.
            KRONII_SENSOR_ACTIVITY_FLUSH_SECS="60",
        )
        with start_service("sensor", env, stop="kill") as first:
            time.sleep(2.0)
            stopping = datetime.now(UTC)
            code, _ = first.proc.terminate()
            stopped = datetime.now(UTC)
            assert code == 0, first.proc.output[-2000:]
        time.sleep(1.0)  # down for a second: within the pulse, yet not the person's time in gamma
        with start_service("sensor", env, stop="kill") as second:
            time.sleep(1.5)
            code, _ = second.proc.terminate()
            assert code == 0, second.proc.output[-2000:]
    with psycopg.connect(libpq_url(fresh_database), autocommit=True) as conn:
        rows = conn.execute(
            "SELECT started_at, ended_at FROM activity_spans WHERE app = 'KroniiGamma' ORDER BY started_at"
        ).fetchall()
    assert len(rows) == 2, rows
    (start_1, end_1), (start_2, end_2) = rows
    # The first run's span ends at its last heartbeat (a Tick every 0.2 s), written as it stopped.
    assert stopping - timedelta(seconds=0.5) < end_1 <= stopped
    assert start_2 - end_1 > timedelta(seconds=0.9)  # the downtime is in no span
    assert end_1 - start_1 > timedelta(seconds=1.5) and end_2 - start_2 > timedelta(seconds=1.0)
