"""Prometheus metrics and OpenTelemetry tracing, set up the same way in every service."""

from __future__ import annotations

import os

from opentelemetry import trace
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor
from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram

__all__ = ["CommonMetrics", "configure_tracing", "tracer"]


class CommonMetrics:
    """Metrics every service exports. Label values never carry user data (no titles, no paths)."""

    def __init__(self, service: str, registry: CollectorRegistry) -> None:
        self.service = service
        self.registry = registry
        self.http_requests = Counter(
            "kronii_http_requests", "HTTP requests served", ["service", "route", "status"], registry=registry
        )
        self.http_duration = Histogram(
            "kronii_http_request_duration_seconds",
            "HTTP request latency",
            ["service", "route"],
            registry=registry,
        )
        self.bus_published = Counter(
            "kronii_bus_published", "NATS messages published", ["service", "subject"], registry=registry
        )
        self.bus_received = Counter(
            "kronii_bus_received", "NATS messages received", ["service", "subject"], registry=registry
        )
        self.dependency_ready = Gauge(
            "kronii_dependency_ready",
            "1 when a dependency is ready",
            ["service", "dependency"],
            registry=registry,
        )
        self.audit_rows = Counter(
            "kronii_audit_rows", "Audit rows appended", ["service", "action"], registry=registry
        )


_configured = False


def configure_tracing(service: str) -> None:
    """Install a tracer provider; export spans over OTLP when OTEL_EXPORTER_OTLP_ENDPOINT is set."""
    global _configured
    if _configured:
        return
    provider = TracerProvider(resource=Resource.create({"service.name": f"kronii-{service}"}))
    if os.environ.get("OTEL_EXPORTER_OTLP_ENDPOINT"):
        from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter

        provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
    trace.set_tracer_provider(provider)
    _configured = True


def tracer(name: str) -> trace.Tracer:
    return trace.get_tracer(name)
