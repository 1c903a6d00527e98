"""Redis's clock, on which every deadline is measured (a host clock 20 s ahead would fire every
timer early): Redis's ``TIME`` read once at take-over, then the monotonic clock counts from it."""

from __future__ import annotations

import time
from typing import Any

__all__ = ["RedisClock"]


class RedisClock:
    """Epoch seconds on Redis's clock (the process's own until the first :meth:`sync`)."""

    def __init__(self) -> None:
        self._offset = time.time() - time.monotonic()

    async def sync(self, redis: Any) -> None:
        """Read Redis's ``TIME`` (one round trip). Raises what redis-py raises."""
        seconds, micros = await redis.time()
        self._offset = seconds + micros / 1e6 - time.monotonic()

    def now(self) -> float:
        """The current time on Redis's clock, in epoch seconds."""
        return self._offset + time.monotonic()
