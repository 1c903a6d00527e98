"""The one view-sync path: make Telegram show what the stored table says.

After every committed change, and for every live game at start-up, :meth:`Syncer.request`
schedules a sync of that game. A sync reads the table and the game's Telegram bookkeeping from
Redis and brings each projection up to date (DESIGN.md, tgbot/):

- private lane: each player's panel. When a player's turn comes, their panel is sent anew at the
  bottom of their private chat (a notification) and the old one deleted; otherwise it is edited
  only when what it shows of their own situation changed (their hand, their turn, the game's
  end), so a play costs at most the actor's and the next player's panels;
- group lane: the outbox (showdowns, beliefs, automatic moves, the result: new messages, posted in order and
  popped only once Telegram accepted them, so a crash repeats at most the one in flight), then
  the board, edited in place. An outbox note with ``to`` (the turn reminder) is posted to that
  player's private chat instead, in the same order.

Each lane of each game runs single-flight, across processes too: a run holds a Redis lock
(``{g<id>}:sync:<lane>``, SET NX PX with a token, released by a Lua script); a request that
finds it held — in this process or another — marks the lane dirty (locally, or the Redis marker
``…:dirty`` in the same atomic step) and the holder runs once more with the newest state, so a
burst of moves yields one board edit (coalescing), never a queue of stale ones, and two
processes never edit one board at once. A tap's or a timer's commit takes both lanes' locks in
its own compare-and-set (:class:`~tgbot.store.SyncGrant`, handed to :meth:`Syncer.request`), so
the sync after a move starts without a round trip of its own. :class:`tgbot.ratelimit.RedisRateLimiter` paces the calls (Telegram's
limits: about 20 messages a minute per group, 30 a second overall); the sync's calls are made with
``defer`` (:data:`DEFER`), so a group without a free slot (or blocked by a 429) raises
:class:`~tgbot.ratelimit.Throttled` instead of queueing a stale edit, and the lane sleeps for that
group alone and runs again with the newest state.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import logging
import secrets
import time
from typing import Callable

from telegram import Bot, Message
from telegram.error import BadRequest, ChatMigrated, Forbidden, NetworkError, RetryAfter, TelegramError

from . import render, stats
from .model import Status, Table
from .store import LOCK_MS, SYNC_LANES, Snapshot, Store, SyncGrant

__all__ = ["Syncer", "panel_key", "answer", "DEFER"]

log = logging.getLogger(__name__)

#: rate_limit_args of the sync's sends and edits: do not wait for a group slot, raise Throttled.
DEFER = {"defer": True}

#: Seconds a lock taken by a commit (:class:`~tgbot.store.SyncGrant`) may wait for its lane's
#: task and still be used as it is (with the snapshot read in the commit); an older one (the
#: lane was sleeping out a rate limit) is used with a fresh snapshot, and one older than half
#: of LOCK_MS is given back and the lane's lock taken anew.
GRANT_FRESH = 1.0

# Cross-process single flight of a lane (KEYS: lock, dirty marker, then the game's table hash,
# tg hash and outbox — one hash-tag slot; ARGV: token, ttl ms). Take the lock, or mark the lane
# dirty for its holder, in one atomic step: {0} marked; {1, table, tg (flat), outbox} taken, with
# the game read in the same round trip (Store.snapshot's shape).
# ARGV[3] = 1: a look again after the holder's lock ran out — if the dirty marker is gone the
# holder served it ({2}); else the holder died without serving it and we take over. Taking the
# lock drops a marker left for a dead holder: the game read in the same step serves it.
_ACQUIRE = """
if ARGV[3] == '1' and redis.call('EXISTS', KEYS[2]) == 0 then return {2} end
if not redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then
  redis.call('SET', KEYS[2], 1, 'PX', ARGV[2])
  return {0, redis.call('PTTL', KEYS[1])}
end
redis.call('DEL', KEYS[2])
return {1, redis.call('HGET', KEYS[3], 't'), redis.call('HGETALL', KEYS[4]), redis.call('LRANGE', KEYS[5], 0, -1)}
"""
# Release after a run (KEYS: lock, dirty marker, the game's tg hash; ARGV: token, ttl ms, then
# tg field/value pairs the run records last — the board's — written only if the lock is still
# ours): if someone marked the lane meanwhile, keep the lock and return 2 (run again); else drop
# the lock if it is still ours (1), or 0 (it ran out and was taken).
_RELEASE = """
local mine = redis.call('GET', KEYS[1]) == ARGV[1]
if mine and #ARGV > 2 then redis.call('HSET', KEYS[3], unpack(ARGV, 3)) end
if redis.call('DEL', KEYS[2]) == 1 then
  if mine then redis.call('PEXPIRE', KEYS[1], ARGV[2]) return 2 end
  return 0
end
if mine then redis.call('DEL', KEYS[1]) return 1 end
return 0
"""


def _is(err: TelegramError, *texts: str) -> bool:
    msg = str(err.message).lower()
    return any(t in msg for t in texts)


def _seconds(e: RetryAfter) -> float:
    """How long a RetryAfter asks to wait, in seconds (Throttled carries the exact float)."""
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
    return f"{table.state.hands[seat].to_str()}|{table.status.value}|{table.turn if _turn_now(table, seat) else '-'}|{int(me.ai)}{int(me.left)}"


def _record(tg: dict[str, str], record: dict[str, object], **fields: object) -> None:
    """Put tg bookkeeping ``fields`` (none ``None``) in a lane's ``record``, written when its
    lock is released, and in the lane's copy ``tg``."""
    record.update(fields)
    tg.update((k, str(v)) for k, v in fields.items())


def _turn_now(table: Table, seat: int) -> bool:
    """Whether it is ``seat``'s turn to act with their own hands (not the AI's)."""
    assert table.state is not None
    return table.status is Status.PLAYING and table.state.current == seat and not table.seats[seat].by_ai


class Syncer:
    """Schedules and runs syncs of games' Telegram views; see the module docstring."""

    def __init__(self, bot: Bot, store: Store, bot_username: Callable[[], str]) -> None:
        self.bot = bot
        self.store = store
        self._username = bot_username
        self._running: dict[tuple[str, str], asyncio.Task] = {}
        self._dirty: set[tuple[str, str]] = set()
        # lanes waiting out another process's lock; a request wakes them for a plain acquire
        self._looking: dict[tuple[str, str], asyncio.Event] = {}
        self._locks: dict[tuple[str, int], asyncio.Lock] = {}
        # lanes' locks a commit took (or found held) for the lane's task to start from
        self._granted: dict[tuple[str, str], SyncGrant] = {}
        self._closed = False
        self._acquire = store.redis.register_script(_ACQUIRE)
        self._release = store.redis.register_script(_RELEASE)

    def request(self, gid: str, grant: SyncGrant | None = None) -> None:
        """Bring game ``gid``'s views up to date soon (non-blocking, coalesced). ``grant``: the
        lanes as the commit that asks left them (:meth:`Store.transact` with ``sync=True``).
        Ignored once :meth:`close` began (the next start syncs every live game)."""
        if self._closed:
            return
        for lane in SYNC_LANES:
            key = (gid, lane)
            self._dirty.add(key)
            if grant is not None and (grant.busy[lane] is None or key not in self._running):
                # a lock it took, for whichever task runs the lane; or the holder's time left,
                # for a new task to wait out (a running one is, or waits for, the holder)
                self._granted[key] = grant
            wake = self._looking.pop(key, None)
            if wake is not None:
                wake.set()
            if key not in self._running:
                # a fresh context: nothing of the requesting update (its prefetched table) leaks in
                self._running[key] = asyncio.create_task(self._loop(key), name=f"sync-{lane}-{gid}", context=contextvars.Context())

    async def idle(self) -> None:
        """Wait until no sync is running (tests and shutdown)."""
        while self._running:
            await asyncio.gather(*list(self._running.values()), return_exceptions=True)

    async def close(self, grace: float = 0.0) -> None:
        """Stop every lane (shutdown): the runs in flight get ``grace`` seconds to finish, then
        the rest (a lane sleeping out a rate limit or another process's lock, a call that
        hangs) is cancelled, giving back a lock it holds on the way out. Nothing is lost: every
        live game is synced when the bot starts again. Later requests are ignored."""
        self._closed = True
        tasks = list(self._running.values())
        if tasks and grace > 0:
            await asyncio.wait(tasks, timeout=grace)
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)

    async def _loop(self, key: tuple[str, str]) -> None:
        gid, lane = key
        delay = 1.0
        held: str | None = None  # our token while we still hold the lane's lock
        try:
            while key in self._dirty:
                self._dirty.discard(key)
                token, holding, held = held or secrets.token_hex(8), held is not None, None
                snap: Snapshot | None = None
                if not holding:
                    got = await self._start(key, token)
                    if got[0] == 2:
                        continue  # the holder ran again for our marker
                    if got[0] == 0:
                        # Another process runs this lane; it was marked dirty and re-runs. If
                        # that holder dies first (kill -9, crash), nobody would: look again when
                        # its lock runs out (a request meanwhile makes it a plain acquire).
                        self._dirty.add(key)
                        wake = self._looking[key] = asyncio.Event()
                        try:
                            await asyncio.wait_for(wake.wait(), got[1] / 1000 + 0.05)
                        except asyncio.TimeoutError:
                            pass
                        continue
                    token, snap = got[1], got[2]
                wait = 0.0
                record: dict[str, object] = {}  # tg fields written with the release
                try:
                    if snap is None:
                        snap = await self.store.snapshot(gid)
                    if lane == "dm":
                        await self._sync_panels(gid, snap, record)
                    else:
                        await self._sync_group(gid, snap, record)
                    delay = 1.0
                except RetryAfter as e:
                    # Throttled by our limiter or a 429 from Telegram: this lane of this game
                    # waits (no other chat does), then renders the newest state.
                    self._dirty.add(key)
                    wait = _seconds(e)
                except (BadRequest, Forbidden) as e:
                    # Permanent for this state (chat gone, bot removed, …): the next committed
                    # change syncs again; nothing keeps retrying meanwhile.
                    log.warning("sync %s/%s gave up: %s", gid, lane, e)
                except (NetworkError, TelegramError) as e:
                    log.warning("sync %s/%s: %s; retrying in %.0f s", gid, lane, e, delay)
                    self._dirty.add(key)
                    wait = delay
                    delay = min(delay * 2, 30.0)
                except Exception:
                    log.exception("sync %s/%s failed", gid, lane)
                finally:
                    if await self._unlock(gid, lane, token, record) == 2:
                        task = asyncio.current_task()
                        if task is not None and task.cancelling():
                            # stopping (close): leave the marker for the process that set it,
                            # which takes the lane over when our lock runs out, as after a crash
                            await self.store.redis.set(self.store.k_sync(gid, lane)[1], 1, px=LOCK_MS)
                        else:
                            # another process asked meanwhile: run again, still holding the lock
                            self._dirty.add(key)
                            held = token
                if wait:
                    if held is not None:
                        # never sleep holding the lock (it would run out): drop it, take it again
                        await self._unlock(gid, lane, held)
                        held = None
                    await asyncio.sleep(wait)
        finally:
            self._running.pop(key, None)

    async def _start(self, key: tuple[str, str], token: str) -> tuple:
        """Take the lane's lock: ``(1, token, snapshot or None)`` taken (the snapshot read with
        it, if any); ``(0, ms)`` another process holds it for ``ms`` more (marked dirty for it);
        ``(2,)`` looking again, the holder served our marker. A lock a commit took for the lane
        (:class:`~tgbot.store.SyncGrant`) costs no round trip."""
        gid, lane = key
        grant = self._granted.pop(key, None)
        if grant is not None:
            age = time.monotonic() - grant.at
            busy = grant.busy[lane]
            if busy is None and age <= GRANT_FRESH:
                self._looking.pop(key, None)
                return 1, grant.token, grant.snapshot
            if busy is None and age < LOCK_MS / 2000:
                self._looking.pop(key, None)
                return 1, grant.token, None  # still ours; read the game as it is now
            if busy is None:
                # kept waiting (a rate-limit sleep) until it may run out: give it back
                await self._unlock(gid, lane, grant.token)
            elif age <= GRANT_FRESH:
                return 0, max(0, busy - int(age * 1000))
        look_again = self._looking.pop(key, None) is not None
        got = await self._acquire(keys=self.store.k_sync(gid, lane) + self.store.snapshot_keys(gid), args=[token, LOCK_MS, int(look_again)])
        if int(got[0]) == 1:
            return 1, token, Snapshot.decode(got[1], got[2], got[3])
        return (0, int(got[1])) if int(got[0]) == 0 else (2,)

    async def _unlock(self, gid: str, lane: str, token: str, record: dict[str, object] | None = None) -> int:
        """Release the lane's lock taken with ``token`` (``_RELEASE``), writing the tg fields in
        ``record`` if it is still ours: 2 someone marked the lane meanwhile (we keep the lock
        and run again), 1 released, 0 it had run out and was taken."""
        fields = [x for kv in (record or {}).items() for x in kv]
        return int(await self._release(keys=self.store.k_sync(gid, lane) + [self.store.k_tg(gid)], args=[token, LOCK_MS, *fields]))

    # -- private lane ----------------------------------------------------------------------

    async def _sync_panels(self, gid: str, snap: Snapshot, record: dict[str, object]) -> None:
        # The table and tg hash were read with the lane's lock (in the commit's own
        # compare-and-set, as a rule), and they are all this lane reads: only this lane writes
        # the panel ids ``p``/``pt``, and a tap's redraw, which writes ``pk``/``pd`` meanwhile,
        # claims what it draws atomically, as does this lane's edit (:meth:`Store.claim_panel`),
        # so a stale ``pk`` costs at most a claim that finds the panel drawn. A seat marked
        # unreachable (``nr``: a 403, or the player blocked the bot) is left alone until /start.
        # A new panel's bookkeeping goes into ``record``, written when the lane's lock is
        # released (the same round trip).
        table, tg, _ = snap
        if table is None:
            return
        if table.ended == "bot_removed":
            await self._tell_removed(table, tg)
        if table.state is None:
            return
        todo = [seat for seat, p in enumerate(table.seats)
                if p.human and not tg.get(f"nr{seat}") and self._needs_work(table, seat, tg)]  # bots have no panel
        async with contextlib.AsyncExitStack() as locks:
            # This process's tap redraws draw a panel under the same lock: the lane's edit
            # comes after one in flight, never between its claim and its edit.
            for seat in todo:
                await locks.enter_async_context(self._panel_lock(gid, seat))
            for seat in todo:
                if not await self._sync_panel(table, seat, table.seats[seat].user_id, tg, record):
                    await self._unreachable(table, seat)

    @staticmethod
    def _needs_work(table: Table, seat: int, tg: dict[str, str]) -> bool:
        """Whether seat ``seat``'s panel, as recorded in ``tg``, does not show their situation
        (or it is their turn and the turn's panel was not sent yet)."""
        return tg.get(f"pk{seat}") != panel_key(table, seat) or (_turn_now(table, seat) and tg.get(f"pt{seat}") != str(table.turn))

    async def _unreachable(self, table: Table, seat: int) -> bool:
        """Seat ``seat``'s private chat is lost (a 403, or the player blocked the bot): mark it
        (``nr<seat>`` = 1, unless marked or already told: HSETNX, so a group lane that has
        told, 2, in another process is never undone) for the group lane to say so once (then 2),
        and sync the game. Only for a running game. True when marked now."""
        if table.state is None or not table.live or not await self.store.tg_add(table.id, f"nr{seat}", 1):
            return False
        self.request(table.id)
        return True

    async def _tg_set(self, gid: str, tg: dict[str, str], **fields: object) -> None:
        """Write tg bookkeeping fields and keep the sync's copy ``tg`` in step."""
        await self.store.tg_set(gid, **fields)
        for k, v in fields.items():
            if v is None:
                tg.pop(k, None)
            else:
                tg[k] = str(v)

    async def unreachable(self, user_id: int) -> int:
        """The user blocked the bot (``my_chat_member`` in private): their seats in running
        games are marked unreachable (:meth:`_unreachable`), so the panels are left alone and
        each group is told once. Returns the number of games marked."""
        marked = 0
        for table in await self.store.user_games(user_id):
            seat = table.seat_of(user_id)
            marked += seat is not None and await self._unreachable(table, seat)
        return marked

    async def reachable_again(self, user_id: int) -> int:
        """The user (re)started the bot: their panels of every live game come back (sent
        anew on the next sync) and the groups may tell again if it is lost later. Returns the
        number of games requested."""
        tables = await self.store.user_games(user_id)
        for table in tables:
            seat = table.seat_of(user_id)
            old = (await self.store.tg_get(table.id)).get(f"p{seat}")
            if old:
                await self._delete(user_id, int(old))  # its buttons are stale
            await self.store.tg_set(table.id, **{f"{f}{seat}": None for f in ("p", "pk", "pt", "pd", "nr")})
            self.request(table.id)
        return len(tables)

    async def _tell_removed(self, table: Table, tg: dict[str, str]) -> None:
        """A game ended because the bot lost its group: tell each person privately, once."""
        for seat, player in enumerate(table.seats):
            if not player.human or tg.get(f"x{seat}") or not await self.store.can_dm(player.user_id):
                continue
            try:
                await self.bot.send_message(player.user_id, render.removed_note(table, seat))
            except Forbidden:
                await self.store.set_dm(player.user_id, False)
            await self._tg_set(table.id, tg, **{f"x{seat}": 1})

    def _panel_lock(self, gid: str, seat: int) -> asyncio.Lock:
        """One lock per panel, shared by the sync and tap redraws, so each decides on what
        the panel shows now, not on what it showed before the other drew it."""
        return self._locks.setdefault((gid, seat), asyncio.Lock())

    async def _sync_panel(self, table: Table, seat: int, chat_id: int, tg: dict[str, str], record: dict[str, object]) -> bool:
        """Bring one panel up to date; False when the player's private chat is unreachable. A
        new panel's bookkeeping is put in ``tg`` and ``record`` (written with the lane's release)."""
        turn_now = _turn_now(table, seat)
        key = panel_key(table, seat)
        msg_id = int(tg[f"p{seat}"]) if tg.get(f"p{seat}") else None
        if turn_now and tg.get(f"pt{seat}") != str(table.turn):
            rendered = render.panel(table, seat)
            try:
                sent = await self.bot.send_message(chat_id, rendered.text, reply_markup=rendered.markup, rate_limit_args=DEFER)
            except Forbidden:
                await self.store.set_dm(chat_id, False)
                return False
            _record(tg, record, **{f"p{seat}": sent.message_id, f"pk{seat}": key, f"pt{seat}": table.turn, f"pd{seat}": rendered.digest, f"s{chat_id}": seat})
            if msg_id is not None:
                await self._delete(chat_id, msg_id)
            return True
        if tg.get(f"pk{seat}") == key:
            return True
        rendered = render.panel(table, seat)
        if msg_id is not None:
            # Claimed before the edit, as a tap's redraw does, so that the lane and a redraw in
            # another process never both make the same edit; a failed edit puts it back.
            claimed = await self.store.claim_panel(table.id, seat, msg_id, rendered.digest, key)
            if isinstance(claimed, bool):
                if claimed:
                    tg.update({f"pk{seat}": key, f"pd{seat}": rendered.digest})
                return True  # it shows this already (or is no longer the current panel)
            new_id = None
            try:
                new_id = await self._show(chat_id, None, msg_id, rendered)
            finally:
                if new_id is None:
                    old_digest, old_key = claimed
                    await self.store.tg_set_if(table.id, f"pd{seat}", rendered.digest, **{f"pd{seat}": old_digest, f"pk{seat}": old_key})
            if new_id == msg_id:
                tg.update({f"pk{seat}": key, f"pd{seat}": rendered.digest})
                return True
        else:
            new_id = await self._show(chat_id, None, None, rendered)
        if new_id is None:
            return False
        # a new message (there was none, or the old one is gone)
        _record(tg, record, **{f"p{seat}": new_id, f"pk{seat}": key, f"pd{seat}": rendered.digest, f"s{chat_id}": seat})
        return True

    # -- group lane ------------------------------------------------------------------------

    async def _sync_group(self, gid: str, snap: Snapshot, record: dict[str, object]) -> None:
        table, tg, outbox = snap
        if table is None:
            return
        try:
            await self._post_group(table, tg, outbox, record)
        except ChatMigrated as e:
            # The group became a supergroup (400 with parameters.migrate_to_chat_id): move
            # the game, then run again under the new id.
            await self.store.move_chat(table.chat_id, e.new_chat_id, also=(gid,))
            self._dirty.add((gid, "group"))
        except Forbidden as e:
            # The bot was removed from the group or may not write there: give up on this
            # game's group lane (the my_chat_member update ends live games cleanly); an ended
            # game leaves the start-up sync set so nothing keeps retrying.
            log.warning("group of %s unreachable: %s", gid, e)
            if not table.live:
                await self.store.outbox_clear(gid)
                await stats.count_game(self.store, table)
                await self.store.forget_live(gid)

    async def _post_group(self, table: Table, tg: dict[str, str], outbox: list[tuple[str, dict]], record: dict[str, object]) -> None:
        """Post the outbox in order, the unreachable notes, then edit the board; ``tg`` and
        ``outbox`` were read with ``table`` (:meth:`Store.snapshot`) under the lane's lock. The
        board's bookkeeping goes into ``record``, written when the lane's lock is released (the
        same round trip)."""
        gid = table.id
        for raw, note in outbox:
            figures = await stats.game_figures(self.store, table) if note.get("kind") == "GameEnded" else None
            text = render.announcement(table, note, figures)
            if text:
                # A note with ``to`` goes to that player's private chat (the turn reminder).
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
                    # This one message cannot be posted as it is: drop it rather than block
                    # every later announcement of the game behind it.
                    log.error("announcement %s of %s dropped: %s", note.get("seq"), gid, e)
            await self.store.outbox_done(gid, raw)
        for field_, value in sorted(tg.items()):
            if field_.startswith("nr") and value == "1" and table.live:
                seat = int(field_[2:])
                if seat < len(table.seats):
                    await self.bot.send_message(table.chat_id, render.unreachable(table, seat, self._username()), message_thread_id=table.thread_id, rate_limit_args=DEFER)
                await self._tg_set(gid, tg, **{field_: 2})
        rendered = render.board(table, self._username())
        if tg.get("bh") != rendered.digest:
            msg_id = int(tg["b"]) if tg.get("b") else None
            new_id = await self._show(table.chat_id, table.thread_id, msg_id, rendered)
            if new_id is not None:
                _record(tg, record, b=new_id, bh=rendered.digest)
        if not table.live:
            # Everything of an ended game has been shown: its statistics are counted (once,
            # whoever gets here first: see tgbot.stats), then it leaves the start-up sync set.
            await stats.count_game(self.store, table)
            await self.store.forget_live(gid)

    async def redraw_panel(self, table: Table, seat: int, message: Message, picks: str = "") -> None:
        """Redraw the panel ``message`` a player tapped (card picking, refresh, a stale tap).

        Only the player's current panel is redrawn (an older one is gone or about to be), and
        only when it does not already show exactly that content (the ``pd<seat>`` digest), so
        a double tap never asks Telegram for an edit that changes nothing."""
        async with self._panel_lock(table.id, seat):
            try:
                await self._redraw(table, seat, message, picks)
            except RetryAfter:
                pass  # that chat is blocked for now; the next tap or sync draws it

    async def _redraw(self, table: Table, seat: int, message: Message, picks: str) -> None:
        # What the redraw will show is recorded first, atomically and only while the tapped
        # message is still the seat's current panel (another process's lane may replace it at
        # any time): one round trip, and it never overwrites a newer panel's bookkeeping. A
        # card pick was claimed with the tap's de-duplication (no round trip here), by its
        # identity rather than a digest. A failed edit puts the previous record back.
        rendered = render.panel(table, seat, picks)
        shows = self.store.pick_identity(table, picks) if picks else rendered.digest
        claimed = await self.store.take_pick_claim(table, seat, message.message_id, picks)
        if claimed is None:
            claimed = await self.store.claim_panel(table.id, seat, message.message_id, shows, None if picks else panel_key(table, seat))
        if isinstance(claimed, bool):
            return  # not the current panel, or it shows this already
        shown = False
        try:
            shown = await self._show(message.chat_id, None, message.message_id, rendered, resend=False) == message.message_id
        finally:
            if not shown:
                old_digest, old_key = claimed
                back = {f"pd{seat}": old_digest} | ({f"pk{seat}": old_key} if not picks else {})
                await self.store.tg_set_if(table.id, f"pd{seat}", shows, **back)

    async def post_board(self, table: Table) -> None:
        """Post the board anew at the bottom of the group (``/board``) and forget the old one."""
        rendered = render.board(table, self._username())
        sent = await self.bot.send_message(table.chat_id, rendered.text, reply_markup=rendered.markup, message_thread_id=table.thread_id)
        await self.store.tg_set(table.id, b=sent.message_id, bh=rendered.digest)

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
