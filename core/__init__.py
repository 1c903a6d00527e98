"""The «Верю — не верю» (Cheat) game engine: pure, deterministic, no I/O.

The rules are RULES.md; the record format GAME_RECORD.md. One state type, one entry point:

>>> import random
>>> from core import new_game, apply, Play, Challenge, view
>>> s = new_game(4, "russian", random.Random(3))
>>> card = view(s, 0).hand.ranks()[0]
>>> s, events = apply(s, 0, Play((card,), card))
>>> s, events = apply(s, 1, Challenge())
>>> events[0].truthful, events[0].loser, s.current
(True, 1, 0)
"""

from .actions import Action, Believe, Challenge, Play
from .cards import FULL_DECK, RANKS, Hand, InvalidRank, Rank
from .errors import (
    ERROR_CODES,
    BadCardCountError,
    BelieveNotAllowedError,
    CardsNotInHandError,
    ChallengeNotAllowedError,
    ClaimNotAllowedError,
    GameOverError,
    IllegalActionError,
    NotYourTurnError,
    PlayNotAllowedError,
    error_for_code,
)
from .events import Believed, CardsPlayed, ChallengeResolved, CheckStarted, Event, GameEnded, PlayerWon, RoundStarted
from .legal import legal_actions
from .record import FORMAT, InvalidRecord, Record, ReplayOutcome, record_of
from .rules import CLASSIC, MAX_PLAYERS, MIN_PLAYERS, PLAY_CAP, RUSSIAN, VARIANTS, UnknownVariant, Variant, variant
from .state import (
    SCHEMA_VERSION,
    Ending,
    GameState,
    InvalidState,
    Phase,
    PilePlay,
    Result,
    apply,
    deal,
    from_deal,
    new_game,
    rank_places,
)
from .views import ClaimSeen, PlayerView, PublicView, public_view, view

__all__ = [
    "CLASSIC",
    "ERROR_CODES",
    "FORMAT",
    "FULL_DECK",
    "MAX_PLAYERS",
    "MIN_PLAYERS",
    "PLAY_CAP",
    "RANKS",
    "RUSSIAN",
    "SCHEMA_VERSION",
    "VARIANTS",
    "Action",
    "BadCardCountError",
    "Believe",
    "BelieveNotAllowedError",
    "Believed",
    "CardsNotInHandError",
    "CardsPlayed",
    "Challenge",
    "ChallengeNotAllowedError",
    "ChallengeResolved",
    "CheckStarted",
    "ClaimNotAllowedError",
    "ClaimSeen",
    "Ending",
    "Event",
    "GameEnded",
    "GameOverError",
    "GameState",
    "Hand",
    "IllegalActionError",
    "InvalidRank",
    "InvalidRecord",
    "InvalidState",
    "NotYourTurnError",
    "Phase",
    "PilePlay",
    "Play",
    "PlayNotAllowedError",
    "PlayerView",
    "PlayerWon",
    "PublicView",
    "Rank",
    "Record",
    "ReplayOutcome",
    "Result",
    "RoundStarted",
    "UnknownVariant",
    "Variant",
    "apply",
    "deal",
    "error_for_code",
    "from_deal",
    "legal_actions",
    "new_game",
    "public_view",
    "rank_places",
    "record_of",
    "variant",
    "view",
]
