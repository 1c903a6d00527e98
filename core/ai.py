"""AI players: they read a :class:`~core.views.PlayerView` and the game's public events, nothing
else.

The strategies (``STRATEGIES``), all driven by an injected :class:`random.Random` so that a game
replays exactly from its seed; :func:`decision_rng` derives that stream from (game seed, seat,
action number), so a decision depends only on the view, the public history and those three:

- ``random``: at each decision, uniform over the kinds of action allowed (challenge, believe,
  play), then uniform within the kind (1 to 4 cards, which cards, the claim where it is free).
- ``honest``: plays true cards when it can (all it holds of the claimed rank, up to 4; as a
  russian opener, the rank it holds most of), otherwise bluffs with one card of the rank it holds
  fewest of. Challenges only when card counting proves a lie; at a final check or a cap answer
  believes unless it can prove a lie.
- ``counting``, ``skeptic``, ``tuned``: card counting and expected cost (:mod:`core.counting`).
- ``search``: determinised sampling and short rollouts with an opponent model fitted to what each
  opponent did in this game (:mod:`core.search`).

Every strategy is memoryless: a decision is a function of the current view, the public events
so far and the random draws, so the bot (stateless between taps) creates a fresh player for each
decision.

>>> import random
>>> from core import new_game, view, apply
>>> s = new_game(4, "russian", random.Random(5))
>>> action = make_player("counting", 0, random.Random(0)).act(view(s, 0))
>>> s, events = apply(s, 0, action)
>>> s.current
1
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from typing import Protocol, runtime_checkable

from .actions import Action, Believe, Challenge, Play
from .ai_honest import HonestPlayer, provable_lie
from .cards import RANKS
from .counting import CountingPlayer, SkepticPlayer, TunedPlayer, p_at_least
from .events import Event
from .rules import MAX_PLAY_CARDS
from .search import SearchPlayer
from .views import PlayerView

__all__ = [
    "STRATEGIES",
    "CountingPlayer",
    "HonestPlayer",
    "Player",
    "RandomPlayer",
    "SearchPlayer",
    "SkepticPlayer",
    "TunedPlayer",
    "decision_rng",
    "make_player",
    "p_at_least",
    "provable_lie",
]

#: The strategy names :func:`make_player` accepts.
STRATEGIES: tuple[str, ...] = ("random", "honest", "counting", "skeptic", "tuned", "search")


@runtime_checkable
class Player(Protocol):
    """An AI seat. ``act`` is called only when ``view.my_turn``; it returns a legal action.
    ``history`` is the game's public events so far, oldest first (what :func:`~core.state.apply`
    returned for every action); players that keep no memory ignore it."""

    name: str

    def act(self, view: PlayerView, history: Sequence[Event] = ()) -> Action: ...


def decision_rng(seed: int | str, seat: int, action: int) -> random.Random:
    """The random stream of ``seat``'s decision at ``action`` (the number of actions applied so
    far) in the game of ``seed``: the same three give the same stream in any process, so a
    replay or a take-over makes the same decision.

    >>> decision_rng(7, 1, 12).random() == decision_rng(7, 1, 12).random()
    True
    """
    return random.Random(f"{seed}:{seat}:{action}")


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

    def act(self, view: PlayerView, history: Sequence[Event] = ()) -> Action:
        """A uniformly random legal action. Raises ``ValueError`` when it is not our turn."""
        legal = {
            "challenge": view.can_challenge,
            "believe": view.can_believe,
            "play": view.can_play and view.hand.size > 0,
        }
        kinds = [kind for kind, allowed in legal.items() if allowed]
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


# -- factory ---------------------------------------------------------------------------------------

_CLASSES: dict[str, Callable[[int, random.Random], Player]] = {
    "random": RandomPlayer,
    "honest": HonestPlayer,
    "counting": CountingPlayer,
    "skeptic": SkepticPlayer,
    "tuned": TunedPlayer,
    "search": SearchPlayer,
}


def make_player(name: str, seat: int, rng: random.Random) -> Player:
    """A new AI player of strategy ``name`` (one of :data:`STRATEGIES`) for ``seat``, drawing
    every random choice from ``rng``. Raises ``ValueError`` for an unknown name."""
    try:
        cls = _CLASSES[name]
    except (KeyError, TypeError):
        raise ValueError(f"unknown AI strategy: {name!r} (known: {', '.join(STRATEGIES)})") from None
    return cls(seat, rng)
