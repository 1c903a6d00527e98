"""Deadlines: :class:`tgbot.owner.timers.Timers`, one asyncio timer per game in the active process,
measured on Redis's clock (here a fake one the test sets) and fired through the game's
transaction. Tests wait on the fake syncer's event or await :meth:`Timers.fire` themselves,
never on the wall clock's speed: a timer due now is set with no delay."""

from __future__ import annotations

import asyncio

from redis.exceptions import ConnectionError as RedisConnectionError

from tests.tgbot.helpers import Fenced, as_update, lobby
from tgbot.game.lobby import join, set_seat_lang, start
from tgbot.game.table import Seat, Status
from tgbot.owner.store import Store, UpdateMark
from tgbot.owner.timers import Timers


class FakeClock:
    """A :class:`tgbot.owner.clock.RedisClock` stand-in: ``now()`` is what the test sets."""

    def __init__(self, t: float) -> None:
        self.t = t

    def now(self) -> float:
        return self.t


def wired(store: Store, syncer, clock: FakeClock) -> Timers:
    """Timers over ``store`` as the runner wires them: every commit sets the game's timer."""
    timers = Timers(store, clock, syncer.request)
    store.on_commit = lambda before, after: timers.schedule(after)
    return timers


def delay(timers: Timers, gid: str) -> float:
    """Seconds until game ``gid``'s timer fires (on the loop's clock)."""
    return timers._handles[gid].when() - asyncio.get_running_loop().time()


async def fired(syncer) -> None:
    """Wait until the next timer fire asks for a view sync (every fire does)."""
    await asyncio.wait_for(syncer.requested.wait(), 10)
    syncer.requested.clear()


async def test_an_untouched_lobby_expires_exactly_once(store, syncer):
    clock = FakeClock(1000)
    timers = wired(store, syncer, clock)
    t = lobby(2, gid="L", now=1000, timeout=60)
    await store.claim_chat(t.chat_id, None, "L")
    await store.create(t)  # its commit sets the timer, 60 s ahead on Redis's clock
    assert timers.pending() == 1 and 59 < delay(timers, "L") <= 60
    await timers.fire("L")  # early (a wrong clock elsewhere, a stale timer): nothing happens
    assert (await store.load("L")).version == 1 and (await store.load("L")).status is Status.LOBBY
    clock.t = 1060
    syncer.requests.clear()
    syncer.requested.clear()
    timers.schedule(await store.load("L"))  # due now: fires at once
    await fired(syncer)
    got = await store.load("L")
    assert got.status is Status.CANCELLED and got.ended == "expired" and got.deadline is None
    assert syncer.requests == ["L"] and timers.pending() == 0  # an ended game keeps no timer
    assert await store.chat_game(t.chat_id, None) is None
    # fired again (a second timer, a retry): the table's deadline is gone, nothing changes
    clock.t = 5000
    await asyncio.gather(timers.fire("L"), timers.fire("L"))
    assert (await store.load("L")).version == got.version and timers.pending() == 0
    await timers.close()


async def test_two_fires_of_one_deadline_apply_it_once(store, syncer):
    clock = FakeClock(100)
    timers = wired(store, syncer, clock)
    await store.create(lobby(0, gid="X", now=0, timeout=10))
    await asyncio.gather(timers.fire("X"), timers.fire("X"), timers.fire("X"))  # one at a time, by the game's lock
    got = await store.load("X")
    assert got.ended == "expired" and got.version == 2
    await timers.close()


async def test_a_touched_lobby_moves_its_timer(store, syncer):
    clock = FakeClock(1000)
    timers = wired(store, syncer, clock)
    await store.create(lobby(1, gid="T", now=1000, timeout=60))  # deadline 1060
    assert 59 < delay(timers, "T") <= 60
    clock.t = 1050
    await store.transact("T", lambda t: join(t, Seat(9, "Z"), 1050, 60))  # touched: 1110
    assert timers.pending() == 1 and 59 < delay(timers, "T") <= 60
    # the old timer, had it fired (a timer set before the touch), changes nothing, and the
    # game's timer is set to the table's own deadline again
    clock.t = 1070
    await timers.fire("T")
    t = await store.load("T")
    assert t.status is Status.LOBBY and t.deadline == 1110 and t.version == 2
    assert timers.pending() == 1 and 39 < delay(timers, "T") <= 40
    clock.t = 1110
    await timers.fire("T")
    assert (await store.load("T")).status is Status.CANCELLED and timers.pending() == 0
    await timers.close()


async def test_a_deadline_that_passed_while_no_process_was_active_fires_once_at_the_take_over(store, syncer):
    # the game was written by an earlier active process, which then died; no timer ran since
    await store.create(lobby(3, gid="D", now=1000, timeout=60))
    for takeover in range(2):
        fresh = Store(store.redis)  # the next active process: nothing in memory
        fresh.fence = Fenced(10 + takeover)
        clock = FakeClock(5000 + takeover)
        timers = wired(fresh, syncer, clock)
        syncer.requested.clear()
        # the runner's take-over: every live game's epoch raised, its timer set
        for gid in await fresh.records.live_games():
            await fresh.raise_epoch(gid)
            table = await fresh.load(gid)
            timers.schedule(table)
        if takeover == 0:
            await fired(syncer)
        assert (await fresh.load("D")).ended == "expired" and timers.pending() == 0
        await timers.close()
    assert (await Store(store.redis).load("D")).version == 2  # fired once over both take-overs
    assert syncer.requests == ["D"]


async def test_turn_timers_fire_once_each_and_a_stale_one_changes_nothing(store, syncer):
    clock = FakeClock(0)
    timers = wired(store, syncer, clock)
    await store.create(lobby(3, gid="P", now=0, timeout=10))
    await store.transact("P", lambda t: start(t, 1, False, 4, now=0, turn_timeout=100, ai_delay=0.5))
    t = await store.load("P")
    assert t.deadline == 75 and t.deadline_kind == "remind" and 74 < delay(timers, "P") <= 75
    clock.t = 20  # the lobby's old deadline (10) firing late: stale
    await timers.fire("P")
    assert (await store.load("P")).version == t.version
    # the reminder, then the automatic move, each once though fired twice
    clock.t = 80
    await asyncio.gather(timers.fire("P"), timers.fire("P"))
    assert [n["kind"] for _, n in await store.records.outbox("P")] == ["reminder"]
    assert 19 < delay(timers, "P") <= 20  # the turn's end, 100
    clock.t = 100
    await asyncio.gather(timers.fire("P"), timers.fire("P"))
    got = await store.load("P")
    assert got.action_count == 1 and got.deadline == 175 and got.deadline_kind == "remind"
    assert len((await store.records.record("P"))[1]) == 1
    assert [n["kind"] for _, n in await store.records.outbox("P")] == ["reminder", "automatic_move"]
    assert 74 < delay(timers, "P") <= 75
    # a stale fire (the player acted meanwhile): nothing committed, the timer stays right
    clock.t = 130
    await timers.fire("P")
    assert (await store.load("P")).version == got.version and 44 < delay(timers, "P") <= 45
    await timers.close()


async def test_a_timer_of_a_game_that_is_gone_does_nothing(store, syncer):
    timers = wired(store, syncer, FakeClock(100))
    await timers.fire("gone")
    assert timers.pending() == 0 and await store.load("gone") is None
    await timers.close()


async def test_a_failed_fire_is_tried_again(store, syncer, monkeypatch):
    clock = FakeClock(100)
    timers = wired(store, syncer, clock)
    await store.create(lobby(1, gid="F", now=0, timeout=10))
    real = store.transact
    calls = 0

    async def failing_once(*a, **kw):
        nonlocal calls
        calls += 1
        if calls == 1:
            raise RedisConnectionError("Redis went away")
        return await real(*a, **kw)

    monkeypatch.setattr(store, "transact", failing_once)
    await timers.fire("F")
    assert (await store.load("F")).status is Status.LOBBY
    assert timers.pending() == 1 and 0 < delay(timers, "F") <= 1.0  # again in a second
    await timers.fire("F")
    assert (await store.load("F")).ended == "expired"
    await timers.close()


async def test_close_cancels_every_timer_and_the_fires_in_flight(store, syncer):
    clock = FakeClock(0)
    timers = wired(store, syncer, clock)
    await store.create(lobby(1, gid="A", now=0, timeout=600))
    await store.create(lobby(1, gid="B", now=0, timeout=10))
    assert timers.pending() == 2
    clock.t = 20
    async with store.lock("B"):  # B's fire starts and waits for the game's lock
        timers.schedule(await store.load("B"))
        while not timers._firing:
            await asyncio.sleep(0)
        await timers.close()
        assert timers.pending() == 0 and not timers._firing
    timers.schedule(await store.load("A"))  # closed: no timer is set any more
    assert timers.pending() == 0
    assert (await store.load("B")).status is Status.LOBBY and (await store.load("B")).version == 1


async def test_a_timer_set_while_an_update_is_processed_fires_as_no_update(store, syncer):
    """A timer set by a tap's commit fires later in a context of its own: its commit is not
    recorded as that tap's, so a second delivery of the tap (after a crash) still applies the
    tap's own later commits."""
    clock = FakeClock(0)
    timers = wired(store, syncer, clock)
    await store.create(lobby(3, gid="U", now=0, timeout=10))
    await store.transact("U", lambda t: start(t, 1, False, 4, now=0, turn_timeout=100, ai_delay=0.5))
    t = await store.load("U")
    users = [s.user_id for s in t.seats]
    clock.t = 80  # the reminder is due: the tap's commit sets a timer that fires at once
    mark = UpdateMark(4242)
    await as_update(store, mark).transact("U", lambda t: set_seat_lang(t, users[0], "en"))
    syncer.requested.clear()
    await fired(syncer)  # the reminder, while the tap is still being processed
    assert [n["kind"] for _, n in await store.records.outbox("U")] == ["reminder"]
    assert await store.redis.zrange(store.keys.applied("U"), 0, -1) == ["4242.0"]
    # the process dies before the tap's second commit; the tap is delivered again
    await timers.close()
    other = Store(store.redis)
    mark = UpdateMark(4242)
    await as_update(other, mark).transact("U", lambda t: set_seat_lang(t, users[0], "en"))
    await as_update(other, mark).transact("U", lambda t: set_seat_lang(t, users[1], "fr"))
    got = await other.load("U")
    assert [s.lang for s in got.seats[:2]] == ["en", "fr"]
