"""How long another group's showdown waits while one person taps: ``python -m tests.bench.showdown_wait
[--taps 300] [--rounds 3] [--groups 3]`` (issue 26 item 3; figures in docs/scaling.md).

The bot's real Application runs in-process (:mod:`tests.tgbot.live`: long polling, the durable
ingest, a private redis-server) against the Bot API emulator at Telegram's real limits (30
messages a second, 20 a minute per group). Each round opens a game for the tapper and ``--groups``
other games, each brought to the point where a player may doubt; then the tapper's ``--taps``
card picks are queued (at once, or ``--rate`` a second) and, once a quarter of them is queued,
each other group's doubt is tapped in turn. Prints each showdown's wait (from the doubt's tap to the showdown's message in its group,
by the emulator's clock) as median, p90 and max over all rounds, how long the tapper's taps took
to be answered, and how many of their panel's redraws reached Telegram.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time

from tests.redis_server import RedisServer
from tests.tgbot.live import Live, cb, running

NAMES = ("Аня", "Борис", "Вера")


async def _game(live: Live, base: int, chat_id: int) -> tuple[str, list]:
    """A running game of three people in a new group; returns its id and its people."""
    people = [live.emu.add_user(base + n, name) for n, name in enumerate(NAMES)]
    group = live.emu.add_group(chat_id, f"Клуб {base}", members=people, admins=people[:1])
    return await live.open_game(group, people), people


async def _at_doubt(live: Live, base: int, chat_id: int) -> tuple[object, object]:
    """A game where the next player may doubt: (that player, their panel's doubt button's message)."""
    gid, people = await _game(live, base, chat_id)
    await live.play_one(gid, {u.id: u for u in people})
    table = await live.store.load(gid)
    doubter = next(u for u in people if u.id == table.seats[table.state.current].user_id)
    panel = await live.emu.wait_for(lambda: (p := live.panel(doubter, gid)) and cb(p, "c:") and p, 30)
    return doubter, panel


async def _showdown(live: Live, doubter, panel, chat_id: int) -> float:
    """Tap the doubt; seconds until the showdown's message reached the group."""
    emu = live.emu
    since, tapped = len(emu.calls), time.time()
    await doubter.tap(panel, cb(panel, "c:")[0])
    posted = await emu.wait_for(
        lambda: next(
            (c for c in emu.calls[since:] if c["method"] == "sendMessage" and c["chat_id"] == chat_id and c["ok"]),
            None,
        ),
        60,
    )
    return posted["time"] - tapped


async def _flood(tapper, panel, picks: list[str], taps: int, rate: float, queued: list) -> None:
    """Queue ``taps`` picks alternating between ``picks``: at once (``rate`` 0) or ``rate`` a second."""
    start = time.monotonic()
    for n in range(taps):
        if rate and (due := start + n / rate - time.monotonic()) > 0:
            await asyncio.sleep(due)
        queued.append(await tapper.tap(panel, picks[n % 2], strict=False))


async def _round(live: Live, number: int, taps: int, groups: int, rate: float) -> tuple[list[float], float, int]:
    """One round: (the showdowns' waits, seconds until every tap was answered, redraws made)."""
    emu, base = live.emu, 100_000 * (number + 1)
    gid, people = await _game(live, base, -base)
    table = await live.store.load(gid)
    tapper = next(u for u in people if u.id == table.seats[table.state.current].user_id)
    panel = await emu.wait_for(lambda: (p := live.panel(tapper, gid)) and cb(p, "k:") and p, 30)
    picks = [button["callback_data"] for button in cb(panel, "k:")[:2]]
    doubts = [await _at_doubt(live, base + 10 * (n + 1), -(base + 10 * (n + 1))) for n in range(groups)]
    await live.settle(60)
    since, started, queued = len(emu.calls), time.time(), []
    flood = asyncio.create_task(_flood(tapper, panel, picks, taps, rate, queued))
    await emu.wait_for(lambda: len(queued) >= taps // 4, 60)  # the showdowns come in the midst of the taps
    waits = []
    for n, (doubter, doubt_panel) in enumerate(doubts):
        waits.append(await _showdown(live, doubter, doubt_panel, -(base + 10 * (n + 1))))
    await flood
    answered = await asyncio.gather(*(tap.answer(60) for tap in queued), return_exceptions=True)
    took = time.time() - started
    redraws = sum(1 for c in emu.calls[since:] if c["method"] == "editMessageText" and c["chat_id"] == tapper.id)
    failed = sum(1 for a in answered if isinstance(a, BaseException))
    if failed:
        print(f"round {number}: {failed} taps not answered")
    await live.settle(60)
    return waits, took, redraws


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


async def main_async(taps: int, rounds: int, groups: int, rate: float = 0.0) -> str:
    server = RedisServer()
    try:
        async with running(server.url, group_window=60.0) as live:
            results = [await _round(live, n, taps, groups, rate) for n in range(rounds)]
    finally:
        server.stop()
    waits = [w * 1000 for r in results for w in r[0]]
    lines = [
        f"{taps} taps by one person ({f'{rate:g} a second' if rate else 'at once'}), {rounds} rounds, "
        f"{len(waits)} showdowns in other groups",
        f"showdown wait ms: median {statistics.median(waits):.0f}  p90 {_pct(waits, 0.9):.0f}  max {max(waits):.0f}",
        "taps answered within s (per round): " + ", ".join(f"{r[1]:.1f}" for r in results),
        "panel redraws sent (per round): " + ", ".join(str(r[2]) for r in results),
    ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--taps", type=int, default=300)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--groups", type=int, default=3, help="other groups' showdowns per round")
    parser.add_argument("--rate", type=float, default=0.0, help="taps a second (0: all at once)")
    args = parser.parse_args(argv)
    print(asyncio.run(main_async(args.taps, args.rounds, args.groups, args.rate)))


if __name__ == "__main__":
    main()
