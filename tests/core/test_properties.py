"""Property tests: thousands of seeded random games per variant, 3 to 6 players with mixed AI
seats (core.ai.make_player "random"/"honest"/"counting"), every RULES.md invariant checked after every action, and the record round trip at the
end of every game. The sweeps always run; they are split over 2 worker processes. The classic
variant's sweep is in test_properties_classic.py, so that pytest-xdist runs the two side by side."""

from __future__ import annotations

import random

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from core import Believe, Challenge, GameState, IllegalActionError, Play, apply, new_game
from core.cards import RANKS
from tests.core.engine_helpers import SWEEP_TIMEOUT, check_invariants, check_sweep, checked_game, play_game, total_cards


@pytest.mark.timeout(SWEEP_TIMEOUT)
def test_random_games_sweep_russian():
    check_sweep("russian")


def test_checked_game_is_deterministic():
    assert checked_game(7, "russian") == checked_game(7, "russian")
    g1, g2 = play_game(11, "classic"), play_game(11, "classic")
    assert g1.actions == g2.actions and g1.final == g2.final


def _random_action(rng: random.Random, state: GameState):
    """Any action, legal or not, from any seat."""
    seat = rng.choice([state.current if state.current is not None else 0, rng.randrange(state.players)])
    kind = rng.random()
    if kind < 0.15:
        return seat, Challenge()
    if kind < 0.25:
        return seat, Believe()
    hand = state.hands[seat].ranks()
    k = rng.choice([0, 1, 1, 2, 3, 4, 5])
    pool = list(hand) + [rng.choice(RANKS)] * (rng.random() < 0.2)
    rng.shuffle(pool)
    cards = tuple(pool[:k]) if len(pool) >= k else tuple(pool)
    claim = rng.choice([None, state.required_claim, rng.choice(RANKS)])
    return seat, Play(cards, claim)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(3, 6), variant=st.sampled_from(["russian", "classic"]))
def test_random_actions_legal_or_refused_unchanged(seed, n, variant):
    """Arbitrary (mostly illegal) actions: each is either applied with every invariant kept, or
    refused with a documented error code and the state unchanged."""
    from core import ERROR_CODES

    rng = random.Random(seed)
    state = new_game(n, variant, random.Random(seed))
    deal = total_cards(state)
    for _ in range(400):
        if state.result is not None:
            break
        seat, action = _random_action(rng, state)
        before = state.to_json()
        try:
            state, events = apply(state, seat, action)
        except IllegalActionError as e:
            assert e.code in ERROR_CODES
            assert state.to_json() == before
            continue
        assert events
        check_invariants(state, deal)
        assert GameState.from_json(state.to_json()) == state
