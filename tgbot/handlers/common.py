"""What every handler shares: the :class:`Services`, the language of a reply, replies in a chat,
and the tap wrapper that answers every tap once, before anything else the tap causes is sent."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable, Coroutine
from dataclasses import dataclass, replace
from typing import Any

from redis.exceptions import RedisError
from telegram import CallbackQuery, InlineKeyboardMarkup, Message, Update
from telegram.error import BadRequest, Forbidden, TelegramError
from telegram.ext import Application, ContextTypes

from tgbot import i18n
from tgbot.codec import NOT_A_GAME, CallbackDataError, Tap, decode
from tgbot.game.table import Answer, Change, RefusedError, Seat, Table
from tgbot.handlers import budget
from tgbot.handlers.identity import place, seat_for
from tgbot.owner.clock import RedisClock
from tgbot.owner.store import FencedError, Store, game_id_for_update
from tgbot.owner.timers import Timers
from tgbot.render.answers import answer, answer_tap
from tgbot.render.board import no_game
from tgbot.settings import Settings
from tgbot.sync.ratelimit import ThrottledError
from tgbot.sync.syncer import Syncer

log = logging.getLogger(__name__)


@dataclass
class Services:
    """What the handlers share, kept in ``application.bot_data["services"]`` (set by the runner)."""

    settings: Settings
    store: Store
    syncer: Syncer
    username: str
    clock: RedisClock
    bot_id: str
    timers: Timers | None = None

    def now(self) -> float:
        """Epoch seconds on Redis's clock (every deadline is measured on it)."""
        return self.clock.now()

    def new_game_id(self, update: Update) -> str:
        """The id of the game ``update`` opens (the same for a second delivery of it)."""
        return game_id_for_update(self.bot_id, update.update_id)


def services_of(context: ContextTypes.DEFAULT_TYPE) -> Services:
    """The application's :class:`Services`."""
    services: Services = context.application.bot_data["services"]
    return services


# -- the language of a reply (the rules: tgbot.i18n; the lookups: here) ---------------------------


async def private_language(services: Services, update: Update, group_id: int | None = None) -> str:
    """The language of a message to the sender (:func:`i18n.message_language`); their group is
    ``group_id``'s setting, else that of a live game they sit in."""
    user = update.effective_user
    if user is None:
        return i18n.DEFAULT_LANGUAGE
    own = await services.store.user_lang(user.id)
    if i18n.supported(own):
        return i18n.pick_language(own)
    if group_id is not None:
        group = (await services.store.chat_settings(group_id)).lang
    else:
        games = await services.store.user_games(user.id)
        seat = games[0].seat_of(user.id) if games else None
        group = games[0].seat_language(seat) if seat is not None else None
    return i18n.message_language(own, group, user.language_code)


async def group_language(services: Services, chat_id: int) -> str:
    """The group's language: its setting, else the default."""
    return i18n.pick_language((await services.store.chat_settings(chat_id)).lang)


async def tap_language(services: Services, update: Update, table: Table | None) -> str:
    """The language of a tap's answer (:meth:`Table.language_for`; without a table, the
    tapper's private language)."""
    user = update.effective_user
    if table is None or user is None:
        return await private_language(services, update)
    seat = table.seat_of(user.id)
    own = None if seat is not None else await services.store.user_lang(user.id)
    return table.language_for(user.id, own)


# -- replies ---------------------------------------------------------------------------------------


async def reply(update: Update, text: str, markup: InlineKeyboardMarkup | None = None) -> None:
    """Reply in the update's chat (PTB keeps its forum topic; no quote: the Defaults); in a group
    only when :func:`budget.hush` allows."""
    message = update.effective_message
    if message is not None and await budget.hush(update) is None:
        await message.reply_text(text, reply_markup=markup)


async def tell(services: Services, user_id: int, text: str) -> bool:
    """A private message to ``user_id``; False when not sent (a 403 marks them unreachable, a
    transient error only loses it)."""
    try:
        await services.syncer.bot.send_message(user_id, text)
    except Forbidden:  # only a 403 means the user blocked the bot (or never started it)
        await services.store.set_dm(user_id, False)
        return False
    except TelegramError as error:  # a 429, a timeout, a 5xx: says nothing of the user
        log.info("private message to %s not sent: %s", user_id, error)
        return False
    return True


#: Fan-outs running off the update's path (kept referenced until done).
BACKGROUND: set[asyncio.Task[None]] = set()


def background(work: Coroutine[Any, Any, None]) -> None:
    """Run a slow fan-out (private notes to many people) off the update's path."""
    task = asyncio.create_task(work)
    BACKGROUND.add(task)
    task.add_done_callback(BACKGROUND.discard)


async def current_chat(services: Services, chat_id: int) -> int:
    """The id ``chat_id`` has now: its supergroup's once upgraded (:mod:`tgbot.storage.chatmove`)."""
    return await services.store.chat_moved_to(chat_id) or chat_id


async def chat_table(services: Services, update: Update, last: bool = False) -> tuple[Table | None, str]:
    """The live table of the update's chat and topic, and the language to answer in; without
    one, the group is told how to open one (``last``: and how the chat's last game ended,
    :meth:`~tgbot.owner.store.Store.chat_last_game`)."""
    chat_id, thread = place(update)
    table = await services.store.chat_game(chat_id, thread)
    language = table.lang if table else await group_language(services, chat_id)
    if table is None:
        ended = await services.store.chat_last_game(chat_id, thread) if last else None
        await reply(update, no_game(language, ended))
    return table, language


async def new_seat(services: Services, update: Update, chat_id: int) -> Seat:
    """The sender's seat (:func:`identity.seat_for`) with the language it keeps
    (:func:`i18n.private_language`). Raises ``RefusedError`` like seat_for."""
    seat = seat_for(update)
    user = update.effective_user
    assert user is not None
    group = (await services.store.chat_settings(chat_id)).lang
    own = await services.store.user_lang(user.id)
    return replace(seat, lang=i18n.private_language(own, group, user.language_code))


async def command_transact(
    services: Services, update: Update, table: Table, language: str, transition: Callable[[Table], Change]
) -> Change | None:
    """Apply a command's ``transition`` to ``table`` and sync its views; a refusal is the
    command's reply (and ``None`` is returned)."""
    try:
        done = await services.store.transact(table.id, transition)
    except RefusedError as refusal:
        await reply(update, answer(refusal.code, language))
        return None
    services.syncer.request(table.id)
    return done.change


# -- taps ------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Press:
    """A button press being handled: the decoded tap and who pressed (``user_id``)."""

    services: Services
    context: ContextTypes.DEFAULT_TYPE
    update: Update
    query: CallbackQuery
    tap: Tap
    user_id: int


@dataclass(frozen=True)
class TapDone:
    """What a tap came to: its answer (a code, or a deep link ``url``), the table after it,
    the answer's language when not the tapper's, what follows the answer (``then``), and
    whether the game's views are synced after it."""

    answer: str
    table: Table | None = None
    url: str | None = None
    language: str | None = None
    then: Callable[[], Awaitable[None]] | None = None
    sync: bool = True


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


def answering(action: TapAction) -> Callable[[Update, ContextTypes.DEFAULT_TYPE], Coroutine[Any, Any, None]]:
    """The PTB callback of a tap ``action``: decode, run it, answer the tap once, then what
    follows (``TapDone.then``) and the game's sync. A refusal is answered with its code; a
    stale tap's panel is redrawn after that answer."""

    async def callback(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        services, query = services_of(context), update.callback_query
        assert query is not None
        try:
            tap = decode(query.data)
        except CallbackDataError:
            await answer_unknown_tap(update, context)
            return
        press = Press(services, context, update, query, tap, query.from_user.id)
        try:
            done = await action(press)
        except RefusedError as refusal:
            await _refused(press, refusal.code)
            return
        await _answer(press, done)

    return callback


async def _answer(press: Press, done: TapDone) -> None:
    """Answer the tap with ``done``, then what follows it."""
    services, tap = press.services, press.tap
    try:
        if done.url:
            await answer_tap(press.query, url=done.url)
        else:
            language = done.language or await tap_language(services, press.update, done.table)
            await answer_tap(press.query, answer(done.answer, language))
    finally:
        if done.sync and tap.op not in NOT_A_GAME:
            services.syncer.request(tap.game_id)
    if done.then is not None:
        try:
            await done.then()
        except TelegramError as error:  # after the answer: logged, the tap is never answered twice
            log.warning("after the answer to a tap: %s", error)


async def _refused(press: Press, code: str) -> None:
    """Answer a refused tap; a stale one's panel is then redrawn as it is now."""
    services, tap = press.services, press.tap
    table = None if tap.op in NOT_A_GAME else await services.store.load(tap.game_id)
    await answer_tap(press.query, answer(code, await tap_language(services, press.update, table)))
    if code == Answer.STALE and table is not None:
        await redraw_panel(press, table, "")


async def redraw_panel(press: Press, table: Table, picks: str) -> None:
    """Redraw the tapped panel of the presser's seat at ``table`` (no write to Redis)."""
    seat, message = table.seat_of(press.user_id), press.query.message
    if seat is not None and table.state is not None and isinstance(message, Message):
        await press.services.syncer.redraw_panel(table, seat, message, picks)


async def answer_unknown_tap(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """A tap whose data this bot did not produce."""
    assert update.callback_query is not None
    language = await private_language(services_of(context), update)
    await answer_tap(update.callback_query, answer(Answer.BAD_BUTTON, language))


async def on_error(update: object, context: ContextTypes.DEFAULT_TYPE) -> None:
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
    own = await services.store.user_lang(query.from_user.id) if services is not None else None
    await answer_tap(query, answer(Answer.TRY_AGAIN, i18n.pick_language(own)))
