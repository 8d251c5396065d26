"""Failed updates, and what to do about each: retry, stop working on the task, or report a bug."""

from __future__ import annotations

from dataclasses import dataclass
from enum import IntEnum
from typing import Literal


class Code(IntEnum):
    """The gRPC status codes (the numbers every gRPC implementation uses)."""

    OK = 0
    CANCELLED = 1
    UNKNOWN = 2
    INVALID_ARGUMENT = 3
    DEADLINE_EXCEEDED = 4
    NOT_FOUND = 5
    ALREADY_EXISTS = 6
    PERMISSION_DENIED = 7
    RESOURCE_EXHAUSTED = 8
    FAILED_PRECONDITION = 9
    ABORTED = 10
    OUT_OF_RANGE = 11
    UNIMPLEMENTED = 12
    INTERNAL = 13
    UNAVAILABLE = 14
    DATA_LOSS = 15
    UNAUTHENTICATED = 16


def code_name(code: int) -> str:
    """``UNAVAILABLE`` for 14; the number for a code outside the table."""
    try:
        return Code(code).name
    except ValueError:
        return str(code)


@dataclass(frozen=True)
class UpdateFailure:
    """A refused or failed update: the gRPC status code, the platform's ``x-error-reason`` if it
    sent one, and a message for people."""

    code: int
    reason: str | None
    message: str


#: - ``retry``: transient (the platform is restarting or overloaded): send the same update again.
#: - ``stop``: the lease is gone: stop working on the task, never retry.
#: - ``bug``: the platform rejected the update itself: retrying would fail the same way.
FailureKind = Literal["retry", "stop", "bug"]

#: CANCELLED counts as transient: this SDK never cancels an update, so it comes from a platform that
#: shut down while the call was in flight.
TRANSIENT_CODES = frozenset(
    {
        Code.CANCELLED,
        Code.UNAVAILABLE,
        Code.DEADLINE_EXCEEDED,
        Code.INTERNAL,
        Code.ABORTED,
        Code.RESOURCE_EXHAUSTED,
    }
)


def classify(failure: UpdateFailure) -> FailureKind:
    """LEASE_LOST or any FAILED_PRECONDITION stops; transient codes retry; other codes are bugs."""
    if failure.reason == "LEASE_LOST" or failure.code == Code.FAILED_PRECONDITION:
        return "stop"
    return "retry" if failure.code in TRANSIENT_CODES else "bug"
