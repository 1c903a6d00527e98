"""The active process's lease and its fencing epoch (docs/DESIGN.md, Lease)."""

from __future__ import annotations

import os
import secrets
import socket
import time
from typing import Any

__all__ = ["LEASE_SECONDS", "MARGIN", "RENEW_EVERY", "Lease"]

#: Seconds a lease lasts without renewal.
LEASE_SECONDS = 5.0
#: Seconds between renewals (well before the lease lapses).
RENEW_EVERY = 1.0
#: Seconds before the lease's end at which its holder stops counting itself active.
MARGIN = 1.5

# KEYS: 1 the lease, 2 the epoch counter, 3 the last renewal (ms, Redis's clock). ARGV: 1 holder,
# 2 lease ms, 3 the caller's epoch ('0': none). Returns {1, epoch, previous renewal ms or ''} when
# the caller holds the lease now (renewed, taken back unchanged after it lapsed, or taken new), else
# {0, the holder's value or ''}.
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
    """This process's claim: ``holder`` names it (host, pid, a random part), ``epoch`` is the
    fencing number of the lease it holds (0: none). ``keys``: the lease, the counter, the renewal."""

    def __init__(self, redis: Any, keys: tuple[str, str, str], seconds: float = LEASE_SECONDS) -> None:
        self.redis = redis
        self.keys = list(keys)
        self.seconds = seconds
        self.holder = f"{socket.gethostname()}:{os.getpid()}:{secrets.token_hex(4)}"
        self.epoch = 0
        #: The previous holder's last renewal (epoch seconds on Redis's clock; None: never).
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

    async def active(self) -> bool:
        """Whether this process may act as the active one (before every commit, Bot API call and update):
        held on its own clock or, when a renewal is late (a starved CPU, a pause), confirmed by Redis."""
        return self.held() or await self.confirm()

    async def confirm(self) -> bool:
        """Whether this process still holds the lease, asked of Redis (a renewal out of turn: it
        takes back a lease that lapsed while Redis stalled); False when lost or Redis fails."""
        try:
            return self.epoch > 0 and await self.try_acquire()
        except Exception:
            return False

    async def try_acquire(self) -> bool:
        """Take the lease if free, or renew ours (also lapsed, when nobody took it since): True when
        held now, else :attr:`epoch` is 0. One round trip; raises what redis-py raises."""
        started = time.monotonic()
        got, value, *previous = await self._acquire(
            keys=self.keys, args=[self.holder, int(self.seconds * 1000), self.epoch]
        )
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
