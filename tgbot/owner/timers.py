"""One asyncio timer per live game in the active process, at :func:`tgbot.game.play.next_timer` on
Redis's clock, fired through the same transaction as a tap (docs/DESIGN.md, Timers)."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable

from tgbot.game import play as game_play, table as game_table
from tgbot.game.table import Answer, Table
from tgbot.logs import about_game
from tgbot.owner.clock import RedisClock
from tgbot.owner.store import FencedError, Store

__all__ = ["Timers"]

log = logging.getLogger(__name__)


class Timers:
    """The active process's game timers."""

    def __init__(self, store: Store, clock: RedisClock, request_sync: Callable[[str], None]) -> None:
        """``request_sync(game_id)`` syncs a game's views after a fire that committed nothing."""
        self.store = store
        self.clock = clock
        self.request_sync = request_sync
        self._handles: dict[str, asyncio.TimerHandle] = {}
        self._firing: set[asyncio.Task[None]] = set()
        self._closed = False

    def schedule(self, table: Table) -> None:
        """Set game ``table.id``'s timer to :func:`game_play.next_timer` (an ended table's too), or none."""
        old = self._handles.pop(table.id, None)
        if old is not None:
            old.cancel()
        now = self.clock.now()
        due = game_play.next_timer(table, now)
        if self._closed or due is None:
            return
        loop = asyncio.get_running_loop()
        delay = max(0.0, due - now)
        self._handles[table.id] = loop.call_at(loop.time() + delay, self._fire, table.id)

    def _fire(self, game_id: str) -> None:
        self._handles.pop(game_id, None)
        task = asyncio.create_task(self.fire(game_id))
        self._firing.add(task)
        task.add_done_callback(self._firing.discard)

    async def fire(self, game_id: str) -> None:
        """Apply game ``game_id``'s deadline as it stands now (a stale one changes nothing); a
        failure is logged and the timer set again for a second try."""
        now = self.clock.now()
        try:
            done = await self.store.transact(game_id, lambda table: game_play.on_deadline(table, now))
        except game_table.RefusedError:
            return  # the game is gone
        except FencedError as e:
            about_game(log, game_id).warning("deadline left to the active process: %s", e)
            return
        except Exception:
            about_game(log, game_id).exception("deadline failed; trying again in 1 s")
            if not self._closed:
                loop = asyncio.get_running_loop()
                self._handles[game_id] = loop.call_at(loop.time() + 1.0, self._fire, game_id)
            return
        table = done.change.table
        if done.change.reply != Answer.UNCHANGED:
            before = done.before
            assert before is not None
            about_game(log, game_id, table.chat_id).info(
                "deadline fired: %s (%s due %.3f, turn %d)",
                done.change.reply,
                before.deadline_kind,
                before.deadline or 0.0,
                before.action_count,
            )
        elif table is done.before:
            self.schedule(table)  # nothing committed: a deadline that moved later
        self.request_sync(game_id)

    async def close(self) -> None:
        """Cancel every timer (this process is no longer the active one)."""
        self._closed = True
        for handle in self._handles.values():
            handle.cancel()
        self._handles.clear()
        for task in list(self._firing):
            task.cancel()
        await asyncio.gather(*self._firing, return_exceptions=True)

    def pending(self) -> int:
        """The number of games with a timer set."""
        return len(self._handles)
