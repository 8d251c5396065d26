"""``serve``: runs an agent as a worker process, configured from the environment."""

from __future__ import annotations

import asyncio
import logging
import os
import socket
import sys
from collections.abc import Mapping
from dataclasses import dataclass

from .agent import AgentExecutor
from .errors import WorkerError
from .function_agent import FunctionAgent
from .worker import DEFAULT_LOGGER, AgentWorker

DEFAULT_TARGET = "127.0.0.1:50052"
DEFAULT_CONCURRENCY = 8

_LEVELS = {
    "trace": logging.DEBUG,
    "debug": logging.DEBUG,
    "info": logging.INFO,
    "warn": logging.WARNING,
    "warning": logging.WARNING,
    "error": logging.ERROR,
    "fatal": logging.CRITICAL,
}
_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"", "0", "false", "no", "off"}


@dataclass(frozen=True)
class ServeConfig:
    """A worker process's settings, from its environment."""

    #: WORKER_SECRET: the worker credential's secret. Required.
    secret: str
    #: WORKER_TARGET: the platform's WorkerService. Default: 127.0.0.1:50052.
    target: str = DEFAULT_TARGET
    #: WORKER_CONCURRENCY: tasks at once, a positive integer. Default: ``serve``'s
    #: ``default_concurrency`` (8).
    concurrency: int = DEFAULT_CONCURRENCY
    #: WORKER_TLS: true/1/yes/on for TLS, false/0/no/off for plaintext. Default: plaintext.
    tls: bool = False
    #: LOG_LEVEL: trace, debug, info, warn, error or fatal. Default: info.
    log_level: int = logging.INFO


def config_from_env(
    env: Mapping[str, str], default_concurrency: int = DEFAULT_CONCURRENCY
) -> ServeConfig:
    """Reads the settings; raises ValueError naming the variable that is missing or invalid."""
    secret = env.get("WORKER_SECRET", "").strip()
    if secret == "":
        raise ValueError(
            "WORKER_SECRET is required: the secret of the worker credential issued for this agent"
        )
    target = env.get("WORKER_TARGET", "").strip() or DEFAULT_TARGET
    concurrency_text = env.get("WORKER_CONCURRENCY", "").strip()
    concurrency = default_concurrency
    if concurrency_text:
        if not concurrency_text.isdigit() or int(concurrency_text) < 1:
            raise ValueError(
                f"WORKER_CONCURRENCY must be a positive integer, not {concurrency_text!r}"
            )
        concurrency = int(concurrency_text)
    tls_text = env.get("WORKER_TLS", "").strip().lower()
    if tls_text not in _TRUE | _FALSE:
        raise ValueError(f"WORKER_TLS must be true or false, not {tls_text!r}")
    level_text = env.get("LOG_LEVEL", "").strip().lower() or "info"
    if level_text not in _LEVELS:
        raise ValueError(f"LOG_LEVEL must be one of {', '.join(_LEVELS)}, not {level_text!r}")
    return ServeConfig(
        secret=secret,
        target=target,
        concurrency=concurrency,
        tls=tls_text in _TRUE,
        log_level=_LEVELS[level_text],
    )


def serve(
    executor: AgentExecutor,
    *,
    name: str | None = None,
    default_concurrency: int = DEFAULT_CONCURRENCY,
) -> int:
    """Runs ``executor`` as a worker until SIGTERM or SIGINT has drained it; returns its status.

    Reads WORKER_SECRET (required), WORKER_TARGET, WORKER_CONCURRENCY, WORKER_TLS and LOG_LEVEL (see
    ``ServeConfig``). Logs one line per entry on stderr; once the platform has welcomed the worker,
    a line saying ``connected to <target>``. ``name`` (default: a ``FunctionAgent``'s name, else
    none) prefixes the identity operators see (``<name>@<hostname>-<pid>``). Returns 0 after a
    drain, 1 when the settings are invalid or the platform refuses the credential::

        sys.exit(serve(MyAgent(), name="my-agent"))
    """
    try:
        config = config_from_env(os.environ, default_concurrency)
    except ValueError as error:
        print(f"a2a_platform_worker: {error}", file=sys.stderr)
        return 1
    logging.basicConfig(
        level=config.log_level,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
        stream=sys.stderr,
    )
    if name is None and isinstance(executor, FunctionAgent):
        name = executor.name
    host = f"{socket.gethostname()}-{os.getpid()}"
    worker = AgentWorker(
        executor,
        target=config.target,
        credential=config.secret,
        identity=f"{name}@{host}" if name else host,
        max_concurrent_tasks=config.concurrency,
        tls=config.tls,
    )

    async def main() -> None:
        worker.install_signal_handlers()
        await worker.run()

    try:
        asyncio.run(main())
    except WorkerError as error:
        DEFAULT_LOGGER.error("the worker stopped: %s", error)
        return 1
    return 0
