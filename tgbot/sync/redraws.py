"""Redraws of a tapped panel (docs/DESIGN.md, Budgets per person; Private chats' limit): taps that
change only the tapper's own view (card picks, a refresh, a stale tap) are drawn at once while
their private chat takes messages; one refused for now (the limiter's window of that chat, or a
429) waits for the block to end, and the taps meanwhile are answered and drawn with it, as the latest."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from redis.exceptions import RedisError
from telegram import Message
from telegram.error import RetryAfter, TelegramError

from tgbot.game.table import Table
from tgbot.logs import about_game
from tgbot.sync.messages import retry_seconds

__all__ = ["PanelRedraws"]

log = logging.getLogger(__name__)

#: ``draw(table, seat, message, picks, refresh)``: redraw the panel ``message`` of ``seat``
#: (:meth:`tgbot.sync.tapped.TappedPanels.redraw`); raises RetryAfter when its chat is blocked.
Draw = Callable[[Table, int, Message, str, bool], Awaitable[None]]
#: ``load(game_id)``: the game's table now.
Load = Callable[[str], Awaitable[Table | None]]
#: A tap to draw: the table it was made on, the panel, its picks, whether a «Refresh» was among them.
Tapped = tuple[Table, Message, str, bool]


@dataclass
class _Waiting:
    """A panel's redraw waiting for its chat: the latest tap, how many taps came, and the task."""

    latest: Tapped
    taps: int = 0
    task: asyncio.Task[None] | None = None


class PanelRedraws:
    """The taps' redraws of each panel (by game and seat), one waiting at most per panel."""

    def __init__(self, load: Load, draw: Draw) -> None:
        self._load, self._draw = load, draw
        self._waiting: dict[tuple[str, int], _Waiting] = {}

    async def request(self, table: Table, seat: int, message: Message, picks: str, refresh: bool = False) -> None:
        """Redraw the panel ``message`` as ``table`` with ``picks``: now, or with the redraw
        waiting for the chat (this tap becomes its latest)."""
        key = (table.id, seat)
        if self._coalesce(key, (table, message, picks, refresh)):
            return
        try:
            await self._draw(table, seat, message, picks, refresh)
        except RetryAfter as error:  # the chat takes no message for now: drawn when it does
            if not self._coalesce(key, (table, message, picks, refresh)):
                waiting = self._waiting[key] = _Waiting((table, message, picks, refresh))
                waiting.task = asyncio.create_task(
                    self._later(key, waiting, retry_seconds(error)), name=f"redraw-{table.id}-{seat}"
                )

    def _coalesce(self, key: tuple[str, int], tapped: Tapped) -> bool:
        """Make ``tapped`` the latest of the redraw waiting for that panel, if one waits."""
        waiting = self._waiting.get(key)
        if waiting is None:
            return False
        table, message, picks, refresh = tapped
        waiting.latest = (table, message, picks, refresh or waiting.latest[3])
        waiting.taps += 1
        return True

    async def _later(self, key: tuple[str, int], waiting: _Waiting, seconds: float) -> None:
        """Draw the latest tap once the chat's block ends, on the table as it is then (its picks
        only if nothing was played since); again while taps came during a draw or it was refused."""
        game_id, seat = key
        try:
            while True:
                await asyncio.sleep(seconds)
                taps, (tapped_on, message, picks, refresh) = waiting.taps, waiting.latest
                try:
                    table = await self._load(game_id)
                    if table is not None and table.state is not None:
                        moved = table.action_count != tapped_on.action_count
                        await self._draw(table, seat, message, "" if moved else picks, refresh)
                except RetryAfter as error:
                    seconds = retry_seconds(error)
                    continue
                if waiting.taps == taps:
                    return
                seconds = 0.0  # a tap came while it drew
        except (TelegramError, RedisError) as error:
            about_game(log, game_id).warning("a panel's redraw: %s", error)
        finally:
            if self._waiting.get(key) is waiting:
                del self._waiting[key]

    def forget(self, game_id: str) -> None:
        """Drop an ended game's waiting redraws."""
        for key in [key for key in self._waiting if key[0] == game_id]:
            task = self._waiting.pop(key).task
            if task is not None:
                task.cancel()

    async def idle(self) -> None:
        """Wait until no redraw waits (tests and shutdown)."""
        while tasks := [waiting.task for waiting in self._waiting.values() if waiting.task is not None]:
            await asyncio.gather(*tasks, return_exceptions=True)

    def close(self) -> None:
        """Cancel every waiting redraw."""
        for waiting in self._waiting.values():
            if waiting.task is not None:
                waiting.task.cancel()
        self._waiting.clear()
