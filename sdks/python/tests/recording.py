"""Test doubles: a sender that records update requests, an agent made of functions, assignments."""

from __future__ import annotations

import logging
from collections import deque
from collections.abc import Awaitable, Callable, Iterable

from a2a_platform_worker import (
    AgentExecutor,
    Backoff,
    EventBus,
    RequestContext,
    a2a_pb2,
    worker_pb2,
)
from a2a_platform_worker.execution import TaskExecution
from a2a_platform_worker.failures import UpdateFailure
from a2a_platform_worker.states import state_name


class RecordingSender:
    """Records every request it is given; answers with the queued results, then with success."""

    def __init__(self, results: Iterable[UpdateFailure | None] = ()) -> None:
        self.requests: list[worker_pb2.PublishUpdateRequest] = []
        self.results: deque[UpdateFailure | None] = deque(results)

    async def send(
        self, request: worker_pb2.PublishUpdateRequest, timeout: float
    ) -> UpdateFailure | None:
        copy = worker_pb2.PublishUpdateRequest()
        copy.CopyFrom(request)
        self.requests.append(copy)
        return self.results.popleft() if self.results else None

    def published(self) -> list[list[str]]:
        """Each request as the list of its updates, described as ``kind[:detail]``."""
        return [describe_request(request) for request in self.requests]


def describe(update: worker_pb2.ExecutionUpdate | worker_pb2.PublishUpdateRequest) -> str:
    kind = update.WhichOneof("update")
    if kind == "status":
        return f"status:{state_name(update.status.state)}"
    if kind == "artifact":
        return f"artifact:{update.artifact.artifact.artifact_id}"
    return str(kind)


def describe_request(request: worker_pb2.PublishUpdateRequest) -> list[str]:
    if request.updates:
        return [describe(update) for update in request.updates]
    return [describe(request)]


Execute = Callable[[RequestContext, EventBus], Awaitable[None]]


class FunctionsAgent(AgentExecutor):
    """An agent whose ``execute`` (and optionally ``cancel_task``) are the given functions."""

    def __init__(self, execute: Execute, cancel: Execute | None = None) -> None:
        self._execute = execute
        self._cancel = cancel

    async def execute(self, context: RequestContext, bus: EventBus) -> None:
        await self._execute(context, bus)

    async def cancel_task(self, context: RequestContext, bus: EventBus) -> None:
        if self._cancel is not None:
            await self._cancel(context, bus)


def assignment(
    text: str = "hello", *, may_reply: bool = False, task_id: str = "task-1", epoch: int = 3
) -> worker_pb2.Assignment:
    message = a2a_pb2.Message(
        message_id="m-1",
        context_id="ctx-1",
        task_id=task_id,
        role=a2a_pb2.ROLE_USER,
        parts=[a2a_pb2.Part(text=text)],
    )
    task = a2a_pb2.Task(
        id=task_id,
        context_id="ctx-1",
        status=a2a_pb2.TaskStatus(state=a2a_pb2.TASK_STATE_SUBMITTED),
        history=[message],
    )
    return worker_pb2.Assignment(
        task_id=task_id,
        context_id="ctx-1",
        lease_epoch=epoch,
        task=task,
        message=message,
        attempt=1,
        may_reply=may_reply,
        traceparent="00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
    )


def execution(
    agent: AgentExecutor,
    sender: RecordingSender,
    work: worker_pb2.Assignment | None = None,
    clock: Callable[[], float] | None = None,
) -> TaskExecution:
    return TaskExecution(
        work if work is not None else assignment(),
        executor=agent,
        sender=sender,
        lease_ttl=10.0,
        logger=logging.getLogger("test"),
        backoff=Backoff(initial=0.001, maximum=0.001),
        **({} if clock is None else {"clock": clock}),
    )
