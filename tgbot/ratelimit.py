"""The one rate limiter: Telegram's message limits, shared by every bot process through Redis.

Telegram's Bot FAQ: about 30 messages a second overall and about 20 messages a minute in one
group (edits count; TELEGRAM.md). :class:`RedisRateLimiter` is PTB's
:class:`~telegram.ext.BaseRateLimiter`. Both limits are sliding-window logs in Redis (sorted sets
of admission times, on Redis' own clock, so processes on several hosts agree):

- the overall window: a process leases slots in one Lua script and spends them within
  :data:`LEASE_TTL` seconds (never later: the slots count from the lease, and the windows'
  :data:`LATENCY` margin covers the delay). The lease grows (doubling, up to
  :data:`LEASE_BATCH`) while each one is spent in time and shrinks back to one slot when it is
  not, and the slots a lease left unspent are given back with the next lease, so a busy
  process asks Redis once per few messages and a quiet one holds no slot it does not use;
- a group's window: one Lua script per message to a group (``<prefix>:rl:{c<chat>}``), which
  also checks that group's 429 block.

Calls that are not counted — ``answerCallbackQuery``, ``getUpdates``, ``deleteMessage``,
``setMyCommands`` … — never touch Redis and never wait.

A wait for a GROUP slot is not slept through with stale content when the caller can re-render:
calls made with ``rate_limit_args={"defer": True}`` (the sync path) raise :class:`Throttled` (a
:class:`~telegram.error.RetryAfter`) instead, and the sync lane sleeps and runs again with the
newest state. Other calls (command replies) wait for their group's slot up to
:data:`REPLY_WAIT` seconds; a reply that would wait longer (a group spamming commands past
Telegram's 20 a minute) is dropped with :class:`Throttled`, which the error handler logs at INFO:
a reply a minute late helps nobody, and its handler would hold the update's task that long.

When Telegram still answers 429 with ``retry_after``, that chat alone is blocked — in Redis,
for every process — until it runs out; other chats go on. A group's block is checked by its
window script; private chats' blocks come back with every lease (so another process learns of
one within :data:`LEASE_TTL` of its next message).

Every script touches the keys of one Redis Cluster slot: the overall log and the private blocks
share the hash tag ``{rl}``, and a group's log and block share ``{c<chat>}``.

``setWebhook`` is made by one process only when several start together (a Redis ``SET NX``
lock, :data:`WEBHOOK_LOCK` seconds): Telegram limits that method too.

Keys: ``<prefix>:rl:webhook`` (that lock), ``<prefix>:{rl}:g`` (overall log),
``<prefix>:{rl}:blocks`` (hash: private chat → blocked until, ms on Redis' clock),
``<prefix>:rl:{c<chat>}`` (a group's log) and ``<prefix>:rl:{c<chat>}:b`` (its 429 block, PX =
retry_after).
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import os
import time
from typing import Any, Callable, Coroutine

from telegram.error import RetryAfter
from telegram.ext import BaseRateLimiter

__all__ = ["RedisRateLimiter", "Throttled", "counted", "SAFETY", "LATENCY", "LEASE_BATCH", "LEASE_TTL", "REPLY_WAIT"]

log = logging.getLogger(__name__)

#: Margin on Telegram's windows: a window is this much longer than the documented one, so
#: latency between admission and arrival cannot squeeze one call too many into Telegram's.
SAFETY = 1.05
#: Seconds added to each window for the time between admission (Redis' clock) and the call's
#: arrival at Telegram (a busy event loop, the network, a leased slot spent up to LEASE_TTL
#: later, and above all a burst's own queue: thirty calls admitted at once reach the server one
#: after another): without it a call admitted early and delayed can land in the same Telegram
#: window as one admitted a full window later. Measured on the emulator's six-and-four-player
#: test (tests/e2e/test_rate.py): with 0.25 s, 34 calls arrived within 1.3 s (the window then)
#: and one run in three of the full suite met a 429; with 0.5 s, at most 30 within 1.3 s. The
#: overall window is then 1.55 s for 30 calls: about 19 messages a second on average, bursts
#: of 30 allowed.
LATENCY = 0.5
#: Overall slots a process leases in one round trip.
LEASE_BATCH = 4
#: Seconds a leased overall slot may be spent after the lease (well inside :data:`LATENCY`).
LEASE_TTL = 0.1
#: Seconds a command reply (a call made without ``defer``) may wait for its group's slot (or a
#: 429 block) before it is dropped (:class:`Throttled`). Waits for the overall window (at most
#: its 1.55 s) are always waited out.
REPLY_WAIT = 5.0
#: Seconds during which one process's setWebhook stands for every process starting with it.
WEBHOOK_LOCK = 30

# Shared by both scripts: ``now`` in ms on Redis' clock, and the wait before a window of
# ``max`` per ``period`` ms has room (0: room now).
_WINDOW = """
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local function wait(key, max, period)
  redis.call('ZREMRANGEBYSCORE', key, '-inf', now - period)
  local n = redis.call('ZCARD', key)
  if n < max then return 0, max - n end
  local first = redis.call('ZRANGE', key, n - max, n - max, 'WITHSCORES')
  return tonumber(first[2]) + period - now + 1, 0
end
"""

# KEYS: 1 overall log, 2 private blocks hash ({rl} slot). ARGV: 1 max, 2 period ms, 3 slots
# wanted, 4 unique member prefix, then the members of the previous lease left unspent (given
# back first). Returns {granted, wait_ms, {chat, ms_left, ...}}.
_LEASE = _WINDOW + """
if #ARGV > 4 then redis.call('ZREM', KEYS[1], unpack(ARGV, 5)) end
local w, free = wait(KEYS[1], tonumber(ARGV[1]), tonumber(ARGV[2]))
local got = math.min(free, tonumber(ARGV[3]))
for i = 1, got do redis.call('ZADD', KEYS[1], now, ARGV[4] .. ':' .. i) end
if got > 0 then redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[2])) end
local blocks, out = redis.call('HGETALL', KEYS[2]), {}
for i = 1, #blocks, 2 do
  local left = tonumber(blocks[i + 1]) - now
  if left > 0 then out[#out + 1] = blocks[i]; out[#out + 1] = left else redis.call('HDEL', KEYS[2], blocks[i]) end
end
return {got, w, out}
"""

# KEYS: 1 a group's log, 2 its block ({c<chat>} slot). ARGV: 1 max, 2 period ms, 3 member.
# Returns {wait_ms, reason}: reason 0 admitted, 2 group full, 3 blocked after a 429.
_GROUP = _WINDOW + """
local blocked = redis.call('PTTL', KEYS[2])
if blocked > 0 then return {blocked, 3} end
local w = wait(KEYS[1], tonumber(ARGV[1]), tonumber(ARGV[2]))
if w > 0 then return {w, 2} end
redis.call('ZADD', KEYS[1], now, now .. ':' .. ARGV[3])
redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[2]))
return {0, 0}
"""

# KEYS: 1 the private blocks hash. ARGV: 1 chat, 2 ms. Blocked until now + ms (Redis' clock).
_BLOCK_PRIVATE = """
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('HSET', KEYS[1], ARGV[1], now + tonumber(ARGV[2]))
return 1
"""

_COUNTED_EXTRA = {"copyMessage", "copyMessages", "forwardMessage", "forwardMessages", "stopPoll"}


def counted(endpoint: str) -> bool:
    """Whether Bot API method ``endpoint`` sends or edits a message (counts against the limits)."""
    return (endpoint.startswith("send") and endpoint != "sendChatAction") or endpoint.startswith("edit") or endpoint in _COUNTED_EXTRA


def _is_group(chat_id: Any) -> bool:
    """Group, supergroup and channel ids are negative (or ``@username`` strings)."""
    if isinstance(chat_id, str):
        return not chat_id.lstrip("-").isdigit() or chat_id.startswith("-")
    return isinstance(chat_id, int) and chat_id < 0


class Throttled(RetryAfter):
    """A call was not made: its chat has no slot for ``retry_after`` seconds. A deferrable call
    (the sync) re-renders and tries again after that (nothing stale is queued); a command reply
    that would have waited more than :data:`REPLY_WAIT` is dropped."""

    def __init__(self, seconds: float) -> None:
        super().__init__(max(1, int(seconds + 0.999)))
        self.seconds = seconds


class RedisRateLimiter(BaseRateLimiter[dict]):
    """Telegram's limits over Redis; see the module docstring.

    ``group_max`` messages per ``group_period`` seconds in each group, ``overall_max`` per
    ``overall_period`` overall; windows are widened by :data:`SAFETY` and :data:`LATENCY`. :meth:`attach` gives it
    the Redis client (the store's, once connected); until then calls pass unlimited (only
    start-up calls happen then). ``max_retries``: how often a call that met a 429 is retried.
    ``calls`` counts the limiter's own Redis round trips.
    """

    def __init__(self, group_max: int = 20, group_period: float = 60.0, overall_max: int = 30,
                 overall_period: float = 1.0, prefix: str = "cheat", max_retries: int = 3) -> None:
        self.group_max, self.group_period_ms = group_max, int((group_period * SAFETY + LATENCY) * 1000)
        self.overall_max, self.overall_period_ms = overall_max, int((overall_period * SAFETY + LATENCY) * 1000)
        self.prefix = prefix
        self.max_retries = max_retries
        self.calls = 0
        self._lease_script: Any = None
        self._group_script: Any = None
        self._block_script: Any = None
        self._redis: Any = None
        self._ids = itertools.count()
        self._tag = os.urandom(4).hex()
        # leased overall slots: how many are left, until when (time.monotonic()) they may be
        # spent, the lease's member prefix and size, and the size of the next lease
        self._slots = 0
        self._slots_until = 0.0
        self._lease: tuple[str, int] | None = None
        self._lease_size = 1
        self._leasing = asyncio.Lock()
        # private chats blocked after a 429, as of the last lease: chat id (str) -> monotonic end
        self._private_blocks: dict[str, float] = {}

    def attach(self, redis: Any) -> None:
        """Use ``redis`` (a redis-py asyncio client) for the shared state from now on."""
        self._redis = redis
        self._lease_script = redis.register_script(_LEASE)
        self._group_script = redis.register_script(_GROUP)
        self._block_script = redis.register_script(_BLOCK_PRIVATE)

    def group_keys(self, chat_id: Any) -> list[str]:
        """A group's window log and its 429 block (one Cluster slot)."""
        base = f"{self.prefix}:rl:{{c{chat_id}}}"
        return [base, base + ":b"]

    @property
    def overall_keys(self) -> list[str]:
        """The overall window log and the private chats' blocks (one Cluster slot)."""
        return [f"{self.prefix}:{{rl}}:g", f"{self.prefix}:{{rl}}:blocks"]

    async def initialize(self) -> None:
        """Nothing to set up (the Redis client comes with :meth:`attach`)."""

    async def shutdown(self) -> None:
        """Nothing to release (the store owns the Redis client)."""

    async def admit(self, chat_id: Any) -> tuple[float, int]:
        """(0, 0) when a counted message to ``chat_id`` may go now, else (seconds to wait,
        reason: 1 overall, 2 group, 3 blocked by a 429). A group costs one round trip; the
        overall slot one per :data:`LEASE_BATCH` messages at most."""
        wait = await self._take_slot()  # (a lease brings the private blocks up to date)
        if wait:
            return wait, 1
        lease = self._lease
        if not _is_group(chat_id):
            left = self._private_blocks.get(str(chat_id), 0.0) - time.monotonic()
            if left > 0:
                self._give_back(lease)
                return left, 3
            return 0.0, 0
        self.calls += 1
        wait_ms, reason = await self._group_script(keys=self.group_keys(chat_id), args=[self.group_max, self.group_period_ms, f"{self._tag}{next(self._ids)}"])
        if int(reason):
            self._give_back(lease)
            return int(wait_ms) / 1000, int(reason)
        return 0.0, 0

    def _give_back(self, lease: tuple[str, int] | None) -> None:
        """A slot taken from ``lease`` was not spent: the next message takes it, if that lease
        is still the current one (a newer lease's slots are counted by their own names)."""
        if lease is not None and lease is self._lease:
            self._slots += 1

    async def _take_slot(self) -> float:
        """Take one leased overall slot, leasing more when none is left; 0, or the seconds to
        wait when the overall window is full."""
        async with self._leasing:  # one lease in flight; the others wait for its slots
            if self._slots <= 0 or time.monotonic() >= self._slots_until:
                self.calls += 1
                unspent: list[str] = []
                if self._lease is not None:
                    prefix, got = self._lease
                    unspent = [f"{prefix}:{i}" for i in range(got - self._slots + 1, got + 1)] if self._slots > 0 else []
                    # spent in time: lease more next; left unspent: one at a time again
                    self._lease_size = min(LEASE_BATCH, self._lease_size * 2) if not unspent else 1
                prefix = f"{self._tag}{next(self._ids)}"
                started = time.monotonic()
                got, wait_ms, blocks = await self._lease_script(
                    keys=self.overall_keys, args=[self.overall_max, self.overall_period_ms, self._lease_size, prefix, *unspent])
                self._lease = (prefix, int(got))
                self._slots, self._slots_until = int(got), started + LEASE_TTL
                now = time.monotonic()
                shared = {str(c): started + int(ms) / 1000 for c, ms in zip(blocks[::2], blocks[1::2])}
                self._private_blocks = {c: end for c, end in self._private_blocks.items() if end > now} | shared
                if not self._slots:
                    return max(0.001, int(wait_ms) / 1000)
            self._slots -= 1
            return 0.0

    async def _block(self, chat_id: Any, seconds: float) -> None:
        """Block ``chat_id`` for every process for ``seconds`` (Telegram's retry_after)."""
        ms = int(seconds * 1000)
        if _is_group(chat_id):
            await self._redis.set(self.group_keys(chat_id)[1], 1, px=ms)
        else:
            self._private_blocks[str(chat_id)] = time.monotonic() + seconds
            await self._block_script(keys=self.overall_keys[1:], args=[str(chat_id), ms])

    async def process_request(
        self,
        callback: Callable[..., Coroutine[Any, Any, Any]],
        args: Any,
        kwargs: dict[str, Any],
        endpoint: str,
        data: dict[str, Any],
        rate_limit_args: dict | None,
    ) -> Any:
        """Admit (or defer, or wait for) a counted call, then make it; on a 429 block that chat
        for ``retry_after`` and retry (or raise to a deferring caller). Raises
        :class:`Throttled` for a deferred call whose chat has no slot now, and for any other
        whose chat would have none within :data:`REPLY_WAIT` seconds."""
        if endpoint == "setWebhook" and self._redis is not None:
            # Workers that start together would each call setWebhook (PTB's run_webhook does),
            # and Telegram limits that method: the first one within WEBHOOK_LOCK seconds sets
            # it, the others (same URL and secret, behind one load balancer) find it set.
            lock = f"{self.prefix}:rl:webhook"
            if not await self._redis.set(lock, self._tag, nx=True, ex=WEBHOOK_LOCK):
                log.info("setWebhook: another process sets it")
                return True
            try:
                return await callback(*args, **kwargs)
            except BaseException:
                await self._redis.delete(lock)  # it was not set: the next process to start sets it
                raise
        if not counted(endpoint) or self._redis is None:
            return await callback(*args, **kwargs)
        defer = bool(rate_limit_args and rate_limit_args.get("defer"))
        chat_id = data.get("chat_id")
        for attempt in itertools.count():
            waited = 0.0
            while True:
                wait, reason = await self.admit(chat_id)
                if not reason:
                    break
                if reason in (2, 3) and (defer or waited + wait > REPLY_WAIT):
                    raise Throttled(wait)
                await asyncio.sleep(wait)
                waited += wait
            try:
                return await callback(*args, **kwargs)
            except RetryAfter as e:
                seconds = e.retry_after if isinstance(e.retry_after, (int, float)) else e.retry_after.total_seconds()
                log.warning("429 from Telegram for chat %s: blocked for %s s", chat_id, seconds)
                await self._block(chat_id, seconds)
                if defer or attempt >= self.max_retries:
                    raise


class RateLimiter(BaseRateLimiter[dict]):  # TEMPORARY pass-through until the ratelimit branch lands
    def __init__(self, **kwargs: Any) -> None:
        pass

    async def initialize(self) -> None:
        pass

    async def shutdown(self) -> None:
        pass

    def assume_full(self) -> None:
        pass

    async def process_request(self, callback, args, kwargs, endpoint, data, rate_limit_args):  # type: ignore[no-untyped-def]
        return await callback(*args, **kwargs)
