"""Handlers: decode the update, run one transaction, answer the tap, request a view sync.

Handlers stay thin (DESIGN.md): rules live in ``core``, table transitions in
:mod:`tgbot.game.model`, the transaction in :mod:`tgbot.owner.store`, texts in :mod:`tgbot.views.render`, and
Telegram's views in :mod:`tgbot.views.sync`. A tap is answered before the views are synced, so an
answer never waits on a rate limiter.
"""

from __future__ import annotations

import asyncio
import logging
import secrets
from dataclasses import dataclass, replace
from typing import Any, Callable, Coroutine, NamedTuple

from telegram import InputFile, Update
from telegram.constants import ChatMemberStatus, ChatType
from telegram.error import BadRequest, Forbidden, TelegramError
from redis.exceptions import RedisError
from telegram.ext import ContextTypes

import core
from core.cards import Hand, Rank

from tgbot.handlers import budget

from tgbot.storage import chatmove

from tgbot.game import model

from tgbot import views as render

from tgbot.storage import stats
from tgbot.handlers.identity import ANONYMOUS_ADMIN, actor_id, is_admin, may_manage, place, seat_for
from tgbot.handlers.identity import departed_user, replied_user, telegram_says_gone
from tgbot.codec import NOT_A_GAME, CallbackDataError, Tap, decode, person
from tgbot.ingest.stream import outcome
from tgbot.i18n import Translator, DEFAULT_LANGUAGE, pick_language, private_language, supported, translator
from tgbot.game.model import Answer, Change, RefusedError, Seat, Status, Table
from tgbot.process.clock import RedisClock
from tgbot.process.ratelimit import Throttled
from tgbot.settings import Settings
from tgbot.owner.store import FencedError, Store, game_id_for_update
from tgbot.views import Syncer
from tgbot.views.answers import answer_tap as answer

__all__ = [
    "Services", "start_game", "stop_game", "board_command", "start_private", "help_command", "rules_command",
    "language_command", "on_tap", "on_error", "on_my_member", "on_left_member", "on_migrate", "add_bot_command",
    "leave_command", "timer_command", "member_left", "ANONYMOUS_ADMIN", "TIMER_CHOICES", "LONG_TIMER",
    "settings_command", "stats_command", "top_command", "kick_command", "notify_command", "forget_command",
]

log = logging.getLogger(__name__)

#: Deep-link payloads start with this letter followed by the game id (t.me/<bot>?start=j<id>).
JOIN_PAYLOAD = "j"
#: The turn timer's settings offered to chat admins (seconds), and "long" (an hour): never off.
TIMER_CHOICES = (30, 60, 90, 180, 300, 600)
LONG_TIMER = 3600


@dataclass
class Services:
    """What the handlers share, kept in ``application.bot_data["svc"]``."""

    settings: Settings
    store: Store
    syncer: Syncer
    username: str
    clock: RedisClock
    bot_id: str
    timers: Any = None

    def now(self) -> float:
        """Epoch seconds on Redis's clock (every deadline is measured on it)."""
        return self.clock.now()

    def new_game_id(self, update: Update) -> str:
        """The id of the game ``update`` opens (the same for a second delivery of it)."""
        return game_id_for_update(self.bot_id, update.update_id)


def timing(s: "Services", turn_timeout: float) -> dict:
    """The timer arguments of :func:`tgbot.game.model.start`: the chat's turn timeout, the AI seats'
    pause range (AI_PAUSE_MIN/MAX) and their least pause, the group's message spacing (RATE_GROUP_PERIOD / RATE_GROUP_MAX), so the
    board keeps up with the bots."""
    st = s.settings
    return {"turn_timeout": turn_timeout, "ai_delay": st.rate_group_period / st.rate_group_max, "ai_pause": (st.ai_pause_min, max(st.ai_pause_min, st.ai_pause_max))}


async def _start_fn(s: "Services", table: Table, user_id: int | None, admin: bool) -> Callable[[Table], Change]:
    seed, now = secrets.randbits(64), s.now()
    kw = timing(s, await s.store.chat_turn_timeout(table.chat_id, s.settings.turn_timeout))
    shuffle = (await s.store.chat_settings(table.chat_id)).shuffle
    return lambda t: model.start(t, user_id, admin, seed, now=now, shuffle=shuffle, **kw)


def svc(context: ContextTypes.DEFAULT_TYPE) -> Services:
    return context.application.bot_data["svc"]


async def _private_lang(s: Services, update: Update, group_id: int | None = None) -> str:
    """The language of a message to the user (DESIGN.md, i18n): their own choice (/language
    in private), else the group's language (``group_id``'s setting when the request came from
    a group, else that of a live game they sit in), else their Telegram language when
    supported, else Russian."""
    user = update.effective_user
    if user is None:
        return DEFAULT_LANGUAGE
    own = await s.store.user_lang(user.id)
    if supported(own):
        return own  # type: ignore[return-value]
    if group_id is not None:
        group = (await s.store.chat_settings(group_id)).lang
    else:
        games = await s.store.user_games(user.id)
        group = render.seat_translator(games[0], games[0].seat_of(user.id)).lang if games else None  # type: ignore[arg-type]
    return pick_language(group, user.language_code)


async def _current_chat(s: Services, chat_id: int) -> int:
    """The id chat ``chat_id`` has now: the supergroup it became when it was upgraded
    (:mod:`tgbot.storage.chatmove`), else itself. For ids a button carries (settings, «Play again»)."""
    return await s.store.chat_moved_to(chat_id) or chat_id


async def _group_lang(s: Services, chat_id: int) -> str:
    """The group's language (its setting, Russian by default)."""
    return pick_language((await s.store.chat_settings(chat_id)).lang)


async def _chat_table(s: Services, update: Update) -> tuple[Table | None, Translator]:
    """The live table of the update's chat (topic) and the translator to answer in; when
    there is none, the group is told how to open one and the table is ``None``."""
    chat = update.effective_chat
    assert chat is not None
    table = await s.store.chat_game(*place(update))
    tr = translator(table.lang if table else await _group_lang(s, chat.id))
    if table is None:
        await _reply(update, tr.t("There is no game here. /start_game opens one."))
    return table, tr


async def _tap_lang(s: Services, update: Update, table: Table | None) -> str:
    """The language of a tap's answer: the tapper's seat language in ``table``, else their own
    choice, else the table's language, else their private language."""
    user = update.effective_user
    if table is not None and user is not None:
        seat = table.seat_of(user.id)
        if seat is not None:
            return table.seats[seat].lang or table.lang
        return pick_language(await s.store.user_lang(user.id), table.lang)
    return await _private_lang(s, update)


async def _seat_for(s: Services, update: Update, chat_id: int) -> Seat:
    """The sender's seat (:func:`identity.seat_for`) with their private language resolved
    (:func:`i18n.private_language`). Raises ``RefusedError(Answer.ANONYMOUS)`` like seat_for."""
    seat = seat_for(update)
    user = update.effective_user
    assert user is not None
    group = (await s.store.chat_settings(chat_id)).lang
    return replace(seat, lang=private_language(await s.store.user_lang(user.id), group, user.language_code))


async def _reply(update: Update, text: str, markup: Any = None) -> None:
    """Reply in the update's chat (its forum topic): the one way a command's answer reaches a
    group, so it is posted only when :func:`tgbot.handlers.budget.hush` allows (a bystander during a
    game, a repeated command, a spent budget: nothing is posted)."""
    msg = update.effective_message
    if msg is None or await budget.hush(update) is not None:
        return
    await msg.reply_text(text, reply_markup=markup, do_quote=False, message_thread_id=msg.message_thread_id if msg.is_topic_message else None)


# -- group commands --------------------------------------------------------------------------------


async def start_game(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """``/start_game`` in a group: open a lobby (one live game per chat or forum topic)."""
    s = svc(context)
    chat, msg = update.effective_chat, update.effective_message
    assert chat is not None and msg is not None
    if chat.type == ChatType.PRIVATE:
        tr = translator(await _private_lang(s, update))
        await _reply(update, tr.t("Add me to a group and send /start_game there."))
        return
    tr = translator(await _group_lang(s, chat.id))
    _, thread = place(update)
    existing = await s.store.chat_game(chat.id, thread)
    gid = s.new_game_id(update)
    if existing is not None:
        if existing.id != gid:  # (else: this very update opened it, before a crash)
            await _reply(update, translator(existing.lang).t("A game is already open here. /board shows it."))
        return
    if not await s.store.claim_chat(chat.id, thread, gid):
        await _reply(update, tr.t("A game is already open here. /board shows it."))
        return
    now = s.now()
    creator = actor_id(update)  # 0: an anonymous admin (never seated): admins only
    variant = (await s.store.chat_settings(chat.id)).variant or "russian"
    table = model.open_lobby(gid, chat.id, thread, creator, chat.title or "", now, s.settings.lobby_timeout, variant=variant, lang=tr.lang)
    if creator and await s.store.can_dm(creator):
        table = model.join(table, await _seat_for(s, update, chat.id), now, s.settings.lobby_timeout).table
    await _open(s, table)


async def _open(s: Services, table: Table) -> None:
    """Store a new lobby (its chat already claimed), show it, and tell privately, at most
    once, the people who asked (/notify_me) to hear of the chat's next lobby."""
    if not await s.store.create(table):
        return  # (this very update created it, before a crash)
    log.info("lobby %s opened in chat %s", table.id, table.chat_id)
    users = await stats.take_notify(s.store, table.chat_id)
    if users:
        _background(_notify_lobby(s, table, users))


_BACKGROUND: set[asyncio.Task[None]] = set()


def _background(work: Coroutine[Any, Any, None]) -> None:
    """Run a slow fan-out (private notes to many people) off the update's path."""
    task = asyncio.create_task(work)
    _BACKGROUND.add(task)
    task.add_done_callback(_BACKGROUND.discard)


async def _notify_lobby(s: Services, table: Table, users: list[int]) -> None:
    """Tell the people who asked (/notify_me) that a lobby opened (each at most once)."""
    for user_id in users:
        if table.seat_of(user_id) is not None or not await s.store.can_dm(user_id):
            continue
        lang = pick_language(await s.store.user_lang(user_id), table.lang)
        try:
            await s.syncer.bot.send_message(user_id, render.note("lobby_open", lang, group=render.title(table)))
        except Forbidden:  # only a 403 means the user blocked the bot (or never started it)
            await s.store.set_dm(user_id, False)
        except TelegramError as e:  # a 429, a timeout, a 5xx: transient, says nothing of the user
            log.info("lobby note to %s not sent: %s", user_id, e)


async def _tell(s: Services, user_id: int, text: str) -> None:
    """A short private note to ``user_id`` (a 403 marks them unreachable; a transient error
    only loses the note)."""
    try:
        await s.syncer.bot.send_message(user_id, text)
    except Forbidden:
        await s.store.set_dm(user_id, False)
    except TelegramError as e:
        log.info("private note to %s not sent: %s", user_id, e)


async def stop_game(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """``/stop_game``: end the chat's lobby at once, or its running game after a confirming
    button, without result (creator or chat admin)."""
    s = svc(context)
    table, tr = await _chat_table(s, update)
    if table is None:
        return
    user_id, admin = await may_manage(context, table, update)
    if table.status is Status.PLAYING:
        # A running game ends only after a confirming tap (``stopok``).
        if not admin and user_id != table.creator:
            await _reply(update, render.answer("not_allowed", tr.lang))
            return
        rendered = render.stop_confirm(table, user_id)
        await _reply(update, rendered.text, rendered.markup)
        return
    try:
        await s.store.transact(table.id, lambda t: model.cancel(t, user_id, admin))
    except RefusedError as e:
        await _reply(update, render.answer(e.code, tr.lang))
        return
    s.syncer.request(table.id)


async def board_command(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """``/board``: post the chat's board anew at the bottom."""
    s = svc(context)
    chat, msg = update.effective_chat, update.effective_message
    assert chat is not None and msg is not None
    table, _ = await _chat_table(s, update)
    if table is None or await budget.hush(update) is not None:
        return
    await s.syncer.post_board(table)


async def add_bot_command(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """``/add_bot`` in a group: seat an AI player in the chat's open lobby (creator or chat
    admin)."""
    s = svc(context)
    chat = update.effective_chat
    assert chat is not None
    table, _ = await _chat_table(s, update)
    if table is None:
        return
    names, now = render.BOT_NAMES, s.now()
    user_id, admin = await may_manage(context, table, update)
    try:
        done = await s.store.transact(table.id, lambda t: model.add_bot(t, names, now, s.settings.lobby_timeout, user_id=user_id, is_admin=admin))
    except RefusedError as e:
        await _reply(update, render.answer(e.code, table.lang))
        return
    await _maybe_autostart(s, done.change.table)
    s.syncer.request(table.id)


async def leave_command(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """``/leave`` in a group: leave the lobby at once, or a running game after confirming with a
    button (the AI then plays the seat, RULES.md table manners)."""
    s = svc(context)
    chat, user = update.effective_chat, update.effective_user
    assert chat is not None and user is not None
    table = await s.store.chat_game(chat.id, place(update)[1])
    tr = translator(table.lang if table else await _group_lang(s, chat.id))
    seat = table.seat_of(user.id) if table is not None else None
    if table is None or seat is None:
        await _reply(update, render.answer("not_seated", tr.lang))
        return
    if table.status is Status.LOBBY:
        try:
            await s.store.transact(table.id, lambda t: model.leave(t, user.id, s.now(), s.settings.lobby_timeout))
        except RefusedError as e:
            await _reply(update, render.answer(e.code, tr.lang))
            return
        s.syncer.request(table.id)
        return
    rendered = render.leave_confirm(table, seat)
    await _reply(update, rendered.text, rendered.markup)


async def timer_command(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """``/timer`` in a group (chat admins): the turn timer's choices as buttons."""

    async def menu(s: Services, chat_id: int, lang: str) -> render.Rendered:
        current = await s.store.chat_turn_timeout(chat_id, s.settings.turn_timeout)
        return render.timer_menu(lang, chat_id, current, TIMER_CHOICES)

    await _admin_menu(update, context, menu, "not_allowed")


async def _admin_menu(update: Update, context: ContextTypes.DEFAULT_TYPE, build: Callable, refusal: str) -> None:
    """Post a chat admins' menu (``await build(services, chat_id, lang)``) in a group; in
    private chat a hint, to anyone else the ``refusal`` answer."""
    s = svc(context)
    chat = update.effective_chat
    assert chat is not None
    private = chat.type == ChatType.PRIVATE
    tr = translator(await _private_lang(s, update) if private else await _group_lang(s, chat.id))
    if private:
        await _reply(update, tr.t("Add me to a group and send /start_game there."))
        return
    if not await is_admin(context, chat.id, update):
        await _reply(update, render.answer(refusal, tr.lang))
        return
    rendered = await build(s, chat.id, tr.lang)
    await _reply(update, rendered.text, rendered.markup)


def _timer_seconds(arg: str) -> int:
    """The seconds of a timer choice (digits, or ``long``); ``RefusedError(Answer.BAD_BUTTON)`` otherwise."""
    seconds = LONG_TIMER if arg == "long" else int(arg) if arg.isdigit() else 0
    if seconds not in (*TIMER_CHOICES, LONG_TIMER):
        raise RefusedError(Answer.BAD_BUTTON)
    return seconds


async def _set_timer(s: Services, context: ContextTypes.DEFAULT_TYPE, update: Update, tap: Tap) -> str:
    """A ``timer`` tap: a chat admin sets the chat's turn timer (30–600 s or an hour)."""
    try:
        chat_id = await _current_chat(s, int(tap.gid))
    except ValueError:
        raise RefusedError(Answer.BAD_BUTTON) from None
    seconds = _timer_seconds(tap.arg)
    if not await is_admin(context, chat_id, update):
        raise RefusedError(Answer.NOT_ALLOWED)
    await s.store.set_chat_turn_timeout(chat_id, seconds)
    return "timer_set"


async def member_left(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """A member left the group or was removed from it (a ``chat_member`` update, which only
    admin bots get, or a ``left_chat_member`` service message, which in a forum comes in
    General): they lose what they had in every live game of the chat, whatever its topic
    (:func:`_unseat_everywhere`)."""
    chat = update.effective_chat
    user = departed_user(update)
    if chat is None or user is None or user.is_bot:
        return
    await _unseat_everywhere(svc(context), chat.id, user.id)


async def _unseat_everywhere(s: Services, chat_id: int, user_id: int) -> None:
    """``user_id`` is no longer a member of ``chat_id``: in each live game of the chat (the
    chat's games index, :meth:`Store.chat_games`: General and every forum topic) the AI takes
    their seat in a running game, and a lobby drops their seat and their join link offer
    (:func:`model.member_gone`)."""
    for table in await s.store.chat_games(chat_id):
        if table.seat_of(user_id) is None and user_id not in table.link_offers:
            continue
        try:
            await s.store.transact(table.id, lambda t: model.member_gone(t, user_id, s.now(), s.settings.lobby_timeout))
        except RefusedError:
            continue  # the game ended meanwhile
        log.info("user %s left chat %s: off game %s", user_id, chat_id, table.id)
        s.syncer.request(table.id)


# -- private commands ------------------------------------------------------------------------------


async def start_private(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """``/start [j<gid>]`` in private chat: the bot may now write to this user; with a join
    payload, seat them in that lobby."""
    s = svc(context)
    user, chat = update.effective_user, update.effective_chat
    assert user is not None and chat is not None
    if chat.type != ChatType.PRIVATE:
        await help_command(update, context)
        return
    await _set_reachable(s, user.id, True)
    tr = translator(await _private_lang(s, update))
    payload = context.args[0] if context.args else ""
    if payload.startswith(JOIN_PAYLOAD) and len(payload) > 1:
        await _join_by_link(s, context, update, payload[1:], tr)
        return
    await _reply(update, tr.t("Hi! I run «I doubt it» card games in groups. Add me to a group and send /start_game there; I will send your cards here. /rules explains the game."))


async def _join_by_link(s: Services, context: ContextTypes.DEFAULT_TYPE, update: Update, gid: str, tr: Translator) -> None:
    """``/start j<gid>`` (the join deep link): seat the sender in lobby ``gid`` when the lobby
    offered them that link (their Join tap in the group, :func:`_offer_link`) and Telegram does
    not say they have left the group since (:func:`identity.telegram_says_gone`, asked only of
    someone the link was offered to; when it does, they lose their seats in the chat's games as
    if the bot had seen them go). Anyone else is refused (``link_not_yours``, ``no_game``) and
    sees nothing of the group: neither its title nor its players."""
    user = update.effective_user
    assert user is not None
    lobby = await s.store.load(gid)
    try:
        if lobby is None:
            raise RefusedError(Answer.NO_GAME)
        if not model.link_offered_to(lobby, user.id):
            raise RefusedError(Answer.LINK_NOT_YOURS)
        if await telegram_says_gone(context, lobby.chat_id, user.id):
            await _unseat_everywhere(s, lobby.chat_id, user.id)  # the bot missed their leaving
            raise RefusedError(Answer.LINK_NOT_YOURS)
        seat = await _seat_for(s, update, lobby.chat_id)
        done = await s.store.transact(gid, lambda t: model.join_by_link(t, seat, s.now(), s.settings.lobby_timeout))
    except RefusedError as e:
        await _reply(update, render.answer(e.code, tr.lang))
        return
    table = done.change.table
    tr = render.seat_translator(table, table.seat_of(user.id))  # type: ignore[arg-type]
    await _reply(update, tr.t("You joined the game in «{group}».", group=render.title(table)))
    await _maybe_autostart(s, table)
    s.syncer.request(gid)


async def help_command(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """``/help``: how to use the bot (see :func:`_private_text`)."""
    await _private_text(update, context, render.help_text)


async def rules_command(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """``/rules``: the rules of the game (see :func:`_private_text`)."""
    await _private_text(update, context, render.rules)


async def _private_text(update: Update, context: ContextTypes.DEFAULT_TYPE, text: Callable[[str], str]) -> None:
    """Answer /rules or /help in the user's private language, always in private chat
    (DESIGN.md: in a group they never eat the game's message budget). In a group: when the
    private message cannot be sent (the user never started the bot, an anonymous admin),
    a short hint goes to the group only if no game is running there; during a game the group
    gets nothing. When it was sent and no game is running, the group gets a one-line note."""
    s = svc(context)
    chat, user, msg = update.effective_chat, update.effective_user, update.effective_message
    assert chat is not None and msg is not None
    lang = await _private_lang(s, update, None if chat.type == ChatType.PRIVATE else chat.id)
    if chat.type == ChatType.PRIVATE:
        await _reply(update, text(lang))
        return
    sent = False
    if user is not None and actor_id(update):
        try:
            await context.bot.send_message(user.id, text(lang))
            sent = True
        except Forbidden:  # never started the bot, or blocked it
            await s.store.set_dm(user.id, False)
        except TelegramError as e:  # a 429, a timeout, a 5xx: transient, the user is still reachable
            log.info("private text to %s not sent: %s", user.id, e)
    if await budget.game_running(s.store, chat.id):
        return  # the group's message budget is the game's (any topic's)
    await _reply(update, render.private_hint(await _group_lang(s, chat.id), sent))


async def language_command(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """``/language``: in a group, buttons to set the group's language (chat admins); in
    private chat, buttons to set the user's own language for private messages."""
    s = svc(context)
    chat = update.effective_chat
    assert chat is not None
    group = chat.type != ChatType.PRIVATE
    lang = await _group_lang(s, chat.id) if group else await _private_lang(s, update)
    menu = render.language_menu(lang, group)
    await _reply(update, menu.text, menu.markup)


async def _set_language(s: Services, context: ContextTypes.DEFAULT_TYPE, update: Update, lang: str) -> str:
    """A /language button: store the choice, bring the open lobby (group) or the user's live
    seats (private) in line, show the confirmation. Returns the answer's language."""
    query = update.callback_query
    assert query is not None and query.message is not None
    chat = query.message.chat
    user_id = query.from_user.id
    group = chat.type != ChatType.PRIVATE
    if group:
        if not await is_admin(context, chat.id, update):
            raise RefusedError(Answer.ADMINS_ONLY)
        await _set_group_lang(s, chat.id, query.message, lang)
    else:
        await s.store.set_user_lang(user_id, lang)
        for table in await s.store.user_games(user_id):
            await s.store.transact(table.id, lambda t: model.set_seat_lang(t, user_id, lang))
            s.syncer.request(table.id)
    try:
        await query.message.edit_text(render.language_set(lang, group))  # type: ignore[union-attr]
    except BadRequest:
        pass
    return lang


async def _set_group_lang(s: Services, chat_id: int, message, lang: str) -> None:
    """Store the group's language and bring the open lobby of the message's topic in line."""
    await s.store.set_chat_settings(chat_id, lang=lang)
    thread = message.message_thread_id if getattr(message, "is_topic_message", False) else None
    table = await s.store.chat_game(chat_id, thread)
    if table is not None and table.status is Status.LOBBY:
        await s.store.transact(table.id, lambda t: model.set_lang(t, lang))
        s.syncer.request(table.id)


# -- settings, statistics, admin tools -------------------------------------------------------------


async def _settings_menu(s: Services, chat_id: int, lang: str | None = None) -> render.Rendered:
    """The /settings menu of a chat as stored now (``lang`` unused: the menu follows the chat's)."""
    cfg = await s.store.chat_settings(chat_id)
    turn = await s.store.chat_turn_timeout(chat_id, s.settings.turn_timeout)
    return render.settings_menu(pick_language(cfg.lang), chat_id, cfg, turn, TIMER_CHOICES, LONG_TIMER)


async def settings_command(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """``/settings`` in a group (chat admins): the chat's variant, turn timer, language and
    seating as buttons on one message, edited in place by each choice."""
    await _admin_menu(update, context, _settings_menu, "admins_only")


async def _apply_setting(s: Services, context: ContextTypes.DEFAULT_TYPE, update: Update, tap: Tap) -> str:
    """A /settings tap (chat admins): store the choice, redraw the menu in place."""
    query = update.callback_query
    assert query is not None
    try:
        chat_id = await _current_chat(s, int(tap.gid))
    except ValueError:
        raise RefusedError(Answer.BAD_BUTTON) from None
    kind, value = tap.arg[:1], tap.arg[1:]
    if kind == "t":
        seconds = _timer_seconds(value)
    elif not ((kind == "v" and value in core.VARIANTS) or (kind == "s" and value in ("join", "shuffle")) or (kind == "l" and supported(value))):
        raise RefusedError(Answer.BAD_BUTTON)
    if not await is_admin(context, chat_id, update):
        raise RefusedError(Answer.ADMINS_ONLY)
    if kind == "t":
        await s.store.set_chat_turn_timeout(chat_id, seconds)
    elif kind == "v":
        await s.store.set_chat_settings(chat_id, variant=value)
    elif kind == "s":
        await s.store.set_chat_settings(chat_id, seating=value)
    else:
        await _set_group_lang(s, chat_id, query.message, value)
    rendered = await _settings_menu(s, chat_id)
    try:
        await query.message.edit_text(rendered.text, reply_markup=rendered.markup)  # type: ignore[union-attr]
    except BadRequest:
        pass  # not modified
    return "settings_saved"


async def stats_command(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """``/stats``: the sender's figures, or (as a reply) those of the replied-to person."""
    s = svc(context)
    msg, user = update.effective_message, update.effective_user
    assert msg is not None
    target = replied_user(update) or user
    if target is None or target.is_bot:
        return
    totals, places = await stats.totals(s.store, target.id)
    await _answer_quietly(update, context, lambda lang: render.stats_text(lang, target.full_name, totals, places))


async def top_command(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """``/top`` in a group: the chat's leaderboard (most wins; at least 3 games to be listed)."""
    s = svc(context)
    chat = update.effective_chat
    assert chat is not None
    rows = await stats.top(s.store, chat.id)
    await _answer_quietly(update, context, lambda lang: render.top_text(lang, rows, stats.MIN_TOP_GAMES))


async def kick_command(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """``/kick`` as a reply (creator or chat admin): the AI takes the replied-to player's seat
    (a lobby just loses them)."""
    s = svc(context)
    chat, msg = update.effective_chat, update.effective_message
    assert chat is not None and msg is not None
    table, tr = await _chat_table(s, update)
    if table is None:
        return
    target = replied_user(update)
    if target is None:
        await _reply(update, render.note("kick_reply", tr.lang))
        return
    user_id, admin = await may_manage(context, table, update)
    now = s.now()
    try:
        done = await s.store.transact(table.id, lambda t: model.kick(t, target.id, user_id, admin, now, s.settings.lobby_timeout))
    except RefusedError as e:
        await _reply(update, render.answer(e.code, tr.lang))
        return
    if done.change.reply == "not_seated":
        await _reply(update, render.answer("not_seated", tr.lang))
    s.syncer.request(table.id)


async def notify_command(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """``/notify_me`` in a group: the sender is told privately when the next lobby opens there."""
    s = svc(context)
    chat, user = update.effective_chat, update.effective_user
    assert chat is not None
    lang = await _private_lang(s, update, chat.id)
    if chat.type == ChatType.PRIVATE or user is None or not actor_id(update):
        await _reply(update, translator(lang).t("Add me to a group and send /start_game there."))
        return
    if not await s.store.can_dm(user.id):
        await _reply(update, render.private_hint(lang, False))
        return
    await stats.want_notify(s.store, chat.id, user.id)
    if await budget.hush(update) is budget.Hush.GAME:  # a bystander of a running game: privately
        await _tell(s, user.id, render.note("notify_on_private", lang, group=render.group_title(chat.title or "")))
        return
    await _reply(update, render.note("notify_on", lang))


async def forget_command(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """``/forget_me`` in private chat: delete everything stored about the sender (statistics,
    leaderboard entries, preferences, reachability, notifications)."""
    s = svc(context)
    chat, user = update.effective_chat, update.effective_user
    assert chat is not None and user is not None
    lang = await _private_lang(s, update)
    if chat.type != ChatType.PRIVATE:
        await _reply(update, render.note("forget_private", lang))
        return
    await stats.forget_user(s.store, user.id)
    await _reply(update, render.note("forgotten", lang))


async def _answer_quietly(update: Update, context: ContextTypes.DEFAULT_TYPE, text: Callable[[str], str]) -> None:
    """Answer in the chat, except in a group with a running game: then privately (as /rules)."""
    s = svc(context)
    chat = update.effective_chat
    assert chat is not None
    if chat.type != ChatType.PRIVATE:
        if await budget.game_running(s.store, chat.id):
            await _private_text(update, context, text)
            return
        await _reply(update, text(await _group_lang(s, chat.id)))
        return
    await _reply(update, text(await _private_lang(s, update)))


async def _play_again(s: Services, context: ContextTypes.DEFAULT_TYPE, update: Update, tap: Tap) -> str:
    """«Play again» under a finished game (one of its players, or a chat admin): a new lobby in
    its chat with its AI seats and the presser; the other players are invited privately and
    take a seat only by tapping Join (no one is forced into a new game)."""
    old = await s.store.load(tap.gid)
    if old is None:
        raise RefusedError(Answer.NO_GAME)
    old = replace(old, chat_id=await _current_chat(s, old.chat_id))  # its group may be a supergroup now
    presser = actor_id(update)
    seat = old.seat_of(presser) if presser else None
    if (seat is None or not old.seats[seat].human) and not await is_admin(context, old.chat_id, update):
        raise RefusedError(Answer.NOT_ALLOWED)
    gid = s.new_game_id(update)
    if not await s.store.claim_chat(old.chat_id, old.thread_id, gid):
        current = await s.store.chat_game(old.chat_id, old.thread_id)
        return "reopened" if current is not None and current.id == gid else "already_open"
    reachable = {presser} if presser and await s.store.can_dm(presser) else set()
    try:
        table = model.rematch(old, gid, presser, s.now(), s.settings.lobby_timeout, reachable)
    except RefusedError:
        await s.store.release_chat(old.chat_id, old.thread_id, gid)
        raise
    await _open(s, table)
    invited = [x.user_id for x in old.seats if x.human and x.user_id != presser]
    if invited:
        _background(_notify_lobby(s, table, invited))
    return "reopened"


async def _send_record(s: Services, context: ContextTypes.DEFAULT_TYPE, update: Update, tap: Tap) -> str:
    """The game's record (``cheat-record/1`` with the players' names) as a file in the
    player's private chat: only once the game is over, at most once per player and game."""
    user = update.effective_user
    assert user is not None
    table = await s.store.load(tap.gid)
    if table is None:
        raise RefusedError(Answer.NO_GAME)
    seat = table.seat_of(user.id)
    if seat is None or not table.seats[seat].human:
        raise RefusedError(Answer.NOT_SEATED)
    if table.status is not Status.OVER:
        # the record holds every hand and the seed: never while the game runs (the data of a
        # final panel's button may be sent on any message)
        raise RefusedError(Answer.RECORD_NOT_YET if table.live else Answer.NO_GAME)
    deal, log_ = await s.store.record(table.id)
    record = stats.record_of_game(table, deal, log_, render.plain_names(table))
    if record is None:
        raise RefusedError(Answer.NO_GAME)
    if not await s.store.first_time(table.id, "record", user.id):
        return "record_again"  # once per player per game: a tap never sends it twice
    data = record.to_json(indent=1).encode()
    await context.bot.send_document(user.id, InputFile(data, filename=stats.RECORD_FILE.format(gid=table.id)))
    return "record_sent"


# -- taps ------------------------------------------------------------------------------------------


async def on_tap(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """Every inline button: decode, one transaction, answer at once, then sync the views."""
    s = svc(context)
    query = update.callback_query
    assert query is not None and query.from_user is not None
    user = query.from_user
    try:
        tap = decode(query.data)
    except CallbackDataError:
        await answer(query, render.answer("bad_button", await _private_lang(s, update)))
        return
    try:
        if tap.op == "lang":
            if not supported(tap.arg):
                raise RefusedError(Answer.BAD_BUTTON)
            await answer(query, render.answer("ok", await _set_language(s, context, update, tap.arg)))
            return
        if tap.op in ("pick", "refresh"):
            await _show_panel(s, query, tap, user.id, update)
            return
        done = await _apply_tap(s, context, update, tap, user.id)
    except RefusedError as e:
        lang = await _tap_lang(s, update, None if tap.op == "lang" else await s.store.load(tap.gid))
        await answer(query, render.answer(e.code, lang))
        if e.code == "stale":
            await _show_panel(s, query, Tap("refresh", tap.gid), user.id, update, answered=True)
        return
    try:
        if done.url:
            await answer(query, url=done.url)
        else:
            await answer(query, render.answer(done.reply, await _tap_lang(s, update, done.table)))
    finally:
        if tap.op not in NOT_A_GAME:
            s.syncer.request(tap.gid)


class TapDone(NamedTuple):
    """What a tap's transaction came to: the answer's code, or a deep link to answer with; the
    table after it, if known."""

    reply: str
    url: str | None = None
    table: Table | None = None


async def _apply_tap(s: Services, context: ContextTypes.DEFAULT_TYPE, update: Update, tap: Tap, user_id: int) -> TapDone:
    """Run the tap's transaction (see :class:`TapDone`)."""
    now, timeout = s.now(), s.settings.lobby_timeout
    gid = tap.gid
    fn: Callable[[Table], Change]
    if tap.op == "join":
        if not await s.store.can_dm(user_id):
            return await _offer_link(s, gid, user_id)
        lobby = await s.store.load(gid)
        if lobby is None:
            raise RefusedError(Answer.NO_GAME)
        seat = await _seat_for(s, update, lobby.chat_id)
        fn = lambda t: model.join(t, seat, now, timeout)  # noqa: E731
    elif tap.op == "leave":
        fn = lambda t: model.leave(t, user_id, now, timeout)  # noqa: E731
    elif tap.op in ("start", "cancel", "variant"):
        table = await s.store.load(gid)
        if table is None:
            raise RefusedError(Answer.NO_GAME)
        user_id, admin = await may_manage(context, table, update)
        if tap.op == "start":
            fn = await _start_fn(s, table, user_id, admin)
        elif tap.op == "cancel":
            fn = lambda t: model.cancel(t, user_id, admin)  # noqa: E731
        else:
            fn = lambda t: model.set_variant(t, user_id, tap.arg, admin, now, timeout)  # noqa: E731
    elif tap.op in ("addbot", "rmbot"):
        # AI seats are the creator's or a chat admin's to add and remove
        table = await s.store.load(gid)
        if table is None:
            raise RefusedError(Answer.NO_GAME)
        user_id, admin = await may_manage(context, table, update)
        if tap.op == "addbot":
            names = render.BOT_NAMES
            fn = lambda t: model.add_bot(t, names, now, timeout, user_id=user_id, is_admin=admin)  # noqa: E731
        else:
            fn = lambda t: model.remove_bot(t, now, timeout, user_id=user_id, is_admin=admin)  # noqa: E731
    elif tap.op == "takeback":
        fn = lambda t: model.take_back(t, user_id, now)  # noqa: E731
    elif tap.op == "quit":
        # the confirmation acts for the player it was offered to, no one else
        table = await s.store.load(gid)
        if table is None:
            raise RefusedError(Answer.NO_GAME)
        seat = table.seat_of(user_id)
        if seat is None:
            raise RefusedError(Answer.NOT_SEATED)
        if tap.arg != str(seat):
            raise RefusedError(Answer.NOT_FOR_YOU)
        fn = lambda t: model.leave(t, user_id, now, timeout)  # noqa: E731
    elif tap.op == "timer":
        return TapDone(await _set_timer(s, context, update, tap))
    elif tap.op == "settings":
        return TapDone(await _apply_setting(s, context, update, tap))
    elif tap.op == "again":
        return TapDone(await _play_again(s, context, update, tap))
    elif tap.op == "rec":
        return TapDone(await _send_record(s, context, update, tap))
    elif tap.op == "stopok":
        table = await s.store.load(gid)
        if table is None:
            raise RefusedError(Answer.NO_GAME)
        user_id, admin = await may_manage(context, table, update)
        # the confirmation acts for who asked (an anonymous admin's: for any admin)
        if tap.arg != person(user_id) and not (tap.arg == person(0) and admin):
            raise RefusedError(Answer.NOT_FOR_YOU if admin or user_id == table.creator else Answer.NOT_ALLOWED)
        fn = lambda t: model.cancel(t, user_id, admin)  # noqa: E731
    else:
        action = _action_of(tap)
        fn = lambda t: model.act(t, user_id, tap.action_count, action, now)  # noqa: E731
    if tap.op in ("join", "addbot"):
        # another transaction may follow (the sixth player starts the game): the sync takes
        # its lanes' locks itself
        done = await s.store.transact(gid, fn)
        await _maybe_autostart(s, done.change.table)
        return TapDone(done.change.reply, table=done.change.table)
    done = await s.store.transact(gid, fn)
    return TapDone(done.change.reply, table=done.change.table)


async def _offer_link(s: Services, gid: str, user_id: int) -> TapDone:
    """A Join tap by someone the bot cannot write to privately: the lobby records that it
    offered them its join deep link (``model.offer_link``, committed before the tap is
    answered) and the tap is answered with the link, which seats them and no one else
    (:func:`_join_by_link`). Their tap in the group is the proof that they are a member."""
    done = await s.store.transact(gid, lambda t: model.offer_link(t, user_id))
    return TapDone(done.change.reply, f"https://t.me/{s.username}?start={JOIN_PAYLOAD}{gid}", done.change.table)


def _action_of(tap: Tap) -> core.Action:
    if tap.op == "play":
        return core.Play(Hand.from_str(tap.cards).ranks(), Rank.from_str(tap.claim))
    if tap.op == "challenge":
        return core.Challenge()
    if tap.op == "believe":
        return core.Believe()
    raise RefusedError(Answer.BAD_BUTTON)


async def _maybe_autostart(s: Services, table: Table) -> None:
    """The game starts by itself when the sixth player joins."""
    if table.status is Status.LOBBY and len(table.seats) >= core.MAX_PLAYERS:
        try:
            await s.store.transact(table.id, await _start_fn(s, table, None, True))
        except RefusedError:
            pass


async def _show_panel(s: Services, query, tap: Tap, user_id: int, update: Update, answered: bool = False) -> None:
    """Card picking and refresh: redraw the tapped panel (no write to Redis)."""
    table = await s.store.load(tap.gid)
    lang = await _tap_lang(s, update, table)
    code = "refreshed" if tap.op == "refresh" else "ok"
    seat = table.seat_of(user_id) if table is not None else None
    if table is None or table.state is None or seat is None:
        code = "no_game" if table is None else "not_seated"
        if not answered:
            await answer(query, render.answer(code, lang))
        return
    picks = ""
    if tap.op == "pick":
        if tap.action_count != table.action_count or table.state.current != seat:
            code = "stale"
        else:
            picks = tap.cards
            if not table.state.hands[seat].contains(Hand.from_str(picks)):
                picks, code = "", "cards_not_in_hand"
    if not answered:
        await answer(query, render.answer(code, lang))
    if query.message is not None:
        await s.syncer.redraw_panel(table, seat, query.message, picks)


# -- membership and chat identity ------------------------------------------------------------------


def _is_member(member) -> bool:
    """Whether a ChatMember status keeps the bot in the chat (Bot API ChatMember*: left/kicked
    do not; restricted while ``is_member``)."""
    if member.status in (ChatMemberStatus.LEFT, ChatMemberStatus.BANNED):
        return False
    return member.status != ChatMemberStatus.RESTRICTED or bool(getattr(member, "is_member", True))


def _can_write(member) -> bool:
    """Whether a ChatMember status lets the bot post (a member; restricted only with
    ``can_send_messages``)."""
    if member.status == ChatMemberStatus.RESTRICTED:
        return _is_member(member) and bool(getattr(member, "can_send_messages", False))
    return _is_member(member)


async def on_my_member(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """my_chat_member: the bot's own membership changed.

    Private chat: blocked (kicked) → the user is unreachable (their groups are told once by the
    sync); back to member → their panels come back. Group: removed → every live game of the
    chat ends (``bot_removed``, no result, timers cleared); players are told in private.
    Re-adding the bot starts fresh. Restricted without the right to write → the games go on and
    their announcements wait until the bot may write again, for at most the lobby timeout
    (:meth:`tgbot.views.sync.Syncer.group_rights_changed`)."""
    s = svc(context)
    change = update.my_chat_member
    assert change is not None
    chat, new = change.chat, change.new_chat_member
    if chat.type == ChatType.PRIVATE:
        await _set_reachable(s, chat.id, new.status == ChatMemberStatus.MEMBER)
        return
    if not _is_member(new):
        await _end_chat_games(s, chat.id)
    else:
        await s.syncer.group_rights_changed(chat.id, _can_write(new))


async def _set_reachable(s: Services, user_id: int, reachable: bool) -> None:
    """Record whether the bot may write to ``user_id`` privately. Lost: their seats in running
    games are marked unreachable (the groups are told once). Regained: their panels of live
    games come back."""
    was = await s.store.can_dm(user_id)
    await s.store.set_dm(user_id, reachable)
    if reachable and not was:
        await s.syncer.reachable_again(user_id)
    elif not reachable and was:
        await s.syncer.unreachable(user_id)


async def on_left_member(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """A left_chat_member service message: when it is the bot itself, the chat's games end
    (as with my_chat_member); a player leaving hands their seat to the AI (:func:`member_left`)."""
    msg = update.effective_message
    if msg is not None and msg.left_chat_member is not None and msg.left_chat_member.id == context.bot.id:
        await _end_chat_games(svc(context), msg.chat_id)
    else:
        await member_left(update, context)


async def _end_chat_games(s: Services, chat_id: int) -> None:
    for table in await s.store.chat_games(chat_id):
        try:
            await s.store.transact(table.id, lambda t: model.cancel(t, None, True, reason="bot_removed"))
        except RefusedError:
            continue
        log.info("game %s ended: bot removed from chat %s", table.id, chat_id)
        s.syncer.request(table.id)


async def on_migrate(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """A basic group became a supergroup (service message with ``migrate_to_chat_id`` in the
    old chat, ``migrate_from_chat_id`` in the new one): its games, settings, leaderboard and
    lobby notifications move to the new id (:func:`tgbot.storage.chatmove.move_chat`; each of the two
    messages runs it, the second changes nothing)."""
    s = svc(context)
    msg = update.effective_message
    assert msg is not None
    if msg.migrate_to_chat_id:
        old, new = msg.chat_id, msg.migrate_to_chat_id
    elif msg.migrate_from_chat_id:
        old, new = msg.migrate_from_chat_id, msg.chat_id
    else:
        return
    for gid in await chatmove.move_chat(s.store, old, new):
        log.info("game %s moved from chat %s to %s", gid, old, new)
        s.syncer.request(gid)


# -- errors ----------------------------------------------------------------------------------------


async def on_error(update: object, context: ContextTypes.DEFAULT_TYPE) -> None:
    """The one error handler: log it, and answer a tap so its button stops spinning. A reply
    dropped because its group is over Telegram's limit (:class:`~tgbot.process.ratelimit.Throttled`)
    is expected under command spam: one INFO line."""
    result = outcome.get()
    if isinstance(context.error, FencedError):
        if result is not None:
            result.fenced = True
        return
    if isinstance(context.error, RedisError) and result is not None:
        result.retry = True  # the consumer tries the update again
        log.warning("update met a Redis failure: %s", context.error)
        return
    if isinstance(context.error, Throttled):
        log.info("a reply was dropped: its chat is over Telegram's message limit for %.0f s more", context.error.seconds)
    else:
        log.error("error while handling an update", exc_info=context.error)
    if isinstance(update, Update) and update.callback_query is not None:
        await answer(update.callback_query)


async def tell_to_tap_again(update: Update, app: Any) -> None:
    """A tap whose processing kept meeting Redis failures is given up: its player is told to tap
    again (the answer may come too late for Telegram, which is harmless)."""
    query = update.callback_query
    if query is None:
        return
    svc_ = app.bot_data.get("svc")
    lang = pick_language(await svc_.store.user_lang(query.from_user.id)) if svc_ is not None else DEFAULT_LANGUAGE
    await answer(query, render.answer("try_again", lang))


async def register_commands(app: Any) -> None:
    """setMyCommands for groups and private chats, in every supported language (the default
    set in the default language)."""
    from telegram import BotCommand, BotCommandScopeAllGroupChats, BotCommandScopeAllPrivateChats

    from tgbot.handlers.app import COMMANDS
    from tgbot.i18n import LANGUAGES

    for kind, scope in (("group", BotCommandScopeAllGroupChats()), ("private", BotCommandScopeAllPrivateChats())):
        for lang in (None, *LANGUAGES):
            tr = translator(lang)
            commands = [BotCommand(cmd, tr.t(desc)) for cmd, desc in COMMANDS[kind]]
            await app.bot.set_my_commands(commands, scope=scope, language_code=lang)
