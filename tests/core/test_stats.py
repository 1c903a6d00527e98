"""core.stats: per-seat figures of a game, computed from its record."""

from __future__ import annotations

import random

import pytest

from core import Challenge, Record
from core.ai import make_player
from core.record import replay
from core.state import apply, new_game
from core.stats import game_stats
from core.views import view


def _record(variant, hands, actions):
    return Record.from_dict({"format": "cheat-record/1", "variant": variant, "hands": hands, "actions": actions})


def test_truthful_challenge_counts_a_wrong_challenge_and_a_pile_for_the_challenger():
    rec = _record(
        "russian",
        [["7", "7", "K"], ["2", "Q"], ["J", "3"]],
        [
            {"seat": 0, "play": ["7", "7"], "claim": "7"},
            {"seat": 1, "challenge": True},
        ],
    )
    s = game_stats(rec)
    assert (s[0].plays, s[0].bluffs, s[0].bluffs_caught) == (1, 0, 0)
    assert (s[1].challenges, s[1].challenges_right, s[1].piles_taken) == (1, 0, 1)
    assert s[0].place == 0  # still running


def test_classic_forced_claim_counts_bluffs_against_the_forced_rank():
    rec = _record(
        "classic",
        [["A", "3"], ["2", "5"], ["9", "K"]],
        [
            {"seat": 0, "play": ["A"]},  # claims A: true
            {"seat": 1, "play": ["5"]},  # claims 2: bluff
            {"seat": 2, "play": ["9"]},  # claims 3: bluff, believes seat 1's bluff
        ],
    )
    s = game_stats(rec)
    assert [x.bluffs for x in s] == [0, 1, 1]
    assert [x.bluffs_through for x in s] == [0, 1, 1]


def test_believed_bluff_at_the_final_check():
    rec = _record(
        "russian",
        [["A", "7"], ["2"], ["J"]],
        [
            {"seat": 0, "play": ["A"], "claim": "A"},
            {"seat": 1, "play": ["2"], "claim": "A"},
            {"seat": 2, "believe": True},
        ],
    )
    s = game_stats(rec)
    assert s[1].won and s[1].place == 1 and s[1].bluffs_through == 1
    assert s[2].piles_taken == 1


@pytest.mark.parametrize("variant", ["russian", "classic"])
def test_figures_add_up_over_random_games(variant):
    for g in range(60):
        rng = random.Random(g)
        n = rng.randint(3, 6)
        state = new_game(n, variant, rng)
        hands = state.hands
        players = [
            make_player(rng.choice(["random", "honest", "counting"]), i, random.Random(g * 10 + i)) for i in range(n)
        ]
        actions = []
        while state.result is None:
            seat = state.current
            action = players[seat].act(view(state, seat))
            state, _ = apply(state, seat, action)
            actions.append((seat, action))
        rec = Record(variant, hands, tuple(actions))
        s = game_stats(rec)
        assert sum(x.plays for x in s) == state.plays
        assert sum(x.bluffs_caught for x in s) == sum(x.challenges_right for x in s)
        assert all(x.bluffs == x.bluffs_caught + x.bluffs_through for x in s)
        challenges = sum(isinstance(a, Challenge) for _, a in actions)
        assert sum(x.challenges for x in s) == challenges
        assert sum(x.piles_taken for x in s) >= challenges
        assert [x.place for x in s] == list(replay(rec).state.result.places)
        assert sum(x.won for x in s) == (0 if state.result.draw else 1)
