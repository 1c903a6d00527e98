"""Processing the stream in the active process: claim what the previous holder left, then read
the polled batches (or, for the webhook, block on the stream); one chat's updates in order,
chats concurrently; an entry acknowledged only once processed, one that met a Redis failure tried again."""

from __future__ import annotations

import asyncio
import contextlib
import functools
import json
import logging
from collections.abc import Awaitable, Callable
from typing import Any

from redis.exceptions import ResponseError

from tgbot import metrics
from tgbot.ingest.stream import ACKNOWLEDGED_MAX, GROUP, Entry, Ingest

__all__ = ["Consumer", "Process", "ordering_key"]

log = logging.getLogger(__name__)

#: Updates processed at once, at most (the reader waits for room beyond that).
IN_FLIGHT = 256
#: Seconds from an update's processing to its acknowledgement (one round trip for a burst).
ACK_DELAY = 0.05
#: Seconds between tries of an update that met a Redis failure: doubling from 0.5 up to this.
RETRY_MAX = 8.0
#: Seconds between two readings of the ingest backlog (``cheat_ingest_backlog``; one XLEN).
BACKLOG_EVERY = 5.0

#: ``process(update, last_try)``: True when handled (acknowledge it), False to try it again later.
Process = Callable[[dict[str, Any], bool], Awaitable[bool]]


def ordering_key(update: dict[str, Any]) -> str:
    """Updates that must be processed in order share this key: those of one chat (a tap's chat is
    its message's), else those of one user."""
    for kind, body in update.items():
        if not isinstance(body, dict):
            continue
        chat = body.get("chat") or (body.get("message") or {}).get("chat")
        if chat:
            return f"c{chat.get('id')}"
        user = body.get("from")
        return f"u{user.get('id')}" if user else kind
    return "other"


class Consumer:
    """Reads the stream as ``name`` and processes each update once. ``reader``: a client for the
    blocking reads (its own connection); ``give_up_after``: seconds of tries per update."""

    def __init__(self, ingest: Ingest, reader: Any, name: str, process: Process, give_up_after: float = 120.0) -> None:
        self.ingest = ingest
        self.redis = ingest.redis
        self.reader = reader
        self.name = name
        self.process = process
        self.give_up_after = give_up_after
        self._chains: dict[str, asyncio.Task[None]] = {}  # ordering key -> its newest update's task
        self._room = asyncio.Semaphore(IN_FLIGHT)
        self._done: list[str] = []  # entries processed, not yet acknowledged
        self._flusher: asyncio.Task[None] | None = None
        self._claimed = asyncio.Event()  # the previous holder's entries are dispatched

    async def run(self) -> None:
        """Claim what was left pending, then read new entries, until cancelled; a cancel stops the
        updates in processing at once (they stay pending for the next active process)."""
        backlog = asyncio.create_task(self._measure_backlog())
        try:
            await self._read()
        finally:
            tasks = [backlog, *self._chains.values(), *([self._flusher] if self._flusher else [])]
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)

    async def _measure_backlog(self) -> None:
        """Set ``cheat_ingest_backlog`` to the entries stored and not yet processed, now and then."""
        while True:
            with contextlib.suppress(Exception):  # (Redis trouble is told by the lease's watch)
                metrics.INGEST_BACKLOG.set(await self.redis.xlen(self.ingest.stream))
            await asyncio.sleep(BACKLOG_EVERY)

    async def _read(self) -> None:
        try:
            await self.redis.xgroup_create(self.ingest.stream, GROUP, id="0", mkstream=True)
        except ResponseError as error:
            if "BUSYGROUP" not in str(error):
                raise
        start = "0-0"
        while True:  # the previous holder's entries in flight
            start, claimed, *_ = await self.redis.xautoclaim(self.ingest.stream, GROUP, self.name, 0, start, count=500)
            await self._dispatch_stored(claimed)
            if start in ("0-0", b"0-0"):
                break
        self._claimed.set()
        while True:
            await self._flush()
            got = await self.reader.xreadgroup(GROUP, self.name, {self.ingest.stream: ">"}, count=100, block=1000)
            for _stream, entries in got or ():
                await self._dispatch_stored(entries)

    async def polled(self, batch: list[dict[str, Any]], lease_value: str, offset: int) -> bool:
        """Store and process a ``getUpdates`` batch with the offset that confirms it, while the lease
        is ``lease_value`` (False when it is not: nothing written), after the previous holder's entries."""
        await self._claimed.wait()
        processed, self._done = self._done[:ACKNOWLEDGED_MAX], self._done[ACKNOWLEDGED_MAX:]
        try:
            entries = await self.ingest.polled(batch, lease_value, offset, self.name, processed)
        except BaseException:
            self._done = processed + self._done  # acknowledged with a later write
            raise
        if entries is None:
            self._done = processed + self._done
            return False
        await self._dispatch(entries)
        return True

    async def idle(self) -> None:
        """Wait until every update read so far was processed, and acknowledge them (tests)."""
        while self._chains:
            await asyncio.gather(*list(self._chains.values()), return_exceptions=True)
        await self._flush()

    async def _dispatch_stored(self, entries: list[Any]) -> None:
        """Dispatch entries as redis-py reads them: ``(id, {"update": JSON})``, fields empty when
        the entry was deleted meanwhile."""
        for entry_id, fields in entries:
            if not fields:
                self._done.append(entry_id)
        await self._dispatch([(entry_id, json.loads(fields["update"])) for entry_id, fields in entries if fields])

    async def _dispatch(self, entries: list[Entry]) -> None:
        for entry_id, update in entries:
            await self._room.acquire()
            key = ordering_key(update)
            task = asyncio.create_task(self._one(self._chains.get(key), entry_id, update), name=f"update-{entry_id}")
            self._chains[key] = task
            task.add_done_callback(functools.partial(self._forget, key))

    def _forget(self, key: str, task: asyncio.Task[None]) -> None:
        if self._chains.get(key) is task:
            del self._chains[key]

    async def _one(self, previous: asyncio.Task[None] | None, entry_id: str, update: dict[str, Any]) -> None:
        """Process one update after the previous one of its chat, trying again after failures."""
        try:
            if previous is not None:
                await asyncio.gather(previous, return_exceptions=True)
            with metrics.update_processing(update):
                await self._tries(update)
            self._done.append(entry_id)
            if self._flusher is None or self._flusher.done():
                self._flusher = asyncio.create_task(self._flush_soon())
        finally:
            self._room.release()

    async def _tries(self, update: dict[str, Any]) -> None:
        """Process ``update``, trying again after failures for :attr:`give_up_after` seconds; then
        set it aside (acknowledged, not applied: counted in ``cheat_updates_set_aside_total``)."""
        loop = asyncio.get_running_loop()
        end, pause, kind = loop.time() + self.give_up_after, 0.5, metrics.update_kind(update)
        while True:
            last = loop.time() >= end
            try:
                if await self.process(update, last):
                    return
            except Exception:
                log.exception("update %s failed", update.get("update_id"))
            if last:
                metrics.UPDATES_SET_ASIDE.labels(kind=kind).inc()
                log.warning("update %s set aside: it failed for %.0f s", update.get("update_id"), self.give_up_after)
                return
            metrics.UPDATE_RETRIES.labels(kind=kind).inc()
            log.debug("update %s: Redis failed; trying again in %.1f s", update.get("update_id"), pause)
            await asyncio.sleep(pause)
            pause = min(pause * 2, RETRY_MAX)

    async def _flush_soon(self) -> None:
        """Acknowledge within :data:`ACK_DELAY` (one round trip for every update processed meanwhile)."""
        await asyncio.sleep(ACK_DELAY)
        try:
            await self._flush()
        except Exception as error:  # the next flush takes them
            log.warning("acknowledging processed updates failed: %s", error)

    async def _flush(self) -> None:
        """Acknowledge and delete the processed entries (one round trip)."""
        if not self._done:
            return
        done, self._done = self._done, []
        pipe = self.redis.pipeline(transaction=False)
        pipe.xack(self.ingest.stream, GROUP, *done)
        pipe.xdel(self.ingest.stream, *done)
        try:
            await pipe.execute()
        except Exception:
            self._done = done + self._done  # next time; processing them again is harmless
            raise
