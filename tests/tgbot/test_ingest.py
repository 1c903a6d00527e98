"""The durable ingest's one write per polled batch (tgbot.ingest.stream, tgbot.ingest.consumer):
stored, read back for the consumer and the processed entries acknowledged in one round trip, only
while the lease is held; a webhook's entry is read by the consumer's blocking read instead."""

from __future__ import annotations

import asyncio

from tgbot.ingest.consumer import Consumer
from tgbot.ingest.stream import GROUP, Ingest
from tgbot.storage.keys import Keys

LEASE_VALUE = "holder-1 1"


def update(update_id: int, text: str = "/start") -> dict:
    return {
        "update_id": update_id,
        "message": {
            "message_id": update_id,
            "date": 0,
            "text": text,
            "chat": {"id": 5, "type": "private"},
            "from": {"id": 5, "is_bot": False, "first_name": "Вера"},
        },
    }


async def ready(redis) -> Ingest:
    ingest = Ingest(redis, Keys("cheat:9").ingest())
    await redis.xgroup_create(ingest.stream, GROUP, id="0", mkstream=True)
    await redis.set(ingest._keys[3], LEASE_VALUE)
    return ingest


async def test_a_batch_is_stored_and_read_back_for_the_consumer_in_one_write(redis):
    ingest = await ready(redis)
    batch = [update(10), update(11, "/rules")]
    entries = await ingest.polled(batch, LEASE_VALUE, 12, "holder-1", [])
    assert [update for _, update in entries] == batch
    assert entries[0][1] is batch[0]  # this batch's updates are not parsed again
    assert await ingest.offset() == 12
    pending = await redis.xpending(ingest.stream, GROUP)
    assert pending["pending"] == 2 and pending["consumers"] == [{"name": "holder-1", "pending": 2}]

    # the next write acknowledges (and deletes) what was processed; a repeated update is skipped
    again = await ingest.polled([update(11, "/rules"), update(12)], LEASE_VALUE, 13, "holder-1", [entries[0][0]])
    assert [update["update_id"] for _, update in again] == [12]
    assert await redis.xlen(ingest.stream) == 2
    assert (await redis.xpending(ingest.stream, GROUP))["pending"] == 2


async def test_nothing_is_written_or_acknowledged_without_the_lease(redis):
    ingest = await ready(redis)
    entries = await ingest.polled([update(10)], LEASE_VALUE, 11, "holder-1", [])
    assert await ingest.polled([update(11)], "holder-0 0", 12, "holder-0", [entries[0][0]]) is None
    assert await redis.xlen(ingest.stream) == 1
    assert (await redis.xpending(ingest.stream, GROUP))["pending"] == 1
    assert await ingest.offset() == 11


async def test_entries_not_read_yet_come_with_the_batch_parsed(redis):
    ingest = await ready(redis)
    await ingest.pushed(update(7, "/help"))  # e.g. stored by a webhook before a switch to polling
    entries = await ingest.polled([update(8)], LEASE_VALUE, 9, "holder-1", [])
    assert [(update["update_id"], update["message"]["text"]) for _, update in entries] == [(7, "/help"), (8, "/start")]


async def test_the_consumer_processes_a_polled_batch_and_acknowledges_it_with_the_next(redis):
    ingest = await ready(redis)
    processed: list[int] = []
    seen = asyncio.Event()

    async def process(data: dict, last_try: bool) -> bool:
        processed.append(data["update_id"])
        seen.set()
        return True

    consumer = Consumer(ingest, redis, "holder-1", process)
    reading = asyncio.create_task(consumer.run())
    try:
        assert await consumer.polled([update(20)], LEASE_VALUE, 21)
        await seen.wait()
        seen.clear()
        assert await consumer.polled([update(21)], LEASE_VALUE, 22)
        await seen.wait()
        await consumer.idle()
        assert processed == [20, 21]
        assert await redis.xlen(ingest.stream) == 0
        assert not await consumer.polled([update(22)], "holder-0 0", 23)
    finally:
        reading.cancel()
        await asyncio.gather(reading, return_exceptions=True)
