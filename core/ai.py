"""AI players: they read a :class:`~core.views.PlayerView` and the public events, nothing else.

Three strategies (``STRATEGIES``), all driven by an injected :class:`random.Random` so that a game
replays exactly from its seed:

- ``random``: at each decision, uniform over the kinds of action allowed (challenge, believe,
  play), then uniform within the kind (1 to 4 cards, which cards, the claim where it is free).
- ``honest``: plays true cards when it can (all it holds of the claimed rank, up to 4; as a
  russian opener, the rank it holds most of), otherwise bluffs with one card of the rank it holds
  fewest of. Challenges only when card counting proves a lie; at a final check or a cap answer
  believes unless it can prove a lie. Memoryless: it reads the current view only.
- ``counting``: estimates the probability that the last claim is true from the four-of-each-rank
  arithmetic (hypergeometric odds over the cards it cannot account for), its own hand and pile
  cards, what it has seen picked up, and the other claims of the round; then picks the action of
  least expected cost in cards (challenge, truthful play, a small bluff, a padded truthful play,
  going out). It distrusts players about to go out, challenges nearly every final check, and
  adapts to its opponents: it counts how often each player challenges (a next player who never
  challenges invites bigger bluffs, one who challenges often gets truthful plays) and how often
  each player's revealed plays were true. Created fresh from a single view (the bot is
  stateless between taps) it starts from priors and still plays sensibly; fed every action
  through :meth:`Player.observe` (self-play) it gets its full memory.

>>> import random
>>> from core import new_game, view, apply
>>> s = new_game(4, "russian", random.Random(5))
>>> players = [make_player("counting", seat, random.Random(seat)) for seat in range(4)]
>>> v = view(s, 0)
>>> action = players[0].act(v)
>>> s, events = apply(s, 0, action)
>>> for seat, p in enumerate(players):
...     p.observe(events, view(s, seat))
"""

from __future__ import annotations

import math
import random
from functools import lru_cache
from typing import Iterable, Protocol, Sequence, runtime_checkable

from .actions import Action, Believe, Challenge, Play
from .cards import COPIES, RANKS, Hand, Rank
from .events import Believed, CardsPlayed, ChallengeResolved, CheckStarted, Event, RoundStarted
from .rules import MAX_PLAY_CARDS
from .state import Phase
from .views import PlayerView

__all__ = [
    "Player",
    "RandomPlayer",
    "HonestPlayer",
    "CountingPlayer",
    "STRATEGIES",
    "make_player",
    "rebuild",
    "provable_lie",
    "p_at_least",
]

#: The strategy names :func:`make_player` accepts.
STRATEGIES: tuple[str, ...] = ("random", "honest", "counting")

_DECK = 52


@runtime_checkable
class Player(Protocol):
    """An AI seat. ``act`` is called only when ``view.my_turn``; it returns a legal action.

    ``observe`` is called after every action at the table with that action's public events and
    this player's view after it; a player may keep memory from it (or ignore it).
    """

    name: str

    def act(self, view: PlayerView) -> Action: ...

    def observe(self, events: Sequence[Event], view: PlayerView) -> None: ...


# -- shared helpers ------------------------------------------------------------------------------


def _claim_for(view: PlayerView, rank: Rank) -> Rank:
    """The claim to make: the forced one if any, else ``rank``."""
    required = view.required_claim
    return rank if required is None else required


def provable_lie(view: PlayerView) -> bool:
    """Whether card counting from ``view`` alone proves that some other player's claim of the
    current round is a lie (RULES.md four of each rank).

    For the rank ``r`` of the last claim: the cards of rank ``r`` that the other players claimed
    in this round exceed ``4 - (hand[r] + own_pile[r])``, the copies this player cannot account
    for. Used by ``honest`` to challenge. ``False`` when there is no claim or it is our own.
    """
    last = view.public.last_claim
    if last is None or last.seat == view.seat:
        return False
    r = last.claim
    claimed = sum(c.count for c in view.claims if c.claim == r and c.seat != view.seat)
    return claimed > COPIES - view.hand[r] - view.own_pile[r]


# -- random ----------------------------------------------------------------------------------------


class RandomPlayer:
    """Uniform over the kinds of action allowed, then uniform within the kind.

    A play takes 1 to ``min(4, hand)`` cards (count uniform), the cards a uniform sample of the
    hand, the claim uniform over the 13 ranks where it is free.
    """

    name = "random"

    def __init__(self, seat: int, rng: random.Random) -> None:
        self.seat = seat
        self.rng = rng

    def act(self, view: PlayerView) -> Action:
        """A uniformly random legal action. Raises ``ValueError`` when it is not our turn."""
        kinds = []
        if view.can_challenge:
            kinds.append("challenge")
        if view.can_believe:
            kinds.append("believe")
        if view.can_play and view.hand.size:
            kinds.append("play")
        if not kinds:
            raise ValueError("no legal action: not this player's turn")
        kind = self.rng.choice(kinds)
        if kind == "challenge":
            return Challenge()
        if kind == "believe":
            return Believe()
        cards = view.hand.ranks()
        k = self.rng.randint(1, min(MAX_PLAY_CARDS, len(cards)))
        chosen = self.rng.sample(cards, k)
        claim = view.required_claim if view.required_claim is not None else self.rng.choice(RANKS)
        return Play(tuple(chosen), claim)

    def observe(self, events: Sequence[Event], view: PlayerView) -> None:
        """Keeps no memory."""


# -- honest ----------------------------------------------------------------------------------------


class HonestPlayer:
    """True cards when it can, else a one-card bluff; challenges only a proven lie.

    - Opener with a free claim: all (up to 4) cards of the rank it holds most of.
    - Otherwise: all (up to 4) cards of the required rank if it holds any, else one card of the
      rank it holds fewest of (ties at random), claimed as the required rank.
    - Challenges when :func:`provable_lie`; at a final check or cap answer believes otherwise.
    """

    name = "honest"

    def __init__(self, seat: int, rng: random.Random) -> None:
        self.seat = seat
        self.rng = rng

    def act(self, view: PlayerView) -> Action:
        """The honest move for ``view``. Raises ``ValueError`` when it is not our turn."""
        if not view.my_turn:
            raise ValueError("not this player's turn")
        if view.can_challenge and provable_lie(view):
            return Challenge()
        if view.can_believe:
            return Believe()
        hand = view.hand
        required = view.required_claim
        if required is None:
            best = max(hand.counts)
            ranks = [r for r in RANKS if hand[r] == best]
            r = self.rng.choice(ranks)
            return Play((r,) * min(MAX_PLAY_CARDS, hand[r]), r)
        if hand[required]:
            return Play((required,) * min(MAX_PLAY_CARDS, hand[required]), required)
        fewest = min(c for c in hand.counts if c)
        ranks = [r for r in RANKS if hand[r] == fewest]
        return Play((self.rng.choice(ranks),), required)

    def observe(self, events: Sequence[Event], view: PlayerView) -> None:
        """Keeps no memory."""


# -- counting --------------------------------------------------------------------------------------


@lru_cache(maxsize=None)
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


def p_at_least(pool: float, good: float, draws: float, need: int) -> float:
    """P(at least ``need`` successes) when drawing ``draws`` cards without replacement from
    ``pool`` cards of which ``good`` are successes (hypergeometric). Fractional ``good`` (an
    expected count) is interpolated linearly between its floor and ceiling. Returns 0..1."""
    pool_i = max(0, int(round(pool)))
    draws_i = max(0, min(pool_i, int(round(draws))))
    good = max(0.0, min(float(good), float(pool_i)))
    lo = int(good)
    frac = good - lo
    p = _p_at_least_int(pool_i, lo, draws_i, need)
    if frac > 1e-9:
        p = p * (1 - frac) + _p_at_least_int(pool_i, lo + 1, draws_i, need) * frac
    return p


class _Beta:
    """A success rate with a prior: ``(hits + prior*weight) / (n + weight)``."""

    __slots__ = ("hits", "n")

    def __init__(self) -> None:
        self.hits = 0
        self.n = 0

    def add(self, hit: bool) -> None:
        self.hits += hit
        self.n += 1

    def mean(self, prior: float, weight: float) -> float:
        return (self.hits + prior * weight) / (self.n + weight)


class CountingPlayer:
    """Card counting, expected-cost decisions and opponent modelling (see the module docstring).

    Tunable constants are class attributes (units: cards). Memory, filled by :meth:`observe`:

    - ``known[s][r]``: cards of rank ``r`` believed to be in seat ``s``'s hand because ``s`` was
      seen taking them (showdown reveals and our own cards in a pile ``s`` picked up), reduced
      when ``s`` claims that rank;
    - per seat: challenge rate when facing an ordinary play, challenge rate at final checks, and
      the share of their revealed plays that were true (by size: one card / more).
    """

    name = "counting"

    OPEN_VALUE = 0.5  # what opening the next round is worth
    WIN_VALUE = 40.0  # what going out is worth
    THREAT = (6.0, 3.0, 1.0, 0.5)  # extra value of stopping a player with 1, 2, 3, 4 cards left
    THREAT_SCALE = 0.3  # weight of THREAT
    CHALLENGE_COST = 1.0  # a turn spent challenging sheds no card
    CHALLENGE_PRIOR = 0.1  # prior challenge rate of a player facing an ordinary play
    FINAL_PRIOR = 0.6  # prior challenge rate at a final check
    OPENER_TRUST = 0.97  # prior that a russian opener's claim (a free choice) is true
    PRIOR_WEIGHT = 4.0  # pseudo-observations behind every prior rate
    BELIEVE_FINAL_ABOVE = 0.93  # believe a final check only when the claim is this likely true
    MULTI_RATIO = (3.0, 5.0, 8.0)  # likelihood ratio true/bluff of a claim of 2, 3, 4 cards
    FLOOR = 0.03  # least probability of an unproven claim
    NEAR_OUT_TRUST = 0.85  # trust factor for a player left with 1 or 2 cards

    def __init__(self, seat: int, rng: random.Random) -> None:
        self.seat = seat
        self.rng = rng
        self.known: dict[int, list[float]] = {}
        self.challenges: dict[int, _Beta] = {}
        self.final_challenges: dict[int, _Beta] = {}
        self.truth_single: dict[int, _Beta] = {}
        self.truth_multi: dict[int, _Beta] = {}
        self._claim_known: list[float] = []  # per claim of the round: known cards the claimer used
        self._prev_own_pile: Hand | None = None
        self._pending: tuple[int, str] | None = None  # (seat facing a decision, "play" | "final")

    # -- memory --------------------------------------------------------------------------------

    def _known(self, seat: int) -> list[int]:
        k = self.known.get(seat)
        if k is None:
            k = self.known[seat] = [0.0] * len(RANKS)
        return k

    def observe(self, events: Sequence[Event], view: PlayerView) -> None:
        """Update memory from one action's public events; ``view`` is ours after it."""
        for e in events:
            if isinstance(e, CardsPlayed):
                self._note_answer(e.seat, challenged=False)
                if e.seat != self.seat:
                    k = self._known(e.seat)
                    used = min(float(e.count), k[e.claim - 1])
                    k[e.claim - 1] -= used
                    rest = e.count - used
                    if rest > 1e-9:
                        # The other cards played are any of the hand: known cards fade.
                        before = view.hand_sizes[e.seat] + rest
                        keep = max(0.0, 1.0 - rest / before) if before > 0 else 0.0
                        for i in range(len(k)):
                            k[i] *= keep
                    self._claim_known.append(used)
                else:
                    self._claim_known.append(0)
                self._pending = ((e.seat + 1) % view.players, "play")
            elif isinstance(e, CheckStarted):
                self._pending = (e.seat, "final" if e.reason == "final_check" else "cap")
            elif isinstance(e, ChallengeResolved):
                self._note_answer(e.challenger, challenged=True)
                self._note_truth(e.player, e.revealed, e.truthful)
                if e.loser != self.seat:
                    k = self._known(e.loser)
                    gained = Hand.from_ranks(e.revealed) if e.player != self.seat else Hand()
                    if self._prev_own_pile is not None:
                        gained = gained + self._prev_own_pile
                    for i, c in enumerate(gained.counts):
                        k[i] += c
                self._claim_known = []
            elif isinstance(e, Believed):
                self._note_answer(e.believer, challenged=False)
                self._note_truth(e.player, e.revealed, e.truthful)
            elif isinstance(e, RoundStarted):
                self._claim_known = []
        # Known cards can never exceed a hand.
        for s, k in self.known.items():
            size = view.hand_sizes[s]
            total = sum(k)
            if total > size:
                f = size / total
                for i in range(len(k)):
                    k[i] *= f
        self._prev_own_pile = view.own_pile

    def _note_answer(self, seat: int, challenged: bool) -> None:
        pending = self._pending
        if pending is None or pending[0] != seat:
            return
        self._pending = None
        table = self.final_challenges if pending[1] == "final" else self.challenges if pending[1] == "play" else None
        if table is not None:
            table.setdefault(seat, _Beta()).add(challenged)

    def _note_truth(self, seat: int, revealed: Sequence[Rank], truthful: bool) -> None:
        table = self.truth_single if len(revealed) == 1 else self.truth_multi
        table.setdefault(seat, _Beta()).add(truthful)

    def _challenge_rate(self, seat: int) -> float:
        b = self.challenges.get(seat)
        return self.CHALLENGE_PRIOR if b is None else b.mean(self.CHALLENGE_PRIOR, self.PRIOR_WEIGHT)

    def _final_rate(self, seat: int) -> float:
        b = self.final_challenges.get(seat)
        return self.FINAL_PRIOR if b is None else b.mean(self.FINAL_PRIOR, self.PRIOR_WEIGHT)

    # -- counting --------------------------------------------------------------------------------

    def _pool(self, view: PlayerView) -> tuple[float, list[float]]:
        """Cards we cannot place (the pool) and, per rank, the copies among them (expected
        counts: what we saw others take fades as they play)."""
        hand, own = view.hand, view.own_pile
        good = [float(COPIES - hand.counts[i] - own.counts[i]) for i in range(len(RANKS))]
        pool = float(_DECK - hand.size - own.size)
        for s, k in self.known.items():
            if s == view.seat:
                continue
            for i, c in enumerate(k):
                if c:
                    take = min(c, max(0.0, good[i]))
                    good[i] -= take
                    pool -= take
        return pool, good

    def truth_probability(self, view: PlayerView) -> float:
        """Probability (0..1) that the last claim on the pile is true, from our counting and our
        model of the player who made it. 1.0 when there is no claim or it is our own."""
        claims = view.claims
        if not claims or claims[-1].seat == view.seat:
            return 1.0
        last = claims[-1]
        r = last.claim
        if last.count > COPIES - view.hand[r] - view.own_pile[r]:
            return 0.0  # proven: we hold the copies it would need
        pool_f, good_f = self._pool(view)
        use_known = len(self._claim_known) == len(claims)
        russian = view.public.variant == "russian"
        later_counts: dict[int, int] = {}
        for c in claims:
            later_counts[c.seat] = later_counts.get(c.seat, 0) + c.count
        t = 1.0
        for idx, c in enumerate(claims):
            later_counts[c.seat] -= c.count
            if c.seat == view.seat:
                continue
            ri = c.claim - 1
            known_used = self._claim_known[idx] if use_known else 0.0
            need = max(0, round(c.count - known_used))
            k = self.known.get(c.seat)
            known_total = sum(k) if k else 0.0
            draws = view.hand_sizes[c.seat] + later_counts[c.seat] + need - known_total
            p = p_at_least(pool_f, good_f[ri], max(draws, 0.0), need)
            if idx == 0 and russian:
                p = max(p, self.OPENER_TRUST)
            # A claim of several cards is rarely a bluff from a sensible player.
            if c.count >= 2 and 0 < p < 1:
                ratio = self.MULTI_RATIO[min(c.count, MAX_PLAY_CARDS) - 2]
                p = p * ratio / (p * ratio + (1 - p))
            table = self.truth_single if c.count == 1 else self.truth_multi
            b = table.get(c.seat)
            if b is not None:
                p = b.mean(p, self.PRIOR_WEIGHT)
            t = min(1.0, max(p, self.FLOOR))
            # Expected true cards of that claim leave the pool.
            good_f[ri] = max(0.0, good_f[ri] - need * t)
            pool_f = max(0.0, pool_f - need)
        if view.hand_sizes[last.seat] <= 2 and not (russian and len(claims) == 1):
            t *= self.NEAR_OUT_TRUST
        return t

    def _next_challenge_prob(self, view: PlayerView, claim: Rank, count: int, bluff: bool) -> float:
        """Probability that the next player challenges our claim of ``count`` cards of
        ``claim``: a proof from their hand plus their habit."""
        nxt = (view.seat + 1) % view.players
        pool, good = self._pool(view)
        ri = claim - 1
        claimed = count + sum(c.count for c in view.claims if c.claim == claim and c.seat != nxt)
        need = COPIES - claimed + 1  # copies the next player must hold to prove the lie
        nxt_pile = sum(c.count for c in view.claims if c.seat == nxt)
        proof = p_at_least(pool, good[ri], view.hand_sizes[nxt] + nxt_pile, need) if bluff else 0.0
        if claimed > COPIES:
            proof = 1.0 if bluff else proof
        rate = self._challenge_rate(nxt) * (1.0 + 0.35 * (count - 1))
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
        out: list[Rank] = []
        for r in ranks:
            for _ in range(hand[r]):
                if len(out) == n:
                    break
                out.append(r)
        return tuple(out) if len(out) == n else None

    def act(self, view: PlayerView) -> Action:
        """The move of least expected cost. Raises ``ValueError`` when it is not our turn."""
        if not view.my_turn:
            raise ValueError("not this player's turn")
        phase = view.phase
        if phase is Phase.FINAL_CHECK:
            t = self.truth_probability(view) * 0.85
            return Believe() if t >= self.BELIEVE_FINAL_ABOVE else Challenge()
        if phase is Phase.CAP_CHECK:
            t = self.truth_probability(view)
            return Challenge() if t < 0.5 else Believe()
        hand = view.hand
        pile = view.pile_size
        options: list[tuple[float, Action]] = []
        if view.can_challenge:
            t = self.truth_probability(view)
            last = view.claims[-1]
            stop = self._threat(view.hand_sizes[last.seat])
            if t == 0.0:
                return Challenge()
            options.append((t * pile - (1 - t) * (self.OPEN_VALUE + stop) + self.CHALLENGE_COST, Challenge()))
        required = view.required_claim
        nxt = (view.seat + 1) % view.players
        final_rate = self._final_rate(nxt)
        if required is None:
            # A russian opener: the rank we hold most of (ties at random), truthfully.
            best = max(hand.counts)
            ranks = [r for r in RANKS if hand[r] == best]
            claim = self.rng.choice(ranks)
        else:
            claim = required
        k_true = min(MAX_PLAY_CARDS, hand[claim])
        if k_true:
            cards = (claim,) * k_true
            if k_true == hand.size:
                options.append((-self.WIN_VALUE, Play(cards, claim)))
            else:
                q = self._next_challenge_prob(view, claim, k_true, bluff=False)
                options.append((-k_true - q * self.OPEN_VALUE, Play(cards, claim)))
                if k_true < MAX_PLAY_CARDS:
                    junk = self._junk(hand, claim, 1)
                    if junk is not None and k_true + 1 < hand.size:
                        q = self._next_challenge_prob(view, claim, k_true + 1, bluff=True)
                        n = k_true + 1
                        options.append((-n + q * (pile + n) + 0.3, Play(cards + junk, claim)))
        for b in range(1, min(MAX_PLAY_CARDS, hand.size) + 1):
            junk = self._junk(hand, claim, b)
            if junk is None:
                break
            if b == hand.size:
                # Going out on a bluff: the next player must challenge or believe.
                proof = 1.0 - (1.0 - self._next_challenge_prob(view, claim, b, bluff=True))
                q = max(final_rate, proof)
                value = -(1 - q) * self.WIN_VALUE + q * (pile + b)
            else:
                q = self._next_challenge_prob(view, claim, b, bluff=True)
                value = -b + q * (pile + b) + 0.3 * (b - 1)
            options.append((value, Play(junk, claim)))
        if not options:  # pragma: no cover - a legal play always exists when can_play
            raise ValueError("no legal action")
        best_value = min(v for v, _ in options)
        best = [a for v, a in options if v <= best_value + 1e-9]
        return best[0] if len(best) == 1 else self.rng.choice(best)


# -- factory ---------------------------------------------------------------------------------------

_CLASSES = {"random": RandomPlayer, "honest": HonestPlayer, "counting": CountingPlayer}


def make_player(name: str, seat: int, rng: random.Random) -> Player:
    """A new AI player of strategy ``name`` (one of :data:`STRATEGIES`) for ``seat``, drawing
    every random choice from ``rng``. Raises ``ValueError`` for an unknown name."""
    try:
        cls = _CLASSES[name]
    except (KeyError, TypeError):
        raise ValueError(f"unknown AI strategy: {name!r} (known: {', '.join(STRATEGIES)})") from None
    return cls(seat, rng)


def rebuild(
    name: str, seat: int, rng: random.Random, history: Iterable[tuple[Sequence[Event], PlayerView]]
) -> Player:
    """A player of strategy ``name`` with its memory rebuilt from ``history``: the public events
    of each action of the game so far, oldest first, each with this seat's view after it (what
    :meth:`Player.observe` would have received). Raises ``ValueError`` for an unknown name."""
    player = make_player(name, seat, rng)
    for events, v in history:
        player.observe(events, v)
    return player
