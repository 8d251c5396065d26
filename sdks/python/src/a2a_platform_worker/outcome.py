"""The completion rule: what the SDK publishes for the agent once ``execute`` has settled."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, Union

from .states import Published, ends_assignment


@dataclass(frozen=True)
class Returned:
    """``execute`` returned."""


@dataclass(frozen=True)
class Raised:
    """``execute`` raised ``error``."""

    error: BaseException


@dataclass(frozen=True)
class Stopped:
    """``execute`` was cancelled by the SDK (a cancel request, lease loss or shutdown)."""


ExecuteOutcome = Union[Returned, Raised, Stopped]

#: Why the SDK stopped the execution, if it did.
StopCause = Literal["cancel", "lease-lost", "shutdown"]


@dataclass(frozen=True)
class NoAction:
    """Publish nothing."""


@dataclass(frozen=True)
class Complete:
    """Publish TASK_STATE_COMPLETED."""


@dataclass(frozen=True)
class Cancel:
    """Publish TASK_STATE_CANCELED."""


@dataclass(frozen=True)
class Fail:
    """Publish TASK_STATE_FAILED with ``text`` as the status message."""

    text: str


FinalAction = Union[NoAction, Complete, Cancel, Fail]


def final_action(
    outcome: ExecuteOutcome, last_published: Published | None, stop_cause: StopCause | None
) -> FinalAction:
    """The status to publish once ``execute`` has settled.

    Nothing when the agent already ended the assignment (a terminal or interrupted status, or a
    reply), or when the worker lost the lease or is shutting down (the platform owns the task
    again). Otherwise a cancel request wins over how ``execute`` ended; an error fails the task; a
    return completes it.
    """
    if last_published is not None and ends_assignment(last_published):
        return NoAction()
    if stop_cause in ("lease-lost", "shutdown"):
        return NoAction()
    if stop_cause == "cancel":
        return Cancel()
    if isinstance(outcome, Raised):
        return Fail(failure_text(outcome.error))
    if isinstance(outcome, Stopped):
        # Cancelled from outside the SDK (not by a stop the SDK made): the agent did not finish.
        return Fail("the agent was cancelled")
    return Complete()


def failure_text(error: BaseException) -> str:
    """The status message of a task whose agent raised ``error``: its message, else its type."""
    text = str(error).strip()
    return text if text else f"the agent failed ({type(error).__name__})"
