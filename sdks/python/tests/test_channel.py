import asyncio
from collections.abc import AsyncIterator

import grpc

from a2a_platform_worker import worker_pb2
from a2a_platform_worker.channel import UNANSWERED, SessionEnd, WorkerChannel, WorkerSession
from a2a_platform_worker.failures import Code, UpdateFailure


class FakeCall:
    """A Connect call: the worker's messages are read from its request iterator, the platform's are
    pushed with ``answer``; ``end`` finishes the stream with a status."""

    def __init__(self, requests: AsyncIterator[worker_pb2.WorkerMessage]) -> None:
        self.requests = requests
        self._incoming: asyncio.Queue[worker_pb2.PlatformMessage | None] = asyncio.Queue()

    def answer(self, message: worker_pb2.PlatformMessage) -> None:
        self._incoming.put_nowait(message)

    def end(self) -> None:
        self._incoming.put_nowait(None)

    async def read(self) -> object:
        message = await self._incoming.get()
        return grpc.aio.EOF if message is None else message

    async def code(self) -> grpc.StatusCode:
        return grpc.StatusCode.UNAVAILABLE

    async def details(self) -> str:
        return "platform restarting"

    def cancel(self) -> None:
        self.end()


def request(task_id: str) -> worker_pb2.PublishUpdateRequest:
    return worker_pb2.PublishUpdateRequest(task_id=task_id, lease_epoch=1, update_id=task_id)


async def welcomed_session() -> tuple[WorkerChannel, FakeCall, "asyncio.Task[SessionEnd]"]:
    channel = WorkerChannel("127.0.0.1:1", "secret")
    calls: list[FakeCall] = []

    def open_call(requests: AsyncIterator[worker_pb2.WorkerMessage]) -> FakeCall:
        calls.append(FakeCall(requests))
        return calls[0]

    session = WorkerSession(channel, open_call)
    running = asyncio.ensure_future(session.run(lambda message: None))
    calls[0].answer(worker_pb2.PlatformMessage(welcome=worker_pb2.Welcome(worker_id="w-1")))
    await asyncio.sleep(0.01)
    return channel, calls[0], running


async def test_requests_sent_in_one_turn_go_out_as_one_batch_on_the_session() -> None:
    channel, call, running = await welcomed_session()
    first = channel.send(request("a"), 5)
    second = channel.send(request("b"), 5)
    sent = await call.requests.__anext__()
    assert sent.WhichOneof("kind") == "updates"
    assert [r.task_id for r in sent.updates.requests] == ["a", "b"]
    refused = worker_pb2.PublishOutcome(code=Code.FAILED_PRECONDITION, reason="LEASE_LOST")
    call.answer(
        worker_pb2.PlatformMessage(
            updates_applied=worker_pb2.SessionUpdatesApplied(
                batch_id=sent.updates.batch_id,
                outcomes=[worker_pb2.PublishOutcome(code=Code.OK, version=7), refused],
            )
        )
    )
    assert await first is None
    assert await second == UpdateFailure(Code.FAILED_PRECONDITION, "LEASE_LOST", "")
    call.end()
    assert await running == SessionEnd(Code.UNAVAILABLE, "platform restarting")


async def test_a_batch_unanswered_when_the_session_ends_is_sent_again() -> None:
    channel, call, running = await welcomed_session()
    pending = channel.send(request("a"), 5)
    await call.requests.__anext__()
    call.end()
    await running
    assert await pending == UNANSWERED
    assert UNANSWERED.code == Code.UNAVAILABLE
