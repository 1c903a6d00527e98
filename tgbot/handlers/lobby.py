"""The lobby: /start_game, /add_bot, /leave, and the lobby's taps (join, leave, start, cancel,
variant, add or remove an AI, leave a running game confirmed, «Play again»)."""

from __future__ import annotations

import contextlib
import logging
import secrets
from collections.abc import Callable
from dataclasses import replace

from telegram import Update
from telegram.helpers import create_deep_linked_url

import core
from tgbot import i18n
from tgbot.codec import Op
from tgbot.game import lobby as game_lobby
from tgbot.game.rights import Action, allowed, refusal
from tgbot.game.table import Answer, Change, RefusedError, Status, Table
from tgbot.handlers.chat import unseat_everywhere
from tgbot.handlers.common import (
    Press,
    TapDone,
    answered_question,
    chat_table,
    command_transact,
    current_chat,
    new_seat,
)
from tgbot.handlers.context import BotContext, Services
from tgbot.handlers.identity import (
    actor_id,
    is_admin,
    is_anonymous_admin,
    may_manage,
    place,
    telegram_says_gone,
)
from tgbot.logs import about_game
from tgbot.render.announcements import links_waiting, note
from tgbot.render.answers import answer
from tgbot.render.menus import leave_confirm
from tgbot.render.text import BOT_NAMES, title
from tgbot.storage import stats

log = logging.getLogger(__name__)

#: A join deep link's payload: this letter, then the game id (``t.me/<bot>?start=j<id>``).
JOIN_PAYLOAD = "j"

Transition = Callable[[Table], Change]


async def start_transition(services: Services, table: Table, user_id: int | None, admin: bool) -> Transition:
    """:func:`game_lobby.start` with the chat's timer and seating, the AI's pauses (AI_PAUSE_MIN/MAX,
    at least the group's message spacing, RATE_GROUP_PERIOD / RATE_GROUP_MAX) and a fresh seed."""
    settings, seed, now = services.settings, secrets.randbits(64), services.now()
    turn_timeout = await services.store.records.chat_turn_timeout(table.chat_id, settings.turn_timeout)
    shuffle = (await services.store.records.chat_settings(table.chat_id)).shuffle
    ai_delay = settings.rate_group_period / settings.rate_group_max
    ai_pause = (settings.ai_pause_min, settings.ai_pause_max)
    return lambda table: game_lobby.start(
        table,
        user_id,
        admin,
        seed,
        now=now,
        shuffle=shuffle,
        turn_timeout=turn_timeout,
        ai_delay=ai_delay,
        ai_pause=ai_pause,
    )


async def maybe_autostart(context: BotContext, table: Table) -> None:
    """The game starts by itself when the sixth player sits down."""
    if table.status is Status.LOBBY and len(table.seats) >= core.MAX_PLAYERS:
        with contextlib.suppress(RefusedError):  # e.g. started meanwhile
            await context.transact(table.id, await start_transition(context.services, table, None, True))


async def open_lobby(context: BotContext, table: Table) -> list[int]:
    """Store a new lobby (its chat already claimed); the people who asked (/notify_me) to hear
    of it, each returned once (none when this update stored it before a crash)."""
    if not await context.create(table):
        return []
    about_game(log, table.id, table.chat_id).info("lobby opened")
    return await context.store.records.take_notify(table.chat_id)


async def notify_lobby(context: BotContext, table: Table, users: list[int]) -> None:
    """Tell ``users`` privately that ``table``'s lobby opened (not those seated or unreachable),
    each in their private language (:func:`i18n.message_language`: no update of theirs is at
    hand, so their Telegram app's language is the one last recorded)."""
    group = (await context.store.records.chat_settings(table.chat_id)).lang
    for user_id in users:
        languages = None if table.seat_of(user_id) is not None else await context.store.records.dm_languages(user_id)
        if languages is None:
            continue
        language = i18n.message_language(languages[0], group, languages[1])
        await context.tell(user_id, note("lobby_open", language, group=title(table)))


async def start_game(update: Update, context: BotContext) -> None:
    """``/start_game`` in a group: open a lobby (one live game per chat or forum topic)."""
    services, chat, message = context.services, update.effective_chat, update.effective_message
    assert chat is not None
    language, (_, thread) = await context.group_language(chat.id), place(update)
    if message is not None and message.sender_chat is not None and not is_anonymous_admin(update):
        # a channel persona: nobody but an admin could start or stop its lobby
        await context.reply(note("as_channel", language))
        return
    existing, game_id = await services.store.chat_game(chat.id, thread), context.new_game_id()
    if existing is not None or not await services.store.claim_chat(chat.id, thread, game_id):
        if existing is None or existing.id != game_id:  # (else this very update opened it, before a crash)
            open_language = existing.lang if existing is not None else language
            await context.reply(i18n.translator(open_language).t("A game is already open here. /board shows it."))
        return
    now, timeout = services.now(), services.settings.lobby_timeout
    creator = actor_id(update)  # 0: an anonymous admin (never seated): admins only
    variant = (await services.store.records.chat_settings(chat.id)).variant or "russian"
    table = game_lobby.open_lobby(
        game_id, chat.id, thread, creator, chat.title or "", now, timeout, variant=variant, lang=language
    )
    if creator and await services.store.records.can_dm(creator):
        table = game_lobby.join(table, await new_seat(context, update, chat.id), now, timeout).table
    users = await open_lobby(context, table)
    if users:
        context.background(notify_lobby(context, table, users))


async def seat_by_link(update: Update, context: BotContext, game_id: str) -> None:
    """The join link of lobby ``game_id`` opened in private chat: seat the sender if the lobby
    offered them the link and Telegram does not say they left the group since; anyone else is
    refused and sees nothing of the group."""
    services, user = context.services, update.effective_user
    assert user is not None
    lobby = await services.store.load(game_id)
    try:
        if lobby is None:
            raise RefusedError(Answer.NO_GAME)
        if not game_lobby.link_offered_to(lobby, user.id):
            raise RefusedError(Answer.LINK_NOT_YOURS)
        if await telegram_says_gone(context, lobby.chat_id, user.id):
            await unseat_everywhere(context, lobby.chat_id, user.id)  # the bot missed their leaving
            raise RefusedError(Answer.LINK_NOT_YOURS)
        seat = await new_seat(context, update, lobby.chat_id)
        now, timeout = services.now(), services.settings.lobby_timeout
        done = await context.transact(game_id, lambda table: game_lobby.join_by_link(table, seat, now, timeout))
    except RefusedError as refusal:
        await context.reply(answer(refusal.code, await context.language()))
        return
    table = done.change.table
    seat_index = table.seat_of(user.id)
    assert seat_index is not None
    translator = i18n.translator(table.seat_language(seat_index))
    await context.reply(translator.t("You joined the game in «{group}».", group=title(table)))
    await maybe_autostart(context, table)


async def join_offered(update: Update, context: BotContext) -> bool:
    """A bare ``/start`` (an older client drops a link's payload, or Start was pressed by hand):
    the one open lobby that offered the sender its link seats them (:func:`seat_by_link`);
    offered by several, they are told where to tap. False when no lobby waits for them."""
    user = update.effective_user
    assert user is not None
    offered = await context.store.user_games(user.id, offered=True)
    if len(offered) == 1:
        await seat_by_link(update, context, offered[0].id)
    elif offered:
        await context.reply(links_waiting(await context.language(), offered))
    return bool(offered)


async def add_bot_command(update: Update, context: BotContext) -> None:
    """``/add_bot`` in a group: seat an AI player in the chat's lobby (creator or chat admin)."""
    services = context.services
    table, language = await chat_table(context, update)
    if table is None:
        return
    now, timeout = services.now(), services.settings.lobby_timeout
    user_id, admin = await may_manage(context, table, update)
    change = await command_transact(
        context,
        table,
        language,
        lambda table: game_lobby.add_bot(table, BOT_NAMES, now, timeout, user_id=user_id, is_admin=admin),
    )
    if change is not None:
        await maybe_autostart(context, change.table)


async def leave_command(update: Update, context: BotContext) -> None:
    """``/leave`` in a group: leave the lobby at once, or a running game after a confirming
    button (the AI then plays the seat, RULES.md table manners)."""
    services, user = context.services, update.effective_user
    assert user is not None
    chat_id, thread = place(update)
    table = await services.store.chat_game(chat_id, thread)
    language = table.lang if table else await context.group_language(chat_id)
    seat = table.seat_of(user.id) if table is not None else None
    if table is None or seat is None:
        await context.reply(answer(Answer.NOT_SEATED, language))
    elif table.status is not Status.LOBBY:
        rendered = leave_confirm(table, seat)
        await context.reply(rendered.text, rendered.markup)
    else:
        now, timeout = services.now(), services.settings.lobby_timeout
        change = await command_transact(
            context, table, language, lambda table: game_lobby.leave(table, user.id, now, timeout)
        )
        if change is not None:
            caused(services, change, user.id)


# -- taps ------------------------------------------------------------------------------------------


async def _load(press: Press) -> Table:
    """The tapped game. Raises ``RefusedError(Answer.NO_GAME)`` when it is gone."""
    table = await press.services.store.load(press.tap.game_id)
    if table is None:
        raise RefusedError(Answer.NO_GAME)
    return table


async def _transact(press: Press, transition: Transition) -> TapDone:
    """Apply ``transition`` to the tapped game; the answer is its reply."""
    done = await press.context.transact(press.tap.game_id, transition)
    return TapDone(done.change.reply, done.change.table)


async def join(press: Press) -> TapDone:
    """Join: a seat, or the lobby's join deep link for someone the bot cannot write to."""
    services, game_id = press.services, press.tap.game_id
    if not await services.store.records.can_dm(press.user_id):
        # The tap in the group proves membership: the lobby records the offer, the link seats
        # them and no one else (private.join_by_link).
        strangers = await _strangers(services, await _load(press), press.user_id)
        done = await press.context.transact(
            game_id, lambda table: game_lobby.offer_link(table, press.user_id, strangers)
        )
        url = create_deep_linked_url(services.username, JOIN_PAYLOAD + game_id)
        return TapDone(done.change.reply, done.change.table, url=url)
    chat_id = (await _load(press)).chat_id
    if await _outsider(press, chat_id):
        raise RefusedError(Answer.NOT_A_MEMBER)
    seat = await new_seat(press.context, press.update, chat_id)
    now, timeout = services.now(), services.settings.lobby_timeout
    done = await press.context.transact(game_id, lambda table: game_lobby.join(table, seat, now, timeout))
    caused(services, done.change, press.user_id)
    await maybe_autostart(press.context, done.change.table)
    return TapDone(done.change.reply, done.change.table)


async def _strangers(services: Services, lobby: Table, user_id: int) -> frozenset[int]:
    """Who of the lobby's link offers and ``user_id`` is no regular of its group: neither on the
    group's leaderboard nor seated in its topic's last game. Asked only of a lobby whose offers are
    full (:func:`game_lobby.offer_link`); a chat's Join taps are handled in order, so its offers do
    not grow before the transaction."""
    if len(lobby.link_offers) < game_lobby.MAX_LINK_OFFERS or game_lobby.link_offered_to(lobby, user_id):
        return frozenset()  # (no offer goes: nothing to ask)
    people = [*lobby.link_offers, user_id]
    regulars = await stats.on_board(services.store.records, lobby.chat_id, people)
    last = await services.store.chat_last_game(lobby.chat_id, lobby.thread_id)
    regulars |= {seat.user_id for seat in last.seats if seat.human} if last is not None else set()
    return frozenset(people) - regulars


async def _outsider(press: Press, chat_id: int) -> bool:
    """Whether the presser is no member of a public group (one with a username: anyone may open
    it and press its buttons; a private group's lobby only its members see). Asked of
    getChatMember (:func:`telegram_says_gone`: a failed call counts as a member)."""
    message = press.query.message
    if message is None or not message.chat.username:
        return False
    return await telegram_says_gone(press.context, chat_id, press.user_id)


async def leave(press: Press) -> TapDone:
    """Leave the lobby."""
    now, timeout = press.services.now(), press.services.settings.lobby_timeout
    done = await press.context.transact(
        press.tap.game_id, lambda table: game_lobby.leave(table, press.user_id, now, timeout)
    )
    caused(press.services, done.change, press.user_id)
    return TapDone(done.change.reply, done.change.table)


def caused(services: Services, change: Change, user_id: int) -> None:
    """A Join or Leave that changed a lobby: its board's redraw is one of the person's group
    messages (:class:`tgbot.sync.causes.GroupCauses`; called before anything lets the sync run)."""
    if change.reply in (Answer.JOINED, Answer.LEFT):
        services.syncer.group.causes.caused(change.table, user_id)


async def quit_game(press: Press) -> TapDone:
    """Leave a running game, confirmed: only by the player the confirmation was offered to."""
    seat = (await _load(press)).seat_of(press.user_id)
    if seat is None:
        raise RefusedError(Answer.NOT_SEATED)
    if press.tap.arg != str(seat):
        raise RefusedError(Answer.NOT_FOR_YOU)
    return answered_question(press, await leave(press))


async def manage(press: Press) -> TapDone:
    """Start, cancel, switch the variant, add or remove an AI: the creator's or a chat admin's."""
    services, tap = press.services, press.tap
    table = await _load(press)
    user_id, admin = await may_manage(press.context, table, press.update)
    now, timeout = services.now(), services.settings.lobby_timeout
    transitions: dict[Op, Transition] = {
        Op.CANCEL: lambda table: game_lobby.cancel(table, user_id, admin),
        Op.VARIANT: lambda table: game_lobby.set_variant(table, user_id, tap.arg, admin, now, timeout),
        Op.ADDBOT: lambda table: game_lobby.add_bot(table, BOT_NAMES, now, timeout, user_id=user_id, is_admin=admin),
        Op.RMBOT: lambda table: game_lobby.remove_bot(table, now, timeout, user_id=user_id, is_admin=admin),
    }
    if tap.op is Op.START:
        return await _transact(press, await start_transition(services, table, user_id, admin))
    done = await _transact(press, transitions[tap.op])
    if tap.op is Op.ADDBOT and done.table is not None:
        await maybe_autostart(press.context, done.table)
    return done


async def play_again(press: Press) -> TapDone:
    """«Play again» under a finished game (one of its people, or a chat admin): a new lobby in
    its chat with its AI seats and the presser; the others are invited privately (once per game
    and person), after the answer, and sit down only by tapping Join."""
    services, update, context = press.services, press.update, press.context
    old = await _load(press)
    if old.status is Status.CANCELLED:
        raise RefusedError(Answer.BAD_BUTTON)  # only a finished game offers it (a lobby's people are invited once)
    old = replace(old, chat_id=await current_chat(services.store, old.chat_id))  # a supergroup now?
    presser = actor_id(update)
    if not allowed(Action.PLAY_AGAIN, old, presser, False) and not await is_admin(press.context, old.chat_id, update):
        raise RefusedError(refusal(Action.PLAY_AGAIN))
    game_id = context.new_game_id()
    if not await services.store.claim_chat(old.chat_id, old.thread_id, game_id):
        current = await services.store.chat_game(old.chat_id, old.thread_id)
        return TapDone(Answer.REOPENED if current is not None and current.id == game_id else Answer.ALREADY_OPEN)
    reachable = {presser} if presser and await services.store.records.can_dm(presser) else set()
    # the presser's language as a join now would store it (their Telegram's may have changed)
    lang = (await new_seat(context, update, old.chat_id)).lang if reachable else None
    try:
        table = game_lobby.rematch(
            old, game_id, presser, services.now(), services.settings.lobby_timeout, reachable, lang
        )
    except RefusedError:
        await services.store.records.release_chat(old.chat_id, old.thread_id, game_id)
        raise
    table = replace(table, lang=await context.group_language(old.chat_id))  # as a new lobby's, not the old game's
    records = services.store.records
    others = [seat.user_id for seat in old.seats if seat.human and seat.user_id != presser]
    # once per finished game and person, however often «Play again» and a cancel follow each other
    invited = await open_lobby(context, table) + [
        user for user in others if await records.first_time(old.id, "invite", user)
    ]

    async def invite() -> None:
        context.background(notify_lobby(context, table, list(dict.fromkeys(invited))))

    return TapDone(Answer.REOPENED, then=invite)
