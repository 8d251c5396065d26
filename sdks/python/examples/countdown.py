"""Agent ``countdown``: streams the artifact ``countdown`` one chunk per step, like the TypeScript
countdown agent, and stops when the task is cancelled.

N is the first integer in the text (1..100; 5 when there is none); the step delay is the message
metadata's integer ``stepMs`` (10..10 000; 1 000 when absent). Each step publishes
TASK_STATE_WORKING with ``step i/N``, waits, then the chunk ``N-i+1`` (appended after the first;
the last one marked ``last_chunk``). Then TASK_STATE_COMPLETED with ``Counted down from N.``.
A cancel stops the wait; the SDK then publishes TASK_STATE_CANCELED.

    WORKER_SECRET=<worker secret> python3 sdks/python/examples/countdown.py
"""

import asyncio
import re
import sys
from pathlib import Path

# Runs from a checkout without installing the SDK.
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "src"))

from google.protobuf import struct_pb2

from a2a_platform_worker import AgentExecutor, EventBus, RequestContext, serve

DEFAULT_COUNT = 5
DEFAULT_STEP_MS = 1000


def clamp(value: int, low: int, high: int) -> int:
    return min(high, max(low, value))


def parse_count(text: str) -> int:
    """The first integer in the text, 1..100; 5 when there is none."""
    match = re.search(r"-?\d+", text)
    return clamp(int(match.group(0)), 1, 100) if match else DEFAULT_COUNT


def parse_step_ms(metadata: struct_pb2.Struct) -> int:
    """The metadata's integer ``stepMs``, 10..10 000; 1 000 when absent or not an integer."""
    value = metadata.fields.get("stepMs")
    if value is None or value.WhichOneof("kind") != "number_value":
        return DEFAULT_STEP_MS
    number = float(value.number_value)
    return clamp(int(number), 10, 10_000) if number.is_integer() else DEFAULT_STEP_MS


class CountdownAgent(AgentExecutor):
    async def execute(self, context: RequestContext, bus: EventBus) -> None:
        count = parse_count(context.text)
        step_seconds = parse_step_ms(context.message.metadata) / 1000
        for step in range(1, count + 1):
            await bus.working(f"step {step}/{count}")
            # A cancel cancels this coroutine here: the SDK then publishes TASK_STATE_CANCELED.
            await asyncio.sleep(step_seconds)
            await bus.artifact(
                str(count - step + 1),
                artifact_id="countdown",
                name="countdown",
                append=step > 1,
                last_chunk=step == count,
            )
        await bus.complete(f"Counted down from {count}.")


if __name__ == "__main__":
    sys.exit(serve(CountdownAgent(), name="countdown"))
