"""Durable ingest: every update is kept in Redis before Telegram is told it arrived.

DESIGN.md, Processes. Updates go into one Redis Stream per bot, ``<prefix>:{b<bot>}:updates``
(each entry one field, ``update``: the update's JSON as Telegram sent it):

- long polling (:class:`Poller`, the active process only): a batch from ``getUpdates`` is
  written, together with the next offset, by one script that first checks that this process
  still holds the lease; only then does the next ``getUpdates`` confirm the batch to Telegram.
  A paused former holder can therefore neither ingest nor confirm;
- webhook (:mod:`tgbot.process.web`, every process): the update is written before the HTTP answer.

The same script skips an update whose id it has seen among the last :data:`RECENT_UPDATES`
(Telegram delivers a webhook again when our answer was lost).

:class:`Consumer` (the active process only) reads the stream through a consumer group: at
take-over it first claims every entry that was read and not acknowledged (the previous holder's
work in flight), then reads new ones. Entries of one chat are processed one after another, in
order; different chats run concurrently. An entry is acknowledged (and deleted) only once it was
processed; one whose processing met a Redis failure is tried again, so an update is never
dropped. Applying it twice is prevented where it matters, by the game's commit
(:mod:`tgbot.owner.store`), which records the update ids it applied.
"""

from __future__ import annotations

import asyncio
import contextvars
import json
import logging
import warnings
from collections.abc import Awaitable, Callable
from typing import Any

from redis.exceptions import ResponseError
from telegram import Update
from telegram.error import BadRequest, Conflict, NetworkError
from telegram.warnings import PTBUserWarning

from tgbot.process.lease import Lease

__all__ = ["Ingest", "Consumer", "Poller", "Outcome", "outcome", "ordering_key", "RECENT_UPDATES", "GROUP"]

log = logging.getLogger(__name__)

#: Update ids remembered to skip a repeated delivery.
RECENT_UPDATES = 10_000
#: The consumer group every active process reads the stream with.
GROUP = "bot"
#: Updates processed at once, at most (the reader waits for room beyond that).
IN_FLIGHT = 256
#: Seconds from an update's processing to its acknowledgement (which covers every update processed
#: meanwhile: one round trip for a burst).
ACK_DELAY = 0.05
#: Seconds between tries of an update whose processing met a Redis failure: doubling up to this.
RETRY_MAX = 8.0

# KEYS: 1 the stream, 2 the recent update ids (sorted set), 3 the next getUpdates offset, 4 the
# lease. ARGV: 1 the lease's value as held ('' no check: webhook), 2 the new offset ('' none),
# then update id and JSON pairs. Returns the number of entries added, or -1 (the lease is not
# held: nothing written).
_INGEST = f"""
if ARGV[1] ~= '' and redis.call('GET', KEYS[4]) ~= ARGV[1] then return -1 end
local added = 0
for i = 3, #ARGV, 2 do
  if not redis.call('ZSCORE', KEYS[2], ARGV[i]) then
    redis.call('ZADD', KEYS[2], ARGV[i], ARGV[i])
    redis.call('XADD', KEYS[1], '*', 'update', ARGV[i + 1])
    added = added + 1
  end
end
if redis.call('ZCARD', KEYS[2]) > {RECENT_UPDATES} then
  redis.call('ZREMRANGEBYRANK', KEYS[2], 0, -{RECENT_UPDATES + 1})
end
if ARGV[2] ~= '' then redis.call('SET', KEYS[3], ARGV[2]) end
return added
"""


class Outcome:
    """How the processing of one update went, filled by the error handler
    (:func:`tgbot.handlers.common.on_error`): ``retry`` when it met a failure of Redis (try again),
    ``fenced`` when a commit found a newer active process."""

    def __init__(self) -> None:
        self.retry = False
        self.fenced = False


#: The :class:`Outcome` of the update processed in this task.
outcome: contextvars.ContextVar[Outcome | None] = contextvars.ContextVar("outcome", default=None)


class Ingest:
    """Writing updates to the stream. ``keys``: the stream, the recent ids, the offset, the
    lease (one Cluster slot: they share the tag ``{b<bot>}``)."""

    def __init__(self, redis: Any, keys: tuple[str, str, str, str]) -> None:
        self.redis = redis
        self.stream, self.recent, self.offset_key, self.lease_key = keys
        self._ingest = redis.register_script(_INGEST)

    async def polled(self, updates: list[dict[str, Any]], lease_value: str, offset: int) -> bool:
        """Store a ``getUpdates`` batch and the offset that confirms it, only while the lease
        is ``lease_value``. False when the lease is not held (nothing written)."""
        got = await self._ingest(keys=self._keys(), args=[lease_value, offset, *_pairs(updates)])
        return int(got) >= 0

    async def pushed(self, update: dict[str, Any]) -> None:
        """Store one update received by the webhook (any process may)."""
        await self._ingest(keys=self._keys(), args=["", "", *_pairs([update])])

    async def offset(self) -> int:
        """The ``getUpdates`` offset after the last stored batch (0 before the first)."""
        return int(await self.redis.get(self.offset_key) or 0)

    def _keys(self) -> list[str]:
        return [self.stream, self.recent, self.offset_key, self.lease_key]


def _pairs(updates: list[dict[str, Any]]) -> list[Any]:
    out: list[Any] = []
    for update in updates:
        out += [int(update["update_id"]), json.dumps(update, ensure_ascii=False, separators=(",", ":"))]
    return out


def ordering_key(update: dict[str, Any]) -> str:
    """The updates that must be processed in order share this key: those of one chat (a tap's
    chat is the one its message is in), else those of one user."""
    for kind, body in update.items():
        if not isinstance(body, dict):
            continue
        chat = body.get("chat") or (body.get("message") or {}).get("chat")
        if chat:
            return f"c{chat.get('id')}"
        user = body.get("from")
        if user:
            return f"u{user.get('id')}"
        return kind
    return "other"


#: ``process(update, last_try)``: True when the update was handled (acknowledge it), False when
#: it met a failure worth another try (Redis unreachable). ``last_try``: no further try follows.
Process = Callable[[dict[str, Any], bool], Awaitable[bool]]


class Consumer:
    """Reads the stream as ``name`` in :data:`GROUP` and processes each update once."""

    def __init__(self, ingest: Ingest, reader: Any, name: str, process: Process, give_up_after: float = 120.0) -> None:
        self.ingest = ingest
        self.redis = ingest.redis
        self.reader = reader  # a client for the blocking reads (its own connection)
        self.name = name
        self.process = process
        self.give_up_after = give_up_after
        self._chains: dict[str, asyncio.Task[None]] = {}
        self._room = asyncio.Semaphore(IN_FLIGHT)
        self._done: list[str] = []
        self._flusher: asyncio.Task[None] | None = None

    async def run(self) -> None:
        """Claim what was left pending, then read new entries, until cancelled; a cancel stops
        every update being processed at once (they stay pending for the next active process)."""
        try:
            await self._read()
        finally:
            chains = list(self._chains.values())
            if self._flusher is not None:
                chains.append(self._flusher)
            for task in chains:
                task.cancel()
            await asyncio.gather(*chains, return_exceptions=True)

    async def _read(self) -> None:
        await self._ensure_group()
        start = "0-0"
        while True:  # the previous holder's entries in flight
            start, claimed, *_ = await self.redis.xautoclaim(self.ingest.stream, GROUP, self.name, 0, start, count=500)
            await self._dispatch(claimed)
            if start in ("0-0", b"0-0"):
                break
        while True:
            await self._flush()
            got = await self.reader.xreadgroup(GROUP, self.name, {self.ingest.stream: ">"}, count=100, block=1000)
            for _stream, entries in got or ():
                await self._dispatch(entries)

    async def idle(self) -> None:
        """Wait until every update read so far was processed, and acknowledge them (tests)."""
        while self._chains:
            await asyncio.gather(*list(self._chains.values()), return_exceptions=True)
        await self._flush()

    async def _ensure_group(self) -> None:
        try:
            await self.redis.xgroup_create(self.ingest.stream, GROUP, id="0", mkstream=True)
        except ResponseError as e:
            if "BUSYGROUP" not in str(e):
                raise

    async def _dispatch(self, entries: list[Any]) -> None:
        for entry_id, fields in entries:
            if not fields:  # deleted meanwhile
                self._done.append(entry_id)
                continue
            update = json.loads(fields["update"])
            await self._room.acquire()
            key = ordering_key(update)
            previous = self._chains.get(key)
            task = asyncio.create_task(self._one(previous, entry_id, update))
            self._chains[key] = task
            task.add_done_callback(lambda t, key=key: self._chains.pop(key, None) if self._chains.get(key) is t else None)

    async def _one(self, previous: asyncio.Task[None] | None, entry_id: str, update: dict[str, Any]) -> None:
        try:
            if previous is not None:
                await asyncio.gather(previous, return_exceptions=True)
            loop = asyncio.get_running_loop()
            end, pause = loop.time() + self.give_up_after, 0.5
            while True:
                last = loop.time() >= end
                try:
                    if await self.process(update, last) or last:
                        break
                except Exception:
                    log.exception("update %s failed", update.get("update_id"))
                    if last:
                        break
                log.warning("update %s: Redis failed; trying again in %.1f s", update.get("update_id"), pause)
                await asyncio.sleep(pause)
                pause = min(pause * 2, RETRY_MAX)
            self._done.append(entry_id)
            if self._flusher is None or self._flusher.done():
                self._flusher = asyncio.create_task(self._flush_soon())
        finally:
            self._room.release()

    async def _flush_soon(self) -> None:
        """Acknowledge within :data:`ACK_DELAY` of processing (one round trip for every update
        processed meanwhile), so a take-over repeats little."""
        await asyncio.sleep(ACK_DELAY)
        try:
            await self._flush()
        except Exception as e:  # the next flush takes them
            log.warning("acknowledging processed updates failed: %s", e)

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


#: Seconds a long poll may take beyond its ``timeout`` before the connection counts as lost.
_POLL_SLACK = 10
# Bot.do_api_request asks for Bot.get_updates instead, which builds an Update per update: the
# poller stores them as JSON (the consumer parses each once), so the raw call is meant.
warnings.filterwarnings("ignore", message=r"Please use 'Bot\.getUpdates'", category=PTBUserWarning)


class Poller:
    """Long polling for the active process: fetch, store durably with the offset, repeat (the
    next ``getUpdates`` with that offset confirms the batch to Telegram)."""

    def __init__(self, bot: Any, ingest: Ingest, lease: Lease, timeout: int = 10) -> None:
        self.bot = bot
        self.ingest = ingest
        self.lease = lease
        self.timeout = timeout

    async def run(self) -> None:
        """Poll until cancelled; returns when the lease was found lost at a write."""
        offset = await self.ingest.offset()
        pause = 0.5
        while True:
            try:
                batch = await self._get_updates(offset)
            except BadRequest:
                raise  # (a NetworkError too) a call Telegram refuses: the runner logs it
            except (Conflict, NetworkError) as e:
                # 409: a long poll of a former holder (or of this process before it stepped down)
                # is still open; or Telegram is unreachable. Both pass: poll again shortly.
                log.warning("getUpdates: %s; polling again in %.1f s", e, pause)
                await asyncio.sleep(pause)
                pause = min(pause * 2, 5.0)
                continue
            pause = 0.5
            if not batch:
                continue
            offset = max(int(update["update_id"]) for update in batch) + 1
            while not await self.ingest.polled(batch, self.lease.value, offset):
                if await self.lease.confirm():
                    continue  # the lease had lapsed (a Redis stall) and is ours again: store the batch
                log.warning("lease lost: %d polled update(s) left to Telegram for the next holder", len(batch))
                return

    async def _get_updates(self, offset: int) -> list[dict[str, Any]]:
        """One long poll (Bot API ``getUpdates``), its updates as Telegram sent them: they are
        stored as JSON and parsed once, by the consumer, so no ``Update`` is built here.

        Raises what :meth:`telegram.Bot.get_updates` raises (``Conflict``, ``NetworkError``, …)."""
        parameters = {"offset": offset or None, "timeout": self.timeout, "allowed_updates": Update.ALL_TYPES}
        result = await self.bot.do_api_request(
            "getUpdates", api_kwargs={name: value for name, value in parameters.items() if value is not None},
            read_timeout=self.timeout + _POLL_SLACK)
        return result if isinstance(result, list) else []


