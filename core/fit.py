"""``python -m core.fit``: fit the ``tuned`` player's constants by self-play, write core/tuned.py.

``python -m core.fit --variant russian --games 400 --rounds 2 --seed 7100 --jobs 2``

Coordinate search: starting from ``counting``'s constants (or the ones already fitted), each
constant in turn is moved one step down and one step up (a factor of :data:`STEP` for values,
the same factor on the odds for probabilities); a move is kept when ``tuned`` then wins more
often against ``players - 1`` ``counting`` players over ``--games`` seat-rotated games, all
candidates on the same seeds, by at least ``--margin``. ``--rounds`` passes over the
constants. The fitted constants replace the variant's entry in core/tuned.py (run ``ruff
format core/tuned.py`` after). Fit on seeds you will not evaluate on.
"""

from __future__ import annotations

import argparse
import pprint
import sys
from collections.abc import Sequence
from pathlib import Path

from . import tuned
from .counting import CONSTANTS, CountingPlayer
from .selfplay import run

__all__ = ["fit", "main", "moves"]

STEP = 1.5
_PROBABILITIES = {"CHALLENGE_PRIOR", "FINAL_PRIOR", "OPENER_TRUST", "BELIEVE_FINAL_ABOVE", "FLOOR", "NEAR_OUT_TRUST"}
Value = float | list[float]


def _scale(x: float, factor: float, probability: bool) -> float:
    if not probability:
        return round(x * factor, 4)
    odds = x / (1 - x) * factor
    return round(odds / (1 + odds), 4)


def moves(name: str, value: Value) -> list[Value]:
    """The two neighbours of constant ``name`` at ``value``: one step down, one step up."""
    probability = name in _PROBABILITIES
    out: list[Value] = []
    for factor in (1 / STEP, STEP):
        if isinstance(value, list):
            out.append([_scale(v, factor, probability) for v in value])
        else:
            out.append(_scale(value, factor, probability))
    return out


def _win_rate(variant: str, constants: dict[str, Value], players: int, games: int, seed: int, jobs: int) -> float:
    tuned.TUNED[variant] = constants  # read by TunedPlayer; forked workers inherit it
    seats = ["tuned"] + ["counting"] * (players - 1)
    rate: float = run(players, games, seats, seed, variant, jobs)["strategies"]["tuned"]["win_rate"]
    return rate


def fit(variant: str, players: int, games: int, rounds: int, seed: int, jobs: int, margin: float) -> dict[str, Value]:
    """The fitted constants of ``variant`` (only those that differ from ``counting``'s)."""
    start: dict[str, Value] = {}
    for name in CONSTANTS:
        default = getattr(CountingPlayer, name)
        start[name] = list(default) if isinstance(default, tuple) else float(default)
    current = {**start, **tuned.TUNED.get(variant, {})}
    best = _win_rate(variant, current, players, games, seed, jobs)
    print(f"{variant}: start {best:.3f}", flush=True)
    for r in range(rounds):
        for name in CONSTANTS:
            for value in moves(name, current[name]):
                trial = {**current, name: value}
                rate = _win_rate(variant, trial, players, games, seed, jobs)
                kept = rate >= best + margin
                print(f"round {r + 1} {name}={value}: {rate:.3f}{' kept' if kept else ''}", flush=True)
                if kept:
                    current, best = trial, rate
                    break
    return {k: v for k, v in current.items() if v != start[k]}


def write(path: Path, fitted: dict[str, dict[str, Value]]) -> None:
    """Rewrite the data module at ``path`` with ``fitted`` (its docstring kept)."""
    text = path.read_text(encoding="utf-8")
    head = text[: text.index("TUNED: ")]
    body = pprint.pformat(fitted, width=100, sort_dicts=True)
    path.write_text(f"{head}TUNED: dict[str, dict[str, float | list[float]]] = {body}\n", encoding="utf-8")


def main(argv: Sequence[str] | None = None) -> int:
    """The CLI; returns the exit status."""
    ap = argparse.ArgumentParser(prog="python -m core.fit", description=__doc__.split("\n\n")[0])
    ap.add_argument("--variant", choices=("russian", "classic"), required=True)
    ap.add_argument("--players", type=int, default=4)
    ap.add_argument("--games", type=int, default=400)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--seed", type=int, default=7100)
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--margin", type=float, default=0.005, help="least gain in win rate to keep a move")
    ap.add_argument("--dry-run", action="store_true", help="print the result, do not write core/tuned.py")
    args = ap.parse_args(argv)
    data = {k: dict(v) for k, v in tuned.TUNED.items()}
    fitted = fit(args.variant, args.players, args.games, args.rounds, args.seed, args.jobs, args.margin)
    print(f"{args.variant}: {fitted}")
    if not args.dry_run:
        data[args.variant] = fitted
        write(Path(tuned.__file__), data)
    return 0


if __name__ == "__main__":
    sys.exit(main())
