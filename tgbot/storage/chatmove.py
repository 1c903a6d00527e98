"""A basic group upgraded to a supergroup: everything keyed by its chat id moves to the new id.

Telegram gives the supergroup a new chat id: service messages carry
``migrate_to_chat_id`` (in the old chat) and ``migrate_from_chat_id`` (in the new one), and a
send to the old id fails with 400 and ``parameters.migrate_to_chat_id``
(:class:`telegram.error.ChatMigrated`). Whichever of the three the bot sees first, and each one
after it, runs :func:`move_chat`: every step is safe to run again, and two runs at once (the
two service messages are in two chats, processed concurrently) change nothing twice.

What moves, in this order (keys: :mod:`tgbot.storage.keys`):

1. the record "``old`` became ``new``" (``<p>:chat:<old>:moved``), first, so a finished game
   that still names the old id counts on the new board and opens its «Play again» lobby there;
2. the live games (:meth:`tgbot.owner.store.Store.move_games`: the chat and topic index, the chat's
   games index and each table's chat id);
3. the settings (``<p>:chatcfg:<chat>``: language, turn timer, variant, seating): a setting the
   supergroup has already chosen stays;
4. the lobby notifications (``<p>:notify:<chat>`` and each asker's ``<p>:user:<id>:notify``);
5. the leaderboard (``<p>:top:{c<chat>}`` and its counted games; each player's index of boards):
   added to the supergroup's once, names the supergroup has kept.
"""

from __future__ import annotations

import logging

from tgbot.owner.store import Store
from tgbot.storage import stats

__all__ = ["move_chat"]

log = logging.getLogger(__name__)


async def move_chat(store: Store, old_chat_id: int, new_chat_id: int, also: tuple[str, ...] = ()) -> list[str]:
    """Move group ``old_chat_id``'s games and data to supergroup ``new_chat_id`` (see the
    module docstring). ``also``: ids of games to move even when no longer live (their end is
    still to be shown). Returns the ids of the games moved. Raises what redis-py raises; the
    update (or sync) that called it runs it again, which finishes what was left."""
    if old_chat_id == new_chat_id:
        return []
    await store.records.set_chat_moved(old_chat_id, new_chat_id)
    games = await store.move_games(old_chat_id, new_chat_id, also=also)
    settings = await store.records.move_chat_settings(old_chat_id, new_chat_id)
    asked = await store.records.move_notify(old_chat_id, new_chat_id)
    players = await stats.move_board(store, old_chat_id, new_chat_id)
    if games or settings or asked or players:
        log.info(
            "chat %s became %s: %d games, %d settings, %d lobby notifications, %d leaderboard players moved",
            old_chat_id,
            new_chat_id,
            len(games),
            len(settings),
            asked,
            players,
        )
    return games
