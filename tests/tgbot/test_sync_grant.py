"""A commit that takes the view sync's lane locks (``Store.transact(..., sync=True)``) and the
sync that starts from it (:class:`tgbot.store.SyncGrant`): no round trip of its own to start,
a lane held by another process is waited out and taken over if its holder died, and a grant
kept waiting is given back rather than used after its lock may have run out."""

from __future__ import annotations

import asyncio
import itertools
import time
from types import SimpleNamespace

import pytest

from tgbot.model import Change
from tgbot.store import LOCK_MS, SYNC_LANES
from tgbot.ratelimit import Throttled
from tgbot.sync import Syncer
from tests.tgbot.helpers import ai_players, ai_step, started

GROUP = -100  # helpers.lobby's chat


class FakeBot:
    """The Bot methods the sync calls; records (method, chat id)."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, int]] = []
        self._ids = itertools.count(100)

    async def send_message(self, chat_id, text, **kw):
        self.calls.append(("send", chat_id))
        return SimpleNamespace(message_id=next(self._ids))

    async def edit_message_text(self, text, chat_id=None, message_id=None, **kw):
        self.calls.append(("edit", chat_id))
        return True

    async def delete_message(self, chat_id, message_id, **kw):
        self.calls.append(("delete", chat_id))
        return True


async def _game(store, gid: str = "g1"):
    table, _ = started(4, gid=gid)
    assert await store.create(table)
    for seat in table.seats:
        await store.set_dm(seat.user_id, True)
    return ai_players(4, 1)


def _syncer(store) -> tuple[Syncer, FakeBot, list[str]]:
    """A syncer whose lock scripts (``acquired``: their lock keys) and plain game reads
    (``"snapshot"`` entries) are recorded."""
    bot = FakeBot()
    syncer = Syncer(bot, store, lambda: "cheat_bot")  # type: ignore[arg-type]
    acquired: list[str] = []
    plain_acquire, plain_snapshot = syncer._acquire, store.snapshot

    async def acquire(keys, args):
        acquired.append(keys[0])
        return await plain_acquire(keys=keys, args=args)

    async def snapshot(gid):
        acquired.append("snapshot")
        return await plain_snapshot(gid)

    syncer._acquire = acquire  # type: ignore[method-assign]
    store.snapshot = snapshot  # type: ignore[method-assign]
    return syncer, bot, acquired


async def _locks(store, gid: str) -> list[str | None]:
    return [await store.redis.get(store.k_sync(gid, lane)[0]) for lane in SYNC_LANES]


async def test_a_commit_takes_both_lanes_and_its_sync_starts_without_a_round_trip(store):
    players = await _game(store)
    done = await store.transact("g1", lambda t: ai_step(t, players), sync=True)
    grant = done.grant
    assert grant is not None and grant.busy == {"dm": None, "group": None}
    assert await _locks(store, "g1") == [grant.token, grant.token]
    assert grant.snapshot.table == done.change.table
    syncer, bot, acquired = _syncer(store)
    syncer.request("g1", grant)
    await syncer.idle()
    assert acquired == []  # both lanes started from the commit's locks and its read
    assert ("send", GROUP) in bot.calls  # the board
    assert any(chat > 0 for _, chat in bot.calls)  # the panels
    assert await _locks(store, "g1") == [None, None]  # released
    tg = await store.tg_get("g1")
    assert tg.get("b") and all(tg.get(f"p{seat}") for seat in range(4))  # recorded with the releases


async def test_a_change_that_writes_nothing_takes_no_lock(store):
    await _game(store)
    done = await store.transact("g1", lambda t: Change(t), sync=True)
    assert done.grant is None
    assert await _locks(store, "g1") == [None, None]


async def test_a_lane_whose_holder_died_is_taken_over_when_its_lock_runs_out(store):
    players = await _game(store)
    dead = store.k_sync("g1", "group")[0]
    await store.redis.set(dead, "another-process", px=300)
    done = await store.transact("g1", lambda t: ai_step(t, players), sync=True)
    grant = done.grant
    assert grant is not None and grant.busy["dm"] is None
    assert 0 < grant.busy["group"] <= 300  # marked dirty for the holder, which never serves it
    assert await store.redis.exists(store.k_sync("g1", "group")[1])
    syncer, bot, acquired = _syncer(store)
    t0 = time.monotonic()
    syncer.request("g1", grant)
    await syncer.idle()
    assert time.monotonic() - t0 >= 0.25  # it waited the holder's lock out
    assert acquired == [dead]  # then looked again and took the lane
    assert ("send", GROUP) in bot.calls
    assert await _locks(store, "g1") == [None, None]


@pytest.mark.parametrize("age, fresh_read", [(2.0, True), (LOCK_MS / 1000, False)])
async def test_a_grant_kept_waiting(store, age, fresh_read):
    # 2 s: still ours, used with the game read again; LOCK_MS: it may have run out, so it is
    # given back and the lane taken anew
    players = await _game(store)
    done = await store.transact("g1", lambda t: ai_step(t, players), sync=True)
    assert done.grant is not None
    syncer, bot, acquired = _syncer(store)
    syncer.request("g1", done.grant._replace(at=time.monotonic() - age))
    await syncer.idle()
    if fresh_read:
        assert acquired == ["snapshot", "snapshot"]
    else:
        assert acquired == [store.k_sync("g1", lane)[0] for lane in SYNC_LANES]  # the lock script reads the game with the lock
    assert ("send", GROUP) in bot.calls
    assert await _locks(store, "g1") == [None, None]


async def test_after_a_move_the_private_lane_reads_nothing_from_redis(store):
    # Everything the private lane decides on comes with the commit's grant: it claims the
    # panels it edits and releases its lock, and reads neither the tg hash nor users' flags.
    players = await _game(store)
    syncer, bot, acquired = _syncer(store)

    async def move() -> None:
        done = await store.transact("g1", lambda t: ai_step(t, players), sync=True)
        syncer.request("g1", done.grant)
        await syncer.idle()

    await move()  # the first panels are sent, and the scripts loaded
    edits_before = len(bot.calls)
    issued: list[str] = []  # the dm lane's commands (a pipeline as "PIPELINE")
    plain_command, plain_pipeline = store.redis.execute_command, store.redis.pipeline

    def dm_lane() -> bool:
        task = asyncio.current_task()
        return task is not None and task.get_name().startswith("sync-dm-")

    async def execute_command(*args, **kw):
        if dm_lane():
            issued.append(str(args[0]).upper())
        return await plain_command(*args, **kw)

    def pipeline(*args, **kw):
        if dm_lane():
            issued.append("PIPELINE")
        return plain_pipeline(*args, **kw)

    store.redis.execute_command = execute_command  # type: ignore[method-assign]
    store.redis.pipeline = pipeline  # type: ignore[method-assign]
    for _ in range(12):
        await move()
    assert acquired == []
    assert set(issued) <= {"EVALSHA", "SCRIPT LOAD"}  # scripts only: the claims and the releases
    panel_edits = sum(m == "edit" and chat > 0 for m, chat in bot.calls[edits_before:])
    assert panel_edits > 0
    # one release per run, one claim per panel edit (a script's first call is answered
    # NOSCRIPT, loaded and made again)
    assert issued.count("EVALSHA") - issued.count("SCRIPT LOAD") == 12 + panel_edits


async def test_close_stops_a_lane_sleeping_out_a_rate_limit_and_gives_its_lock_back(store):
    # a bot stopping while a group waits for its rate-limit window: the lane is stopped, not
    # left pending for the event loop to destroy, and its lock is free for the next start
    players = await _game(store)
    syncer, bot, _ = _syncer(store)
    plain_send = bot.send_message

    async def send_message(chat_id, text, **kw):
        if chat_id < 0:
            raise Throttled(30)
        return await plain_send(chat_id, text, **kw)

    bot.send_message = send_message  # type: ignore[method-assign]
    done = await store.transact("g1", lambda t: ai_step(t, players), sync=True)
    syncer.request("g1", done.grant)
    for _ in range(100):
        await asyncio.sleep(0.01)
        if ("g1", "dm") not in syncer._running:
            break
    assert list(syncer._running) == [("g1", "group")]  # asleep for 30 s
    await asyncio.wait_for(syncer.close(grace=0.05), 2)
    assert syncer._running == {}
    assert await _locks(store, "g1") == [None, None]
    syncer.request("g1")  # after close: ignored
    assert syncer._running == {}
