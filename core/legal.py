"""Every legal action of the player to act, from their view (as python-chess's ``legal_moves``
and OpenSpiel's ``legal_actions``).

>>> import random
>>> from core import new_game, view
>>> s = new_game(3, "classic", random.Random(1))
>>> actions = legal_actions(view(s, 0))
>>> len(actions) > 0, all(a.claim is not None for a in actions)
(True, True)
>>> legal_actions(view(s, 1))
[]
"""

from __future__ import annotations

from itertools import combinations_with_replacement

from .actions import Action, Believe, Challenge, Play
from .cards import RANKS, Hand, Rank
from .rules import MAX_PLAY_CARDS
from .views import PlayerView

__all__ = ["legal_actions", "plays_of"]


def plays_of(hand: Hand) -> list[tuple[Rank, ...]]:
    """Every distinct multiset of 1 to 4 cards ``hand`` can play, ranks ascending, fewest cards
    first."""
    distinct = hand.distinct()
    out: list[tuple[Rank, ...]] = []
    for k in range(1, min(MAX_PLAY_CARDS, hand.size) + 1):
        for combo in combinations_with_replacement(distinct, k):
            if all(combo.count(r) <= hand[r] for r in set(combo)):
                out.append(combo)
    return out


def legal_actions(view: PlayerView) -> list[Action]:
    """The actions :func:`~core.state.apply` accepts from ``view``'s player, in a fixed order:
    challenge, believe, then the plays (fewest cards first; every claim where it is free). Plays
    always carry their claim. Empty when it is not this player's turn or the game is over."""
    if not view.my_turn:
        return []
    actions: list[Action] = []
    if view.can_challenge:
        actions.append(Challenge())
    if view.can_believe:
        actions.append(Believe())
    if view.can_play:
        claims = RANKS if view.required_claim is None else (view.required_claim,)
        actions += [Play(cards, claim) for cards in plays_of(view.hand) for claim in claims]
    return actions
