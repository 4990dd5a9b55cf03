"""Prometheus metrics and OpenTelemetry tracing, set up the same way in every service."""

from __future__ import annotations

import importlib.metadata
import os
import platform

from kronii.foundation.logs import current_service
from opentelemetry import context as otel_context
from opentelemetry import trace
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import Span, SpanProcessor, TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor
from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, disable_created_metrics

__all__ = ["CommonMetrics", "configure_tracing", "service_version", "tracer"]

# No `_created` series: a third of what Prometheus scraped from the mesh, read by no rule or panel (a
# counter's reset is seen from its value). Every kronii process imports this module before its metrics.
disable_created_metrics()  # type: ignore[no-untyped-call]  # untyped in prometheus_client


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
        # `required` is "true" when the dependency decides /readyz, "false" for an optional one
        # (a display, lock signals, desktop notifications): alert on required="true" only.
        self.dependency_ready = Gauge(
            "kronii_dependency_ready",
            "1 when a dependency is ready, 0 when not; required=true ones decide /readyz",
            ["service", "dependency", "required"],
            registry=registry,
        )
        self.audit_rows = Counter(
            "kronii_audit_rows", "Audit rows appended", ["service", "action"], registry=registry
        )
        self.build_info = Gauge(
            "kronii_build_info",
            "Always 1: the service's package version and the Python it runs on",
            ["service", "version", "python"],
            registry=registry,
        )
        self.build_info.labels(service, service_version(service), platform.python_version()).set(1)
        self._required: dict[str, str] = {}

    def set_dependency(self, dependency: str, ready: bool, required: bool) -> None:
        """One dependency's readiness gauge. A dependency whose `required` changes keeps one series."""
        flag = "true" if required else "false"
        previous = self._required.get(dependency)
        if previous is not None and previous != flag:
            self.dependency_ready.remove(self.service, dependency, previous)
        self._required[dependency] = flag
        self.dependency_ready.labels(self.service, dependency, flag).set(1 if ready else 0)


def service_version(service: str) -> str:
    """The installed version of the service's distribution (kronii-<service>), else "unknown"."""
    try:
        return importlib.metadata.version(f"kronii-{service}")
    except importlib.metadata.PackageNotFoundError:
        return "unknown"


_configured = False


class _ServiceAttribute(SpanProcessor):
    """Names the service on each span, where several services share one process and so one resource."""

    def on_start(self, span: Span, parent_context: otel_context.Context | None = None) -> None:
        service = current_service.get()
        if service:
            span.set_attribute("kronii.service", service)


def configure_tracing(service: str) -> None:
    """Install a tracer provider; export spans over OTLP when OTEL_EXPORTER_OTLP_ENDPOINT is set."""
    global _configured
    if _configured:
        return
    provider = TracerProvider(resource=Resource.create({"service.name": f"kronii-{service}"}))
    provider.add_span_processor(_ServiceAttribute())
    if os.environ.get("OTEL_EXPORTER_OTLP_ENDPOINT"):
        from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter

        provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
    trace.set_tracer_provider(provider)
    _configured = True


def tracer(name: str) -> trace.Tracer:
    return trace.get_tracer(name)
