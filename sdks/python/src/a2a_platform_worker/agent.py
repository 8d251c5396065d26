"""What an agent implements (``AgentExecutor``) and what it is given (``RequestContext``)."""

from __future__ import annotations

import asyncio
from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ._proto.lf.a2a.v1 import a2a_pb2
from .errors import WorkerError
from .messages import text_of

if TYPE_CHECKING:
    from .execution import EventBus


class StopSignal:
    """Set when the SDK stops an execution: the client cancelled the task (reason
    ``TASK_CANCELED``), the worker lost the lease (``LEASE_LOST``) or it shuts down
    (``WORKER_SHUTDOWN``).

    The SDK also cancels the task running ``execute`` at the same moment, so an agent that only
    awaits stops by itself; the signal is for work that does not await (a loop, a thread) and for
    cleanup.
    """

    def __init__(self) -> None:
        self._event = asyncio.Event()
        self._reason: WorkerError | None = None

    def is_set(self) -> bool:
        """Whether the execution was stopped."""
        return self._event.is_set()

    @property
    def reason(self) -> WorkerError | None:
        """Why it was stopped; None while it runs."""
        return self._reason

    async def wait(self) -> WorkerError:
        """Waits until the execution is stopped and returns why."""
        await self._event.wait()
        assert self._reason is not None
        return self._reason

    def set(self, reason: WorkerError) -> None:
        """Stops the execution (the SDK calls it; the first reason stays)."""
        if self._reason is None:
            self._reason = reason
            self._event.set()


@dataclass(frozen=True)
class RequestContext:
    """One assignment of one task: what the agent is asked to do."""

    task_id: str
    context_id: str
    #: The user message that triggered this assignment (the last user message in the history).
    message: a2a_pb2.Message
    #: The task as the platform knew it when the lease was granted: status, history, artifacts.
    task: a2a_pb2.Task
    #: The task's messages so far, oldest first (``task.history``).
    history: tuple[a2a_pb2.Message, ...]
    #: 1 for the first dispatch of this message; higher when a lost lease was re-dispatched.
    attempt: int
    #: The message may be answered with ``bus.reply`` (a bare Message) instead of a task: the
    #: agent's definition declares message replies, this message opened the exchange and nothing
    #: was published yet.
    may_reply: bool
    #: Set on cancel, lease loss or shutdown (see ``StopSignal``).
    stopped: StopSignal

    @property
    def text(self) -> str:
        """The text parts of ``message`` joined by newlines."""
        return text_of(self.message)


class AgentExecutor(ABC):
    """The agent. ``execute`` runs one assignment.

    When it returns without having published a terminal or interrupted status, the SDK publishes
    TASK_STATE_COMPLETED; when it raises, TASK_STATE_FAILED with the error's message; when the task
    was cancelled, TASK_STATE_CANCELED.
    """

    @abstractmethod
    async def execute(self, context: RequestContext, bus: EventBus) -> None:
        """Works on the task, publishing its progress and results on ``bus``."""

    async def cancel_task(self, context: RequestContext, bus: EventBus) -> None:
        """Called as soon as the client asks to cancel, while ``execute`` is being cancelled.

        It may publish a final status itself; otherwise the SDK publishes TASK_STATE_CANCELED once
        both have settled. The default does nothing.
        """
