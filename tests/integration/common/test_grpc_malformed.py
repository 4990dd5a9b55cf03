"""Malformed protobuf on every gRPC method of every service (enumerated from the generated
descriptors in libs/api, plus health) is INVALID_ARGUMENT with a sentence naming the message type,
never UNKNOWN with a Python class in the detail."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import grpc
import pytest
from google.protobuf.descriptor import MethodDescriptor
from grpc_health.v1 import health_pb2
from kronii.activity.v1 import activity_pb2
from kronii.capture.v1 import capture_pb2
from kronii.pipeline.v1 import pipeline_pb2
from kronii.scheduler.v1 import scheduler_pb2
from kronii.supervisor.v1 import supervisor_pb2
from kronii.vision.v1 import vision_pb2, vision_pb2_grpc

from tests.integration.common.hostile_support import Mesh

# Which service serves each proto's services (the pipeline's proto declares none it serves).
_PROTOS = {
    "sensor": activity_pb2,
    "capture": capture_pb2,
    "pipeline": pipeline_pb2,
    "scheduler": scheduler_pb2,
    "supervisor": supervisor_pb2,
    "vision": vision_pb2,
}
MALFORMED = b"\xff\xff\xff"


def _methods() -> Iterator[tuple[str, MethodDescriptor]]:
    for name, module in _PROTOS.items():
        for service in module.DESCRIPTOR.services_by_name.values():
            for method in service.methods:
                yield name, method
        yield name, health_pb2.DESCRIPTOR.services_by_name["Health"].methods_by_name["Check"]


CASES = list(_methods())


def test_every_service_method_is_covered() -> None:
    served = {method.containing_service.full_name for _, method in CASES}
    assert {"kronii.activity.v1.SensorService", "kronii.capture.v1.ScreenCapture",
            "kronii.scheduler.v1.SchedulerService", "kronii.supervisor.v1.SupervisorService",
            "kronii.vision.v1.Vision"} <= served  # fmt: skip
    assert len(CASES) >= 30


def _call(port: int, method: MethodDescriptor, payload: bytes) -> grpc.RpcError:
    path = f"/{method.containing_service.full_name}/{method.name}"
    with grpc.insecure_channel(f"127.0.0.1:{port}") as channel:
        try:
            if method.server_streaming:
                stream = channel.unary_stream(path, request_serializer=None, response_deserializer=None)
                list(stream(payload, timeout=10))
            else:
                channel.unary_unary(path, request_serializer=None, response_deserializer=None)(
                    payload, timeout=10
                )
        except grpc.RpcError as error:
            return error
    raise AssertionError(f"{path} took {payload!r}")


@pytest.mark.parametrize(("name", "method"), CASES, ids=[f"{name}:{method.name}" for name, method in CASES])
def test_malformed_request_is_invalid_argument_with_a_sentence(
    mesh: Mesh, name: str, method: MethodDescriptor
) -> None:
    error = _call(mesh[name].grpc_port, method, MALFORMED)
    code, detail = error.code(), error.details() or ""
    assert code == grpc.StatusCode.INVALID_ARGUMENT, (code, detail)
    assert detail == f"the request is not a valid {method.input_type.full_name} message"
    assert "class" not in detail and "Error" not in detail


@pytest.mark.parametrize("name", ["sensor", "supervisor"])
def test_malformed_message_on_a_bidirectional_stream_is_invalid_argument(mesh: Mesh, name: str) -> None:
    path = "/grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo"
    with grpc.insecure_channel(f"127.0.0.1:{mesh[name].grpc_port}") as channel:
        call = channel.stream_stream(path, request_serializer=None, response_deserializer=None)
        with pytest.raises(grpc.RpcError) as caught:
            list(call(iter([MALFORMED]), timeout=10))
    error: Any = caught.value
    assert error.code() == grpc.StatusCode.INVALID_ARGUMENT, (error.code(), error.details())
    assert (
        error.details()
        == "the request is not a valid grpc.reflection.v1alpha.ServerReflectionRequest message"
    )


def test_begin_challenge_with_an_empty_id_is_invalid_argument_naming_client_id(mesh: Mesh) -> None:
    method = capture_pb2.DESCRIPTOR.services_by_name["ScreenCapture"].methods_by_name["BeginChallenge"]
    for client_id in ("", "agent\x00one", "agent\u202eone"):
        payload = capture_pb2.ChallengeRequest(client_id=client_id).SerializeToString()
        error = _call(mesh["capture"].grpc_port, method, payload)
        assert error.code() == grpc.StatusCode.INVALID_ARGUMENT, (error.code(), error.details())
        assert "client id" in (error.details() or "")
        assert "kronii." not in (error.details() or "")


def test_a_well_formed_request_still_answers(mesh: Mesh) -> None:
    method = scheduler_pb2.DESCRIPTOR.services_by_name["SchedulerService"].methods_by_name["GetSchedule"]
    path = f"/{method.containing_service.full_name}/{method.name}"
    with grpc.insecure_channel(f"127.0.0.1:{mesh['scheduler'].grpc_port}") as channel:
        call = channel.unary_unary(path, request_serializer=None, response_deserializer=None)
        raw = call(scheduler_pb2.GetScheduleRequest().SerializeToString(), timeout=10)
    view = scheduler_pb2.ScheduleView.FromString(raw)
    assert view.IsInitialized()


def test_an_intent_with_a_bidi_override_is_invalid_argument_over_grpc_too(mesh: Mesh) -> None:
    with grpc.insecure_channel(f"127.0.0.1:{mesh['vision'].grpc_port}") as channel:
        stub = vision_pb2_grpc.VisionStub(channel)
        with pytest.raises(grpc.RpcError) as caught:
            stub.MakePlan(vision_pb2.PlanRequest(intent="click \u202eKO"), timeout=20)
    error: Any = caught.value
    assert error.code() == grpc.StatusCode.INVALID_ARGUMENT, (error.code(), error.details())
    assert "U+202E" in error.details()
