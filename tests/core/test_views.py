"""Views never leak hidden cards: two states that differ only in other players' hands and in the
identities of the pile cards a player did not put there, with the same public facts, give equal
views for that player (RULES.md, What players may see)."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings, strategies as st

from core import GameState, Hand, Phase, PilePlay, Play, Rank, apply, from_deal, public_view, view
from tests.core.engine_helpers import play_game

H = Hand.from_str


def scramble(state: GameState, seat: int, rng: random.Random) -> GameState:
    """Redistribute every card hidden from ``seat`` (other hands, other players' pile plays)
    at random, keeping every public fact: hand sizes, each play's seat, count and claim."""
    hidden = []
    for i, h in enumerate(state.hands):
        if i != seat:
            hidden.extend(h.ranks())
    for p in state.pile:
        if p.seat != seat:
            hidden.extend(p.cards.ranks())
    rng.shuffle(hidden)

    def take(k: int) -> Hand:
        cards = [hidden.pop() for _ in range(k)]
        return Hand.from_ranks(cards)

    hands = tuple(h if i == seat else take(h.size) for i, h in enumerate(state.hands))
    pile = tuple(p if p.seat == seat else PilePlay(p.seat, take(p.cards.size), p.claim) for p in state.pile)
    assert not hidden
    return GameState(state.variant, hands, pile, state.current, state.plays, state.result)


def _states(seed: int, variant: str):
    g = play_game(seed, variant)
    return [g.initial, *g.states]


@pytest.mark.parametrize("variant", ["russian", "classic"])
def test_views_do_not_depend_on_hidden_cards(variant):
    differing = 0
    for seed in range(60):
        rng = random.Random(seed)
        for s in _states(seed, variant):
            for seat in range(s.players):
                other = scramble(s, seat, rng)
                assert view(other, seat) == view(s, seat)
                assert public_view(other) == public_view(s)
                differing += other != s
    assert differing > 1000  # the scrambles did change hidden cards


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**31), variant=st.sampled_from(["russian", "classic"]), data=st.data())
def test_views_do_not_depend_on_hidden_cards_hypothesis(seed, variant, data):
    states = _states(seed, variant)
    s = data.draw(st.sampled_from(states))
    seat = data.draw(st.integers(0, s.players - 1))
    other = scramble(s, seat, random.Random(data.draw(st.integers(0, 2**31))))
    assert view(other, seat) == view(s, seat)


def test_view_shows_own_hand_and_own_pile_cards_only():
    s = from_deal("russian", [H("7Q"), H("KK2"), H("35")])
    s, _ = apply(s, 0, Play((Rank.QUEEN,), Rank.SEVEN))
    s, _ = apply(s, 1, Play((Rank.KING, Rank.KING), Rank.SEVEN))
    v0, v1, v2 = (view(s, i) for i in range(3))
    assert v0.hand == H("7") and v0.own_pile == H("Q")
    assert v1.hand == H("2") and v1.own_pile == H("KK")
    assert v2.hand == H("35") and v2.own_pile == Hand()
    assert v2.hand_sizes == (1, 1, 2) and v2.pile_size == 3 and v2.my_turn and v2.can_challenge
    assert [(c.seat, c.count, c.claim) for c in v2.claims] == [(0, 1, Rank.SEVEN), (1, 2, Rank.SEVEN)]
    assert v2.required_claim == Rank.SEVEN and v2.phase is Phase.PLAYING and not v2.can_believe
    # the view of another seat differs exactly by its private part
    assert v0.public == v1.public == v2.public


def test_view_differs_when_own_cards_differ():
    """Sanity check of the leakage test: a player's own cards do show in their view."""
    a = from_deal("russian", [H("7Q"), H("KK2"), H("35")])
    b = from_deal("russian", [H("7K"), H("KQ2"), H("35")])
    assert view(a, 2) == view(b, 2)
    assert view(a, 0) != view(b, 0) and view(a, 1) != view(b, 1)
