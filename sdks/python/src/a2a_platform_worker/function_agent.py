"""``@agent(name)``: a plain function of a text, as an agent."""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Awaitable, Callable
from typing import Union, cast

from .agent import AgentExecutor, RequestContext
from .execution import EventBus
from .messages import text_of

#: A function from the user's text to the answer's text, plain or ``async``.
TextFunction = Callable[[str], Union[str, Awaitable[str]]]


class FunctionAgent(AgentExecutor):
    """Answers each message with what ``function`` returns for its text (its text parts joined by
    newlines).

    - When the message may be answered with a bare Message (``context.may_reply``), the answer is a
      reply and no task exists.
    - Otherwise the answer is the artifact ``name`` (id and name), published with
      TASK_STATE_COMPLETED as one update.
    - When the function raises, the task ends TASK_STATE_FAILED with the error's message.

    An ``async`` function runs in the worker's event loop; a plain one runs in a thread
    (``asyncio.to_thread``), so that a slow one does not hold up heartbeats and other tasks.
    """

    def __init__(self, name: str, function: TextFunction) -> None:
        if name.strip() == "":
            raise ValueError("an agent's name must not be empty")
        self.name = name
        self.function = function

    async def execute(self, context: RequestContext, bus: EventBus) -> None:
        text = text_of(context.message)
        if inspect.iscoroutinefunction(self.function):
            answer: object = await cast(Callable[[str], Awaitable[str]], self.function)(text)
        else:
            answer = await asyncio.to_thread(self.function, text)
        if not isinstance(answer, str):
            raise TypeError(f"agent {self.name} returned {type(answer).__name__}, not str")
        if context.may_reply:
            await bus.reply(answer)
            return
        await asyncio.gather(
            bus.artifact(answer, artifact_id=self.name, name=self.name, last_chunk=True),
            bus.complete(),
        )


def agent(name: str) -> Callable[[TextFunction], FunctionAgent]:
    """Turns a function of the user's text into an agent (see ``FunctionAgent``)::

    @agent("shout")
    def shout(text: str) -> str:
        return text.upper()

    sys.exit(serve(shout))
    """

    def wrap(function: TextFunction) -> FunctionAgent:
        return FunctionAgent(name, function)

    return wrap
