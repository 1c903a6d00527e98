"""The players of issue 30 (skeptic, tuned, search), decision determinism, and the tools:
selfplay --jobs/--records, core.replay --ai, core.tournament."""

from __future__ import annotations

import json
import random

import pytest

from core import Challenge, Hand, Play, apply, view
from core.actions import to_str
from core.ai import STRATEGIES, CountingPlayer, SkepticPlayer, TunedPlayer, decision_rng, make_player
from core.ai_model import HONEST_PRIOR
from core.cards import Rank
from core.events import Believed, CardsPlayed, ChallengeResolved, CheckStarted, Event, RoundStarted
from core.legal import legal_actions
from core.record import Record, action_to_dict
from core.replay import confirm_ai, main as replay_main
from core.rules import variant as lookup_variant
from core.search import OpponentModel, SearchPlayer, win_chance
from core.selfplay import play_game, run
from core.state import GameState, PilePlay, deal, from_deal
from core.tournament import main as tournament_main
from core.tuned import TUNED


def test_skeptic_is_counting_with_the_issue_constants():
    assert (SkepticPlayer.OPENER_TRUST, SkepticPlayer.MULTI_RATIO) == (0.75, (1.5, 2.0, 3.0))
    assert (SkepticPlayer.CHALLENGE_COST, SkepticPlayer.FLOOR) == (0.3, 0.05)
    assert SkepticPlayer.WIN_VALUE == CountingPlayer.WIN_VALUE and issubclass(SkepticPlayer, CountingPlayer)


def test_tuned_reads_its_variant_constants(monkeypatch):
    monkeypatch.setitem(TUNED, "classic", {"CHALLENGE_COST": 9.0, "MULTI_RATIO": [1.0, 1.0, 1.0]})
    state = from_deal("classic", deal(4, random.Random(1)))
    player = TunedPlayer(0, random.Random(0))
    player.act(view(state, 0))
    assert player.CHALLENGE_COST == 9.0 and player.MULTI_RATIO == (1.0, 1.0, 1.0)
    assert CountingPlayer.CHALLENGE_COST == 1.0  # the class constants are untouched


def test_every_strategy_is_a_player_drawing_only_from_its_stream():
    state = from_deal("russian", deal(4, random.Random(8)))
    for name in STRATEGIES:
        a = make_player(name, 0, decision_rng(5, 0, 0)).act(view(state, 0), [])
        b = make_player(name, 0, decision_rng(5, 0, 0)).act(view(state, 0), [])
        assert a == b


def test_opponent_model_follows_what_each_seat_did():
    # seat 1 challenges every chance; seat 2 never challenges, bluffs and is caught
    history = []
    for _ in range(10):
        history += [
            ChallengeResolved(1, 0, 7, (7,), True, 1, 1),
            RoundStarted(0),
            CardsPlayed(0, 1, 7, 1),
            CardsPlayed(2, 1, 7, 2),  # seat 2 plays on where it could challenge
            ChallengeResolved(3, 2, 7, (5,), False, 2, 1),
            RoundStarted(3),
        ]
    model = OpponentModel.from_history("russian", 4, history)
    fresh = OpponentModel.from_history("russian", 4, [])
    assert fresh.challenge_rate(1) == 1.0 and fresh.truth_odds(0) == 1.0  # as counting
    assert model.challenge_rate(1) > 1.5 and model.challenge_rate(2) < 1.0
    assert model.truth_odds(2) < 1.0 < model.truth_odds(0)


def test_win_chance_prefers_fewer_cards():
    state = from_deal("russian", deal(4, random.Random(2)))
    assert abs(sum(win_chance(state, s) for s in range(4)) - 1) < 1e-9
    card = Hand.from_ranks(state.hands[0].ranks()[:1])
    lighter = from_deal("russian", (state.hands[0] - card, state.hands[1] + card, *state.hands[2:]))
    assert win_chance(lighter, 0) > win_chance(state, 0) and win_chance(lighter, 1) < win_chance(state, 1)


def test_search_challenges_a_proven_lie():
    # Seat 1 holds two sevens; seat 0 claims three sevens: impossible.
    hands = (
        Hand.from_str("2345689TJQKAA"),
        Hand.from_str("77AAA2345689Q"),
        Hand.from_str("7" + "T" * 3 + "J" * 3 + "Q" * 3 + "K2"),
        Hand.from_str("7JQK23456899T"),
    )
    state, _ = apply(from_deal("russian", hands), 0, Play.of("2", "3", "4", claim="7"))
    assert SearchPlayer(1, random.Random(0)).act(view(state, 1), []) == Challenge()


@pytest.mark.parametrize("variant", ["russian", "classic"])
def test_records_replay_and_confirm_every_ai_decision(tmp_path, variant, capsys):
    summary = run(4, 4, ["search", "counting", "skeptic", "tuned"], 21, variant, jobs=1, records=tmp_path)
    files = sorted(tmp_path.glob("game-*.json"))
    assert len(files) == summary["games"] == 4
    for f in files:
        record = Record.from_json(f.read_text())
        result = confirm_ai(record)
        assert result["mismatch"] is None and result["checked"] == len(record.actions)
    # a changed decision is found and reported: action 5 replaced by another legal one
    record = Record.from_json(files[0].read_text())
    state = record.initial_state()
    for seat, action in record.actions[:5]:
        state, _ = apply(state, seat, action)
    seat, recorded = record.actions[5]
    other = next(a for a in legal_actions(view(state, seat)) if a != recorded)
    doc = record.to_dict()
    doc["actions"][5] = action_to_dict(seat, other)
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(doc))
    assert replay_main(["--ai", str(bad)]) == 1
    out = json.loads(capsys.readouterr().out)
    assert out["ai"]["mismatch"] == {"action": 5, "seat": seat, "recorded": to_str(other), "expected": to_str(recorded)}
    assert replay_main(["--ai", str(files[1])]) == 0


def test_jobs_do_not_change_the_figures():
    seats = ["search", "counting", "honest", "skeptic"]
    one = run(4, 8, seats, 3, "russian", jobs=1)
    two = run(4, 8, seats, 3, "russian", jobs=2)
    assert one["strategies"] == two["strategies"] and one["plays"] == two["plays"]


def test_a_decision_depends_on_seed_seat_and_action_only():
    hands = deal(4, random.Random(6))
    a = play_game(hands, "russian", ["search", "counting", "counting", "counting"], seed=99)
    b = play_game(hands, "russian", ["search", "counting", "counting", "counting"], seed=99)
    assert a == b


def test_tournament_prints_every_pair(capsys):
    assert tournament_main(["--strategies", "honest,counting,random", "--games", "4"]) == 0
    out = capsys.readouterr().out
    assert out.count("[") == 6 and "vs counting" in out


def test_opponent_model_tells_honest_from_counting_players():
    # seat 1 plays on at every chance and believes a final check; seat 2 challenges often and
    # sometimes loses; seat 3 did nothing yet
    history = [CheckStarted(1, 0, "final_check", True), Believed(1, 0, 7, (5,), False, 1, 3)]
    for _ in range(12):
        history += [
            CardsPlayed(0, 1, 7, 1),
            CardsPlayed(1, 1, 7, 2),
            ChallengeResolved(2, 1, 7, (7,), True, 2, 2),
            RoundStarted(1),
            CardsPlayed(1, 1, 7, 3),
            ChallengeResolved(2, 1, 7, (5,), False, 1, 1),
            RoundStarted(2),
        ]
    model = OpponentModel.from_history("classic", 4, history)
    assert model.honest_chance(1) > 0.95 and model.honest_chance(2) < 0.01
    assert model.honest_chance(3) == pytest.approx(HONEST_PRIOR)
    assert model.seen[1].checks == 1 and model.seen[1].chances == 12  # the check is not a chance


def _going_out_position(believer_challenges: bool) -> tuple[GameState, list[Event]]:
    """Classic, seat 0 to play claiming 5 with 2 and 3 left on a pile of 12 cards; seat 1
    either plays on at every chance and believed a final check (as ``honest``) or challenged
    every play it could."""
    hands = (
        Hand.from_str("23"),
        Hand.from_str("5" + "4" * 4 + "6" * 4 + "7"),
        Hand.from_str("2" * 3 + "3" * 3 + "5" * 3 + "9" * 4 + "T"),
        Hand.from_str("777" + "TTT" + "J" * 4 + "K" * 4),
    )
    pile = tuple(
        PilePlay(seat, Hand.from_str(r * 4), Rank(claim)) for seat, r, claim in ((1, "A", 2), (2, "8", 3), (3, "Q", 4))
    )
    state = GameState(lookup_variant("classic"), hands, pile, 0, 4)
    history: list[Event] = []
    for _ in range(15):
        history.append(CardsPlayed(0, 1, 7, 1))
        if believer_challenges:
            history += [ChallengeResolved(1, 0, 7, (7,), True, 1, 1), RoundStarted(0)]
        else:
            history.append(CardsPlayed(1, 1, 7, 2))
    if not believer_challenges:
        history += [CheckStarted(1, 0, "final_check", True), Believed(1, 0, 7, (5,), False, 1, 3)]
    return state, history


def test_search_expects_a_believer_to_let_its_last_bluff_win():
    bluff_out = Play.of("2", "3", claim="5")
    state, history = _going_out_position(believer_challenges=False)
    scores = dict(SearchPlayer(0, random.Random(0)).evaluate(view(state, 0), history))
    assert scores[bluff_out] == 1.0  # honest believes what it cannot disprove: we go out
    state, history = _going_out_position(believer_challenges=True)
    scores = dict(SearchPlayer(0, random.Random(0)).evaluate(view(state, 0), history))
    assert scores[bluff_out] < 0.5  # a challenger catches it: we take the pile


def test_a_lost_challenge_is_no_proof_of_counting_in_classic():
    # seat 1 played on at ten chances, then challenged once and lost: in russian that marks a
    # `counting` player (an `honest` one never loses a challenge); in classic `counting`
    # challenges rarely and a lost challenge is weak evidence, so the ten passes still count
    history: list[Event] = []
    for _ in range(10):
        history += [CardsPlayed(0, 1, 7, 1), CardsPlayed(1, 1, 7, 2), RoundStarted(2)]
    history += [CardsPlayed(0, 1, 7, 1), ChallengeResolved(1, 0, 7, (7,), True, 1, 1), RoundStarted(0)]
    classic = OpponentModel.from_history("classic", 4, history)
    russian = OpponentModel.from_history("russian", 4, history)
    assert classic.seen[1].lost == 1 and classic.seen[1].chances == 11
    assert classic.honest_chance(1) > 0.5
    assert russian.honest_chance(1) < 0.2
