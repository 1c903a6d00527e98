"""Table transitions: lobby rules, act() refusals, a full AI game replayed from its log."""

from __future__ import annotations

import pytest

import core
from core.cards import Hand
from core.record import Record, replay
from tgbot.render.answers import answer
from tests.tgbot.helpers import ai_players, lobby, play_through, started
from tgbot.game.lobby import add_bot, cancel, join, leave, set_variant, start
from tgbot.game.play import act
from tgbot.game.table import RefusedError, Seat, Status, Table


def test_join_is_idempotent_and_caps_at_six():
    t = lobby(0)
    ch = join(t, Seat(1, "A"), 1000, 900)
    assert ch.reply == "joined" and len(ch.table.seats) == 1
    again = join(ch.table, Seat(1, "A"), 1001, 900)
    assert again.reply == "already_joined" and again.table is ch.table
    full = lobby(6)
    with pytest.raises(RefusedError) as e:
        join(full, Seat(99, "X"), 1000, 900)
    assert e.value.code == "lobby_full"


def test_join_and_leave_push_the_deadline():
    t = lobby(1, now=1000, timeout=900)
    t2 = join(t, Seat(50, "B"), 2000, 900).table
    assert t2.deadline == 2900
    t3 = leave(t2, 50, 2500, 900)
    assert t3.reply == "left" and t3.table.deadline == 3400 and t3.table.seat_of(50) is None
    assert leave(t3.table, 50, 2600, 900).reply == "not_seated"


@pytest.mark.parametrize("n", [0, 1, 2])
def test_start_needs_three(n):
    with pytest.raises(RefusedError) as e:
        start(lobby(n), 1, False, 1)
    assert e.value.code == "too_few"


@pytest.mark.parametrize("n", [3, 4, 5, 6])
def test_start_by_creator(n):
    ch = start(lobby(n), 1, False, 7)
    assert ch.table.status is Status.PLAYING and ch.table.deadline is None
    assert ch.deal is not None and len(ch.deal) == n
    assert sum(len(h) for h in ch.deal) == 52
    assert len(ch.table.state.hand_sizes) == n


def test_start_by_non_creator_refused_unless_admin_or_auto():
    t = lobby(4)
    with pytest.raises(RefusedError) as e:
        start(t, 2, False, 1)
    assert e.value.code == "not_allowed"
    assert start(t, 2, True, 1).table.status is Status.PLAYING
    assert start(t, None, False, 1).table.status is Status.PLAYING  # the table itself (6th join)


def test_variant_and_cancel_permissions():
    t = lobby(3)
    with pytest.raises(RefusedError) as e:
        set_variant(t, 2, "classic", False, 1000, 900)
    assert e.value.code == "not_allowed"
    assert set_variant(t, 2, "classic", True, 1000, 900).table.variant == "classic"
    with pytest.raises(core.UnknownVariant):
        set_variant(t, 1, "nope", False, 1000, 900)
    with pytest.raises(RefusedError) as e:
        cancel(t, 3, False)
    assert e.value.code == "not_allowed"
    done = cancel(t, 1, False)
    assert done.table.status is Status.CANCELLED and done.table.ended == "stopped" and not done.table.live
    assert done.outbox == []  # a lobby closes without an announcement
    with pytest.raises(RefusedError) as e:
        cancel(done.table, 1, False)
    assert e.value.code == "not_running"


def test_lobby_transitions_refused_once_started():
    t, _ = started(4)
    for fn in (
        lambda: join(t, Seat(77, "Z"), 0, 900),
        lambda: add_bot(t, ("B",), 0, 900),
        lambda: start(t, 1, False, 1),
        lambda: set_variant(t, 1, "classic", False, 0, 900),
    ):
        with pytest.raises(RefusedError) as e:
            fn()
        assert e.value.code == "not_in_lobby"
    ch = cancel(t, None, False)
    assert ch.outbox and ch.outbox[0]["kind"] == "cancelled" and ch.table.outbox_seq == 1


def _legal_play(t):
    seat = t.state.current
    v = core.view(t.state, seat)
    r = v.hand.ranks()[0]
    return seat, core.Play((r,), v.required_claim or r)


def test_act_refuses_stale_turn_non_seated_and_maps_engine_errors():
    t, _ = started(4)
    seat, play = _legal_play(t)
    uid = t.seats[seat].user_id
    with pytest.raises(RefusedError) as e:
        act(t, 999, t.action_count, play)
    assert e.value.code == "not_seated"
    with pytest.raises(RefusedError) as e:
        act(t, uid, t.action_count + 1, play)
    assert e.value.code == "stale"
    ok = act(t, uid, t.action_count, play)
    assert ok.table.action_count == t.action_count + 1 and ok.reply == "played" and len(ok.log) == 1
    # the same tap again (old turn) is stale
    with pytest.raises(RefusedError) as e:
        act(ok.table, uid, t.action_count, play)
    assert e.value.code == "stale"
    # engine refusals come back with their codes
    other = t.seats[(seat + 1) % 4].user_id
    with pytest.raises(RefusedError) as e:
        act(t, other, t.action_count, core.Play(play.cards, play.claim))
    assert e.value.code == "not_your_turn"
    with pytest.raises(RefusedError) as e:
        act(t, uid, t.action_count, core.Challenge())  # nothing on the pile yet
    assert e.value.code == "challenge_not_allowed"
    with pytest.raises(RefusedError) as e:
        act(t, uid, t.action_count, core.Believe())
    assert e.value.code == "believe_not_allowed"
    hand = core.view(t.state, seat).hand
    missing = next(r for r in core.RANKS if hand[r] == 0) if any(hand[r] == 0 for r in core.RANKS) else None
    if missing is not None:
        with pytest.raises(RefusedError) as e:
            act(t, uid, t.action_count, core.Play((missing,), missing))
        assert e.value.code == "cards_not_in_hand"
    for code in (
        "not_seated",
        "stale",
        "not_your_turn",
        "challenge_not_allowed",
        "believe_not_allowed",
        "cards_not_in_hand",
    ):
        assert answer(code, "ru") != answer("bad_button", "ru"), code


def test_act_on_lobby_and_finished_tables():
    with pytest.raises(RefusedError) as e:
        act(lobby(3), 1, 0, core.Believe())
    assert e.value.code == "not_running"


@pytest.mark.parametrize("n,variant,seed", [(3, "russian", 1), (4, "classic", 2), (6, "russian", 3)])
def test_full_ai_game_replays_from_log(n, variant, seed):
    table, deal = started(n, seed=seed, variant=variant)
    log: list[dict] = []
    outbox: list[dict] = []
    last = table
    for _, ch in play_through(table, ai_players(n, seed)):
        log += ch.log
        outbox += ch.outbox
        last = ch.table
    assert last.status is Status.OVER and last.ended == "finished" and not last.live
    assert last.state.result is not None
    assert last.action_count == len(log)
    # a final act is refused as game_over
    with pytest.raises(RefusedError) as e:
        act(last, last.seats[0].user_id, last.action_count, core.Believe())
    assert e.value.code == "game_over"
    # outbox: sequence numbers 1..k, the last one is the result
    assert [o["seq"] for o in outbox] == list(range(1, len(outbox) + 1)) == list(range(1, last.outbox_seq + 1))
    assert outbox[-1]["kind"] == "game_ended" and outbox[-1]["places"] == list(last.state.result.places)
    # the log, through the record format, replays to the same result
    rec = Record.from_dict(
        {
            "format": "cheat-record/1",
            "variant": variant,
            "hands": [[str(r) for r in Hand.from_str(h).ranks()] for h in deal],
            "actions": log,
        }
    )
    out = replay(rec)
    assert out.error is None and out.applied == len(log)
    assert out.state == last.state
    assert out.summary()["places"] == list(last.state.result.places)


def test_table_json_round_trip():
    t, _ = started(5)
    back = Table.from_json(t.to_json())
    assert back == t
    lb = lobby(2)
    assert Table.from_json(lb.to_json()) == lb
