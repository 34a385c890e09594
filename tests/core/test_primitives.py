"""The event stream and abort primitives (docs/port-decisions.md #9)."""

import asyncio

import pytest
from helpers import asst, settle

from py_agent.ai.abort import AbortController, AbortSignal
from py_agent.ai.event_stream import PENDING, AssistantMessageEventStream, EventStream
from py_agent.ai.events import DoneEvent, ErrorEvent, StartEvent, TextDeltaEvent


async def test_event_stream_delivers_in_push_order_and_resolves_on_terminal_event():
    stream = AssistantMessageEventStream()
    final = asst("done")
    partial = asst("")
    stream.push(StartEvent(partial=partial))
    stream.push(TextDeltaEvent(content_index=0, delta="a", partial=partial))
    stream.push(DoneEvent(reason="stop", message=final))
    stream.push(TextDeltaEvent(content_index=0, delta="late", partial=partial))  # dropped: already done
    events = [event async for event in stream]
    assert [e.type for e in events] == ["start", "text_delta", "done"]
    assert await stream.result() is final


async def test_event_stream_error_event_resolves_with_error_message():
    stream = AssistantMessageEventStream()
    failed = asst("", stop_reason="error", error_message="x")
    stream.push(ErrorEvent(reason="error", error=failed))
    assert await stream.result() is failed
    assert [e.type async for e in stream] == ["error"]


async def test_event_stream_consumer_waits_for_producer():
    stream = AssistantMessageEventStream()
    seen = []

    async def consume():
        async for event in stream:
            seen.append(event.type)

    task = asyncio.create_task(consume())
    await settle()
    assert seen == [] and not task.done()
    stream.push(StartEvent(partial=asst("")))
    await settle()
    assert seen == ["start"]
    stream.push(DoneEvent(reason="stop", message=asst("x")))
    await asyncio.wait_for(task, 1)
    assert seen == ["start", "done"]


async def test_event_stream_end_wakes_consumers_and_first_result_wins():
    stream = EventStream(lambda e: e == "end", lambda e: "from-terminal")
    results = []

    async def consume():
        results.append([e async for e in stream])

    task = asyncio.create_task(consume())
    await settle()
    stream.push("a")
    stream.end("from-end")
    await asyncio.wait_for(task, 1)
    assert results == [["a"]]
    assert await stream.result() == "from-end"
    stream.end("ignored")
    assert await stream.result() == "from-end"

    terminal_first = EventStream(lambda e: e == "end", lambda e: "from-terminal")
    terminal_first.push("end")
    terminal_first.end("later")
    assert await terminal_first.result() == "from-terminal"


async def test_event_stream_result_waits_until_resolved():
    stream = AssistantMessageEventStream()
    waiter = asyncio.create_task(stream.result())
    await settle()
    assert not waiter.done()
    final = asst("x")
    stream.push(DoneEvent(reason="stop", message=final))
    assert await asyncio.wait_for(waiter, 1) is final


def _letters() -> EventStream:
    """A stream whose terminal event is "end" (result: "result:end")."""
    return EventStream(lambda e: e == "end", lambda e: f"result:{e}")


async def test_event_stream_sync_source_is_pulled_as_the_consumer_iterates():
    stream = _letters()
    produced = []

    def source():
        for item in ("a", "b", "end", "never"):
            produced.append(item)
            yield item

    stream.set_source(source())
    assert produced == []  # nothing ahead of the consumer
    iterator = aiter(stream)
    assert await anext(iterator) == "a" and produced == ["a"]
    assert [e async for e in iterator] == ["b", "end"]
    assert produced == ["a", "b", "end"]  # not pulled past the terminal event
    assert await stream.result() == "result:end"


async def test_event_stream_sync_source_ending_or_failing():
    ended = _letters()
    ended.set_source(iter(["a"]))
    assert [e async for e in ended] == ["a"]
    assert ended.done and not ended.has_result

    def broken():
        yield "a"
        raise ValueError("boom")

    failed = _letters()
    failed.set_source(broken())
    assert [e async for e in failed] == ["a"]
    with pytest.raises(ValueError, match="boom"):
        await failed.result()

    # result() alone drives the source (the events stay queued for a later consumer).
    driven = _letters()
    driven.set_source(iter(["a", "end"]))
    assert await driven.result() == "result:end"
    assert [e async for e in driven] == ["a", "end"]


async def test_event_stream_async_source_hands_over_to_a_sync_one():
    stream = _letters()

    async def first():
        await asyncio.sleep(0)
        yield "a"
        stream.set_source(iter(["b", "end"]))

    stream.set_source(first())
    assert stream.poll() is PENDING  # an async source is pulled by iterating only
    assert [e async for e in stream] == ["a", "b", "end"]
    assert await stream.result() == "result:end"


async def test_event_stream_poll_hands_over_ready_events_once_in_order():
    pushed = _letters()
    assert pushed.poll() is PENDING
    pushed.push("a")
    pushed.push("b")
    assert pushed.poll() == "a"
    pushed.push("end")
    assert [e async for e in pushed] == ["b", "end"]
    assert pushed.poll() is PENDING

    pulled = _letters()
    pulled.push("queued")
    pulled.set_source(iter(["a", "b", "end", "never"]))
    iterator = aiter(pulled)
    assert pulled.poll() == "queued"  # queued events first
    assert pulled.poll() == "a"
    assert await anext(iterator) == "b"
    assert pulled.poll() == "end"
    assert pulled.done and await pulled.result() == "result:end"
    assert pulled.poll() is PENDING
    assert [e async for e in iterator] == []


def test_abort_controller_basics():
    controller = AbortController()
    signal = controller.signal
    assert isinstance(signal, AbortSignal)
    assert signal.aborted is False
    assert signal.reason is None
    calls = []
    remove = signal.add_listener(lambda: calls.append("a"))
    signal.add_listener(lambda: calls.append("b"))
    removed = signal.add_listener(lambda: calls.append("removed"))
    removed()
    controller.abort()
    controller.abort()  # only once
    assert signal.aborted is True
    assert signal.reason is not None
    assert calls == ["a", "b"]
    remove()  # harmless after abort
    late = []
    signal.add_listener(lambda: late.append(1))  # called immediately once aborted
    assert late == [1]


def test_abort_reason_is_kept():
    controller = AbortController()
    reason = RuntimeError("why")
    controller.abort(reason)
    assert controller.signal.reason is reason


async def test_abort_signal_wait():
    controller = AbortController()
    waiter = asyncio.create_task(controller.signal.wait())
    await settle()
    assert not waiter.done()
    controller.abort()
    await asyncio.wait_for(waiter, 1)
    await asyncio.wait_for(controller.signal.wait(), 1)  # returns at once when already aborted


@pytest.mark.parametrize("count", [1, 3])
async def test_abort_wakes_every_waiter(count):
    controller = AbortController()
    waiters = [asyncio.create_task(controller.signal.wait()) for _ in range(count)]
    await settle()
    controller.abort()
    await asyncio.wait_for(asyncio.gather(*waiters), 1)
