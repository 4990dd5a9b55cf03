"""The critic's API edges in process (api.http_api on FastAPI's TestClient, api.grpc_api on a real
grpc.aio server) against a fake of CriticOperations: each route and RPC translates to the operation
with the values checked, answers with critic.proto's JSON, and a bad input is a 400 (INVALID_ARGUMENT)
with a sentence naming the field, never a 500."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field
from typing import Any, cast

import grpc
import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient
from google.protobuf.timestamp_pb2 import Timestamp
from kronii.critic.api.grpc_api import CriticServicer
from kronii.critic.api.http_api import critic_router
from kronii.critic.core.commands import ExportQuery, Reported, SearchQuery, Similar, SimilarQuery
from kronii.critic.core.doctor import (
    DoctorReport,
    EmbeddingQueueState,
    HookSeen,
    ModelState,
    PlaceState,
    RecordCounts,
)
from kronii.critic.core.model import InvocationEvent, InvocationRecord, Trigger
from kronii.critic.core.retrieval import Hit
from kronii.critic.usecases.operations import CriticOperations
from kronii.critic.v1 import critic_pb2 as pb
from kronii.critic.v1 import critic_pb2_grpc as pb_grpc
from kronii.edge.api_edge import KroniiErrorInterceptor, install_error_handler
from kronii.foundation.errors import NotFound, Unavailable

NOW_MS = 1_760_000_000_000  # 2025-10-09T08:53:20Z
DAY_MS = 86_400_000


def record(record_id: str, at_ms: int, *, status: int = 1, line: str = "make test") -> InvocationRecord:
    return InvocationRecord(  # noqa: S604 (the record's shell name, nothing is run)
        record_id=record_id,
        timestamp_ms=at_ms,
        trigger=Trigger.ERROR if status else Trigger.OK,
        command_name=line.split()[0],
        command_line=line,
        cwd="/home/ana/src/app",
        exit_status=status,
        duration_ms=1200,
        shell="bash",
        session="s-1",
        error_type="build",
        error_message="undefined reference to `main'",
        summary="the linker found no main",
        redactions=1,
        embedding=(0.6, 0.8),
    )


OLD = record("r-old", NOW_MS - 3 * DAY_MS)
NEW = record("r-new", NOW_MS - DAY_MS, line="make test TOKEN=<SECRET>")


@dataclass
class FakeCritic:
    """CriticOperations with canned answers; ``calls`` keeps what each operation was given."""

    calls: list[tuple[str, Any]] = field(default_factory=list)
    refuse_export: bool = False

    async def report(self, event: InvocationEvent) -> Reported:
        self.calls.append(("report", event))
        if event.command_line == "ignored":
            return Reported(None)
        return Reported(NEW, hint="this failed 3 times: last time `make clean` fixed it")

    async def search(self, query: SearchQuery) -> list[Hit]:
        self.calls.append(("search", query))
        return [Hit(NEW, 0.91, 1.25, "ram"), Hit(OLD, 0.5, 0.6, "disk")]

    async def similar(self, query: SimilarQuery) -> Similar:
        self.calls.append(("similar", query))
        if query.record_id == "r-gone":
            raise NotFound("no record has the id r-gone", field="record_id")
        return Similar(NEW, [Hit(OLD, 0.88, 0.9, "disk")])

    async def export(self, query: ExportQuery) -> AsyncIterator[InvocationRecord]:
        since_ms = query.since_ms
        self.calls.append(("export", (since_ms, query.redact)))
        if self.refuse_export:
            raise Unavailable("the daily files cannot be read now")
        for kept in (OLD, NEW):
            if kept.timestamp_ms >= since_ms:
                yield kept

    async def doctor(self) -> DoctorReport:
        self.calls.append(("doctor", None))
        return DoctorReport(
            hooks=[HookSeen("bash", 42, NOW_MS - 5000), HookSeen("fish", 0, 0)],
            spool=PlaceState("/run/user/1000/kronii/critic/spool", True, pending=2),
            hints=PlaceState("/run/user/1000/kronii/critic", False, "not 0700"),
            model=ModelState(True, "all-MiniLM-L6-v2 int8", "ab" * 32),
            records=RecordCounts(ram=200, files=1500, database=98765, redactions=7),
            embeddings=EmbeddingQueueState(1, 256, 3, 4.5, 9.25),
            muted_until_ms=NOW_MS + 3_600_000,
            problems=["fish's hook has not reported since the critic started"],
        )

    async def mute(self, seconds: int) -> int:
        self.calls.append(("mute", seconds))
        return NOW_MS + seconds * 1000 if seconds else 0


@pytest.fixture
def fake() -> FakeCritic:
    return FakeCritic()


@pytest.fixture
def http(fake: FakeCritic) -> Iterator[TestClient]:
    app = FastAPI()
    install_error_handler(app)
    app.include_router(critic_router(lambda: cast(CriticOperations, fake), clock=lambda: NOW_MS))
    with TestClient(app, raise_server_exceptions=False) as client:
        yield client


def last(fake: FakeCritic, operation: str) -> Any:
    return next(given for name, given in reversed(fake.calls) if name == operation)


# ---- HTTP: each route --------------------------------------------------------------------------

EVENT = {
    "shell": "run",
    "session": "s-1",
    "tty": "/dev/pts/3",
    "cwd": "/home/ana/src/app",
    "command_line": "make test TOKEN=abc123",
    "exit_status": 2,
    "started": "2025-10-09T08:50:00.250Z",
    "duration_ms": 1500,
    "error_text": "undefined reference to `main'",
}


def test_an_event_reaches_the_critic_as_sent_and_the_answer_is_the_kept_record_and_hint(
    http: TestClient, fake: FakeCritic
) -> None:
    answer = http.post("/v1/critic/events", json=EVENT)

    assert answer.status_code == 200, answer.text
    assert last(fake, "report") == InvocationEvent(  # noqa: S604 (the event's shell name)
        shell="run", session="s-1", tty="/dev/pts/3", cwd="/home/ana/src/app",
        command_line="make test TOKEN=abc123", exit_status=2, started_ms=1_759_999_800_250,
        duration_ms=1500, error_text="undefined reference to `main'",
    )  # fmt: skip
    body = answer.json()
    assert body["recorded"] is True and body["hint"].startswith("this failed 3 times")
    kept = body["record"]
    assert kept["record_id"] == "r-new" and kept["command_line"] == "make test TOKEN=<SECRET>"
    assert kept["timestamp"] == "2025-10-08T08:53:20Z" and kept["trigger"] == "error"
    assert kept["embedding"] == []  # never on the wire unless asked


def test_an_event_without_a_start_time_started_its_duration_before_it_arrived(
    http: TestClient, fake: FakeCritic
) -> None:
    body = {key: value for key, value in EVENT.items() if key != "started"}
    assert http.post("/v1/critic/events", json=body).status_code == 200
    assert last(fake, "report").started_ms == NOW_MS - 1500


def test_an_event_the_critic_does_not_keep_answers_recorded_false_without_a_record(
    http: TestClient,
) -> None:
    body = http.post("/v1/critic/events", json={**EVENT, "command_line": "ignored"}).json()
    assert body["recorded"] is False and "record" not in body and body["hint"] == ""


def test_search_by_query_string_gives_the_checked_query_and_the_hits_best_first(
    http: TestClient, fake: FakeCritic
) -> None:
    params = {"text": "linker", "take": "7", "trigger": "error", "command": "make", "failed_only": "true",
              "since": "2025-10-01T00:00:00Z"}  # fmt: skip
    answer = http.get("/v1/critic/search", params=params)

    assert answer.status_code == 200, answer.text
    assert last(fake, "search") == SearchQuery(
        text="linker", take=7, trigger=Trigger.ERROR, command="make", failed_only=True,
        since_ms=1_759_276_800_000,
    )  # fmt: skip
    hits = answer.json()["hits"]
    assert [hit["record"]["record_id"] for hit in hits] == ["r-new", "r-old"]
    assert hits[0]["tier"] == "ram" and hits[0]["similarity"] == pytest.approx(0.91)
    assert hits[0]["score"] == pytest.approx(1.25)


def test_search_by_body_defaults_to_twenty_hits_of_any_kind_from_any_time(
    http: TestClient, fake: FakeCritic
) -> None:
    assert http.post("/v1/critic/search", json={"text": "make"}).status_code == 200
    assert last(fake, "search") == SearchQuery(text="make", take=20)


def test_similar_to_a_record_and_to_the_last_failure_of_a_session(http: TestClient, fake: FakeCritic) -> None:
    by_id = http.get("/v1/critic/similar", params={"record_id": "r-new", "k": "3"})
    by_session = http.post("/v1/critic/similar", json={"session": "s-1", "cwd": "/home/ana"})

    assert by_id.status_code == 200 and by_session.status_code == 200
    assert [given for name, given in fake.calls if name == "similar"] == [
        SimilarQuery(record_id="r-new", session="", cwd="", k=3),
        SimilarQuery(record_id="", session="s-1", cwd="/home/ana", k=5),
    ]
    body = by_id.json()
    assert body["anchor"]["record_id"] == "r-new"
    assert [hit["record"]["record_id"] for hit in body["hits"]] == ["r-old"]


def test_similar_to_a_record_that_is_gone_is_a_404_naming_it(http: TestClient) -> None:
    answer = http.get("/v1/critic/similar", params={"record_id": "r-gone"})
    assert answer.status_code == 404
    assert answer.json() == {
        "code": "not_found",
        "detail": "no record has the id r-gone",
        "field": "record_id",
    }


def test_export_streams_json_lines_oldest_first_redacted_by_default(
    http: TestClient, fake: FakeCritic
) -> None:
    answer = http.get("/v1/critic/export")

    assert answer.status_code == 200
    assert answer.headers["content-type"].startswith("application/x-ndjson")
    lines = [json.loads(line) for line in answer.text.splitlines()]
    assert [line["record_id"] for line in lines] == ["r-old", "r-new"]
    assert all(line["embedding"] == [] for line in lines)
    assert last(fake, "export") == (0, True)


def test_export_since_a_time_without_redaction_and_with_embeddings(
    http: TestClient, fake: FakeCritic
) -> None:
    params = {"since": "2025-10-07T00:00:00Z", "redact": "false", "embeddings": "true"}
    answer = http.get("/v1/critic/export", params=params)

    lines = [json.loads(line) for line in answer.text.splitlines()]
    assert [line["record_id"] for line in lines] == ["r-new"]
    assert lines[0]["embedding"] == [pytest.approx(0.6), pytest.approx(0.8)]
    assert last(fake, "export") == (1_759_795_200_000, False)


def test_an_export_the_critic_cannot_start_is_its_status_not_an_empty_200(
    http: TestClient, fake: FakeCritic
) -> None:
    fake.refuse_export = True
    answer = http.get("/v1/critic/export")
    assert answer.status_code == 503
    assert answer.json() == {"code": "unavailable", "detail": "the daily files cannot be read now"}


def test_doctor_reports_hooks_places_model_counts_queue_mute_and_problems(http: TestClient) -> None:
    body = http.get("/v1/critic/doctor").json()

    assert body["hooks"][0] == {"shell": "bash", "events": "42", "last_seen": "2025-10-09T08:53:15Z"}
    assert body["hooks"][1] == {"shell": "fish", "events": "0"}  # never seen: no time
    assert body["spool"]["ok"] is True and body["spool"]["pending"] == "2"
    assert body["hints"] == {"path": "/run/user/1000/kronii/critic", "ok": False, "problem": "not 0700",
                             "pending": "0"}  # fmt: skip
    assert body["model"] == {"available": True, "name": "all-MiniLM-L6-v2 int8", "sha256": "ab" * 32,
                             "problem": ""}  # fmt: skip
    assert body["records"] == {"ram": "200", "files": "1500", "database": "98765", "redactions": "7"}
    assert body["embeddings"]["depth"] == 1 and body["embeddings"]["latency_p95_ms"] == 9.25
    assert body["mute"] == {"muted": True, "until": "2025-10-09T09:53:20Z"}
    assert body["problems"] == ["fish's hook has not reported since the critic started"]


def test_mute_for_an_hour_then_unmute(http: TestClient, fake: FakeCritic) -> None:
    muted = http.post("/v1/critic/mute", json={"seconds": 3600}).json()
    unmuted = http.post("/v1/critic/mute", json={"seconds": 0}).json()

    assert muted == {"muted": True, "until": "2025-10-09T09:53:20Z"}
    assert unmuted == {"muted": False}
    assert [given for name, given in fake.calls if name == "mute"] == [3600, 0]


def test_the_openapi_document_lists_the_query_parameters_of_the_get_routes(http: TestClient) -> None:
    paths = http.get("/openapi.json").json()["paths"]
    search = {param["name"] for param in paths["/v1/critic/search"]["get"]["parameters"]}
    assert search == {"text", "take", "trigger", "command", "failed_only", "since"}
    assert {"post"} <= set(paths["/v1/critic/events"]) and {"get"} <= set(paths["/v1/critic/export"])


# ---- HTTP: bad input is a 400 naming the field -------------------------------------------------

BAD_INPUT = [
    ("POST", "/v1/critic/events", {"json": {"shell": "bash"}}, "command_line", "command_line is required"),
    ("POST", "/v1/critic/events", {"json": {**EVENT, "exit_status": 300}}, "exit_status", "from 0 to 255"),
    ("POST", "/v1/critic/events", {"json": {**EVENT, "exit_status": "three"}}, "exit_status",
     "exit_status must be a whole number"),
    ("POST", "/v1/critic/events", {"json": {**EVENT, "shell": "Bash!"}}, "shell", "shell must name"),
    ("POST", "/v1/critic/events", {"json": {**EVENT, "started": "yesterday"}}, "started", "RFC 3339"),
    ("POST", "/v1/critic/events", {"json": {**EVENT, "colour": "red"}}, "colour",
     "colour is not a field of InvocationEvent"),
    ("POST", "/v1/critic/events", {"json": {**EVENT, "command_line": "x" * 70_000}}, "command_line",
     "longer than"),
    ("POST", "/v1/critic/events", {"json": {**EVENT, "cwd": "/tmp\x00"}}, "cwd", "NUL"),
    ("POST", "/v1/critic/events", {"json": {**EVENT, "duration_ms": -5}}, "duration_ms",
     "a whole number of at least 0"),
    ("GET", "/v1/critic/search", {"params": {"take": "many"}}, "take", "take must be a whole number"),
    ("GET", "/v1/critic/search", {"params": {"take": "501"}}, "take", "at most 500"),
    ("GET", "/v1/critic/search", {"params": {"trigger": "oops"}}, "trigger", "trigger must be one of"),
    ("GET", "/v1/critic/search", {"params": {"failed_only": "maybe"}}, "failed_only", "true or false"),
    ("GET", "/v1/critic/search", {"params": {"since": "last week"}}, "since", "RFC 3339"),
    ("GET", "/v1/critic/search", {"params": {"limit": "3"}}, "limit", "limit is not a field of SearchRequest"),
    ("POST", "/v1/critic/search", {"json": {"take": -1}}, "take", "a whole number of at least 0"),
    ("POST", "/v1/critic/search", {"json": {"since": "1969-12-31T00:00:00Z"}}, "since", "after 1970"),
    ("GET", "/v1/critic/similar", {"params": {}}, "record_id", "record_id is required"),
    ("GET", "/v1/critic/similar", {"params": {"record_id": "r-1", "k": "101"}}, "k", "at most 100"),
    ("GET", "/v1/critic/export", {"params": {"since": "soon"}}, "since", "RFC 3339"),
    ("GET", "/v1/critic/export", {"params": {"redact": "perhaps"}}, "redact", "true or false"),
    ("POST", "/v1/critic/mute", {"json": {}}, "seconds", "seconds is required"),
    ("POST", "/v1/critic/mute", {"json": {"seconds": 99_999_999}}, "seconds", "31 days"),
    ("POST", "/v1/critic/mute", {"json": {"seconds": "soon"}}, "seconds", "seconds must be a whole number"),
]  # fmt: skip


@pytest.mark.parametrize(("method", "path", "request_args", "field_name", "sentence"), BAD_INPUT)
def test_bad_input_is_a_400_with_a_sentence_naming_the_field(
    http: TestClient,
    fake: FakeCritic,
    method: str,
    path: str,
    request_args: dict[str, Any],
    field_name: str,
    sentence: str,
) -> None:
    answer = http.request(method, path, **request_args)

    assert answer.status_code == 400, answer.text
    body = answer.json()
    assert body["field"] == field_name and sentence in body["detail"]
    assert fake.calls == []  # refused before the critic saw anything


@pytest.mark.parametrize(
    ("path", "content"),
    [("/v1/critic/events", b"not json"), ("/v1/critic/events", b""), ("/v1/critic/mute", b"[1, 2]")],
)
def test_a_body_that_is_not_a_json_object_is_a_400(http: TestClient, path: str, content: bytes) -> None:
    answer = http.post(path, content=content, headers={"content-type": "application/json"})
    assert answer.status_code == 400 and answer.json()["detail"]


# ---- gRPC ----------------------------------------------------------------------------------------


@pytest.fixture
async def stub(fake: FakeCritic) -> AsyncIterator[pb_grpc.CriticStub]:
    server = grpc.aio.server(interceptors=[KroniiErrorInterceptor()])
    pb_grpc.add_CriticServicer_to_server(
        CriticServicer(lambda: cast(CriticOperations, fake), clock=lambda: NOW_MS), server
    )
    port = server.add_insecure_port("127.0.0.1:0")
    await server.start()
    try:
        async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
            yield pb_grpc.CriticStub(channel)
    finally:
        await server.stop(0)


async def test_grpc_report_event_search_and_similar_translate_like_http(
    stub: pb_grpc.CriticStub, fake: FakeCritic
) -> None:
    reported = await stub.ReportEvent(
        pb.InvocationEvent(  # noqa: S604 (the event's shell name)
            shell="pane", session="s-2", cwd="/srv", command_line="cargo build", exit_status=101,
            duration_ms=40, error_text="error[E0425]",
        ),
        timeout=5,
    )  # fmt: skip
    found = await stub.Search(pb.SearchRequest(text="cargo", failed_only=True), timeout=5)
    like = await stub.Similar(pb.SimilarRequest(cwd="/srv", k=2), timeout=5)

    assert reported.recorded and reported.record.record_id == "r-new" and reported.hint
    event = last(fake, "report")
    assert (event.shell, event.exit_status, event.started_ms) == ("pane", 101, NOW_MS - 40)
    assert last(fake, "search") == SearchQuery(text="cargo", take=20, failed_only=True)
    assert [hit.record.record_id for hit in found.hits] == ["r-new", "r-old"]
    assert last(fake, "similar") == SimilarQuery(record_id="", session="", cwd="/srv", k=2)
    assert like.anchor.record_id == "r-new" and [hit.tier for hit in like.hits] == ["disk"]


async def test_grpc_export_streams_the_records_redacted_unless_told_otherwise(
    stub: pb_grpc.CriticStub, fake: FakeCritic
) -> None:
    default = [item async for item in stub.Export(pb.ExportRequest(), timeout=5)]
    raw = [item async for item in stub.Export(pb.ExportRequest(redact=False, embeddings=True), timeout=5)]

    assert [item.record_id for item in default] == ["r-old", "r-new"]
    assert list(default[0].embedding) == [] and list(raw[0].embedding) == [
        pytest.approx(0.6),
        pytest.approx(0.8),
    ]
    assert [given for name, given in fake.calls if name == "export"] == [(0, True), (0, False)]


async def test_grpc_doctor_and_mute(stub: pb_grpc.CriticStub, fake: FakeCritic) -> None:
    report = await stub.Doctor(pb.DoctorRequest(), timeout=5)
    muted = await stub.Mute(pb.MuteRequest(seconds=1800), timeout=5)
    unmuted = await stub.Mute(pb.MuteRequest(seconds=0), timeout=5)

    assert [hook.shell for hook in report.hooks] == ["bash", "fish"] and report.records.database == 98765
    assert report.model.available and report.mute.muted and list(report.problems)
    assert muted.muted and muted.until.ToMilliseconds() == NOW_MS + 1_800_000
    assert not unmuted.muted and not unmuted.HasField("until")


NO_LINE = pb.InvocationEvent(shell="bash", exit_status=1)  # noqa: S604 (the event's shell name)
NEGATIVE_STATUS = pb.InvocationEvent(shell="bash", command_line="ls", exit_status=-1)  # noqa: S604


@pytest.mark.parametrize(
    ("call", "request_message", "sentence"),
    [
        ("ReportEvent", NO_LINE, "command_line is required"),
        ("ReportEvent", NEGATIVE_STATUS, "from 0 to 255"),
        ("Search", pb.SearchRequest(trigger="nope"), "trigger must be one of"),
        ("Similar", pb.SimilarRequest(), "record_id is required"),
        ("Mute", pb.MuteRequest(seconds=40 * 86400), "31 days"),
    ],
)
async def test_grpc_bad_input_is_invalid_argument_with_the_sentence(
    stub: pb_grpc.CriticStub, fake: FakeCritic, call: str, request_message: Any, sentence: str
) -> None:
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await getattr(stub, call)(request_message, timeout=5)
    assert caught.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert sentence in (caught.value.details() or "")
    assert fake.calls == []


async def test_grpc_refusals_of_the_critic_keep_their_status(
    stub: pb_grpc.CriticStub, fake: FakeCritic
) -> None:
    with pytest.raises(grpc.aio.AioRpcError) as gone:
        await stub.Similar(pb.SimilarRequest(record_id="r-gone"), timeout=5)
    fake.refuse_export = True
    with pytest.raises(grpc.aio.AioRpcError) as unavailable:
        _ = [item async for item in stub.Export(pb.ExportRequest(), timeout=5)]

    assert (gone.value.code(), gone.value.details()) == (
        grpc.StatusCode.NOT_FOUND,
        "no record has the id r-gone",
    )
    assert unavailable.value.code() == grpc.StatusCode.UNAVAILABLE


# ---- issue 26: out-of-range times and ids that are not ids ---------------------------------------

FAR_FUTURE = pb.InvocationEvent(  # noqa: S604 (the event's shell name)
    shell="pane", command_line="ls", started=Timestamp(seconds=10**15)
)
BAD_NANOS = pb.InvocationEvent(  # noqa: S604 (the event's shell name)
    shell="pane", command_line="ls", started=Timestamp(seconds=1_760_000_000, nanos=-5)
)
NEXT_YEAR = pb.InvocationEvent(  # noqa: S604 (the event's shell name)
    shell="pane", command_line="ls", started=Timestamp(seconds=NOW_MS // 1000 + 365 * 86400)
)


@pytest.mark.parametrize(
    ("request_message", "sentence"),
    [
        (FAR_FUTURE, "started is not a valid time"),
        (BAD_NANOS, "started is not a valid time"),
        (NEXT_YEAR, "started is more than a day ahead"),
    ],
)
async def test_grpc_report_event_with_an_out_of_range_timestamp_is_invalid_argument(
    stub: pb_grpc.CriticStub, fake: FakeCritic, request_message: pb.InvocationEvent, sentence: str
) -> None:
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await stub.ReportEvent(request_message, timeout=5)
    assert caught.value.code() == grpc.StatusCode.INVALID_ARGUMENT, caught.value.details()
    assert sentence in (caught.value.details() or "")
    assert fake.calls == []


async def test_grpc_search_and_export_with_an_out_of_range_since_are_invalid_argument(
    stub: pb_grpc.CriticStub, fake: FakeCritic
) -> None:
    with pytest.raises(grpc.aio.AioRpcError) as search:
        await stub.Search(pb.SearchRequest(since=Timestamp(seconds=10**15)), timeout=5)
    with pytest.raises(grpc.aio.AioRpcError) as export:
        _ = [
            item
            async for item in stub.Export(pb.ExportRequest(since=Timestamp(seconds=-(10**13))), timeout=5)
        ]
    assert search.value.code() == export.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert "since is not a valid time" in (search.value.details() or "")
    assert fake.calls == []


def test_http_report_event_a_year_ahead_is_a_400_naming_started(http: TestClient, fake: FakeCritic) -> None:
    answer = http.post("/v1/critic/events", json={**EVENT, "started": "2026-12-01T00:00:00Z"})
    assert answer.status_code == 400 and answer.json()["field"] == "started"
    assert fake.calls == []


@pytest.mark.parametrize("record_id", ["/etc/passwd", "../../critic-20251001.tsv", "a b", "x" * 65])
def test_similar_with_a_path_as_id_is_a_400_with_the_reason(
    http: TestClient, fake: FakeCritic, record_id: str
) -> None:
    by_body = http.post("/v1/critic/similar", json={"record_id": record_id})
    by_query = http.get("/v1/critic/similar", params={"record_id": record_id})
    for answer in (by_body, by_query):
        assert answer.status_code == 400, answer.text
        assert answer.json()["field"] == "record_id"
        assert "not a path" in answer.json()["detail"]
    assert fake.calls == []


def test_similar_documents_its_400_and_404(http: TestClient) -> None:
    paths = http.get("/openapi.json").json()["paths"]["/v1/critic/similar"]
    for method in ("get", "post"):
        assert {"400", "404"} <= set(paths[method]["responses"]), method
