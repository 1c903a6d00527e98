"""The one timer path: deadlines are data in Redis, fired by a loop in every bot process.

A table keeps its own deadline (``Table.deadline``, epoch seconds) and the sorted set
``cheat:deadlines`` indexes it. What a deadline does is the table's own business
(:func:`tgbot.model.on_deadline`: lobby expiry, the turn reminder, the automatic move, an AI
seat's move). :func:`run` polls the index; a due game is claimed atomically
with a short lease (so with several processes one fires it, and if that process dies the lease
runs out and another does), then the timeout goes through the same transaction path as a tap
(:meth:`tgbot.store.Store.transact`), where the table checks its own deadline: a stale entry (the
table moved on meanwhile) changes nothing. A deadline that passed while the bot was down fires
once after start.
"""

from __future__ import annotations

import asyncio
import logging
import time

from . import model
from .store import Store
from .sync import Syncer

__all__ = ["run", "fire_due", "LEASE", "POLL"]

log = logging.getLogger(__name__)

#: Seconds a claimed deadline is held by the process firing it.
LEASE = 30.0
#: Longest pause (seconds) between polls of the deadlines index (another process may add one).
POLL = 0.5
#: Shortest pause between polls (seconds).
MIN_POLL = 0.02


async def fire_due(store: Store, syncer: Syncer, now: float | None = None) -> int:
    """Fire every deadline due at ``now`` (default: the clock). Returns how many changed a
    table."""
    now = time.time() if now is None else now
    fired = 0
    for gid, _score in await store.due(now):
        if not await store.claim_deadline(gid, now, LEASE):
            continue  # another process has it
        try:
            done = await store.transact(gid, lambda t: model.on_deadline(t, now), sync=True)
        except model.Refused:
            await store.redis.zrem(store.k_deadlines, gid)  # the game is gone
            continue
        if done.grant is not None:
            syncer.request(gid, done.grant)  # at once: the commit took the lanes' locks
        await store.reschedule(done.change.table)
        if done.change.reply != "stale":
            fired += 1
            before = done.before
            assert before is not None
            log.info("deadline of %s fired: %s (%s due %.3f, turn %d)", gid, done.change.reply, before.deadline_kind, before.deadline or 0.0, before.turn)
    return fired


async def run(store: Store, syncer: Syncer) -> None:
    """Poll and fire deadlines until cancelled; between polls, sleep until the next deadline
    (at most :data:`POLL` seconds, since other processes add deadlines too)."""
    while True:
        pause = POLL
        try:
            await fire_due(store, syncer)
            nxt = await store.next_deadline()
            if nxt is not None:
                pause = min(POLL, max(MIN_POLL, nxt - time.time()))
        except asyncio.CancelledError:
            raise
        except Exception:
            log.exception("timer loop error")
        await asyncio.sleep(pause)
