"""``python -m core.replay FILE``: replay a ``cheat-record/1`` game record (GAME_RECORD.md).

FILE ``-`` reads standard input. Prints one JSON object on standard output and exits

- 0 with ``{"status", "winner", "draw", "places", "hand_sizes", "pile", "plays", "current"}``;
- 1 with ``{"error": CODE, "action": INDEX, "message": TEXT}`` at the first illegal action;
- 2 with ``{"error": "invalid_record", "message": TEXT}`` for a malformed document (also an
  unreadable file).

With ``--ai`` it also re-runs the AI seats named in the record's ``meta["ai"]`` (``{"seat":
strategy}``) from their views, the public events and the record's ``seed``, and adds ``"ai":
{"checked", "confirmed", "mismatch"}``; ``mismatch`` (exit 1) is the first action an AI seat
would not make again: ``{"action", "seat", "recorded", "expected"}`` in action notation.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from typing import Any, TextIO

from .actions import to_str
from .ai import decision_rng, make_player
from .errors import IllegalActionError
from .events import Event
from .record import InvalidRecord, Record, replay
from .state import apply
from .views import view

__all__ = ["confirm_ai", "main", "run"]


def confirm_ai(record: Record) -> dict[str, Any]:
    """Re-run the decisions of the record's AI seats (``meta["ai"]``) and compare them with the
    recorded actions: ``{"checked", "confirmed", "mismatch"}`` (``mismatch`` ``None`` or the
    first differing action). Stops at the first mismatch or illegal action."""
    ai = (record.meta or {}).get("ai") or {}
    seed = record.seed if record.seed is not None else 0
    state = record.initial_state()
    history: list[Event] = []
    checked = 0
    for i, (seat, action) in enumerate(record.actions):
        name = ai.get(str(seat))
        if name is not None:
            checked += 1
            expected = make_player(name, seat, decision_rng(seed, seat, i)).act(view(state, seat), history)
            if expected != action:
                mismatch = {"action": i, "seat": seat, "recorded": to_str(action), "expected": to_str(expected)}
                return {"checked": checked, "confirmed": checked - 1, "mismatch": mismatch}
        try:
            state, events = apply(state, seat, action)
        except IllegalActionError:
            break
        history += events
    return {"checked": checked, "confirmed": checked, "mismatch": None}


def run(text: str | bytes, out: TextIO, ai: bool = False) -> int:
    """Replay the record in ``text`` (and with ``ai`` confirm its AI seats), print the JSON
    result to ``out``, return the exit code."""
    try:
        record = Record.from_json(text)
        summary = replay(record).summary()
        if ai:
            summary["ai"] = confirm_ai(record)
    except (InvalidRecord, ValueError) as e:
        print(json.dumps({"error": "invalid_record", "message": str(e)}), file=out)
        return 2
    print(json.dumps(summary), file=out)
    return 1 if "error" in summary or (ai and summary["ai"]["mismatch"] is not None) else 0


def main(argv: Sequence[str] | None = None) -> int:
    """Command-line entry point; returns the exit code."""
    parser = argparse.ArgumentParser(prog="python -m core.replay", description=__doc__.splitlines()[0])
    parser.add_argument("file", help="record file, or - for standard input")
    parser.add_argument("--ai", action="store_true", help="confirm every action of the AI seats in meta.ai")
    args = parser.parse_args(argv)
    try:
        if args.file == "-":
            text: str | bytes = sys.stdin.buffer.read()
        else:
            with open(args.file, "rb") as f:
                text = f.read()
    except OSError as e:
        print(json.dumps({"error": "invalid_record", "message": f"cannot read {args.file}: {e.strerror}"}))
        return 2
    return run(text, sys.stdout, args.ai)


if __name__ == "__main__":
    sys.exit(main())
