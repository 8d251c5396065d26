import grpc
import pytest

from a2a_platform_worker.failures import Code, UpdateFailure, classify


def failure(code: Code, reason: str | None = None) -> UpdateFailure:
    return UpdateFailure(code, reason, "message")


def test_codes_are_grpcs() -> None:
    assert {code.name: code.value for code in Code} == {
        status.name: status.value[0] for status in grpc.StatusCode
    }


def test_a_lost_lease_stops_the_task_whatever_the_code() -> None:
    assert classify(failure(Code.FAILED_PRECONDITION, "LEASE_LOST")) == "stop"
    assert classify(failure(Code.INVALID_ARGUMENT, "LEASE_LOST")) == "stop"
    assert classify(failure(Code.FAILED_PRECONDITION)) == "stop"


@pytest.mark.parametrize(
    "code",
    [
        Code.UNAVAILABLE,
        Code.CANCELLED,
        Code.DEADLINE_EXCEEDED,
        Code.INTERNAL,
        Code.ABORTED,
        Code.RESOURCE_EXHAUSTED,
    ],
)
def test_transient_codes_are_retried(code: Code) -> None:
    assert classify(failure(code)) == "retry"


@pytest.mark.parametrize(
    "code", [Code.INVALID_ARGUMENT, Code.UNAUTHENTICATED, Code.NOT_FOUND, Code.UNKNOWN]
)
def test_other_codes_are_bugs(code: Code) -> None:
    assert classify(failure(code, "INVALID_TRANSITION")) == "bug"
