"""Agent ``echo``: sends the user's text back as the artifact ``echo``, like the TypeScript echo
agent.

One update holding three: TASK_STATE_WORKING, the artifact ``echo`` (one text part: the message's
text parts joined by newlines) and TASK_STATE_COMPLETED.

    WORKER_SECRET=<worker secret> python3 sdks/python/examples/echo.py
"""

import asyncio
import sys
from pathlib import Path

# Runs from a checkout without installing the SDK.
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "src"))

from a2a_platform_worker import AgentExecutor, EventBus, RequestContext, serve


class EchoAgent(AgentExecutor):
    async def execute(self, context: RequestContext, bus: EventBus) -> None:
        # Produced together, so published together: one update, one change of the task.
        await asyncio.gather(
            bus.working(),
            bus.artifact(context.text, artifact_id="echo", name="echo", last_chunk=True),
            bus.complete(),
        )


if __name__ == "__main__":
    # Echo only copies text: its limit is the platform's throughput, not its own work.
    sys.exit(serve(EchoAgent(), name="echo", default_concurrency=256))
