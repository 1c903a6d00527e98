"""What ``search`` believes about its opponents, and the cheap ``counting`` its rollouts play.

:class:`OpponentModel` reads the game's public events: per opponent, how often they challenged
when they could, how many of their plays shown at a showdown were bluffs, and how they answered
final checks; from those, the chance that they play like ``honest`` (challenge only a proven
lie, believe a final check) rather than like ``counting``. :class:`RolloutCounting` is
``counting`` with its bluff cards chosen once per decision (a fifth of the cost, same choices
up to the tie-breaks among equally held ranks).
"""

from __future__ import annotations

import math
import random
from collections.abc import Sequence
from dataclasses import dataclass, field

from .cards import RANKS, Hand, Rank
from .counting import CountingPlayer
from .events import Believed, CardsPlayed, ChallengeResolved, CheckStarted, Event, RoundStarted
from .views import PlayerView

__all__ = ["PRIOR_CHALLENGE", "OpponentModel", "RolloutCounting", "odds"]

#: What ``counting`` players do, per variant, as the model's prior: how often they challenge
#: when they may, how often a play shown at a showdown is true (measured in self-play).
PRIOR_CHALLENGE = {"russian": 0.41, "classic": 0.26}
PRIOR_TRUTHFUL = {"russian": 0.30, "classic": 0.12}
#: The prior's weight, in observations.
PRIOR_WEIGHT = 10.0
#: How often an ``honest`` player challenges when it may (only a proven lie) and how often a
#: challenge of theirs loses (never: they challenge only what they proved), per variant. In
#: classic a lost challenge is weak evidence of ``counting`` (the model also stands for players
#: that challenge a little more than ``honest``, and ``counting`` there rarely challenges).
HONEST_CHALLENGE = {"russian": 0.04, "classic": 0.065}
HONEST_LOST = {"russian": 0.002, "classic": 0.15}
#: How often each kind challenges a final check: ``counting`` always (it believes only a claim
#: more than certain), ``honest`` only a proven lie.
COUNTING_FINAL = 0.97
HONEST_FINAL = 0.1
#: The prior chance that an opponent plays like ``honest``.
HONEST_PRIOR = 0.25


@dataclass
class _Seen:
    """What one opponent did so far: chances to challenge, challenges (and lost ones), plays
    shown, bluffs among them, final checks answered and challenged."""

    chances: int = 0
    challenges: int = 0
    lost: int = 0
    shown: int = 0
    bluffs: int = 0
    checks: int = 0
    check_challenges: int = 0


@dataclass
class OpponentModel:
    """Each seat's observed challenge rate and bluff rate (of plays shown at a showdown),
    smoothed toward ``counting``'s by a prior, and its chance of playing like ``honest``."""

    variant: str = "russian"
    seen: list[_Seen] = field(default_factory=list)

    @classmethod
    def from_history(cls, variant: str, players: int, history: Sequence[Event]) -> OpponentModel:
        """The model after ``history`` (the game's public events, oldest first)."""
        seen = [_Seen() for _ in range(players)]
        pile = 0
        checking = False  # the next answer is to a final check or the play cap
        for e in history:
            if isinstance(e, CardsPlayed):
                if pile:
                    seen[e.seat].chances += 1
                pile += 1
            elif isinstance(e, CheckStarted):
                checking = True
            elif isinstance(e, ChallengeResolved):
                s = seen[e.challenger]
                if checking:
                    s.checks += 1
                    s.check_challenges += 1
                else:
                    s.chances += 1
                    s.challenges += 1
                    s.lost += e.truthful
                seen[e.player].shown += 1
                seen[e.player].bluffs += not e.truthful
                pile, checking = 0, False
            elif isinstance(e, Believed):
                seen[e.believer].checks += 1
                seen[e.player].shown += 1
                seen[e.player].bluffs += not e.truthful
                checking = False
            elif isinstance(e, RoundStarted):
                pile = 0
        return cls(variant, seen)

    def challenge_rate(self, seat: int) -> float:
        """How often ``seat`` challenges when they may, over ``counting``'s (1: as often)."""
        s, prior = self.seen[seat], PRIOR_CHALLENGE[self.variant]
        return (s.challenges + prior * PRIOR_WEIGHT) / (s.chances + PRIOR_WEIGHT) / prior

    def truth_odds(self, seat: int) -> float:
        """The odds that a play of ``seat`` shown at a showdown was true, over ``counting``'s
        (square-rooted: the showdowns others chose are a biased sample)."""
        s, prior = self.seen[seat], PRIOR_TRUTHFUL[self.variant]
        rate = (s.shown - s.bluffs + prior * PRIOR_WEIGHT) / (s.shown + PRIOR_WEIGHT)
        return math.sqrt(odds(rate) / odds(prior))

    def honest_chance(self, seat: int) -> float:
        """The chance that ``seat`` plays like ``honest`` rather than ``counting``, from how
        often they challenged (and lost) and how they answered final checks (Bayes, with
        :data:`HONEST_PRIOR`)."""
        s, c = self.seen[seat], PRIOR_CHALLENGE[self.variant]
        h, lost = HONEST_CHALLENGE[self.variant], HONEST_LOST[self.variant]
        won = s.challenges - s.lost
        log_ratio = math.log(HONEST_PRIOR / (1 - HONEST_PRIOR))
        log_ratio += won * math.log(h / c) + s.lost * math.log(lost / c)
        log_ratio += (s.chances - s.challenges) * math.log((1 - h) / (1 - c))
        believed = s.checks - s.check_challenges
        log_ratio += s.check_challenges * math.log(HONEST_FINAL / COUNTING_FINAL)
        log_ratio += believed * math.log((1 - HONEST_FINAL) / (1 - COUNTING_FINAL))
        return 1 / (1 + math.exp(-max(-30.0, min(30.0, log_ratio))))


def odds(p: float) -> float:
    p = min(max(p, 1e-6), 1 - 1e-6)
    return p / (1 - p)


class RolloutCounting(CountingPlayer):
    """``counting`` for rollouts, one decision per instance: the order of its bluff cards
    (fewest held first, ties at random) is drawn once instead of once per option considered,
    and the unplaced cards counted once."""

    def __init__(self, seat: int, rng: random.Random) -> None:
        super().__init__(seat, rng)
        self._orders: dict[Rank | None, tuple[Rank, ...]] = {}
        self._pooled: tuple[float, list[float]] | None = None

    def _pool(self, view: PlayerView) -> tuple[float, list[float]]:  # type: ignore[override]
        if self._pooled is None:
            self._pooled = CountingPlayer._pool(view)
        pool, good = self._pooled
        return pool, list(good)

    def _junk(self, hand: Hand, keep: Rank | None, n: int) -> tuple[Rank, ...] | None:
        order = self._orders.get(keep)
        if order is None:
            ranks = [r for r in RANKS if hand[r] and r != keep]
            self.rng.shuffle(ranks)
            ranks.sort(key=lambda r: hand[r])
            order = self._orders[keep] = tuple(r for r in ranks for _ in range(hand[r]))
        return order[:n] if len(order) >= n else None
