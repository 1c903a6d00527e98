"""The durable ingest's one write per polled batch (tgbot.ingest.stream, tgbot.ingest.consumer):
stored, read back for the consumer and the processed entries acknowledged in one round trip, only
while the lease is held; a webhook's entry is read by the consumer's blocking read instead."""

from __future__ import annotations

import asyncio
import json
import secrets
import time

from redis.exceptions import ConnectionError as RedisConnectionError

from tests.tgbot.helpers import lobby
from tgbot import metrics
from tgbot.game import lobby as game_lobby
from tgbot.game.table import Seat
from tgbot.ingest import consumer as consumer_module, stream
from tgbot.ingest.consumer import Consumer, ordering_key
from tgbot.ingest.stream import GROUP, Ingest
from tgbot.owner import store as store_module
from tgbot.owner.store import UpdateMark
from tgbot.storage.keys import Keys

LEASE_VALUE = "holder-1 1"
#: The stream, the recent ids, the offset, the lease, the dead letters (and the last reply).
KEYS = Keys("cheat:9").ingest()


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
    ingest = Ingest(redis, KEYS)
    await redis.xgroup_create(ingest.stream, GROUP, id="0", mkstream=True)
    await redis.set(KEYS[3], LEASE_VALUE)
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


# -- issue 25: a resent write, poison updates, an update-id reset ---------------------------------


async def test_a_resent_write_returns_what_the_first_took(redis, monkeypatch):
    """redis-py sends the script again when its reply was lost: the second run stores nothing and
    hands the consumer the same entries (else they sit pending until a take-over)."""
    ingest = await ready(redis)
    await ingest.pushed(update(6, "/help"))  # an entry not of the batch, read back as JSON
    monkeypatch.setattr(secrets, "token_hex", lambda size: "call-1")
    first = await ingest.polled([update(7)], LEASE_VALUE, 8, "holder-1", [])
    again = await ingest.polled([update(7)], LEASE_VALUE, 8, "holder-1", [])
    assert [(entry_id, data["update_id"]) for entry_id, data in again] == [
        (entry_id, data["update_id"]) for entry_id, data in first
    ]
    assert [data["update_id"] for _, data in first] == [6, 7]
    assert await redis.xlen(ingest.stream) == 2
    monkeypatch.setattr(secrets, "token_hex", lambda size: "call-2")
    assert await ingest.polled([update(7)], LEASE_VALUE, 8, "holder-1", []) == []  # a new call: nothing new


async def test_an_update_that_is_no_valid_unicode_is_set_aside_at_once(redis, caplog):
    ingest = await ready(redis)
    before = metrics.dead_letters()
    entries = await ingest.polled([update(30, "/start\ud800"), update(31, "/rules")], LEASE_VALUE, 32, "holder-1", [])
    assert [data["update_id"] for _, data in entries] == [31]  # the batch goes on
    (_, dead), *more = await redis.xrange(KEYS[4])
    assert not more and dead["update_id"] == "30" and "surrogates not allowed" in dead["error"]
    assert json.loads(dead["update"])["message"]["text"] == "/start\ud800"
    assert metrics.dead_letters() == before + 1
    assert [r.getMessage() for r in caplog.records if "30" in r.getMessage()] == [
        f"update 30 set aside: {dead['error'].partition(': ')[2]}"
    ]


async def test_the_recent_ids_are_trimmed_by_arrival_so_a_lower_id_is_kept(redis):
    """After Telegram restarts its ids lower, the new ids are the newest arrivals: kept, and a
    second delivery is skipped (trimmed by id, the lowest went at once)."""
    ingest = await ready(redis)
    now_ms = int(time.time() * 1000)
    await redis.zadd(KEYS[1], {str(900_000 + i): now_ms - 60_000 + i for i in range(stream.RECENT_UPDATES)})
    assert len(await ingest.polled([update(5)], LEASE_VALUE, 6, "holder-1", [])) == 1
    assert await ingest.polled([update(5)], LEASE_VALUE, 6, "holder-1", []) == []
    assert await redis.zcard(KEYS[1]) == stream.RECENT_UPDATES
    assert await redis.zscore(KEYS[1], "900000") is None  # the oldest arrival went


async def test_an_id_stored_more_than_a_day_ago_is_a_new_update(redis):
    """After a quiet week Telegram's ids may restart on ids seen before: no repeated delivery
    comes after 24 hours, so those are new updates."""
    ingest = await ready(redis)
    now_ms = int(time.time() * 1000)
    await redis.zadd(KEYS[1], {"5": now_ms - 8 * 24 * 3600 * 1000, "6": now_ms - 3600 * 1000})
    assert [
        data["update_id"] for _, data in await ingest.polled([update(5), update(6)], LEASE_VALUE, 7, "holder-1", [])
    ] == [5]


async def test_a_game_keeps_its_marks_by_arrival_so_a_lower_update_id_is_applied_once(store):
    await store.create(lobby(0, gid="g"))
    for i in range(store_module.RECENT_UPDATES):
        await store.transact("g", lambda t, i=i: game_lobby.set_lang(t, ("en", "ru")[i % 2]), UpdateMark(900_000 + i))
    join = lambda t: game_lobby.join(t, Seat(10, "Вера"), 1000, 900)  # noqa: E731
    assert (await store.transact("g", join, UpdateMark(5))).change.reply == "joined"
    store.forget_tables()  # (a take-over: the marks are read from Redis)
    assert (await store.transact("g", join, UpdateMark(5))).change.reply == "ok"
    assert (await store.load("g")).version == store_module.RECENT_UPDATES + 2


def test_the_ordering_key_takes_any_shape():
    assert ordering_key({"update_id": 1, "callback_query": {"id": "1", "from": 42, "data": "x"}}) == "callback_query"
    assert ordering_key({"update_id": 1, "message": {"chat": "x", "from": {"id": 3}}}) == "u3"
    assert ordering_key({"update_id": 1, "callback_query": {"message": "x", "from": {"id": 3}}}) == "u3"


async def _consuming(redis, process, **settings):
    """A running consumer (its previous holder's entries claimed) and its task."""
    ingest = await ready(redis)
    consumer = Consumer(ingest, redis, "holder-1", process, **settings)
    task = asyncio.create_task(consumer.run())
    await asyncio.wait_for(consumer._claimed.wait(), 10)
    return ingest, consumer, task


async def test_a_poison_update_is_set_aside_at_once_and_its_chat_goes_on(redis, caplog):
    processed: list[int] = []

    async def process(data: dict, last_try: bool) -> bool:
        if data["update_id"] == 40:
            raise TypeError("telegram._user.User() argument after ** must be a mapping, not int")
        processed.append(data["update_id"])
        return True

    ingest, consumer, task = await _consuming(redis, process)
    before = metrics.dead_letters()
    try:
        assert await consumer.polled([update(40), update(41, "/rules")], LEASE_VALUE, 42)
        await asyncio.wait_for(consumer.idle(), 10)
        assert processed == [41]
        (_, dead), *more = await redis.xrange(KEYS[4])
        assert not more and dead["update_id"] == "40" and dead["error"].startswith("TypeError: telegram._user")
        assert json.loads(dead["update"]) == update(40)
        assert metrics.dead_letters() == before + 1
        assert await redis.xlen(ingest.stream) == 0  # both acknowledged
        assert len([r for r in caplog.records if "update 40" in r.getMessage()]) == 1
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)


async def test_only_a_redis_failure_is_tried_again(redis):
    tries: list[int] = []

    async def process(data: dict, last_try: bool) -> bool:
        tries.append(data["update_id"])
        if len(tries) == 1:
            raise RedisConnectionError("Connection closed by server.")
        return True

    _, consumer, task = await _consuming(redis, process)
    try:
        assert await consumer.polled([update(50)], LEASE_VALUE, 51)
        await asyncio.wait_for(consumer.idle(), 10)
        assert tries == [50, 50]
        assert await redis.xlen(KEYS[4]) == 0
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)


async def test_an_entry_left_pending_is_processed_while_the_consumer_runs(redis, monkeypatch):
    """A read whose reply was lost leaves its entries pending for this consumer: a sweep claims
    them after a few seconds; one in processing is never handed out twice."""
    monkeypatch.setattr(consumer_module, "SWEEP_EVERY", 0.05, raising=False)
    monkeypatch.setattr(consumer_module, "STALE_AFTER", 0.1, raising=False)
    started, release = asyncio.Event(), asyncio.Event()
    processed: list[int] = []

    async def process(data: dict, last_try: bool) -> bool:
        processed.append(data["update_id"])
        started.set()
        await release.wait()
        return True

    ingest, consumer, task = await _consuming(redis, process)
    try:
        await ingest.pushed(update(60))
        # the read that delivered it to this consumer, its reply lost
        await redis.xreadgroup(GROUP, "holder-1", {ingest.stream: ">"}, count=1)
        await asyncio.wait_for(started.wait(), 10)
        entry_id = (await redis.xrange(ingest.stream))[0][0]

        async def claimed_again(times: int) -> None:  # sweeps went over it while in processing
            while (await redis.xpending_range(ingest.stream, GROUP, entry_id, entry_id, 1))[0][
                "times_delivered"
            ] < times:
                await asyncio.sleep(0.02)

        await asyncio.wait_for(claimed_again(4), 10)
        release.set()
        await asyncio.wait_for(consumer.idle(), 10)
        assert processed == [60]
        assert await redis.xlen(ingest.stream) == 0
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
