"""Without a display (as under `kronii up` on a server) the capture service still starts, is ready,
says "no display" in /readyz, and refuses capture requests with UNAVAILABLE and a reason."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import grpc
import httpx
import pytest
from kronii.capture.v1 import capture_pb2 as pb
from kronii.capture.v1 import capture_pb2_grpc as pb_grpc

from tests.infra import InfraUrls
from tests.integration.capture.capture_support import CaptureProc, capture_env, start_capture


@pytest.fixture(scope="module")
def headless_capture(
    infra: InfraUrls, capture_database: str, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[CaptureProc]:
    data_dir: Path = tmp_path_factory.mktemp("capture-headless")
    with start_capture(capture_env(infra, capture_database, data_dir, None)) as service:
        yield service


def test_without_a_display_the_service_is_ready_and_reports_no_display(headless_capture: CaptureProc) -> None:
    body = httpx.get(f"{headless_capture.http}/readyz", timeout=10).json()
    assert body["ready"] is True
    display = body["dependencies"]["display"]
    assert display["ready"] is False and display["required"] is False
    assert "no display" in display["detail"]
    assert body["dependencies"]["local_socket"]["ready"] is True


def test_without_a_display_a_request_is_unavailable_with_a_reason(headless_capture: CaptureProc) -> None:
    with (
        grpc.insecure_channel(headless_capture.unix_target) as channel,
        pytest.raises(grpc.RpcError) as refused,
    ):
        pb_grpc.ScreenCaptureStub(channel).RequestScreenCapture(
            pb.CaptureRequest(bypass=pb.FOCUS_NEXT), timeout=10
        )
    assert refused.value.code() == grpc.StatusCode.UNAVAILABLE
    assert "no display" in (refused.value.details() or "")


def test_the_service_stops_on_sigterm_within_five_seconds(headless_capture: CaptureProc) -> None:
    code, took = headless_capture.proc.terminate()
    assert code == 0, headless_capture.proc.output[-2000:]
    assert took < 5.0
