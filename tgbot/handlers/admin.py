"""A group's creator and admins: /stop_game, /kick, /timer, /settings and their taps."""

from __future__ import annotations

import contextlib
from collections.abc import Awaitable, Callable

from telegram import Message, Update
from telegram.error import BadRequest

import core
from tgbot import i18n
from tgbot.codec import Setting, person
from tgbot.game import lobby as game_lobby
from tgbot.game.rights import Action, allowed, refusal
from tgbot.game.table import Answer, RefusedError, Status
from tgbot.handlers.common import Press, TapDone, answered_question, chat_table, command_transact, current_chat
from tgbot.handlers.context import BotContext, Services
from tgbot.handlers.identity import actor_id, is_admin, may_manage, replied_user
from tgbot.handlers.language import set_group_language
from tgbot.render.announcements import note
from tgbot.render.answers import answer
from tgbot.render.menus import settings_menu, stop_confirm, timer_menu
from tgbot.render.text import Rendered

#: The turn timer's choices offered to chat admins (seconds), and "long" (an hour): never off.
TIMER_CHOICES = (30, 60, 90, 180, 300, 600)
LONG_TIMER = 3600


async def stop_game(update: Update, context: BotContext) -> None:
    """``/stop_game`` (creator or chat admin): end the chat's lobby at once, or its running game
    after a confirming button (:func:`confirm_stop`), without result."""
    table, language = await chat_table(context, update)
    if table is None:
        return
    user_id, admin = await may_manage(context, table, update)
    if table.status is Status.PLAYING:
        if not allowed(Action.STOP_GAME, table, user_id, admin):
            await context.reply(answer(refusal(Action.STOP_GAME), language))
            return
        rendered = stop_confirm(table, user_id)
        await context.reply(rendered.text, rendered.markup)
        return
    await command_transact(context, table, language, lambda table: game_lobby.cancel(table, user_id, admin))


async def confirm_stop(press: Press) -> TapDone:
    """«Yes, stop the game»: acts for who asked only (an anonymous admin's: for any admin)."""
    table = await press.services.store.load(press.tap.game_id)
    if table is None:
        raise RefusedError(Answer.NO_GAME)
    user_id, admin = await may_manage(press.context, table, press.update)
    if press.tap.arg != person(user_id) and not (press.tap.arg == person(0) and admin):
        raise RefusedError(
            Answer.NOT_FOR_YOU if allowed(Action.STOP_GAME, table, user_id, admin) else refusal(Action.STOP_GAME)
        )
    done = await press.context.transact(table.id, lambda table: game_lobby.cancel(table, user_id, admin))
    return answered_question(press, TapDone(done.change.reply, done.change.table))


async def kick_command(update: Update, context: BotContext) -> None:
    """``/kick`` as a reply (creator or chat admin): the AI takes the replied-to player's seat
    (a lobby just loses them)."""
    services = context.services
    table, language = await chat_table(context, update)
    if table is None:
        return
    target = replied_user(update)
    if target is None:
        await context.reply(note("kick_reply", language))
        return
    user_id, admin = await may_manage(context, table, update)
    now, timeout = services.now(), services.settings.lobby_timeout
    change = await command_transact(
        context, table, language, lambda table: game_lobby.kick(table, target.id, user_id, admin, now, timeout)
    )
    if change is not None and change.reply == Answer.NOT_PLAYING:
        await context.reply(answer(Answer.NOT_PLAYING, language))


Menu = Callable[[Services, int, str], Awaitable[Rendered]]


async def _admin_menu(update: Update, context: BotContext, menu: Menu, action: Action) -> None:
    """Post a chat admins' menu (``await menu(services, chat_id, language)``); to anyone else
    the refusal naming ``action``'s rule."""
    services, chat = context.services, update.effective_chat
    assert chat is not None
    language = await context.group_language(chat.id)
    if not allowed(action, None, actor_id(update), await is_admin(context, chat.id, update)):
        await context.reply(answer(refusal(action), language))
        return
    rendered = await menu(services, chat.id, language)
    await context.reply(rendered.text, rendered.markup)


async def _timer_menu(services: Services, chat_id: int, language: str) -> Rendered:
    current = await services.store.records.chat_turn_timeout(chat_id, services.settings.turn_timeout)
    return timer_menu(language, chat_id, current, TIMER_CHOICES)


async def _settings_menu(services: Services, chat_id: int, language: str) -> Rendered:
    """The /settings menu as stored now, in the chat's language (``language`` until one is set:
    :meth:`BotContext.group_language`)."""
    chat_settings = await services.store.records.chat_settings(chat_id)
    turn_timeout = await services.store.records.chat_turn_timeout(chat_id, services.settings.turn_timeout)
    return settings_menu(
        i18n.pick_language(chat_settings.lang, language),
        chat_id,
        chat_settings,
        turn_timeout,
        TIMER_CHOICES,
        LONG_TIMER,
    )


async def timer_command(update: Update, context: BotContext) -> None:
    """``/timer`` in a group (chat admins): the turn timer's choices as buttons."""
    await _admin_menu(update, context, _timer_menu, Action.TIMER)


async def settings_command(update: Update, context: BotContext) -> None:
    """``/settings`` in a group (chat admins): the chat's variant, turn timer, language and
    seating as buttons on one message, edited in place by each choice."""
    await _admin_menu(update, context, _settings_menu, Action.SETTINGS)


def _timer_seconds(arg: str) -> int:
    """The seconds of a timer choice (digits, or ``long``). Raises ``RefusedError(BAD_BUTTON)``."""
    seconds = LONG_TIMER if arg == "long" else int(arg) if arg.isdigit() else 0
    if seconds not in (*TIMER_CHOICES, LONG_TIMER):
        raise RefusedError(Answer.BAD_BUTTON)
    return seconds


async def _admins_chat(press: Press, action: Action) -> int:
    """The chat a timer or settings button names (its id now), if the presser is its admin."""
    try:
        chat_id = await current_chat(press.services.store, int(press.tap.game_id))
    except ValueError:
        raise RefusedError(Answer.BAD_BUTTON) from None
    if not allowed(action, None, press.user_id, await is_admin(press.context, chat_id, press.update)):
        raise RefusedError(refusal(action))
    return chat_id


async def set_timer(press: Press) -> TapDone:
    """A /timer choice: the chat's turn timer (30–600 s, or an hour)."""
    seconds = _timer_seconds(press.tap.arg)
    chat_id = await _admins_chat(press, Action.TIMER)
    await press.services.store.records.set_chat_turn_timeout(chat_id, seconds)
    return TapDone(Answer.TIMER_SET)


async def apply_setting(press: Press) -> TapDone:
    """A /settings choice: stored, then the menu redrawn in place after the answer."""
    services, store, message = press.services, press.services.store, press.query.message
    try:
        kind, value = Setting(press.tap.arg[:1]), press.tap.arg[1:]
    except ValueError:
        raise RefusedError(Answer.BAD_BUTTON) from None
    seconds = _timer_seconds(value) if kind is Setting.TIMER else 0
    valid = {Setting.VARIANT: value in core.VARIANTS, Setting.SEATING: value in ("join", "shuffle")}
    if not valid.get(kind, True) or (kind is Setting.LANGUAGE and not i18n.supported(value)):
        raise RefusedError(Answer.BAD_BUTTON)
    chat_id = await _admins_chat(press, Action.SETTINGS)
    if kind is Setting.TIMER:
        await store.records.set_chat_turn_timeout(chat_id, seconds)
    elif kind is Setting.VARIANT:
        await store.records.set_chat_settings(chat_id, variant=value)
    elif kind is Setting.SEATING:
        await store.records.set_chat_settings(chat_id, seating=value)
    else:
        await set_group_language(press.context, chat_id, message, value)
    rendered = await _settings_menu(services, chat_id, await press.context.group_language(chat_id))

    async def redraw() -> None:
        if isinstance(message, Message):
            with contextlib.suppress(BadRequest):  # not modified
                await message.edit_text(rendered.text, reply_markup=rendered.markup)

    return TapDone(Answer.SETTINGS_SAVED, then=redraw)
