"""Public events: the facts an action produced, for the UI and for AI memory.

Events are public (RULES.md, What players may see): a play shows its count and claim, never its
cards; a showdown or a belief shows the revealed cards of the one play concerned. The bot renders
events and never re-derives rules.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TypeAlias

from .cards import Rank

__all__ = [
    "Believed",
    "CardsPlayed",
    "ChallengeResolved",
    "CheckStarted",
    "Event",
    "GameEnded",
    "PlayerWon",
    "RoundStarted",
]


@dataclass(frozen=True, slots=True)
class CardsPlayed:
    """``seat`` put ``count`` cards on the pile claiming ``claim``; ``plays`` is the game's play count after it."""

    seat: int
    count: int
    claim: Rank
    plays: int


@dataclass(frozen=True, slots=True)
class CheckStarted:
    """``seat`` must now challenge or believe the play ``player`` just made.

    ``reason`` is ``"final_check"`` (``player`` played their last cards) or ``"cap"`` (the
    300th play was made; RULES.md, play cap). ``last_cards`` tells whether ``player`` has no
    cards left (true for every final check, and for a cap play that emptied the hand).
    """

    seat: int
    player: int
    reason: str
    last_cards: bool


@dataclass(frozen=True, slots=True)
class ChallengeResolved:
    """A showdown: ``challenger`` said «Не верю!» to ``player``'s play.

    ``revealed`` are that play's cards (only those: RULES.md, Challenge), ``truthful`` whether
    all were of ``claim``; ``loser`` took the whole pile of ``pile_taken`` cards.
    """

    challenger: int
    player: int
    claim: Rank
    revealed: tuple[Rank, ...]
    truthful: bool
    loser: int
    pile_taken: int


@dataclass(frozen=True, slots=True)
class Believed:
    """``believer`` said «Верю» at a final check or cap answer; the play is then revealed.

    If it was a bluff the believer took the pile (``taker`` = believer, ``pile_taken`` cards);
    if it was truthful the pile stays where it is (``taker`` is ``None``, ``pile_taken`` 0).
    """

    believer: int
    player: int
    claim: Rank
    revealed: tuple[Rank, ...]
    truthful: bool
    taker: int | None
    pile_taken: int


@dataclass(frozen=True, slots=True)
class RoundStarted:
    """A new round on an empty pile, opened by ``opener`` (the winner of the showdown)."""

    opener: int


@dataclass(frozen=True, slots=True)
class PlayerWon:
    """``seat`` went out: their last play was believed, or challenged and truthful."""

    seat: int


@dataclass(frozen=True, slots=True)
class GameEnded:
    """The game is over. ``places[i]`` is seat i's place (shared places for ties).

    ``winner`` is ``None`` for a draw; ``capped`` tells the game ended by the 300-play cap.
    """

    places: tuple[int, ...]
    winner: int | None
    draw: bool
    capped: bool


Event: TypeAlias = CardsPlayed | CheckStarted | ChallengeResolved | Believed | RoundStarted | PlayerWon | GameEnded
