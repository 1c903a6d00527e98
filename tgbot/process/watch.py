"""What the operator watches of a process: whether Redis answers (``/healthz``, ``/readyz``, the
``cheat_redis_up`` gauge, one WARNING when trouble starts and one INFO when it ends) and one INFO
line when a game starts or ends (ids only, nothing personal), with its metrics."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable
from typing import TypeVar

from redis.exceptions import RedisError

from tgbot import metrics
from tgbot.game.table import Status, Table
from tgbot.logs import about_game

__all__ = ["ROUND_TRIP_LIMIT", "RedisHealth", "game_committed"]

log = logging.getLogger(__name__)

#: Seconds a watched round trip may take before Redis counts as not answering (a renewal is due
#: every second, and a lease lasts 5: a frozen Redis is seen well before the lease lapses).
ROUND_TRIP_LIMIT = 2.0

_T = TypeVar("_T")


class RedisHealth:
    """Whether Redis answers, told by the lease's round trips (one a second in every process).
    ``down_after``: seconds without an answer before Redis counts as down (the lease's length)."""

    def __init__(self, down_after: float, clock: Callable[[], float] = time.monotonic) -> None:
        self.down_after = down_after
        self._clock = clock
        self._last_answer = clock()
        self._failing_since: float | None = None
        metrics.REDIS_UP.set_function(lambda: float(self.up()))

    def up(self) -> bool:
        """Whether Redis answered within the last ``down_after`` seconds."""
        return self._clock() - self._last_answer <= self.down_after

    async def call(self, work: Awaitable[_T]) -> _T:
        """``await work`` (a round trip) within :data:`ROUND_TRIP_LIMIT`, noting whether Redis
        answered; raises what it raised (``TimeoutError`` when it took too long)."""
        try:
            result = await asyncio.wait_for(work, ROUND_TRIP_LIMIT)
        except (RedisError, OSError, TimeoutError) as error:
            self.failed(error)
            raise
        self.answered()
        return result

    def answered(self) -> None:
        """Redis answered: one INFO line if it had not."""
        now = self._clock()
        if self._failing_since is not None:
            log.info("Redis answers again (after %.1f s)", now - self._failing_since)
            self._failing_since = None
        self._last_answer = now

    def failed(self, error: BaseException) -> None:
        """A round trip failed: one WARNING line when it is the first since Redis last answered."""
        if self._failing_since is None:
            self._failing_since = self._clock()
            log.warning("Redis does not answer (%s); trying again every second", str(error) or type(error).__name__)


def game_committed(before: Table | None, after: Table) -> None:
    """Count a committed change to a game (:func:`tgbot.metrics.game_committed`) and log a start
    or an end in one INFO line."""
    metrics.game_committed(before, after)
    was = before.status if before is not None else None
    if was == after.status:
        return
    game_log = about_game(log, after.id, after.chat_id)
    if after.status is Status.PLAYING:
        game_log.info("started: %d seats, variant %s", len(after.seats), after.variant)
    elif not after.live and was in (Status.LOBBY, Status.PLAYING):
        game_log.info(
            "ended: %s, %d seats, variant %s, %d plays",
            after.ended or after.status,
            len(after.seats),
            after.variant,
            after.state.plays if after.state is not None else 0,
        )
