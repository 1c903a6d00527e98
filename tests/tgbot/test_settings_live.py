"""Settings, statistics and admin tools through the bot's real Application and the Bot API
emulator (tests/tgbot/live.py): /settings edited in place and applied to the next lobby,
statistics counted once after a game (also across a restart mid-game), the end of a game
(result with bluffs, final panels, board), play again, the record file, /kick, /stop_game's
confirmation, /notify_me, /stats, /top, /forget_me."""

from __future__ import annotations

import time
from dataclasses import replace

import pytest
from redis.asyncio import Redis

import core
from core.record import Record, replay
from tests.tgbot.helpers import Fenced, play_on
from tests.tgbot.live import cb, live_fixture
from tgbot.game.table import Answer, Player, Status
from tgbot.i18n import translator
from tgbot.owner.store import Store
from tgbot.render.announcements import note
from tgbot.render.answers import answer
from tgbot.render.board import board, no_game
from tgbot.render.text import name, plain, title
from tgbot.storage import stats

pytestmark = pytest.mark.e2e

DB = 14


live = live_fixture(DB)


def _people(emu, base, n=3):
    return [emu.add_user(base + i, name) for i, name in enumerate(("Аня", "Борис", "Вера", "Глеб")[:n])]


def _last_user_message(emu, chat_id, user):
    return [m for m in emu.chat_messages(chat_id, from_bot=False) if m.sender is user][-1]


async def test_game_end_stats_once_play_again_and_record(live):
    emu = live.emu
    a, b, c = _people(emu, 900)
    a.language_code = "en"  # her Telegram app is in English
    group = emu.add_group(-1009001, "Клуб", members=[a, b, c], admins=[a])
    gid = await live.open_game(group, [a, b, c])
    await play_on(live.store, gid)
    live.app.bot_data["services"].syncer.request(gid)
    await live.settle()
    t = await live.store.load(gid)
    assert t.status is Status.OVER
    # counted once; a second sync (another process, a restart) adds nothing
    assert await live.store.redis.hget(live.store.keys.game(gid), "counted")
    before = [await stats.totals(live.store.records, u.id) for u in (a, b, c)]
    assert all(tot.games == 1 for tot, _ in before)
    await stats.count_game(live.store.records, t)
    live.app.bot_data["services"].syncer.request(gid)
    await live.settle()
    assert [await stats.totals(live.store.records, u.id) for u in (a, b, c)] == before
    # the result names every player's bluffs; every panel is final, only the record button
    result = emu.last_message(group.id, lambda m: "bluff" in (m.text or "") or "блеф" in (m.text or ""))
    assert result is not None and all(plain(name(t, i)).strip("\u2068\u2069") in result.text for i in range(3))
    # the final board comes under the result, «Сыграть ещё» at hand; the lobby's message far up is gone
    final = emu.last_message(group.id)
    assert cb(final, "n:") and final.message_id > result.message_id
    assert [m.message_id for m in emu.chat_messages(group.id) if m.from_bot and cb(m, "n:")] == [final.message_id]
    for u in (a, b, c):
        p = live.panel(u, gid)
        assert [x["callback_data"][:2] for x in p.flat_buttons] == ["d:"]
    # the record comes as a file and replays to the same result
    await (await b.tap(live.panel(b, gid), cb(live.panel(b, gid), "d:")[0])).answer(15)
    await live.settle()
    doc = emu.last_message(b.id, lambda m: m.document is not None)
    assert doc.document["file_name"] == f"cheat-{gid}.json"
    rec = Record.from_json(doc.file.data)
    assert rec.players == ("Аня", "Борис", "Вера") and replay(rec).summary()["places"] == list(t.state.result.places)
    # /board once the game has ended: how it ended and how to open a new one, not «no game here»
    await c.send(group, "/board")
    await live.settle()
    answer = emu.last_message(group.id).text
    # (in c's language: a opened the game in hers, English, the group has no language set)
    in_russian = replace(t, lang="ru")
    assert answer == no_game("ru", t) and plain(board(in_russian, "x").text).split("\n")[-1] in answer
    assert "/start_game" in answer and "Здесь сейчас нет игры" not in answer
    # play again from the board: a new lobby with the same (reachable) players
    b.block_bot()  # b can no longer be reached: not seated again
    await live.settle()
    shown = emu.last_message(group.id, lambda m: cb(m, "n:"))
    await (await c.tap(shown, cb(shown, "n:")[0])).answer(15)
    await live.settle()
    again = await live.store.chat_game(group.id, None)
    assert again is not None and again.status is Status.LOBBY and again.id != gid
    assert [s.user_id for s in again.seats] == [c.id]  # the others are invited, not seated
    # each in their private language: the group set none, so a's Telegram app's (English)
    invitation = emu.last_message(a.id, lambda m: "Клуб" in (m.text or ""))
    assert invitation.text == plain(note("lobby_open", "en", group=title(again)))
    # /stats and /top in the group (no game running: answered there)
    await a.send(group, "/stats")
    await live.settle()
    assert "Аня" in emu.last_message(group.id).text


async def test_restart_mid_game_counts_the_game_once(live, redis_server):
    emu = live.emu
    a, b, c = _people(emu, 920)
    group = emu.add_group(-1009002, "Клуб", members=[a, b, c], admins=[a])
    gid = await live.open_game(group, [a, b, c])
    await play_on(live.store, gid, steps=5)
    prefix = live.store.keys.prefix
    await live.stop()
    # the game ends while the bot is down (another process, active meanwhile, played it)
    redis = Redis.from_url(live.url, decode_responses=True)
    store = Store(redis, prefix=prefix)
    store.fence = Fenced(int(time.time() * 1000))
    await play_on(store, gid)
    store.forget_tables()
    assert (await store.load(gid)).status is Status.OVER and gid in await store.records.live_games()
    await live.start()
    await live.settle()
    assert gid not in await store.records.live_games()
    assert [(await stats.totals(store.records, u.id))[0].games for u in (a, b, c)] == [1, 1, 1]
    await live.stop()
    await live.start()
    await live.settle()
    assert [(await stats.totals(store.records, u.id))[0].games for u in (a, b, c)] == [1, 1, 1]
    await redis.aclose()


async def test_settings_menu_applies_to_the_next_lobby(live):
    emu = live.emu
    a, b, c = _people(emu, 940)
    group = emu.add_group(-1009003, "Клуб", members=[a, b, c], admins=[a])
    for u in (a, b, c):
        await u.start_bot()
    await b.send(group, "/settings")
    await live.settle()
    assert not cb(emu.last_message(group.id), "e:")  # not an admin
    await a.send(group, "/settings")
    menu = await emu.wait_message(group.id, lambda m: cb(m, "e:"), timeout=20)
    for data in ("vclassic", "sshuffle", "t30", "len"):
        m = emu._msg(group.id, menu.message_id)
        button = [x for x in m.flat_buttons if x["callback_data"].endswith(":" + data)][0]
        await (await a.tap(m, button)).answer(15)
    await live.settle()
    cfg = await live.store.records.chat_settings(group.id)
    assert (cfg.variant, cfg.seating, cfg.lang) == ("classic", "shuffle", "en")
    assert await live.store.records.chat_turn_timeout(group.id, 90) == 30
    edited = emu._msg(group.id, menu.message_id)
    assert "✅" in edited.text or any("✅" in x["text"] for x in edited.flat_buttons)
    assert len([m for m in emu.chat_messages(group.id, from_bot=True) if cb(m, "e:")]) == 1  # one message
    gid = await live.open_game(group, [a, b, c], start=True)
    t = await live.store.load(gid)
    assert t.variant == "classic" and t.lang == "en" and t.turn_timeout == 30
    deal, _ = await live.store.records.record(gid)
    order = [a.id, b.id, c.id]
    __import__("random").Random(f"{t.seed}:seats").shuffle(order)
    assert [s.user_id for s in t.seats] == order  # shuffled from the seed: the record replays
    assert [h.to_str() for h in core.new_game(3, "classic", __import__("random").Random(t.seed)).hands] == deal


async def test_kick_stop_confirmation_notify_and_forget(live):
    emu = live.emu
    a, b, c, d = _people(emu, 960, 4)
    group = emu.add_group(-1009004, "Клуб", members=[a, b, c, d], admins=[a])
    await d.start_bot(answered=True)
    await d.send(group, "/notify_me")
    await live.settle()
    gid = await live.open_game(group, [a, b, c])
    assert any("Клуб" in (m.text or "") for m in emu.chat_messages(d.id, from_bot=True))
    assert not await live.store.redis.exists(f"cheat:notify:{group.id}")  # consumed
    # /kick by reply: a plain member may not; the creator hands c's seat to the AI
    await c.send(group, "hello")
    target = _last_user_message(emu, group.id, c)
    await b.send(group, "/kick", reply_to=target.message_id)
    await live.settle()
    assert not (await live.store.load(gid)).seats[2].by_ai
    # refusals name who may: a plain member's /timer (admins only); /kick on someone not seated
    await b.send(group, "/timer")
    await live.settle()
    assert emu.chat_messages(group.id, from_bot=True)[-1].text == answer(Answer.ADMINS_ONLY, "ru")
    await d.send(group, "hello")
    await a.send(group, "/kick", reply_to=_last_user_message(emu, group.id, d).message_id)
    await live.settle()
    assert emu.chat_messages(group.id, from_bot=True)[-1].text == answer(Answer.NOT_PLAYING, "ru")
    await a.send(group, "/kick", reply_to=target.message_id)
    await live.settle()
    t = await live.store.load(gid)
    assert t.seats[t.seat_of(c.id)].player is Player.LEFT
    # /stats during the game answers privately
    n_group = len(emu.chat_messages(group.id, from_bot=True))
    await b.send(group, "/stats")
    await live.settle()
    assert len(emu.chat_messages(group.id, from_bot=True)) == n_group
    # /stop_game asks first
    await a.send(group, "/stop_game")
    confirm = await emu.wait_message(group.id, lambda m: cb(m, "y:"), timeout=20)
    assert (await live.store.load(gid)).status is Status.PLAYING
    await (await a.tap(confirm, cb(confirm, "y:")[0])).answer(15)
    await live.settle()
    assert (await live.store.load(gid)).status is Status.CANCELLED
    assert not await live.store.redis.hget(live.store.keys.game(gid), "counted")
    # /forget_me in private
    await live.store.records.want_notify(group.id, b.id)
    await b.send(b, "/forget_me")
    await live.settle()
    assert not await live.store.redis.exists(f"cheat:user:{b.id}")
    assert not await live.store.redis.sismember(f"cheat:notify:{group.id}", str(b.id))


async def test_a_new_group_follows_the_senders_language_until_an_admin_chooses(live):
    """A new group once spoke Russian first to everyone. Until an admin sets its language, a
    group's replies and lobbies follow the sender's Telegram language (one of ours); an anonymous
    admin gives no hint (Russian), and nothing is stored before an admin's choice."""
    emu = live.emu
    a, b = _people(emu, 990, 2)
    a.language_code, b.language_code = "fr-CA", "de"  # b's language is not one of ours
    group = emu.add_group(-1009900, "Club", members=[a, b], admins=[a])
    await emu.send_as_anonymous_admin(group, "/board")
    await live.settle()
    assert emu.last_message(group.id).text == no_game("ru")
    await b.send(group, "/board")
    await live.settle()
    assert emu.last_message(group.id).text == no_game("ru")
    await a.send(group, "/board")
    await live.settle()
    assert emu.last_message(group.id).text == no_game("fr")
    await a.send(group, "/start_game")
    await live.settle()
    game = await live.store.chat_game(group.id, None)
    assert game is not None and game.lang == "fr" and emu.last_message(group.id).text == plain(board(game, "").text)
    assert (await live.store.records.chat_settings(group.id)).lang is None
    # an admin's choice (as /language stores it) holds for everyone, whatever their app's language
    await live.store.records.set_chat_settings(group.id, lang="it")
    await a.send(group, "/timer")
    await live.settle()
    assert emu.last_message(group.id).text.startswith(translator("it").t("Time for a turn: {duration}. Choose:")[:12])
