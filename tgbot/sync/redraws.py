"""Redraws of a tapped panel, coalesced (docs/DESIGN.md, Budgets per person): taps that change only the
tapper's own view (card picks, a refresh, a stale tap) redraw one panel about once per
:data:`REDRAW_EVERY`, :data:`BURST` at once; the taps in between are answered at once and drawn
together, as the latest."""

from __future__ import annotations

import asyncio
import logging
import time
from collections import deque
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

from redis.exceptions import RedisError
from telegram import Message
from telegram.error import TelegramError

from tgbot.game.table import Table
from tgbot.logs import about_game

__all__ = ["BURST", "REDRAW_EVERY", "PanelRedraws", "redraw_every"]

log = logging.getLogger(__name__)

#: Seconds between two redraws of one panel by its player's taps (Telegram's private chats take
#: about one message a second), with Telegram's group window of :data:`GROUP_PERIOD` seconds.
REDRAW_EVERY = 1.0
#: Redraws one panel may take at once (a window of ``BURST * REDRAW_EVERY`` seconds holds this
#: many): a player's first quick picks are drawn as they tap.
BURST = 3
#: The group window REDRAW_EVERY goes with: a shorter one (tests, the playground) shortens it alike.
GROUP_PERIOD = 60.0


def redraw_every(group_period: float) -> float:
    """Seconds between two redraws of one panel where the group window is ``group_period`` seconds
    (``RATE_GROUP_PERIOD``: scaled down alike in tests)."""
    return REDRAW_EVERY * group_period / GROUP_PERIOD


#: ``draw(table, seat, message, picks, refresh)``: redraw the panel ``message`` of ``seat``
#: (:meth:`tgbot.sync.tapped.TappedPanels.redraw`).
Draw = Callable[[Table, int, Message, str, bool], Awaitable[None]]
#: ``load(game_id)``: the game's table now.
Load = Callable[[str], Awaitable[Table | None]]


@dataclass
class _Panel:
    """One panel's redraws: when the last ones began (clock seconds, at most :data:`BURST`), the
    latest tap not drawn yet (its table, message, picks and whether a «Refresh» was among the
    taps), and the task that will draw it."""

    drawn: deque[float] = field(default_factory=lambda: deque(maxlen=BURST))
    latest: tuple[Table, Message, str, bool] | None = None
    task: asyncio.Task[None] | None = None

    def free_at(self, window: float) -> float:
        """When the next redraw may begin: at once below the burst, else a window after the oldest."""
        return self.drawn[0] + window if len(self.drawn) == BURST else 0.0


class PanelRedraws:
    """Coalesces the redraws of each panel (by game and seat): :data:`BURST` within any
    ``BURST * every`` seconds, as Telegram takes a private chat's messages (short bursts allowed)."""

    def __init__(
        self, load: Load, draw: Draw, every: float = REDRAW_EVERY, clock: Callable[[], float] = time.monotonic
    ):
        self._load, self._draw, self.every, self._clock = load, draw, every, clock
        self.window = BURST * every
        self._panels: dict[tuple[str, int], _Panel] = {}
        self._sweep_at = 1024  # forget panels without a recent redraw when this many are known

    async def request(self, table: Table, seat: int, message: Message, picks: str, refresh: bool = False) -> None:
        """Redraw the panel ``message`` as ``table`` with ``picks``: now within the burst, else
        once a redraw is free again (with the latest tap's picks; a «Refresh» among the taps
        coalesced counts)."""
        key, now = (table.id, seat), self._clock()
        if len(self._panels) >= self._sweep_at:
            self._panels = {
                key: kept
                for key, kept in self._panels.items()
                if kept.task is not None or (kept.drawn and now - kept.drawn[-1] < self.window)
            }
            self._sweep_at = 2 * len(self._panels) + 1024
        panel = self._panels.setdefault(key, _Panel())
        if panel.task is None and now >= panel.free_at(self.window):
            panel.drawn.append(now)
            await self._draw(table, seat, message, picks, refresh)
            return
        refresh = refresh or (panel.latest is not None and panel.latest[3])
        panel.latest = (table, message, picks, refresh)
        if panel.task is None:
            panel.task = asyncio.create_task(self._later(key, panel), name=f"redraw-{table.id}-{seat}")

    async def _later(self, key: tuple[str, int], panel: _Panel) -> None:
        """Draw the panel's latest tap once a redraw is free: as the table is then, its picks kept
        only if the game has not moved on."""
        game_id, seat = key
        try:
            await asyncio.sleep(max(0.0, panel.free_at(self.window) - self._clock()))
            assert panel.latest is not None
            tapped, message, picks, refresh = panel.latest
            panel.latest = None
            panel.drawn.append(self._clock())
            table = await self._load(game_id)
            if table is not None and table.state is not None:
                moved = table.action_count != tapped.action_count
                await self._draw(table, seat, message, "" if moved else picks, refresh)
        except (TelegramError, RedisError) as error:
            about_game(log, game_id).warning("a panel's redraw: %s", error)
        finally:
            panel.task = None
            if panel.latest is not None and self._panels.get(key) is panel:  # a tap came while it drew
                panel.task = asyncio.create_task(self._later(key, panel), name=f"redraw-{game_id}-{seat}")

    def forget(self, game_id: str) -> None:
        """Drop an ended game's panels (a redraw under way is cancelled)."""
        for key in [key for key in self._panels if key[0] == game_id]:
            task = self._panels.pop(key).task
            if task is not None:
                task.cancel()

    async def idle(self) -> None:
        """Wait until no redraw waits (tests and shutdown)."""
        while tasks := [panel.task for panel in self._panels.values() if panel.task is not None]:
            await asyncio.gather(*tasks, return_exceptions=True)

    def close(self) -> None:
        """Cancel every redraw waiting and forget every panel."""
        for panel in self._panels.values():
            if panel.task is not None:
                panel.task.cancel()
        self._panels.clear()
