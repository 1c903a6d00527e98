"""AI players: legal actions only, determinism, no hidden information, strength."""

from __future__ import annotations

import random

import pytest

from core import Believe, Challenge, Hand, Play, apply, new_game, view
from core.ai import STRATEGIES, CountingPlayer, HonestPlayer, Player, make_player, p_at_least, provable_lie
from core.selfplay import run
from core.state import GameState, PilePlay


def play_out(players: int, variant: str, names: list[str], seed: int, max_actions: int = 5000):
    """Play one game; every action must be legal (apply raises otherwise). Returns the actions."""
    state = new_game(players, variant, random.Random(seed))
    ai = [make_player(n, s, random.Random(seed * 31 + s)) for s, n in enumerate(names)]
    actions = []
    while state.result is None:
        seat = state.current
        v = view(state, seat)
        action = ai[seat].act(v)
        if isinstance(action, Play):
            assert v.can_play and 1 <= len(action.cards) <= 4
        elif isinstance(action, Believe):
            assert v.can_believe
        else:
            assert isinstance(action, Challenge) and v.can_challenge
        state, _ = apply(state, seat, action)
        actions.append((seat, action))
        assert len(actions) < max_actions
    return actions, state


@pytest.mark.parametrize("variant", ["russian", "classic"])
@pytest.mark.parametrize("players", [3, 4, 5, 6])
def test_only_legal_actions(variant, players):
    for seed in range(12):
        rng = random.Random(seed)
        names = [rng.choice(STRATEGIES) for _ in range(players)]
        names[seed % players] = STRATEGIES[seed % len(STRATEGIES)]
        _, state = play_out(players, variant, names, seed)
        assert state.result is not None


def play_alone(name: str) -> None:
    """Four seats of strategy ``name`` play six seeded games of each variant, legal moves only."""
    for seed in range(6):
        for variant in ("russian", "classic"):
            play_out(4, variant, [name] * 4, seed)


#: "search" alone is the slowest of these by far: test_ai_search.py, which pytest-xdist runs beside this file.
@pytest.mark.parametrize("name", [name for name in STRATEGIES if name != "search"])
def test_each_strategy_alone_is_legal(name):
    play_alone(name)


def test_deterministic_for_a_seed():
    names = ["counting", "honest", "random", "counting"]
    a, sa = play_out(4, "russian", names, 99)
    b, sb = play_out(4, "russian", names, 99)
    assert a == b and sa == sb


def test_make_player_and_protocol():
    for name in STRATEGIES:
        p = make_player(name, 2, random.Random(0))
        assert p.name == name and isinstance(p, Player)
    with pytest.raises(ValueError):
        make_player("genius", 0, random.Random(0))


def _two_states_same_view():
    """Two mid-round states that differ only in seats 2 and 3's hidden cards."""
    base = new_game(4, "russian", random.Random(5))
    s = base
    # seat 0 opens with one card, seat 1 plays a card: now seat 2 is to act.
    c0 = s.hands[0].ranks()[0]
    s, _ = apply(s, 0, Play((c0,), c0))
    c1 = s.hands[1].ranks()[-1]
    s, _ = apply(s, 1, Play((c1,), c0))
    h3 = s.hands[3]
    # Build the twin: exchange a card between seat 3's hand and seat 1's pile play (both hidden to seat 2).
    pile1 = s.pile[1]
    x = pile1.cards.ranks()[0]
    y = next(r for r in h3.ranks() if r != x)
    twin_hands = (*s.hands[:3], h3 - Hand.from_ranks([y]) + Hand.from_ranks([x]))
    twin_pile = (
        s.pile[0],
        PilePlay(pile1.seat, pile1.cards - Hand.from_ranks([x]) + Hand.from_ranks([y]), pile1.claim),
    )
    twin = GameState(s.variant, twin_hands, twin_pile, s.current, s.plays)
    assert twin != s
    return s, twin


@pytest.mark.parametrize("name", STRATEGIES)
def test_never_reads_hidden_cards(name):
    s, twin = _two_states_same_view()
    seat = s.current
    assert view(s, seat) == view(twin, seat)
    for seed in range(20):
        a = make_player(name, seat, random.Random(seed)).act(view(s, seat))
        b = make_player(name, seat, random.Random(seed)).act(view(twin, seat))
        assert a == b


def test_honest_proves_a_lie_and_plays_true():
    # Seat 1 holds two sevens; seat 0 claims three sevens: impossible.
    hands = (
        Hand.from_str("2345689TJQKAA"),
        Hand.from_str("77AAA2345689Q"),
        Hand.from_str("7" + "T" * 3 + "J" * 3 + "Q" * 3 + "K2"),
        Hand.from_str("7JQK23456899T"),
    )
    s = GameState(new_game(4, "russian", 0).variant, hands)
    s, _ = apply(s, 0, Play.of("2", "3", "4", claim="7"))
    v = view(s, 1)
    assert provable_lie(v)
    assert HonestPlayer(1, random.Random(0)).act(v) == Challenge()
    # One seven claimed: no proof; honest plays its sevens truthfully.
    s2 = GameState(new_game(4, "russian", 0).variant, hands)
    s2, _ = apply(s2, 0, Play.of("2", claim="7"))
    v2 = view(s2, 1)
    assert not provable_lie(v2)
    assert HonestPlayer(1, random.Random(0)).act(v2) == Play.of("7", "7", claim="7")
    assert CountingPlayer(1, random.Random(0)).truth_probability(view(s, 1)) == 0.0


def test_counting_fresh_from_view_plays_sensibly():
    s = new_game(4, "russian", random.Random(11))
    v = view(s, 0)
    a = CountingPlayer(0, random.Random(0)).act(v)
    assert isinstance(a, Play) and a.is_truthful  # the opener plays true cards


def test_hypergeometric():
    assert p_at_least(10, 0, 5, 1) == 0.0
    assert p_at_least(10, 3, 5, 0) == 1.0
    assert p_at_least(4, 4, 4, 4) == 1.0
    # one good card in 39, 13 drawn: 1/3
    assert abs(p_at_least(39, 1, 13, 1) - 1 / 3) < 1e-12
    assert 0 < p_at_least(39, 1.5, 13, 1) < p_at_least(39, 2, 13, 1)


def test_counting_beats_random_small_run():
    res = run(4, 200, ["counting", "random", "random", "random"], seed=3)
    st = res["strategies"]["counting"]
    # about 0.8 over 1000 games; a loose bound for 200
    assert st["wilson_low"] > 0.5


def test_counting_beats_honest_small_run():
    res = run(4, 200, ["counting", "honest", "honest", "honest"], seed=3)
    assert res["strategies"]["counting"]["win_rate"] > 0.3
