"""The one view-sync path: make Telegram show what the stored table says.

After every committed change, and for every live game when this process becomes the active one,
:meth:`Syncer.request` schedules a sync of that game. A sync brings each projection up to date
(DESIGN.md, tgbot/):

- private lane: each player's panel. When a player's turn comes, their panel is sent anew at the
  bottom of their private chat (a notification) and the old one deleted; otherwise it is edited
  only when what it shows of their own situation changed (their hand, their turn, the game's
  end), so a play costs at most the actor's and the next player's panels;
- group lane: the outbox (showdowns, beliefs, automatic moves, the result: new messages, posted
  in order and popped only once Telegram accepted them, so a crash repeats at most the one in
  flight), then the board, edited in place. An outbox note with ``to`` (the turn reminder) is
  posted to that player's private chat instead, in the same order.

A group that refuses messages for now (a read-only group, the bot restricted, a closed topic:
Telegram answers 400, usually with no update, :func:`group_refusal`) keeps its announcements in
the outbox (the newest :data:`MAX_HELD_ANNOUNCEMENTS`) and the table records since when
(:func:`tgbot.game.group.group_unwritable`); the game goes on in private. Every later sync (each
move, and the table's timer every minute) tries the group again; the first message that goes
through posts the waiting announcements and the board anew. A group that stays shut for the
grace (``LOBBY_TIMEOUT``), or is gone (400 "chat not found", a 403 of a removed bot), retires
its game (:func:`tgbot.game.group.group_gone`): its people are told privately, its announcements are
dropped, and nothing calls the group again, after a restart neither.

Only the active process syncs (:mod:`tgbot.process.lease`), so each lane of each game is one task of
this process: a request while it runs marks it dirty and it runs once more with the newest
table, so a burst of moves yields one board edit (coalescing). The Telegram bookkeeping (message
ids and what they show, the game's ``tg`` hash) is kept in memory and written through to Redis
after each call, so a take-over repeats at most one edit or announcement. The sync's calls are
made with ``defer`` (:data:`DEFER`): a group without a free slot (or blocked by a 429) raises
:class:`~tgbot.process.ratelimit.ThrottledError` instead of queueing a stale edit, and the lane sleeps for
that group alone and runs again with the newest state.
"""

from __future__ import annotations

import asyncio
import contextvars
import logging
import time
from collections.abc import Callable
from enum import Enum
from typing import Any

from telegram import Bot, Message
from telegram.error import BadRequest, ChatMigrated, Forbidden, NetworkError, RetryAfter, TelegramError

from tgbot.storage import chatmove

from tgbot.game import group
from tgbot.game.table import Change, GroupAccess, Player, RefusedError, RetireReason, Status, Table

from tgbot.views import render

from tgbot.storage import stats
from tgbot.owner.store import Store

__all__ = ["Syncer", "panel_key", "answer", "DEFER", "LANES", "GroupRefusal", "group_refusal", "MAX_HELD_ANNOUNCEMENTS"]

log = logging.getLogger(__name__)

#: rate_limit_args of the sync's sends and edits: do not wait for a group slot, raise ThrottledError.
DEFER = {"defer": True, "priority": "game"}
#: The view sync's lanes: players' panels, then the group's messages.
LANES = ("dm", "group")
#: Bookkeeping fields not written through: what a message shows (digests), saved every
#: :data:`DIGEST_SAVE_EVERY` seconds. Without them a new active process edits a message once
#: more (Telegram: "message is not modified" at worst); message ids and the markers of what was
#: sent or told are written through.
_IN_MEMORY_ONLY = frozenset({"pk", "pd", "bh"})
#: Seconds between writes of those digests (all games' in one round trip): a take-over repeats
#: only the edits of the last seconds, and a tap pays no round trip for them.
DIGEST_SAVE_EVERY = 2.0
#: The ``ended`` of a table retired because its group was lost (its people are told privately).
RETIRE_REASONS = frozenset(reason.value for reason in RetireReason)


#: The most announcements a game keeps while its group takes no message (the oldest go first).
MAX_HELD_ANNOUNCEMENTS = 20


class GroupRefusal(Enum):
    """How a game's group refused a message (:func:`group_refusal`)."""

    #: for now: a change of rights undoes it (the announcements wait, the game goes on)
    UNWRITABLE = "unwritable"
    #: for good: the chat no longer exists (every game of it is retired)
    CHAT_GONE = "chat_gone"
    #: for good: the game's forum topic no longer exists (that game is retired)
    TOPIC_GONE = "topic_gone"
    #: for good: the bot is no longer a member of the group (every game of it is retired)
    BOT_REMOVED = "bot_removed"


#: Telegram's answers (parts of the description, lowercase) that a change of rights undoes, all
#: 400 and usually without any update: a read-only group or a restricted bot ("Bad Request: not
#: enough rights to send text messages to the chat", "… to send documents …", "Bad Request: have
#: no rights to send a message", "Bad Request: CHAT_WRITE_FORBIDDEN", "Bad Request:
#: CHAT_RESTRICTED", "Bad Request: need administrator rights in the channel chat") and a closed
#: forum topic ("Bad Request: TOPIC_CLOSED").
UNWRITABLE_ANSWERS = ("not enough rights", "have no rights to send", "chat_write_forbidden", "chat_restricted", "need administrator rights", "topic_closed")
#: Telegram's answers of a chat that no longer exists: 400 "Bad Request: chat not found", "Bad
#: Request: group chat was deactivated"; 403 "Forbidden: the group chat was deleted".
CHAT_GONE_ANSWERS = ("chat not found", "chat was deactivated", "chat was deleted")
#: … of a forum topic that no longer exists: 400 "Bad Request: message thread not found", "Bad
#: Request: TOPIC_DELETED".
TOPIC_GONE_ANSWERS = ("message thread not found", "topic_deleted")


def _is(err: TelegramError, *texts: str) -> bool:
    msg = str(err.message).lower()
    return any(t in msg for t in texts)


def group_refusal(error: TelegramError) -> GroupRefusal | None:
    """What Telegram's ``error`` to a message for a group says of the group: a refusal for now
    (:data:`UNWRITABLE_ANSWERS`), a chat or a topic that is no more (:data:`CHAT_GONE_ANSWERS`,
    :data:`TOPIC_GONE_ANSWERS`), any other 403 (403 "Forbidden: bot was kicked from the
    supergroup chat", "Forbidden: bot is not a member of the supergroup chat") the bot removed;
    ``None`` for what concerns the message only (too long, "message is not modified", …)."""
    if not isinstance(error, (BadRequest, Forbidden)):
        return None
    if _is(error, *UNWRITABLE_ANSWERS):
        return GroupRefusal.UNWRITABLE
    if _is(error, *CHAT_GONE_ANSWERS):
        return GroupRefusal.CHAT_GONE
    if _is(error, *TOPIC_GONE_ANSWERS):
        return GroupRefusal.TOPIC_GONE
    return GroupRefusal.BOT_REMOVED if isinstance(error, Forbidden) else None


def _seconds(e: RetryAfter) -> float:
    """How long a RetryAfter asks to wait, in seconds (ThrottledError carries the exact float)."""
    exact = getattr(e, "seconds", None)
    if exact is not None:
        return float(exact)
    return float(e.retry_after if isinstance(e.retry_after, (int, float)) else e.retry_after.total_seconds())


async def answer(query, text: str | None = None, url: str | None = None) -> bool:
    """Answer a callback query; False when Telegram refused the answer.

    Answers go out after the tap's transaction, so a refused answer (400 "query is too old and
    response timeout expired or query ID is invalid": about 15 s after the tap, e.g. taps queued
    while the bot was down; or already answered) must neither undo nor repeat the action, nor
    stop the views from being synced: it is swallowed here, the one place taps are answered."""
    try:
        await query.answer(text or None, url=url)
        return True
    except TelegramError as e:
        log.info("tap answer refused: %s", e)
        return False


def panel_key(table: Table, seat: int) -> str:
    """What a panel shows of its player's own situation: their hand, the game's status and,
    on their turn, the turn. Other players' moves alone do not edit a panel (its refresh
    button brings those in), so a play costs at most the actor's and the next player's."""
    assert table.state is not None
    me = table.seats[seat]
    return f"{table.state.hands[seat].to_str()}|{table.status.value}|{table.action_count if _turn_now(table, seat) else '-'}|{int(me.by_ai)}{int(me.player is Player.LEFT)}"


def _turn_now(table: Table, seat: int) -> bool:
    """Whether it is ``seat``'s turn to act with their own hands (not the AI's)."""
    assert table.state is not None
    return table.status is Status.PLAYING and table.state.current == seat and not table.seats[seat].by_ai


class Syncer:
    """Schedules and runs syncs of games' Telegram views; see the module docstring."""

    def __init__(
        self, bot: Bot, store: Store, bot_username: Callable[[], str], clock: Callable[[], float] = time.time, unwritable_grace: float = 900.0
    ) -> None:
        """``clock``: epoch seconds on Redis's clock (:meth:`tgbot.process.clock.RedisClock.now`);
        ``unwritable_grace``: seconds a game's group may refuse messages before the game is
        retired (``LOBBY_TIMEOUT``)."""
        self.bot = bot
        self.store = store
        self._username = bot_username
        self._clock = clock
        self._grace = unwritable_grace
        self._running: dict[tuple[str, str], asyncio.Task[None]] = {}
        self._dirty: set[tuple[str, str]] = set()
        self._tg: dict[str, dict[str, str]] = {}
        self._posted: dict[str, int] = {}
        self._panel_locks: dict[tuple[str, int], asyncio.Lock] = {}
        self._closed = False
        #: bookkeeping changed since it was last written, by game (a value of None deletes)
        self._unsaved: dict[str, dict[str, str | None]] = {}
        self._saver: asyncio.Task[None] | None = None

    def request(self, gid: str) -> None:
        """Bring game ``gid``'s views up to date soon (non-blocking, coalesced). Ignored once
        :meth:`close` began (the next active process syncs every live game)."""
        if self._closed:
            return
        for lane in LANES:
            key = (gid, lane)
            self._dirty.add(key)
            if key not in self._running:
                # a context of its own: not the requesting update's (a lane's commit, a moved
                # chat's, is no commit of that update: tgbot.owner.store.current_update)
                self._running[key] = asyncio.create_task(self._loop(key), name=f"sync-{lane}-{gid}", context=contextvars.Context())

    async def idle(self) -> None:
        """Wait until no sync is running (tests and shutdown)."""
        while self._running:
            await asyncio.gather(*list(self._running.values()), return_exceptions=True)

    async def close(self, grace: float = 0.0) -> None:
        """Stop every lane: the runs in flight get ``grace`` seconds to finish, then the rest (a
        lane sleeping out a rate limit, a call that hangs) is cancelled. Nothing is lost: the
        next active process syncs every live game. Later requests are ignored; what is kept in
        memory is dropped."""
        self._closed = True
        tasks = list(self._running.values())
        if tasks and grace > 0:
            await asyncio.wait(tasks, timeout=grace)
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        if grace > 0:
            await self._save_digests()
        if self._saver is not None:
            self._saver.cancel()
        self._tg.clear()
        self._unsaved.clear()
        self._posted.clear()
        self._panel_locks.clear()

    def _forget(self, gid: str) -> None:
        """Drop what is kept in memory of an ended game that has been shown."""
        self._tg.pop(gid, None)  # (its unsaved digests are still saved: a late sync reads them)
        self._posted.pop(gid, None)
        for key in [k for k in self._panel_locks if k[0] == gid]:
            del self._panel_locks[key]

    async def _tg_of(self, gid: str) -> dict[str, str]:
        """The game's Telegram bookkeeping (read from Redis once, then kept in memory)."""
        tg = self._tg.get(gid)
        if tg is None:
            tg = await self.store.tg_get(gid)
            for field_, value in self._unsaved.get(gid, {}).items():  # newer than Redis's
                if value is None:
                    tg.pop(field_, None)
                else:
                    tg[field_] = value
            self._tg[gid] = tg
        return tg

    async def _write(self, gid: str, **fields: Any) -> None:
        """Record Telegram bookkeeping fields (``None`` deletes one) in memory, and in Redis
        those a take-over needs that changed (:data:`_IN_MEMORY_ONLY` aside)."""
        tg = await self._tg_of(gid)
        changed = {k: None if v is None else str(v) for k, v in fields.items() if tg.get(k) != (None if v is None else str(v))}
        for k, v in changed.items():
            if v is None:
                tg.pop(k, None)
            else:
                tg[k] = v
        unsaved = self._unsaved.setdefault(gid, {})
        unsaved.update(changed)
        if any(k.rstrip("0123456789") not in _IN_MEMORY_ONLY for k in changed):
            await self.store.tg_set(gid, **self._unsaved.pop(gid))  # the digests ride along
        elif self._saver is None or self._saver.done():
            self._saver = asyncio.create_task(self._save_digests(DIGEST_SAVE_EVERY), name="sync-digests", context=contextvars.Context())

    async def _save_digests(self, after: float = 0.0) -> None:
        """Write the digests not yet in Redis, of every game in one round trip, ``after`` seconds
        from now; only while this process is the active one (a former holder's would be stale)."""
        await asyncio.sleep(after)
        unsaved, self._unsaved = self._unsaved, {}
        if unsaved and self.store.holds():
            try:
                await self.store.tg_set_many(unsaved)
            except Exception as e:  # the next take-over edits those messages once more
                log.warning("view digests not saved: %s", e)

    async def _loop(self, key: tuple[str, str]) -> None:
        gid, lane = key
        delay = 1.0
        try:
            while key in self._dirty:
                self._dirty.discard(key)
                wait = 0.0
                try:
                    table = await self.store.load(gid)
                    if table is not None:
                        await (self._sync_panels(table) if lane == "dm" else self._sync_group(table))
                    delay = 1.0
                except RetryAfter as e:
                    # Throttled by our limiter or a 429 from Telegram: this lane of this game
                    # waits (no other chat does), then renders the newest state.
                    self._dirty.add(key)
                    wait = _seconds(e)
                except (BadRequest, Forbidden) as e:
                    # Permanent for this state (a message Telegram refuses as it is; the group's
                    # own refusals are handled in the group lane): the next committed change
                    # syncs again; nothing keeps retrying meanwhile.
                    log.warning("sync %s/%s gave up: %s", gid, lane, e)
                except (NetworkError, TelegramError) as e:
                    log.warning("sync %s/%s: %s; retrying in %.0f s", gid, lane, e, delay)
                    self._dirty.add(key)
                    wait, delay = delay, min(delay * 2, 30.0)
                except Exception:
                    log.exception("sync %s/%s failed", gid, lane)
                    self._dirty.add(key)
                    wait, delay = delay, min(delay * 2, 30.0)
                if wait:
                    await asyncio.sleep(wait)
        finally:
            self._running.pop(key, None)

    # -- private lane ----------------------------------------------------------------------

    async def _sync_panels(self, table: Table) -> None:
        """Each person's panel; a seat marked unreachable (``nr``: a 403, or the player blocked
        the bot) is left alone until they start the bot again."""
        tg = await self._tg_of(table.id)
        if table.ended in RETIRE_REASONS:
            await self._tell_retired(table, tg)
        if table.state is None:
            return
        for seat, player in enumerate(table.seats):
            if not player.human or tg.get(f"nr{seat}") or not self._needs_work(table, seat, tg):
                continue  # bots have no panel
            async with self._panel_lock(table.id, seat):
                if not await self._sync_panel(table, seat, player.user_id, tg):
                    await self._unreachable(table, seat)

    @staticmethod
    def _needs_work(table: Table, seat: int, tg: dict[str, str]) -> bool:
        """Whether seat ``seat``'s panel, as recorded in ``tg``, does not show their situation
        (or it is their turn and the turn's panel was not sent yet)."""
        return tg.get(f"pk{seat}") != panel_key(table, seat) or (_turn_now(table, seat) and tg.get(f"pt{seat}") != str(table.action_count))

    async def _unreachable(self, table: Table, seat: int) -> bool:
        """Seat ``seat``'s private chat is lost: mark it (``nr<seat>`` = 1, unless marked or
        already told) for the group lane to say so (then 2). The group hears it at most once per
        player per game (``once:unreachable:<user>`` in the game's hash, :meth:`Store.marked`):
        block and unblock cycles, a restart, never repeat it. True when marked now."""
        tg = await self._tg_of(table.id)
        if table.state is None or not table.live or tg.get(f"nr{seat}"):
            return False
        await self._write(table.id, **{f"nr{seat}": 1})
        self.request(table.id)
        return True

    async def unreachable(self, user_id: int) -> int:
        """The user blocked the bot (``my_chat_member`` in private): their seats in running
        games are marked unreachable, so the panels are left alone and each group is told once.
        Returns the number of games marked."""
        marked = 0
        for table in await self.store.user_games(user_id):
            seat = table.seat_of(user_id)
            marked += seat is not None and await self._unreachable(table, seat)
        return marked

    async def reachable_again(self, user_id: int) -> int:
        """The user (re)started the bot: their panels of every live game come back (sent anew on
        the next sync) and the groups may tell again if it is lost later. Returns the number of
        games requested."""
        tables = await self.store.user_games(user_id)
        for table in tables:
            seat = table.seat_of(user_id)
            old = (await self._tg_of(table.id)).get(f"p{seat}")
            if old:
                await self._delete(user_id, int(old))  # its buttons are stale
            await self._write(table.id, **{f"{f}{seat}": None for f in ("p", "pk", "pt", "pd", "nr")})
            self.request(table.id)
        return len(tables)

    async def _tell_retired(self, table: Table, tg: dict[str, str]) -> None:
        """A game ended because the bot lost its group (removed, the group gone, or it took no
        message for the grace): tell each person privately, once (``x<seat>``)."""
        for seat, player in enumerate(table.seats):
            if not player.human or tg.get(f"x{seat}") or not await self.store.can_dm(player.user_id):
                continue
            try:
                await self.bot.send_message(player.user_id, render.retired_note(table, seat, self._grace))
            except Forbidden:
                await self.store.set_dm(player.user_id, False)
            await self._write(table.id, **{f"x{seat}": 1})

    def _panel_lock(self, gid: str, seat: int) -> asyncio.Lock:
        """One lock per panel, shared by the sync and tap redraws, so each decides on what the
        panel shows now, not on what it showed before the other drew it."""
        return self._panel_locks.setdefault((gid, seat), asyncio.Lock())

    async def _sync_panel(self, table: Table, seat: int, chat_id: int, tg: dict[str, str]) -> bool:
        """Bring one panel up to date; False when the player's private chat is unreachable."""
        key = panel_key(table, seat)
        msg_id = int(tg[f"p{seat}"]) if tg.get(f"p{seat}") else None
        rendered = render.panel(table, seat)
        if _turn_now(table, seat) and tg.get(f"pt{seat}") != str(table.action_count):
            try:
                sent = await self.bot.send_message(chat_id, rendered.text, reply_markup=rendered.markup, rate_limit_args=DEFER)
            except Forbidden:
                await self.store.set_dm(chat_id, False)
                return False
            await self._write(table.id, **{f"p{seat}": sent.message_id, f"pk{seat}": key, f"pt{seat}": table.action_count, f"pd{seat}": rendered.digest})
            if msg_id is not None:
                await self._delete(chat_id, msg_id)
            return True
        if tg.get(f"pk{seat}") == key:
            return True
        if tg.get(f"pd{seat}") == rendered.digest and msg_id is not None:
            await self._write(table.id, **{f"pk{seat}": key})
            return True
        new_id = await self._show(chat_id, None, msg_id, rendered)
        if new_id is None:
            return False
        await self._write(table.id, **{f"p{seat}": new_id, f"pk{seat}": key, f"pd{seat}": rendered.digest})
        return True

    # -- group lane ------------------------------------------------------------------------

    async def _sync_group(self, table: Table) -> None:
        gid = table.id
        tg = await self._tg_of(gid)
        if table.group_access is GroupAccess.GONE:
            await self._give_up_group(table)
            return
        try:
            await self._post_group(table, tg)
        except ChatMigrated as e:
            # The group became a supergroup (400 with parameters.migrate_to_chat_id): move
            # the game and the chat's data (tgbot.storage.chatmove), then run again under the new id.
            await chatmove.move_chat(self.store, table.chat_id, e.new_chat_id, also=(gid,))
            self._dirty.add((gid, "group"))
        except (BadRequest, Forbidden) as e:
            refusal = group_refusal(e)
            if refusal is None:
                raise  # this one message cannot be posted as it is: the lane gives up for now
            await self._refused(table, refusal, e)

    async def _post_group(self, table: Table, tg: dict[str, str]) -> None:
        """Post the outbox in order, the unreachable notes, then the board: edited in place or,
        when the group had refused messages, posted anew at the bottom (the first message that
        goes through ends the pause: the table is writable again). A group that refuses for now
        keeps the announcements (:meth:`_post_outbox`)."""
        refused = await self._post_outbox(table)
        if refused is not None:
            await self._refused(table, GroupRefusal.UNWRITABLE, refused)
            return
        await self._post_unreachable_notes(table, tg)
        if table.group_access is GroupAccess.UNWRITABLE:
            await self._repost_board(table, tg)
            await self.store.transact(table.id, group.group_writable)
            log.info("group of %s takes messages again: its board is posted anew", table.id)
        else:
            await self._edit_board(table, tg)
        if not table.live:
            await self._finish(table)

    async def _finish(self, table: Table) -> None:
        """Everything of an ended game has been shown (or never will be): its statistics are
        counted (once, whoever gets here first: see tgbot.storage.stats; a finished game only), then it
        leaves the start-up sync set."""
        await stats.count_game(self.store, table)
        await self.store.forget_live(table.id)
        self._forget(table.id)

    async def _post_outbox(self, table: Table) -> TelegramError | None:
        """Post the outbox in order: announcements to the group, notes with ``to`` (the turn
        reminder) to that player privately; each leaves the outbox once Telegram took it.

        A group that refuses for now (:attr:`GroupRefusal.UNWRITABLE`) keeps its announcements
        in the outbox, the newest :data:`MAX_HELD_ANNOUNCEMENTS` (older ones are dropped), while
        the private notes behind them still go out; Telegram's refusal is returned. While the
        group refuses, each run tries its oldest waiting announcement only. A group that is no
        more raises Telegram's error."""
        gid = table.id
        if table.outbox_seq <= self._posted.get(gid, -1) and table.group_access is not GroupAccess.UNWRITABLE:
            return None
        refused: TelegramError | None = None
        kept: list[str] = []
        for raw, note in await self.store.outbox(gid):
            if refused is not None and note.get("to") is None:
                kept.append(raw)
                continue
            try:
                await self._post_note(table, note)
            except (BadRequest, Forbidden) as e:
                if group_refusal(e) is not GroupRefusal.UNWRITABLE:
                    raise
                refused = e
                kept.append(raw)
                continue
            if kept:
                await self.store.outbox_drop(gid, [raw])  # posted past announcements that wait
            else:
                await self.store.outbox_done(gid, raw)
                self._posted[gid] = max(self._posted.get(gid, -1), int(note.get("seq", 0)))
        if refused is None:
            self._posted[gid] = max(self._posted.get(gid, -1), table.outbox_seq)
        elif len(kept) > MAX_HELD_ANNOUNCEMENTS:
            log.warning("group of %s takes no message: its %d oldest waiting announcements dropped", gid, len(kept) - MAX_HELD_ANNOUNCEMENTS)
            await self.store.outbox_drop(gid, kept[:-MAX_HELD_ANNOUNCEMENTS])
        return refused

    async def _post_note(self, table: Table, note: dict) -> None:
        """Post one outbox note: to the group, or with ``to`` to that player privately (a lost
        private chat is recorded). A note Telegram refuses as it is (a 400 that says nothing of
        the group) is dropped rather than block every later one; the group's refusals raise."""
        figures = await stats.game_figures(self.store, table) if note.get("kind") == "GameEnded" else None
        text = render.announcement(table, note, figures)
        if not text:
            return
        private = note.get("to")
        try:
            if private is not None:
                await self.bot.send_message(private, text, rate_limit_args=DEFER)
            else:
                await self.bot.send_message(table.chat_id, text, message_thread_id=table.thread_id, rate_limit_args=DEFER)
        except Forbidden:
            if private is None:
                raise
            await self.store.set_dm(private, False)
        except BadRequest as e:
            if private is None and group_refusal(e) is not None:
                raise
            log.error("announcement %s of %s dropped: %s", note.get("seq"), table.id, e)

    async def _post_unreachable_notes(self, table: Table, tg: dict[str, str]) -> None:
        """Tell the group of each player marked unreachable (``nr<seat>`` = 1, then 2): once per
        player per game (``once:unreachable:<user>`` in the game's hash, :meth:`Store.marked`)."""
        for field_, value in sorted(tg.items()):
            if field_.startswith("nr") and value == "1" and table.live:
                seat = int(field_[2:])
                # once per player per game, whatever blocks and unblocks come (kept in the game)
                if seat < len(table.seats) and not await self.store.marked(table.id, "unreachable", table.seats[seat].user_id):
                    await self.bot.send_message(table.chat_id, render.unreachable(table, seat, self._username()), message_thread_id=table.thread_id, rate_limit_args=DEFER)
                    await self.store.first_time(table.id, "unreachable", table.seats[seat].user_id)
                await self._write(table.id, **{field_: 2})

    async def _edit_board(self, table: Table, tg: dict[str, str]) -> None:
        """Edit the board in place when what it shows changed (a deleted one is posted anew)."""
        rendered = render.board(table, self._username())
        if tg.get("bh") != rendered.digest:
            msg_id = int(tg["b"]) if tg.get("b") else None
            new_id = await self._show(table.chat_id, table.thread_id, msg_id, rendered)
            if new_id is not None:
                await self._write(table.id, b=new_id, bh=rendered.digest)

    async def _repost_board(self, table: Table, tg: dict[str, str]) -> None:
        """Post the board anew at the bottom of the group and delete the old one: after a pause
        the board in place is far up, above the announcements that waited."""
        rendered = render.board(table, self._username())
        old = tg.get("b")
        new_id = await self._show(table.chat_id, table.thread_id, None, rendered)
        if new_id is not None:
            await self._write(table.id, b=new_id, bh=rendered.digest)
        if old:
            await self._delete(table.chat_id, int(old))

    async def _refused(self, table: Table, refusal: GroupRefusal, cause: TelegramError | str) -> None:
        """The group refused a message: for now (the table records since when; it is retired
        after the grace unless a message goes through first) or for good (it is retired now,
        and so is every other live game of the chat when the whole chat is lost). Committed
        with each table, so a restart or a take-over knows it."""
        if refusal is GroupRefusal.UNWRITABLE:
            since, grace = self._clock(), self._grace
            await self._commit_access(table.id, lambda t: group.group_unwritable(t, since, grace), cause)
            return
        reason = RetireReason.BOT_REMOVED if refusal is GroupRefusal.BOT_REMOVED else RetireReason.CHAT_GONE
        others = [] if refusal is GroupRefusal.TOPIC_GONE else await self.store.chat_games(table.chat_id)
        for gid in dict.fromkeys([table.id, *(other.id for other in others)]):
            await self._commit_access(gid, lambda t: group.group_gone(t, reason), cause)

    async def _commit_access(self, gid: str, change: Callable[[Table], Change], cause: TelegramError | str) -> None:
        """Commit a change of game ``gid``'s group access (logged unless it changed nothing)."""
        try:
            done = await self.store.transact(gid, change)
        except RefusedError:
            return  # the game itself is gone
        if done.change.reply != "stale":
            log.warning("group of %s %s: %s", gid, done.change.reply, cause)

    async def _give_up_group(self, table: Table) -> None:
        """The game's group is lost for good (the table was retired): its waiting announcements
        are dropped and nothing calls the group again, after a restart neither (the game leaves
        the start-up sync set; a finished game is still counted)."""
        await self.store.outbox_clear(table.id)
        await self._finish(table)

    async def group_rights_changed(self, chat_id: int, can_write: bool) -> None:
        """The bot's rights in group ``chat_id`` changed while it stays a member (my_chat_member):
        without the right to write, its live games' group is unwritable from now on (the games
        go on, their announcements wait, the count to retirement starts); with it, each game's
        sync tries the group again (a read-only group may still refuse)."""
        for table in await self.store.chat_games(chat_id):
            if not can_write:
                await self._refused(table, GroupRefusal.UNWRITABLE, "the bot was restricted (my_chat_member)")
            self.request(table.id)

    async def redraw_panel(self, table: Table, seat: int, message: Message, picks: str = "") -> None:
        """Redraw the panel ``message`` a player tapped (card picking, refresh, a stale tap).

        Only the player's current panel is redrawn (an older one is gone or about to be), and
        only when it does not already show exactly that content (the ``pd<seat>`` digest), so a
        double tap never asks Telegram for an edit that changes nothing."""
        async with self._panel_lock(table.id, seat):
            tg = await self._tg_of(table.id)
            rendered = render.panel(table, seat, picks)
            if tg.get(f"p{seat}") != str(message.message_id) or tg.get(f"pd{seat}") == rendered.digest:
                return
            try:
                if await self._show(message.chat_id, None, message.message_id, rendered, resend=False) == message.message_id:
                    await self._write(table.id, **{f"pd{seat}": rendered.digest} | ({} if picks else {f"pk{seat}": panel_key(table, seat)}))
            except RetryAfter:
                pass  # that chat is blocked for now; the next tap or sync draws it

    async def post_board(self, table: Table) -> None:
        """Post the board anew at the bottom of the group (``/board``) and forget the old one."""
        rendered = render.board(table, self._username())
        sent = await self.bot.send_message(table.chat_id, rendered.text, reply_markup=rendered.markup, message_thread_id=table.thread_id)
        await self._write(table.id, b=sent.message_id, bh=rendered.digest)

    # -- Telegram calls --------------------------------------------------------------------

    async def _show(self, chat_id: int, thread_id: int | None, msg_id: int | None, rendered: render.Rendered, resend: bool = True) -> int | None:
        """Edit message ``msg_id`` to ``rendered``, or send it anew when there is none or it is
        gone ("message to edit not found": an admin deleted it; "message can't be edited":
        too old), unless ``resend`` is False (a tap's redraw of a panel that another process has
        meanwhile replaced must not post a second, orphaned panel). "message is not modified" is
        success. Returns the message id now showing it, ``None`` if a private chat is unreachable
        (403, recorded) or the message is gone and not resent; a group's 403 propagates."""
        if msg_id is not None:
            try:
                await self.bot.edit_message_text(rendered.text, chat_id=chat_id, message_id=msg_id, reply_markup=rendered.markup, rate_limit_args=DEFER)
                return msg_id
            except BadRequest as e:
                if _is(e, "not modified"):
                    return msg_id
                if not _is(e, "not found", "can't be edited"):
                    raise
                if not resend:
                    return None
            except Forbidden:
                if chat_id < 0:
                    raise
                await self.store.set_dm(chat_id, False)
                return None
        try:
            sent: Message = await self.bot.send_message(chat_id, rendered.text, reply_markup=rendered.markup, message_thread_id=thread_id, rate_limit_args=DEFER)
        except Forbidden:
            if chat_id < 0:
                raise
            await self.store.set_dm(chat_id, False)
            return None
        return sent.message_id

    async def _delete(self, chat_id: int, msg_id: int) -> None:
        try:
            await self.bot.delete_message(chat_id, msg_id)
        except (BadRequest, Forbidden):
            pass  # already gone, or too old to delete: harmless
