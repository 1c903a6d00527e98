"""Engine support for AI and tools (issue 30): action notation, legal actions, how a game
ended, seeded new games."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, strategies as st

from core import Believe, Challenge, Ending, GameState, Play, Rank, apply, new_game, view
from core.actions import NotationError, from_str, to_str
from core.ai import make_player
from core.errors import IllegalActionError
from core.legal import legal_actions

ranks = st.sampled_from(list(Rank))
plays = st.builds(Play, st.lists(ranks, min_size=1, max_size=4).map(tuple), st.none() | ranks)
actions = plays | st.just(Challenge()) | st.just(Believe())


@given(actions)
def test_notation_round_trips(action):
    text = to_str(action)
    assert from_str(text) == action
    assert from_str(text.lower()) == action and from_str(f" {text} ") == action


def test_notation_examples_and_errors():
    assert to_str(Play.of("Q", "7", "7", claim="10")) == "77Q=T"
    assert from_str("10 10=10".replace(" ", "")) == Play.of("10", "10", claim="10")
    assert to_str(Play.of("2")) == "2"
    for bad in ("", "=7", "challenge!", "7=", "7=7=7", "XY=7", "believe 7"):
        with pytest.raises(NotationError):
            from_str(bad)


def _states(seed: int, variant: str):
    """Every state of one seeded game of ``counting`` players."""
    state = new_game(4, variant, random.Random(seed))
    out = [state]
    n = 0
    while (seat := state.current) is not None:
        state, _ = apply(state, seat, make_player("counting", seat, random.Random(n)).act(view(state, seat)))
        out.append(state)
        n += 1
    return out


@pytest.mark.parametrize("variant", ["russian", "classic"])
def test_legal_actions_are_exactly_what_apply_accepts(variant):
    rng = random.Random(4)
    for state in _states(2, variant)[::7]:
        seat = state.current
        if seat is None:
            assert legal_actions(view(state, 0)) == []
            continue
        legal = legal_actions(view(state, seat))
        assert len(set(legal)) == len(legal)
        for action in rng.sample(legal, min(25, len(legal))):
            apply(state, seat, action)  # raises if not legal
        # the others may not act; and a random action outside the list is refused
        assert legal_actions(view(state, (seat + 1) % 4)) == []
        for _ in range(25):
            cards = tuple(rng.choice(list(Rank)) for _ in range(rng.randint(1, 5)))
            candidate = rng.choice([Challenge(), Believe(), Play(cards, rng.choice(list(Rank)))])
            if candidate not in legal:
                with pytest.raises(IllegalActionError):
                    apply(state, seat, candidate)


def test_endings():
    states = _states(3, "russian")
    assert states[-1].result is not None and states[-1].result.ending is Ending.WENT_OUT
    assert GameState.from_json(states[-1].to_json()).result == states[-1].result
    # the play cap: a round opened at play 299 ends the game at its answer
    seen = set()
    for mid in states[:-1]:
        if mid.pile:
            continue
        capped = GameState(mid.variant, mid.hands, (), mid.current, 299)
        for answer in (Challenge(), Believe()):
            seat = capped.current
            s, _ = apply(capped, seat, legal_actions(view(capped, seat))[-1])
            s, _ = apply(s, s.current, answer)
            assert s.result is not None and s.result.capped
            assert (s.result.ending is Ending.CAP_DRAW) == s.result.draw
            assert GameState.from_json(s.to_json()).result == s.result
            seen.add(s.result.ending)
    assert Ending.CAP_FEWEST in seen


def test_new_game_requires_its_seed():
    with pytest.raises(TypeError):
        new_game(4, "russian", None)  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        new_game(4, "russian")  # type: ignore[call-arg]
    assert new_game(4, "classic", 17) == new_game(4, "classic", random.Random(17))
