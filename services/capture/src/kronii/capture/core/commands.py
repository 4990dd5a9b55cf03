"""The commands the API builds for the use cases, and what the use cases answer.

A capture request crosses the service in two forms: this command, built once by the API from the
wire (HTTP JSON or capture.proto's CaptureRequest), and the `CaptureSpec` its validation makes,
which the job keeps.
"""

from __future__ import annotations

from dataclasses import dataclass

from kronii.capture.core.request import Bypass, CaptureSpec, Priority, validate_request

__all__ = ["CaptureAccepted", "CaptureRequest"]


@dataclass(frozen=True, slots=True)
class CaptureRequest:
    """A capture request as the caller sent it, not yet validated (seed 000, "CaptureRequest fields").

    0, the empty string and the proto's UNSPECIFIED mean "the default"; `bypass` and `priority` come
    as the wire carries them (a proto number, a name, or the core enum).
    """

    process_id: int = 0
    app_name: str = ""
    app_start_time_ms: int = 0
    window_id: int = 0
    bypass: Bypass | str | int | None = None
    burst_count: int = 0
    burst_interval_ms: int = 0
    priority: Priority | str | int | None = None
    ttl_ms: int = 0
    requester: str = ""

    def validated(self, *, default_ttl_ms: int) -> CaptureSpec:
        """The spec, with `default_ttl_ms` (the service's) for a ttl of 0; RequestError names the
        first bad field."""
        return validate_request(
            process_id=self.process_id,
            app_name=self.app_name,
            app_start_time_ms=self.app_start_time_ms,
            window_id=self.window_id,
            bypass=self.bypass,
            burst_count=self.burst_count,
            burst_interval_ms=self.burst_interval_ms,
            priority=self.priority,
            ttl_ms=self.ttl_ms or default_ttl_ms,
            requester=self.requester,
        )


@dataclass(frozen=True, slots=True)
class CaptureAccepted:
    """A request taken: the job it became, and whether it joined a live job for the same target."""

    job_id: str
    merged: bool
