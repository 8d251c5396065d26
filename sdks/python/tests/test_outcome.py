import pytest

from a2a_platform_worker import TaskState
from a2a_platform_worker.outcome import (
    Cancel,
    Complete,
    Fail,
    FinalAction,
    NoAction,
    Raised,
    Returned,
    StopCause,
    Stopped,
    final_action,
)
from a2a_platform_worker.states import REPLY, Published


@pytest.mark.parametrize(
    ("last", "cause", "expected"),
    [
        (None, None, Complete()),
        (TaskState.WORKING, None, Complete()),
        (TaskState.COMPLETED, None, NoAction()),
        (TaskState.INPUT_REQUIRED, "cancel", NoAction()),
        (REPLY, None, NoAction()),
        (TaskState.WORKING, "cancel", Cancel()),
        (TaskState.WORKING, "lease-lost", NoAction()),
        (None, "shutdown", NoAction()),
    ],
)
def test_after_a_return(
    last: Published | None, cause: StopCause | None, expected: FinalAction
) -> None:
    assert final_action(Returned(), last, cause) == expected


def test_an_error_fails_the_task_with_its_message() -> None:
    assert final_action(Raised(ValueError("no such city")), None, None) == Fail("no such city")
    assert final_action(Raised(KeyError()), None, None) == Fail("the agent failed (KeyError)")


def test_a_cancel_wins_over_the_error_it_caused() -> None:
    assert final_action(Raised(RuntimeError("interrupted")), None, "cancel") == Cancel()
    assert final_action(Stopped(), TaskState.WORKING, "cancel") == Cancel()


def test_an_agent_cancelled_by_itself_fails() -> None:
    assert final_action(Stopped(), None, None) == Fail("the agent was cancelled")
