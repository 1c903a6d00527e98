"""The tap framework (every tap answered once, before anything else the tap causes is sent) and
what several handlers share: the chat's table, a new seat, a command's transaction."""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Awaitable, Callable, Coroutine
from dataclasses import dataclass, replace
from typing import Any

from redis.exceptions import RedisError
from telegram import CallbackQuery, Message, Update
from telegram.constants import ChatType
from telegram.error import BadRequest, Forbidden, TelegramError
from telegram.ext import Application

from tgbot import i18n
from tgbot.codec import NOT_A_GAME, PANEL_OPS, CallbackDataError, Op, Tap, decode
from tgbot.game.table import Answer, Change, RefusedError, Seat, Table
from tgbot.handlers.context import BotContext, Services
from tgbot.handlers.identity import place, seat_for
from tgbot.logs import about_game
from tgbot.owner.store import FencedError, Store
from tgbot.render.answers import answer
from tgbot.render.board import no_game
from tgbot.sync.messages import answer_tap
from tgbot.sync.ratelimit import ThrottledError

log = logging.getLogger(__name__)


async def current_chat(store: Store, chat_id: int) -> int:
    """The id ``chat_id`` has now: its supergroup's once upgraded (:mod:`tgbot.storage.chatmove`)."""
    return await store.records.chat_moved_to(chat_id) or chat_id


async def chat_table(context: BotContext, update: Update, last: bool = False) -> tuple[Table | None, str]:
    """The live table of the update's chat and topic, and the language to answer in; without
    one, the group is told how to open one (``last``: and how the chat's last game ended)."""
    chat_id, thread = place(update)
    table = await context.store.chat_game(chat_id, thread)
    language = table.lang if table else await context.group_language(chat_id)
    if table is None:
        ended = await context.store.chat_last_game(chat_id, thread) if last else None
        await context.reply(no_game(language, ended))
    return table, language


async def new_seat(context: BotContext, update: Update, chat_id: int) -> Seat:
    """The sender's seat (:func:`identity.seat_for`) with the language it keeps
    (:func:`i18n.new_seat_language`). Raises ``RefusedError`` like seat_for."""
    seat = seat_for(update)
    user = update.effective_user
    assert user is not None
    group = (await context.store.records.chat_settings(chat_id)).lang
    own = await context.store.records.user_lang(user.id)
    return replace(seat, lang=i18n.new_seat_language(own, group, user.language_code))


async def command_transact(
    context: BotContext, table: Table, language: str, transition: Callable[[Table], Change]
) -> Change | None:
    """Apply a command's ``transition`` to ``table``; a refusal is the command's reply (and
    ``None`` is returned)."""
    try:
        done = await context.transact(table.id, transition)
    except RefusedError as refusal:
        await context.reply(answer(refusal.code, language))
        return None
    return done.change


# -- taps ------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Press:
    """A button press being handled: the decoded tap and who pressed (``user_id``)."""

    context: BotContext
    update: Update
    query: CallbackQuery
    tap: Tap
    user_id: int

    @property
    def services(self) -> Services:
        return self.context.services


@dataclass(frozen=True)
class TapDone:
    """What a tap came to: its answer (a code, or a deep link ``url``), the table after it,
    the answer's language when not the tapper's, and what follows the answer (``then``)."""

    answer: str
    table: Table | None = None
    url: str | None = None
    language: str | None = None
    then: Callable[[], Awaitable[None]] | None = None


TapAction = Callable[[Press], Awaitable[TapDone]]


def answered_question(press: Press, done: TapDone) -> TapDone:
    """``done``, and after its answer the tapped question (a «Yes, …» confirmation in the group)
    deleted: it is answered, and its button would only be refused from now on."""
    message, first = press.query.message, done.then

    async def delete() -> None:
        if first is not None:
            await first()
        if message is not None:
            with contextlib.suppress(BadRequest, Forbidden):  # already gone, or too old to delete
                await press.context.bot.delete_message(message.chat.id, message.message_id)

    return replace(done, then=delete)


def answering(action: TapAction) -> Callable[[Update, BotContext], Coroutine[Any, Any, None]]:
    """The PTB callback of a tap ``action``: decode, run it, answer the tap once, then what
    follows (``TapDone.then``). A refusal is answered with its code; a stale tap's panel is
    redrawn after that answer."""

    async def callback(update: Update, context: BotContext) -> None:
        query = update.callback_query
        assert query is not None
        try:
            tap = decode(query.data)
        except CallbackDataError:
            await answer_unknown_tap(update, context)
            return
        if tap.op in PANEL_OPS and not in_own_chat(query):
            # a panel's button on another chat's message (forged: a group's with the panel's id)
            await answer_tap(query, answer(Answer.NOT_FOR_YOU, await context.language()))
            return
        press = Press(context, update, query, tap, query.from_user.id)
        try:
            done = await action(press)
        except RefusedError as refusal:
            await _refused(press, refusal.code)
            return
        await _answer(press, done)

    return callback


def in_own_chat(query: CallbackQuery) -> bool:
    """Whether the tapped message is in the presser's own private chat with the bot (where their
    panels are): a panel's action acts on nothing else."""
    message = query.message
    return message is not None and message.chat.type == ChatType.PRIVATE and message.chat.id == query.from_user.id


async def _answer(press: Press, done: TapDone) -> None:
    """Answer the tap with ``done``, then what follows it."""
    if done.url:
        await answer_tap(press.query, url=done.url)
    else:
        language = done.language or await press.context.language(done.table)
        await answer_tap(press.query, answer(done.answer, language))
    if done.then is not None:
        try:
            await done.then()
        except TelegramError as error:  # after the answer: logged, the tap is never answered twice
            where = about_game(log, press.tap.game_id, done.table.chat_id if done.table is not None else None)
            where.warning("after the answer to a tap: %s", error)


async def _refused(press: Press, code: str) -> None:
    """Answer a refused tap; a stale one's panel is then redrawn as it is now."""
    tap = press.tap
    table = None if tap.op in NOT_A_GAME else await press.context.store.load(tap.game_id)
    await answer_tap(press.query, answer(code, await press.context.language(table)))
    if code == Answer.STALE and table is not None:
        await redraw_panel(press, table, "")


async def redraw_panel(press: Press, table: Table, picks: str) -> None:
    """Redraw the tapped panel of the presser's seat at ``table`` (no write to Redis), coalesced
    with their other taps' (:mod:`tgbot.sync.redraws`)."""
    seat, message = table.seat_of(press.user_id), press.query.message
    if seat is not None and table.state is not None and isinstance(message, Message):
        await press.services.syncer.redraws.request(table, seat, message, picks, refresh=press.tap.op is Op.REFRESH)


async def answer_unknown_tap(update: Update, context: BotContext) -> None:
    """A tap whose data this bot did not produce."""
    assert update.callback_query is not None
    language = await context.language()
    await answer_tap(update.callback_query, answer(Answer.BAD_BUTTON, language))


async def on_error(update: object, context: BotContext) -> None:
    """The error handler: anything but a fenced commit or a Redis failure (the runner's, the
    update is tried again) is logged (a reply dropped over Telegram's limit in one INFO line),
    and a tap is answered."""
    if isinstance(context.error, FencedError | RedisError):
        return
    if isinstance(context.error, ThrottledError):
        log.info(
            "a reply was dropped: its chat is over Telegram's message limit for %.0f s more", context.error.seconds
        )
    else:
        log.error("error while handling an update", exc_info=context.error)
    if isinstance(update, Update) and update.callback_query is not None:
        await answer_tap(update.callback_query)


async def tell_to_tap_again(update: Update, application: Application[Any, Any, Any, Any, Any, Any]) -> None:
    """A tap given up after repeated Redis failures: its player is told to tap again."""
    query = update.callback_query
    if query is None:
        return
    services: Services | None = application.bot_data.get("services")
    own = await services.store.records.user_lang(query.from_user.id) if services is not None else None
    await answer_tap(query, answer(Answer.TRY_AGAIN, i18n.pick_language(own)))
