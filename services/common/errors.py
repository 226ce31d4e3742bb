"""Typed domain errors and the one table that maps them to gRPC and HTTP.

Domain modules raise these; the gRPC server interceptor turns them into a status code plus
the stable ``code`` string in trailing metadata; clients turn a failed RPC back into the same
error; the gateway's exception handler turns them into HTTP with a JSON body
``{"status": "error", "code": ..., "message": ...}``. Nothing here imports grpc.
"""

from __future__ import annotations

from typing import ClassVar

# gRPC status code names (grpc.StatusCode.<name>); kept as strings so domain code need not
# import grpc.
ERROR_CODE_METADATA_KEY = "zocrates-error-code"


class ZocratesError(Exception):
    """Base class. ``code`` is stable and machine-readable; ``message`` is for a person."""

    grpc_status: ClassVar[str] = "INTERNAL"
    http_status: ClassVar[int] = 500
    default_code: ClassVar[str] = "internal_error"

    def __init__(self, message: str, *, code: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.code = code or self.default_code

    def __repr__(self) -> str:
        return f"{type(self).__name__}(code={self.code!r}, message={self.message!r})"


class InvalidArgument(ZocratesError):
    grpc_status = "INVALID_ARGUMENT"
    http_status = 400
    default_code = "invalid_argument"


class NotFound(ZocratesError):
    grpc_status = "NOT_FOUND"
    http_status = 404
    default_code = "not_found"


class AlreadyExists(ZocratesError):
    grpc_status = "ALREADY_EXISTS"
    http_status = 409
    default_code = "already_exists"


class Conflict(ZocratesError):
    """The resource is in a state that forbids the request (busy, pending checkpoint...)."""

    grpc_status = "FAILED_PRECONDITION"
    http_status = 409
    default_code = "conflict"


class StaleSession(ZocratesError):
    """The caller's copy of a session was superseded in storage (ADK StaleSessionError)."""

    grpc_status = "ABORTED"
    http_status = 409
    default_code = "stale_session"


class Unauthenticated(ZocratesError):
    grpc_status = "UNAUTHENTICATED"
    http_status = 401
    default_code = "unauthorized"


class PermissionDenied(ZocratesError):
    grpc_status = "PERMISSION_DENIED"
    http_status = 403
    default_code = "forbidden"


class Unavailable(ZocratesError):
    """A peer or resource cannot be reached right now; retrying later may work."""

    grpc_status = "UNAVAILABLE"
    http_status = 503
    default_code = "unavailable"


class DeadlineExceeded(ZocratesError):
    grpc_status = "DEADLINE_EXCEEDED"
    http_status = 504
    default_code = "deadline_exceeded"


class ResourceExhausted(ZocratesError):
    grpc_status = "RESOURCE_EXHAUSTED"
    http_status = 429
    default_code = "resource_exhausted"


class Internal(ZocratesError):
    pass


_BY_GRPC_STATUS: dict[str, type[ZocratesError]] = {
    cls.grpc_status: cls
    for cls in (
        InvalidArgument,
        NotFound,
        AlreadyExists,
        Conflict,
        StaleSession,
        Unauthenticated,
        PermissionDenied,
        Unavailable,
        DeadlineExceeded,
        ResourceExhausted,
        Internal,
    )
}
# Statuses that no domain error raises but a peer or the transport can produce.
_BY_GRPC_STATUS.update(
    {
        "OUT_OF_RANGE": InvalidArgument,
        "CANCELLED": Unavailable,
        "UNKNOWN": Internal,
        "UNIMPLEMENTED": Internal,
        "DATA_LOSS": Internal,
    }
)


def error_for_grpc_status(status_name: str) -> type[ZocratesError]:
    """The domain error class for a gRPC status code name such as ``"NOT_FOUND"``."""
    return _BY_GRPC_STATUS.get(status_name, Internal)
