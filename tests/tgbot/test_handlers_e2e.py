"""Handlers through the Bot API emulator and the real bot process (python -m tgbot)."""

from __future__ import annotations

import asyncio

import pytest
from redis.asyncio import Redis

from tests.e2e.harness import BotProcess
from tests.fakes.botapi import BotAPIEmulator
from tgbot.owner.store import Store
from tgbot.render.answers import answer

pytestmark = pytest.mark.e2e

DB = 8


def _cb(msg, prefix):
    return [b for b in msg.flat_buttons if b.get("callback_data", "").startswith(prefix)]


async def test_handlers_join_deeplink_double_tap_redelivery_stop(redis_server, tmp_path):
    url = redis_server.url.replace("/0", f"/{DB}")
    redis = Redis.from_url(url, decode_responses=True)
    await redis.flushdb()
    emu = BotAPIEmulator(group_window=6.0)
    store = Store(redis, prefix=f"cheat:{emu.token.partition(':')[0]}")  # the runner's: the bot's id
    await emu.start()
    bot = BotProcess(emu, url, tmp_path / "bot.log")
    bot.start()

    async def load(gid):
        """The game as the bot process stored it (this test's Store keeps nothing in memory)."""
        store.forget_tables()
        return await store.load(gid)

    async def delivered_again() -> None:
        """Wait until the bot took the updates Telegram delivered again (the next getUpdates
        confirmed them: stored, or skipped as already stored) and processed everything it
        stored (the stream is empty: each entry is deleted once processed)."""
        await emu.wait_for(lambda: not emu.pending_updates, timeout=10)
        stream = store.keys.ingest()[0]
        for _ in range(1000):
            if not await redis.xlen(stream):
                return
            await asyncio.sleep(0.01)  # (polling a condition, up to 10 s)
        raise TimeoutError("the stream was not processed")

    try:
        a, b, c, d = (emu.add_user(500 + i, n) for i, n in enumerate(["Аня", "Борис", "Вера", "Дима"]))
        group = emu.add_group(-2001, "Клуб", members=[a, b, c, d], admins=[a])
        for u in (a, b, c):
            await u.start_bot(answered=True)
        await a.send(group, "/start_game")
        lobby = await emu.wait_message(group.id, lambda m: m.from_bot and _cb(m, "j:"), timeout=30)
        gid = _cb(lobby, "j:")[0]["callback_data"][2:]

        # d never started the bot: the answer is a deep link
        ans = await (await d.tap(lobby, _cb(lobby, "j:")[0])).answer(15)
        assert ans.get("url") == f"https://t.me/{emu.bot_username}?start=j{gid}"
        assert (await load(gid)).seat_of(d.id) is None
        await d.start_bot("j" + gid)
        await emu.wait_for(lambda: "Дима" in (emu._msg(group.id, lobby.message_id).text or ""), timeout=20)
        assert (await load(gid)).seat_of(d.id) is not None

        # b joins; the re-delivered join is applied once
        tap = await b.tap(lobby, _cb(lobby, "j:")[0])
        assert (await tap.answer(15))["text"] == answer("joined", "ru")
        v = (await load(gid)).version
        emu.redeliver(tap.update_id)
        await delivered_again()
        t = await load(gid)
        assert t.version == v and [s.user_id for s in t.seats].count(b.id) == 1
        await (await c.tap(lobby, _cb(lobby, "j:")[0])).answer(15)
        assert len((await load(gid)).seats) == 4

        # /stop_game by a non-admin non-creator is refused
        n_before = len(emu.chat_messages(group.id, from_bot=True))
        await b.send(group, "/stop_game")
        refusal = await emu.wait_message(group.id, lambda m: answer("not_allowed", "ru") in (m.text or ""), timeout=15)
        assert refusal.message_id > 0 and len(emu.chat_messages(group.id, from_bot=True)) > n_before
        assert (await load(gid)).live

        # start; the opener picks a card, then taps the same play button twice
        ans = await (await a.tap(lobby, _cb(lobby, "s:")[0])).answer(15)
        assert ans["text"] == answer("started", "ru")
        table = await load(gid)
        opener = {u.id: u for u in (a, b, c, d)}[table.seats[table.state.current].user_id]

        def panel():
            msgs = [m for m in emu.chat_messages(opener.id) if m.from_bot and _cb(m, "k:")]
            return msgs[-1] if msgs else None

        p = await emu.wait_for(panel, timeout=20)
        await (await opener.tap(p, _cb(p, "k:")[0])).answer(15)
        p = await emu.wait_for(lambda: (m := panel()) and _cb(m, "p:") and m, timeout=20)
        play = _cb(p, "p:")[0]
        t1, t2 = await opener.tap(p, play), await opener.tap(p, play)
        a1, a2 = await t1.answer(15), await t2.answer(15)
        texts = sorted([a1.get("text", ""), a2.get("text", "")])
        assert answer("played", "ru") in texts
        assert texts.count(answer("played", "ru")) == 1
        other = [x for x in texts if x != answer("played", "ru")][0]
        assert other in (answer("stale", "ru"), answer("not_your_turn", "ru"))
        t = await load(gid)
        assert t.action_count == 1 and t.state.pile_size == 1
        _, log = await store.records.record(gid)
        assert len(log) == 1
        # re-delivered play: still applied once
        emu.redeliver(t1.update_id)
        emu.redeliver(t2.update_id)
        await delivered_again()
        t = await load(gid)
        assert t.action_count == 1 and t.state.pile_size == 1 and len((await store.records.record(gid))[1]) == 1

        # commands were registered for groups and private chats
        scopes = {key[0] for key in emu.commands}
        assert any("all_group_chats" in s for s in scopes) and any("all_private_chats" in s for s in scopes)
        assert emu.violations == []
    finally:
        bot.stop()
        await emu.stop()
        await redis.flushdb()
        await redis.aclose()
