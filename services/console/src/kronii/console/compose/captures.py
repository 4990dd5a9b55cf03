"""The Captures page's use cases, made once at start: capture's shelf over HTTP and its socket, the
person's timezone."""

from __future__ import annotations

from dataclasses import dataclass

from kronii.console.adapters.capture_api import CaptureApi
from kronii.console.adapters.timezone import person_timezone
from kronii.console.deps import ConsoleDeps
from kronii.console.usecases.forget_captures import ForgetCaptures
from kronii.console.usecases.show_captures import ShowCaptures

__all__ = ["CapturesState", "build"]


@dataclass(frozen=True)
class CapturesState:
    show: ShowCaptures
    forget: ForgetCaptures


async def build(deps: ConsoleDeps) -> CapturesState:
    capture = CaptureApi(deps.services)
    zone = person_timezone(deps.settings.timezone)
    return CapturesState(
        ShowCaptures(capture, deps.record, deps.clock, zone), ForgetCaptures(capture, deps.record, zone)
    )
