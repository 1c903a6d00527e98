"""The active process's lease: exactly one process per bot token works, the others stand by.

DESIGN.md, Processes. The lease is one Redis key, ``<prefix>:{b<bot>}:lease`` (beside it the
epoch counter and the time of the last renewal), whose value is
``"<holder> <epoch>"`` and which expires after :data:`LEASE_SECONDS` unless its holder renews it
(every :data:`RENEW_EVERY` seconds). The epoch is a fencing number: each new holder gets a larger
one, and a game's commit refuses any epoch older than the one the game last saw
(:mod:`tgbot.owner.store`), so a former holder that wakes up from a pause can never commit.

The epoch only grows, also across a Redis fail-over that loses the last writes: a new epoch is
the larger of the stored counter plus one and Redis's clock in milliseconds, and a lease changes
hands only after :data:`LEASE_SECONDS`, far more than the milliseconds a fail-over could lose.

A holder counts itself active only until :data:`LEASE_SECONDS` minus :data:`MARGIN` after its
last successful renewal started, measured on its monotonic clock, so it stops before any
standby can take the lease even when it cannot reach Redis to learn that it lost it.
"""

from __future__ import annotations

import os
import secrets
import socket
import time
from typing import Any

__all__ = ["LEASE_SECONDS", "MARGIN", "RENEW_EVERY", "Lease"]

#: Seconds a lease lasts without renewal (issue 14: 5 s by default).
LEASE_SECONDS = 5.0
#: Seconds between renewals (well before the lease lapses).
RENEW_EVERY = 1.0
#: Seconds before the lease's end at which its holder stops counting itself active.
MARGIN = 1.5

# KEYS: 1 the lease, 2 the epoch counter, 3 when a holder last renewed (ms, Redis's clock). ARGV:
# 1 holder, 2 lease ms, 3 the epoch the caller holds ('0': none). Renews our own lease, or takes
# it back with the same epoch when it lapsed and nobody took it since (the counter is still ours:
# e.g. Redis stalled longer than the lease) ({1, epoch, ''}), else reports it lost ({0, ''}); a
# caller without one takes a free lease with a new epoch ({1, epoch, previous renewal ms}); or
# the holder's is reported ({0, value}).
_ACQUIRE = """
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local cur = redis.call('GET', KEYS[1])
if cur then
  local holder, epoch = string.match(cur, '^(%S+) (%d+)$')
  if holder == ARGV[1] then
    redis.call('PEXPIRE', KEYS[1], ARGV[2])
    redis.call('SET', KEYS[3], string.format('%d', now))
    return {1, epoch, ''}
  end
  return {0, cur}
end
if ARGV[3] ~= '0' then
  if redis.call('GET', KEYS[2]) ~= ARGV[3] then return {0, ''} end
  redis.call('SET', KEYS[1], ARGV[1] .. ' ' .. ARGV[3], 'PX', ARGV[2])
  redis.call('SET', KEYS[3], string.format('%d', now))
  return {1, ARGV[3], ''}
end
local epoch = math.max(tonumber(redis.call('GET', KEYS[2]) or '0') + 1, now)
local previous = redis.call('GET', KEYS[3]) or ''
redis.call('SET', KEYS[2], string.format('%d', epoch))
redis.call('SET', KEYS[1], ARGV[1] .. ' ' .. string.format('%d', epoch), 'PX', ARGV[2])
redis.call('SET', KEYS[3], string.format('%d', now))
return {1, string.format('%d', epoch), previous}
"""

# KEYS: 1 the lease. ARGV: 1 its value as we hold it. Gives it up if it is still ours.
_RELEASE = """
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
"""


class Lease:
    """This process's claim on the lease (see the module docstring).

    ``holder``: a name unique to this process (host, pid and a random part); ``epoch``: the
    fencing number of the lease this process holds (0 while it holds none)."""

    def __init__(self, redis: Any, keys: tuple[str, str, str], seconds: float = LEASE_SECONDS) -> None:
        self.redis = redis
        self.keys = list(keys)
        self.seconds = seconds
        self.holder = f"{socket.gethostname()}:{os.getpid()}:{secrets.token_hex(4)}"
        self.epoch = 0
        #: When the lease was last renewed before this process took it (epoch seconds on Redis's
        #: clock; None: never): the previous holder may have sent messages until it lapsed.
        self.previous_renewal: float | None = None
        self._valid_until = 0.0
        self._acquire = redis.register_script(_ACQUIRE)
        self._release = redis.register_script(_RELEASE)

    @property
    def value(self) -> str:
        """The lease key's value while this process holds it."""
        return f"{self.holder} {self.epoch}"

    def held(self) -> bool:
        """Whether this process may act as the active one now (monotonic clock, no round trip)."""
        return self.epoch > 0 and time.monotonic() < self._valid_until

    async def confirm(self) -> bool:
        """Whether this process still holds the lease, asked of Redis (a renewal out of turn, for
        a lease that lapsed while Redis stalled): False when it is lost or Redis fails."""
        try:
            return self.epoch > 0 and await self.try_acquire()
        except Exception:
            return False

    async def try_acquire(self) -> bool:
        """Take the lease if it is free, or renew it if it is ours, also when it lapsed and no
        other process took it since (one round trip). True when this process holds it now; on
        False, :attr:`epoch` is 0. Raises what redis-py raises."""
        started = time.monotonic()
        got, value, *previous = await self._acquire(keys=self.keys, args=[self.holder, int(self.seconds * 1000), self.epoch])
        if int(got) and (self.epoch in (0, int(value))):
            if self.epoch == 0:
                self.previous_renewal = int(previous[0]) / 1000 if previous and previous[0] else None
            self.epoch = int(value)
            self._valid_until = started + self.seconds - MARGIN
            return True
        self.epoch, self._valid_until = 0, 0.0
        return False

    async def release(self) -> None:
        """Give the lease up at a clean stop, so a standby takes over at once."""
        if self.epoch:
            value, self.epoch, self._valid_until = self.value, 0, 0.0
            await self._release(keys=self.keys[:1], args=[value])
