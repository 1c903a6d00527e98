"""Game records in the ``cheat-record/1`` format (GAME_RECORD.md): read, write, replay.

A record is to this game what PGN is to chess: the deal and the actions, enough to replay the
whole game. :meth:`Record.from_dict` validates the schema strictly and raises
:class:`InvalidRecord` for a malformed document; :func:`replay` applies the actions and reports
the outcome, stopping at the first illegal one.

>>> rec = Record.from_dict({
...     "format": "cheat-record/1", "variant": "russian",
...     "hands": [["A", "7", "7", "K"], ["2", "10", "Q"], ["J"]],
...     "actions": [
...         {"seat": 0, "play": ["7", "7"], "claim": "7"},
...         {"seat": 1, "play": ["Q"], "claim": "7"},
...         {"seat": 2, "challenge": True},
...         {"seat": 2, "play": ["J"], "claim": "5"},
...         {"seat": 0, "believe": True}]})
>>> out = replay(rec)
>>> out.summary()["winner"], out.summary()["places"], out.summary()["hand_sizes"]
(2, [2, 3, 1], [3, 5, 0])
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from .actions import Action, Believe, Challenge, Play
from .cards import COPIES, RANKS, Hand, Rank
from .errors import IllegalActionError
from .rules import MAX_PLAYERS, MIN_PLAYERS, VARIANTS
from .state import GameState, apply, from_deal

__all__ = [
    "FORMAT",
    "InvalidRecord",
    "Record",
    "ReplayOutcome",
    "action_from_dict",
    "action_to_dict",
    "record_of",
    "replay",
]

#: The value of the ``format`` key (GAME_RECORD.md).
FORMAT = "cheat-record/1"

_RANK_BY_NAME = {str(r): r for r in RANKS}
_OPTIONAL_KEYS = ("players", "seed", "started_at", "meta")


class InvalidRecord(ValueError):
    """A document that breaks the ``cheat-record/1`` schema (GAME_RECORD.md: malformed)."""


@dataclass(frozen=True)
class Record:
    """A parsed record: ``variant`` name, the deal (``hands``, seat 0 first) and ``actions`` as
    ``(seat, action)`` pairs in order. ``players``, ``seed``, ``started_at`` and ``meta`` are
    optional and ignored by the replay."""

    variant: str
    hands: tuple[Hand, ...]
    actions: tuple[tuple[int, Action], ...] = ()
    players: tuple[str, ...] | None = None
    seed: int | str | None = None
    started_at: str | None = None
    meta: dict[str, Any] | None = field(default=None, compare=False)

    # -- writing ----------------------------------------------------------------------------

    def to_dict(self) -> dict[str, Any]:
        """The JSON-ready document; optional keys only when set."""
        d: dict[str, Any] = {
            "format": FORMAT,
            "variant": self.variant,
            "hands": [[str(r) for r in h.ranks()] for h in self.hands],
            "actions": [action_to_dict(s, a) for s, a in self.actions],
        }
        for key in _OPTIONAL_KEYS:
            value = getattr(self, key)
            if value is not None:
                d[key] = list(value) if key == "players" else value
        return d

    def to_json(self, indent: int | None = None) -> str:
        """The document as JSON text (UTF-8 safe; names are kept as they are)."""
        return json.dumps(self.to_dict(), ensure_ascii=False, indent=indent)

    def initial_state(self) -> GameState:
        """The state before the first action."""
        return from_deal(VARIANTS[self.variant], self.hands)

    # -- reading ----------------------------------------------------------------------------

    @classmethod
    def from_json(cls, text: str | bytes) -> Record:
        """Parse a JSON document. Raises :class:`InvalidRecord`."""
        try:
            doc = json.loads(text)
        except ValueError as e:
            raise InvalidRecord(f"not JSON: {e}") from None
        return cls.from_dict(doc)

    @classmethod
    def from_dict(cls, doc: Any) -> Record:
        """Validate and parse a decoded document. Raises :class:`InvalidRecord` for every
        schema break listed in GAME_RECORD.md."""
        if not isinstance(doc, dict):
            raise InvalidRecord("a record is a JSON object")
        if doc.get("format") != FORMAT:
            raise InvalidRecord(f"format must be {FORMAT!r}")
        variant = doc.get("variant")
        if not isinstance(variant, str) or variant not in VARIANTS:
            raise InvalidRecord("variant must be 'russian' or 'classic'")
        hands = _hands(doc.get("hands"))
        raw_actions = doc.get("actions")
        if not isinstance(raw_actions, list):
            raise InvalidRecord("actions must be a list")
        actions = tuple(action_from_dict(a, len(hands), i) for i, a in enumerate(raw_actions))
        players = doc.get("players")
        return cls(
            variant=variant,
            hands=hands,
            actions=actions,
            players=tuple(players) if isinstance(players, list) else None,
            seed=doc.get("seed"),
            started_at=doc.get("started_at"),
            meta=doc.get("meta"),
        )


def _hands(raw: Any) -> tuple[Hand, ...]:
    if not isinstance(raw, list) or not MIN_PLAYERS <= len(raw) <= MAX_PLAYERS:
        raise InvalidRecord(f"hands must be a list of {MIN_PLAYERS} to {MAX_PLAYERS} hands")
    hands = []
    for i, h in enumerate(raw):
        if not isinstance(h, list) or not h:
            raise InvalidRecord(f"hand {i} must be a non-empty list of ranks")
        hands.append(Hand.from_ranks(_rank(r, f"hand {i}") for r in h))
    for rank in RANKS:
        if sum(h[rank] for h in hands) > COPIES:
            raise InvalidRecord(f"rank {rank} appears more than {COPIES} times in the deal")
    return tuple(hands)


def _rank(value: Any, where: str) -> Rank:
    if isinstance(value, str):
        rank = _RANK_BY_NAME.get(value)
        if rank is not None:
            return rank
    raise InvalidRecord(f"{where}: {value!r} is not a rank (A 2 3 4 5 6 7 8 9 10 J Q K)")


def action_to_dict(seat: int, action: Action) -> dict[str, Any]:
    """One action in record form: ``{"seat": s, "play": [...], "claim": r}``,
    ``{"seat": s, "challenge": true}`` or ``{"seat": s, "believe": true}``."""
    if isinstance(action, Play):
        d: dict[str, Any] = {"seat": seat, "play": [str(r) for r in action.cards]}
        if action.claim is not None:
            d["claim"] = str(action.claim)
        return d
    if isinstance(action, Challenge):
        return {"seat": seat, "challenge": True}
    if isinstance(action, Believe):
        return {"seat": seat, "believe": True}
    raise TypeError(f"not an action: {action!r}")


def action_from_dict(raw: Any, players: int, index: int = 0) -> tuple[int, Action]:
    """Parse one record action for a table of ``players`` seats. Raises :class:`InvalidRecord`
    when it is not exactly one of the three forms."""
    where = f"action {index}"
    if not isinstance(raw, dict):
        raise InvalidRecord(f"{where}: not an object")
    seat = raw.get("seat")
    if type(seat) is not int or not 0 <= seat < players:
        raise InvalidRecord(f"{where}: seat must be an integer from 0 to {players - 1}")
    keys = set(raw) - {"seat"}
    if keys in ({"play"}, {"play", "claim"}):
        cards = raw["play"]
        if not isinstance(cards, list):
            raise InvalidRecord(f"{where}: play must be a list of ranks")
        ranks = tuple(_rank(r, where) for r in cards)
        claim = _rank(raw["claim"], where) if "claim" in raw else None
        return seat, Play(ranks, claim)
    if keys == {"challenge"} and raw["challenge"] is True:
        return seat, Challenge()
    if keys == {"believe"} and raw["believe"] is True:
        return seat, Believe()
    raise InvalidRecord(f"{where}: must be exactly one of play (+claim), challenge: true, believe: true")


@dataclass(frozen=True)
class ReplayOutcome:
    """What a replay reached: the final ``state``, the number of actions ``applied``, and, when
    an action was illegal, its ``error`` (the :class:`IllegalActionError`) at index ``applied``."""

    state: GameState
    applied: int
    error: IllegalActionError | None = None

    def summary(self) -> dict[str, Any]:
        """The replay output of GAME_RECORD.md: status, winner, draw, places, hand_sizes, pile,
        plays, current (or, after an illegal action, error, action, message)."""
        if self.error is not None:
            return {"error": self.error.code, "action": self.applied, "message": str(self.error)}
        s = self.state
        r = s.result
        return {
            "status": "finished" if r is not None else "running",
            "winner": r.winner if r is not None else None,
            "draw": r.draw if r is not None else False,
            "places": list(r.places) if r is not None else None,
            "hand_sizes": list(s.hand_sizes),
            "pile": s.pile_size,
            "plays": s.plays,
            "current": s.current,
        }


def replay(record: Record) -> ReplayOutcome:
    """Apply the record's actions in order from its deal. Stops at the first illegal action
    (reported in the outcome, never raised)."""
    state = record.initial_state()
    for i, (seat, action) in enumerate(record.actions):
        try:
            state, _ = apply(state, seat, action)
        except IllegalActionError as e:
            return ReplayOutcome(state, i, e)
    return ReplayOutcome(state, len(record.actions))


def record_of(variant: str, hands: Sequence[Hand], actions: Iterable[tuple[int, Action]], **optional: Any) -> Record:
    """A record from a deal and the actions applied to it (as the bot keeps them)."""
    return Record(variant, tuple(hands), tuple(actions), **optional)
