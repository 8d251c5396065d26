"""``AgentWorker``: holds a session with the platform and runs the tasks it assigns."""

from __future__ import annotations

import asyncio
import logging
import os
import signal
import socket
import time
from dataclasses import dataclass
from typing import Literal

from ._proto.platform.worker.v1 import worker_pb2
from .agent import AgentExecutor
from .backoff import DEFAULT_BACKOFF, Backoff
from .channel import SessionEnd, WorkerChannel, WorkerSession
from .errors import WorkerError
from .execution import TaskExecution
from .failures import Code, code_name

#: ``INITIALIZED → RUNNING → DRAINING → STOPPED``, or ``FAILED`` when ``run()`` raises.
WorkerState = Literal["INITIALIZED", "RUNNING", "DRAINING", "STOPPED", "FAILED"]

#: How long to wait for ``welcome`` after ``hello`` before giving the session up, in seconds.
WELCOME_TIMEOUT = 10.0
#: Longest wait for one ``ReleaseLease`` answer at shutdown, in seconds.
RELEASE_TIMEOUT = 2.0
#: The platform's documented defaults, for a welcome that leaves the fields unset.
DEFAULT_LEASE_TTL = 10.0
DEFAULT_HEARTBEAT_INTERVAL = 2.0
#: With no lease to renew, a heartbeat goes out every this many ticks only: it renews nothing and
#: just keeps the session's last heartbeat fresh for operators (as the TypeScript SDK; ADR 0016).
IDLE_HEARTBEAT_TICKS = 5
#: Status codes that mean the credential itself was refused.
REFUSED = frozenset({Code.UNAUTHENTICATED, Code.PERMISSION_DENIED})

DEFAULT_LOGGER = logging.getLogger("a2a_platform_worker")


class HeartbeatCadence:
    """Which ticks of a worker's heartbeat timer send a heartbeat: every tick while the worker holds
    a lease, else every :data:`IDLE_HEARTBEAT_TICKS`-th; always with ``at_once`` (a new session)."""

    def __init__(self) -> None:
        self._quiet = 0

    def due(self, holds_leases: bool, at_once: bool = False) -> bool:
        if not holds_leases and not at_once:
            self._quiet += 1
            if self._quiet < IDLE_HEARTBEAT_TICKS:
                return False
        self._quiet = 0
        return True


@dataclass
class _Running:
    execution: TaskExecution
    #: Ends when the execution has ended (it never raises).
    task: asyncio.Task[None]


class AgentWorker:
    """Runs an ``AgentExecutor`` as an agent worker.

    It holds a session with the platform, runs the tasks assigned to it, renews their leases with
    heartbeats, and reconnects with backoff whenever the session breaks, keeping its tasks going::

        worker = AgentWorker(MyAgent(), target="127.0.0.1:50052", credential=secret)
        worker.install_signal_handlers()
        await worker.run()

    Options (keyword-only):

    - ``target``: ``host:port`` of the platform's WorkerService (the task-service's worker port).
    - ``credential``: the worker credential's secret; it binds the worker to one (tenant, agent)
      pair.
    - ``identity``: a free-form name shown to operators. Default: ``<hostname>-<pid>``.
    - ``max_concurrent_tasks``: how many tasks the platform may assign at once. Default: 8.
    - ``shutdown_grace``: on ``shutdown()``, how many seconds running tasks may go on before they
      are stopped and handed back to the platform. Default: 10.0.
    - ``tls``: connect with TLS (system roots) instead of plaintext. Default: False.
    - ``logger``: where the worker logs. Default: the ``a2a_platform_worker`` logger.
    - ``backoff``: the delays between reconnects and between retries of an update. Default:
      ``Backoff()`` (0.1 s doubling to 1 s, ±20 %).

    Raises ``WorkerError("INVALID_OPTIONS")`` for an option it cannot use.
    """

    def __init__(
        self,
        executor: AgentExecutor,
        *,
        target: str,
        credential: str,
        identity: str | None = None,
        max_concurrent_tasks: int = 8,
        shutdown_grace: float = 10.0,
        tls: bool = False,
        logger: logging.Logger | None = None,
        backoff: Backoff = DEFAULT_BACKOFF,
    ) -> None:
        problems = [
            problem
            for problem, bad in [
                ("target is empty", target.strip() == ""),
                ("credential is empty", credential.strip() == ""),
                (
                    "max_concurrent_tasks must be a positive integer",
                    isinstance(max_concurrent_tasks, bool)
                    or not isinstance(max_concurrent_tasks, int)
                    or max_concurrent_tasks < 1,
                ),
                ("shutdown_grace must not be negative", not shutdown_grace >= 0),
            ]
            if bad
        ]
        if problems:
            raise WorkerError("INVALID_OPTIONS", f"invalid worker options: {'; '.join(problems)}")
        self._executor = executor
        self._target = target
        self._identity = identity or f"{socket.gethostname()}-{os.getpid()}"
        self._max_concurrent_tasks = max_concurrent_tasks
        self._shutdown_grace = shutdown_grace
        self._logger = logger or DEFAULT_LOGGER
        self._backoff = backoff
        self._channel = WorkerChannel(target, credential, tls=tls)
        self._state: WorkerState = "INITIALIZED"
        #: The assignments being worked on, by task id.
        self._executions: dict[str, _Running] = {}
        #: Leases given up at shutdown, handed back once the session has closed.
        self._hand_back: list[worker_pb2.LeaseRef] = []
        #: Set when the worker stops holding sessions.
        self._stopping = asyncio.Event()
        #: Set when ``run()`` has returned or raised.
        self._finished = asyncio.Event()
        #: The session the platform welcomed, while it lasts.
        self._live: WorkerSession | None = None
        self._ticker: asyncio.Task[None] | None = None
        self._tick_every = 0.0
        self._heartbeats = HeartbeatCadence()
        self._lease_ttl = DEFAULT_LEASE_TTL
        self._ever_welcomed = False
        self._draining: asyncio.Task[None] | None = None
        self._signals = 0
        #: The drain a signal started (kept, so that it is not garbage-collected while it runs).
        self.signal_drain: asyncio.Task[None] | None = None

    @property
    def state(self) -> WorkerState:
        return self._state

    async def run(self) -> None:
        """Connects and serves assignments until ``shutdown()`` completes.

        Raises ``WorkerError("CONNECT_REJECTED")`` (state ``FAILED``) only when the platform refuses
        the credential on the first connection; any other broken session is reconnected.
        """
        if self._state != "INITIALIZED":
            raise WorkerError(
                "ILLEGAL_STATE", f"run() needs an INITIALIZED worker, not {self._state}"
            )
        self._state = "RUNNING"
        final_state: WorkerState = "STOPPED"
        try:
            await self._hold_sessions()
        except Exception:
            final_state = "FAILED"
            for running in list(self._executions.values()):
                running.execution.abandon()
            raise
        finally:
            self._state = final_state
            self._finished.set()

    async def shutdown(self) -> None:
        """Stops taking new work, lets running tasks finish for ``shutdown_grace`` seconds, stops
        the rest, closes the session and hands their leases back. Returns once the worker has
        stopped; calling it again waits for the same drain."""
        if self._state == "INITIALIZED":
            self._state = "STOPPED"
            return
        if self._draining is None:
            self._draining = asyncio.ensure_future(self._drain())
        await asyncio.shield(self._draining)

    def install_signal_handlers(self) -> None:
        """Drains on the first SIGTERM or SIGINT (``shutdown()``); exits at once (status 130) on a
        second one. Call it from inside the running event loop (Unix only)."""
        loop = asyncio.get_running_loop()
        for signum in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(signum, self._on_signal, signum)

    def _on_signal(self, signum: int) -> None:
        self._signals += 1
        if self._signals > 1:
            self._logger.warning("second %s: exiting now", signal.Signals(signum).name)
            os._exit(130)
        self._logger.info("%s received: draining", signal.Signals(signum).name)
        self.signal_drain = asyncio.ensure_future(self.shutdown())

    async def _drain(self) -> None:
        if self._state == "RUNNING":
            self._state = "DRAINING"
            self._logger.info(
                "draining: %d tasks in flight, %.1f s grace",
                len(self._executions),
                self._shutdown_grace,
            )
            # No task starts while draining, so the ones running now are all there is to wait for.
            running = [r.task for r in self._executions.values()]
            if running:
                await asyncio.wait(running, timeout=self._shutdown_grace)
            for r in list(self._executions.values()):
                if r.execution.holds_lease:
                    self._hand_back.append(r.execution.lease_ref())
                r.execution.abandon()
        self._stopping.set()
        await self._finished.wait()

    async def _hold_sessions(self) -> None:
        """Holds one session after another until the worker stops."""
        failures = 0
        try:
            while not self._stopping.is_set():
                welcomed, end = await self._hold_session()
                failures = 0 if welcomed else failures + 1
                if self._stopping.is_set():
                    break
                if end.code in REFUSED and not self._ever_welcomed:
                    raise WorkerError(
                        "CONNECT_REJECTED",
                        f"the platform refused the worker: {end.message}",
                        {"code": code_name(end.code)},
                    )
                delay = self._backoff.delay(max(0, failures - 1))
                # While the platform stays down, say so now and then rather than on every attempt.
                level = logging.WARNING if failures <= 1 or failures % 20 == 0 else logging.DEBUG
                self._logger.log(
                    level,
                    "session ended (%s: %s); reconnecting in %.2f s "
                    "(%d failures, %d tasks in flight)",
                    code_name(end.code),
                    end.message,
                    delay,
                    failures,
                    len(self._executions),
                )
                try:
                    await asyncio.wait_for(self._stopping.wait(), timeout=delay)
                except asyncio.TimeoutError:
                    pass
        finally:
            if self._ticker is not None:
                self._ticker.cancel()
            # The session is closed: the platform cannot grant these straight back to this worker.
            await self._release_leases()
            running = [r.task for r in self._executions.values()]
            if running:
                await asyncio.wait(running, timeout=RELEASE_TIMEOUT)
            await self._channel.close()

    async def _release_leases(self) -> None:
        """Hands the tasks given up at shutdown back to the platform, which queues them for another
        worker at once. Best effort: a lease not handed back expires as it would have without it."""
        leases, self._hand_back = self._hand_back, []
        failures = await asyncio.gather(
            *(
                self._channel.release(lease, "worker shutting down", RELEASE_TIMEOUT)
                for lease in leases
            )
        )
        for lease, failure in zip(leases, failures):
            if failure is not None:
                self._logger.warning(
                    "could not hand task %s back; its lease will expire: %s",
                    lease.task_id,
                    failure.message,
                )
        if leases:
            self._logger.info("handed %d tasks back", len(leases))

    async def _hold_session(self) -> tuple[bool, SessionEnd]:
        """One ``Connect`` stream, from ``hello`` to its end."""
        welcomed = False
        timed_out = False
        session = self._channel.connect()

        def on_message(message: worker_pb2.PlatformMessage) -> None:
            nonlocal welcomed
            if message.WhichOneof("kind") == "welcome":
                welcomed = True
                self._on_welcome(session, message.welcome)
            elif welcomed:
                self._on_platform_message(message)

        def on_timeout() -> None:
            nonlocal timed_out
            if not welcomed:
                timed_out = True
                session.close()

        loop = asyncio.get_running_loop()
        timer = loop.call_later(WELCOME_TIMEOUT, on_timeout)
        stop = asyncio.ensure_future(self._stopping.wait())
        stop.add_done_callback(lambda _: session.close())
        session.write(
            worker_pb2.WorkerMessage(
                hello=worker_pb2.Hello(
                    identity=self._identity,
                    max_concurrent_tasks=self._max_concurrent_tasks,
                    leases=[
                        r.execution.lease_ref()
                        for r in self._executions.values()
                        if r.execution.holds_lease
                    ],
                    takes_assignment_batches=True,
                )
            )
        )
        try:
            end = await session.run(on_message)
        finally:
            timer.cancel()
            stop.cancel()
            if self._live is session:
                self._live = None
        if timed_out:
            message = f"no welcome within {WELCOME_TIMEOUT:.0f} s (is the credential valid?)"
            return welcomed, SessionEnd(Code.DEADLINE_EXCEEDED, message)
        return welcomed, end

    def _on_welcome(self, session: WorkerSession, welcome: worker_pb2.Welcome) -> None:
        self._live = session
        self._channel.worker_id = welcome.worker_id
        # Zero means the platform left the field unset (proto3): its documented defaults apply.
        self._lease_ttl = welcome.lease_ttl_ms / 1000 or DEFAULT_LEASE_TTL
        interval = welcome.heartbeat_interval_ms / 1000 or DEFAULT_HEARTBEAT_INTERVAL
        self._logger.info(
            "%s to %s (worker %s, tenant %s, agent %s, %d tasks in flight)",
            "reconnected" if self._ever_welcomed else "connected",
            self._target,
            welcome.worker_id,
            welcome.tenant_id,
            welcome.agent_id,
            len(self._executions),
        )
        self._ever_welcomed = True
        if self._tick_every != interval:
            if self._ticker is not None:
                self._ticker.cancel()
            self._tick_every = interval
            self._ticker = asyncio.ensure_future(self._tick_forever(interval))
        # Tell the new session at once which leases this worker still holds, so they are renewed.
        self._tick(at_once=True)

    async def _tick_forever(self, interval: float) -> None:
        while True:
            await asyncio.sleep(interval)
            self._tick()

    def _tick(self, at_once: bool = False) -> None:
        """Gives up leases gone stale, then renews the others on the live session (with no lease
        held, every few ticks only: :class:`HeartbeatCadence`)."""
        now = time.monotonic()
        held: list[TaskExecution] = []
        for r in list(self._executions.values()):
            r.execution.expire_if_stale(now)
            if r.execution.holds_lease:
                held.append(r.execution)
        if not self._heartbeats.due(bool(held), at_once):
            return
        heartbeat = worker_pb2.Heartbeat(leases=[execution.lease_ref() for execution in held])
        if self._live is not None and self._live.write(
            worker_pb2.WorkerMessage(heartbeat=heartbeat)
        ):
            for execution in held:
                execution.renewed(now)

    def _on_platform_message(self, message: worker_pb2.PlatformMessage) -> None:
        kind = message.WhichOneof("kind")
        if kind == "assignment":
            self._on_assignment(message.assignment)
        elif kind == "assignments":
            # Granted together: started in this turn, so what they produce in it goes out together.
            for assignment in message.assignments.assignments:
                self._on_assignment(assignment)
        elif kind == "cancel":
            current = self._current(message.cancel.task_id, message.cancel.lease_epoch)
            if current is not None:
                current.request_cancel()
        elif kind == "lease_revoked":
            revoked = message.lease_revoked
            current = self._current(revoked.task_id, revoked.lease_epoch)
            if current is not None:
                current.lose_lease(revoked.reason or "revoked by the platform")

    def _current(self, task_id: str, lease_epoch: int) -> TaskExecution | None:
        """The execution a cancel or revocation is about, if it runs under that lease epoch."""
        running = self._executions.get(task_id)
        if running is None or running.execution.lease_epoch != lease_epoch:
            return None
        return running.execution

    def _on_assignment(self, assignment: worker_pb2.Assignment) -> None:
        task_id = assignment.task_id
        if self._state != "RUNNING":
            # Not started: handed back with the others once the session has closed.
            self._logger.warning("not starting task %s while draining", task_id)
            self._hand_back.append(
                worker_pb2.LeaseRef(task_id=task_id, lease_epoch=assignment.lease_epoch)
            )
            return
        previous = self._executions.get(task_id)
        if previous is not None:
            if previous.execution.lease_epoch >= assignment.lease_epoch:
                return
            previous.execution.lose_lease(f"superseded by lease epoch {assignment.lease_epoch}")
        if len(self._executions) >= self._max_concurrent_tasks:
            self._logger.warning("running more tasks than max_concurrent_tasks (task %s)", task_id)
        execution = TaskExecution(
            assignment,
            executor=self._executor,
            sender=self._channel,
            lease_ttl=self._lease_ttl,
            logger=self._logger,
            backoff=self._backoff,
        )
        task = asyncio.ensure_future(self._run_execution(execution))
        self._executions[task_id] = _Running(execution, task)

    async def _run_execution(self, execution: TaskExecution) -> None:
        try:
            await execution.run()
        except Exception:
            self._logger.exception("the execution of task %s crashed", execution.task_id)
        finally:
            running = self._executions.get(execution.task_id)
            if running is not None and running.execution is execution:
                del self._executions[execution.task_id]
