"""/language: a group's language (chat admins) or a person's own, and its buttons."""

from __future__ import annotations

import contextlib

from telegram import MaybeInaccessibleMessage, Message, Update
from telegram.constants import ChatType
from telegram.error import BadRequest

from tgbot import i18n
from tgbot.game import lobby as game_lobby
from tgbot.game.rights import Action, allowed, refusal
from tgbot.game.table import Answer, RefusedError, Status
from tgbot.handlers.common import Press, TapDone
from tgbot.handlers.context import BotContext
from tgbot.handlers.identity import is_admin
from tgbot.render.menus import language_menu, language_set


async def language_command(update: Update, context: BotContext) -> None:
    """``/language``: in a group, buttons for the group's language (chat admins); in private,
    for the person's own language."""
    chat = update.effective_chat
    assert chat is not None
    group = chat.type != ChatType.PRIVATE
    language = await context.group_language(chat.id) if group else await context.language()
    menu = language_menu(language, group)
    await context.reply(menu.text, menu.markup)


async def set_group_language(
    context: BotContext, chat_id: int, message: MaybeInaccessibleMessage | None, language: str
) -> None:
    """Store the group's language; the open lobby of the message's topic follows it (every open
    lobby of the chat when the message is inaccessible: its topic is unknown)."""
    await context.store.records.set_chat_settings(chat_id, lang=language)
    if isinstance(message, Message) and message.is_accessible:  # (PTB parses an inaccessible one as a Message too)
        thread = message.message_thread_id if message.is_topic_message else None
        table = await context.store.chat_game(chat_id, thread)
        tables = [table] if table is not None else []
    else:
        tables = await context.store.chat_games(chat_id)
    for table in tables:
        if table.status is Status.LOBBY:
            with contextlib.suppress(RefusedError):  # (started or closed meanwhile)
                await context.transact(table.id, lambda table: game_lobby.set_lang(table, language))


async def set_language(press: Press) -> TapDone:
    """A /language choice: stored; the open lobby (group) or the person's live seats (private)
    follow it; answered in the new language, then the menu becomes the confirmation."""
    services, language, message = press.services, i18n.supported(press.tap.arg), press.query.message
    if language is None or message is None:
        raise RefusedError(Answer.BAD_BUTTON)
    group = message.chat.type != ChatType.PRIVATE
    if group:
        admin = await is_admin(press.context, message.chat.id, press.update)
        if not allowed(Action.GROUP_LANGUAGE, None, press.user_id, admin):
            raise RefusedError(refusal(Action.GROUP_LANGUAGE))
        await set_group_language(press.context, message.chat.id, message, language)
    else:
        await services.store.records.set_user_lang(press.user_id, language)
        for table in await services.store.user_games(press.user_id):
            await press.context.transact(
                table.id, lambda table: game_lobby.set_seat_lang(table, press.user_id, language)
            )

    async def confirm() -> None:
        if isinstance(message, Message):
            with contextlib.suppress(BadRequest):  # not modified
                await message.edit_text(language_set(language, group))

    return TapDone(Answer.OK, language=language, then=confirm)
