"""Processing the stream in the active process: claim what the previous holder left, then read
the polled batches (or, for the webhook, block on the stream), and every few seconds claim what
was left pending longer than :data:`STALE_AFTER` (a read whose reply was lost); one chat's updates
in order, chats concurrently; an entry acknowledged only once processed. An update that met a
Redis failure is tried again; one that failed otherwise (PTB cannot parse it, a handler's bug) is
logged once, kept in the capped dead letters and acknowledged at once."""

from __future__ import annotations

import asyncio
import functools
import json
import logging
from collections.abc import Awaitable, Callable
from typing import Any

from redis.exceptions import RedisError, ResponseError

from tgbot import metrics
from tgbot.ingest.stream import ACKNOWLEDGED_MAX, DEAD_LETTERS_MAX, GROUP, Entry, Ingest, dead_letter_fields

__all__ = ["Consumer", "Process", "ordering_key"]

log = logging.getLogger(__name__)

#: Updates processed at once, at most.
IN_FLIGHT = 256
#: Updates read and not yet processed, at most (the reader waits for room beyond that). One chat's
#: backlog waits for its turn without a processing slot: it never holds up other chats' updates.
READ_AHEAD = 4096
#: Seconds from an update's processing to its acknowledgement (one round trip for a burst).
ACK_DELAY = 0.05
#: Seconds between tries of an update that met a Redis failure: doubling from 0.5 up to this.
RETRY_MAX = 8.0
#: Seconds between two sweeps: the ingest backlog read (``cheat_ingest_backlog``) and the entries
#: left pending claimed, in one round trip.
SWEEP_EVERY = 2.0
#: Seconds an entry delivered to no update in processing may stay pending before a sweep claims it.
STALE_AFTER = 3.0

#: ``process(update, last_try)``: True when handled (acknowledge it), False to try it again later
#: (a Redis failure). It raises ``RedisError`` to be tried again too; any other exception sets the
#: update aside.
Process = Callable[[dict[str, Any], bool], Awaitable[bool]]


def ordering_key(update: dict[str, Any]) -> str:
    """Updates that must be processed in order share this key: those of one chat (a tap's chat is
    its message's), else those of one user (whatever shape the update has)."""
    for kind, body in update.items():
        if not isinstance(body, dict):
            continue
        message = body.get("message")
        chat = body.get("chat") or (message.get("chat") if isinstance(message, dict) else None)
        if isinstance(chat, dict):
            return f"c{chat.get('id')}"
        user = body.get("from")
        return f"u{user.get('id')}" if isinstance(user, dict) else kind
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
        self._ahead = asyncio.Semaphore(READ_AHEAD)
        self._done: list[str] = []  # entries processed, not yet acknowledged
        self._known: set[str] = set()  # entries dispatched, not yet acknowledged
        self._dead: list[dict[str, str]] = []  # dead letters not yet written
        self._sweep_from = "0-0"  # where the next sweep's claim goes on
        self._flusher: asyncio.Task[None] | None = None
        self._claimed = asyncio.Event()  # the previous holder's entries are dispatched

    async def run(self) -> None:
        """Claim what was left pending, then read new entries, until cancelled; a cancel stops the
        updates in processing at once (they stay pending for the next active process)."""
        sweep = asyncio.create_task(self._sweep())
        try:
            await self._read()
        finally:
            tasks = [sweep, *self._chains.values(), *([self._flusher] if self._flusher else [])]
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)

    async def _sweep(self) -> None:
        """Every :data:`SWEEP_EVERY` seconds, in one round trip: set ``cheat_ingest_backlog`` to the
        entries stored and not yet processed, and claim and process those left pending longer than
        :data:`STALE_AFTER` that no update in processing holds (e.g. delivered by a read whose
        reply was lost)."""
        await self._claimed.wait()
        while True:
            await asyncio.sleep(SWEEP_EVERY)
            pipe = self.redis.pipeline(transaction=False)
            pipe.xlen(self.ingest.stream)
            pipe.xautoclaim(self.ingest.stream, GROUP, self.name, int(STALE_AFTER * 1000), self._sweep_from, count=100)
            try:
                backlog, (self._sweep_from, claimed, *_) = await pipe.execute()
            except Exception as error:  # (Redis trouble is told by the lease's watch)
                log.debug("sweep failed: %s", error)
                continue
            metrics.INGEST_BACKLOG.set(backlog)
            stale = [(entry_id, fields) for entry_id, fields in claimed if entry_id not in self._known]
            if stale:
                log.warning("%d update(s) left pending: processing them now", len(stale))
                await self._dispatch_stored(stale)

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
        self._known.difference_update(processed)
        await self._dispatch(entries)
        return True

    async def idle(self) -> None:
        """Wait until every update read so far was processed, and acknowledge them (tests)."""
        while self._chains:
            await asyncio.gather(*list(self._chains.values()), return_exceptions=True)
        await self._flush()

    async def _dispatch_stored(self, entries: list[Any]) -> None:
        """Dispatch entries as redis-py reads them: ``(id, {"update": JSON})``, fields empty when
        the entry was deleted meanwhile (then only acknowledged, as is one that is no update)."""
        parsed: list[Entry] = []
        for entry_id, fields in entries:
            if entry_id in self._known:
                continue
            try:
                update = json.loads(fields["update"]) if fields else None
                if update is not None and not isinstance(update, dict):
                    raise ValueError("no JSON object")
            except (KeyError, ValueError) as error:
                self._set_aside({"update_id": None, "entry": fields}, error)
                update = None
            if update is None:
                self._known.add(entry_id)
                self._done.append(entry_id)
            else:
                parsed.append((entry_id, update))
        await self._dispatch(parsed)

    async def _dispatch(self, entries: list[Entry]) -> None:
        self._known.update(entry_id for entry_id, _ in entries)
        for entry_id, update in entries:
            await self._ahead.acquire()
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
            async with self._room:
                with metrics.update_processing(update):
                    await self._tries(update)
            self._done.append(entry_id)
            if self._flusher is None or self._flusher.done():
                self._flusher = asyncio.create_task(self._flush_soon())
        finally:
            self._ahead.release()

    async def _tries(self, update: dict[str, Any]) -> None:
        """Process ``update``, trying again after Redis failures for :attr:`give_up_after` seconds;
        then, or at once after any other failure, set it aside."""
        loop = asyncio.get_running_loop()
        end, pause, kind = loop.time() + self.give_up_after, 0.5, metrics.update_kind(update)
        while True:
            last = loop.time() >= end
            failure: object = "Redis failed"
            try:
                if await self.process(update, last):
                    return
            except RedisError as error:
                failure = error
            except Exception as error:
                self._set_aside(update, error)
                return
            if last:
                self._set_aside(update, f"Redis failed for {self.give_up_after:.0f} s: {failure}")
                return
            metrics.UPDATE_RETRIES.labels(kind=kind).inc()
            log.debug("update %s: Redis failed; trying again in %.1f s", update.get("update_id"), pause)
            await asyncio.sleep(pause)
            pause = min(pause * 2, RETRY_MAX)

    def _set_aside(self, update: dict[str, Any], error: BaseException | str) -> None:
        """Log the update once with ``error``, count it (``cheat_updates_set_aside_total``) and keep
        it in the dead letters (written with the next acknowledgement); it is acknowledged."""
        trace = error if isinstance(error, BaseException) else None
        log.error("update %s set aside: %s", update.get("update_id"), error, exc_info=trace)
        metrics.UPDATES_SET_ASIDE.labels(kind=metrics.update_kind(update)).inc()
        self._dead.append(dead_letter_fields(update, error))

    async def _flush_soon(self) -> None:
        """Acknowledge within :data:`ACK_DELAY` (one round trip for every update processed meanwhile)."""
        await asyncio.sleep(ACK_DELAY)
        try:
            await self._flush()
        except Exception as error:  # the next flush takes them
            log.warning("acknowledging processed updates failed: %s", error)

    async def _flush(self) -> None:
        """Write the dead letters, acknowledge and delete the processed entries (one round trip)."""
        if not self._done and not self._dead:
            return
        done, self._done, dead, self._dead = self._done, [], self._dead, []
        pipe = self.redis.pipeline(transaction=False)
        for fields in dead:
            pipe.xadd(self.ingest.keys.dead_letters, fields, maxlen=DEAD_LETTERS_MAX, approximate=True)
        if done:
            pipe.xack(self.ingest.stream, GROUP, *done)
            pipe.xdel(self.ingest.stream, *done)
        try:
            await pipe.execute()
        except Exception:
            self._done, self._dead = done + self._done, dead + self._dead  # next time (harmless twice)
            raise
        self._known.difference_update(done)
