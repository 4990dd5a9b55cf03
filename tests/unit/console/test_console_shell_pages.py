"""The Shell page in process (the critic answered in its own JSON shapes): the records with their
hints and clusters, a search by meaning passed to the critic, a search by text matched as written."""

from __future__ import annotations

from typing import Any

from tests.unit.console.console_records_harness import FakeServices, build_pages


def _hit(rid: str, line: str, status: int, trigger: str, error: str = "") -> dict[str, Any]:
    record = {"record_id": rid, "timestamp": "2026-12-06T09:00:00Z", "command_line": line, "cwd": "~/src",
              "exit_status": status, "trigger": trigger, "error_message": error, "error_type": "", "summary": ""}  # fmt: skip
    return {"record": record, "similarity": 0.8, "score": 0.9, "tier": "ram"}


def _services() -> FakeServices:
    services = FakeServices()
    hits = [
        _hit("r1", "git push origin main", 128, "error", "Permission denied (publickey)"),
        _hit("r2", "ls", 0, "ok"),
    ]
    services.on("critic", "GET", "/v1/critic/search", lambda params, body: {"hits": hits})
    clusters = [{"cluster_id": "20261205-1", "day": "2026-12-05", "command_line": "git push origin main",
                 "error_message": "Permission denied", "record_ids": ["r1", "r0"]}]  # fmt: skip
    services.on("critic", "GET", "/v1/critic/clusters", lambda params, body: {"clusters": clusters})
    return services


async def test_records_show_their_hint_and_cluster_and_meaning_goes_to_the_critic() -> None:
    services = _services()
    pages = await build_pages(services)
    async with pages.session() as client:
        page = await client.get("/shell", params={"q": "push rejected", "mode": "meaning"})

    html = page.text
    assert page.status_code == 200
    assert "git push origin main" in html and "Permission denied (publickey)" in html
    assert "failed (what fixed it before, if known)" in html and "20261205-1" in html
    assert ("critic", "GET", "/v1/critic/search", {"text": "push rejected", "take": 50}) in services.calls


async def test_by_text_keeps_only_the_records_with_the_words() -> None:
    pages = await build_pages(_services())
    async with pages.session() as client:
        page = await client.get("/shell", params={"q": "origin", "mode": "text"})

    assert "git push origin main" in page.text and "<code>ls</code>" not in page.text


async def test_an_unknown_search_kind_is_refused_with_a_sentence() -> None:
    pages = await build_pages(_services())
    async with pages.session() as client:
        page = await client.get("/shell", params={"q": "x", "mode": "regex"})

    assert page.status_code == 400 and "search by meaning or by text" in page.text
