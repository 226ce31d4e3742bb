"""The domain-error table: gRPC status names, HTTP statuses and the way back from gRPC."""

from __future__ import annotations

import grpc
import pytest

import services.common.app_config  # noqa: F401  (registers ConfigError as a subclass)
from services.common import errors
from services.common.errors import (
    AlreadyExists,
    Conflict,
    DeadlineExceeded,
    Internal,
    InvalidArgument,
    NotFound,
    StaleSession,
    Unavailable,
    ZocratesError,
    error_for_grpc_status,
)


def _all_subclasses(cls: type) -> list[type]:
    found: list[type] = []
    for sub in cls.__subclasses__():
        found.append(sub)
        found.extend(_all_subclasses(sub))
    return found


ALL_ERRORS = [ZocratesError, *_all_subclasses(ZocratesError)]
MODULE_ERRORS = [
    obj for obj in vars(errors).values() if isinstance(obj, type) and issubclass(obj, ZocratesError)
]


def test_every_class_of_the_module_is_collected() -> None:
    assert set(MODULE_ERRORS) <= set(ALL_ERRORS)
    assert len(MODULE_ERRORS) >= 12


@pytest.mark.parametrize("cls", ALL_ERRORS, ids=lambda c: c.__name__)
def test_grpc_status_is_a_real_status_code(cls: type[ZocratesError]) -> None:
    code = grpc.StatusCode[cls.grpc_status]
    assert code is not grpc.StatusCode.OK


@pytest.mark.parametrize("cls", ALL_ERRORS, ids=lambda c: c.__name__)
def test_round_trip_keeps_the_http_status(cls: type[ZocratesError]) -> None:
    back = error_for_grpc_status(cls.grpc_status)
    assert issubclass(back, ZocratesError)
    assert back.http_status == cls.http_status
    assert back.grpc_status == cls.grpc_status


@pytest.mark.parametrize("cls", MODULE_ERRORS, ids=lambda c: c.__name__)
def test_module_classes_round_trip_to_themselves(cls: type[ZocratesError]) -> None:
    expected = Internal if cls is ZocratesError else cls
    assert error_for_grpc_status(cls.grpc_status) is expected


@pytest.mark.parametrize(
    ("status", "cls", "http"),
    [
        ("UNAVAILABLE", Unavailable, 503),
        ("DEADLINE_EXCEEDED", DeadlineExceeded, 504),
        ("NOT_FOUND", NotFound, 404),
        ("ABORTED", StaleSession, 409),
        ("INVALID_ARGUMENT", InvalidArgument, 400),
        ("ALREADY_EXISTS", AlreadyExists, 409),
        ("FAILED_PRECONDITION", Conflict, 409),
        ("UNAUTHENTICATED", errors.Unauthenticated, 401),
        ("PERMISSION_DENIED", errors.PermissionDenied, 403),
        ("RESOURCE_EXHAUSTED", errors.ResourceExhausted, 429),
        ("INTERNAL", Internal, 500),
    ],
)
def test_known_statuses(status: str, cls: type[ZocratesError], http: int) -> None:
    assert error_for_grpc_status(status) is cls
    assert cls.http_status == http


@pytest.mark.parametrize(
    ("status", "http"),
    [("OUT_OF_RANGE", 400), ("CANCELLED", 503), ("UNKNOWN", 500), ("UNIMPLEMENTED", 500)],
)
def test_transport_statuses(status: str, http: int) -> None:
    assert error_for_grpc_status(status).http_status == http


@pytest.mark.parametrize("status", ["", "not_found", "BOGUS", "OK", "42"])
def test_unknown_names_map_to_500(status: str) -> None:
    cls = error_for_grpc_status(status)
    assert cls is Internal
    assert cls.http_status == 500


def test_every_grpc_error_status_has_a_mapping_with_a_real_http_status() -> None:
    for code in grpc.StatusCode:
        if code is grpc.StatusCode.OK:
            continue
        cls = error_for_grpc_status(code.name)
        assert 400 <= cls.http_status <= 599


def test_code_and_message() -> None:
    err = NotFound("Session s1 was not found.")
    assert err.code == "not_found"
    assert err.message == "Session s1 was not found."
    assert str(err) == "Session s1 was not found."
    custom = Conflict("busy", code="session_busy")
    assert custom.code == "session_busy"
    assert "session_busy" in repr(custom) and "Conflict" in repr(custom)


def test_default_codes_are_unique_among_module_classes() -> None:
    codes = [cls.default_code for cls in MODULE_ERRORS if cls is not Internal]
    assert len(codes) == len(set(codes))
