"""Complete games through the real bot process, the Bot API emulator and a real Redis."""

from __future__ import annotations

import asyncio
import random

import pytest

from tests.e2e.harness import BotProcess, Table
from tests.fakes.botapi import BotAPIEmulator

pytestmark = pytest.mark.e2e


async def open_table(emu: BotAPIEmulator, n: int = 4, variant: str = "russian", chat_id: int = -1001, bots: int = 0):
    """Open a lobby in a new group, seat ``n`` simulated players and ``bots`` AI seats, and
    start the game (a six-seat lobby starts itself). Returns the group and the players."""
    users = [
        emu.add_user(100 + i + abs(chat_id) * 10, name)
        for i, name in enumerate(["Аня", "Борис", "Вера", "Глеб", "Даша", "Егор"][:n])
    ]
    group = emu.add_group(chat_id, "Карточный клуб", members=users, admins=users[:1])
    # Updates may be served out of order (webhook workers behind a load balancer): the lobby
    # taps below must not overtake the /start that lets the bot write to each player.
    for u in users:
        await u.start_bot(answered=True)
    await users[0].send(group, "/start_game")
    lobby = await emu.wait_message(
        group.id, lambda m: m.from_bot and any(b.get("text") == "Играю" for b in m.flat_buttons), timeout=30
    )
    for u in users[1:]:
        ans = await (await u.tap(lobby, "Играю")).answer(15)
        assert ans is not None and "url" not in ans, ans  # a url: the bot cannot write to them
    for _ in range(bots):
        add = next(b for b in lobby.flat_buttons if b.get("callback_data", "").startswith("a:"))
        assert await (await users[0].tap(lobby, add)).answer(15) is not None
    if variant == "classic":
        classic = next(b for b in lobby.flat_buttons if b.get("callback_data", "").endswith(":classic"))
        await (await users[0].tap(lobby, classic)).answer(15)
    if n + bots < 6:
        await (await users[0].tap(lobby, "Начать")).answer(15)
    return group, users


async def play_out(table: Table, max_taps: int = 6000) -> None:
    while table.taps < max_taps:
        if not await table.step(timeout=30):
            break
    await table.emu.wait_for(table.finished, timeout=60)


@pytest.mark.parametrize("variant", ["russian", "classic"])
async def test_four_players_play_a_full_game(redis_server, tmp_path, variant):
    emu = BotAPIEmulator(group_window=6.0)
    await emu.start()
    bot = BotProcess(emu, redis_server.url.replace("/0", f"/{1 if variant == 'russian' else 2}"), tmp_path / "bot.log")
    bot.start()
    try:
        group, users = await open_table(emu, 4, variant)
        table = Table(emu, group, users, random.Random(7))
        await play_out(table)
        assert table.finished(), bot.log()[-3000:]
        assert table.unanswered == []
        assert emu.errors == [], emu.errors[:5]
        assert emu.violations == []
        result = [m for m in emu.chat_messages(group.id) if m.text and "Игра окончена" in m.text]
        assert len(result) == 1
    finally:
        bot.stop()
        await emu.stop()
