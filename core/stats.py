"""Per-player statistics of one game, computed from its record (pure).

The figures a player profile shows (games, wins, places, draws, plays, bluffs made, bluffs
caught, bluffs that got through, challenges made and right, piles taken) all follow from the
record: the deal and the actions. Computing them by replaying keeps one source of truth and
makes a game count exactly as it was played.

>>> from core.record import Record
>>> rec = Record.from_dict({
...     "format": "cheat-record/1", "variant": "russian",
...     "hands": [["A", "7", "7", "K"], ["2", "10", "Q"], ["J"]],
...     "actions": [
...         {"seat": 0, "play": ["7", "7"], "claim": "7"},
...         {"seat": 1, "play": ["Q"], "claim": "7"},
...         {"seat": 2, "challenge": True},
...         {"seat": 2, "play": ["J"], "claim": "5"},
...         {"seat": 0, "believe": True}]})
>>> s = game_stats(rec)
>>> s[1].bluffs, s[1].bluffs_caught, s[2].challenges, s[2].challenges_right, s[2].won
(1, 1, 1, 1, True)
>>> s[0].piles_taken, s[0].place, s[2].bluffs_through
(1, 2, 1)
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from .actions import Play
from .events import Believed, ChallengeResolved
from .record import Record
from .state import apply

__all__ = ["SeatStats", "game_stats"]


@dataclass
class SeatStats:
    """One seat's figures in one game.

    ``plays``: cards placed on the pile (plays, not cards); ``bluffs``: plays with a card not of
    the claim; ``bluffs_caught``: bluffs challenged (the player took the pile);
    ``bluffs_through``: bluffs never caught (believed, implicitly by a play or explicitly);
    ``challenges``: «Не верю!» said, ``challenges_right``: those that caught a bluff;
    ``piles_taken``: times this seat took the pile; ``place``, ``won``, ``draw`` from the
    result (``place`` 0 while the game runs).
    """

    plays: int = 0
    bluffs: int = 0
    bluffs_caught: int = 0
    bluffs_through: int = 0
    challenges: int = 0
    challenges_right: int = 0
    piles_taken: int = 0
    place: int = 0
    won: bool = False
    draw: bool = False

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def game_stats(record: Record) -> list[SeatStats]:
    """Replay ``record`` and count each seat's figures. Raises the engine's
    :class:`~core.errors.IllegalActionError` if the record holds an illegal action."""
    state = record.initial_state()
    stats = [SeatStats() for _ in record.hands]
    for seat, action in record.actions:
        if isinstance(action, Play):
            stats[seat].plays += 1
            claim = action.claim if action.claim is not None else state.required_claim
            if any(c != claim for c in action.cards):
                stats[seat].bluffs += 1
                stats[seat].bluffs_through += 1  # until a challenge catches it
        state, events = apply(state, seat, action)
        for ev in events:
            if isinstance(ev, ChallengeResolved):
                stats[ev.challenger].challenges += 1
                stats[ev.loser].piles_taken += 1
                if not ev.truthful:
                    stats[ev.challenger].challenges_right += 1
                    stats[ev.player].bluffs_caught += 1
                    stats[ev.player].bluffs_through -= 1
            elif isinstance(ev, Believed) and ev.taker is not None:
                stats[ev.taker].piles_taken += 1
    if state.result is not None:
        for i, place in enumerate(state.result.places):
            stats[i].place = place
            stats[i].won = state.result.winner == i
            stats[i].draw = state.result.draw and place == 1
    return stats
