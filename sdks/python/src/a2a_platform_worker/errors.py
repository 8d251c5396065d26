"""The one exception type of the SDK; identify a case by its ``reason``."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Literal

WorkerErrorReason = Literal[
    # AgentWorker got an option it cannot use.
    "INVALID_OPTIONS",
    # run() was called on a worker that is not INITIALIZED.
    "ILLEGAL_STATE",
    # The platform refused the worker's first session (bad credential or permission): no retry
    # can help.
    "CONNECT_REJECTED",
    # The worker no longer holds the task's lease (revoked, fenced by a newer epoch, or expired).
    "LEASE_LOST",
    # The task reached a terminal or interrupted state in this assignment: its lease has ended.
    "TASK_ENDED",
    # The client asked to cancel the task (the stop reason; the SDK then publishes CANCELED).
    "TASK_CANCELED",
    # The platform rejected an update as invalid (a bug in the agent; never retried).
    "UPDATE_REJECTED",
    # The worker is shutting down and stopped the task; the platform re-dispatches it.
    "WORKER_SHUTDOWN",
]


class WorkerError(Exception):
    """Why the SDK raised or stopped a task: ``reason`` says which case, ``metadata`` tells more."""

    def __init__(
        self,
        reason: WorkerErrorReason,
        message: str,
        metadata: Mapping[str, str] | None = None,
    ) -> None:
        super().__init__(message)
        self.reason: WorkerErrorReason = reason
        self.message = message
        self.metadata: Mapping[str, str] = dict(metadata or {})

    def __repr__(self) -> str:
        return f"WorkerError({self.reason!r}, {self.message!r})"
