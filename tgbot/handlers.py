"""Handlers: decode the update, run one transaction, answer the tap, request a view sync.

Handlers stay thin (DESIGN.md): rules live in ``core``, table transitions in
:mod:`tgbot.model`, the transaction in :mod:`tgbot.store`, texts in :mod:`tgbot.render`, and
Telegram's views in :mod:`tgbot.sync`. A tap is answered before the views are synced, so an
answer never waits on a rate limiter.
"""

from __future__ import annotations

import logging
import secrets
import time
from dataclasses import dataclass
from typing import Callable

from telegram import Update
from telegram.constants import ChatMemberStatus, ChatType
from telegram.error import BadRequest, TelegramError
from telegram.ext import ApplicationHandlerStop, ContextTypes

import core
from core.cards import Hand, Rank

from . import model, render
from .identity import ANONYMOUS_ADMIN, actor_id, is_admin, may_manage, place, seat_for
from .codec import BadCallback, Tap, decode
from .i18n import N_, pick_language, translator
from .model import Change, Refused, Seat, Status, Table
from .settings import Settings
from .store import Store, new_game_id
from .sync import Syncer, answer

__all__ = [
    "Services", "dedup", "start_game", "stop_game", "board_command", "start_private", "help_command", "on_tap", "on_error",
    "on_my_member", "on_left_member", "on_migrate", "add_bot_command", "leave_command", "timer_command", "member_left",
    "ANONYMOUS_ADMIN", "TIMER_CHOICES", "LONG_TIMER",
]

log = logging.getLogger(__name__)

#: Deep-link payloads start with this letter followed by the game id (t.me/<bot>?start=j<id>).
JOIN_PAYLOAD = "j"
#: The turn timer's settings offered to chat admins (seconds), and "long" (an hour): never off.
TIMER_CHOICES = (30, 60, 90, 180, 300, 600)
LONG_TIMER = 3600


RULES_EN = N_(
    "<b>«I doubt it» (Верю — не верю)</b>\n"
    "3 to 6 players share one 52-card deck; suits do not matter, only ranks. Get rid of all your cards to win.\n\n"
    "<b>A turn.</b> Put 1 to 4 cards face down on the pile and name their rank. The number of cards is always true; the rank may be a lie. "
    "The next player either plays on (and so believes you), or says «I doubt it!».\n"
    "<b>Russian variant</b> (default): whoever opens a round names any rank; everyone else in that round must claim the same rank.\n"
    "<b>Classic variant</b>: the rank is fixed and goes up with every play of the game: A, 2, 3 … K, then A again, even after a challenge.\n\n"
    "<b>«I doubt it!»</b> Only the last play is turned over. If it was true, the doubter takes the whole pile; if it was a bluff, the player who made it does. "
    "The winner of the showdown opens the next round.\n\n"
    "<b>Going out.</b> Playing your last cards does not win yet: the next player must believe or doubt. "
    "Believed, or doubted but true: you win. Doubted and a bluff: you take the pile and play goes on. "
    "If a believed last play was a bluff, the believer takes the pile.\n\n"
    "<b>End.</b> The others are ranked by the cards they hold, fewer is better, equal counts share a place. "
    "After 300 plays the next player must believe or doubt, and the game ends: fewest cards wins, a tie for fewest is a draw.\n\n"
    "<b>With this bot.</b> /start_game in a group opens a lobby; press «Join». Your cards and buttons come here, in private chat. "
    "Pick cards, name the rank when you open a round, press «Play». The group sees hand sizes, the pile and the claims, never your cards.\n\n"
    "<b>Tips.</b> Count the cards: there are four of each rank. Play true cards when you can. Bluff small on a small pile. "
    "Distrust a player who is about to go out."
)


@dataclass
class Services:
    """What the handlers share, kept in ``application.bot_data["svc"]``."""

    settings: Settings
    store: Store
    syncer: Syncer
    username: str = ""


def timing(s: "Services", turn_timeout: float) -> dict:
    """The timer arguments of :func:`tgbot.model.start`: the chat's turn timeout, the AI seats'
    pause range (AI_PAUSE_MIN/MAX) and their least pause, the group's message spacing (RATE_GROUP_PERIOD / RATE_GROUP_MAX), so the
    board keeps up with the bots."""
    st = s.settings
    return {"turn_timeout": turn_timeout, "ai_delay": st.rate_group_period / st.rate_group_max, "ai_pause": (st.ai_pause_min, max(st.ai_pause_min, st.ai_pause_max))}


async def _start_fn(s: "Services", table: Table, user_id: int | None, admin: bool) -> Callable[[Table], Change]:
    seed, now = secrets.randbits(64), time.time()
    kw = timing(s, await s.store.chat_turn_timeout(table.chat_id, s.settings.turn_timeout))
    return lambda t: model.start(t, user_id, admin, seed, now=now, **kw)


def svc(context: ContextTypes.DEFAULT_TYPE) -> Services:
    return context.application.bot_data["svc"]


def _lang(update: Update) -> str:
    user = update.effective_user
    return pick_language(user.language_code if user else None)


async def _reply(update: Update, text: str) -> None:
    msg = update.effective_message
    if msg is not None:
        await msg.reply_text(text, do_quote=False, message_thread_id=msg.message_thread_id if msg.is_topic_message else None)


# -- update de-duplication -------------------------------------------------------------------------


async def dedup(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """Group -1: a re-delivered update (same update_id within 24 h) is not applied twice; a
    re-delivered tap is still answered."""
    if await svc(context).store.first_delivery(update.update_id):
        return
    if update.callback_query is not None:
        await answer(update.callback_query)
    raise ApplicationHandlerStop


# -- group commands --------------------------------------------------------------------------------


async def start_game(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """``/start_game`` in a group: open a lobby (one live game per chat or forum topic)."""
    s = svc(context)
    chat, msg = update.effective_chat, update.effective_message
    assert chat is not None and msg is not None
    tr = translator(_lang(update))
    if chat.type == ChatType.PRIVATE:
        await _reply(update, tr.t("Add me to a group and send /start_game there."))
        return
    _, thread = place(update)
    existing = await s.store.chat_game(chat.id, thread)
    if existing is not None:
        await _reply(update, translator(existing.lang).t("A game is already open here. /board shows it."))
        return
    gid = new_game_id()
    if not await s.store.claim_chat(chat.id, thread, gid):
        await _reply(update, tr.t("A game is already open here. /board shows it."))
        return
    now = time.time()
    creator = actor_id(update)  # 0: an anonymous admin (never seated): admins only
    table = model.open_lobby(gid, chat.id, thread, creator, chat.title or "", now, s.settings.lobby_timeout)
    if creator and await s.store.can_dm(creator):
        table = model.join(table, seat_for(update), now, s.settings.lobby_timeout).table
    await s.store.create(table)
    log.info("lobby %s opened in chat %s", gid, chat.id)
    s.syncer.request(gid)


async def stop_game(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """``/stop_game``: end the chat's lobby or game without result (creator or chat admin)."""
    s = svc(context)
    chat, msg = update.effective_chat, update.effective_message
    assert chat is not None and msg is not None
    table = await s.store.chat_game(*place(update))
    tr = translator(table.lang if table else _lang(update))
    if table is None:
        await _reply(update, tr.t("There is no game here. /start_game opens one."))
        return
    user_id, admin = await may_manage(context, table, update)
    try:
        await s.store.transact(table.id, lambda t: model.cancel(t, user_id, admin))
    except Refused as e:
        await _reply(update, render.answer(e.code, tr.lang))
        return
    s.syncer.request(table.id)


async def board_command(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """``/board``: post the chat's board anew at the bottom."""
    s = svc(context)
    chat, msg = update.effective_chat, update.effective_message
    assert chat is not None and msg is not None
    table = await s.store.chat_game(*place(update))
    if table is None:
        await _reply(update, translator(_lang(update)).t("There is no game here. /start_game opens one."))
        return
    await s.syncer.post_board(table)


async def add_bot_command(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """``/add_bot`` in a group: seat an AI player in the chat's open lobby."""
    s = svc(context)
    chat = update.effective_chat
    assert chat is not None
    table = await s.store.chat_game(chat.id, place(update)[1])
    if table is None:
        await _reply(update, translator(_lang(update)).t("There is no game here. /start_game opens one."))
        return
    names, now = render.BOT_NAMES, time.time()
    try:
        done = await s.store.transact(table.id, lambda t: model.add_bot(t, names, now, s.settings.lobby_timeout))
    except Refused as e:
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
    tr = translator(table.lang if table else _lang(update))
    seat = table.seat_of(user.id) if table is not None else None
    if table is None or seat is None:
        await _reply(update, render.answer("not_seated", tr.lang))
        return
    if table.status is Status.LOBBY:
        try:
            await s.store.transact(table.id, lambda t: model.leave(t, user.id, time.time(), s.settings.lobby_timeout))
        except Refused as e:
            await _reply(update, render.answer(e.code, tr.lang))
            return
        s.syncer.request(table.id)
        return
    msg = update.effective_message
    assert msg is not None
    rendered = render.leave_confirm(table, seat)
    await msg.reply_text(rendered.text, reply_markup=rendered.markup, do_quote=False, message_thread_id=place(update)[1])


async def timer_command(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """``/timer`` in a group (chat admins): the turn timer's choices as buttons."""
    s = svc(context)
    chat = update.effective_chat
    assert chat is not None
    tr = translator(_lang(update))
    if chat.type == ChatType.PRIVATE:
        await _reply(update, tr.t("Add me to a group and send /start_game there."))
        return
    if not await is_admin(context, chat.id, update):
        await _reply(update, render.answer("not_allowed", tr.lang))
        return
    current = await s.store.chat_turn_timeout(chat.id, s.settings.turn_timeout)
    rendered = render.timer_menu(tr.lang, chat.id, current, TIMER_CHOICES)
    msg = update.effective_message
    assert msg is not None
    await msg.reply_text(rendered.text, reply_markup=rendered.markup, do_quote=False, message_thread_id=place(update)[1])


async def _set_timer(s: Services, context: ContextTypes.DEFAULT_TYPE, update: Update, tap: Tap) -> str:
    """A ``timer`` tap: a chat admin sets the chat's turn timer (30–600 s or an hour)."""
    try:
        chat_id = int(tap.gid)
    except ValueError:
        raise Refused("bad_button") from None
    seconds = LONG_TIMER if tap.arg == "long" else int(tap.arg) if tap.arg.isdigit() else 0
    if seconds not in (*TIMER_CHOICES, LONG_TIMER):
        raise Refused("bad_button")
    if not await is_admin(context, chat_id, update):
        raise Refused("not_allowed")
    await s.store.set_chat_turn_timeout(chat_id, seconds)
    return "timer_set"


async def member_left(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """A player left the group (a ``left_chat_member`` message or a ``chat_member`` update): the
    AI takes their seat in the chat's running game (a lobby just loses them)."""
    s = svc(context)
    chat = update.effective_chat
    if chat is None:
        return
    user = None
    if update.chat_member is not None:
        new = update.chat_member.new_chat_member
        if new.status in (ChatMemberStatus.LEFT, ChatMemberStatus.BANNED):
            user = new.user
    elif update.effective_message is not None and update.effective_message.left_chat_member is not None:
        user = update.effective_message.left_chat_member
    if user is None or user.is_bot:
        return
    table = await s.store.chat_game(chat.id, place(update)[1])
    if table is None or table.seat_of(user.id) is None:
        return
    try:
        await s.store.transact(table.id, lambda t: model.leave(t, user.id, time.time(), s.settings.lobby_timeout))
    except Refused:
        return  # the game ended meanwhile
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
    tr = translator(_lang(update))
    payload = context.args[0] if context.args else ""
    if payload.startswith(JOIN_PAYLOAD) and len(payload) > 1:
        gid = payload[1:]
        try:
            seat = seat_for(update)
            done = await s.store.transact(gid, lambda t: model.join(t, seat, time.time(), s.settings.lobby_timeout))
        except Refused as e:
            await _reply(update, render.answer(e.code, tr.lang))
            return
        table = done.change.table
        await _reply(update, tr.t("You joined the game in «{group}».", group=render.title(table)))
        await _maybe_autostart(s, table)
        s.syncer.request(gid)
        return
    await _reply(update, tr.t("Hi! I run «I doubt it» card games in groups. Add me to a group and send /start_game there; I will send your cards here. /rules explains the game."))


async def help_command(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """``/help`` and ``/rules``: the rules in the user's language (privately when possible)."""
    tr = translator(_lang(update))
    await _reply(update, tr.t(RULES_EN))


# -- taps ------------------------------------------------------------------------------------------


async def on_tap(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """Every inline button: decode, one transaction, answer at once, then sync the views."""
    s = svc(context)
    query = update.callback_query
    assert query is not None and query.from_user is not None
    user = query.from_user
    lang = _lang(update)
    try:
        tap = decode(query.data)
    except BadCallback:
        await answer(query, render.answer("bad_button", lang))
        return
    try:
        if tap.op in ("pick", "refresh"):
            await _show_panel(s, query, tap, user.id, lang)
            return
        reply, url, gid = await _apply_tap(s, context, update, tap, user.id)
    except Refused as e:
        await answer(query, render.answer(e.code, lang))
        if e.code == "stale":
            await _show_panel(s, query, Tap("refresh", tap.gid), user.id, lang, answered=True)
        return
    if url:
        await answer(query, url=url)
    else:
        await answer(query, render.answer(reply, lang))
    if gid:
        s.syncer.request(gid)


async def _apply_tap(s: Services, context: ContextTypes.DEFAULT_TYPE, update: Update, tap: Tap, user_id: int) -> tuple[str, str | None, str]:
    """Run the tap's transaction; returns (answer code, deep-link url or None, game id)."""
    now, timeout = time.time(), s.settings.lobby_timeout
    gid = tap.gid
    fn: Callable[[Table], Change]
    if tap.op == "join":
        if not await s.store.can_dm(user_id):
            return "open_private", f"https://t.me/{s.username}?start={JOIN_PAYLOAD}{gid}", gid
        seat = seat_for(update)
        fn = lambda t: model.join(t, seat, now, timeout)  # noqa: E731
    elif tap.op == "leave":
        fn = lambda t: model.leave(t, user_id, now, timeout)  # noqa: E731
    elif tap.op in ("start", "cancel", "variant"):
        table = await s.store.load(gid)
        if table is None:
            raise Refused("no_game")
        user_id, admin = await may_manage(context, table, update)
        if tap.op == "start":
            fn = await _start_fn(s, table, user_id, admin)
        elif tap.op == "cancel":
            fn = lambda t: model.cancel(t, user_id, admin)  # noqa: E731
        else:
            fn = lambda t: model.set_variant(t, user_id, tap.arg, admin, now, timeout)  # noqa: E731
    elif tap.op == "addbot":
        names = render.BOT_NAMES
        fn = lambda t: model.add_bot(t, names, now, timeout)  # noqa: E731
    elif tap.op == "rmbot":
        fn = lambda t: model.remove_bot(t, now, timeout)  # noqa: E731
    elif tap.op == "takeback":
        fn = lambda t: model.take_back(t, user_id, now)  # noqa: E731
    elif tap.op == "quit":
        fn = lambda t: model.leave(t, user_id, now, timeout)  # noqa: E731
    elif tap.op == "timer":
        return await _set_timer(s, context, update, tap), None, ""
    else:
        action = _action_of(tap)
        fn = lambda t: model.act(t, user_id, tap.turn, action, now)  # noqa: E731
    done = await s.store.transact(gid, fn)
    if tap.op in ("join", "addbot"):
        await _maybe_autostart(s, done.change.table)
    return done.change.reply, None, gid


def _action_of(tap: Tap) -> core.Action:
    if tap.op == "play":
        return core.Play(Hand.from_str(tap.cards).ranks(), Rank.from_str(tap.claim))
    if tap.op == "challenge":
        return core.Challenge()
    if tap.op == "believe":
        return core.Believe()
    raise Refused("bad_button")


async def _maybe_autostart(s: Services, table: Table) -> None:
    """The game starts by itself when the sixth player joins."""
    if table.status is Status.LOBBY and len(table.seats) >= core.MAX_PLAYERS:
        try:
            await s.store.transact(table.id, await _start_fn(s, table, None, True))
        except Refused:
            pass


async def _show_panel(s: Services, query, tap: Tap, user_id: int, lang: str, answered: bool = False) -> None:
    """Card picking and refresh: redraw the tapped panel (no write to Redis)."""
    table = await s.store.load(tap.gid)
    code = "refreshed" if tap.op == "refresh" else "ok"
    seat = table.seat_of(user_id) if table is not None else None
    if table is None or table.state is None or seat is None:
        code = "no_game" if table is None else "not_seated"
        if not answered:
            await answer(query, render.answer(code, lang))
        return
    picks = ""
    if tap.op == "pick":
        if tap.turn != table.turn or table.state.current != seat:
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


def _can_write(member) -> bool:
    """Whether a ChatMember status lets the bot post (Bot API ChatMember*: left/kicked cannot;
    restricted only with ``can_send_messages``)."""
    if member.status in (ChatMemberStatus.LEFT, ChatMemberStatus.BANNED):
        return False
    if member.status == ChatMemberStatus.RESTRICTED:
        return bool(getattr(member, "can_send_messages", False)) and bool(getattr(member, "is_member", True))
    return True


async def on_my_member(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """my_chat_member: the bot's own membership changed.

    Private chat: blocked (kicked) → the user is unreachable (their groups are told once by the
    sync); back to member → their panels come back. Group: removed, or restricted without the
    right to write → every live game of the chat ends (``bot_removed``, no result, timers
    cleared); players are told in private. Re-adding the bot starts fresh."""
    s = svc(context)
    change = update.my_chat_member
    assert change is not None
    chat, new = change.chat, change.new_chat_member
    if chat.type == ChatType.PRIVATE:
        await _set_reachable(s, chat.id, new.status == ChatMemberStatus.MEMBER)
        return
    if not _can_write(new):
        await _end_chat_games(s, chat.id)


async def _set_reachable(s: Services, user_id: int, reachable: bool) -> None:
    """Record whether the bot may write to ``user_id`` privately. Lost: their games sync (the
    groups are told once). Regained: their panels of live games come back."""
    was = await s.store.can_dm(user_id)
    await s.store.set_dm(user_id, reachable)
    if reachable and not was:
        await s.syncer.reachable_again(user_id)
    elif not reachable and was:
        for table in await s.store.user_games(user_id):
            s.syncer.request(table.id)


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
        except Refused:
            continue
        log.info("game %s ended: bot removed from chat %s", table.id, chat_id)
        s.syncer.request(table.id)


async def on_migrate(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """A basic group became a supergroup (service message with ``migrate_to_chat_id`` in the
    old chat, ``migrate_from_chat_id`` in the new one): its games move to the new id."""
    s = svc(context)
    msg = update.effective_message
    assert msg is not None
    if msg.migrate_to_chat_id:
        old, new = msg.chat_id, msg.migrate_to_chat_id
    elif msg.migrate_from_chat_id:
        old, new = msg.migrate_from_chat_id, msg.chat_id
    else:
        return
    for gid in await s.store.move_chat(old, new):
        log.info("game %s moved from chat %s to %s", gid, old, new)
        s.syncer.request(gid)


# -- errors ----------------------------------------------------------------------------------------


async def on_error(update: object, context: ContextTypes.DEFAULT_TYPE) -> None:
    """The one error handler: log it, and answer a tap so its button stops spinning."""
    log.error("error while handling an update", exc_info=context.error)
    if isinstance(update, Update) and update.callback_query is not None:
        await answer(update.callback_query)
