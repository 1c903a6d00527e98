"""The card-counting players: ``counting`` and its variants ``skeptic`` and ``tuned``.

``counting`` estimates the probability that the last claim is true from the four-of-each-rank
arithmetic (hypergeometric odds over the cards it cannot account for), its own hand and pile
cards, and the other claims of the round; then picks the action of least expected cost in cards
(challenge, truthful play, a small bluff, a padded truthful play, going out). It distrusts players
about to go out and challenges nearly every final check; how often the others challenge is a
fixed prior. ``skeptic`` is the same with less trust (a robustness opponent, fixed by issue 30);
``tuned`` the same with constants fitted per variant by self-play (:mod:`core.tuned`).
"""

from __future__ import annotations

import math
import random
from collections.abc import Sequence
from functools import cache, lru_cache

from .actions import Action, Believe, Challenge, Play
from .cards import COPIES, RANKS, Hand, Rank
from .events import Event
from .rules import MAX_PLAY_CARDS
from .state import Phase
from .tuned import TUNED
from .views import PlayerView

__all__ = ["CONSTANTS", "CountingPlayer", "SkepticPlayer", "TunedPlayer", "p_at_least"]

_DECK = 52

#: The constants a fitted player may change (class attributes of :class:`CountingPlayer`).
CONSTANTS: tuple[str, ...] = (
    "OPEN_VALUE",
    "THREAT_SCALE",
    "CHALLENGE_COST",
    "CHALLENGE_PRIOR",
    "FINAL_PRIOR",
    "OPENER_TRUST",
    "BELIEVE_FINAL_ABOVE",
    "MULTI_RATIO",
    "FLOOR",
    "NEAR_OUT_TRUST",
)


@cache
def _p_at_least_int(pool: int, good: int, draws: int, need: int) -> float:
    """Hypergeometric P(X >= need): ``draws`` cards from ``pool`` holding ``good`` successes."""
    if need <= 0:
        return 1.0
    good = max(0, min(good, pool))
    draws = max(0, min(draws, pool))
    if need > good or need > draws:
        return 0.0
    total = math.comb(pool, draws)
    if total == 0:
        return 0.0
    s = 0
    for x in range(need, min(good, draws) + 1):
        s += math.comb(good, x) * math.comb(pool - good, draws - x)
    return s / total


@lru_cache(maxsize=1 << 16)
def p_at_least(pool: float, good: float, draws: float, need: int) -> float:
    """P(at least ``need`` successes) when drawing ``draws`` cards without replacement from
    ``pool`` cards of which ``good`` are successes (hypergeometric). Fractional ``good`` (an
    expected count) is interpolated linearly between its floor and ceiling. Returns 0..1."""
    pool_i = max(0, round(pool))
    draws_i = max(0, min(pool_i, round(draws)))
    good = max(0.0, min(float(good), float(pool_i)))
    lo = int(good)
    frac = good - lo
    p = _p_at_least_int(pool_i, lo, draws_i, need)
    if frac > 1e-9:
        p = p * (1 - frac) + _p_at_least_int(pool_i, lo + 1, draws_i, need) * frac
    return p


class CountingPlayer:
    """Card counting and expected-cost decisions (see the module docstring), from one view.

    Tunable constants are class attributes (units: cards). Memoryless, as the bot uses it: a
    fresh player per decision.
    """

    name = "counting"

    OPEN_VALUE = 0.5  # what opening the next round is worth
    WIN_VALUE = 40.0  # what going out is worth
    THREAT = (6.0, 3.0, 1.0, 0.5)  # extra value of stopping a player with 1, 2, 3, 4 cards left
    THREAT_SCALE = 0.3  # weight of THREAT
    CHALLENGE_COST = 1.0  # a turn spent challenging sheds no card
    CHALLENGE_PRIOR = 0.1  # assumed challenge rate of a player facing an ordinary play
    FINAL_PRIOR = 0.6  # assumed challenge rate at a final check
    OPENER_TRUST = 0.97  # prior that a russian opener's claim (a free choice) is true
    BELIEVE_FINAL_ABOVE = 0.93  # believe a final check only when the claim is this likely true
    MULTI_RATIO = (3.0, 5.0, 8.0)  # likelihood ratio true/bluff of a claim of 2, 3, 4 cards
    FLOOR = 0.03  # least probability of an unproven claim
    NEAR_OUT_TRUST = 0.85  # trust factor for a player left with 1 or 2 cards

    def __init__(self, seat: int, rng: random.Random) -> None:
        self.seat = seat
        self.rng = rng

    # -- counting --------------------------------------------------------------------------------

    @staticmethod
    def _pool(view: PlayerView) -> tuple[float, list[float]]:
        """Cards we cannot place (the pool) and, per rank, the copies among them."""
        hand, own = view.hand, view.own_pile
        good = [float(COPIES - hand.counts[i] - own.counts[i]) for i in range(len(RANKS))]
        pool = float(_DECK - hand.size - own.size)
        return pool, good

    def truth_probability(self, view: PlayerView) -> float:
        """Probability (0..1) that the last claim on the pile is true, from our counting and
        priors on how players claim. 1.0 when there is no claim or it is our own."""
        claims = view.claims
        if not claims or claims[-1].seat == view.seat:
            return 1.0
        last = claims[-1]
        r = last.claim
        if last.count > COPIES - view.hand[r] - view.own_pile[r]:
            return 0.0  # proven: we hold the copies it would need
        pool_f, good_f = self._pool(view)
        russian = view.public.variant == "russian"
        sizes, me, floor, ratios = view.hand_sizes, view.seat, self.FLOOR, self.MULTI_RATIO
        later = [0] * len(sizes)  # cards each seat played after the claim at hand
        for c in claims:
            later[c.seat] += c.count
        t = 1.0
        for idx, c in enumerate(claims):
            seat, need = c.seat, c.count
            later[seat] -= need
            if seat == me:
                continue
            ri = c.claim - 1
            draws = sizes[seat] + later[seat] + need
            p = p_at_least(pool_f, good_f[ri], max(draws, 0), need)
            if idx == 0 and russian:
                p = max(p, self.OPENER_TRUST)
            # A claim of several cards is rarely a bluff from a sensible player.
            if need >= 2 and 0 < p < 1:
                ratio = ratios[min(need, MAX_PLAY_CARDS) - 2]
                p = p * ratio / (p * ratio + (1 - p))
            t = min(1.0, max(p, floor))
            # Expected true cards of that claim leave the pool.
            good_f[ri] = max(0.0, good_f[ri] - need * t)
            pool_f = max(0.0, pool_f - need)
        if view.hand_sizes[last.seat] <= 2 and not (russian and len(claims) == 1):
            t *= self.NEAR_OUT_TRUST
        return t

    def _next_challenge_prob(self, view: PlayerView, claim: Rank, count: int, bluff: bool) -> float:
        """Probability that the next player challenges our claim of ``count`` cards of
        ``claim``: a proof from their hand plus the usual challenge rate."""
        nxt = (view.seat + 1) % view.players
        pool, good = self._pool(view)
        ri = claim - 1
        claimed = count + sum(c.count for c in view.claims if c.claim == claim and c.seat != nxt)
        need = COPIES - claimed + 1  # copies the next player must hold to prove the lie
        nxt_pile = sum(c.count for c in view.claims if c.seat == nxt)
        proof = p_at_least(pool, good[ri], view.hand_sizes[nxt] + nxt_pile, need) if bluff else 0.0
        if claimed > COPIES:
            proof = 1.0 if bluff else proof
        rate = self.CHALLENGE_PRIOR * (1.0 + 0.35 * (count - 1))
        return min(1.0, proof + (1 - proof) * rate)

    # -- decisions ---------------------------------------------------------------------------------

    def _threat(self, size: int) -> float:
        return self.THREAT_SCALE * self.THREAT[size - 1] if 1 <= size <= len(self.THREAT) else 0.0

    def _junk(self, hand: Hand, keep: Rank | None, n: int) -> tuple[Rank, ...] | None:
        """``n`` cards to bluff with: the ranks we hold fewest of first (ties at random),
        never ``keep``. ``None`` when we lack them."""
        ranks = [r for r in RANKS if hand[r] and r != keep]
        self.rng.shuffle(ranks)
        ranks.sort(key=lambda r: hand[r])
        out = tuple(r for r in ranks for _ in range(hand[r]))[:n]
        return out if len(out) == n else None

    def act(self, view: PlayerView, history: Sequence[Event] = ()) -> Action:
        """The move of least expected cost (``history`` unused: memoryless). Raises
        ``ValueError`` when it is not our turn."""
        if not view.my_turn:
            raise ValueError("not this player's turn")
        if view.public.answering:
            return self._answer(view)
        options = self.options(view)
        if len(options) == 1:
            return options[0][1]
        best_value = min(v for v, _ in options)
        best_actions = [a for v, a in options if v <= best_value + 1e-9]
        return best_actions[0] if len(best_actions) == 1 else self.rng.choice(best_actions)

    def options(self, view: PlayerView) -> list[tuple[float, Action]]:
        """The costed choices of a turn that may play: ``(expected cost in cards, action)``,
        lowest best; only a challenge when the last claim is proven a lie."""
        options: list[tuple[float, Action]] = []
        if view.can_challenge:
            t = self.truth_probability(view)
            if t == 0.0:
                return [(0.0, Challenge())]
            stop = self._threat(view.hand_sizes[view.claims[-1].seat])
            options.append((t * view.pile_size - (1 - t) * (self.OPEN_VALUE + stop) + self.CHALLENGE_COST, Challenge()))
        claim = view.required_claim
        if claim is None:
            # A russian opener: the rank we hold most of (ties at random), truthfully.
            most = max(view.hand.counts)
            claim = self.rng.choice([r for r in RANKS if view.hand[r] == most])
        options += self._true_plays(view, claim)
        options += self._bluffs(view, claim)
        if not options:  # pragma: no cover - a legal play always exists when can_play
            raise ValueError("no legal action")
        return options

    def _answer(self, view: PlayerView) -> Action:
        """Challenge or believe at a final check or a cap answer."""
        if view.phase is Phase.FINAL_CHECK:
            t = self.truth_probability(view) * 0.85
            return Believe() if t >= self.BELIEVE_FINAL_ABOVE else Challenge()
        return Challenge() if self.truth_probability(view) < 0.5 else Believe()

    def _true_plays(self, view: PlayerView, claim: Rank) -> list[tuple[float, Action]]:
        """Costed truthful plays: every card of ``claim`` we hold (up to 4), and the same padded
        with one junk card."""
        hand, pile = view.hand, view.pile_size
        k_true = min(MAX_PLAY_CARDS, hand[claim])
        if not k_true:
            return []
        cards = (claim,) * k_true
        if k_true == hand.size:
            return [(-self.WIN_VALUE, Play(cards, claim))]
        q = self._next_challenge_prob(view, claim, k_true, bluff=False)
        options: list[tuple[float, Action]] = [(-k_true - q * self.OPEN_VALUE, Play(cards, claim))]
        if k_true < MAX_PLAY_CARDS:
            junk = self._junk(hand, claim, 1)
            if junk is not None and k_true + 1 < hand.size:
                n = k_true + 1
                q = self._next_challenge_prob(view, claim, n, bluff=True)
                options.append((-n + q * (pile + n) + 0.3, Play(cards + junk, claim)))
        return options

    def _bluffs(self, view: PlayerView, claim: Rank) -> list[tuple[float, Action]]:
        """Costed bluffs: 1 to 4 junk cards claimed as ``claim``."""
        hand, pile = view.hand, view.pile_size
        options: list[tuple[float, Action]] = []
        for b in range(1, min(MAX_PLAY_CARDS, hand.size) + 1):
            junk = self._junk(hand, claim, b)
            if junk is None:
                break
            if b == hand.size:
                # Going out on a bluff: the next player must challenge or believe.
                proof = 1.0 - (1.0 - self._next_challenge_prob(view, claim, b, bluff=True))
                q = max(self.FINAL_PRIOR, proof)
                value = -(1 - q) * self.WIN_VALUE + q * (pile + b)
            else:
                q = self._next_challenge_prob(view, claim, b, bluff=True)
                value = -b + q * (pile + b) + 0.3 * (b - 1)
            options.append((value, Play(junk, claim)))
        return options


class SkepticPlayer(CountingPlayer):
    """``counting`` with less trust in claims (issue 30 fixes these four constants): a
    robustness opponent that challenges more."""

    name = "skeptic"

    OPENER_TRUST = 0.75
    MULTI_RATIO = (1.5, 2.0, 3.0)
    CHALLENGE_COST = 0.3
    FLOOR = 0.05


class TunedPlayer(CountingPlayer):
    """``counting`` with the constants fitted for the game's variant (:data:`core.tuned.TUNED`;
    a constant not listed keeps ``counting``'s value)."""

    name = "tuned"

    def configure(self, variant: str) -> None:
        """Take ``variant``'s fitted constants (``act`` does this from the view)."""
        for key, value in TUNED.get(variant, {}).items():
            setattr(self, key, tuple(value) if isinstance(value, list) else value)

    def act(self, view: PlayerView, history: Sequence[Event] = ()) -> Action:
        """``counting``'s decision under the variant's fitted constants."""
        self.configure(view.public.variant)
        return super().act(view, history)
