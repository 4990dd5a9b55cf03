"""The gRPC server every service with a gRPC port serves: the shared interceptors (access, guard,
error answers, readiness gate), the service's servicers, and the standard health and reflection
services."""

from __future__ import annotations

from collections.abc import Callable, Iterable

import grpc
from grpc_health.v1 import health, health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection
from kronii.edge.access import AccessInterceptor, AccessPolicy
from kronii.edge.api_edge import KroniiErrorInterceptor
from kronii.edge.grpc_guard import GuardInterceptor
from kronii.runtime.readiness import GateInterceptor, ReadinessGate

__all__ = ["GrpcServer"]


class GrpcServer:
    def __init__(self, access: AccessPolicy, gate: ReadinessGate) -> None:
        self.access = access
        self.gate = gate
        self.health = health.aio.HealthServicer()
        self.server: grpc.aio.Server | None = None
        self.names: list[str] = []
        self.bound_port = 0

    async def start(self, add_to_grpc: Callable[[grpc.aio.Server], Iterable[str]], address: str) -> None:
        """Listen on `address` with the servicers `add_to_grpc` registers (it returns their full names)."""
        access = AccessInterceptor(self.access, lambda: self.bound_port)
        interceptors = [access, GuardInterceptor(), KroniiErrorInterceptor(), GateInterceptor(self.gate)]
        server = grpc.aio.server(interceptors=interceptors)
        names = list(add_to_grpc(server))
        health_pb2_grpc.add_HealthServicer_to_server(self.health, server)
        reflection.enable_server_reflection(
            [*names, health_pb2.DESCRIPTOR.services_by_name["Health"].full_name, reflection.SERVICE_NAME],
            server,
        )
        self.bound_port = server.add_insecure_port(address)
        if self.bound_port == 0:
            raise OSError(f"cannot listen for gRPC on {address}")
        await server.start()
        self.server = server
        self.names = names

    async def set_serving(self, serving: bool) -> None:
        status = (
            health_pb2.HealthCheckResponse.SERVING if serving else health_pb2.HealthCheckResponse.NOT_SERVING
        )
        for service_name in ["", *self.names]:
            await self.health.set(service_name, status)

    async def stop(self, grace: float) -> None:
        if self.server is not None:
            await self.server.stop(grace=grace)
