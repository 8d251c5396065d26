"""Agent ``shout``: a plain Python function as an agent.

It answers ``HELLO!`` to ``hello``: with a bare Message when the agent's definition declares message
replies, else with the artifact ``shout`` and a completed task. A blank text raises, and the task
ends TASK_STATE_FAILED with ``there is nothing to shout``.

    WORKER_SECRET=<worker secret> python3 sdks/python/examples/shout.py
"""

import sys
from pathlib import Path

# Runs from a checkout without installing the SDK.
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "src"))

from a2a_platform_worker import agent, serve


@agent("shout")
def shout(text: str) -> str:
    if not text.strip():
        raise ValueError("there is nothing to shout")
    return text.upper() + "!"


if __name__ == "__main__":
    sys.exit(serve(shout))
