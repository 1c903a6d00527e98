"""The automatic move of a player whose turn timer ran out (RULES.md, table manners).

A pure function of the player's view, so every bot process computes the same move:

- at a final check or a cap answer: believe;
- russian opener (the claim is free): one card of the rank they hold most of, claimed truthfully;
- otherwise: one card of the rank that must be claimed if they hold it, else one card of the
  rank they hold most of, claimed as the required rank (a bluff);
- ties between ranks go to the lowest rank (A lowest, K highest).

>>> import random
>>> from core import new_game, view
>>> s = new_game(3, "russian", random.Random(1))
>>> a = automatic_move(view(s, 0))
>>> len(a.cards), a.is_truthful
(1, True)
"""

from __future__ import annotations

from .actions import Action, Believe, Play
from .cards import RANKS, Hand, Rank
from .views import PlayerView

__all__ = ["automatic_move", "most_held"]


def most_held(hand: Hand) -> Rank:
    """The rank ``hand`` holds most of; ties go to the lowest rank. Raises ``ValueError`` on an
    empty hand."""
    if not hand:
        raise ValueError("empty hand")
    return max(RANKS, key=lambda r: (hand[r], -int(r)))


def automatic_move(view: PlayerView) -> Action:
    """The automatic move for ``view``'s player, who must be the current player (RULES.md, turn
    timer). Raises ``ValueError`` when it is not their turn."""
    if not view.my_turn:
        raise ValueError("not this player's turn")
    if view.public.answering:
        return Believe()
    required = view.required_claim
    if required is None:
        rank = most_held(view.hand)
        return Play((rank,), rank)
    card = required if view.hand[required] else most_held(view.hand)
    return Play((card,), required)
