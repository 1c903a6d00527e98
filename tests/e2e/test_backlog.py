"""Updates received and not yet processed survive a ``kill -9`` (issue 14): each is applied
exactly once or refused as stale after the take-over; and chats are processed concurrently,
so a slow command in one chat never holds a tap in another."""

from __future__ import annotations

import asyncio
import random

import pytest
import redis as redis_sync

from tests.e2e.harness import active_of, debug_redis, game_id, game_log, replay_of, running, stream_length  # noqa: F401 (fixture)
from tests.e2e.test_full_game import open_table
from tests.fakes.botapi import BotAPIEmulator, TapResult
from tgbot.render.answers import answer
from tgbot.storage.keys import Keys, bot_prefix
from tgbot.storage.migrate import SCHEMA

pytestmark = pytest.mark.e2e

STALE = answer("stale", "ru")
#: The storage schema's key of the emulator's bot (its default token, ``123456:TEST``).
SCHEMA_KEY = Keys(bot_prefix("123456")).schema()


def _applied(tap: TapResult, log: list[dict], seat: int) -> bool:
    """Whether the move ``tap`` stands for is in the game's log (a move's callback carries the
    number of actions before it, so it can only land at that index)."""
    op, _gid, turn, *rest = tap.data.split(":")
    turn = int(turn)
    if turn >= len(log) or log[turn].get("seat") != seat:
        return False
    entry = log[turn]
    if op == "p":
        return "play" in entry and "".join(sorted(entry["play"])) == "".join(sorted(_ranks(rest[0])))
    return {"c": "challenge", "b": "believe"}[op] in entry


def _ranks(cards: str) -> list[str]:
    from core.cards import Hand

    return [r.label for r in Hand.from_str(cards).ranks()]


async def test_kill_nine_with_fifty_taps_stored_and_not_processed(redis_server, tmp_path):
    rng = random.Random(8)
    async with running(redis_server, tmp_path, 12, processes=2, started=1, TURN_TIMEOUT="300") as (
        emu,
        (first, second),
        url,
    ):
        assert await active_of([first]) is first
        second.start()
        group, users = await open_table(emu, 4, "russian", chat_id=-1006)
        gid = game_id(emu, group.id)
        seats = {u.id: i for i, u in enumerate(users)}
        await emu.wait_for(lambda: any(_moves(emu, u) for u in users), timeout=30)
        # A slow Bot API: the active process stores a burst of taps at once but works through
        # them slowly (each tap's answer takes 1.5 s), so it dies with most of them unprocessed.
        emu.delay = lambda method, params: 1.5 if method == "answerCallbackQuery" else 0.0
        taps: list[tuple[int, TapResult]] = []
        while len(taps) < 60:
            offered = [(u, m, b) for u in users for m, b in _moves(emu, u)] or [
                (u, m, b) for u in users for m, b in _buttons(emu, u)
            ]
            user, message, button = rng.choice(offered)
            taps.append((seats[user.id], await user.tap(message, button)))
        await emu.wait_for(lambda: not emu.pending_updates, timeout=30)
        await emu.wait_for(lambda: stream_length(url, emu.token) >= 50 or None, timeout=10)
        waiting = stream_length(url, emu.token)
        first.kill9()
        emu.delay = None
        assert await active_of([second], timeout=30) is second
        await emu.wait_for(lambda: stream_length(url, emu.token) == 0 or None, timeout=60)
        print(f"{len(taps)} taps sent; {waiting} stored and not processed at the kill")
        assert waiting >= 50
        log = game_log(url, emu.token, gid)
        refused_but_applied = []
        for seat, tap in taps:
            answer = emu.answers.get(tap.query_id)
            if (
                tap.data[:2] in ("p:", "c:", "b:")
                and answer is not None
                and answer.get("text") == STALE
                and _applied(tap, log, seat)
            ):
                refused_but_applied.append(tap.data)
        assert refused_but_applied == []
        summary = replay_of(url, emu.token, gid)
        assert "error" not in summary, summary
        answered = sum(tap.query_id in emu.answers for _seat, tap in taps)
        too_late = {
            str(e["params"].get("callback_query_id")) for e in emu.errors if e["method"] == "answerCallbackQuery"
        }
        print(f"{answered} of {len(taps)} taps answered (Telegram refuses an answer after 15 s)")
        # every tap was processed: answered, or its answer came when Telegram no longer took it
        assert [
            tap.data for _seat, tap in taps if tap.query_id not in emu.answers and tap.query_id not in too_late
        ] == []
        assert "Traceback" not in first.log() + second.log()


def _buttons(emu: BotAPIEmulator, user) -> list:
    """Every callback button of the user's newest message with buttons."""
    panel = emu.last_message(user.id, lambda m: bool(m.buttons))
    return [(panel, b) for b in panel.flat_buttons if "callback_data" in b] if panel is not None else []


def _moves(emu: BotAPIEmulator, user) -> list:
    """The move buttons (pick, play, challenge, believe) of the user's newest panel."""
    panel = emu.last_message(user.id, lambda m: bool(m.buttons))
    if panel is None:
        return []
    return [(panel, b) for b in panel.flat_buttons if b.get("callback_data", "")[:2] in ("k:", "p:", "c:", "b:")]


async def test_a_slow_command_in_one_chat_never_holds_a_tap_in_another(debug_redis, tmp_path):  # noqa: F811
    with redis_sync.Redis.from_url(
        debug_redis.url.replace("/0", "/13"), socket_timeout=300
    ) as client:  # (a busy machine is slow)
        client.flushdb()
        client.execute_command("DEBUG", "POPULATE", 1_000_000, "unrelated")  # a million other keys
        # the storage is of the current schema already, so the first start does not migrate (a
        # scan over the million other keys, minutes on a loaded machine); the migration has tests
        # of its own (tests/tgbot/test_migrate.py, tests/e2e/test_schema.py)
        client.set(SCHEMA_KEY, SCHEMA)
    async with running(debug_redis, tmp_path, 13, fresh=False) as (emu, _bots, _url):
        assert Keys(bot_prefix(emu.token.partition(":")[0])).schema() == SCHEMA_KEY
        slow = emu.add_user(7001, "Аня")
        await slow.start_bot()
        await emu.wait_message(slow.id, lambda m: m.from_bot, timeout=60)
        group, users = await open_table(emu, 3, "russian", chat_id=-1007)
        lobby_player = users[0]
        panel = await emu.wait_for(lambda: emu.last_message(lobby_player.id, lambda m: bool(m.buttons)), timeout=30)
        # The slowest command there is, made slower still: its reply takes 3 s to go out.
        emu.delay = lambda method, params: (
            3.0 if method == "sendMessage" and str(params.get("chat_id")) == str(slow.id) else 0.0
        )
        loop = asyncio.get_running_loop()
        since = max((m.message_id for m in emu.chat_messages(slow.id)), default=0)
        began = loop.time()
        await slow.send(slow, "/forget_me")
        await asyncio.sleep(0.2)
        tapped = loop.time()
        tap = await lobby_player.tap(panel, next(b for b in panel.flat_buttons if "callback_data" in b))
        await tap.answer(15)
        tap_done = loop.time()
        reply = await emu.wait_message(slow.id, lambda m: m.from_bot, timeout=30, since=since)
        command_done = loop.time()
        print(
            f"tap in another chat answered {tap_done - tapped:.2f} s after it was sent; the slow command took {command_done - began:.2f} s"
        )
        assert reply is not None
        assert tap_done < command_done, "the tap waited for the other chat's command"
