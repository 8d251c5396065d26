"""The gRPC side of the worker: the only module that knows grpcio."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass
from typing import Any

import grpc

from ._proto.platform.worker.v1 import worker_pb2
from .backoff import DEFAULT_BACKOFF
from .failures import Code, UpdateFailure

_SERVICE = "/platform.worker.v1.WorkerService"
#: Most requests in one ``SessionUpdates`` message or ``PublishUpdates`` call.
MAX_REQUESTS_PER_BATCH = 64

#: The outcome of a batch whose answer never came is unknown: its requests are sent again, with
#: the same update ids.
UNANSWERED = UpdateFailure(
    Code.UNAVAILABLE, None, "the session ended before the platform answered the updates"
)
LATE = UpdateFailure(
    Code.DEADLINE_EXCEEDED, None, "the platform did not answer the updates in time"
)


@dataclass(frozen=True)
class SessionEnd:
    """How a session ended: a gRPC status code and its details."""

    code: int
    message: str


@dataclass
class _QueuedRequest:
    request: worker_pb2.PublishUpdateRequest
    deadline: float
    future: asyncio.Future[UpdateFailure | None]


@dataclass
class _SentBatch:
    session: WorkerSession
    batch: list[_QueuedRequest]
    timer: asyncio.TimerHandle


def _resolve(queued: _QueuedRequest, result: UpdateFailure | None) -> None:
    if not queued.future.done():
        queued.future.set_result(result)


def result_of(outcome: worker_pb2.PublishOutcome | None) -> UpdateFailure | None:
    """One request's outcome in a batch's answer; a missing one counts as a transient failure."""
    if outcome is None:
        return UpdateFailure(Code.INTERNAL, None, "the platform sent no outcome for the update")
    if outcome.code == Code.OK:
        return None
    return UpdateFailure(outcome.code, outcome.reason or None, outcome.message)


def failure_of(error: grpc.aio.AioRpcError) -> UpdateFailure:
    """A failed call as an ``UpdateFailure``, with the platform's ``x-error-reason`` trailer."""
    reason = None
    for key, value in error.trailing_metadata() or ():
        if key == "x-error-reason":
            reason = value if isinstance(value, str) else value.decode()
    return UpdateFailure(error.code().value[0], reason, error.details() or str(error))


class WorkerSession:
    """One ``Connect`` stream: its requests come from a queue, its answers go to ``on_message``."""

    def __init__(
        self,
        channel: WorkerChannel,
        call_factory: Callable[[AsyncIterator[worker_pb2.WorkerMessage]], Any],
    ) -> None:
        self._channel = channel
        self._outgoing: asyncio.Queue[worker_pb2.WorkerMessage | None] = asyncio.Queue()
        self._open = True
        self._closed_here = False
        self._call = call_factory(self._requests())

    async def _requests(self) -> AsyncIterator[worker_pb2.WorkerMessage]:
        while True:
            message = await self._outgoing.get()
            if message is None:
                return
            yield message

    @property
    def is_open(self) -> bool:
        return self._open

    def write(self, message: worker_pb2.WorkerMessage) -> bool:
        """Queues a message for the stream; False when the stream has ended already."""
        if self._open:
            self._outgoing.put_nowait(message)
        return self._open

    def close(self) -> None:
        """Ends the stream from this side."""
        if self._open and not self._closed_here:
            self._closed_here = True
            self._call.cancel()

    async def run(self, on_message: Callable[[worker_pb2.PlatformMessage], None]) -> SessionEnd:
        """Reads the stream until it ends, for whatever reason, and says how it ended."""
        try:
            while True:
                message = await self._call.read()
                if message is grpc.aio.EOF:
                    break
                self._channel.received(self, message, on_message)
            end = SessionEnd((await self._call.code()).value[0], await self._call.details() or "")
        except grpc.aio.AioRpcError as error:
            end = SessionEnd(error.code().value[0], error.details() or "")
        except asyncio.CancelledError:
            # grpcio raises CancelledError from a call cancelled by close(): that is the end of the
            # session, not a cancellation of this coroutine.
            if not self._closed_here:
                self._call.cancel()
                raise
            end = SessionEnd(Code.CANCELLED, "closed by the worker")
        finally:
            self._open = False
            self._outgoing.put_nowait(None)
            self._channel.ended(self)
        return end


class WorkerChannel:
    """Connects sessions and sends update requests and lease releases to the platform.

    The gRPC channel is made on first use, inside the running event loop.
    """

    def __init__(self, target: str, credential: str, *, tls: bool = False) -> None:
        self._target = target
        self._credential = credential
        self._tls = tls
        self._grpc: Any = None
        #: The worker id of the latest welcome, sent as ``x-worker-id`` with ``PublishUpdates``.
        self.worker_id: str | None = None
        self._queued: list[_QueuedRequest] = []
        self._flush_scheduled = False
        #: The session the platform welcomed, while it lasts: updates go on it.
        self._live: WorkerSession | None = None
        self._sent: dict[str, _SentBatch] = {}
        self._next_batch = 0
        self._calls: set[asyncio.Task[None]] = set()

    def _channel(self) -> Any:
        if self._grpc is None:
            options = [
                # Notice a restarted platform as fast as the worker retries.
                ("grpc.initial_reconnect_backoff_ms", int(DEFAULT_BACKOFF.initial * 1000)),
                ("grpc.max_reconnect_backoff_ms", int(DEFAULT_BACKOFF.maximum * 1000)),
            ]
            self._grpc = (
                grpc.aio.secure_channel(self._target, grpc.ssl_channel_credentials(), options)
                if self._tls
                else grpc.aio.insecure_channel(self._target, options)
            )
        return self._grpc

    def _metadata(self, worker_id: bool = False) -> Sequence[tuple[str, str]]:
        metadata = [("authorization", f"Bearer {self._credential}")]
        if worker_id and self.worker_id:
            metadata.append(("x-worker-id", self.worker_id))
        return tuple(metadata)

    def connect(self) -> WorkerSession:
        """Opens a ``Connect`` stream; ``run`` it to read it."""
        method = self._channel().stream_stream(
            f"{_SERVICE}/Connect",
            request_serializer=worker_pb2.WorkerMessage.SerializeToString,
            response_deserializer=worker_pb2.PlatformMessage.FromString,
        )
        return WorkerSession(self, lambda requests: method(requests, metadata=self._metadata()))

    def received(
        self,
        session: WorkerSession,
        message: worker_pb2.PlatformMessage,
        on_message: Callable[[worker_pb2.PlatformMessage], None],
    ) -> None:
        """A message of ``session``: answers to updates are settled here, the rest go on."""
        kind = message.WhichOneof("kind")
        if kind == "updates_applied":
            self._applied(message.updates_applied)
            return
        if kind == "welcome" and session.is_open:
            self._live = session
        on_message(message)

    def ended(self, session: WorkerSession) -> None:
        """``session`` has ended: the outcome of its unanswered batches is unknown, so each request
        is sent again by its task (same update id, applied once)."""
        if self._live is session:
            self._live = None
        for batch_id, sent in list(self._sent.items()):
            if sent.session is session:
                sent.timer.cancel()
                del self._sent[batch_id]
                for queued in sent.batch:
                    _resolve(queued, UNANSWERED)

    def send(
        self, request: worker_pb2.PublishUpdateRequest, timeout: float
    ) -> asyncio.Future[UpdateFailure | None]:
        """Sends one update request; resolves with None once applied, else with why not.

        The requests of every task sent in the same turn of the event loop go out together, each
        with its own outcome: on the session once the platform welcomed it (``SessionUpdates``),
        else as one ``PublishUpdates`` call. Their deadline is the earliest of theirs.
        """
        loop = asyncio.get_running_loop()
        future: asyncio.Future[UpdateFailure | None] = loop.create_future()
        self._queued.append(_QueuedRequest(request, loop.time() + timeout, future))
        if not self._flush_scheduled:
            self._flush_scheduled = True
            loop.call_soon(self._flush)
        return future

    def _flush(self) -> None:
        self._flush_scheduled = False
        while self._queued:
            batch = self._queued[:MAX_REQUESTS_PER_BATCH]
            del self._queued[:MAX_REQUESTS_PER_BATCH]
            if self._live is not None:
                self._send_on_session(self._live, batch)
            else:
                call = asyncio.ensure_future(self._publish_updates(batch))
                self._calls.add(call)
                call.add_done_callback(self._calls.discard)

    def _send_on_session(self, session: WorkerSession, batch: list[_QueuedRequest]) -> None:
        """Sends a batch on the session; its answer, the session's end or a deadline settles it."""
        loop = asyncio.get_running_loop()
        self._next_batch += 1
        batch_id = str(self._next_batch)
        deadline = min(queued.deadline for queued in batch)
        timer = loop.call_later(max(0.0, deadline - loop.time()), self._expire, batch_id)
        self._sent[batch_id] = _SentBatch(session, batch, timer)
        session.write(
            worker_pb2.WorkerMessage(
                updates=worker_pb2.SessionUpdates(
                    batch_id=batch_id, requests=[queued.request for queued in batch]
                )
            )
        )

    def _expire(self, batch_id: str) -> None:
        sent = self._sent.pop(batch_id, None)
        if sent is not None:
            for queued in sent.batch:
                _resolve(queued, LATE)

    def _applied(self, applied: worker_pb2.SessionUpdatesApplied) -> None:
        sent = self._sent.pop(applied.batch_id, None)
        if sent is None:
            return
        sent.timer.cancel()
        outcomes = list(applied.outcomes)
        for index, queued in enumerate(sent.batch):
            _resolve(queued, result_of(outcomes[index] if index < len(outcomes) else None))

    async def _publish_updates(self, batch: list[_QueuedRequest]) -> None:
        loop = asyncio.get_running_loop()
        method = self._channel().unary_unary(
            f"{_SERVICE}/PublishUpdates",
            request_serializer=worker_pb2.PublishUpdatesRequest.SerializeToString,
            response_deserializer=worker_pb2.PublishUpdatesResponse.FromString,
        )
        timeout = max(0.0, min(queued.deadline for queued in batch) - loop.time())
        try:
            response = await method(
                worker_pb2.PublishUpdatesRequest(requests=[queued.request for queued in batch]),
                metadata=self._metadata(worker_id=True),
                timeout=timeout,
            )
        except grpc.aio.AioRpcError as error:
            failure = failure_of(error)
            for queued in batch:
                _resolve(queued, failure)
            return
        except asyncio.CancelledError:
            # The channel closed under the call: its outcome is unknown.
            for queued in batch:
                _resolve(queued, UNANSWERED)
            raise
        outcomes = list(response.outcomes)
        for index, queued in enumerate(batch):
            _resolve(queued, result_of(outcomes[index] if index < len(outcomes) else None))

    async def release(
        self, lease: worker_pb2.LeaseRef, reason: str, timeout: float
    ) -> UpdateFailure | None:
        """Hands a lease back (``ReleaseLease``); None when done, else why not. Never raises."""
        method = self._channel().unary_unary(
            f"{_SERVICE}/ReleaseLease",
            request_serializer=worker_pb2.ReleaseLeaseRequest.SerializeToString,
            response_deserializer=worker_pb2.ReleaseLeaseResponse.FromString,
        )
        try:
            await method(
                worker_pb2.ReleaseLeaseRequest(
                    task_id=lease.task_id, lease_epoch=lease.lease_epoch, reason=reason
                ),
                metadata=self._metadata(),
                timeout=timeout,
            )
        except grpc.aio.AioRpcError as error:
            return failure_of(error)
        return None

    async def close(self) -> None:
        """Closes the gRPC channel (after the sessions have ended)."""
        if self._grpc is not None:
            await self._grpc.close()
            self._grpc = None
