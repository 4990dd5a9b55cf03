"""The one error type the capture operations raise; the gRPC and HTTP layers map its code."""

from __future__ import annotations

from typing import Literal

__all__ = ["HTTP_STATUS", "CaptureError", "ErrorCode"]

ErrorCode = Literal[
    "invalid_argument",
    "unauthenticated",
    "permission_denied",
    "not_found",
    "resource_exhausted",
    "failed_precondition",
    "unavailable",
]

HTTP_STATUS: dict[ErrorCode, int] = {
    "invalid_argument": 400,
    "unauthenticated": 401,
    "permission_denied": 403,
    "not_found": 404,
    "resource_exhausted": 429,
    "failed_precondition": 409,
    "unavailable": 503,
}


class CaptureError(Exception):
    """`message` is a sentence safe to return to the caller (no path, no secret); `field` names the
    request field for invalid_argument."""

    def __init__(self, code: ErrorCode, message: str, *, field: str = "", retry_after_ms: int = 0) -> None:
        super().__init__(message)
        self.code: ErrorCode = code
        self.message = message
        self.field = field
        self.retry_after_ms = retry_after_ms
