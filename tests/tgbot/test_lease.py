"""The active process's lease (tgbot/process/lease.py) on fakeredis: one holder at a time, epochs that
only grow, and a lease that lapsed while Redis stalled taken back only when nobody took it since."""

from __future__ import annotations

import time
from types import SimpleNamespace

import fakeredis

from tgbot.process import lease as lease_module
from tgbot.process.lease import Lease

KEYS = ("cheat:1:{b1}:lease", "cheat:1:{b1}:epoch", "cheat:1:{b1}:renewed")


def _redis() -> fakeredis.FakeAsyncRedis:
    return fakeredis.FakeAsyncRedis(decode_responses=True)


async def test_one_holder_and_a_larger_epoch_for_the_next():
    redis = _redis()
    first, second = Lease(redis, KEYS), Lease(redis, KEYS)
    assert await first.try_acquire() and first.held()
    assert not await second.try_acquire() and second.epoch == 0
    epoch = first.epoch
    await first.release()
    assert await second.try_acquire() and second.epoch > epoch


async def test_a_lapsed_lease_is_taken_back_with_its_epoch_when_nobody_took_it():
    redis = _redis()
    lease = Lease(redis, KEYS)
    assert await lease.try_acquire()
    epoch = lease.epoch
    await redis.delete(KEYS[0])  # it lapsed: Redis stalled longer than the lease
    assert await lease.confirm() and lease.epoch == epoch
    assert await redis.get(KEYS[0]) == lease.value


async def test_a_lapsed_lease_another_process_took_is_lost():
    redis = _redis()
    lease, other = Lease(redis, KEYS), Lease(redis, KEYS)
    assert await lease.try_acquire()
    await redis.delete(KEYS[0])
    assert await other.try_acquire()  # a standby took it meanwhile: a new epoch
    await redis.delete(KEYS[0])  # and lost it again
    assert not await lease.confirm() and lease.epoch == 0
    assert not lease.held()
    assert await redis.get(KEYS[0]) is None  # nothing taken for a process that believes it is lost
    assert await lease.try_acquire() and lease.epoch > other.epoch  # as a standby: a new epoch


def clock_ahead(seconds: float) -> SimpleNamespace:
    """A stand-in for the lease module's ``time`` whose monotonic clock is ``seconds`` ahead: the
    process's renewals are late (a pause, a starved CPU)."""
    return SimpleNamespace(monotonic=lambda: time.monotonic() + seconds)


async def test_a_late_renewal_asks_redis_whether_the_lease_is_still_ours(monkeypatch):
    redis = _redis()
    lease, other = Lease(redis, KEYS), Lease(redis, KEYS)
    assert await lease.try_acquire()
    epoch = lease.epoch
    monkeypatch.setattr(lease_module, "time", clock_ahead(3600))
    assert not lease.held()
    assert await lease.active() and lease.epoch == epoch  # still ours in Redis: renewed, same epoch
    monkeypatch.setattr(lease_module, "time", clock_ahead(7200))  # late again, and meanwhile…
    await redis.delete(KEYS[0])
    assert await other.try_acquire()  # …a standby took over
    assert not await lease.active() and lease.epoch == 0
