"""Redis's clock, as every deadline of the bot is measured (DESIGN.md, Storage: timers).

A process's own clock may be wrong (a host whose clock runs 20 s ahead would fire every turn's
timer early). The bot reads Redis's ``TIME`` once when it becomes active and from then on counts
with the process's monotonic clock, which only measures intervals, so a wrong wall clock never
moves a deadline.
"""

from __future__ import annotations

import time
from typing import Any

__all__ = ["RedisClock"]


class RedisClock:
    """Epoch seconds on Redis's clock: ``now()`` = Redis's ``TIME`` at the last :meth:`sync` plus
    the monotonic seconds since. Before the first sync it falls back to the process's clock."""

    def __init__(self) -> None:
        self._offset = time.time() - time.monotonic()

    async def sync(self, redis: Any) -> None:
        """Read Redis's ``TIME`` (one round trip) and count from it. Raises what redis-py raises."""
        seconds, micros = await redis.time()
        self._offset = seconds + micros / 1e6 - time.monotonic()

    def now(self) -> float:
        """The current time on Redis's clock, in epoch seconds."""
        return self._offset + time.monotonic()
