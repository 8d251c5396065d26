"""Task states, and which of them end an assignment (and with it the worker's lease)."""

from __future__ import annotations

from enum import IntEnum
from typing import Final, Literal, Union

from ._proto.lf.a2a.v1 import a2a_pb2


class TaskState(IntEnum):
    """The A2A task states, with the numbers of ``lf.a2a.v1.TaskState``."""

    UNSPECIFIED = a2a_pb2.TASK_STATE_UNSPECIFIED
    SUBMITTED = a2a_pb2.TASK_STATE_SUBMITTED
    WORKING = a2a_pb2.TASK_STATE_WORKING
    COMPLETED = a2a_pb2.TASK_STATE_COMPLETED
    FAILED = a2a_pb2.TASK_STATE_FAILED
    CANCELED = a2a_pb2.TASK_STATE_CANCELED
    INPUT_REQUIRED = a2a_pb2.TASK_STATE_INPUT_REQUIRED
    REJECTED = a2a_pb2.TASK_STATE_REJECTED
    AUTH_REQUIRED = a2a_pb2.TASK_STATE_AUTH_REQUIRED


#: The task is over; nothing may follow.
TERMINAL_STATES: Final = frozenset(
    {TaskState.COMPLETED, TaskState.FAILED, TaskState.CANCELED, TaskState.REJECTED}
)
#: The task waits for the client; its next message starts a new assignment.
INTERRUPTED_STATES: Final = frozenset({TaskState.INPUT_REQUIRED, TaskState.AUTH_REQUIRED})

#: What the agent published instead of a status when it answered with a bare Message.
REPLY: Final = "reply"

#: What was published that may end the assignment: a status's state, or ``REPLY``.
Published = Union[int, Literal["reply"]]


def ends_assignment(published: Published) -> bool:
    """Whether a status (or the reply) ends the assignment, and with it the lease."""
    return published == REPLY or published in TERMINAL_STATES or published in INTERRUPTED_STATES


def state_name(state: int) -> str:
    """The proto name of a state (``TASK_STATE_WORKING``), with the number for an unknown one."""
    try:
        return f"TASK_STATE_{TaskState(state).name}"
    except ValueError:
        return f"TASK_STATE_{state}"
