"""Ranks and hands.

Suits never matter in «Верю — не верю» (RULES.md, Table), so a card is its rank and a hand is a
multiset of ranks, kept as a :class:`Hand`: thirteen counts, one per rank, A first.

>>> Rank.from_str("10"), Rank.from_str("q")
(<Rank.TEN: 10>, <Rank.QUEEN: 12>)
>>> str(Rank.ACE), Rank.KING.char
('A', 'K')
>>> h = Hand.from_ranks([Rank.SEVEN, Rank.SEVEN, Rank.ACE])
>>> h.size, h[Rank.SEVEN], h.ranks()
(3, 2, (<Rank.ACE: 1>, <Rank.SEVEN: 7>, <Rank.SEVEN: 7>))
>>> h.to_str(), Hand.from_str("A77") == h
('A77', True)
>>> h - Hand.from_str("7")
Hand('A7')
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from enum import IntEnum
from operator import add as _add, ge as _ge, sub as _sub

__all__ = ["COPIES", "FULL_DECK", "RANKS", "RANKS_PER_DECK", "Hand", "InvalidRank", "Rank"]

#: Every rank appears this many times in the deck (RULES.md, Table: four of each rank).
COPIES = 4
#: Number of distinct ranks.
RANKS_PER_DECK = 13

_NAMES = ("A", "2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K")
# One character per rank, for the compact state encoding (T stands for ten).
_CHARS = "A23456789TJQK"


class InvalidRank(ValueError):
    """A string that does not name a rank (``A 2 … 10 J Q K``)."""


class Rank(IntEnum):
    """One of the 13 ranks, A lowest (1) to K highest (13), as in RULES.md.

    The record format (GAME_RECORD.md) writes ranks as ``A 2 3 4 5 6 7 8 9 10 J Q K``:
    :meth:`from_str` reads that form (case-insensitive, also ``T`` for ten) and ``str()``
    writes it.
    """

    ACE = 1
    TWO = 2
    THREE = 3
    FOUR = 4
    FIVE = 5
    SIX = 6
    SEVEN = 7
    EIGHT = 8
    NINE = 9
    TEN = 10
    JACK = 11
    QUEEN = 12
    KING = 13

    def __str__(self) -> str:
        return _NAMES[self - 1]

    @property
    def char(self) -> str:
        """The one-character code of the compact state encoding (``T`` for ten)."""
        return _CHARS[self - 1]

    @classmethod
    def from_str(cls, text: str) -> Rank:
        """Parse ``A 2 … 10 J Q K`` (or ``T`` for ten), case-insensitive.

        Raises :class:`InvalidRank` for anything else, including non-strings.
        """
        rank = _BY_NAME.get(text.upper()) if isinstance(text, str) else None
        if rank is None:
            raise InvalidRank(f"not a rank: {text!r}")
        return rank


_CHAR_SET = frozenset(_CHARS)
_set = object.__setattr__

RANKS: tuple[Rank, ...] = tuple(Rank)
_BY_NAME = {name: Rank(i + 1) for i, name in enumerate(_NAMES)}
_BY_NAME.update({c: Rank(i + 1) for i, c in enumerate(_CHARS)})


class Hand:
    """An immutable multiset of ranks: 13 counts, A first.

    Hands compare and hash by their counts; ``hand[rank]`` is a count, ``len(hand)`` and
    ``hand.size`` the number of cards. ``a + b`` and ``a - b`` are multiset sum and
    difference (difference raises ``ValueError`` when ``b`` is not contained in ``a``).
    """

    __slots__ = ("counts", "size")

    counts: tuple[int, ...]
    size: int

    def __init__(self, counts: Iterable[int] = (0,) * RANKS_PER_DECK) -> None:
        counts = tuple(counts)
        if len(counts) != RANKS_PER_DECK or min(counts) < 0:
            raise ValueError(f"a hand needs 13 non-negative counts, got {counts!r}")
        _set(self, "counts", counts)
        _set(self, "size", sum(counts))

    @classmethod
    def _trusted(cls, counts: tuple[int, ...]) -> Hand:
        # Internal fast path for counts already known to be 13 non-negative ints.
        h = object.__new__(cls)
        _set(h, "counts", counts)
        _set(h, "size", sum(counts))
        return h

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError("Hand is immutable")

    def __reduce__(self) -> tuple[type[Hand], tuple[tuple[int, ...]]]:
        # pickled by its counts (self-play sends deals to worker processes)
        return (Hand, (self.counts,))

    @classmethod
    def from_ranks(cls, ranks: Iterable[Rank | int]) -> Hand:
        """Build a hand from ranks (each may repeat)."""
        counts = [0] * RANKS_PER_DECK
        for r in ranks:
            counts[int(r) - 1] += 1
        return cls(counts)

    @classmethod
    def from_str(cls, text: str) -> Hand:
        """Parse the compact encoding: one character per card (``A23456789TJQK``)."""
        if isinstance(text, str) and _CHAR_SET.issuperset(text):
            return cls._trusted(tuple(text.count(c) for c in _CHARS))
        return cls.from_ranks(Rank.from_str(c) for c in text)

    def to_str(self) -> str:
        """The compact encoding: one character per card, ranks ascending."""
        return "".join(_CHARS[i] * c for i, c in enumerate(self.counts))

    def ranks(self) -> tuple[Rank, ...]:
        """All cards as ranks, ascending, with repeats."""
        return tuple(RANKS[i] for i, c in enumerate(self.counts) for _ in range(c))

    def distinct(self) -> tuple[Rank, ...]:
        """The ranks held at least once, ascending."""
        return tuple(RANKS[i] for i, c in enumerate(self.counts) if c)

    def contains(self, other: Hand) -> bool:
        """True when every card of ``other`` is in this hand (multiset inclusion)."""
        return all(map(_ge, self.counts, other.counts))

    def __getitem__(self, rank: Rank | int) -> int:
        return self.counts[int(rank) - 1]

    def __len__(self) -> int:
        return self.size

    def __bool__(self) -> bool:
        return self.size > 0

    def __iter__(self) -> Iterator[Rank]:
        return iter(self.ranks())

    def __add__(self, other: Hand) -> Hand:
        return Hand._trusted(tuple(map(_add, self.counts, other.counts)))

    def __sub__(self, other: Hand) -> Hand:
        if not self.contains(other):
            raise ValueError(f"{other!r} is not contained in {self!r}")
        return Hand._trusted(tuple(map(_sub, self.counts, other.counts)))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Hand) and self.counts == other.counts

    def __hash__(self) -> int:
        return hash(self.counts)

    def __repr__(self) -> str:
        return f"Hand({self.to_str()!r})"


EMPTY_HAND = Hand()
#: The 52-card deck as a hand: four of each rank.
FULL_DECK = Hand((COPIES,) * RANKS_PER_DECK)
