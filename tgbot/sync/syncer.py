"""Make Telegram show what the stored table says, after each commit and at take-over, in two lanes
per game: the players' panels (a turn's panel sent anew, others edited when their player's own
situation changed) and the group's messages (:mod:`tgbot.sync.group_lane`). One task per lane and
game: a request while it runs makes it run once more with the newest table; a throttled call
(:data:`~tgbot.sync.messages.DEFER`) makes that lane wait for its group alone."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable
from enum import StrEnum
from typing import Any

from telegram.error import BadRequest, Forbidden, NetworkError, RetryAfter, TelegramError
from telegram.ext import ExtBot

from tgbot.game.table import RETIRED, Table
from tgbot.logs import about_game
from tgbot.owner.store import Store
from tgbot.render.announcements import panel_moved, retired_note
from tgbot.render.panel import panel, panel_state, turn_now
from tgbot.sync import bookkeeping as fields
from tgbot.sync.bookkeeping import Bookkeeping
from tgbot.sync.group_lane import GameHooks, GroupLane
from tgbot.sync.messages import DEFER, GroupRefusal, MaybeSentError, Messages, retry_seconds
from tgbot.sync.ratelimit import RateLimiter, ThrottledError
from tgbot.sync.redraws import PanelRedraws
from tgbot.sync.tapped import TappedPanels

log = logging.getLogger(__name__)


class Lane(StrEnum):
    """The view sync's lanes: players' panels, then the group's messages."""

    PANELS = "panels"
    GROUP = "group"


class Syncer:
    """Schedules and runs syncs of games' Telegram views; see the module docstring."""

    def __init__(
        self,
        bot: ExtBot[Any],
        store: Store,
        bot_username: Callable[[], str],
        hooks: GameHooks,
        clock: Callable[[], float] = time.time,
        unwritable_grace: float = 900.0,
    ) -> None:
        """``clock``: epoch seconds on Redis's clock (:meth:`tgbot.owner.clock.RedisClock.now`);
        ``unwritable_grace``: seconds a group may refuse messages before its game is retired."""
        self.bot = bot
        self.store = store
        self._grace = unwritable_grace
        self._running: dict[tuple[str, Lane], asyncio.Task[None]] = {}
        self._dirty: set[tuple[str, Lane]] = set()
        self._panel_locks: dict[tuple[str, int], asyncio.Lock] = {}
        self._closed = False
        self._clock = clock
        self._chats: dict[str, int] = {}  # each game's group, once synced
        self.bookkeeping = Bookkeeping(store, self._group_sent)
        self.messages = Messages(bot, store)
        self.tapped = TappedPanels(self.bookkeeping, self.messages, self._panel_lock)
        self.group = GroupLane(
            bot,
            store,
            self.bookkeeping,
            self.messages,
            bot_username,
            clock,
            unwritable_grace,
            self._group_again,
            self._forget,
            hooks,
        )
        self.redraws = PanelRedraws(store.load, self.tapped.redraw)  # the taps' redraws

    def request(self, game_id: str) -> None:
        """Bring the game's views up to date soon (non-blocking, coalesced). Ignored once
        :meth:`close` began (the next active process syncs every live game)."""
        if self._closed:
            return
        for lane in Lane:
            key = (game_id, lane)
            self._dirty.add(key)
            if key not in self._running:
                self._running[key] = asyncio.create_task(self._loop(key), name=f"sync-{lane}-{game_id}")

    def _limiter(self) -> RateLimiter | None:
        limiter = self.bot.rate_limiter
        return limiter if isinstance(limiter, RateLimiter) else None

    def _group_sent(self, game_id: str) -> str | None:
        """The game's :data:`~tgbot.sync.bookkeeping.GROUP_SENT` now (None: its group not known yet)."""
        chat_id, limiter = self._chats.get(game_id), self._limiter()
        if chat_id is None or limiter is None:
            return None
        now = self._clock()
        return fields.group_sent([now - age for age in limiter.sent(chat_id)])

    async def recall_windows(self, tables: list[Table], lapsed: float | None) -> None:
        """On becoming active: count in the rate limiter what the previous holders sent to each
        live game's group (the newest record of the group's games), and one message more per
        game at ``lapsed`` (when the previous holder's lease lapsed, Redis's clock): the one it
        may have had in flight, and so in each player's private chat. A group's first message then
        goes out as soon as its real window allows."""
        limiter = self._limiter()
        if limiter is None:
            return
        newest: dict[
            int, list[float]
        ] = {}  # by group: the record with the latest message (it holds the others' in its window)
        in_flight: dict[int, list[float]] = {}
        for table in tables:
            self._chats[table.id] = table.chat_id
            sent = fields.read_group_sent((await self.bookkeeping.of(table.id)).get(fields.GROUP_SENT))
            if max(sent, default=0.0) >= max(newest.get(table.chat_id, []), default=0.0):
                newest[table.chat_id] = sent
            in_flight.setdefault(table.chat_id, []).extend([lapsed] if lapsed is not None else [])
        now = self._clock()
        for chat_id, sent in newest.items():
            limiter.recall(chat_id, [now - moment for moment in [*sent, *in_flight[chat_id]]])
        if lapsed is not None:
            for user_id in {player.user_id for table in tables for player in table.seats if player.human}:
                limiter.recall(user_id, [now - lapsed])  # their panel in flight

    def _group_again(self, game_id: str) -> None:
        self._dirty.add((game_id, Lane.GROUP))

    def _forget(self, game_id: str) -> None:
        """Drop what is kept in memory of an ended game that has been shown."""
        self.bookkeeping.forget(game_id)
        self.redraws.forget(game_id)
        self._chats.pop(game_id, None)
        for key in [key for key in self._panel_locks if key[0] == game_id]:
            del self._panel_locks[key]

    async def idle(self) -> None:
        """Wait until no sync is running (tests and shutdown)."""
        while self._running:
            await asyncio.gather(*list(self._running.values()), return_exceptions=True)
        await self.redraws.idle()

    async def close(self, grace: float = 0.0) -> None:
        """Stop every lane: runs in flight get ``grace`` seconds, then the rest is cancelled.
        Nothing is lost: the next active process syncs every live game. Later requests are
        ignored; what is kept in memory is dropped."""
        self._closed = True
        tasks = list(self._running.values())
        if tasks and grace > 0:
            await asyncio.wait(tasks, timeout=grace)
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        if grace > 0:
            await self.bookkeeping.save()
        self.bookkeeping.close()
        self._chats.clear()
        self.group.close()
        self.redraws.close()
        self._panel_locks.clear()

    async def _loop(self, key: tuple[str, Lane]) -> None:
        game_id, lane = key
        delay = 1.0
        try:
            while key in self._dirty:
                self._dirty.discard(key)
                wait = 0.0
                try:
                    table = await self.store.load(game_id)
                    if table is not None:
                        self._chats[game_id] = table.chat_id
                        await (self._sync_panels(table) if lane is Lane.PANELS else self.group.sync(table))
                    delay = 1.0
                except RetryAfter as error:
                    # throttled by our limiter or a 429: this lane of this game waits, no other
                    self._dirty.add(key)
                    wait = retry_seconds(error)
                except (BadRequest, Forbidden) as error:
                    # a message Telegram refuses as it is: the next committed change syncs again
                    about_game(log, game_id).warning("sync %s gave up: %s", lane, error)
                except Exception as error:
                    if isinstance(error, NetworkError | TelegramError):
                        about_game(log, game_id).warning("sync %s: %s; retrying in %.0f s", lane, error, delay)
                    else:
                        about_game(log, game_id).exception("sync %s failed", lane)
                    self._dirty.add(key)
                    wait, delay = delay, min(delay * 2, 30.0)
                if wait:
                    await asyncio.sleep(wait)
        finally:
            self._running.pop(key, None)

    # -- panels lane ---------------------------------------------------------------------------

    async def _sync_panels(self, table: Table) -> None:
        """Each person's panel; a seat marked unreachable (a 403, or the player blocked the bot)
        is left alone until they start the bot again. A private chat blocked for now holds back
        only its own panel: the lane runs again when the first block ends."""
        bookkeeping = await self.bookkeeping.of(table.id)
        if table.ended in RETIRED:
            await self._tell_retired(table, bookkeeping)
        if table.state is None:
            return
        blocked: list[float] = []  # seconds until each blocked panel's chat takes messages again
        for seat, player in enumerate(table.seats):
            if (
                not player.human
                or bookkeeping.get(fields.unreachable(seat))
                or not self._needs_work(table, seat, bookkeeping)
            ):
                continue  # bots have no panel
            async with self._panel_lock(table.id, seat):
                try:
                    reached = await self._sync_panel(table, seat, player.user_id, bookkeeping)
                except RetryAfter as error:
                    blocked.append(retry_seconds(error))
                    continue
                if not reached:
                    await self._mark_unreachable(table, seat)
        if blocked:
            raise ThrottledError(min(blocked))

    @staticmethod
    def _needs_work(table: Table, seat: int, bookkeeping: dict[str, str]) -> bool:
        """Whether the seat's panel does not show their situation (or their turn's panel is unsent)."""
        if bookkeeping.get(fields.panel_state(seat)) != panel_state(table, seat):
            return True
        return turn_now(table, seat) and bookkeeping.get(fields.turn_panel_sent(seat)) != str(table.action_count)

    def _panel_lock(self, game_id: str, seat: int) -> asyncio.Lock:
        """One lock per panel, shared by the sync and tap redraws, so each decides on what the
        panel shows now, not on what it showed before the other drew it."""
        return self._panel_locks.setdefault((game_id, seat), asyncio.Lock())

    async def _sync_panel(self, table: Table, seat: int, chat_id: int, bookkeeping: dict[str, str]) -> bool:
        """Bring one panel up to date; False when the player's private chat is unreachable."""
        state = panel_state(table, seat)
        old = bookkeeping.get(fields.panel_message(seat))
        message_id = int(old) if old else None
        turn_panel = turn_now(table, seat) and bookkeeping.get(fields.turn_panel_sent(seat)) != str(table.action_count)
        rendered = panel(table, seat, kept=not turn_panel and bool(bookkeeping.get(fields.panel_maybe_newer(seat))))
        if not turn_panel and bookkeeping.get(fields.panel_digest(seat)) == rendered.digest and message_id is not None:
            await self.bookkeeping.write(table.id, {fields.panel_state(seat): state})
            return True
        # a turn's panel is sent anew (a notification), the old one deleted; else edited in place
        try:
            shown = await (
                self.messages.send(chat_id, rendered)
                if turn_panel
                else self.messages.show(chat_id, None, message_id, rendered)
            )
        except MaybeSentError:
            # maybe shown: never sent again; a turn panel's predecessor is kept without actions
            maybe: dict[str, object] = {fields.panel_state(seat): state}
            if turn_panel:
                maybe |= {fields.turn_panel_sent(seat): table.action_count, fields.panel_maybe_newer(seat): 1}
            await self.bookkeeping.write(table.id, maybe)
            if turn_panel and message_id is not None:
                await self._show_kept(table, seat, chat_id, message_id)
            return True
        if shown is None:
            return False
        written: dict[str, object] = {
            fields.panel_message(seat): shown,
            fields.panel_state(seat): state,
            fields.panel_digest(seat): rendered.digest,
        }
        if turn_panel:
            written |= {fields.turn_panel_sent(seat): table.action_count, fields.panel_maybe_newer(seat): None}
        await self.bookkeeping.write(table.id, written)
        if turn_panel and message_id is not None:
            await self.messages.retire(chat_id, message_id, panel_moved(table, seat))
        return True

    async def _mark_unreachable(self, table: Table, seat: int) -> bool:
        """The seat's private chat is lost: mark it (unless marked already) for the group lane to
        say so, once per player per game (``once:unreachable:<user>``). True when marked now."""
        bookkeeping = await self.bookkeeping.of(table.id)
        if table.state is None or not table.live or bookkeeping.get(fields.unreachable(seat)):
            return False
        await self.bookkeeping.write(table.id, {fields.unreachable(seat): 1})
        self.request(table.id)
        return True

    async def _tell_retired(self, table: Table, bookkeeping: dict[str, str]) -> None:
        """A game ended because the bot lost its group: tell each person privately, once."""
        for seat, player in enumerate(table.seats):
            if (
                not player.human
                or bookkeeping.get(fields.told_retired(seat))
                or not await self.store.records.can_dm(player.user_id)
            ):
                continue
            try:
                await self.bot.send_message(player.user_id, retired_note(table, seat, self._grace))
            except Forbidden:
                await self.store.records.set_dm(player.user_id, False)
            await self.bookkeeping.write(table.id, {fields.told_retired(seat): 1})

    # -- entry points for the handlers ---------------------------------------------------------

    async def unreachable(self, user_id: int) -> int:
        """The user blocked the bot: their seats in running games are marked unreachable (the
        panels are left alone, each group is told once). Returns the number of games marked."""
        marked = 0
        for table in await self.store.user_games(user_id):
            seat = table.seat_of(user_id)
            marked += seat is not None and await self._mark_unreachable(table, seat)
        return marked

    async def reachable_again(self, user_id: int) -> int:
        """The user (re)started the bot: their panels of every live game are sent anew on the
        next sync. Returns the number of games requested."""
        tables = await self.store.user_games(user_id)
        for table in tables:
            seat = table.seat_of(user_id)
            assert seat is not None
            old = (await self.bookkeeping.of(table.id)).get(fields.panel_message(seat))
            if old:
                await self.messages.retire(user_id, int(old), panel_moved(table, seat))  # its buttons are stale
            per_seat = (
                fields.panel_message,
                fields.panel_state,
                fields.turn_panel_sent,
                fields.panel_maybe_newer,
                fields.panel_digest,
                fields.unreachable,
            )
            await self.bookkeeping.write(table.id, {name(seat): None for name in per_seat})
            self.request(table.id)
        return len(tables)

    async def _show_kept(self, table: Table, seat: int, chat_id: int, message_id: int) -> None:
        """The panel kept beside a turn panel maybe sent: what it shows, only «Refresh» to tap."""
        rendered = panel(table, seat, kept=True)
        with contextlib.suppress(MaybeSentError, RetryAfter):  # (edited again at the next change)
            if await self.messages.show(chat_id, None, message_id, rendered, resend=False) == message_id:
                await self.bookkeeping.write(table.id, {fields.panel_digest(seat): rendered.digest})

    async def post_board(self, table: Table) -> None:
        """Post the board anew at the bottom of the group (``/board``) and forget the old one."""
        rendered = self.group.board(table)
        sent = await self.bot.send_message(
            table.chat_id, rendered.text, reply_markup=rendered.markup, message_thread_id=table.thread_id
        )
        await self.bookkeeping.write(
            table.id, {fields.BOARD_MESSAGE: sent.message_id, fields.BOARD_DIGEST: rendered.digest}
        )

    async def group_rights_changed(self, chat_id: int, can_write: bool) -> None:
        """The bot's rights in the group changed while it stays a member: without the right to
        write, its live games' group is unwritable from now on; with it, each game's sync tries
        the group again."""
        for table in await self.store.chat_games(chat_id):
            if not can_write:
                await self.group.refused(table, GroupRefusal.UNWRITABLE, "the bot was restricted (my_chat_member)")
            self.request(table.id)


__all__ = ["DEFER", "Lane", "Syncer"]
