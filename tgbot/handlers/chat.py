"""Chats and their members: a member leaves, the bot is blocked, removed or restricted, a group
becomes a supergroup (https://core.telegram.org/bots/api#chatmemberupdated)."""

from __future__ import annotations

import logging

from telegram import ChatMember, Update
from telegram.constants import ChatMemberStatus, ChatType

from tgbot.game import lobby as game_lobby
from tgbot.game.table import Ending, RefusedError
from tgbot.handlers.context import BotContext, Services
from tgbot.handlers.identity import departed_user, is_gone
from tgbot.logs import about_game
from tgbot.storage import chatmove

log = logging.getLogger(__name__)


async def member_left(update: Update, context: BotContext) -> None:
    """A member left the group or was removed (a ``chat_member`` update, which admin bots get,
    or a ``left_chat_member`` message, in General in a forum): they lose what they had in
    every live game of the chat, whatever its topic."""
    chat, user = update.effective_chat, departed_user(update)
    if chat is not None and user is not None and not user.is_bot:
        await unseat_everywhere(context, chat.id, user.id)


async def unseat_everywhere(context: BotContext, chat_id: int, user_id: int) -> None:
    """``user_id`` left ``chat_id``: in each live game of the chat the AI takes their seat in a
    running game; a lobby drops their seat and their join link (:func:`game_lobby.member_gone`)."""
    now, timeout = context.services.now(), context.services.settings.lobby_timeout
    for table in await context.store.chat_games(chat_id):
        if table.seat_of(user_id) is None and user_id not in table.link_offers:
            continue
        try:
            await context.transact(table.id, lambda table: game_lobby.member_gone(table, user_id, now, timeout))
        except RefusedError:
            continue  # the game ended meanwhile
        about_game(log, table.id, chat_id).info("user %s left the chat: off the game", user_id)


def _can_write(member: ChatMember) -> bool:
    """Whether the bot, a member, may post (restricted: only with ``can_send_messages``)."""
    return member.status != ChatMemberStatus.RESTRICTED or bool(getattr(member, "can_send_messages", False))


async def on_my_member(update: Update, context: BotContext) -> None:
    """``my_chat_member``: in private, blocked or unblocked (:func:`set_reachable`); in a group,
    removed (its live games end, ``bot_removed``) or its right to write changed (the games go
    on, their announcements wait: :meth:`tgbot.sync.syncer.Syncer.group_rights_changed`)."""
    services, change = context.services, update.my_chat_member
    assert change is not None
    chat, new = change.chat, change.new_chat_member
    if chat.type == ChatType.PRIVATE:
        await set_reachable(services, chat.id, new.status == ChatMemberStatus.MEMBER)
    elif is_gone(new):
        await _end_chat_games(context, chat.id)
    else:
        await services.syncer.group_rights_changed(chat.id, _can_write(new))


async def set_reachable(
    services: Services, user_id: int, reachable: bool, telegram_language: str | None = None
) -> None:
    """Record whether the bot may write to ``user_id`` (and their Telegram app's language, when
    known). Lost: their seats in running games are marked unreachable (each group is told once).
    Regained: their panels come back."""
    was = await services.store.records.can_dm(user_id)
    await services.store.records.set_dm(user_id, reachable, telegram_language)
    if reachable and not was:
        await services.syncer.reachable_again(user_id)
    elif not reachable and was:
        await services.syncer.unreachable(user_id)


async def on_left_member(update: Update, context: BotContext) -> None:
    """A ``left_chat_member`` message: the bot itself (the chat's games end), or a player."""
    message = update.effective_message
    if message is not None and message.left_chat_member is not None and message.left_chat_member.id == context.bot.id:
        await _end_chat_games(context, message.chat_id)
    else:
        await member_left(update, context)


async def _end_chat_games(context: BotContext, chat_id: int) -> None:
    """The bot is out of ``chat_id``: its live games end without result."""
    for table in await context.store.chat_games(chat_id):
        try:
            await context.transact(
                table.id, lambda table: game_lobby.cancel(table, None, True, reason=Ending.BOT_REMOVED)
            )
        except RefusedError:
            continue
        about_game(log, table.id, chat_id).info("ended: bot removed from the chat")


async def on_migrate(update: Update, context: BotContext) -> None:
    """A group became a supergroup (``migrate_to_chat_id`` in the old chat,
    ``migrate_from_chat_id`` in the new): its games, settings, leaderboard and notifications
    move to the new id (:func:`chatmove.move_chat`; the second message changes nothing)."""
    message = update.effective_message
    assert message is not None
    if message.migrate_to_chat_id:
        old, new = message.chat_id, message.migrate_to_chat_id
    elif message.migrate_from_chat_id:
        old, new = message.migrate_from_chat_id, message.chat_id
    else:
        return
    for game_id in await chatmove.move_chat(context.store, old, new):
        about_game(log, game_id, new).info("moved from chat %s", old)
