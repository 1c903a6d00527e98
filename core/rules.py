"""Variants of the game as data (RULES.md, Turns: the claimed rank).

>>> variant("russian").free_opening_claim, variant("classic").free_opening_claim
(True, False)
>>> variant("classic").forced_claim(0), variant("classic").forced_claim(13)
(<Rank.ACE: 1>, <Rank.ACE: 1>)
>>> variant("russian").forced_claim(5, round_claim=Rank.SEVEN)
<Rank.SEVEN: 7>
"""

from __future__ import annotations

from dataclasses import dataclass

from .cards import RANKS, Rank

__all__ = [
    "CLASSIC",
    "MAX_PLAYERS",
    "MAX_PLAY_CARDS",
    "MIN_PLAYERS",
    "PLAY_CAP",
    "RUSSIAN",
    "VARIANTS",
    "UnknownVariant",
    "Variant",
    "variant",
]

#: RULES.md, End and ranking: the game ends after the answer to the 300th play.
PLAY_CAP = 300
#: RULES.md, Table: 3 to 6 players.
MIN_PLAYERS = 3
MAX_PLAYERS = 6
#: RULES.md, Turns: a play puts 1 to 4 cards on the pile.
MAX_PLAY_CARDS = 4


class UnknownVariant(ValueError):
    """A variant name other than ``russian`` or ``classic``."""


@dataclass(frozen=True, slots=True)
class Variant:
    """How the claimed rank is chosen.

    ``free_opening_claim``: the round's opener claims any rank and every later play of the
    round must claim the same (russian). Otherwise the claim is forced by the number of plays
    made in the whole game: A, 2, …, K, A, … (classic), continuing across challenges.
    """

    name: str
    free_opening_claim: bool

    def forced_claim(self, plays: int, round_claim: Rank | None = None) -> Rank | None:
        """The rank the next play must claim, or ``None`` when the claim is free.

        ``plays`` is the number of plays made so far in the game; ``round_claim`` the rank the
        current round's opener claimed (``None`` on an empty pile).
        """
        if self.free_opening_claim:
            return round_claim
        return RANKS[plays % len(RANKS)]


RUSSIAN = Variant("russian", free_opening_claim=True)
CLASSIC = Variant("classic", free_opening_claim=False)
VARIANTS: dict[str, Variant] = {v.name: v for v in (RUSSIAN, CLASSIC)}


def variant(name: str) -> Variant:
    """Look a variant up by name. Raises :class:`UnknownVariant`."""
    try:
        return VARIANTS[name]
    except (KeyError, TypeError):
        raise UnknownVariant(f"unknown variant: {name!r}") from None
