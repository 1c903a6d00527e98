"""Turn timers, bots and leaving, end to end: the real bot process(es), the emulator, a real Redis.

Timers are short here (TURN_TIMEOUT 2 s, AI pauses 0.1–0.3 s) so games finish quickly; the
group's message spacing still bounds the AI pause (RATE_GROUP_PERIOD / RATE_GROUP_MAX).
The two longest cases have files of their own, so that pytest-xdist runs them beside these:
test_timers_restart.py (the bot killed with deadlines pending) and test_timers_two_processes.py.
"""

from __future__ import annotations

import random

import pytest
from redis.asyncio import Redis

import core
from core.record import action_from_dict
from tests.e2e.harness import BotProcess, Table, running
from tests.e2e.test_full_game import open_table, play_out
from tests.e2e.test_restart import board_cards
from tests.fakes.botapi import BotAPIEmulator
from tgbot.i18n import translator

pytestmark = pytest.mark.e2e

FAST = {"TURN_TIMEOUT": "2", "AI_PAUSE_MIN": "0.1", "AI_PAUSE_MAX": "0.3"}
#: The fixed parts of the group's notes (Russian, the default), taken from the catalog.
AUTO = translator("ru").t("{player} is out of time: an automatic move is made.", player="").strip()
LEFT = translator("ru").t("{player} leaves the game: the AI plays this seat to the end.", player="").strip()
TAKEOVER = translator("ru").t("{player}: the AI plays this seat until its player comes back.", player="").strip(" :")


def texts(emu: BotAPIEmulator, chat_id: int, needle: str) -> list[str]:
    return [m.text for m in emu.chat_messages(chat_id) if m.from_bot and m.text and needle in m.text]


async def stored_games(url: str, chat_id: int) -> list[tuple[dict, list[str], list[dict]]]:
    """Every game of group ``chat_id`` in Redis db ``url``: (table JSON, deal, action log)."""
    import json

    r = Redis.from_url(url, decode_responses=True)
    out = []
    try:
        async for key in r.scan_iter("cheat:*:{g*}:game"):
            t = json.loads(await r.hget(key, "table"))
            if t["chat_id"] != chat_id:
                continue
            deal = json.loads(await r.hget(key, "deal") or "null")
            log = [json.loads(a) for a in await r.lrange(key.replace(":game", ":log"), 0, -1)]
            out.append((t, deal, log))
    finally:
        await r.aclose()
    return out


def check_replay(table: dict, deal: list[str], log: list[dict]) -> core.GameState:
    """The stored log replays on the deal to the stored state: every move applied exactly once."""
    state = core.from_deal(table["variant"], [core.Hand.from_str(h) for h in deal])
    for i, raw in enumerate(log):
        seat, action = action_from_dict(raw, state.players, i)
        state, _ = core.apply(state, seat, action)
    assert len(log) == table["action_count"]
    assert state.to_dict() == table["state"]
    return state


async def ended_cleanly(emu: BotAPIEmulator, group, url: str) -> dict:
    """The group's game ended with every card on the board, no Bot API error or violation, and
    a log that replays to the stored state; returns the stored table (JSON)."""
    assert board_cards(emu, group.id) == 52
    assert emu.violations == [] and emu.errors == [], emu.errors[:3]
    ((t, deal, log),) = await stored_games(url, group.id)
    check_replay(t, deal, log)
    return t


def idle_log_count(bots: list[BotProcess], what: str) -> int:
    return sum(b.log().count(f"fired: {what}") for b in bots)


async def test_a_player_who_never_taps_gets_automatic_moves_then_the_ai(redis_server, tmp_path):
    async with running(redis_server, tmp_path, 4, **{**FAST, "TURN_TIMEOUT": "3"}) as (emu, (bot,), url):
        group, users = await open_table(emu, 3, "russian", chat_id=-1004)
        idle = users[1]
        table = Table(emu, group, [users[0], users[2]], random.Random(3))
        await play_out(table)
        assert table.finished(), bot.log()[-3000:]
        autos = texts(emu, group.id, AUTO)
        assert sum("Борис" in t for t in autos) == 2  # two in a row, then the AI holds the seat
        assert len([t for t in texts(emu, group.id, TAKEOVER) if "Борис" in t]) == 1
        reminders = [
            m
            for m in emu.chat_messages(idle.id, include_deleted=True)
            if m.from_bot and m.text and m.text.startswith("⏰")
        ]
        assert len(reminders) == 2  # one per turn of their own, none once the AI holds the seat
        await emu.wait_for(lambda: all(m.deleted for m in reminders), 10)  # each retired once its turn passed
        t = await ended_cleanly(emu, group, url)
        assert t["status"] == "over" and t["seats"][1]["player"] == "stand_in"


async def test_one_person_and_two_bots_play_a_game(redis_server, tmp_path):
    async with running(redis_server, tmp_path, 5, AI_PAUSE_MIN="0.1", AI_PAUSE_MAX="0.3") as (emu, (bot,), url):
        human = emu.add_user(501, "Аня")
        group = emu.add_group(-1005, "Клуб", members=[human], admins=[human])
        await human.start_bot()
        await human.send(group, "/timer")
        menu = await emu.wait_message(
            group.id, lambda m: m.from_bot and any(b.get("text") == "30 с" for b in m.flat_buttons), timeout=30
        )
        assert (await (await human.tap(menu, "30 с")).answer(15))["text"] == translator("ru").t(
            "Turn timer saved for the next games."
        )
        await human.send(group, "/start_game")
        lobby = await emu.wait_message(
            group.id, lambda m: m.from_bot and any(b.get("text") == "Играю" for b in m.flat_buttons), timeout=30
        )
        await (await human.tap(lobby, "Добавить бота")).answer(15)
        await human.send(group, "/add_bot")

        def current():
            return next(m for m in emu.chat_messages(group.id) if m.message_id == lobby.message_id)

        await emu.wait_for(lambda: "Бот Маша" in (current().text or ""), timeout=15)
        lobby = current()
        assert "Бот Вася" in lobby.text and any(b.get("text") == "Убрать бота" for b in lobby.flat_buttons)
        await (await human.tap(lobby, "Начать")).answer(15)
        table = Table(emu, group, [human], random.Random(5))
        await play_out(table)
        assert table.finished(), bot.log()[-3000:]
        assert texts(emu, group.id, AUTO) == []
        t = await ended_cleanly(emu, group, url)
        assert [s["user_id"] for s in t["seats"]] == [501, -1, -2]
        assert t["turn_timeout"] == 30  # the chat's turn timer set with /timer


async def test_players_leaving_mid_game(redis_server, tmp_path):
    async with running(redis_server, tmp_path, 6, AI_PAUSE_MIN="0.1", AI_PAUSE_MAX="0.3") as (emu, (bot,), url):
        group, users = await open_table(emu, 3, "russian", chat_id=-1006)
        table = Table(emu, group, users, random.Random(9))
        for _ in range(6):
            await table.step()
        await users[2].send(group, "/leave")
        confirm = await emu.wait_message(
            group.id, lambda m: m.from_bot and any(b.get("text") == "Да, выйти" for b in m.flat_buttons), timeout=15
        )
        assert (await (await users[2].tap(confirm, "Да, выйти")).answer(15)) is not None
        await emu.user_left(group, users[1])
        await emu.wait_for(lambda: len(texts(emu, group.id, LEFT)) == 2, timeout=20)
        table.players = [users[0]]
        await play_out(table)
        assert table.finished(), bot.log()[-3000:]
        t = await ended_cleanly(emu, group, url)
        assert t["status"] == "over" and t["seats"][1]["player"] == t["seats"][2]["player"] == "left"


#: Nobody taps in the games below: AI seats play most of them, so the group's message spacing
#: (the AI pause's floor) is shortened to keep them quick: 20 messages per 2 s.
QUICK = {"AI_PAUSE_MIN": "0.05", "AI_PAUSE_MAX": "0.1"}
