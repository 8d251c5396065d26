from a2a_platform_worker import TaskState, a2a_pb2, state_name
from a2a_platform_worker.states import REPLY, ends_assignment


def test_task_states_are_the_protos() -> None:
    proto = {value.name: value.number for value in a2a_pb2.TaskState.DESCRIPTOR.values}
    assert {f"TASK_STATE_{state.name}": state.value for state in TaskState} == proto


def test_terminal_and_interrupted_states_and_the_reply_end_the_assignment() -> None:
    ending = {state for state in TaskState if ends_assignment(state)}
    assert ending == {
        TaskState.COMPLETED,
        TaskState.FAILED,
        TaskState.CANCELED,
        TaskState.REJECTED,
        TaskState.INPUT_REQUIRED,
        TaskState.AUTH_REQUIRED,
    }
    assert ends_assignment(REPLY)


def test_state_names() -> None:
    assert state_name(TaskState.INPUT_REQUIRED) == "TASK_STATE_INPUT_REQUIRED"
    assert state_name(a2a_pb2.TASK_STATE_WORKING) == "TASK_STATE_WORKING"
    assert state_name(42) == "TASK_STATE_42"
