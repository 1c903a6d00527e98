"""Telegram as it really is: faults, limits and hostile input never break a game.

Each fault class is driven through the Bot API emulator (tests/fakes/botapi.py) against the
bot's real Application (in-process, :mod:`tests.tgbot.live`) and a private redis-server.
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from tests.tgbot.helpers import play_on
from tests.tgbot.live import cb, live_fixture
from tgbot.game.lobby import cancel
from tgbot.game.table import GroupAccess, Status
from tgbot.render.answers import answer
from tgbot.render.board import board as render_board
from tgbot.sync.bookkeeping import BOARD_MESSAGE

#: The group note about a player who cannot get their cards names the bot to open (any language).
_UNREACHABLE_MARK = "@cheat_test_bot"

pytestmark = pytest.mark.e2e

DB = 9


live = live_fixture(DB)


def _people(emu, base=700, names=("Аня", "Борис", "Вера", "Глеб")):
    return [emu.add_user(base + i, n) for i, n in enumerate(names)]


async def _game(live, base, chat_id, **group_kw):
    """Three people (of four created) play in a new group: (group, gid, users by id, people)."""
    people = _people(live.emu, base)
    a, b, c, _ = people
    group = live.emu.add_group(chat_id, "Клуб", members=people, admins=[a], **group_kw)
    gid = await live.open_game(group, [a, b, c])
    return group, gid, {u.id: u for u in (a, b, c)}, people


async def _play_until(live, gid, users, who, limit=3):
    """Others play (at most ``limit`` moves) until it is ``who``'s turn."""
    for _ in range(limit):
        t = await live.store.load(gid)
        if t.seats[t.state.current].user_id == who.id:
            return
        await live.play_one(gid, users)


def _group_texts(emu, group_id):
    return [m.text or "" for m in emu.chat_messages(group_id, from_bot=True)]


# -- 1. private chat unreachable ----------------------------------------------------------


@pytest.mark.parametrize(
    "fault,error", [("blocked", "bot was blocked by the user"), ("never_started", "bot can't initiate conversation")]
)
async def test_unreachable_player_told_once_rest_served_panel_back_on_start(live, fault, error):
    emu = live.emu
    a, b, c, d = _people(emu)
    group = emu.add_group(-3001, "Клуб", members=[a, b, c, d], admins=[a])
    gid = await live.open_game(group, [a, b, c])
    users = {u.id: u for u in (a, b, c)}
    table = await live.store.load(gid)
    victim = users[table.seats[(table.state.current + 1) % 3].user_id]
    # blocked with the my_chat_member update lost (or a chat Telegram treats as never
    # started): only the 403 tells the bot
    if fault == "blocked":
        victim.blocked = True
    else:
        victim.started = False
    await _play_until(live, gid, users, victim)
    await live.settle()
    notes = [t for t in _group_texts(emu, group.id) if _UNREACHABLE_MARK in t and victim.first_name in t]
    assert len(notes) == 1
    assert any(e["error_code"] == 403 and error in e["description"] for e in emu.errors)
    assert not await live.store.records.can_dm(victim.id)
    # more syncs: still told once, no more 403s to the victim
    n403 = sum(1 for e in emu.errors if e["error_code"] == 403)
    live.app.bot_data["services"].syncer.request(gid)
    await live.settle()
    assert len([t for t in _group_texts(emu, group.id) if _UNREACHABLE_MARK in t and victim.first_name in t]) == 1
    assert sum(1 for e in emu.errors if e["error_code"] == 403) == n403
    # the others keep their panels
    for u in users.values():
        if u is not victim:
            assert live.panel(u, gid) is not None
    # /start again: the panel comes back, with its buttons when it is their turn
    old = live.panel(victim, gid)
    await victim.start_bot()
    await live.settle()
    p = await emu.wait_for(lambda: live.panel(victim, gid), timeout=10)
    assert p.message_id > old.message_id and emu._msg(victim.id, old.message_id).deleted
    assert await live.store.records.can_dm(victim.id)
    assert emu.violations == []


async def test_block_via_my_chat_member_and_unblock(live):
    emu = live.emu
    group, gid, users, (a, b, c, _) = await _game(live, 710, -3002)
    b.block_bot()  # my_chat_member: member -> kicked in private
    await live.settle()
    assert not await live.store.records.can_dm(b.id)
    notes = [t for t in _group_texts(emu, group.id) if b.first_name in t and _UNREACHABLE_MARK in t]
    assert len(notes) == 1
    assert [g.id for g in await live.store.user_games(b.id)] == [gid]
    # the game goes on for the others
    await _play_until(live, gid, users, b)
    await b.start_bot()  # my_chat_member back to member, then /start
    await live.settle()
    assert await live.store.records.can_dm(b.id)
    assert live.panel(b, gid) is not None
    assert emu.violations == []


# -- 3. harmless errors -------------------------------------------------------------------


async def test_deleted_board_is_posted_anew_and_old_queries_change_nothing(live):
    emu = live.emu
    group, gid, users, (a, b, c, _) = await _game(live, 720, -3003)
    tg = await live.store.records.tg_get(gid)
    board = emu._msg(group.id, int(tg[BOARD_MESSAGE]))
    board.deleted = True  # an admin deleted the board
    await live.play_one(gid, users)
    tg = await live.store.records.tg_get(gid)
    assert int(tg[BOARD_MESSAGE]) != board.message_id and not emu._msg(group.id, int(tg[BOARD_MESSAGE])).deleted
    assert any("message to edit not found" in e["description"] for e in emu.errors)
    # "message is not modified" is never an error: a refresh that changes nothing
    t = await live.store.load(gid)
    u = users[t.seats[(t.state.current + 1) % 3].user_id]
    p = live.panel(u, gid)
    await (await u.tap(p, cb(p, "r:")[0])).answer(15)
    await live.settle()
    # every tap answer now comes too late: the action still applies exactly once
    emu.query_timeout = -1
    t0 = await live.store.load(gid)
    mover = users[t0.seats[t0.state.current].user_id]
    p = await live.pick(mover, gid)
    play = await mover.tap(p, cb(p, "p:")[0])
    await live.settle()
    t1 = await live.store.load(gid)
    assert t1.action_count == t0.action_count + 1 and len((await live.store.records.record(gid))[1]) == t1.action_count
    assert any("query is too old" in e["description"] for e in emu.errors)
    # the views were still synced after the refused answer: the board shows the new turn
    tg = await live.store.records.tg_get(gid)
    assert emu._msg(group.id, int(tg[BOARD_MESSAGE])).html == render_board(t1, emu.bot_username).text
    assert emu.violations == []


# -- 4. chat identity ---------------------------------------------------------------------


async def test_group_upgraded_mid_game_service_message(live):
    emu = live.emu
    group, gid, users, (a, b, c, _) = await _game(live, 730, -3004)
    sup = await emu.migrate_group(group, -1003004)
    await live.settle()
    t = await live.store.load(gid)
    assert t.chat_id == sup.id and t.status is Status.PLAYING
    assert (await live.store.chat_game(sup.id, None)).id == gid
    assert await live.store.chat_game(group.id, None) is None
    await live.play_one(gid, users)
    assert emu.chat_messages(sup.id, from_bot=True)  # the board lives on in the supergroup
    await a.send(sup, "/board")
    await live.settle()
    assert emu.violations == []


async def test_group_upgraded_seen_only_through_400(live):
    emu = live.emu
    group, gid, users, (a, b, c, _) = await _game(live, 740, -3005)
    sup = await emu.migrate_group(group, -1003005, notify=False)
    await live.play_one(gid, users)
    await live.settle()
    assert any(
        e.get("parameters", {}).get("migrate_to_chat_id") == sup.id or "upgraded" in e["description"]
        for e in emu.errors
    )
    t = await live.store.load(gid)
    assert t.chat_id == sup.id
    assert (await live.store.chat_game(sup.id, None)).id == gid
    assert emu.chat_messages(sup.id, from_bot=True)
    assert emu.violations == []


def _migrate_updates(emu, group, sup):
    """The ids of the service-message updates of ``group``'s upgrade to ``sup``."""
    return [
        uid
        for uid, u in emu.updates.items()
        if (u.get("message") or {}).get("migrate_to_chat_id") == sup.id
        or (u.get("message") or {}).get("migrate_from_chat_id") == group.id
    ]


async def _finish_and_count(live, gid):
    """Play game ``gid`` to its end through the store; the bot shows the end and counts it."""
    await play_on(live.store, gid)
    live.app.bot_data["services"].syncer.request(gid)
    await live.settle()
    assert await live.store.redis.hget(live.store.keys.game(gid), "counted")


async def _group_data(live, group, notified):
    """Give ``group`` settings and a lobby notification (``notified`` sends /notify_me)."""
    await live.store.records.set_chat_settings(group.id, variant="classic", seating="shuffle")
    await live.store.records.set_chat_turn_timeout(group.id, 30)
    await notified.start_bot()
    await live.settle()  # (chats are processed concurrently: the /start first)
    await notified.send(group, "/notify_me")
    await live.settle()
    assert await live.store.redis.sismember(f"{live.store.keys.prefix}:notify:{group.id}", str(notified.id))


async def test_group_upgrade_carries_settings_leaderboard_and_notify_list(live):
    emu, store = live.emu, live.store
    group, gid, users, (a, b, c, d) = await _game(live, 820, -3013)
    await _finish_and_count(live, gid)
    board = await store.redis.hgetall(store.keys.board(group.id))
    gid2 = await live.open_game(group, [a, b, c], start=False)
    await _group_data(live, group, d)  # (a lobby that opens takes the notifications asked before)
    sup = await emu.migrate_group(group, -1003013)
    await live.settle()
    for delivery in range(2):  # then both service messages are delivered a second time
        assert await store.redis.hgetall(store.keys.board(sup.id)) == board
        assert (await store.records.chat_settings(sup.id)).variant == "classic"
        assert await store.records.chat_turn_timeout(sup.id, 90.0) == 30.0
        assert await store.redis.smembers(f"{store.keys.prefix}:notify:{sup.id}") == {str(d.id)}
        assert await store.redis.smembers(f"{store.keys.prefix}:user:{d.id}:notify") == {str(sup.id)}
        assert (await store.chat_game(sup.id, None)).id == gid2
        assert not await store.redis.exists(
            store.keys.chat_settings(group.id), f"{store.keys.prefix}:notify:{group.id}", store.keys.board(group.id)
        )
        for uid in _migrate_updates(emu, group, sup):
            emu.redeliver(uid)
        await live.settle()
    # the lobby moved along; the next one in the supergroup tells d and uses its settings
    await store.transact(gid2, lambda t: cancel(t, a.id, False))
    gid3 = await live.open_game(sup, [a, b, c], start=False)
    assert (await store.load(gid3)).variant == "classic"
    await emu.wait_for(lambda: any(sup.title in (m.text or "") for m in emu.chat_messages(d.id, from_bot=True)), 20)
    assert emu.violations == []


async def test_group_upgrade_seen_first_through_400_merges_into_the_supergroups_data(live):
    emu, store = live.emu, live.store
    group, gid, users, (a, b, c, d) = await _game(live, 830, -3014)
    await _finish_and_count(live, gid)
    board = await store.redis.hgetall(store.keys.board(group.id))
    gid2 = await live.open_game(group, [a, b, c])
    await _group_data(live, group, d)
    # the supergroup's id has data already (its admins were quick): it is kept, the rest added
    await store.records.set_chat_settings(-1003014, lang="en")
    await store.redis.hset(
        store.keys.board(-1003014), mapping={f"{a.id}:games": 2, f"{a.id}:wins": 2, f"{a.id}:name": "Anya"}
    )
    sup = await emu.migrate_group(group, -1003014, notify=False)
    await live.play_one(gid2, users)  # the board's edit meets the 400 naming the supergroup
    await live.settle()
    for delivery in range(2):  # the service messages come late, then once more
        assert (await store.load(gid2)).chat_id == sup.id
        assert await store.records.chat_settings(sup.id) == replace(
            await store.records.chat_settings(0), lang="en", variant="classic", seating="shuffle"
        )
        merged = await store.redis.hgetall(store.keys.board(sup.id))
        assert merged == {
            **board,
            f"{a.id}:games": str(int(board[f"{a.id}:games"]) + 2),
            f"{a.id}:wins": str(int(board[f"{a.id}:wins"]) + 2),
            f"{a.id}:name": "Anya",
        }
        assert await store.redis.smembers(f"{store.keys.prefix}:notify:{sup.id}") == {str(d.id)}
        await emu.announce_migration(group)
        await live.settle()
    assert emu.violations == []


async def test_forum_topics_each_hold_their_own_game(live):
    emu = live.emu
    a, b, c, d = _people(emu, 750)
    forum = emu.add_group(-1003006, "Форум", members=[a, b, c, d], admins=[a], is_forum=True)
    t1 = await emu.create_topic(forum, "Стол 1")
    t2 = await emu.create_topic(forum, "Стол 2")
    g1 = await live.open_game(forum, [a, b, c], thread_id=t1)
    g2 = await live.open_game(forum, [d, b, c], thread_id=t2, start=False)
    assert g1 != g2
    assert (await live.store.load(g1)).thread_id == t1 and (await live.store.load(g2)).thread_id == t2
    # one live game per topic
    await a.send(forum, "/start_game", thread_id=t1)
    await live.settle()
    assert (await live.store.chat_game(forum.id, t1)).id == g1
    # General: a third game, with no thread
    g3 = await live.open_game(forum, [c, a, d], start=False)
    assert (await live.store.load(g3)).thread_id is None
    await live.play_one(g1, {u.id: u for u in (a, b, c)})
    sent = [x for x in emu.calls_by("sendMessage", forum.id)]
    for call in sent:
        text = call["params"]["text"]
        tid = call["params"].get("message_thread_id")
        assert tid in (t1, t2, None)
    by_thread = {m.thread_id for m in emu.chat_messages(forum.id, from_bot=True)}
    assert {t1, t2, None} <= by_thread
    assert emu.violations == []


# -- 5. who may do what -------------------------------------------------------------------


async def test_permissions_and_anonymous_admins(live):
    emu = live.emu
    a, b, c, d = _people(emu, 760)
    e = emu.add_user(765, "Ева")
    group = emu.add_group(-1003007, "Клуб", members=[a, b, c, d, e], admins=[a], supergroup=True)
    for u in (a, b, c, d, e):
        await u.start_bot()
    # an anonymous admin opens the lobby: creator 0, never seated
    await emu.send_as_anonymous_admin(group, "/start_game")
    lobby = await emu.wait_message(group.id, lambda m: cb(m, "j:"), timeout=20)
    gid = cb(lobby, "j:")[0]["callback_data"][2:]
    t = await live.store.load(gid)
    assert t.creator == 0 and t.seats == ()
    for u in (b, c, d):
        await (await u.tap(lobby, cb(lobby, "j:")[0])).answer(15)
    # a plain member may not start (creator 0 matches nobody), an admin may
    ans = await (await b.tap(lobby, cb(lobby, "s:")[0])).answer(15)
    assert ans["text"] == answer("not_allowed", "ru")
    assert (await live.store.load(gid)).status is Status.LOBBY
    ans = await (await a.tap(lobby, cb(lobby, "s:")[0])).answer(15)
    assert ans["text"] == answer("started", "ru")
    await live.settle()
    t = await live.store.load(gid)
    assert all(s.user_id != 1087968824 for s in t.seats) and len(t.seats) == 3
    users = {u.id: u for u in (b, c, d)}
    cur = users[t.seats[t.state.current].user_id]
    nxt = users[t.seats[(t.state.current + 1) % 3].user_id]
    p = await live.pick(cur, gid)
    play = cb(p, "p:")[0]
    # the same button pressed by someone else: on the player's own panel, not for them; its data
    # sent from their own private chats, a non-player's and another player's are refused
    ans = await (await e.tap(p, play)).answer(15)
    assert ans["text"] == answer("not_for_you", "ru")
    ans = await (await e.tap(emu.last_message(e.id), play["callback_data"], strict=False)).answer(15)
    assert ans["text"] == answer("not_seated", "ru")
    ans = await (await nxt.tap(live.panel(nxt, gid), play["callback_data"], strict=False)).answer(15)
    assert ans["text"] == answer("not_your_turn", "ru")
    assert (await live.store.load(gid)).action_count == 0
    await (await cur.tap(p, play)).answer(15)
    await live.settle()
    # only the next player can doubt: the third player's forged challenge is refused
    t = await live.store.load(gid)
    third = users[t.seats[(t.state.current + 1) % 3].user_id]
    ans = await (await third.tap(live.panel(third, gid), f"c:{gid}:{t.action_count}", strict=False)).answer(15)
    assert ans["text"] == answer("not_your_turn", "ru")
    assert (await live.store.load(gid)).action_count == 1
    # the anonymous admin stops the game; a channel posting in the group may not
    # (a running game stops after a confirming tap; a plain member's tap is refused)
    await emu.send_as_anonymous_admin(group, "/stop_game")
    confirm = await emu.wait_message(group.id, lambda m: cb(m, "y:"), timeout=20)
    assert (await live.store.load(gid)).status is Status.PLAYING
    ans = await (await b.tap(confirm, cb(confirm, "y:")[0])).answer(15)
    assert ans["text"] == answer("not_allowed", "ru")
    await (await a.tap(confirm, cb(confirm, "y:")[0])).answer(15)
    await live.settle()
    assert (await live.store.load(gid)).status is Status.CANCELLED
    assert emu.violations == []


async def test_anonymous_admin_cannot_join_and_channel_is_no_admin(live):
    import datetime

    from telegram import Chat, Message, Update, User

    from tgbot.game.table import RefusedError
    from tgbot.handlers.identity import actor_id, seat_for

    grp = Chat(-5, "supergroup", title="G")
    chan = Chat(-1009, "channel", title="C")
    anon = User(1087968824, "Group", True, username="GroupAnonymousBot")
    now = datetime.datetime.now(datetime.UTC)
    upd = Update(1, message=Message(1, now, grp, from_user=anon, sender_chat=grp, text="/start_game"))
    assert actor_id(upd) == 0
    with pytest.raises(RefusedError):
        seat_for(upd)
    upd2 = Update(
        2, message=Message(2, now, grp, from_user=User(136817688, "Channel", True), sender_chat=chan, text="/stop_game")
    )
    from tgbot.handlers.identity import is_anonymous_admin

    assert actor_id(upd2) == 0 and not is_anonymous_admin(upd2)


# -- 6. the bot's own membership ----------------------------------------------------------


async def test_bot_removed_ends_games_cleanly(live):
    emu = live.emu
    a, b, c, d = _people(emu, 770)
    group = emu.add_group(-1003008, "Клуб", members=[a, b, c, d], admins=[a], supergroup=True)
    gid = await live.open_game(group, [a, b, c])
    await live.play_one(gid, {u.id: u for u in (a, b, c)})
    await emu.remove_bot(group, by=a)
    await live.settle()
    t = await live.store.load(gid)
    assert t.status is Status.CANCELLED and t.ended == "bot_removed" and t.deadline is None
    assert await live.store.chat_game(group.id, None) is None
    assert gid not in live.app.bot_data["services"].timers._handles  # an ended game keeps no timer
    for u in (a, b, c):
        assert any(
            "удалили" in (m.text or "") or "removed" in (m.text or "") for m in emu.chat_messages(u.id, from_bot=True)
        ), u
    # nothing keeps retrying the group
    live.app.bot_data["services"].syncer.request(gid)
    await live.settle()
    n = len(emu.calls_by(None, group.id))
    live.app.bot_data["services"].syncer.request(gid)
    await live.settle()
    assert len(emu.calls_by(None, group.id)) <= n + 1
    assert gid not in await live.store.records.live_games()
    # re-added: a fresh game can start
    emu.add_bot(group, by=a)
    g2 = await live.open_game(group, [a, b, c], start=False)
    assert g2 != gid
    assert emu.violations == []


# -- 8. the same person in two groups -----------------------------------------------------


async def test_two_games_share_a_player(live):
    emu = live.emu
    a, b, c, d, e = _people(emu, 780, ("Аня", "Борис", "Вера", "Глеб", "Даша"))
    g1 = emu.add_group(-3009, "Первый", members=[a, b, c], admins=[a])
    g2 = emu.add_group(-3010, "Второй", members=[a, d, e], admins=[d])
    gid1 = await live.open_game(g1, [a, b, c])
    gid2 = await live.open_game(g2, [d, a, e])
    p1, p2 = live.panel(a, gid1), live.panel(a, gid2)
    assert "Первый" in p1.text and "Второй" in p2.text
    assert all(gid1 in x["callback_data"] for x in cb(p1, ""))
    before2 = (await live.store.load(gid2)).version
    # play in game 1 until a has acted there at least once
    users1 = {u.id: u for u in (a, b, c)}
    for _ in range(3):
        await live.play_one(gid1, users1)
    t2 = await live.store.load(gid2)
    assert t2.version == before2 and t2.action_count == 0
    assert (await live.store.load(gid1)).action_count == 3
    assert {t.id for t in await live.store.user_games(a.id)} == {gid1, gid2}
    assert emu.violations == []


# -- 9. updates: re-delivered, and queued while the bot was down ---------------------------


async def test_updates_queued_while_down_apply_in_order_once(live):
    emu = live.emu
    group, gid, users, (a, b, c, _) = await _game(live, 790, -3011)
    t = await live.store.load(gid)
    cur = users[t.seats[t.state.current].user_id]
    p = await live.pick(cur, gid)
    play = cb(p, "p:")[0]
    await live.stop()
    # while down: the play, the same play again (double tap), then a re-delivery
    t1 = await cur.tap(p, play)
    t2 = await cur.tap(p, play)
    emu.redeliver(t1.update_id)
    await live.start()
    await live.settle()
    t = await live.store.load(gid)
    assert t.action_count == 1 and len((await live.store.records.record(gid))[1]) == 1
    a1 = emu.answers.get(t1.query_id) or {}
    a2 = emu.answers.get(t2.query_id) or {}
    assert a1.get("text") == answer("played", "ru")
    assert a2.get("text") in (answer("stale", "ru"), answer("not_your_turn", "ru"))
    assert emu.violations == []


async def test_bot_restricted_without_write_right_keeps_games_until_the_lobby_timeout(live):
    emu = live.emu
    group, gid, users, (a, b, c, _) = await _game(live, 800, -1003012, supergroup=True)
    await emu.restrict_bot(group, by=a)
    await live.settle()
    t = await live.store.load(gid)
    # a chat merely unwritable keeps its game: its announcements wait, and it is retired only
    # if the bot may not write for the lobby timeout (tests/tgbot/test_lost_rights.py)
    assert t.status is Status.PLAYING and t.group_access is GroupAccess.UNWRITABLE
    assert t.retire_at == t.unwritable_since + live.settings.lobby_timeout
    assert emu.violations == []


async def test_move_chat_is_idempotent_and_survives_a_crash_midway(store):
    from tests.tgbot.helpers import started

    table, deal = started(3)
    await store.create(table)
    assert await store.claim_chat(table.chat_id, None, table.id)
    # a crash right after the first step (new index written): both indexes name the game,
    # each reader checks the game's chat id, so it is reachable under the old id only
    await store.redis.set(store.keys.chat(-999, None), table.id)
    assert (await store.chat_game(table.chat_id, None)).id == table.id
    assert await store.chat_game(-999, None) is None
    assert await store.move_games(table.chat_id, -999) == [table.id]
    assert await store.move_games(table.chat_id, -999) == []
    assert (await store.chat_game(-999, None)).id == table.id
    assert await store.chat_game(table.chat_id, None) is None
    assert (await store.load(table.id)).chat_id == -999
