"""Three bot processes in webhook mode on one Redis, updates spread round-robin over them (an
imagined load balancer), 20 concurrent games played to the end (issue 8):

- every board the group sees adds up to 52 cards, and every game's stored record replays to its
  stored state (no action lost, none applied twice: the log has one entry per turn);
- every timer fires once: a quarter of the games seat an AI (its moves are deadlines), players
  doze past a short turn timer now and then (reminders, automatic moves), and no deadline is
  fired by two processes;
- the group rate limit holds across processes (the limiter lives in Redis): no 429;
- one process sets the webhook, the others find it set.

The overall limit is scaled up and the group window scaled down (20 per 6 s) so the run takes
about 1.5 to 2.5 minutes on 2 cores. Other seeds: ``SCALE_SEED=7 python -m pytest -n 0 tests/e2e/test_scale_out.py``
(``SCALE_GAMES`` changes the number of games).
"""

from __future__ import annotations

import asyncio
import collections
import os
import random
import re

import pytest
from redis.asyncio import Redis

from core.record import replay
from tests.e2e.harness import BotProcess, Table
from tests.e2e.test_full_game import open_table, play_out
from tests.fakes.botapi import BotAPIEmulator
from tests.redis_server import free_port
from tgbot.storage import stats
from tgbot.owner.store import Store

#: More than the suite's 300 s (pyproject.toml): the run takes 1.5 to 2.5 minutes on 2 cores, and
#: twice that beside a second suite (its speed is not what it tests: tests/bench measures that).
pytestmark = [pytest.mark.e2e, pytest.mark.timeout(600)]

GAMES = int(os.environ.get("SCALE_GAMES", "20"))
SEED = int(os.environ.get("SCALE_SEED", "0"))
#: Seconds of a turn (the reminder comes before): short, so dozing players meet it.
TURN = 3.0
#: A seat's row (numbered while the game runs; by place, unnumbered, once it has a result) and the
#: pile's line («Стопка пуста» when empty).
_SEAT = re.compile(r"^(?:▶ )?(?:\d+\. )?.* — (?:\d+-е место · )?(\d+) карт", re.M)
_PILE = re.compile(r"В стопке: (\d+) карт|Стопка пуста")
_FIRED = re.compile(r"game=(\S+) chat=\S+ deadline fired: (\S+) \((\S+) due ([\d.]+), turn (\d+)\)")


def boards(emu: BotAPIEmulator, chat_id: int) -> list[int]:
    """Hand sizes plus pile of every board text the bot sent or edited into the group."""
    out = []
    for c in emu.calls:
        text = c["params"].get("text") if c["ok"] and c["chat_id"] == chat_id else None
        if text and _PILE.search(text):
            out.append(sum(int(n) for n in _SEAT.findall(text)) + int(_PILE.search(text).group(1) or 0))
    return out


class DozyTable(Table):
    """Players who now and then look away longer than the turn timer before tapping."""

    doze = 0.04

    async def step(self, timeout: float = 20.0) -> bool:
        if self.rng.random() < self.doze:
            await asyncio.sleep(TURN * 1.2)
        loop = asyncio.get_running_loop()
        start = loop.time()
        try:
            return await super().step(timeout)
        finally:
            # the longest wait for a button to tap (the bot's answer and sync, no dozing)
            self.longest = max(getattr(self, "longest", 0.0), loop.time() - start)


async def test_three_webhook_processes_share_games(redis_server, tmp_path):
    url = redis_server.url.replace("/0", "/14")
    redis = Redis.from_url(url, decode_responses=True)
    await redis.flushdb()
    emu = BotAPIEmulator(group_window=6.0, global_rate=300)
    store = Store(redis, prefix=f"cheat:{emu.bot_id}")
    await emu.start()
    ports = [free_port() for _ in range(3)]
    emu.webhook_targets = [f"http://127.0.0.1:{p}/hook" for p in ports]
    bots = [
        BotProcess(
            emu,
            url,
            tmp_path / f"bot{i}.log",
            WEBHOOK_URL="https://bot.example/hook",
            WEBHOOK_LISTEN=f"127.0.0.1:{p}",
            WEBHOOK_SECRET="s3cret",
            RATE_GLOBAL_MAX="300",
            TURN_TIMEOUT=str(TURN),
            AI_PAUSE_MIN="0.3",
            AI_PAUSE_MAX="0.6",
        )
        for i, p in enumerate(ports)
    ]
    for i, b in enumerate(bots):
        b.keep_data = i > 0  # one database, emptied once
        b.start()
    try:
        await emu.wait_for(lambda: emu.webhook.get("url"), timeout=30)
        opened = await asyncio.gather(
            *(open_table(emu, 3 if i % 4 == 0 else 4, chat_id=-3000 - i, bots=int(i % 4 == 0)) for i in range(GAMES))
        )
        tables = [DozyTable(emu, g, us, random.Random(f"{SEED}:{i}")) for i, (g, us) in enumerate(opened)]
        outcomes = await asyncio.wait_for(asyncio.gather(*(play_out(t) for t in tables), return_exceptions=True), 540)
        logs = [b.log() for b in bots]
        stalled = [g.id for (g, _), t in zip(opened, tables) if not t.finished()]
        assert stalled == [], (stalled, outcomes, "\n".join(x[-2000:] for x in logs))
        assert all(t.unanswered == [] for t in tables)
        print("longest wait for a button per game (s):", sorted(round(getattr(t, "longest", 0.0), 1) for t in tables))
        # two taps on one panel in two processes may reach Telegram in the other order
        # (docs/scaling.md, Known limits): counted, not asserted
        print(
            "'message is not modified' answers:",
            sum("not modified" in str(e.get("description", "")) for e in emu.errors),
            "of",
            len(emu.calls),
            "Bot API calls",
        )

        # every process served updates, each with the secret header (PTB rejects others with 403)
        served = {target for target, _, status in emu.deliveries if status == 200}
        assert served == set(emu.webhook_targets)
        # each process sets the same webhook (the Redis limiter's setWebhook lock is gone; with
        # one active process per bot, issue 14, only that one will call it)
        hooks = [c["params"] for c in emu.calls if c["method"] == "setWebhook"]
        assert 1 <= len(hooks) <= 3 and {(h["url"], h["secret_token"]) for h in hooks} == {
            ("https://bot.example/hook", "s3cret")
        }
        assert [e for e in emu.errors if e["error_code"] == 429] == []
        assert emu.violations == []
        for g, _ in opened:
            totals = boards(emu, g.id)
            assert totals and set(totals) == {52}, (g.id, totals)

        # the stored record of every game replays to its stored state, one log entry per turn
        games = 0
        async for key in redis.scan_iter("cheat:*:{g*}:game"):
            gid = key.split("{g")[1].split("}")[0]
            table = await store.load(gid)
            if table.state is None:
                continue
            games += 1
            deal, log = await store.records.record(gid)
            assert len(log) == table.action_count
            outcome = replay(stats.record_of_game(table, deal, log))
            assert outcome.error is None and outcome.state == table.state, gid
        assert games == GAMES

        # every timer fired once: no deadline fired twice, by one process or two
        fired = [m.groups() for x in logs for m in _FIRED.finditer(x)]
        by_deadline = collections.Counter((gid, kind, due) for gid, _, kind, due, _ in fired)
        assert [k for k, n in by_deadline.items() if n > 1] == []
        kinds = collections.Counter(reply for _, reply, *_ in fired)
        assert kinds["ai"] > 0 and kinds["reminded"] > 0 and kinds["auto"] > 0, kinds
        assert sum(1 for x in logs if "fired:" in x) == 1, "timers fire in the active process only"
    finally:
        for b in bots:
            b.stop()
        await emu.stop()
        await redis.flushdb()
        await redis.aclose()
