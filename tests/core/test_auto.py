"""The automatic move of RULES.md (turn timer), on hand-made states."""

from __future__ import annotations

import random

import pytest

from core import Believe, Hand, Play, Rank, apply, from_deal, new_game, view
from core.auto import automatic_move, most_held
from core.state import GameState


def _state(variant: str, hands: list[str]) -> GameState:
    return from_deal(variant, [Hand.from_str(h) for h in hands])


def test_most_held_ties_go_to_the_lowest_rank():
    assert most_held(Hand.from_str("KKQQ7")) == Rank.QUEEN
    assert most_held(Hand.from_str("KA")) == Rank.ACE
    assert most_held(Hand.from_str("9KKK")) == Rank.KING
    with pytest.raises(ValueError):
        most_held(Hand())


def test_russian_opener_plays_one_card_of_most_held_truthfully():
    s = _state("russian", ["KK77A", "2345", "6689"])
    assert automatic_move(view(s, 0)) == Play((Rank.SEVEN,), Rank.SEVEN)


def test_later_play_uses_the_required_rank_when_held_else_bluffs_most_held():
    s = _state("russian", ["KK77A", "2Q45", "6688J"])
    s, _ = apply(s, 0, Play((Rank.KING,), Rank.KING))
    # seat 1 holds no king: one card of the rank held most of (tie → lowest: 2), claimed K
    assert automatic_move(view(s, 1)) == Play((Rank.TWO,), Rank.KING)
    s2 = _state("russian", ["KK77A", "2K45", "6688J"])
    s2, _ = apply(s2, 0, Play((Rank.KING,), Rank.KING))
    assert automatic_move(view(s2, 1)) == Play((Rank.KING,), Rank.KING)


def test_classic_play_claims_the_forced_rank():
    s = _state("classic", ["KK77", "2345", "6689"])
    assert automatic_move(view(s, 0)) == Play((Rank.SEVEN,), Rank.ACE)  # no ace: bluff, tie → 7
    s = _state("classic", ["KKA7", "2345", "6689"])
    assert automatic_move(view(s, 0)) == Play((Rank.ACE,), Rank.ACE)


def test_final_check_believes():
    s = _state("russian", ["K", "2345", "6689"])
    s, _ = apply(s, 0, Play((Rank.KING,), Rank.KING))
    assert view(s, 1).public.answering
    assert automatic_move(view(s, 1)) == Believe()


def test_only_on_own_turn_and_always_legal():
    s = new_game(5, "russian", random.Random(3))
    with pytest.raises(ValueError):
        automatic_move(view(s, 1))
    for _ in range(400):  # automatic moves alone always make legal progress
        if s.result is not None:
            break
        s, _ = apply(s, s.current, automatic_move(view(s, s.current)))
