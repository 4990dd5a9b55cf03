"""Errors the API layers translate: each carries the HTTP status and the gRPC code it maps to."""

from __future__ import annotations

import enum

__all__ = ["ApiError", "Kind"]


class Kind(enum.Enum):
    INVALID = (400, "INVALID_ARGUMENT")
    UNAUTHENTICATED = (401, "UNAUTHENTICATED")
    FORBIDDEN = (403, "PERMISSION_DENIED")
    NOT_FOUND = (404, "NOT_FOUND")
    CONFLICT = (409, "FAILED_PRECONDITION")
    UNAVAILABLE = (503, "UNAVAILABLE")


class ApiError(Exception):
    def __init__(self, kind: Kind, message: str) -> None:
        super().__init__(message)
        self.kind = kind
        self.message = message

    @property
    def http_status(self) -> int:
        return self.kind.value[0]

    @property
    def grpc_code(self) -> str:
        return self.kind.value[1]
