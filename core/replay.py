"""``python -m core.replay FILE``: replay a ``cheat-record/1`` game record (GAME_RECORD.md).

FILE ``-`` reads standard input. Prints one JSON object on standard output and exits

- 0 with ``{"status", "winner", "draw", "places", "hand_sizes", "pile", "plays", "current"}``;
- 1 with ``{"error": CODE, "action": INDEX, "message": TEXT}`` at the first illegal action;
- 2 with ``{"error": "invalid_record", "message": TEXT}`` for a malformed document (also an
  unreadable file).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from typing import TextIO

from .record import InvalidRecord, Record, replay

__all__ = ["main", "run"]


def run(text: str | bytes, out: TextIO) -> int:
    """Replay the record in ``text``, print the JSON result to ``out``, return the exit code."""
    try:
        record = Record.from_json(text)
    except InvalidRecord as e:
        print(json.dumps({"error": "invalid_record", "message": str(e)}), file=out)
        return 2
    summary = replay(record).summary()
    print(json.dumps(summary), file=out)
    return 1 if "error" in summary else 0


def main(argv: Sequence[str] | None = None) -> int:
    """Command-line entry point; returns the exit code."""
    parser = argparse.ArgumentParser(prog="python -m core.replay", description=__doc__.splitlines()[0])
    parser.add_argument("file", help="record file, or - for standard input")
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
    return run(text, sys.stdout)


if __name__ == "__main__":
    sys.exit(main())
