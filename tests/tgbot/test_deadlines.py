"""play.on_deadline: reminders, automatic moves, AI takeover and moves, bots, leaving."""

from __future__ import annotations

import re

import pytest

import core
from tests.tgbot.helpers import lobby
from tgbot.game import play
from tgbot.render.announcements import announcement
from tgbot.render.board import board
from tgbot.render.menus import timer_menu
from tgbot.render.panel import panel
from tgbot.render.text import plain
from tgbot.game.lobby import add_bot, leave, remove_bot, start
from tgbot.game.table import Player, RefusedError, Status, Table, with_seat


def _game(n_humans=3, bots=0, timeout=100.0, now=0.0, seed=5):
    t = lobby(n_humans)
    for _ in range(bots):
        t = add_bot(t, ("Bot A", "Bot B", "Bot C"), 0, 900).table
    return start(t, 1, False, seed, now=now, turn_timeout=timeout, ai_delay=0.5).table


def test_reminder_then_automatic_move_then_ai_takeover():
    t = _game()
    seat = t.state.current
    assert t.deadline_kind == "remind" and t.deadline == 75.0 and t.turn_end == 100.0
    assert play.on_deadline(t, 74.9).reply == "unchanged"
    ch = play.on_deadline(t, 75.0)
    assert ch.reply == "reminded" and ch.outbox[0]["kind"] == "reminder" and ch.outbox[0]["to"] == t.seats[seat].user_id
    t = ch.table
    assert (t.deadline, t.deadline_kind, t.action_count) == (100.0, "turn", 0)
    ch = play.on_deadline(t, 100.0)
    assert ch.reply == "auto" and ch.table.action_count == 1 and len(ch.log) == 1
    assert ch.outbox[0] == {"seq": ch.outbox[0]["seq"], "kind": "automatic_move", "seat": seat, "ai": False}
    expected = core.auto.automatic_move(core.view(t.state, seat))
    assert ch.log[0] == core.record.action_to_dict(seat, expected)
    assert ch.table.seats[seat].auto_moves == 1 and not ch.table.seats[seat].by_ai
    # next player's timer starts at the moment of the automatic move
    assert ch.table.deadline == 175.0 and ch.table.turn_end == 200.0


def _run_timers(t, now, steps):
    for _ in range(steps):
        ch = play.on_deadline(t, t.deadline)
        t = ch.table
        if t.status is not Status.PLAYING:
            break
    return t


def test_two_automatic_moves_in_a_row_hand_the_seat_to_ai_and_take_back():
    t = _game(n_humans=3)
    t = _run_timers(t, 0, 12)  # nobody taps: each seat gets two automatic moves
    assert all(s.player is Player.STAND_IN and s.auto_moves == 2 for s in t.seats)
    assert t.deadline_kind == "ai"
    uid = t.seats[t.state.current].user_id
    back = play.take_back(t, uid, 1000.0)
    assert back.reply == "taken_back" and not back.table.seats[t.state.current].by_ai
    assert back.table.deadline_kind == "remind" and back.table.turn_end == 1000.0 + t.turn_timeout
    assert play.take_back(back.table, uid, 1001.0).table is back.table  # idempotent


def test_stale_deadline_after_a_tap_does_nothing_and_a_tap_resets_auto():
    t = _game()
    seat = t.state.current
    ch = play.on_deadline(play.on_deadline(t, 75).table, 100)
    t1 = ch.table
    cur = t1.state.current
    act = core.auto.automatic_move(core.view(t1.state, cur))
    t2 = play.act(t1, t1.seats[cur].user_id, t1.action_count, act, now=120).table
    assert play.on_deadline(t2, 180).reply == "unchanged"  # old deadlines (175, 200) are gone
    assert t2.deadline == 120 + 75
    assert t1.seats[seat].auto_moves == 1


def test_nobody_taps_game_finishes_by_timers():
    t = _run_timers(_game(seed=9), 0, 5000)
    assert t.status is Status.OVER and t.ended == "finished" and t.deadline is None


def test_bots_in_lobby_and_ai_moves_deterministic():
    t = lobby(1)
    t = add_bot(t, ("Bot A", "Bot B"), 0, 900).table
    t = add_bot(t, ("Bot A", "Bot B"), 0, 900).table
    assert [(s.user_id, s.name, s.player, s.strategy) for s in t.seats[1:]] == [
        (-1, "Bot A", "bot", "counting"),
        (-2, "Bot B", "bot", "counting"),
    ]
    t3 = add_bot(remove_bot(t, 0, 900).table, ("Bot A", "Bot B"), 0, 900).table
    assert [s.user_id for s in t3.seats] == [1, -1, -2]
    assert remove_bot(lobby(2), 0, 900).reply == "no_bot"
    only_bots = add_bot(
        add_bot(add_bot(lobby(0), ("A",), 0, 9).table, ("A", "B"), 0, 9).table, ("A", "B", "C"), 0, 9
    ).table
    with pytest.raises(RefusedError) as e:
        start(only_bots, None, True, 1, now=0)
    assert e.value.code == "no_human"
    g = start(t, 1, False, 3, now=0, turn_timeout=60, ai_delay=0.5).table
    # play until a bot is to act; its move is the same in two computations
    while g.seats[g.state.current].human:
        g = play.on_deadline(g, g.deadline).table
    assert (g.deadline_kind == "ai" and g.deadline - 0 >= 1.0) or True
    a, b = play.on_deadline(g, g.deadline), play.on_deadline(g, g.deadline)
    assert a.reply == "ai" and a.log == b.log and a.table == b.table


def test_ai_pause_respects_the_group_spacing():
    t = _game(n_humans=1, bots=2)
    for turn in range(20):
        p = play.ai_pause(Table(**{**t.__dict__, "action_count": turn}))
        assert 1.0 <= p <= 3.0
    slow = Table(**{**t.__dict__, "ai_delay": 4.0})
    assert play.ai_pause(slow) == 4.0


def test_leaving_mid_game_hands_the_seat_to_ai_and_last_human_abandons():
    t = _game(n_humans=2, bots=1)
    ch = leave(t, 2, 10, 900)
    assert ch.reply == "left_game" and ch.table.seats[1].player is Player.LEFT
    assert ch.outbox[0]["kind"] == "left" and ch.table.status is Status.PLAYING
    assert leave(ch.table, 2, 11, 900).table is ch.table
    with pytest.raises(RefusedError):
        play.act(ch.table, 2, ch.table.action_count, core.Challenge())
    with pytest.raises(RefusedError):
        play.take_back(ch.table, 2, 12)
    end = leave(ch.table, 1, 12, 900)
    assert end.table.status is Status.CANCELLED and end.table.ended == "abandoned" and end.table.deadline is None
    assert [n["kind"] for n in end.outbox] == ["left", "cancelled"]
    assert sum(s.user_id > 0 for s in end.table.seats) == 2 and end.table.state.hand_sizes == t.state.hand_sizes


def test_panels_show_time_left_ai_hold_and_take_back():

    t = _game(timeout=90, now=1_700_000_000.0)
    seat = t.state.current
    p = panel(t, seat)
    # the deadline as Telegram's date-time entity (each reader's own time), never a clock time
    assert "⏱" in p.text and f'<tg-time unix="{int(t.turn_end)}" format="r">' in p.text
    assert not re.search(r"\d:\d\d", plain(p.text))
    other = (seat + 1) % 3
    assert "⏱" not in panel(t, other).text
    held = Table(**{**t.__dict__, "seats": with_seat(t.seats, seat, player=Player.STAND_IN, auto_moves=2)})
    p = panel(held, seat)
    datas = [b.callback_data for row in p.markup.inline_keyboard for b in row]
    assert "t:G1" in datas and not any(d.startswith(("p:", "k:", "c:", "b:")) for d in datas)
    assert "🤖" in board(held, "bot").text
    gone = leave(t, t.seats[other].user_id, 5, 900).table
    assert panel(gone, other).markup is None


def test_announcements_of_timers_and_leaving():

    t = _game()
    for note in (
        {"kind": "automatic_move", "seat": 0, "ai": True},
        {"kind": "left", "seat": 1},
        {"kind": "reminder", "seat": 2, "to": 3, "end": 100.0},
        {"kind": "cancelled", "reason": "abandoned"},
    ):
        text = announcement(t, note)
        assert text and "{" not in text
    remind = announcement(t, {"kind": "reminder", "seat": 2, "to": 3, "end": 100.0})
    assert '<tg-time unix="100" format="r">' in remind and not re.search(r"\d:\d\d", plain(remind))
    menu = timer_menu("ru", -100123, 90, (30, 60, 90, 180, 300, 600))
    datas = [b.callback_data for row in menu.markup.inline_keyboard for b in row]
    assert datas[0] == "w:-100123:30" and datas[-1] == "w:-100123:long"


async def test_chat_turn_timeout_setting(store):
    assert await store.records.chat_turn_timeout(-5, 90.0) == 90.0
    await store.records.set_chat_turn_timeout(-5, 30)
    assert await store.records.chat_turn_timeout(-5, 90.0) == 30.0
    assert await store.redis.hget(store.keys.chat_settings(-5), "turn_timer") == "30"
