"""The group lane of the sync: the outbox, the unreachable notes, then the board; a group that refuses
or is gone (docs/DESIGN.md, A group that takes no message)."""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from telegram.constants import MessageLimit
from telegram.error import BadRequest, ChatMigrated, Forbidden, TelegramError
from telegram.ext import ExtBot

from core.stats import SeatStats
from tgbot.game import group as game_group
from tgbot.game.table import AnnouncementKind, Answer, Change, Ending, GroupAccess, RefusedError, Table
from tgbot.logs import about_game
from tgbot.owner.store import Store
from tgbot.render.announcements import announcement, board_moved, reminder_over, unreachable
from tgbot.render.board import board
from tgbot.render.text import Rendered, utf16_units
from tgbot.sync import bookkeeping as fields
from tgbot.sync.bookkeeping import Bookkeeping
from tgbot.sync.causes import GroupCauses
from tgbot.sync.messages import GroupRefusal, MaybeSentError, Messages, group_refusal
from tgbot.sync.ratelimit import ThrottledError

log = logging.getLogger(__name__)


def _joined(texts: list[str]) -> str:
    """Announcements posted as one message: one paragraph each."""
    return "\n\n".join(texts)


#: The most announcements a game keeps while its group takes no message (the oldest go first).
MAX_HELD_ANNOUNCEMENTS = 20
#: Seconds between two looks at a lobby board that waits for its cause's room (:mod:`tgbot.sync.causes`).
HELD_LOOK = 1.0


@dataclass(frozen=True)
class GameHooks:
    """What the sync asks of other layers about a game (the runner wires them to storage/)."""

    figures: Callable[[Table], Awaitable[list[SeatStats] | None]]  # each seat's, for the result
    shown: Callable[[Table], Awaitable[object]]  # an ended game shown to its end (its statistics)
    migrated: Callable[[Table, int], Awaitable[object]]  # its group is now this supergroup


def _turn_passed(table: Table, seat: object, end: object) -> bool:
    """Whether the turn of ``seat`` that ends at ``end`` (a reminder's) is over: another turn,
    or the game, or the person's own hands no longer on it (the AI plays the seat)."""
    if end is None or not isinstance(seat, int):
        return False
    current = table.state.current if table.state is not None and table.live else None
    return current != seat or table.turn_end != end or table.seats[seat].by_ai


class GroupLane:
    """Brings a game's group messages up to date (:meth:`sync`)."""

    def __init__(
        self, bot: ExtBot[Any], store: Store, bookkeeping: Bookkeeping, messages: Messages, bot_username: Callable[[], str],
        clock: Callable[[], float], grace: float, again: Callable[[str], None], finished: Callable[[str], None],
        hooks: GameHooks,
    ) -> None:  # fmt: skip
        """``clock``: epoch seconds on Redis's clock; ``grace``: seconds a group may refuse
        messages before its game is retired; ``again(game_id)``: run this lane once more;
        ``finished(game_id)``: everything of an ended game has been shown."""
        self.hooks = hooks
        self.bot, self.store, self.bookkeeping, self.messages = bot, store, bookkeeping, messages
        self._username, self._clock, self._grace, self._again, self._finished = (
            bot_username,
            clock,
            grace,
            again,
            finished,
        )
        #: by game: the outbox sequence number posted (nothing to read from Redis up to it)
        self._posted: dict[str, int] = {}
        self.causes = GroupCauses()  # (the handlers record who changed a lobby)

    def board(self, table: Table) -> Rendered:
        return board(table, self._username())

    async def sync(self, table: Table) -> None:
        await self._retire_reminders(table)
        if table.group_access is GroupAccess.GONE:
            await self.store.records.outbox_clear(table.id)  # nothing calls the group again
            await self._finish(table)
            return
        try:
            await self._post(table)
        except ChatMigrated as error:
            # The group became a supergroup (400 with migrate_to_chat_id): the game and the
            # chat's data move, then the lane runs again under the new id.
            await self.hooks.migrated(table, error.new_chat_id)
            self._again(table.id)
        except (BadRequest, Forbidden) as error:
            refusal = group_refusal(error)
            if refusal is None:
                raise  # this one message cannot be posted as it is: the lane gives up for now
            await self.refused(table, refusal, error)

    async def _post(self, table: Table) -> None:
        """The outbox, the unreachable notes, then the board: edited in place or, when the group
        had refused messages, posted anew at the bottom (the table is writable again)."""
        refused = await self._post_outbox(table)
        if refused is not None:
            await self.refused(table, GroupRefusal.UNWRITABLE, refused)
            return
        await self._post_unreachable_notes(table)
        if table.group_access is GroupAccess.UNWRITABLE:
            await self.post_board(table)
            await self.store.transact(table.id, game_group.group_writable)
            about_game(log, table.id, table.chat_id).info("group takes messages again: its board is posted anew")
        else:
            await self._edit_board(table, anew=not table.live and table.state is not None)
        if not table.live:
            await self._finish(table)

    async def _finish(self, table: Table) -> None:
        """Everything of an ended game has been shown (or never will be): its statistics are
        counted (once: tgbot.storage.stats), then it leaves the start-up sync set."""
        await self.hooks.shown(table)
        await self.store.records.forget_live(table.id)
        self._posted.pop(table.id, None)
        self.causes.forget(table.id)
        self._finished(table.id)

    async def _post_outbox(self, table: Table) -> TelegramError | None:
        """Post the outbox in order, waiting announcements together within Telegram's text limit;
        a refusal for now keeps them (the newest :data:`MAX_HELD_ANNOUNCEMENTS`) and is returned."""
        game_id = table.id
        if table.outbox_seq <= self._posted.get(game_id, -1) and table.group_access is not GroupAccess.UNWRITABLE:
            return None
        refused: TelegramError | None = None
        kept: list[str] = []
        waiting: list[tuple[str, str]] = []  # the group's announcements to post next: (raw, text)
        for raw, note in await self.store.records.outbox(game_id):
            if note.get("to") is not None:  # a private note: the group's before it go first
                refused = refused or await self._post_announcements(table, waiting, kept)
                waiting = []
                if not _turn_passed(table, note.get("seat"), note.get("end")):  # (a reminder too late is dropped)
                    await self._tell_player(table, note, announcement(table, note) or "")
                await self.store.records.outbox_drop(game_id, [raw])
            elif refused is not None:
                kept.append(raw)
            else:
                text = await self._announcement(table, note)
                if (
                    waiting
                    and utf16_units(_joined([*(shown for _, shown in waiting), text])) > MessageLimit.MAX_TEXT_LENGTH
                ):
                    refused = await self._post_announcements(table, waiting, kept)
                    waiting = []
                if refused is None:
                    waiting.append((raw, text))
                else:
                    kept.append(raw)
        if refused is None:
            refused = await self._post_announcements(table, waiting, kept)
        if refused is None:
            self._posted[game_id] = max(self._posted.get(game_id, -1), table.outbox_seq)
        elif len(kept) > MAX_HELD_ANNOUNCEMENTS:
            about_game(log, game_id, table.chat_id).warning(
                "group takes no message: %d announcements dropped", len(kept) - MAX_HELD_ANNOUNCEMENTS
            )
            await self.store.records.outbox_drop(game_id, kept[:-MAX_HELD_ANNOUNCEMENTS])
        return refused

    async def _announcement(self, table: Table, note: dict[str, Any]) -> str:
        """The text of a group announcement ("" for one this version shows nothing of)."""
        ended = AnnouncementKind.read(note.get("kind")) is AnnouncementKind.GAME_ENDED
        return announcement(table, note, await self.hooks.figures(table) if ended else None) or ""

    async def _post_announcements(
        self, table: Table, waiting: list[tuple[str, str]], kept: list[str]
    ) -> TelegramError | None:
        """Post the ``waiting`` announcements ((raw, text)) as one message and drop them from the
        outbox; a refusal for now keeps them in ``kept`` and is returned. A message Telegram refuses
        as it is goes again one announcement at a time; one refused alone is dropped."""
        texts = [text for _, text in waiting if text]
        try:
            if texts:
                await self.messages.send(table.chat_id, Rendered(_joined(texts)), table.thread_id)
        except MaybeSentError:
            pass  # maybe posted: counted as posted, never posted twice
        except (BadRequest, Forbidden) as error:
            refusal = group_refusal(error)
            if refusal is GroupRefusal.UNWRITABLE:
                kept.extend(raw for raw, _ in waiting)
                return error
            if refusal is not None:
                raise
            if len(texts) > 1:
                for one in waiting:
                    if (refused := await self._post_announcements(table, [one], kept)) is not None:
                        return refused
                return None
            about_game(log, table.id, table.chat_id).error("announcement dropped: %s", error)
        await self.store.records.outbox_drop(
            table.id, [raw for raw, _ in waiting], self.bookkeeping.window(table.id) if texts else None
        )
        return None

    async def _tell_player(self, table: Table, note: dict[str, Any], text: str) -> None:
        """A note to one player privately (the turn reminder: kept in the bookkeeping, to be
        retired when its turn passes); a lost private chat is recorded, a note Telegram refuses
        as it is is dropped."""
        user_id = int(note["to"])
        if not text:
            return
        try:
            shown = await self.messages.send(user_id, Rendered(text))  # (a 403 is recorded there)
        except MaybeSentError:
            return  # maybe told: never told twice (and no reminder recorded to retire)
        except BadRequest as error:
            about_game(log, table.id, table.chat_id).error("private note to %s dropped: %s", user_id, error)
            return
        if shown is not None and note.get("end") is not None and isinstance(note.get("seat"), int):
            await self.bookkeeping.write(table.id, {fields.reminder(note["seat"]): f"{shown} {note['end']!r}"})

    async def _retire_reminders(self, table: Table) -> None:
        """Delete each turn reminder whose turn has passed (a countdown to a moment gone by is
        no reminder), or edit it so when Telegram no longer deletes it."""
        bookkeeping = await self.bookkeeping.of(table.id)
        for seat in range(len(table.seats)):
            shown = bookkeeping.get(fields.reminder(seat))
            if not shown:
                continue
            message_id, _, end = shown.partition(" ")
            if not _turn_passed(table, seat, float(end)):
                continue
            await self.messages.retire(table.seats[seat].user_id, int(message_id), reminder_over(table, seat))
            await self.bookkeeping.write(table.id, {fields.reminder(seat): None})

    async def _post_unreachable_notes(self, table: Table) -> None:
        """Tell the group of each player marked unreachable (1, then 2): once per player per
        game (``once:unreachable:<user>`` in the game's hash, :meth:`Store.marked`)."""
        bookkeeping = await self.bookkeeping.of(table.id)
        for seat in range(len(table.seats)):
            if bookkeeping.get(fields.unreachable(seat)) != "1" or not table.live:
                continue
            user_id = table.seats[seat].user_id
            if not await self.store.records.marked(table.id, "unreachable", user_id):
                text = unreachable(table, seat, self._username())
                with contextlib.suppress(MaybeSentError):  # maybe posted: never posted twice
                    await self.messages.send(table.chat_id, Rendered(text), table.thread_id)
                await self.store.records.first_time(table.id, "unreachable", user_id)
            await self.bookkeeping.write(table.id, {fields.unreachable(seat): 2})

    async def _edit_board(self, table: Table, anew: bool = False) -> None:
        """Edit the board in place when what it shows changed (a deleted one is posted anew);
        ``anew``: post it at the bottom instead (a game's final board, with «Play again», under
        its result rather than far up above the game's announcements)."""
        bookkeeping = await self.bookkeeping.of(table.id)
        rendered = self.board(table)
        if bookkeeping.get(fields.BOARD_DIGEST) != rendered.digest:
            if (held := self.causes.held(table)) > 0:
                raise ThrottledError(min(held, HELD_LOOK))  # a lobby change past its cause's room: later
            if anew:
                await self.post_board(table)
                return
            old = bookkeeping.get(fields.BOARD_MESSAGE)
            try:
                shown = await self.messages.show(table.chat_id, table.thread_id, int(old) if old else None, rendered)
            except MaybeSentError:
                # maybe posted: never posted twice; the board kept is edited at the next change
                await self.bookkeeping.write(table.id, {fields.BOARD_DIGEST: rendered.digest})
                return
            if shown is not None:
                await self.bookkeeping.write(
                    table.id, {fields.BOARD_MESSAGE: shown, fields.BOARD_DIGEST: rendered.digest}
                )

    async def post_board(self, table: Table) -> None:
        """Post the board anew at the bottom of the group and delete the old one: after a pause
        the board in place is far up, above the announcements that waited."""
        rendered = self.board(table)
        old = (await self.bookkeeping.of(table.id)).get(fields.BOARD_MESSAGE)
        try:
            shown = await self.messages.send(table.chat_id, rendered, table.thread_id)
        except MaybeSentError:
            # maybe posted: never posted twice; the board kept (not deleted) is edited at the next change
            await self.bookkeeping.write(table.id, {fields.BOARD_DIGEST: rendered.digest})
            return
        if shown is not None:
            await self.bookkeeping.write(table.id, {fields.BOARD_MESSAGE: shown, fields.BOARD_DIGEST: rendered.digest})
        if old:
            await self.messages.retire(table.chat_id, int(old), board_moved(table))

    async def refused(self, table: Table, refusal: GroupRefusal, cause: TelegramError | str) -> None:
        """The group refused a message: for now (the table records since when; it is retired
        after the grace unless a message goes through first) or for good (it is retired now, and
        so is every live game of the chat when the whole chat is lost), committed with each table."""
        if refusal is GroupRefusal.UNWRITABLE:
            since, grace = self._clock(), self._grace
            await self._commit_access(table.id, lambda t: game_group.group_unwritable(t, since, grace), cause)
            return
        reason = Ending.BOT_REMOVED if refusal is GroupRefusal.BOT_REMOVED else Ending.CHAT_GONE
        others = [] if refusal is GroupRefusal.TOPIC_GONE else await self.store.chat_games(table.chat_id)
        for game_id in dict.fromkeys([table.id, *(other.id for other in others)]):
            await self._commit_access(game_id, lambda t: game_group.group_gone(t, reason), cause)

    async def _commit_access(self, game_id: str, change: Callable[[Table], Change], cause: TelegramError | str) -> None:
        """Commit a change of the game's group access (logged unless it changed nothing)."""
        try:
            done = await self.store.transact(game_id, change)
        except RefusedError:
            return  # the game itself is gone
        if done.change.reply != Answer.UNCHANGED:
            about_game(log, game_id, done.change.table.chat_id).warning("group %s: %s", done.change.reply, cause)

    def close(self) -> None:
        self._posted.clear()
