"""The ``honest`` player and the card-counting proof it challenges on (:func:`provable_lie`).

Kept apart from :mod:`core.ai` so that ``search`` can play ``honest`` opponents in its rollouts.
"""

from __future__ import annotations

import random
from collections.abc import Sequence

from .actions import Action, Believe, Challenge, Play
from .cards import COPIES, RANKS
from .events import Event
from .rules import MAX_PLAY_CARDS
from .views import PlayerView

__all__ = ["HonestPlayer", "provable_lie"]


# -- shared helpers ------------------------------------------------------------------------------


def provable_lie(view: PlayerView) -> bool:
    """Whether card counting from ``view`` alone proves that some other player's claim of the
    current round is a lie (RULES.md four of each rank).

    For the rank ``r`` of the last claim: the cards of rank ``r`` that the other players claimed
    in this round exceed ``4 - (hand[r] + own_pile[r])``, the copies this player cannot account
    for. Used by ``honest`` to challenge. ``False`` when there is no claim or it is our own.
    """
    last = view.public.last_claim
    if last is None or last.seat == view.seat:
        return False
    r = last.claim
    claimed = sum(c.count for c in view.claims if c.claim == r and c.seat != view.seat)
    return claimed > COPIES - view.hand[r] - view.own_pile[r]


# -- honest ----------------------------------------------------------------------------------------


class HonestPlayer:
    """True cards when it can, else a one-card bluff; challenges only a proven lie.

    - Opener with a free claim: all (up to 4) cards of the rank it holds most of.
    - Otherwise: all (up to 4) cards of the required rank if it holds any, else one card of the
      rank it holds fewest of (ties at random), claimed as the required rank.
    - Challenges when :func:`provable_lie`; at a final check or cap answer believes otherwise.
    """

    name = "honest"

    def __init__(self, seat: int, rng: random.Random) -> None:
        self.seat = seat
        self.rng = rng

    def act(self, view: PlayerView, history: Sequence[Event] = ()) -> Action:
        """The honest move for ``view``. Raises ``ValueError`` when it is not our turn."""
        if not view.my_turn:
            raise ValueError("not this player's turn")
        if view.can_challenge and provable_lie(view):
            return Challenge()
        if view.can_believe:
            return Believe()
        hand = view.hand
        required = view.required_claim
        if required is None:
            best = max(hand.counts)
            ranks = [r for r in RANKS if hand[r] == best]
            r = self.rng.choice(ranks)
            return Play((r,) * min(MAX_PLAY_CARDS, hand[r]), r)
        if hand[required]:
            return Play((required,) * min(MAX_PLAY_CARDS, hand[required]), required)
        fewest = min(c for c in hand.counts if c)
        ranks = [r for r in RANKS if hand[r] == fewest]
        return Play((self.rng.choice(ranks),), required)
