import asyncio

import pytest
from recording import FunctionsAgent, RecordingSender, assignment, execution

from a2a_platform_worker import EventBus, RequestContext, TaskState, WorkerError, text_of
from a2a_platform_worker.failures import Code, UpdateFailure


async def echo(context: RequestContext, bus: EventBus) -> None:
    await asyncio.gather(
        bus.working(),
        bus.artifact(context.text, artifact_id="echo", name="echo", last_chunk=True),
        bus.complete(),
    )


async def test_updates_queued_together_go_out_as_one_request() -> None:
    sender = RecordingSender()
    await execution(FunctionsAgent(echo), sender).run()
    assert sender.published() == [
        ["status:TASK_STATE_WORKING", "artifact:echo", "status:TASK_STATE_COMPLETED"]
    ]
    request = sender.requests[0]
    assert (request.task_id, request.lease_epoch) == ("task-1", 3)
    assert request.traceparent == assignment().traceparent
    assert text_of(request.updates[1].artifact.artifact.parts) == "hello"
    assert request.updates[1].artifact.last_chunk


async def test_awaited_updates_go_out_one_by_one_and_a_return_completes() -> None:
    async def steps(context: RequestContext, bus: EventBus) -> None:
        await bus.working("thinking")
        artifact_id = await bus.artifact("42")
        await bus.artifact("!", artifact_id=artifact_id, append=True)

    sender = RecordingSender()
    await execution(FunctionsAgent(steps), sender).run()
    assert [kinds[0] for kinds in sender.published()] == [
        "status:TASK_STATE_WORKING",
        f"artifact:{sender.requests[1].artifact.artifact.artifact_id}",
        f"artifact:{sender.requests[1].artifact.artifact.artifact_id}",
        "status:TASK_STATE_COMPLETED",
    ]
    assert sender.requests[0].status.message.parts[0].text == "thinking"
    assert sender.requests[2].artifact.append
    assert len({request.update_id for request in sender.requests}) == 4


async def test_an_error_becomes_a_failed_task_with_its_message() -> None:
    async def broken(context: RequestContext, bus: EventBus) -> None:
        raise ValueError("no such city")

    sender = RecordingSender()
    await execution(FunctionsAgent(broken), sender).run()
    assert sender.published() == [["status:TASK_STATE_FAILED"]]
    assert text_of(sender.requests[0].status.message) == "no such city"


async def test_a_cancel_stops_execute_and_publishes_canceled() -> None:
    seen: list[WorkerError | None] = []

    async def slow(context: RequestContext, bus: EventBus) -> None:
        await bus.working()
        try:
            await asyncio.sleep(30)
        finally:
            seen.append(context.stopped.reason)

    sender = RecordingSender()
    work = execution(FunctionsAgent(slow), sender)
    running = asyncio.ensure_future(work.run())
    await asyncio.sleep(0.01)
    work.request_cancel()
    await asyncio.wait_for(running, 1)
    assert [error.reason if error else None for error in seen] == ["TASK_CANCELED"]
    assert sender.published() == [["status:TASK_STATE_WORKING"], ["status:TASK_STATE_CANCELED"]]


async def test_cancel_task_may_publish_the_final_status_itself() -> None:
    async def wait(context: RequestContext, bus: EventBus) -> None:
        await context.stopped.wait()

    async def cancel(context: RequestContext, bus: EventBus) -> None:
        await bus.status(TaskState.CANCELED, "stopped as asked")

    sender = RecordingSender()
    work = execution(FunctionsAgent(wait, cancel), sender)
    running = asyncio.ensure_future(work.run())
    await asyncio.sleep(0.01)
    work.request_cancel()
    await asyncio.wait_for(running, 1)
    assert sender.published() == [["status:TASK_STATE_CANCELED"]]
    assert text_of(sender.requests[0].status.message) == "stopped as asked"


async def test_transient_failures_are_retried_with_the_same_update_id() -> None:
    unavailable = UpdateFailure(Code.UNAVAILABLE, None, "restarting")
    sender = RecordingSender([unavailable, unavailable])
    await execution(FunctionsAgent(echo), sender).run()
    assert len(sender.requests) == 3
    assert len({request.update_id for request in sender.requests}) == 1


async def test_a_lost_lease_stops_the_agent_and_publishes_nothing_more() -> None:
    stopped: list[str] = []

    async def agent(context: RequestContext, bus: EventBus) -> None:
        try:
            await bus.working()
        except asyncio.CancelledError:
            assert context.stopped.reason is not None
            stopped.append(context.stopped.reason.reason)
            raise
        await bus.complete()

    sender = RecordingSender([UpdateFailure(Code.FAILED_PRECONDITION, "LEASE_LOST", "fenced")])
    work = execution(FunctionsAgent(agent), sender)
    await work.run()
    assert stopped == ["LEASE_LOST"]
    assert sender.published() == [["status:TASK_STATE_WORKING"]]
    assert not work.holds_lease


async def test_a_rejected_update_fails_the_task() -> None:
    sender = RecordingSender([UpdateFailure(Code.INVALID_ARGUMENT, "INVALID_UPDATE", "bad part")])
    await execution(FunctionsAgent(echo), sender).run()
    assert sender.published()[1] == ["status:TASK_STATE_FAILED"]
    assert text_of(sender.requests[1].status.message) == "bad part"


async def test_nothing_may_follow_a_terminal_status() -> None:
    async def chatty(context: RequestContext, bus: EventBus) -> None:
        await bus.complete()
        await bus.working()

    sender = RecordingSender()
    work = execution(FunctionsAgent(chatty), sender)
    await work.run()
    assert sender.published() == [["status:TASK_STATE_COMPLETED"]]
    assert not work.holds_lease


async def test_a_reply_only_when_the_platform_allows_it() -> None:
    async def reply(context: RequestContext, bus: EventBus) -> None:
        await bus.reply("hi")

    allowed = RecordingSender()
    await execution(FunctionsAgent(reply), allowed, assignment(may_reply=True)).run()
    assert allowed.published() == [["reply"]]
    assert allowed.requests[0].reply.task_id == ""

    refused = RecordingSender()
    await execution(FunctionsAgent(reply), refused).run()
    assert refused.published() == [["status:TASK_STATE_FAILED"]]
    assert "may_reply is false" in text_of(refused.requests[0].status.message)


async def test_shutdown_abandons_the_task_without_a_final_status() -> None:
    async def slow(context: RequestContext, bus: EventBus) -> None:
        await asyncio.sleep(30)

    sender = RecordingSender()
    work = execution(FunctionsAgent(slow), sender)
    running = asyncio.ensure_future(work.run())
    await asyncio.sleep(0.01)
    work.abandon()
    await asyncio.wait_for(running, 1)
    assert sender.requests == []
    assert work.context is not None and work.context.stopped.reason is not None
    assert work.context.stopped.reason.reason == "WORKER_SHUTDOWN"


async def test_an_unrenewed_lease_expires() -> None:
    now = [100.0]
    work = execution(FunctionsAgent(echo), RecordingSender(), clock=lambda: now[0])
    work.expire_if_stale(105.0)
    assert work.holds_lease
    work.renewed(105.0)
    work.expire_if_stale(114.0)
    assert work.holds_lease
    work.expire_if_stale(115.5)
    assert not work.holds_lease


@pytest.mark.parametrize("text", ["", "   "])
async def test_a_function_agent_that_raises_fails_the_task(text: str) -> None:
    from a2a_platform_worker import agent

    @agent("shout")
    def shout(text: str) -> str:
        if not text.strip():
            raise ValueError("there is nothing to shout")
        return text.upper()

    sender = RecordingSender()
    await execution(shout, sender, assignment(text)).run()
    assert sender.published() == [["status:TASK_STATE_FAILED"]]
    assert text_of(sender.requests[0].status.message) == "there is nothing to shout"


async def test_a_function_agent_replies_or_publishes_an_artifact() -> None:
    from a2a_platform_worker import agent

    @agent("shout")
    async def shout(text: str) -> str:
        return text.upper()

    replied = RecordingSender()
    await execution(shout, replied, assignment(may_reply=True)).run()
    assert replied.published() == [["reply"]]
    assert text_of(replied.requests[0].reply) == "HELLO"

    tasked = RecordingSender()
    await execution(shout, tasked).run()
    assert tasked.published() == [["artifact:shout", "status:TASK_STATE_COMPLETED"]]
