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
from dataclasses import dataclass, replace
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
from .i18n import DEFAULT_LANGUAGE, pick_language, private_language, supported, translator
from .model import Change, Refused, Seat, Status, Table
from .settings import Settings
from .store import Store, new_game_id
from .sync import Syncer, answer

__all__ = [
    "Services", "dedup", "start_game", "stop_game", "board_command", "start_private", "help_command", "rules_command",
    "language_command", "on_tap", "on_error", "on_my_member", "on_left_member", "on_migrate", "add_bot_command",
    "leave_command", "timer_command", "member_left", "ANONYMOUS_ADMIN", "TIMER_CHOICES", "LONG_TIMER",
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


async def _group_lang(s: Services, chat_id: int) -> str:
    """The group's language (its setting, Russian by default)."""
    return pick_language((await s.store.chat_settings(chat_id)).lang)


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
    (:func:`i18n.private_language`). Raises ``Refused("anonymous")`` like seat_for."""
    seat = seat_for(update)
    user = update.effective_user
    assert user is not None
    group = (await s.store.chat_settings(chat_id)).lang
    return replace(seat, lang=private_language(await s.store.user_lang(user.id), group, user.language_code))


async def _reply(update: Update, text: str) -> None:
    msg = update.effective_message
    if msg is not None:
        await msg.reply_text(text, do_quote=False, message_thread_id=msg.message_thread_id if msg.is_topic_message else None)


# -- update de-duplication -------------------------------------------------------------------------


async def dedup(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """Group -1: a re-delivered update (same update_id within 24 h) is not applied twice; a
    re-delivered tap is still answered. A tap's game table is read in the same round trip (the
    transaction's read)."""
    gid = None
    if update.callback_query is not None:
        try:
            tap = decode(update.callback_query.data)
            gid = tap.gid if tap.op not in ("lang", "timer") else None
        except BadCallback:
            pass
    if await svc(context).store.first_delivery(update.update_id, gid):
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
    if chat.type == ChatType.PRIVATE:
        tr = translator(await _private_lang(s, update))
        await _reply(update, tr.t("Add me to a group and send /start_game there."))
        return
    tr = translator(await _group_lang(s, chat.id))
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
    table = model.open_lobby(gid, chat.id, thread, creator, chat.title or "", now, s.settings.lobby_timeout, lang=tr.lang)
    if creator and await s.store.can_dm(creator):
        table = model.join(table, await _seat_for(s, update, chat.id), now, s.settings.lobby_timeout).table
    await s.store.create(table)
    log.info("lobby %s opened in chat %s", gid, chat.id)
    s.syncer.request(gid)


async def stop_game(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """``/stop_game``: end the chat's lobby or game without result (creator or chat admin)."""
    s = svc(context)
    chat, msg = update.effective_chat, update.effective_message
    assert chat is not None and msg is not None
    table = await s.store.chat_game(*place(update))
    tr = translator(table.lang if table else await _group_lang(s, chat.id))
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
        await _reply(update, translator(await _group_lang(s, chat.id)).t("There is no game here. /start_game opens one."))
        return
    await s.syncer.post_board(table)


async def add_bot_command(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """``/add_bot`` in a group: seat an AI player in the chat's open lobby."""
    s = svc(context)
    chat = update.effective_chat
    assert chat is not None
    table = await s.store.chat_game(chat.id, place(update)[1])
    if table is None:
        await _reply(update, translator(await _group_lang(s, chat.id)).t("There is no game here. /start_game opens one."))
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
    tr = translator(table.lang if table else await _group_lang(s, chat.id))
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
    private = chat.type == ChatType.PRIVATE
    tr = translator(await _private_lang(s, update) if private else await _group_lang(s, chat.id))
    if private:
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
    tr = translator(await _private_lang(s, update))
    payload = context.args[0] if context.args else ""
    if payload.startswith(JOIN_PAYLOAD) and len(payload) > 1:
        gid = payload[1:]
        lobby = await s.store.load(gid)
        try:
            if lobby is None:
                raise Refused("no_game")
            seat = await _seat_for(s, update, lobby.chat_id)
            done = await s.store.transact(gid, lambda t: model.join(t, seat, time.time(), s.settings.lobby_timeout))
        except Refused as e:
            await _reply(update, render.answer(e.code, tr.lang))
            return
        table = done.change.table
        tr = render.seat_translator(table, table.seat_of(user.id))  # type: ignore[arg-type]
        await _reply(update, tr.t("You joined the game in «{group}».", group=render.title(table)))
        await _maybe_autostart(s, table)
        s.syncer.request(gid)
        return
    await _reply(update, tr.t("Hi! I run «I doubt it» card games in groups. Add me to a group and send /start_game there; I will send your cards here. /rules explains the game."))


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
        except TelegramError:  # never started the bot, or blocked it
            await s.store.set_dm(user.id, False)
    table = await s.store.chat_game(chat.id, msg.message_thread_id if msg.is_topic_message else None)
    if table is not None and table.status is Status.PLAYING:
        return
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
    msg = update.effective_message
    assert msg is not None
    await msg.reply_text(menu.text, reply_markup=menu.markup, do_quote=False, message_thread_id=msg.message_thread_id if msg.is_topic_message else None)


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
            raise Refused("admins_only")
        await s.store.set_chat_settings(chat.id, lang=lang)
        thread = query.message.message_thread_id if getattr(query.message, "is_topic_message", False) else None
        table = await s.store.chat_game(chat.id, thread)
        if table is not None and table.status is Status.LOBBY:
            await s.store.transact(table.id, lambda t: model.set_lang(t, lang))
            s.syncer.request(table.id)
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


# -- taps ------------------------------------------------------------------------------------------


async def on_tap(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """Every inline button: decode, one transaction, answer at once, then sync the views."""
    s = svc(context)
    query = update.callback_query
    assert query is not None and query.from_user is not None
    user = query.from_user
    try:
        tap = decode(query.data)
    except BadCallback:
        await answer(query, render.answer("bad_button", await _private_lang(s, update)))
        return
    try:
        if tap.op == "lang":
            if not supported(tap.arg):
                raise Refused("bad_button")
            await answer(query, render.answer("ok", await _set_language(s, context, update, tap.arg)))
            return
        if tap.op in ("pick", "refresh"):
            await _show_panel(s, query, tap, user.id, update)
            return
        reply, url, table = await _apply_tap(s, context, update, tap, user.id)
    except Refused as e:
        lang = await _tap_lang(s, update, None if tap.op == "lang" else await s.store.load(tap.gid))
        await answer(query, render.answer(e.code, lang))
        if e.code == "stale":
            await _show_panel(s, query, Tap("refresh", tap.gid), user.id, update, answered=True)
        return
    if url:
        await answer(query, url=url)
    else:
        await answer(query, render.answer(reply, await _tap_lang(s, update, table)))
    if tap.op != "timer":  # a timer tap carries a chat id, not a game id
        s.syncer.request(tap.gid)


async def _apply_tap(s: Services, context: ContextTypes.DEFAULT_TYPE, update: Update, tap: Tap, user_id: int) -> tuple[str, str | None, Table | None]:
    """Run the tap's transaction; returns (answer code, deep-link url or None, the table after
    it, if known)."""
    now, timeout = time.time(), s.settings.lobby_timeout
    gid = tap.gid
    fn: Callable[[Table], Change]
    if tap.op == "join":
        if not await s.store.can_dm(user_id):
            return "open_private", f"https://t.me/{s.username}?start={JOIN_PAYLOAD}{gid}", None
        lobby = await s.store.load(gid)
        if lobby is None:
            raise Refused("no_game")
        seat = await _seat_for(s, update, lobby.chat_id)
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
        return await _set_timer(s, context, update, tap), None, None
    else:
        action = _action_of(tap)
        fn = lambda t: model.act(t, user_id, tap.turn, action, now)  # noqa: E731
    done = await s.store.transact(gid, fn)
    if tap.op in ("join", "addbot"):
        await _maybe_autostart(s, done.change.table)
    return done.change.reply, None, done.change.table


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
