"""Statistics (counted once from the record), leaderboards, notifications, forgetting a user;
the model's kick, rematch and shuffled seating."""

from __future__ import annotations

import asyncio
from dataclasses import replace

import pytest
from redis.exceptions import ConnectionError as RedisConnectionError

import core
from core.stats import game_stats
from tgbot.storage import chatmove
from tgbot.game import play
from tgbot.game.lobby import add_bot, cancel, kick, rematch, start
from tgbot.game.table import Player, RefusedError, Seat, Status, with_seat
from tgbot.storage import stats
from tests.tgbot.helpers import ai_players, lobby


async def _finished(store, gid: str = "F1", n: int = 3, seed: int = 3, bots: int = 0):
    """A game played to its end through the store (AI players for every seat)."""
    t = lobby(n, gid=gid)
    for _ in range(bots):
        t = add_bot(t, ("Bot Vasya",), 1000.0, 900.0).table
    await store.create(t)
    await store.transact(gid, lambda t: start(t, 1, False, seed))
    players = ai_players(n + bots, seed)
    for _ in range(5000):
        t = await store.load(gid)
        if t.status is not Status.PLAYING:
            return t
        seat = t.state.current
        action = players[seat].act(core.view(t.state, seat))
        if not t.seats[seat].human:
            t2 = replace(t, seats=with_seat(t.seats, seat, player=Player.PERSON, user_id=-seat - 50))
            ch = play.act(t2, t2.seats[seat].user_id, t.action_count, action)
            await store.transact(gid, lambda cur: replace(ch, table=replace(ch.table, seats=cur.seats)))
        else:
            await store.transact(gid, lambda cur: play.act(cur, cur.seats[seat].user_id, cur.action_count, action))
    raise AssertionError("no end")


async def test_a_finished_game_counts_once_from_its_record(store):
    t = await _finished(store)
    assert t.status is Status.OVER
    deal, log = await store.records.record(t.id)
    want = game_stats(stats.record_of_game(t, deal, log))
    assert await stats.count_game(store.records, t) is True
    assert await stats.count_game(store.records, t) is False  # a restart or a second process
    for i, seat in enumerate(t.seats):
        tot, places = await stats.totals(store.records, seat.user_id)
        assert tot.games == 1 and tot.wins == int(want[i].won) and tot.place_sum == want[i].place
        assert (tot.bluffs, tot.bluffs_caught, tot.challenges, tot.piles_taken) == (
            want[i].bluffs,
            want[i].bluffs_caught,
            want[i].challenges,
            want[i].piles_taken,
        )
        assert places == {want[i].place: 1}
    wins = [(await stats.totals(store.records, s.user_id))[0].wins for s in t.seats]
    assert sum(wins) == (0 if t.state.result.draw else 1)


@pytest.mark.parametrize("ran", [False, True])
async def test_a_count_cut_short_by_a_crash_adds_each_figure_once_when_retried(store, monkeypatch, ran):
    # The process dies just before or just after the count's one script, before the game is
    # marked counted. The game stays in the live set, so a restart counts it again: every figure
    # must end up added exactly once.
    t = await _finished(store, gid=f"X{ran}")
    deal, log = await store.records.record(t.id)
    want = game_stats(stats.record_of_game(t, deal, log))
    real = store.redis.eval

    async def dying(*args):
        if ran:
            await real(*args)
        raise RedisConnectionError("the process died here")

    monkeypatch.setattr(store.redis, "eval", dying)
    with pytest.raises(RedisConnectionError):
        await stats.count_game(store.records, t)
    monkeypatch.undo()
    assert not await store.redis.hget(store.keys.game(t.id), "counted")
    assert await stats.count_game(store.records, t) is True  # the retry finishes it
    assert await stats.count_game(store.records, t) is False
    board = await store.redis.hgetall(store.keys.board(t.chat_id))
    for i, seat in enumerate(t.seats):
        tot, places = await stats.totals(store.records, seat.user_id)
        assert (tot.games, tot.wins, tot.place_sum, tot.bluffs) == (1, int(want[i].won), want[i].place, want[i].bluffs)
        assert places == {want[i].place: 1}
        assert (board[f"{seat.user_id}:games"], board[f"{seat.user_id}:wins"]) == ("1", str(int(want[i].won)))


async def test_two_processes_counting_at_once_add_each_figure_once(store):
    t = await _finished(store, gid="P2")
    done = await asyncio.gather(*(stats.count_game(store.records, t) for _ in range(3)))
    assert sorted(done) == [False, False, True]
    assert [(await stats.totals(store.records, s.user_id))[0].games for s in t.seats] == [1, 1, 1]
    board = await store.redis.hgetall(store.keys.board(t.chat_id))
    assert [board[f"{s.user_id}:games"] for s in t.seats] == ["1", "1", "1"]


async def test_bots_and_games_without_result_do_not_count(store):
    t = await _finished(store, gid="B1", bots=1)
    assert await stats.count_game(store.records, t)
    assert not await store.redis.exists(store.keys.totals(-1), store.keys.boards_of(-1))
    lb = lobby(3, gid="S1")
    await store.create(lb)
    await store.transact("S1", lambda t: start(t, 1, False, 1))
    done = await store.transact("S1", lambda t: cancel(t, 1, False))
    assert await stats.count_game(store.records, done.change.table) is False
    assert not await store.redis.hget(store.keys.game("S1"), "counted")


async def test_top_lists_players_with_three_games_by_wins(store):
    for k in range(3):
        await stats.count_game(store.records, await _finished(store, gid=f"T{k}", seed=10 + k))
    rows = await stats.top(store.records, -100)
    assert {r[0] for r in rows} == {1, 2, 3} and all(r[3] == 3 for r in rows)
    assert [r[2] for r in rows] == sorted((r[2] for r in rows), reverse=True)
    await stats.count_game(store.records, await _finished(store, gid="T9", n=4, seed=4))
    assert 4 not in {r[0] for r in await stats.top(store.records, -100)}  # one game only


async def test_forget_me_deletes_everything_about_the_user(store):
    t = await _finished(store)
    await stats.count_game(store.records, t)
    await store.records.set_dm(2, True)
    await store.records.want_notify(-100, 2)
    await stats.forget_user(store.records, 2)
    assert (await stats.totals(store.records, 2))[0].games == 0
    assert not [k for k in await store.redis.hkeys(store.keys.board(-100)) if k.startswith("2:")]
    assert not await store.redis.exists(store.keys.totals(2), store.keys.boards_of(2))
    assert not await store.records.can_dm(2) and not await store.redis.sismember("cheat:notify:-100", "2")
    assert (await stats.totals(store.records, 1))[0].games == 1


async def test_notify_is_taken_once(store):
    assert await store.records.want_notify(-5, 7) and not await store.records.want_notify(-5, 7)
    await store.records.want_notify(-5, 8)
    assert await store.records.take_notify(-5) == [7, 8]
    assert await store.records.take_notify(-5) == []


def test_shuffled_seating_follows_the_seed():
    t = lobby(5)
    a = start(t, 1, False, 42, shuffle=True).table
    b = start(t, 1, False, 42, shuffle=True).table
    plain = start(t, 1, False, 42).table
    assert [s.user_id for s in a.seats] == [s.user_id for s in b.seats]
    assert sorted(s.user_id for s in a.seats) == [1, 2, 3, 4, 5]
    assert [s.user_id for s in plain.seats] == [1, 2, 3, 4, 5]
    assert any(
        [s.user_id for s in start(t, 1, False, k, shuffle=True).table.seats] != [1, 2, 3, 4, 5] for k in range(5)
    )


def test_kick_hands_the_seat_to_the_ai_and_needs_a_manager():
    t = start(lobby(3), 1, False, 1).table
    with pytest.raises(RefusedError):
        kick(t, 3, 2, False, 1.0, 900.0)
    ch = kick(t, 3, 1, False, 1.0, 900.0)
    assert ch.table.seats[2].player is Player.LEFT and ch.outbox[0]["kind"] == "left"
    assert kick(t, 3, 5, True, 1.0, 900.0).table.seats[2].player is Player.LEFT  # a chat admin


def test_rematch_seats_reachable_people_and_bots():
    t = add_bot(lobby(3), ("Bot Vasya",), 1.0, 900.0).table
    over = replace(start(t, 1, False, 1).table, status=Status.OVER, ended="finished")
    new = rematch(over, "N1", 2, 5.0, 900.0, reachable={1, 3}, presser_lang=None)
    assert new.status is Status.LOBBY and [s.user_id for s in new.seats] == [1, 3, -1] and new.creator == 2
    with pytest.raises(RefusedError):
        rematch(t, "N2", 2, 5.0, 900.0, reachable=set(), presser_lang=None)


def test_rematch_gives_the_presser_the_language_a_join_would_store_today():
    # one whose Telegram switched to French since the last game reads the new one in French
    seats = tuple(replace(seat, lang="ru") for seat in lobby(3).seats)
    over = replace(start(replace(lobby(3), seats=seats), 1, False, 1).table, status=Status.OVER, ended="finished")
    new = rematch(over, "N1", 2, 5.0, 900.0, reachable={1, 2, 3}, presser_lang="fr")
    assert [(s.user_id, s.lang) for s in new.seats] == [(1, "ru"), (2, "fr"), (3, "ru")]


# -- a group upgraded to a supergroup keeps its data (issue 16 item 9) ------------------------

OLD, NEW = -100, -1000100  # the helpers' group, and the supergroup it becomes


async def _group_with_data(store):
    """Group OLD: a counted game (people 1-3), every setting, two lobby notifications (7, 8).
    Supergroup NEW has data already: its language, a lobby notification (9), and a board row of
    person 2 (one game won, under a newer name). Returns (the game, OLD's board before)."""
    t = await _finished(store)
    assert await stats.count_game(store.records, t)
    await store.records.set_chat_settings(OLD, lang="en", variant="classic", seating="shuffle")
    await store.records.set_chat_turn_timeout(OLD, 30)
    await store.records.set_chat_settings(NEW, lang="fr")
    for user in (7, 8):
        await store.records.want_notify(OLD, user)
    await store.records.want_notify(NEW, 9)
    await store.redis.hset(store.keys.board(NEW), mapping={"2:games": 1, "2:wins": 1, "2:name": "Боря"})
    await store.redis.sadd(store.keys.boards_of(2), NEW)
    return t, await store.redis.hgetall(store.keys.board(OLD))


async def _assert_moved_once(store, t, before):
    """Everything of OLD is NEW's, added once, NEW's own data kept; nothing is left under OLD."""
    assert await store.records.chat_settings(NEW) == replace(
        await store.records.chat_settings(-1), lang="fr", variant="classic", seating="shuffle"
    )
    assert await store.records.chat_turn_timeout(NEW, 90.0) == 30.0
    board = await store.redis.hgetall(store.keys.board(NEW))
    for seat in t.seats:
        uid, mine = seat.user_id, int(seat.user_id == 2)
        assert int(board[f"{uid}:games"]) == int(before[f"{uid}:games"]) + mine
        assert int(board[f"{uid}:wins"]) == int(before[f"{uid}:wins"]) + mine
        assert board[f"{uid}:name"] == ("Боря" if mine else before[f"{uid}:name"])
        assert await store.redis.smembers(store.keys.boards_of(uid)) == {str(NEW)}
    assert await store.redis.zscore(store.keys.counted(), t.id) is not None
    assert await store.redis.smembers(f"cheat:notify:{NEW}") == {"7", "8", "9"}
    for user in (7, 8):
        assert await store.redis.smembers(f"cheat:user:{user}:notify") == {str(NEW)}
    left = [
        store.keys.chat_settings(OLD),
        f"cheat:notify:{OLD}",
        store.keys.board(OLD),
    ]
    assert await store.redis.exists(*left) == 0
    assert await store.records.chat_moved_to(OLD) == NEW


async def test_an_upgrade_carries_settings_leaderboard_and_notifications_once(store):
    t, before = await _group_with_data(store)
    await chatmove.move_chat(store, OLD, NEW)
    await _assert_moved_once(store, t, before)
    # the second service message, a re-delivery, the 400 seen later: nothing changes
    await chatmove.move_chat(store, OLD, NEW)
    await asyncio.gather(*(chatmove.move_chat(store, OLD, NEW) for _ in range(3)))
    await _assert_moved_once(store, t, before)
    # the game counted before cannot count again on the new board; /forget_me finds the moves
    assert await stats.count_game(store.records, t) is False
    await stats.forget_user(store.records, 2)
    await stats.forget_user(store.records, 7)
    assert not [k for k in await store.redis.hkeys(store.keys.board(NEW)) if k.startswith("2:")]
    assert await store.redis.smembers(f"cheat:notify:{NEW}") == {"8", "9"}


async def test_two_runs_at_once_add_the_board_once(store):
    t, before = await _group_with_data(store)
    await asyncio.gather(*(chatmove.move_chat(store, OLD, NEW) for _ in range(4)))
    await _assert_moved_once(store, t, before)


async def test_an_upgrade_cut_short_by_a_crash_adds_the_board_once_when_run_again(store, monkeypatch):
    # the process dies right after the board's script ran: the next run (a re-delivered service
    # message) finishes the rest and adds nothing twice
    scripts = 1
    t, before = await _group_with_data(store)
    real, ran = store.redis.eval, []

    async def dying(*args):
        got = await real(*args)
        ran.append(args[0])
        if len(ran) == scripts:
            raise RedisConnectionError("killed")
        return got

    monkeypatch.setattr(store.redis, "eval", dying)
    with pytest.raises(RedisConnectionError):
        await chatmove.move_chat(store, OLD, NEW)
    monkeypatch.undo()
    await chatmove.move_chat(store, OLD, NEW)
    await _assert_moved_once(store, t, before)


async def test_settings_cut_short_are_finished_and_never_overwrite_the_new_chat(store):
    await store.records.set_chat_settings(OLD, lang="en", variant="classic")
    await store.redis.hsetnx(store.keys.chat_settings(NEW), "language", "en")  # copied, then the crash
    await store.records.set_chat_settings(NEW, lang="it")  # an admin of the supergroup chose meanwhile
    await chatmove.move_chat(store, OLD, NEW)
    assert await store.records.chat_settings(NEW) == replace(
        await store.records.chat_settings(-1), lang="it", variant="classic"
    )
    assert not await store.redis.exists(store.keys.chat_settings(OLD))


async def test_a_game_of_the_old_group_counts_on_the_new_board(store):
    t = await _finished(store, gid="L1")  # ended before the upgrade, its count came later
    await chatmove.move_chat(store, OLD, NEW)
    assert await stats.count_game(store.records, t)
    assert not await store.redis.exists(store.keys.board(OLD))
    board = await store.redis.hgetall(store.keys.board(NEW))
    assert {int(k.partition(":")[0]) for k in board} == {s.user_id for s in t.seats}
    assert await store.redis.smembers(store.keys.boards_of(1)) == {str(NEW)}
