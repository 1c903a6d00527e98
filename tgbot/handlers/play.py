"""Playing: /board and the game's taps (pick cards, play, challenge, believe, refresh, take the
seat back, get the game's record)."""

from __future__ import annotations

import logging

from telegram import InputFile, Update
from telegram.error import Forbidden, TelegramError

import core
from core.cards import Hand, Rank
from tgbot.codec import Op
from tgbot.game import play as game_play
from tgbot.game.table import Answer, Player, RefusedError, Status
from tgbot.handlers.common import Press, TapDone, chat_table, redraw_panel
from tgbot.handlers.context import BotContext
from tgbot.logs import about_game
from tgbot.render.text import plain_names
from tgbot.storage import stats

log = logging.getLogger(__name__)


async def board_command(update: Update, context: BotContext) -> None:
    """``/board``: post the chat's board anew at the bottom; without a game, say how the last one
    ended and how to open a new one."""
    table, _ = await chat_table(context, update, last=True)
    if table is None or await context.hush() is not None:
        return
    await context.services.syncer.post_board(table)


async def show_panel(press: Press) -> TapDone:
    """Pick cards or refresh: the tapped panel is redrawn after the answer (no write to Redis)."""
    tap = press.tap
    table = await press.services.store.load(tap.game_id)
    seat = table.seat_of(press.user_id) if table is not None else None
    if table is None or table.state is None or seat is None:
        return TapDone(Answer.NO_GAME if table is None else Answer.NOT_SEATED, table)
    if table.seats[seat].player is Player.LEFT:
        raise RefusedError(Answer.SEAT_GONE)  # before anything that depends on the seat's hand
    code, picks = Answer.REFRESHED if tap.op is Op.REFRESH else Answer.OK, ""
    if tap.op is Op.PICK:
        if tap.action_count != table.action_count or table.state.current != seat:
            code = Answer.STALE
        elif table.state.hands[seat].contains(Hand.from_str(tap.cards)):
            picks = tap.cards
        else:
            code = Answer.CARDS_NOT_IN_HAND

    async def redraw() -> None:
        await redraw_panel(press, table, picks)

    return TapDone(code, table, then=redraw)


async def act(press: Press) -> TapDone:
    """Play, challenge or believe, at the moment the keyboard was drawn for (else ``stale``)."""
    tap = press.tap
    action: core.Action
    if tap.op is Op.PLAY:
        action = core.Play(Hand.from_str(tap.cards).ranks(), Rank.from_str(tap.claim))
    else:
        action = core.Challenge() if tap.op is Op.CHALLENGE else core.Believe()
    now = press.services.now()
    done = await press.context.transact(
        tap.game_id, lambda table: game_play.act(table, press.user_id, tap.action_count, action, now)
    )
    return TapDone(done.change.reply, done.change.table)


async def take_back(press: Press) -> TapDone:
    """The player takes their seat back from the AI."""
    now = press.services.now()
    done = await press.context.transact(press.tap.game_id, lambda table: game_play.take_back(table, press.user_id, now))
    return TapDone(done.change.reply, done.change.table)


async def send_record(press: Press) -> TapDone:
    """The game's record (``cheat-record/1`` with the players' names) as a file in the player's
    private chat, after the answer: once the game is over, at most once per player and game."""
    services, user_id = press.services, press.user_id
    table = await services.store.load(press.tap.game_id)
    if table is None:
        raise RefusedError(Answer.NO_GAME)
    seat = table.seat_of(user_id)
    if seat is None or not table.seats[seat].human:
        raise RefusedError(Answer.NOT_SEATED)
    if table.seats[seat].player is Player.LEFT:
        raise RefusedError(Answer.SEAT_GONE)  # it holds the hands the AI played for them
    if table.status is not Status.OVER:
        # it holds every hand and the seed: never while the game runs
        raise RefusedError(Answer.RECORD_NOT_YET if table.live else Answer.NO_GAME)
    deal, moves = await services.store.records.record(table.id)
    record = stats.record_of_game(table, deal, moves, plain_names(table))
    if record is None:
        raise RefusedError(Answer.NO_GAME)
    if not await services.store.records.first_time(table.id, "record", user_id):
        return TapDone(Answer.RECORD_AGAIN, table)  # a tap never sends it twice
    document = InputFile(record.to_json(indent=1).encode(), filename=stats.RECORD_FILE.format(gid=table.id))

    async def send() -> None:
        try:
            await press.context.bot.send_document(user_id, document)
        except Forbidden:
            await services.store.records.set_dm(user_id, False)
        except TelegramError as error:  # transient: the record is lost, a new game's can be asked
            about_game(log, table.id, table.chat_id).info("record not sent to %s: %s", user_id, error)

    return TapDone(Answer.RECORD_SENT, table, then=send)  # (answered in the seat's language)
