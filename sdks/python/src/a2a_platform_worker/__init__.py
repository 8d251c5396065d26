"""Write agents for the A2A agent hosting platform in Python.

An agent is an ``AgentExecutor`` (or a plain function under ``@agent(name)``); ``serve`` runs it as
a worker process configured from the environment, ``AgentWorker`` runs it inside your own event
loop. The generated protobuf modules are ``a2a_pb2`` (the A2A model: Message, Part, Task, Artifact)
and ``worker_pb2`` (the worker protocol).
"""

from ._proto.lf.a2a.v1 import a2a_pb2
from ._proto.platform.worker.v1 import worker_pb2
from .agent import AgentExecutor, RequestContext, StopSignal
from .backoff import DEFAULT_BACKOFF, Backoff
from .errors import WorkerError, WorkerErrorReason
from .execution import EventBus
from .function_agent import FunctionAgent, agent
from .messages import Content, agent_message, data_part, text_of, text_part
from .serve import ServeConfig, config_from_env, serve
from .states import INTERRUPTED_STATES, TERMINAL_STATES, TaskState, state_name
from .worker import AgentWorker, WorkerState

__all__ = [
    "DEFAULT_BACKOFF",
    "INTERRUPTED_STATES",
    "TERMINAL_STATES",
    "AgentExecutor",
    "AgentWorker",
    "Backoff",
    "Content",
    "EventBus",
    "FunctionAgent",
    "RequestContext",
    "ServeConfig",
    "StopSignal",
    "TaskState",
    "WorkerError",
    "WorkerErrorReason",
    "WorkerState",
    "a2a_pb2",
    "agent",
    "agent_message",
    "config_from_env",
    "data_part",
    "serve",
    "state_name",
    "text_of",
    "text_part",
    "worker_pb2",
]
