"""The worker against an in-process WorkerService over real gRPC (loopback)."""

import asyncio
from collections.abc import AsyncIterator, Callable

import grpc
import pytest
from recording import FunctionsAgent, assignment

from a2a_platform_worker import AgentWorker, EventBus, RequestContext, WorkerError, worker_pb2
from a2a_platform_worker.failures import Code

SERVICE = "platform.worker.v1.WorkerService"


class FakePlatform:
    """Welcomes a worker, grants it the assignments it is given, applies every update, and records
    what the worker sent."""

    def __init__(self, grants: list[worker_pb2.Assignment], secret: str = "s3cret") -> None:
        self.grants = grants
        self.secret = secret
        self.hellos: list[worker_pb2.Hello] = []
        self.heartbeats: list[worker_pb2.Heartbeat] = []
        self.updates: list[worker_pb2.PublishUpdateRequest] = []
        self.released: list[worker_pb2.ReleaseLeaseRequest] = []

    async def connect(
        self,
        requests: AsyncIterator[worker_pb2.WorkerMessage],
        context: grpc.aio.ServicerContext,
    ) -> AsyncIterator[worker_pb2.PlatformMessage]:
        if ("authorization", f"Bearer {self.secret}") not in context.invocation_metadata():
            await context.abort(grpc.StatusCode.UNAUTHENTICATED, "invalid worker credential")
        async for message in requests:
            kind = message.WhichOneof("kind")
            if kind == "hello":
                self.hellos.append(message.hello)
                yield worker_pb2.PlatformMessage(
                    welcome=worker_pb2.Welcome(
                        worker_id="w-1",
                        tenant_id="demo",
                        agent_id="echo",
                        heartbeat_interval_ms=50,
                        lease_ttl_ms=2000,
                    )
                )
                yield worker_pb2.PlatformMessage(
                    assignments=worker_pb2.Assignments(assignments=self.grants)
                )
            elif kind == "heartbeat":
                self.heartbeats.append(message.heartbeat)
            elif kind == "updates":
                self.updates.extend(message.updates.requests)
                ok = [worker_pb2.PublishOutcome(code=Code.OK)] * len(message.updates.requests)
                yield worker_pb2.PlatformMessage(
                    updates_applied=worker_pb2.SessionUpdatesApplied(
                        batch_id=message.updates.batch_id, outcomes=ok
                    )
                )

    async def release(
        self, request: worker_pb2.ReleaseLeaseRequest, context: grpc.aio.ServicerContext
    ) -> worker_pb2.ReleaseLeaseResponse:
        self.released.append(request)
        return worker_pb2.ReleaseLeaseResponse(version=9)

    async def serve(self) -> tuple[grpc.aio.Server, str]:
        server = grpc.aio.server()
        handlers = {
            "Connect": grpc.stream_stream_rpc_method_handler(
                self.connect,
                request_deserializer=worker_pb2.WorkerMessage.FromString,
                response_serializer=worker_pb2.PlatformMessage.SerializeToString,
            ),
            "ReleaseLease": grpc.unary_unary_rpc_method_handler(
                self.release,
                request_deserializer=worker_pb2.ReleaseLeaseRequest.FromString,
                response_serializer=worker_pb2.ReleaseLeaseResponse.SerializeToString,
            ),
        }
        server.add_generic_rpc_handlers((grpc.method_handlers_generic_handler(SERVICE, handlers),))
        port = server.add_insecure_port("127.0.0.1:0")
        await server.start()
        return server, f"127.0.0.1:{port}"


async def echo_or_wait(context: RequestContext, bus: EventBus) -> None:
    if context.text == "wait":
        await asyncio.sleep(30)
    await asyncio.gather(bus.working(), bus.artifact(context.text), bus.complete())


async def until(condition: Callable[[], bool], what: str) -> None:
    for _ in range(200):
        if condition():
            return
        await asyncio.sleep(0.01)
    raise AssertionError(f"timed out waiting for {what}")


async def test_serves_assignments_renews_leases_and_hands_work_back_on_drain() -> None:
    platform = FakePlatform(
        [assignment("hi", task_id="quick"), assignment("wait", task_id="slow", epoch=5)]
    )
    server, target = await platform.serve()
    worker = AgentWorker(
        FunctionsAgent(echo_or_wait),
        target=target,
        credential="s3cret",
        identity="test-worker",
        max_concurrent_tasks=4,
        shutdown_grace=0.1,
    )
    running = asyncio.ensure_future(worker.run())
    try:
        await until(lambda: len(platform.updates) == 1, "the quick task's update")
        await until(
            lambda: any(
                [lease.task_id for lease in h.leases] == ["slow"] for h in platform.heartbeats
            ),
            "a heartbeat renewing only the slow task",
        )
        await worker.shutdown()
        await asyncio.wait_for(running, 5)
    finally:
        await server.stop(None)
    hello = platform.hellos[0]
    assert (hello.identity, hello.max_concurrent_tasks) == ("test-worker", 4)
    assert hello.takes_assignment_batches
    assert [len(request.updates) for request in platform.updates] == [3]
    assert platform.updates[0].task_id == "quick"
    assert [(r.task_id, r.lease_epoch) for r in platform.released] == [("slow", 5)]
    assert platform.released[0].reason == "worker shutting down"
    assert worker.state == "STOPPED"


async def test_a_refused_credential_stops_the_worker() -> None:
    platform = FakePlatform([])
    server, target = await platform.serve()
    worker = AgentWorker(FunctionsAgent(echo_or_wait), target=target, credential="wrong")
    try:
        with pytest.raises(WorkerError) as raised:
            await asyncio.wait_for(worker.run(), 5)
    finally:
        await server.stop(None)
    assert raised.value.reason == "CONNECT_REJECTED"
    assert worker.state == "FAILED"
