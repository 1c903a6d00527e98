"""A basic group upgraded to a supergroup: everything keyed by the old chat id moves to the new one,
each step safe to run again or twice at once (docs/DESIGN.md, A group upgraded to a supergroup)."""

from __future__ import annotations

import logging
from typing import Protocol

from tgbot.storage import stats
from tgbot.storage.records import Records

log = logging.getLogger(__name__)


class GameMover(Protocol):
    """The owner of the live games and of the records (:class:`tgbot.owner.store.Store`)."""

    @property
    def records(self) -> Records: ...

    async def move_games(self, old_chat_id: int, new_chat_id: int, also: tuple[str, ...] = ()) -> list[str]: ...


async def move_chat(store: GameMover, old_chat_id: int, new_chat_id: int, also: tuple[str, ...] = ()) -> list[str]:
    """Move group ``old_chat_id``'s games (and ``also`` those ended but not yet shown) and data to
    supergroup ``new_chat_id`` in docs/DESIGN.md's order; returns the games moved."""
    if old_chat_id == new_chat_id:
        return []
    records = store.records
    await records.set_chat_moved(old_chat_id, new_chat_id)
    games = await store.move_games(old_chat_id, new_chat_id, also=also)
    settings = await records.move_chat_settings(old_chat_id, new_chat_id)
    asked = await records.move_notify(old_chat_id, new_chat_id)
    players = await stats.move_board(records, old_chat_id, new_chat_id)
    if games or settings or asked or players:
        log.info(
            "chat %s became %s: %d games, %d settings, %d lobby notifications, %d leaderboard players moved",
            *(old_chat_id, new_chat_id, len(games), len(settings), asked, players),
        )
    return games
