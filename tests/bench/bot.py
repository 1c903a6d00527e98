"""Benchmark of the whole bot: ``python -m tests.bench.bot [--games N] [--seats 4]``.

Drives N concurrent games (AI-chosen taps via :mod:`core.ai` from each player's own view, card
picks included) through the bot as it runs in production: a :class:`tgbot.process.runner.Runner` that
takes the lease, long-polls ``getUpdates`` (answered by an in-process Bot API fake,
:class:`FakeBotAPI`, a PTB ``BaseRequest`` answering canned JSON without HTTP), stores each
batch in the bot's Redis Stream (durable ingest) and processes it from there through the real
:class:`~telegram.ext.Application`, on a private redis-server on a free port. Prints:

- taps per second (all games concurrently) and CPU µs per tap (p50/p99 from six serial games,
  ``time.process_time`` from the tap's arrival at ``getUpdates`` to the end of its sync: its
  ingest included; the mean from the concurrent run);
- Redis round trips per tap, counted (every ``send_packed_command`` of the bot's connections),
  split into the game's transaction (one compare-and-set, plus index writes when an index
  moves: the table is kept in memory), the ingest (the stream's write with the offset, the
  consumer's read and its acknowledgement, several updates per round trip under load), the
  handler's other reads, the sync path, and the lease's renewals;
- Bot API calls per play by method and chat type; bytes of Redis per live game (MEMORY USAGE
  over its keys); peak RSS;
- the same serial measure for a skeleton handler (no game logic, no ingest: ``process_update``
  directly, one Redis read and one write, the same Bot API calls the bot made for that tap) and
  the ratio bot / skeleton.

Issue 15 sets the targets (e.g. at most 2 Redis round trips per tap on average); this module
prints the figures, and ``test_bot_bench.py`` holds only what holds today.

Redis' own CPU (another process) is not in the CPU figures.
"""

from __future__ import annotations

import argparse
import asyncio
import contextvars
import itertools
import json
import random
import resource
import statistics
import time
from collections import Counter
from typing import Any

from redis.asyncio import Redis
from redis.asyncio.connection import Connection
from telegram import InlineKeyboardButton, InlineKeyboardMarkup, Update
from telegram.ext import Application, TypeHandler
from telegram.request import BaseRequest, RequestData
from tgbot.sync import syncer as sync_mod

import core
import core.ai
from tests.redis_server import RedisServer
from tgbot.codec import Tap, encode
from tgbot.game.table import Status, Table
from tgbot.handlers.app import build_application
from tgbot.ingest import consumer as consumer_mod, stream as ingest_mod
from tgbot.owner import store as store_mod
from tgbot.process import lease as lease_mod
from tgbot.process.runner import Runner
from tgbot.settings import Settings
from tgbot.sync import bookkeeping as fields

BOT = {"id": 999, "is_bot": True, "first_name": "Cheat", "username": "cheat_bench_bot"}
TOKEN = "999:B"
#: The keys' prefix the runner gives the store: the bot's id.
PREFIX = f"cheat:{TOKEN.partition(':')[0]}"

# -- counting Redis round trips by phase --------------------------------------------------------

PHASE: contextvars.ContextVar[str] = contextvars.ContextVar("phase", default="other")
TRIPS: Counter = Counter()
_orig_send = Connection.send_packed_command


async def _counting_send(self, command, check_health=True):
    if PHASE.get() != "driver":
        TRIPS[PHASE.get()] += 1
    return await _orig_send(self, command, check_health)


def _phase(name: str, fn):
    async def wrapped(*a, **kw):
        token = PHASE.set(name)
        try:
            return await fn(*a, **kw)
        finally:
            PHASE.reset(token)

    return wrapped


def install_counters() -> None:
    """Count round trips per phase: transaction, ingest, handler (the rest of an update's
    processing), sync, lease."""
    Connection.send_packed_command = _counting_send  # type: ignore[method-assign]
    orig_transact = _phase("transaction", store_mod.Store.transact)

    async def transact(*a, **kw):
        TRIPS["#transactions"] += 1
        return await orig_transact(*a, **kw)

    store_mod.Store.transact = transact  # type: ignore[method-assign]
    ingest_mod.Ingest.polled = _phase("ingest", ingest_mod.Ingest.polled)  # type: ignore[method-assign]
    consumer_mod.Consumer.run = _phase("ingest", consumer_mod.Consumer.run)  # type: ignore[method-assign]
    consumer_mod.Consumer._one = _phase("handler", consumer_mod.Consumer._one)  # type: ignore[method-assign]
    lease_mod.Lease.try_acquire = _phase("lease", lease_mod.Lease.try_acquire)  # type: ignore[method-assign]
    sync_mod.Syncer._loop = _phase("sync", sync_mod.Syncer._loop)  # type: ignore[method-assign]


# -- the Bot API fake ---------------------------------------------------------------------------


class FakeBotAPI(BaseRequest):
    """Answers Bot API calls in-process with canned JSON; records (method, chat type) counts."""

    def __init__(self) -> None:
        self.calls: Counter = Counter()
        self.log: list[tuple[str, Any]] | None = None  # per-tap capture for the skeleton
        self.markup: dict[tuple[int, int], dict] = {}
        self._mid = itertools.count(1)
        self.inbox: list[dict] = []  # updates for the next getUpdates
        self._arrived = asyncio.Event()

    def push(self, update: dict) -> None:
        """Queue an update for the bot's long polling."""
        self.inbox.append(update)
        self._arrived.set()

    @property
    def read_timeout(self) -> float | None:
        return 1.0

    async def initialize(self) -> None:
        pass

    async def shutdown(self) -> None:
        pass

    async def do_request(
        self, url: str, method: str, request_data: RequestData | None = None, *a, **kw
    ) -> tuple[int, bytes]:
        name = url.rsplit("/", 1)[1]
        p = request_data.parameters if request_data else {}
        if name == "getUpdates":  # long polling: the queued updates, or none after its timeout
            if not self.inbox:
                self._arrived.clear()
                try:
                    await asyncio.wait_for(self._arrived.wait(), float(p.get("timeout") or 0))
                except TimeoutError:
                    pass
            batch, self.inbox = self.inbox, []
            return 200, json.dumps({"ok": True, "result": batch}).encode()
        chat_id = p.get("chat_id")
        kind = "-" if chat_id is None else ("group" if int(chat_id) < 0 else "private")
        self.calls[(name, kind)] += 1
        if self.log is not None:
            self.log.append((name, dict(p)))
        result: Any = True
        if name == "getMe":
            result = BOT
        elif name in ("sendMessage", "editMessageText"):
            mid = p.get("message_id") or next(self._mid)
            chat = {"id": int(chat_id), "type": "supergroup" if int(chat_id) < 0 else "private"}
            if int(chat_id) < 0:
                chat["title"] = "g"
            else:
                chat["first_name"] = "u"
            if p.get("reply_markup"):
                markup = p["reply_markup"]
                self.markup[(int(chat_id), mid)] = json.loads(markup) if isinstance(markup, str) else markup
            result = {"message_id": mid, "date": int(time.time()), "chat": chat, "from": BOT, "text": "x"}
        elif name == "getChatMember":
            result = {"status": "member", "user": {"id": int(p["user_id"]), "is_bot": False, "first_name": "u"}}
        return 200, json.dumps({"ok": True, "result": result}).encode()


# -- updates ------------------------------------------------------------------------------------

_uid = itertools.count(1)


def user(uid: int) -> dict:
    return {"id": uid, "is_bot": False, "first_name": f"P{uid}", "language_code": "ru"}


def message_update(uid: int, chat_id: int, text: str) -> dict:
    chat = (
        {"id": chat_id, "type": "private", "first_name": "u"}
        if chat_id > 0
        else {"id": chat_id, "type": "supergroup", "title": "g"}
    )
    ent = [{"type": "bot_command", "offset": 0, "length": len(text.split()[0])}] if text.startswith("/") else []
    return {
        "update_id": next(_uid),
        "message": {
            "message_id": next(_uid),
            "date": int(time.time()),
            "chat": chat,
            "from": user(uid),
            "text": text,
            "entities": ent,
        },
    }


def tap_update(uid: int, chat_id: int, message_id: int, data: str) -> dict:
    chat = (
        {"id": chat_id, "type": "private", "first_name": "u"}
        if chat_id > 0
        else {"id": chat_id, "type": "supergroup", "title": "g"}
    )
    return {
        "update_id": next(_uid),
        "callback_query": {
            "id": str(next(_uid)),
            "from": user(uid),
            "chat_instance": "ci",
            "data": data,
            "message": {"message_id": message_id, "date": int(time.time()), "chat": chat, "from": BOT, "text": "x"},
        },
    }


# -- driving games ------------------------------------------------------------------------------


class Driver:
    """Plays games through ``runner`` (its updates through ``api``'s ``getUpdates``) using a
    separate, uncounted Redis client for peeking."""

    def __init__(self, runner: Runner, api: FakeBotAPI, peek: Redis) -> None:
        self.runner = runner
        self.app = runner.app
        self.api = api
        self.peek = store_mod.Store(peek, prefix=PREFIX)
        self.taps = 0
        self.plays = 0
        self.cpu: list[float] = []
        self._waiting: dict[int, asyncio.Future[None]] = {}
        process = runner._process

        async def processed(data: dict, last_try: bool) -> bool:  # the runner's, then tell the feeder
            try:
                return await process(data, last_try)
            finally:
                fut = self._waiting.pop(data["update_id"], None)
                if fut is not None and not fut.done():
                    fut.set_result(None)

        runner._process = processed  # type: ignore[method-assign]

    @property
    def syncer(self):
        return self.app.bot_data["services"].syncer

    async def feed(self, raw: dict, measure: bool = False) -> None:
        """Deliver ``raw`` through getUpdates and wait until the runner processed it (stored in
        the stream, read back, handled)."""
        t0 = time.process_time()
        done = self._waiting[raw["update_id"]] = asyncio.get_running_loop().create_future()
        self.api.push(raw)
        await done
        if measure:
            await self.syncer.idle()
            self.cpu.append(time.process_time() - t0)

    async def load(self, gid: str) -> Table:
        """The game as the bot committed it (the peek keeps nothing in memory)."""
        self.peek.forget_tables()
        return await self.peek.load(gid)

    async def _peek(self, fn, *a):
        token = PHASE.set("driver")
        try:
            return await fn(*a)
        finally:
            PHASE.reset(token)

    async def settle(self, gid: str) -> None:
        while any(k[0] == gid for k in list(self.syncer._running)):
            await asyncio.sleep(0.001)

    async def game(self, chat_id: int, seats: int, rng: random.Random, measure: bool = False) -> str:
        uids = [abs(chat_id) * 10 + i for i in range(seats)]
        for uid in uids:
            await self.feed(message_update(uid, uid, "/start"))
        await self.feed(message_update(uids[0], chat_id, "/start_game"))
        gid = await self._peek(self.peek.redis.get, self.peek.keys.chat(chat_id, None))
        await self.settle(gid)
        tg = await self._peek(self.peek.records.tg_get, gid)
        lobby = int(tg[fields.BOARD_MESSAGE])
        for uid in uids[1:]:
            await self.feed(tap_update(uid, chat_id, lobby, encode(Tap("join", gid))))
        await self.feed(tap_update(uids[0], chat_id, lobby, encode(Tap("start", gid))))
        await self.settle(gid)
        players = [core.ai.make_player("counting", i, rng) for i in range(seats)]
        while True:
            table: Table = await self._peek(self.load, gid)
            if table.status is not Status.PLAYING:
                return gid
            seat = table.state.current
            uid = table.seats[seat].user_id
            await self.settle(gid)
            panel = int((await self._peek(self.peek.records.tg_get, gid))[fields.panel_message(seat)])
            action = players[seat].act(core.view(table.state, seat))
            taps = []
            if isinstance(action, core.Play):
                cards = "".join(r.char for r in action.cards)
                taps += [
                    Tap("pick", gid, action_count=table.action_count, cards=cards[: i + 1]) for i in range(len(cards))
                ]
                claim = action.claim.char if action.claim is not None else ""
                taps.append(Tap("play", gid, action_count=table.action_count, cards=cards, claim=claim))
                self.plays += 1
            elif isinstance(action, core.Challenge):
                taps.append(Tap("challenge", gid, action_count=table.action_count))
            else:
                taps.append(Tap("believe", gid, action_count=table.action_count))
            for tap in taps:
                await self.feed(tap_update(uid, uid, panel, encode(tap)), measure)
                self.taps += 1
            await self.settle(gid)


# -- runs ---------------------------------------------------------------------------------------


#: Games played one at a time for the CPU per tap (each replayed by the skeleton right after).
SERIAL_GAMES = 6


def pct(xs: list[float], q: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(q * len(xs)))]


async def run_bot(url: str, games: int, seats: int, serial: int = SERIAL_GAMES) -> dict:
    install_counters()
    api = FakeBotAPI()
    settings = Settings(
        BOT_TOKEN=TOKEN,
        REDIS_URL=url,
        RATE_GROUP_MAX=10**9,
        RATE_GLOBAL_MAX=10**9,
        RATE_PRIVATE_MAX=10**9,
        HTTP_LISTEN="127.0.0.1:0",
    )
    runner = Runner(settings, request=api)

    peek = Redis.from_url(url, decode_responses=True)
    drv = Driver(runner, api, peek)
    running_bot = asyncio.create_task(runner.run())
    out: dict = {}
    try:
        while not (runner.role == "active" and runner.consumer is not None):  # the lease taken, the consumer reading
            if running_bot.done():
                running_bot.result()
            await asyncio.sleep(0.01)
        # serial game: CPU per tap, calls per tap for the skeleton
        TRIPS.clear()
        api.calls.clear()
        api.log = []
        tap_calls: list[list] = []
        orig_feed = drv.feed

        per_op: dict[str, list[int]] = {}
        tap_ops: list[str] = []

        async def feed_logged(raw, measure=False):
            if measure:
                api.log = []
            await orig_feed(raw, measure)
            if measure:
                tap_calls.append(list(api.log))
                # messages sent or edited because of this tap (its sync included), callback
                # answers and deletions aside, by the tap's op (``k`` card picking, ``p`` play,
                # ``c`` challenge, ``b`` believe)
                op = raw["callback_query"]["data"].split(":")[0]
                per_op.setdefault(op, []).append(sum(m in ("sendMessage", "editMessageText") for m, _ in api.log))
                tap_ops.append(op)

        drv.feed = feed_logged  # type: ignore[method-assign]
        skeleton = Skeleton(url)
        await skeleton.start()
        skel: list[float] = []
        for i in range(serial):
            first = len(tap_calls)
            await drv.game(-1 - i, seats, random.Random(1 + i), measure=True)
            skel += await skeleton.replay(tap_calls[first:])
        await skeleton.stop()
        drv.feed = orig_feed  # type: ignore[method-assign]
        out["skel"] = skel
        api.log = None
        out["cpu_serial"] = drv.cpu
        out["tap_calls"] = tap_calls
        out["per_op"] = per_op
        out["tap_ops"] = tap_ops

        # N concurrent games
        TRIPS.clear()
        api.calls.clear()
        drv.taps = drv.plays = 0
        mem_sampled: list[int] = []
        running = True

        async def game_bytes(gid: str) -> int:
            return sum([await peek.memory_usage(k) or 0 for k in await peek.keys(f"{PREFIX}:{{g{gid}}}:*")])

        async def sample_memory():
            # every second while the games run: the whole footprint of up to 20 live games
            # (the benchmark's own round trips: not counted as the bot's)
            PHASE.set("driver")
            while running:
                await asyncio.sleep(1.0)
                for gid in list(await peek.smembers(f"{PREFIX}:live"))[:20]:
                    mem_sampled.append(await game_bytes(gid))

        t0, c0 = time.perf_counter(), time.process_time()
        sampler = asyncio.create_task(sample_memory())
        played = await asyncio.gather(*(drv.game(-(1000 + i), seats, random.Random(i)) for i in range(games)))
        running = False
        await sampler
        wall, cpu = time.perf_counter() - t0, time.process_time() - c0
        PHASE.set("driver")  # the measures below are the benchmark's own round trips
        # finished games: their whole footprint (table, deal, action log, tg, outbox, tap ids)
        ended = [(await game_bytes(gid), await peek.llen(f"{PREFIX}:{{g{gid}}}:log")) for gid in played[:20]]
        # the ingest's memory of recent update ids (a repeated delivery is skipped), per update
        recent = drv.peek.keys.ingest()[1]
        recent_ids = await peek.zcard(recent)
        out.update(
            taps=drv.taps,
            plays=drv.plays,
            wall=wall,
            cpu=cpu,
            trips=dict(TRIPS),
            calls=dict(api.calls),
            mem=mem_sampled,
            ended=ended,
            recent_per_update=(await peek.memory_usage(recent) or 0) / max(1, recent_ids),
            recent_ids=recent_ids,
            stream_left=await peek.xlen(drv.peek.keys.ingest()[0]),
        )
        out["state_bytes"] = len((await drv.load(played[0])).to_json())
    finally:
        runner.stop()
        await running_bot
        await peek.aclose()
    return out


def _markup(raw: Any) -> InlineKeyboardMarkup | None:
    """The keyboard a call carried, built the way a handler builds one (PTB's classes)."""
    if not raw:
        return None
    rows = json.loads(raw) if isinstance(raw, str) else raw
    return InlineKeyboardMarkup(
        [
            [InlineKeyboardButton(b["text"], callback_data=b.get("callback_data"), url=b.get("url")) for b in row]
            for row in rows["inline_keyboard"]
        ]
    )


class Skeleton:
    """A handler with no game logic: one Redis GET and one SET (a read and a compare-and-set's
    write), then the same Bot API calls the bot made for that tap, with the same parameters
    (text, parse mode, keyboard; the answer included). :meth:`replay` measures CPU seconds
    per tap; it runs right after each serial game of the bot, so that both meet the machine
    in the same state (the side-by-side measure)."""

    def __init__(self, url: str) -> None:
        self.api = FakeBotAPI()
        # the bot's own defaults (HTML parse mode, no link previews), so the calls carry the same parameters
        defaults = build_application(Settings(BOT_TOKEN=TOKEN)).bot.defaults
        self.app = (
            Application.builder()
            .token(TOKEN)
            .request(self.api)
            .get_updates_request(self.api)
            .defaults(defaults)
            .build()
        )
        self.redis = Redis.from_url(url, decode_responses=True)
        self._calls: Any = iter(())
        self.app.add_handler(TypeHandler(Update, self._handler))

    async def _handler(self, update: Update, context) -> None:
        q = update.callback_query
        await self.redis.get("skel:x")
        await self.redis.set("skel:x", q.data)
        for method, p in next(self._calls):
            if method == "answerCallbackQuery":
                await q.answer(p.get("text"), url=p.get("url"))
            elif method == "sendMessage":
                await context.bot.send_message(
                    p["chat_id"],
                    p["text"],
                    reply_markup=_markup(p.get("reply_markup")),
                    message_thread_id=p.get("message_thread_id"),
                )
            elif method == "editMessageText":
                await context.bot.edit_message_text(
                    p["text"],
                    chat_id=p["chat_id"],
                    message_id=p["message_id"],
                    parse_mode=p.get("parse_mode"),
                    reply_markup=_markup(p.get("reply_markup")),
                )
            elif method == "deleteMessage":
                await context.bot.delete_message(p["chat_id"], p["message_id"])

    async def start(self) -> None:
        await self.app.initialize()

    async def replay(self, tap_calls: list[list]) -> list[float]:
        """Replay taps (each the list of (method, parameters) the bot called for it)."""
        self._calls = iter(tap_calls)
        cpu: list[float] = []
        for _ in tap_calls:
            t0 = time.process_time()
            await self.app.process_update(Update.de_json(tap_update(5, 5, 1, "k:x:0:A"), self.app.bot))
            cpu.append(time.process_time() - t0)
        return cpu

    async def stop(self) -> None:
        await self.app.shutdown()
        await self.redis.aclose()


_OP_NAMES = {"k": "card pick", "p": "play", "c": "challenge", "b": "believe"}


def report(bot: dict, skel: list[float], seats: int, games: int) -> str:
    taps, plays = bot["taps"], bot["plays"]
    cpu = bot["cpu_serial"]
    lines = [
        f"games: {games} concurrent, {seats} seats; taps {taps} (lobby taps aside), plays {plays}, transactions {bot['trips'].get('#transactions', 0)}",
        f"taps per second: {taps / bot['wall']:.0f}  (wall {bot['wall']:.1f} s, CPU {bot['cpu']:.1f} s, mean CPU/tap {bot['cpu'] / taps * 1e6:.0f} µs)",
        f"CPU µs per tap (serial, tap + its sync): p50 {pct(cpu, 0.5) * 1e6:.0f}, p99 {pct(cpu, 0.99) * 1e6:.0f}",
        f"skeleton CPU µs per tap: p50 {pct(skel, 0.5) * 1e6:.0f}, p99 {pct(skel, 0.99) * 1e6:.0f};"
        f" ratio bot/skeleton (p50) {pct(cpu, 0.5) / pct(skel, 0.5):.2f}, (mean) {statistics.mean(cpu) / statistics.mean(skel):.2f}",
        "CPU µs per tap by kind, p50 bot / skeleton (ratio): "
        + ", ".join(
            f"{_OP_NAMES.get(op, op)} {pct(b, 0.5) * 1e6:.0f} / {pct(k, 0.5) * 1e6:.0f} ({pct(b, 0.5) / pct(k, 0.5):.2f}; {len(b)} taps)"
            for op in sorted(set(bot["tap_ops"]))
            for b, k in [
                (
                    [c for c, o in zip(cpu, bot["tap_ops"]) if o == op],
                    [c for c, o in zip(skel, bot["tap_ops"]) if o == op],
                )
            ]
        ),
        "Redis round trips per tap: "
        + ", ".join(f"{k} {v / taps:.2f}" for k, v in sorted(bot["trips"].items()) if k[0] != "#")
        + f"; total {sum(v for k, v in bot['trips'].items() if k[0] != '#') / taps:.2f}",
        f"Redis round trips per transaction (the game's own: compare-and-set, + index writes when an index"
        f" moves; the table is kept in memory): "
        f"{bot['trips'].get('transaction', 0) / max(1, bot['trips'].get('#transactions', 0)):.2f}"
        f" over {bot['trips'].get('#transactions', 0)} transactions",
        "Bot API calls per play: "
        + ", ".join(f"{m}[{k}] {n / plays:.2f}" for (m, k), n in sorted(bot["calls"].items(), key=lambda x: -x[1])),
        "messages sent or edited per tap (serial game; answers and deletions aside): "
        + ", ".join(
            f"{_OP_NAMES.get(op, op)} mean {statistics.mean(v):.2f} max {max(v)}"
            for op, v in sorted(bot["per_op"].items())
        ),
        f"Redis bytes per live game (MEMORY USAGE over its keys, {len(bot['mem'])} samples): "
        f"mean {statistics.mean(bot['mem']) if bot['mem'] else 0:.0f}, max {max(bot['mem'], default=0)}",
        f"Redis bytes per finished game (all its keys, action log included; {len(bot['ended'])} games): "
        f"mean {statistics.mean(b for b, _ in bot['ended']):.0f}, max {max(b for b, _ in bot['ended'])};"
        f" per action {sum(b for b, _ in bot['ended']) / max(1, sum(n for _, n in bot['ended'])):.0f}"
        f"; ingest's recent update ids: {bot['recent_per_update']:.0f} bytes per update ({bot['recent_ids']} kept, at most {ingest_mod.RECENT_UPDATES});"
        f" stream entries left unprocessed: {bot['stream_left']}",
        f"table JSON (state) bytes at the end of a game: {bot['state_bytes']}",
        f"peak RSS: {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MiB",
    ]
    return "\n".join(lines)


async def main_async(games: int, seats: int, serial: int = SERIAL_GAMES) -> str:
    """Run the benchmark on a private redis-server: ``games`` concurrent games of ``seats``
    seats, after ``serial`` games played one at a time (CPU per tap, bot and skeleton side by
    side). Returns the report's text."""
    server = RedisServer()
    try:
        bot = await run_bot(server.url, games, seats, serial)
    finally:
        server.stop()
    return report(bot, bot["skel"], seats, games)


def main(argv: list[str] | None = None) -> None:
    """Command line entry: ``--games`` (default 100), ``--seats`` (default 4), ``--serial``
    (games measured one at a time, default :data:`SERIAL_GAMES`)."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--games", type=int, default=100)
    ap.add_argument("--seats", type=int, default=4)
    ap.add_argument("--serial", type=int, default=SERIAL_GAMES)
    args = ap.parse_args(argv)
    print(asyncio.run(main_async(args.games, args.seats, args.serial)))


if __name__ == "__main__":
    main()
