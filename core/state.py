"""The game state and its one entry point, :func:`apply`.

A :class:`GameState` is immutable; ``apply(state, seat, action)`` returns a new state and the
public events the action produced, or raises an :class:`~core.errors.IllegalActionError` subclass and
leaves ``state`` as it was. Everything here follows RULES.md; the error precedence follows
GAME_RECORD.md.

>>> import random
>>> s = new_game(4, "russian", random.Random(1))
>>> [h.size for h in s.hands], s.current, s.phase
([13, 13, 13, 13], 0, <Phase.OPENING: 'opening'>)
>>> card = s.hands[0].ranks()[0]
>>> s2, events = apply(s, 0, Play((card,), card))
>>> s2.current, s2.pile_size, s2.plays, events[0].count
(1, 1, 1, 1)
>>> apply(s2, 3, Challenge())
Traceback (most recent call last):
...
core.errors.NotYourTurnError: seat 3 acted, seat 1 is to act
"""

from __future__ import annotations

import json
import random
from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from .actions import Action, Believe, Challenge, Play
from .cards import EMPTY_HAND, FULL_DECK, Hand, Rank
from .errors import (
    BadCardCountError,
    BelieveNotAllowedError,
    CardsNotInHandError,
    ChallengeNotAllowedError,
    ClaimNotAllowedError,
    GameOverError,
    NotYourTurnError,
    PlayNotAllowedError,
)
from .events import (
    Believed,
    CardsPlayed,
    ChallengeResolved,
    CheckStarted,
    Event,
    GameEnded,
    PlayerWon,
    RoundStarted,
)
from .rules import MAX_PLAY_CARDS, MAX_PLAYERS, MIN_PLAYERS, PLAY_CAP, Variant, variant as lookup_variant

__all__ = [
    "SCHEMA_VERSION",
    "Ending",
    "GameState",
    "InvalidState",
    "Phase",
    "PilePlay",
    "Result",
    "apply",
    "deal",
    "from_deal",
    "new_game",
    "rank_places",
]

#: Version of the JSON encoding of :class:`GameState`; bumped on every incompatible change.
SCHEMA_VERSION = 1


class InvalidState(ValueError):
    """A serialized state that cannot be decoded (bad JSON, wrong schema version, bad field)."""


class Phase(StrEnum):
    """What the current player may do.

    - ``OPENING``: the pile is empty; the current player must play (opening a round).
    - ``PLAYING``: play (believing the previous play implicitly) or challenge it.
    - ``FINAL_CHECK``: the previous player played their last cards: challenge or believe.
    - ``CAP_CHECK``: the 300th play has been made: challenge or believe, then the game ends.
    - ``OVER``: the game has ended.
    """

    OPENING = "opening"
    PLAYING = "playing"
    FINAL_CHECK = "final_check"
    CAP_CHECK = "cap_check"
    OVER = "over"


@dataclass(frozen=True, slots=True)
class PilePlay:
    """One play of the current round, face down on the pile: who, which cards, what claim."""

    seat: int
    cards: Hand
    claim: Rank

    @property
    def truthful(self) -> bool:
        """Every card is of the claimed rank."""
        return self.cards[self.claim] == self.cards.size


class Ending(StrEnum):
    """How a game ended (RULES.md, End and ranking).

    - ``WENT_OUT``: a player played their last cards and it was believed or proved true.
    - ``CAP_FEWEST``: the play cap ended it; the one player with the fewest cards won.
    - ``CAP_DRAW``: the play cap ended it with the fewest cards shared: a draw.
    """

    WENT_OUT = "went_out"
    CAP_FEWEST = "cap_fewest"
    CAP_DRAW = "cap_draw"


@dataclass(frozen=True, slots=True)
class Result:
    """The end of a game: ``places[i]`` is seat i's place (1 = first, shared places for ties),
    ``winner`` the winning seat or ``None`` for a draw, ``capped`` whether the play cap ended it."""

    places: tuple[int, ...]
    winner: int | None
    draw: bool
    capped: bool
    ending: Ending | None = None  # filled in from the other fields when not given

    def __post_init__(self) -> None:
        if self.ending is None:
            ending = Ending.WENT_OUT if not self.capped else Ending.CAP_DRAW if self.draw else Ending.CAP_FEWEST
            object.__setattr__(self, "ending", ending)


@dataclass(frozen=True, slots=True)
class GameState:
    """The whole state the rules need, and nothing more (history lives in the record).

    - ``variant``: the claim rules.
    - ``hands``: one :class:`Hand` per seat.
    - ``pile``: the current round's plays, oldest first (empty between rounds). At most 52
      plays, since each adds a card; so the state stays small whatever the game's length.
    - ``current``: the seat to act, ``None`` once the game is over.
    - ``plays``: the number of plays made in the game (challenges and beliefs do not count).
    - ``result``: set once the game is over.
    """

    variant: Variant
    hands: tuple[Hand, ...]
    pile: tuple[PilePlay, ...] = ()
    current: int | None = 0
    plays: int = 0
    result: Result | None = None

    # -- derived facts ---------------------------------------------------------------------

    @property
    def players(self) -> int:
        """Number of seats."""
        return len(self.hands)

    @property
    def pile_size(self) -> int:
        """Cards on the pile."""
        return sum(p.cards.size for p in self.pile)

    @property
    def pile_cards(self) -> Hand:
        """All cards on the pile as one hand (hidden information)."""
        return sum((p.cards for p in self.pile), EMPTY_HAND)

    @property
    def hand_sizes(self) -> tuple[int, ...]:
        """Cards in each seat's hand."""
        return tuple(h.size for h in self.hands)

    @property
    def round_claim(self) -> Rank | None:
        """The rank claimed by the current round's opener, ``None`` on an empty pile."""
        return self.pile[0].claim if self.pile else None

    @property
    def phase(self) -> Phase:
        """What the current player may do; see :class:`Phase`."""
        if self.result is not None:
            return Phase.OVER
        if not self.pile:
            return Phase.OPENING
        if self.plays >= PLAY_CAP:
            return Phase.CAP_CHECK
        if self.hands[self.pile[-1].seat].size == 0:
            return Phase.FINAL_CHECK
        return Phase.PLAYING

    @property
    def required_claim(self) -> Rank | None:
        """The rank the next play must claim, ``None`` when the opener of a russian round may
        claim any rank."""
        return self.variant.forced_claim(self.plays, self.round_claim)

    # -- serialization -----------------------------------------------------------------------

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict with ``schema_version``; hands and plays in the compact one
        character per card encoding (``A23456789TJQK``)."""
        d: dict[str, Any] = {
            "schema_version": SCHEMA_VERSION,
            "variant": self.variant.name,
            "hands": [h.to_str() for h in self.hands],
            "pile": [[p.seat, p.cards.to_str(), p.claim.char] for p in self.pile],
            "current": self.current,
            "plays": self.plays,
        }
        if self.result is not None:
            r = self.result
            d["result"] = {
                "places": list(r.places),
                "winner": r.winner,
                "draw": r.draw,
                "capped": r.capped,
                "ending": str(r.ending),
            }
        return d

    def to_json(self) -> str:
        """Compact JSON of :meth:`to_dict` (no spaces). Well under 2 KB: at most 52 cards in
        hands and pile, and at most 52 plays on the pile."""
        return json.dumps(self.to_dict(), separators=(",", ":"))

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> GameState:
        """Inverse of :meth:`to_dict`. Raises :class:`InvalidState`."""
        try:
            if d.get("schema_version") != SCHEMA_VERSION:
                raise InvalidState(f"unsupported schema_version {d.get('schema_version')!r}")
            result = d.get("result")
            hands, pile, current, plays = d["hands"], d["pile"], d["current"], d["plays"]
            if not isinstance(hands, list) or not MIN_PLAYERS <= len(hands) <= MAX_PLAYERS:
                raise InvalidState(f"hands must be a list of {MIN_PLAYERS} to {MAX_PLAYERS} strings")
            if not all(isinstance(h, str) for h in hands):
                raise InvalidState("each hand must be a string")
            if not isinstance(pile, list) or not all(
                isinstance(p, list)
                and len(p) == 3
                and type(p[0]) is int
                and 0 <= p[0] < len(hands)
                and isinstance(p[1], str)
                and p[1]
                and isinstance(p[2], str)
                for p in pile
            ):
                raise InvalidState("pile must be a list of [seat, cards, claim]")
            if current is not None and (type(current) is not int or not 0 <= current < len(hands)):
                raise InvalidState(f"bad current seat {current!r}")
            if type(plays) is not int or plays < 0:
                raise InvalidState(f"bad play count {plays!r}")
            return cls(
                variant=lookup_variant(d["variant"]),
                hands=tuple(Hand.from_str(h) for h in hands),
                pile=tuple(PilePlay(s, Hand.from_str(c), Rank.from_str(r)) for s, c, r in pile),
                current=current,
                plays=plays,
                result=None
                if result is None
                else Result(
                    tuple(result["places"]),
                    result["winner"],
                    bool(result["draw"]),
                    bool(result["capped"]),
                    Ending(result["ending"]) if "ending" in result else None,
                ),
            )
        except InvalidState:
            raise
        except (KeyError, TypeError, ValueError, AttributeError) as e:
            raise InvalidState(f"bad state: {e}") from e

    @classmethod
    def from_json(cls, text: str | bytes) -> GameState:
        """Inverse of :meth:`to_json`. Raises :class:`InvalidState`."""
        try:
            d = json.loads(text)
        except ValueError as e:
            raise InvalidState(f"bad JSON: {e}") from e
        if not isinstance(d, dict):
            raise InvalidState("state is not a JSON object")
        return cls.from_dict(d)


# -- the deal ------------------------------------------------------------------------------------


def deal(players: int, rng: random.Random) -> tuple[Hand, ...]:
    """Shuffle the 52-card deck with ``rng`` and deal one card at a time from seat 0, clockwise
    (RULES.md, Deal): seats 0 .. (52 mod n) - 1 get one card more.

    Raises ``ValueError`` unless 3 <= ``players`` <= 6.
    """
    _check_players(players)
    deck = list(FULL_DECK.ranks())
    rng.shuffle(deck)
    return tuple(Hand.from_ranks(deck[seat::players]) for seat in range(players))


def new_game(players: int, variant: Variant | str, rng: random.Random | int) -> GameState:
    """A new game: a fresh deal from ``rng`` (or ``random.Random(rng)`` for an int seed), seat 0
    to open the first round. There is no unseeded fallback: every game replays from its seed.

    Raises ``ValueError`` for a bad player count, :class:`~core.rules.UnknownVariant` for a bad
    variant name, ``TypeError`` when ``rng`` is neither a ``random.Random`` nor an int.
    """
    if isinstance(rng, bool) or not isinstance(rng, random.Random | int):
        raise TypeError(f"new_game needs a random.Random or an int seed, not {rng!r}")
    v = lookup_variant(variant) if isinstance(variant, str) else variant
    return GameState(variant=v, hands=deal(players, rng if isinstance(rng, random.Random) else random.Random(rng)))


def from_deal(variant: Variant | str, hands: Sequence[Hand]) -> GameState:
    """A game starting from a given deal (a record's ``hands``), seat 0 to open.

    Raises ``ValueError`` for fewer than 3 or more than 6 hands.
    """
    _check_players(len(hands))
    v = lookup_variant(variant) if isinstance(variant, str) else variant
    return GameState(variant=v, hands=tuple(hands))


def _check_players(n: int) -> None:
    if not MIN_PLAYERS <= n <= MAX_PLAYERS:
        raise ValueError(f"{MIN_PLAYERS} to {MAX_PLAYERS} players, not {n}")


# -- ranking -------------------------------------------------------------------------------------


def rank_places(hand_sizes: Sequence[int], winner: int | None = None) -> tuple[int, ...]:
    """Standard competition ranking by hand size (fewer cards, better place), RULES.md.

    With a ``winner`` (a player who went out), the winner is 1st and the others are ranked from
    2nd. Without, the fewest cards share 1st place.

    >>> rank_places([0, 5, 3, 5], winner=0)
    (1, 3, 2, 3)
    >>> rank_places([4, 2, 2, 7])
    (3, 1, 1, 4)
    """
    others = [s for i, s in enumerate(hand_sizes) if i != winner]
    base = 2 if winner is not None else 1
    return tuple(1 if i == winner else base + sum(1 for o in others if o < size) for i, size in enumerate(hand_sizes))


def _finish(hands: tuple[Hand, ...], winner: int | None, capped: bool) -> Result:
    sizes = [h.size for h in hands]
    ending = Ending.WENT_OUT if winner is not None else None
    if winner is None:
        fewest = min(sizes)
        leaders = [i for i, s in enumerate(sizes) if s == fewest]
        winner = leaders[0] if len(leaders) == 1 else None
        draw = winner is None
    else:
        draw = False
    return Result(rank_places(sizes, winner), winner, draw, capped, ending)


# -- the entry point -----------------------------------------------------------------------------


def apply(state: GameState, seat: int, action: Action) -> tuple[GameState, list[Event]]:
    """Apply ``seat``'s ``action`` to ``state``: ``(new_state, events)``.

    Raises the :class:`~core.errors.IllegalActionError` subclass of the first rule broken, in the
    order of GAME_RECORD.md (``game_over``, ``not_your_turn``, ``play_not_allowed``,
    ``believe_not_allowed``, ``challenge_not_allowed``, ``bad_card_count``,
    ``cards_not_in_hand``, ``claim_not_allowed``); ``state`` is never modified.
    """
    if state.result is not None:
        raise GameOverError("the game is over")
    if seat != state.current:
        raise NotYourTurnError(f"seat {seat} acted, seat {state.current} is to act")
    phase = state.phase
    if isinstance(action, Play):
        if phase in (Phase.FINAL_CHECK, Phase.CAP_CHECK):
            raise PlayNotAllowedError(f"a play is not allowed during a {phase.value}: challenge or believe")
        return _play(state, seat, action)
    if isinstance(action, Believe):
        if phase not in (Phase.FINAL_CHECK, Phase.CAP_CHECK):
            raise BelieveNotAllowedError("believe only at a final check or after the play cap")
        return _believe(state, seat, phase)
    if isinstance(action, Challenge):
        if not state.pile:
            raise ChallengeNotAllowedError("nothing to challenge: the pile is empty")
        return _challenge(state, seat, phase)
    raise TypeError(f"not an action: {action!r}")


def _play(state: GameState, seat: int, action: Play) -> tuple[GameState, list[Event]]:
    count = len(action.cards)
    if not 1 <= count <= MAX_PLAY_CARDS:
        raise BadCardCountError(f"a play has 1 to {MAX_PLAY_CARDS} cards, not {count}")
    cards = action.hand
    hand = state.hands[seat]
    if not hand.contains(cards):
        raise CardsNotInHandError(f"seat {seat} does not hold {' '.join(map(str, action.cards))}")
    required = state.required_claim
    claim = action.claim
    if required is None:
        if claim is None:
            raise ClaimNotAllowedError("the opener of a russian round must claim a rank")
    elif claim is None and not state.variant.free_opening_claim:
        claim = required
    elif claim != required:
        raise ClaimNotAllowedError(f"the claim must be {required}, not {claim}")
    assert claim is not None
    hands = _replace(state.hands, seat, hand - cards)
    plays = state.plays + 1
    n = state.players
    nxt = (seat + 1) % n
    new = GameState(state.variant, hands, (*state.pile, PilePlay(seat, cards, claim)), nxt, plays)
    events: list[Event] = [CardsPlayed(seat, count, claim, plays)]
    last_cards = hands[seat].size == 0
    if plays >= PLAY_CAP:
        events.append(CheckStarted(nxt, seat, "cap", last_cards))
    elif last_cards:
        events.append(CheckStarted(nxt, seat, "final_check", True))
    return new, events


def _challenge(state: GameState, seat: int, phase: Phase) -> tuple[GameState, list[Event]]:
    last = state.pile[-1]
    player = last.seat
    truthful = last.truthful
    going_out = state.hands[player].size == 0
    loser = seat if truthful else player
    pile = state.pile_cards
    hands = _replace(state.hands, loser, state.hands[loser] + pile)
    events: list[Event] = [ChallengeResolved(seat, player, last.claim, last.cards.ranks(), truthful, loser, pile.size)]
    if going_out and truthful:
        return _end(state, hands, (), player, phase is Phase.CAP_CHECK, events)
    if phase is Phase.CAP_CHECK:
        return _end(state, hands, (), None, True, events)
    opener = player if truthful else seat
    events.append(RoundStarted(opener))
    return GameState(state.variant, hands, (), opener, state.plays), events


def _believe(state: GameState, seat: int, phase: Phase) -> tuple[GameState, list[Event]]:
    last = state.pile[-1]
    player = last.seat
    truthful = last.truthful
    going_out = state.hands[player].size == 0
    if truthful:
        hands, pile, taker, taken = state.hands, state.pile, None, 0
    else:
        cards = state.pile_cards
        hands = _replace(state.hands, seat, state.hands[seat] + cards)
        pile, taker, taken = (), seat, cards.size
    events: list[Event] = [Believed(seat, player, last.claim, last.cards.ranks(), truthful, taker, taken)]
    return _end(state, hands, pile, player if going_out else None, phase is Phase.CAP_CHECK, events)


def _end(
    state: GameState,
    hands: tuple[Hand, ...],
    pile: tuple[PilePlay, ...],
    winner: int | None,
    capped: bool,
    events: list[Event],
) -> tuple[GameState, list[Event]]:
    if winner is not None:
        events.append(PlayerWon(winner))
    result = _finish(hands, winner, capped)
    events.append(GameEnded(result.places, result.winner, result.draw, result.capped))
    return GameState(state.variant, hands, pile, None, state.plays, result), events


def _replace(hands: tuple[Hand, ...], seat: int, hand: Hand) -> tuple[Hand, ...]:
    return (*hands[:seat], hand, *hands[seat + 1 :])
