"""The errors every service raises for a caller: each carries its code, the HTTP status and the gRPC
status it maps to, and a sentence safe to return. `kronii.edge.api_edge` renders them (one HTTP
handler, one gRPC interceptor).

This module imports neither grpc nor fastapi (the CLI and `kronii status` import it and must stay
light), so the gRPC status is the `grpc.StatusCode` member's name, resolved where it is sent.
"""

from __future__ import annotations

from typing import ClassVar

__all__ = [
    "Conflict",
    "FailedPrecondition",
    "InvalidArgument",
    "KroniiError",
    "NotFound",
    "PermissionDenied",
    "ResourceExhausted",
    "StillStarting",
    "StorageFull",
    "TooLarge",
    "Unauthenticated",
    "Unavailable",
    "Unprocessable",
    "code_for_grpc_status",
    "code_for_status",
    "error_body",
]


class KroniiError(Exception):
    """`message` is a sentence safe to return to the caller (no path, no secret); `field` names the
    request field at fault; `retry_after_ms` tells the caller when to try again (sent as Retry-After).

    Raised as itself it is the service's own failure (500, INTERNAL): a caller's mistake is one of
    the subclasses, so it stays a 4xx."""

    code: ClassVar[str] = "internal"
    http_status: ClassVar[int] = 500
    grpc_status: ClassVar[str] = "INTERNAL"
    # When the caller is told to come back if the raiser named no time (0: not told).
    default_retry_after_ms: ClassVar[int] = 0

    def __init__(self, message: str, *, field: str = "", retry_after_ms: int = 0) -> None:
        super().__init__(message)
        self.message = message
        self.field = field
        self.retry_after_ms = retry_after_ms or self.default_retry_after_ms

    @property
    def retry_after_secs(self) -> int:
        """Whole seconds for a Retry-After header (at least 1), or 0 when the caller was not told to wait."""
        return max(1, self.retry_after_ms // 1000) if self.retry_after_ms else 0


class InvalidArgument(KroniiError):
    code = "invalid_argument"
    http_status = 400
    grpc_status = "INVALID_ARGUMENT"


class Unprocessable(InvalidArgument):
    """A well-formed request whose content cannot be acted on (HTTP keeps it apart from a malformed one)."""

    code = "unprocessable"
    http_status = 422


class TooLarge(InvalidArgument):
    """The request is larger than the route takes (a body over its limit): sent again, it fails again."""

    code = "too_large"
    http_status = 413


class Unauthenticated(KroniiError):
    code = "unauthenticated"
    http_status = 401
    grpc_status = "UNAUTHENTICATED"


class PermissionDenied(KroniiError):
    code = "permission_denied"
    http_status = 403
    grpc_status = "PERMISSION_DENIED"


class NotFound(KroniiError):
    code = "not_found"
    http_status = 404
    grpc_status = "NOT_FOUND"


class FailedPrecondition(KroniiError):
    """The request is valid but the state it targets does not allow it now (HTTP calls that a conflict)."""

    code = "failed_precondition"
    http_status = 409
    grpc_status = "FAILED_PRECONDITION"


Conflict = FailedPrecondition


class ResourceExhausted(KroniiError):
    code = "resource_exhausted"
    http_status = 429
    grpc_status = "RESOURCE_EXHAUSTED"


class Unavailable(KroniiError):
    """The service cannot do it now, and the caller may retry: every 503 says when (Retry-After)."""

    code = "unavailable"
    http_status = 503
    grpc_status = "UNAVAILABLE"
    default_retry_after_ms = 5000


class StillStarting(Unavailable):
    """The service has not finished starting (or is stopping): nothing was done."""

    code = "starting"
    default_retry_after_ms = 1000


class StorageFull(Unavailable):
    """A store cannot write for want of room: a full disk or quota (ENOSPC, EDQUOT, PostgreSQL's
    disk_full), or Redis refusing writes (MISCONF after a failed save, OOM at maxmemory)."""

    code = "storage_full"
    default_retry_after_ms = 10_000


def error_body(error: KroniiError) -> dict[str, str]:
    """The HTTP body of every refusal: the error's `code` (what a client branches on, e.g. the CLI's
    exit code), the sentence in `detail`, and `field` when a request field is at fault."""
    body = {"code": error.code, "detail": error.message}
    if error.field:
        body["field"] = error.field
    return body


def _statuses() -> dict[int, str]:
    # The first class to claim a status names it (Unavailable before StillStarting and StorageFull).
    kinds = [KroniiError, InvalidArgument, Unprocessable, TooLarge, Unauthenticated, PermissionDenied,
             NotFound, FailedPrecondition, ResourceExhausted, Unavailable]  # fmt: skip
    return {kind.http_status: kind.code for kind in reversed(kinds)}


_CODE_FOR_STATUS = _statuses()


# gRPC status names (grpc.StatusCode.X.name) with no error of their own here.
_CODE_FOR_GRPC_NAME = {"OUT_OF_RANGE": InvalidArgument.code, "DEADLINE_EXCEEDED": Unavailable.code}


def code_for_grpc_status(name: str) -> str:
    """The code of a gRPC refusal, from its status name: the error that answers with that status."""
    for kind in (InvalidArgument, Unauthenticated, PermissionDenied, NotFound, FailedPrecondition,
                 ResourceExhausted, Unavailable):  # fmt: skip
        if kind.grpc_status == name:
            return kind.code
    return _CODE_FOR_GRPC_NAME.get(name, KroniiError.code)


def code_for_status(status: int) -> str:
    """The code an answer of `status` carries when it did not say one (a proxy's 502, an old server):
    the code of the error that answers with that status, `internal` for any other 5xx."""
    if status in (502, 504):
        return Unavailable.code
    return _CODE_FOR_STATUS.get(status, KroniiError.code if status >= 500 else InvalidArgument.code)
