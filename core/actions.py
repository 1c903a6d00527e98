"""The actions a player can take: a small closed set of frozen value types.

>>> p = Play.of("7", "7", claim="7")
>>> p
Play(cards=(<Rank.SEVEN: 7>, <Rank.SEVEN: 7>), claim=<Rank.SEVEN: 7>)
>>> p.hand.size, p.is_truthful
(2, True)
>>> Play.of("Q", claim="7").is_truthful
False
>>> Challenge() == Challenge(), Believe()
(True, Believe())
>>> to_str(p), from_str("77=7") == p, to_str(Challenge()), from_str("believe")
('77=7', True, 'challenge', Believe())
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TypeAlias

from .cards import Hand, InvalidRank, Rank

__all__ = ["Action", "Believe", "Challenge", "NotationError", "Play", "from_str", "to_str"]


@dataclass(frozen=True, slots=True)
class Play:
    """Put ``cards`` (1 to 4, ranks ascending) on the pile and claim ``claim``.

    ``claim`` may be ``None`` in the classic variant, where the claimed rank is forced
    (RULES.md, Turns); the engine fills it in. The count is public and always true; the claim
    may be a lie.
    """

    cards: tuple[Rank, ...]
    claim: Rank | None = None

    def __post_init__(self) -> None:
        # ``Rank(c)`` of a ``Rank`` is the same member: skip the enum lookup (the AI's hot path).
        object.__setattr__(self, "cards", tuple(sorted(c if c.__class__ is Rank else Rank(c) for c in self.cards)))
        if self.claim is not None and self.claim.__class__ is not Rank:
            object.__setattr__(self, "claim", Rank(self.claim))

    @classmethod
    def of(cls, *cards: Rank | str | int, claim: Rank | str | int | None = None) -> Play:
        """Convenience constructor accepting rank names: ``Play.of("7", "Q", claim="7")``."""
        return cls(tuple(_rank(c) for c in cards), None if claim is None else _rank(claim))

    @property
    def hand(self) -> Hand:
        """The played cards as a :class:`Hand`."""
        return Hand.from_ranks(self.cards)

    @property
    def is_truthful(self) -> bool:
        """True when every card is of the claimed rank (RULES.md: truthful play)."""
        return self.claim is not None and all(c == self.claim for c in self.cards)


@dataclass(frozen=True, slots=True)
class Challenge:
    """«Не верю!»: challenge the play the previous player has just made."""


@dataclass(frozen=True, slots=True)
class Believe:
    """«Верю»: believe a final-check or cap play explicitly."""


Action: TypeAlias = Play | Challenge | Believe


def _rank(value: Rank | str | int) -> Rank:
    return Rank.from_str(value) if isinstance(value, str) else Rank(value)


class NotationError(ValueError):
    """A string that is not an action in the notation of :func:`to_str`."""


_CHALLENGE, _BELIEVE = "challenge", "believe"


def to_str(action: Action) -> str:
    """The action's notation, for logs and records: ``challenge``, ``believe``, or a play as its
    cards in the compact encoding (``A23456789TJQK``, ascending), ``=`` and the claim (``77Q=7``);
    a classic play whose claim is left to the engine has no ``=`` part (``77Q``)."""
    if isinstance(action, Challenge):
        return _CHALLENGE
    if isinstance(action, Believe):
        return _BELIEVE
    cards = Hand.from_ranks(action.cards).to_str()
    return cards if action.claim is None else f"{cards}={action.claim.char}"


def from_str(text: str) -> Action:
    """Parse the notation of :func:`to_str` (case-insensitive; ``10`` also reads as ``T``).
    Raises :class:`NotationError`."""
    word = text.strip().lower() if isinstance(text, str) else ""
    if word == _CHALLENGE:
        return Challenge()
    if word == _BELIEVE:
        return Believe()
    cards, sep, claim = word.upper().replace("10", "T").partition("=")
    if not cards:
        raise NotationError(f"not an action: {text!r} (a play needs its cards)")
    try:
        ranks = tuple(Rank.from_str(c) for c in cards)
        return Play(ranks, Rank.from_str(claim) if sep else None)
    except InvalidRank as e:
        raise NotationError(f"not an action: {text!r}") from e
