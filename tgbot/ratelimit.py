"""The one rate limiter: Telegram's message limits, shared by every bot process through Redis.

Telegram's Bot FAQ: about 30 messages a second overall and about 20 messages a minute in one
group (edits count; TELEGRAM.md). :class:`RedisRateLimiter` is PTB's
:class:`~telegram.ext.BaseRateLimiter`; before a counted call (``send*``, ``edit*``, copies,
forwards, ``stopPoll``) it runs ONE Lua script (one Redis round trip) that keeps a sliding-window
log per group and one overall (sorted sets of admission times, on Redis' own clock, so processes
on several hosts agree) and either admits the call or says how long to wait. Calls that are not
counted — ``answerCallbackQuery``, ``getUpdates``, ``deleteMessage``, ``setMyCommands`` … —
never touch Redis and never wait.

A wait for a GROUP slot is not slept through with stale content when the caller can re-render:
calls made with ``rate_limit_args={"defer": True}`` (the sync path) raise :class:`Throttled` (a
:class:`~telegram.error.RetryAfter`) instead, and the sync lane sleeps and runs again with the
newest state. Other calls (command replies) wait.

When Telegram still answers 429 with ``retry_after``, that chat alone is blocked — in Redis,
for every process — until it runs out; other chats go on. The same script checks the block.

``setWebhook`` is made by one process only when several start together (a Redis ``SET NX``
lock, :data:`WEBHOOK_LOCK` seconds): Telegram limits that method too.

Keys: ``<prefix>:rl:webhook`` (that lock), ``<prefix>:rl:g`` (overall log), ``<prefix>:rl:c:<chat>`` (group log),
``<prefix>:rl:b:<chat>`` (429 block, PX = retry_after).
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import os
from typing import Any, Callable, Coroutine

from telegram.error import RetryAfter
from telegram.ext import BaseRateLimiter

__all__ = ["RedisRateLimiter", "Throttled", "counted", "SAFETY", "LATENCY"]

log = logging.getLogger(__name__)

#: Margin on Telegram's windows: a window is this much longer than the documented one, so
#: latency between admission and arrival cannot squeeze one call too many into Telegram's.
SAFETY = 1.05
#: Seconds added to each window for the time between admission (Redis' clock) and the call's
#: arrival at Telegram (a busy event loop, the network): without it a call admitted early and
#: delayed can land in the same Telegram window as one admitted a full window later.
LATENCY = 0.25
#: Seconds during which one process's setWebhook stands for every process starting with it.
WEBHOOK_LOCK = 30

# KEYS: 1 overall log, 2 group log ('' none), 3 block key
# ARGV: 1 overall max, 2 overall period ms, 3 group max, 4 group period ms, 5 unique member
# Returns {wait_ms, reason}: reason 0 admitted, 1 overall, 2 group, 3 blocked after a 429.
_ADMIT = """
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local blocked = redis.call('PTTL', KEYS[3])
if blocked > 0 then return {blocked, 3} end
local function need(key, max, period)
  redis.call('ZREMRANGEBYSCORE', key, '-inf', now - period)
  local n = redis.call('ZCARD', key)
  if n < max then return 0 end
  local first = redis.call('ZRANGE', key, n - max, n - max, 'WITHSCORES')
  return tonumber(first[2]) + period - now + 1
end
local gmax, gper = tonumber(ARGV[3]), tonumber(ARGV[4])
if KEYS[2] ~= '' then
  local w = need(KEYS[2], gmax, gper)
  if w > 0 then return {w, 2} end
end
local w = need(KEYS[1], tonumber(ARGV[1]), tonumber(ARGV[2]))
if w > 0 then return {w, 1} end
local member = now .. ':' .. ARGV[5]
redis.call('ZADD', KEYS[1], now, member)
redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[2]))
if KEYS[2] ~= '' then
  redis.call('ZADD', KEYS[2], now, member)
  redis.call('PEXPIRE', KEYS[2], gper)
end
return {0, 0}
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
    """A deferrable call was not made: its group has no slot for ``retry_after`` seconds. The
    caller re-renders and tries again after that (nothing stale is queued)."""

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
        self._script: Any = None
        self._redis: Any = None
        self._ids = itertools.count()
        self._tag = os.urandom(4).hex()

    def attach(self, redis: Any) -> None:
        """Use ``redis`` (a redis-py asyncio client) for the shared state from now on."""
        self._redis = redis
        self._script = redis.register_script(_ADMIT)

    def block_key(self, chat_id: Any) -> str:
        return f"{self.prefix}:rl:b:{chat_id if chat_id is not None else '*'}"

    async def initialize(self) -> None:
        """Nothing to set up (the Redis client comes with :meth:`attach`)."""

    async def shutdown(self) -> None:
        """Nothing to release (the store owns the Redis client)."""

    async def admit(self, chat_id: Any) -> tuple[float, int]:
        """One round trip: (0, 0) when a counted message to ``chat_id`` may go now, else
        (seconds to wait, reason: 1 overall, 2 group, 3 blocked by a 429)."""
        self.calls += 1
        group = f"{self.prefix}:rl:c:{chat_id}" if _is_group(chat_id) else ""
        keys = [f"{self.prefix}:rl:g", group, self.block_key(chat_id)]
        args = [self.overall_max, self.overall_period_ms, self.group_max, self.group_period_ms, f"{self._tag}{next(self._ids)}"]
        wait_ms, reason = await self._script(keys=keys, args=args)
        return int(wait_ms) / 1000, int(reason)

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
        for ``retry_after`` and retry (or raise to a deferring caller)."""
        if endpoint == "setWebhook" and self._redis is not None:
            # Workers that start together would each call setWebhook (PTB's run_webhook does),
            # and Telegram limits that method: the first one within WEBHOOK_LOCK seconds sets
            # it, the others (same URL and secret, behind one load balancer) find it set.
            if not await self._redis.set(f"{self.prefix}:rl:webhook", self._tag, nx=True, ex=WEBHOOK_LOCK):
                log.info("setWebhook: another process sets it")
                return True
            return await callback(*args, **kwargs)
        if not counted(endpoint) or self._script is None:
            return await callback(*args, **kwargs)
        defer = bool(rate_limit_args and rate_limit_args.get("defer"))
        chat_id = data.get("chat_id")
        for attempt in itertools.count():
            while True:
                wait, reason = await self.admit(chat_id)
                if not reason:
                    break
                if defer and reason in (2, 3):
                    raise Throttled(wait)
                await asyncio.sleep(wait)
            try:
                return await callback(*args, **kwargs)
            except RetryAfter as e:
                seconds = e.retry_after if isinstance(e.retry_after, (int, float)) else e.retry_after.total_seconds()
                log.warning("429 from Telegram for chat %s: blocked for %s s", chat_id, seconds)
                await self._redis.set(self.block_key(chat_id), 1, px=int(seconds * 1000))
                if defer or attempt >= self.max_retries:
                    raise
