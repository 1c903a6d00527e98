"""Self-play: measure AI strategies against each other over seeded games.

``python -m core.selfplay --players 4 --games 2000 --seats counting,honest,honest,honest --seed 1``

For each deal (seeded from ``--seed``) the game is played once per rotation of the seat
assignment over that same deal, so every strategy sits in every seat of every deal: ``G`` games
are ``ceil(G / N)`` deals times ``N`` rotations. Prints, per strategy: seat-games, wins, win rate
with a 95% Wilson interval, mean place, draws (shared first places), seat-games ended by the
play cap; and plays per second overall. ``--json`` prints the same as one JSON object.
``--jobs N`` plays the games in N processes (the figures do not depend on N); ``--records DIR``
writes each game's ``cheat-record/1`` record there (its AI seats in ``meta["ai"]``, so that
``python -m core.replay --ai`` can confirm every decision).

Only the engine's public entry points are used (``deal``, ``from_deal``, ``apply``, ``view``);
the players read views and public events only, and each decision draws from
:func:`~core.ai.decision_rng` of (game seed, seat, action number).
"""

from __future__ import annotations

import argparse
import json
import math
import random
import sys
import time
from collections.abc import Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from .actions import Action
from .ai import STRATEGIES, decision_rng, make_player
from .cards import Hand
from .events import Event
from .record import Record
from .rules import MAX_PLAYERS, MIN_PLAYERS
from .state import apply, deal, from_deal
from .views import view

__all__ = ["Outcome", "StrategyStats", "main", "play_game", "run", "wilson"]


def wilson(successes: int, trials: int, z: float = 1.959963984540054) -> tuple[float, float]:
    """The Wilson score interval for a binomial proportion: ``(low, high)``, both in 0..1.

    ``successes`` out of ``trials``; ``z`` the normal quantile (default: 95% two-sided).
    With no trials the interval is ``(0.0, 1.0)``. Raises ``ValueError`` when
    ``successes`` is negative or above ``trials``.

    >>> tuple(round(x, 4) for x in wilson(50, 100))
    (0.4038, 0.5962)
    >>> wilson(0, 0)
    (0.0, 1.0)
    """
    if trials < 0 or successes < 0 or successes > trials:
        raise ValueError(f"need 0 <= successes <= trials, got {successes}/{trials}")
    if trials == 0:
        return (0.0, 1.0)
    p = successes / trials
    z2 = z * z
    denom = 1 + z2 / trials
    centre = (p + z2 / (2 * trials)) / denom
    half = z * math.sqrt(p * (1 - p) / trials + z2 / (4 * trials * trials)) / denom
    return (max(0.0, centre - half), min(1.0, centre + half))


@dataclass(frozen=True, slots=True)
class Outcome:
    """One finished game: ``places[i]`` of seat i, ``winner`` seat or ``None`` (draw),
    ``capped`` whether the play cap ended it, ``plays`` the number of plays made, ``actions``
    every ``(seat, action)`` in order."""

    places: tuple[int, ...]
    winner: int | None
    draw: bool
    capped: bool
    plays: int
    actions: tuple[tuple[int, Action], ...] = ()


@dataclass
class StrategyStats:
    """Totals for one strategy over all its seat-games (one seat in one game each)."""

    strategy: str
    games: int = 0
    wins: int = 0
    draws: int = 0
    capped: int = 0
    place_sum: int = 0
    win_rate: float = 0.0
    wilson_low: float = 0.0
    wilson_high: float = 0.0
    mean_place: float = 0.0

    def finish(self) -> None:
        """Fill the derived figures from the totals."""
        if self.games:
            self.win_rate = self.wins / self.games
            self.mean_place = self.place_sum / self.games
        self.wilson_low, self.wilson_high = wilson(self.wins, self.games)


def play_game(hands: Sequence[Hand], variant: str, strategies: Sequence[str], seed: int) -> Outcome:
    """Play one game of seed ``seed`` from the deal ``hands`` with ``strategies[i]`` at seat i:
    a fresh player per decision (as the bot does), given the view and the public events so far
    and drawing from ``decision_rng(seed, seat, action number)``."""
    state = from_deal(variant, hands)
    history: list[Event] = []
    actions: list[tuple[int, Action]] = []
    while (seat := state.current) is not None:
        player = make_player(strategies[seat], seat, decision_rng(seed, seat, len(actions)))
        action = player.act(view(state, seat), history)
        state, events = apply(state, seat, action)
        history += events
        actions.append((seat, action))
    r = state.result
    assert r is not None  # no seat is to act only once the game is over
    return Outcome(r.places, r.winner, r.draw, r.capped, state.plays, tuple(actions))


@dataclass(frozen=True, slots=True)
class _Game:
    """One game to play: its deal, seat assignment and seed."""

    index: int
    hands: tuple[Hand, ...]
    variant: str
    names: tuple[str, ...]
    seed: int


def _games(players: int, games: int, seats: Sequence[str], seed: int, variant: str) -> Iterator[_Game]:
    """The seat-rotated games of a run, in order (the same for any number of jobs)."""
    master = random.Random(seed)
    index = 0
    for _ in range(-(-games // players)):
        hands = deal(players, random.Random(master.getrandbits(64)))
        for rot in range(players):
            names = tuple(seats[(i + rot) % players] for i in range(players))
            yield _Game(index, hands, variant, names, master.getrandbits(64))
            index += 1


def _play(game: _Game) -> tuple[_Game, Outcome]:
    return game, play_game(game.hands, game.variant, game.names, game.seed)


def _write_record(directory: Path, game: _Game, out: Outcome) -> None:
    """The game's record as ``DIR/game-<index>.json``, its AI seats in ``meta["ai"]``."""
    ai = {str(seat): name for seat, name in enumerate(game.names)}
    record = Record(game.variant, game.hands, out.actions, players=game.names, seed=game.seed, meta={"ai": ai})
    (directory / f"game-{game.index:05d}.json").write_text(record.to_json(indent=1), encoding="utf-8")


def run(
    players: int,
    games: int,
    seats: Sequence[str],
    seed: int,
    variant: str = "russian",
    jobs: int = 1,
    records: Path | None = None,
) -> dict[str, Any]:
    """Play ``games`` seat-rotated games (rounded up to whole deals) in ``jobs`` processes and
    return the summary as a JSON-ready dict: ``{"config": ..., "strategies": {name:
    StrategyStats fields}, "games", "plays", "seconds", "plays_per_second"}``; with
    ``records``, write each game's record into that directory. Raises ``ValueError`` for bad
    arguments."""
    if not MIN_PLAYERS <= players <= MAX_PLAYERS:
        raise ValueError(f"{MIN_PLAYERS} to {MAX_PLAYERS} players, not {players}")
    if len(seats) != players:
        raise ValueError(f"{players} seats expected, got {len(seats)}")
    for name in seats:
        if name not in STRATEGIES:
            raise ValueError(f"unknown strategy {name!r} (known: {', '.join(STRATEGIES)})")
    if games < 1 or jobs < 1:
        raise ValueError("at least one game and one job")
    if records is not None:
        records.mkdir(parents=True, exist_ok=True)
    stats = {name: StrategyStats(name) for name in dict.fromkeys(seats)}
    total_plays = 0
    played = 0
    start = time.perf_counter()
    todo = _games(players, games, seats, seed, variant)
    with ProcessPoolExecutor(jobs) if jobs > 1 else _Serial() as pool:
        for game, out in pool.map(_play, todo, chunksize=4):
            played += 1
            total_plays += out.plays
            if records is not None:
                _write_record(records, game, out)
            _count(stats, game.names, out)
    seconds = time.perf_counter() - start
    for st in stats.values():
        st.finish()
    return {
        "config": {"players": players, "games": played, "seats": list(seats), "seed": seed, "variant": variant},
        "strategies": {name: asdict(st) for name, st in stats.items()},
        "games": played,
        "plays": total_plays,
        "seconds": round(seconds, 3),
        "plays_per_second": round(total_plays / seconds, 1) if seconds > 0 else None,
    }


def _count(stats: dict[str, StrategyStats], names: Sequence[str], out: Outcome) -> None:
    """Add one game's outcome to each of its strategies' totals."""
    for s, name in enumerate(names):
        st = stats[name]
        st.games += 1
        st.wins += out.winner == s
        st.draws += out.draw and out.places[s] == 1
        st.capped += out.capped
        st.place_sum += out.places[s]


class _Serial:
    """The one-process stand-in for a process pool: ``map`` plays the games here, lazily."""

    def __enter__(self) -> _Serial:
        return self

    def __exit__(self, *exc: object) -> None:
        return None

    def map(self, fn: Any, items: Any, chunksize: int = 1) -> Iterator[tuple[_Game, Outcome]]:
        return map(fn, items)


def format_table(summary: dict[str, Any]) -> str:
    """The summary of :func:`run` as a readable text table."""
    c = summary["config"]
    lines = [
        f"{c['games']} games, {c['players']} players, {c['variant']}, seats {','.join(c['seats'])}, seed {c['seed']}",
        f"{'strategy':<10} {'games':>6} {'wins':>6} {'win rate':>9}  {'95% Wilson':<16} {'mean place':>10} "
        f"{'draws':>6} {'capped':>6}",
    ]
    for st in summary["strategies"].values():
        lines.append(
            f"{st['strategy']:<10} {st['games']:>6} {st['wins']:>6} {st['win_rate']:>9.3f}  "
            f"[{st['wilson_low']:.3f}, {st['wilson_high']:.3f}] {st['mean_place']:>10.2f} "
            f"{st['draws']:>6} {st['capped']:>6}"
        )
    lines.append(
        f"{summary['plays']} plays in {summary['seconds']:.1f} s: {summary['plays_per_second']:.0f} plays/s, "
        f"{summary['plays'] / max(1, summary['games']):.1f} plays/game"
    )
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    """The CLI; returns the exit status (2 for bad arguments)."""
    ap = argparse.ArgumentParser(prog="python -m core.selfplay", description=__doc__.split("\n\n")[0])
    ap.add_argument("--players", type=int, default=4)
    ap.add_argument("--games", type=int, default=2000, help="seat-rotated games (rounded up to whole deals)")
    ap.add_argument("--seats", default=None, help="comma-separated strategies, one per seat")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--variant", choices=("russian", "classic"), default="russian")
    ap.add_argument("--json", action="store_true", help="print machine-readable JSON")
    ap.add_argument("--jobs", type=int, default=1, help="games played in parallel processes")
    ap.add_argument("--records", type=Path, default=None, help="write each game's record into this directory")
    args = ap.parse_args(argv)
    seats = args.seats.split(",") if args.seats else ["counting"] + ["honest"] * (args.players - 1)
    try:
        summary = run(
            args.players, args.games, [s.strip() for s in seats], args.seed, args.variant, args.jobs, args.records
        )
    except ValueError as e:
        ap.error(str(e))
    print(json.dumps(summary, indent=2) if args.json else format_table(summary))
    return 0


if __name__ == "__main__":
    sys.exit(main())
