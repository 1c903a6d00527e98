"""Information-state views: what one player, or everyone, may see (RULES.md, views).

A :class:`PublicView` holds the facts everyone sees; a :class:`PlayerView` adds one player's
own hand and the cards they themselves put into the current pile. Rendering and AI read these
only, never a :class:`~core.state.GameState`, so hidden cards cannot leak: two states that
differ only in other players' hidden cards give equal views (tested).

>>> import random
>>> from core.state import new_game
>>> s = new_game(3, "classic", random.Random(7))
>>> v = view(s, 1)
>>> v.seat, v.hand.size, v.hand_sizes, v.my_turn, v.required_claim
(1, 17, (18, 17, 17), False, <Rank.ACE: 1>)
"""

from __future__ import annotations

from dataclasses import dataclass

from .cards import EMPTY_HAND, Hand, Rank
from .state import GameState, Phase, Result

__all__ = ["ClaimSeen", "PlayerView", "PublicView", "public_view", "view"]


@dataclass(frozen=True, slots=True)
class ClaimSeen:
    """One play of the current round as everyone saw it: who, how many cards, which claim."""

    seat: int
    count: int
    claim: Rank


@dataclass(frozen=True, slots=True)
class PublicView:
    """What everyone at the table sees.

    ``claims`` are the current round's plays, oldest first; ``required_claim`` the rank the next
    play must claim (``None`` when free); ``result`` is set once the game is over.
    """

    variant: str
    hand_sizes: tuple[int, ...]
    pile_size: int
    claims: tuple[ClaimSeen, ...]
    current: int | None
    plays: int
    phase: Phase
    required_claim: Rank | None
    result: Result | None

    @property
    def players(self) -> int:
        return len(self.hand_sizes)

    @property
    def last_claim(self) -> ClaimSeen | None:
        """The play the current player may challenge, if any."""
        return self.claims[-1] if self.claims else None

    @property
    def answering(self) -> bool:
        """A final check or a cap answer is pending: challenge or believe, no play."""
        return self.phase in (Phase.FINAL_CHECK, Phase.CAP_CHECK)


@dataclass(frozen=True, slots=True)
class PlayerView:
    """What seat ``seat`` sees: the public facts, their own ``hand``, and ``own_pile``, the cards
    they themselves put into the current pile."""

    seat: int
    hand: Hand
    own_pile: Hand
    public: PublicView

    # Convenience pass-throughs to the public facts.
    @property
    def players(self) -> int:
        return self.public.players

    @property
    def hand_sizes(self) -> tuple[int, ...]:
        return self.public.hand_sizes

    @property
    def pile_size(self) -> int:
        return self.public.pile_size

    @property
    def claims(self) -> tuple[ClaimSeen, ...]:
        return self.public.claims

    @property
    def phase(self) -> Phase:
        return self.public.phase

    @property
    def required_claim(self) -> Rank | None:
        return self.public.required_claim

    @property
    def plays(self) -> int:
        return self.public.plays

    @property
    def my_turn(self) -> bool:
        return self.public.current == self.seat

    @property
    def can_play(self) -> bool:
        return self.my_turn and self.public.phase in (Phase.OPENING, Phase.PLAYING)

    @property
    def can_challenge(self) -> bool:
        return self.my_turn and self.public.phase is not Phase.OPENING and self.public.phase is not Phase.OVER

    @property
    def can_believe(self) -> bool:
        return self.my_turn and self.public.answering


def public_view(state: GameState) -> PublicView:
    """The facts everyone sees."""
    return PublicView(
        variant=state.variant.name,
        hand_sizes=state.hand_sizes,
        pile_size=state.pile_size,
        claims=tuple(ClaimSeen(p.seat, p.cards.size, p.claim) for p in state.pile),
        current=state.current,
        plays=state.plays,
        phase=state.phase,
        required_claim=None if state.result is not None else state.required_claim,
        result=state.result,
    )


def view(state: GameState, seat: int) -> PlayerView:
    """What ``seat`` may see. Raises ``IndexError`` for a seat not at the table."""
    own = sum((p.cards for p in state.pile if p.seat == seat), EMPTY_HAND)
    return PlayerView(seat, state.hands[seat], own, public_view(state))
