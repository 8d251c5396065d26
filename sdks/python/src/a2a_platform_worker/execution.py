"""One assignment: runs the agent, publishes its updates under the lease, ends the task."""

from __future__ import annotations

import asyncio
import logging
import time
import uuid
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol, TypeVar, cast

from ._proto.lf.a2a.v1 import a2a_pb2
from ._proto.platform.worker.v1 import worker_pb2
from .agent import AgentExecutor, RequestContext, StopSignal
from .backoff import DEFAULT_BACKOFF, Backoff
from .errors import WorkerError
from .failures import UpdateFailure, classify, code_name
from .messages import Content, agent_message, parts_of
from .outcome import (
    Cancel,
    Complete,
    ExecuteOutcome,
    Fail,
    FinalAction,
    Raised,
    Returned,
    StopCause,
    Stopped,
    final_action,
)
from .states import REPLY, Published, TaskState, ends_assignment, state_name

#: Longest wait for the answer to one update before it counts as a transient failure, in seconds.
PUBLISH_TIMEOUT = 10.0
#: Most updates published together in one request.
MAX_UPDATES_PER_PUBLISH = 64

T = TypeVar("T")


class UpdateSender(Protocol):
    """Sends update requests to the platform (``WorkerChannel``, or a recorder in tests)."""

    def send(
        self, request: worker_pb2.PublishUpdateRequest, timeout: float
    ) -> Awaitable[UpdateFailure | None]:
        """Sends one request; resolves with None when the platform applied it, else why not."""
        ...


def _observed(future: asyncio.Future[T]) -> asyncio.Future[T]:
    """Marks the future's error as seen, so that an agent that does not await an update is not
    warned about it at garbage collection; one that awaits still gets the error."""
    future.add_done_callback(lambda done: done.cancelled() or done.exception())
    return future


def _settle(future: asyncio.Future[None], error: BaseException | None) -> None:
    # The future is done already when the agent awaiting it was cancelled (asyncio cancels it too).
    if future.done():
        return
    if error is None:
        future.set_result(None)
    else:
        future.set_exception(error)


def publish_request(
    task_id: str,
    lease_epoch: int,
    updates: Sequence[worker_pb2.ExecutionUpdate],
    update_id: str,
    traceparent: str = "",
) -> worker_pb2.PublishUpdateRequest:
    """Updates produced together as one request: one alone in the request's own ``update`` field,
    several in ``updates`` (applied in order, as one change); in the trace ``traceparent`` names."""
    request = worker_pb2.PublishUpdateRequest(
        task_id=task_id, lease_epoch=lease_epoch, update_id=update_id, traceparent=traceparent
    )
    if len(updates) == 1:
        only = updates[0]
        kind = only.WhichOneof("update")
        getattr(request, kind).CopyFrom(getattr(only, kind))
    else:
        request.updates.extend(updates)
    return request


class EventBus:
    """Publishes the agent's updates to the platform, in call order.

    Each method queues its update at once and returns an awaitable that resolves once the platform
    stored it. Updates queued together (before the agent next waits, or while an earlier publish is
    under way) go out as one request, stored as one change. Transient failures are retried while the
    lease lasts. An awaitable raises ``WorkerError`` when its update cannot be stored:
    ``LEASE_LOST`` (stop working), ``TASK_ENDED`` (a terminal or interrupted status or a reply was
    published already), ``UPDATE_REJECTED`` (a bug) or ``WORKER_SHUTDOWN``. Awaiting is optional; an
    update nobody awaits is still published in order.
    """

    def __init__(
        self,
        task_id: str,
        context_id: str,
        enqueue: Callable[[worker_pb2.ExecutionUpdate], asyncio.Future[None]],
    ) -> None:
        self._task_id = task_id
        self._context_id = context_id
        self._enqueue = enqueue

    def status(self, state: int, message: Content | None = None) -> asyncio.Future[None]:
        """Any state, optionally with a message (a text or parts). Terminal states (COMPLETED,
        FAILED, CANCELED, REJECTED) and interrupted ones (INPUT_REQUIRED, AUTH_REQUIRED) end the
        assignment.
        """
        status = a2a_pb2.TaskStatus(state=cast(a2a_pb2.TaskState, state))
        if message is not None:
            status.message.CopyFrom(
                agent_message(message, context_id=self._context_id, task_id=self._task_id)
            )
        return self._enqueue(worker_pb2.ExecutionUpdate(status=status))

    def working(self, message: Content | None = None) -> asyncio.Future[None]:
        """TASK_STATE_WORKING, optionally with a progress message."""
        return self.status(TaskState.WORKING, message)

    def input_required(self, question: Content) -> asyncio.Future[None]:
        """TASK_STATE_INPUT_REQUIRED with the question; the answer arrives as a new assignment."""
        return self.status(TaskState.INPUT_REQUIRED, question)

    def complete(self, message: Content | None = None) -> asyncio.Future[None]:
        """TASK_STATE_COMPLETED, optionally with a message."""
        return self.status(TaskState.COMPLETED, message)

    def fail(self, message: Content) -> asyncio.Future[None]:
        """TASK_STATE_FAILED with the reason shown to the client."""
        return self.status(TaskState.FAILED, message)

    def cancelled(self) -> asyncio.Future[None]:
        """TASK_STATE_CANCELED."""
        return self.status(TaskState.CANCELED)

    def message(self, content: Content) -> asyncio.Future[None]:
        """An agent message added to the task's history."""
        message = agent_message(content, context_id=self._context_id, task_id=self._task_id)
        return self._enqueue(worker_pb2.ExecutionUpdate(message=message))

    def reply(self, content: Content) -> asyncio.Future[None]:
        """Answers the client's message with a bare Message instead of a task: no task ever exists.

        Only while ``context.may_reply`` holds, as the assignment's first and only update; it ends
        the assignment like a terminal status.
        """
        # A bare Message belongs to the conversation, not to a task.
        message = agent_message(content, context_id=self._context_id)
        return self._enqueue(worker_pb2.ExecutionUpdate(reply=message))

    def artifact(
        self,
        content: Content,
        *,
        artifact_id: str | None = None,
        name: str = "",
        description: str = "",
        metadata: Mapping[str, object] | None = None,
        extensions: Sequence[str] = (),
        append: bool = False,
        last_chunk: bool = False,
    ) -> asyncio.Future[str]:
        """An artifact or a chunk of one; resolves with its id.

        ``artifact_id`` defaults to a fresh UUID: pass the returned id with ``append=True`` to add
        further chunks to the same artifact, and ``last_chunk=True`` on the final one. ``name``,
        ``description``, ``metadata`` and ``extensions`` (URIs of the extensions whose data the
        parts carry) default to none.
        """
        chosen_id = artifact_id if artifact_id is not None else str(uuid.uuid4())
        artifact = a2a_pb2.Artifact(
            artifact_id=chosen_id,
            name=name,
            description=description,
            parts=parts_of(content),
            extensions=list(extensions),
        )
        if metadata:
            artifact.metadata.update(metadata)
        queued = self._enqueue(
            worker_pb2.ExecutionUpdate(
                artifact=worker_pb2.ArtifactUpdate(
                    artifact=artifact, append=append, last_chunk=last_chunk
                )
            )
        )
        result: asyncio.Future[str] = _observed(asyncio.get_running_loop().create_future())

        def settle(done: asyncio.Future[None]) -> None:
            if result.done():
                return
            if done.cancelled():
                result.cancel()
                return
            error = done.exception()
            if error is None:
                result.set_result(chosen_id)
            else:
                result.set_exception(error)

        queued.add_done_callback(settle)
        return result

    def publish(self, update: worker_pb2.ExecutionUpdate) -> asyncio.Future[None]:
        """Any update, as built by the caller."""
        return self._enqueue(update)


@dataclass
class _Queued:
    update: worker_pb2.ExecutionUpdate
    future: asyncio.Future[None]


def _state_of(update: worker_pb2.ExecutionUpdate) -> Published | None:
    """The state a status update sets (``REPLY`` for a reply); None for other updates."""
    kind = update.WhichOneof("update")
    if kind == "status":
        return update.status.state
    return REPLY if kind == "reply" else None


def _user_message(assignment: worker_pb2.Assignment) -> a2a_pb2.Message | None:
    """The assignment's message, else the last user message in the task's history."""
    if assignment.HasField("message"):
        return assignment.message
    users = [m for m in assignment.task.history if m.role == a2a_pb2.ROLE_USER]
    return users[-1] if users else None


def _task_of(assignment: worker_pb2.Assignment) -> a2a_pb2.Task:
    """The assignment's task; a bare one with its ids when the platform sent none."""
    task = a2a_pb2.Task()
    task.CopyFrom(assignment.task)
    task.id = task.id or assignment.task_id
    task.context_id = task.context_id or assignment.context_id
    return task


class TaskExecution:
    """One assignment: runs the executor, publishes its updates in order under the assignment's
    lease epoch, retries transient failures until the lease would have expired, and applies the
    completion rule (``outcome.final_action``)."""

    def __init__(
        self,
        assignment: worker_pb2.Assignment,
        *,
        executor: AgentExecutor,
        sender: UpdateSender,
        lease_ttl: float,
        logger: logging.Logger,
        backoff: Backoff = DEFAULT_BACKOFF,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.task_id: str = assignment.task_id
        self.lease_epoch: int = assignment.lease_epoch
        self._executor = executor
        self._sender = sender
        self._lease_ttl = lease_ttl
        self._logger = logger
        self._backoff = backoff
        self._clock = clock
        self._lease_deadline = clock() + lease_ttl
        self._may_reply = assignment.may_reply
        #: The platform's trace of the dispatch: the updates are applied in it.
        self._traceparent = assignment.traceparent
        #: Set when the lease is gone (lost, or given up at shutdown): nothing may be published.
        self._lease_gone = asyncio.Event()
        self._lease_error: WorkerError | None = None
        self._stop_cause: StopCause | None = None
        #: The last status (or the reply) the platform stored.
        self._last_state: Published | None = None
        #: The last status (or the reply) queued: nothing may follow one that ends the assignment.
        self._queued_state: Published | None = None
        #: Something was queued: a reply may only be the first update.
        self._queued_any = False
        self._queue: list[_Queued] = []
        self._flushing: asyncio.Task[None] | None = None
        self._cancelling: asyncio.Task[None] | None = None
        self._execute_task: asyncio.Task[None] | None = None
        self.bus = EventBus(self.task_id, assignment.context_id, self._enqueue)
        task = _task_of(assignment)
        message = _user_message(assignment)
        self.context: RequestContext | None = (
            None
            if message is None
            else RequestContext(
                task_id=self.task_id,
                context_id=assignment.context_id,
                message=message,
                task=task,
                history=tuple(task.history),
                attempt=assignment.attempt,
                may_reply=assignment.may_reply,
                stopped=StopSignal(),
            )
        )

    @property
    def holds_lease(self) -> bool:
        """Whether the worker must keep renewing this lease in its heartbeats."""
        ended = self._last_state is not None and ends_assignment(self._last_state)
        return self._lease_error is None and not ended

    def lease_ref(self) -> worker_pb2.LeaseRef:
        return worker_pb2.LeaseRef(task_id=self.task_id, lease_epoch=self.lease_epoch)

    def renewed(self, at: float) -> None:
        """A heartbeat carrying this lease went out on a live session at ``at`` (clock seconds)."""
        self._lease_deadline = at + self._lease_ttl

    def expire_if_stale(self, at: float) -> None:
        """Gives the lease up when it has gone unrenewed for longer than its time-to-live."""
        if at > self._lease_deadline:
            self.lose_lease("the lease expired without renewal")

    def request_cancel(self) -> None:
        """The client asked to cancel: stop ``execute``, let the executor's ``cancel_task`` run."""
        if self._stop_cause is not None or not self.holds_lease:
            return
        self._stop_cause = "cancel"
        self._signal_stop(WorkerError("TASK_CANCELED", f"task {self.task_id} was cancelled"))
        if self.context is not None:
            self._cancelling = asyncio.ensure_future(self._run_cancel_task(self.context))

    def lose_lease(self, why: str) -> None:
        """The platform revoked or fenced the lease: stop without publishing anything."""
        self._stop(
            "lease-lost", WorkerError("LEASE_LOST", f"lost the lease on task {self.task_id}: {why}")
        )

    def abandon(self) -> None:
        """The worker is shutting down: stop without publishing; the task is handed back."""
        self._stop("shutdown", WorkerError("WORKER_SHUTDOWN", "the worker is shutting down"))

    async def run(self) -> None:
        """Runs the assignment to its end; never raises (but for its own cancellation)."""
        outcome = await self._execute()
        if self._cancelling is not None:
            await self._cancelling
        while self._flushing is not None:
            await self._flushing
        action = final_action(outcome, self._last_state, self._stop_cause)
        if isinstance(outcome, Raised) and isinstance(action, Fail):
            self._log_failure(outcome.error)
        await self._perform(action)

    async def _execute(self) -> ExecuteOutcome:
        if self.context is None:
            return Raised(ValueError("the assignment carries no user message"))
        if self.context.stopped.is_set():
            return Stopped()
        execute = asyncio.ensure_future(self._executor.execute(self.context, self.bus))
        self._execute_task = execute
        try:
            # wait() neither raises what the task raised nor cancels it when this coroutine is.
            await asyncio.wait({execute})
        except asyncio.CancelledError:
            execute.cancel()
            raise
        if execute.cancelled():
            return Stopped()
        error = execute.exception()
        return Returned() if error is None else Raised(error)

    async def _perform(self, action: FinalAction) -> None:
        try:
            if isinstance(action, Complete):
                await self.bus.complete()
            elif isinstance(action, Cancel):
                await self.bus.cancelled()
            elif isinstance(action, Fail):
                await self.bus.fail(action.text)
        except WorkerError as error:
            if error.reason != "LEASE_LOST":
                self._logger.error(
                    "could not publish the final status of task %s: %s", self.task_id, error
                )

    async def _run_cancel_task(self, context: RequestContext) -> None:
        try:
            await self._executor.cancel_task(context, self.bus)
        except Exception as error:
            self._logger.warning("cancel_task of task %s failed: %r", self.task_id, error)

    def _signal_stop(self, reason: WorkerError) -> None:
        if self.context is not None:
            self.context.stopped.set(reason)
        if self._execute_task is not None and not self._execute_task.done():
            self._execute_task.cancel()

    def _stop(self, cause: StopCause, reason: WorkerError) -> None:
        if not self.holds_lease:
            return
        self._stop_cause = cause
        self._lease_error = reason
        self._lease_gone.set()
        self._signal_stop(reason)
        if cause == "lease-lost":
            self._logger.warning("stopped working on task %s: %s", self.task_id, reason.message)

    def _log_failure(self, error: BaseException) -> None:
        if isinstance(error, WorkerError) and error.reason == "UPDATE_REJECTED":
            self._logger.error(
                "the platform rejected an update of task %s (a bug in the agent): %s %s",
                self.task_id,
                error.message,
                dict(error.metadata),
            )
        else:
            self._logger.warning(
                "execute failed on task %s: %r", self.task_id, error, exc_info=error
            )

    def _enqueue(self, update: worker_pb2.ExecutionUpdate) -> asyncio.Future[None]:
        future: asyncio.Future[None] = _observed(asyncio.get_running_loop().create_future())
        refusal = self._publish_refusal(self._queued_state) or self._reply_refusal(update)
        if refusal is not None:
            future.set_exception(refusal)
            return future
        self._queued_state = _state_of(update) or self._queued_state
        self._queued_any = True
        self._queue.append(_Queued(update, future))
        if self._flushing is None:
            self._flushing = asyncio.ensure_future(self._flush())
        return future

    async def _flush(self) -> None:
        try:
            # Let the agent queue everything it produces before it next waits.
            await asyncio.sleep(0)
            while self._queue:
                batch = self._queue[:MAX_UPDATES_PER_PUBLISH]
                del self._queue[:MAX_UPDATES_PER_PUBLISH]
                try:
                    await self._deliver([queued.update for queued in batch])
                except WorkerError as error:
                    # Not stored: what may follow depends on what was stored and is still queued.
                    self._queued_state = self._last_state
                    for queued in self._queue:
                        self._queued_state = _state_of(queued.update) or self._queued_state
                    for queued in batch:
                        _settle(queued.future, error)
                else:
                    for queued in batch:
                        _settle(queued.future, None)
        finally:
            # In the same step as the last look at the queue: a later update starts a new flush.
            self._flushing = None

    async def _deliver(self, updates: list[worker_pb2.ExecutionUpdate]) -> None:
        # One id for every retry of these updates: the platform applies them at most once.
        request = publish_request(
            self.task_id, self.lease_epoch, updates, str(uuid.uuid4()), self._traceparent
        )
        attempt = 0
        while True:
            self._assert_publishable(self._last_state)
            remaining = self._lease_deadline - self._clock()
            if remaining <= 0:
                self.lose_lease("the lease expired while an update was being retried")
                self._assert_publishable(self._last_state)
            failure = await self._sender.send(request, min(PUBLISH_TIMEOUT, remaining))
            if failure is None:
                for update in updates:
                    self._last_state = _state_of(update) or self._last_state
                return
            verdict = classify(failure)
            if verdict == "stop":
                self.lose_lease(failure.message)
            elif verdict == "bug":
                raise WorkerError(
                    "UPDATE_REJECTED",
                    failure.message,
                    {"code": code_name(failure.code), "server_reason": failure.reason or ""},
                )
            else:
                self._logger.debug(
                    "retrying an update of task %s (attempt %d): %s",
                    self.task_id,
                    attempt + 1,
                    failure.message,
                )
                try:
                    await asyncio.wait_for(
                        self._lease_gone.wait(), timeout=self._backoff.delay(attempt)
                    )
                except asyncio.TimeoutError:
                    pass
                attempt += 1

    def _assert_publishable(self, state: Published | None) -> None:
        refusal = self._publish_refusal(state)
        if refusal is not None:
            raise refusal

    def _publish_refusal(self, state: Published | None) -> WorkerError | None:
        """Why the assignment can take no more updates after ``state``, if it cannot."""
        if self._lease_error is not None:
            return self._lease_error
        if state is not None and ends_assignment(state):
            return WorkerError(
                "TASK_ENDED",
                (
                    f"the message of task {self.task_id} was answered with a reply; "
                    "this assignment has ended"
                )
                if state == REPLY
                else f"task {self.task_id} is already {state_name(int(state))}; "
                "this assignment has ended",
            )
        return None

    def _reply_refusal(self, update: worker_pb2.ExecutionUpdate) -> WorkerError | None:
        """Why ``update``, a reply, cannot be published: only as the first update, and only when
        the platform allows it."""
        if update.WhichOneof("update") != "reply" or (self._may_reply and not self._queued_any):
            return None
        return WorkerError(
            "UPDATE_REJECTED",
            f"task {self.task_id} has updates already: a reply can only be the first answer"
            if self._may_reply
            else f"the message of task {self.task_id} cannot be answered with a reply "
            "(context.may_reply is false)",
        )
