"""Agent ``interview``: a two-turn task through TASK_STATE_INPUT_REQUIRED, like the TypeScript
interview agent.

First it asks ``What is your name?`` (TASK_STATE_INPUT_REQUIRED). Once that question is in the task
and the user answered it (a non-blank text), it publishes the artifact ``greeting`` with
``Nice to meet you, <answer>!`` and completes the task.

    WORKER_SECRET=<worker secret> python3 sdks/python/examples/interview.py
"""

import sys
from pathlib import Path

# Runs from a checkout without installing the SDK.
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "src"))

from a2a_platform_worker import AgentExecutor, EventBus, RequestContext, a2a_pb2, serve, text_of

QUESTION = "What is your name?"


def greeting(name: str) -> str:
    return f"Nice to meet you, {name}!"


def answer_to(task: a2a_pb2.Task, message: a2a_pb2.Message) -> str | None:
    """The greeting once the question was asked and answered; None while it still must be asked."""
    seen = list(task.history)
    if task.status.HasField("message"):
        seen.append(task.status.message)
    asked = any(m.role == a2a_pb2.ROLE_AGENT and text_of(m) == QUESTION for m in seen)
    answer = text_of(message).strip()
    return greeting(answer) if asked and answer else None


class InterviewAgent(AgentExecutor):
    async def execute(self, context: RequestContext, bus: EventBus) -> None:
        reply = answer_to(context.task, context.message)
        if reply is None:
            await bus.input_required(QUESTION)
            return
        await bus.artifact(reply, artifact_id="greeting", name="greeting", last_chunk=True)
        await bus.complete()


if __name__ == "__main__":
    sys.exit(serve(InterviewAgent(), name="interview"))
