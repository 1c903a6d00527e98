"""``python -m core.tournament``: every player against every other, with 95% intervals.

``python -m core.tournament --strategies honest,counting,skeptic,search --games 400 --jobs 2``

For each ordered pair (A, B) of different strategies, A plays against ``players - 1`` copies of
B over ``--games`` seat-rotated games (:func:`core.selfplay.run`, same seeds for every pair);
the table shows A's win rate (row) against B (column) with its 95% Wilson interval. Par is
``1 / players``. ``--json`` prints every pair's summary instead.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from typing import Any

from .ai import STRATEGIES
from .selfplay import run

__all__ = ["main", "tournament"]


def tournament(
    strategies: Sequence[str], players: int, games: int, seed: int, variant: str, jobs: int = 1
) -> dict[str, dict[str, dict[str, Any]]]:
    """``{A: {B: summary of A against players-1 B}}`` for every ordered pair of different
    strategies. Raises ``ValueError`` for bad arguments."""
    out: dict[str, dict[str, dict[str, Any]]] = {}
    for a in strategies:
        for b in strategies:
            if a != b:
                seats = [a] + [b] * (players - 1)
                out.setdefault(a, {})[b] = run(players, games, seats, seed, variant, jobs)
    return out


def format_matrix(results: dict[str, dict[str, dict[str, Any]]], strategies: Sequence[str]) -> str:
    """The tournament as a text table: row strategy's win rate [95% interval] against the
    column strategy."""
    width = 22
    lines = [f"{'':<10}" + "".join(f"{'vs ' + b:>{width}}" for b in strategies)]
    for a in strategies:
        cells = []
        for b in strategies:
            if a == b:
                cells.append(f"{'-':>{width}}")
                continue
            st = results[a][b]["strategies"][a]
            cells.append(f"{st['win_rate']:.3f} [{st['wilson_low']:.3f},{st['wilson_high']:.3f}]".rjust(width))
        lines.append(f"{a:<10}" + "".join(cells))
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    """The CLI; returns the exit status (2 for bad arguments)."""
    ap = argparse.ArgumentParser(prog="python -m core.tournament", description=__doc__.split("\n\n")[0])
    ap.add_argument("--strategies", default="honest,counting,skeptic,tuned,search")
    ap.add_argument("--players", type=int, default=4)
    ap.add_argument("--games", type=int, default=400, help="seat-rotated games per pair")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--variant", choices=("russian", "classic"), default="russian")
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    names = [s.strip() for s in args.strategies.split(",")]
    unknown = [n for n in names if n not in STRATEGIES]
    if unknown or len(set(names)) < 2:
        ap.error(f"two or more known strategies, not {args.strategies!r} (known: {', '.join(STRATEGIES)})")
    try:
        results = tournament(names, args.players, args.games, args.seed, args.variant, args.jobs)
    except ValueError as e:
        ap.error(str(e))
    if args.json:
        print(json.dumps(results, indent=1))
    else:
        print(f"{args.variant}, {args.players} players, {args.games} games a pair, seed {args.seed}")
        print(format_matrix(results, names))
    return 0


if __name__ == "__main__":
    sys.exit(main())
