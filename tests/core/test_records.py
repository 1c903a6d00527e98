"""Replay every hand-written record of tests/core/records with ``python -m core.replay`` and
compare the printed JSON object field by field, and the exit code (see records/README.md)."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from core.replay import run

RECORDS = Path(__file__).parent / "records"
NAMES = sorted(p.name[: -len(".expected.json")] for p in RECORDS.glob("*.expected.json"))
ROOT = Path(__file__).resolve().parents[2]
SUMMARY_KEYS = {"status", "winner", "draw", "places", "hand_sizes", "pile", "plays", "current"}


def _env():
    env = dict(os.environ)
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    return env


def replay_cli(arg: str, stdin: bytes | None = None) -> tuple[int, dict]:
    proc = subprocess.run(
        [sys.executable, "-m", "core.replay", arg],
        input=stdin,
        capture_output=True,
        cwd=ROOT,
        env=_env(),
        timeout=60,
    )
    lines = proc.stdout.decode().splitlines()
    assert len(lines) == 1, f"one JSON object expected, got {proc.stdout!r} / {proc.stderr!r}"
    return proc.returncode, json.loads(lines[0])


def check(name: str, code: int, out: dict) -> None:
    expected = json.loads((RECORDS / f"{name}.expected.json").read_text())
    assert code == expected["exit"], (name, out)
    want = expected["output"]
    if expected["exit"] == 0:
        assert set(out) == SUMMARY_KEYS
    else:
        # errors: every expected field, plus a non-empty developer message
        assert set(out) == set(want) | {"message"}, out
        assert isinstance(out["message"], str) and out["message"]
    for key, value in want.items():
        assert out[key] == value, f"{name}: {key} is {out[key]!r}, expected {value!r}"
        # JSON types matter: false is not 0, null is not missing
        assert type(out[key]) is type(value), (name, key)


def test_there_are_enough_records():
    assert len(NAMES) >= 25
    exits = [json.loads((RECORDS / f"{n}.expected.json").read_text())["exit"] for n in NAMES]
    assert {0, 1, 2} <= set(exits)
    for n in NAMES:
        assert (RECORDS / f"{n}.json").exists(), n


def test_every_error_code_is_covered():
    from core import ERROR_CODES

    seen = set()
    for n in NAMES:
        out = json.loads((RECORDS / f"{n}.expected.json").read_text())["output"]
        if "error" in out:
            seen.add(out["error"])
    assert seen == set(ERROR_CODES) | {"invalid_record"}


def test_long_records_are_full_52_card_cap_games():
    caps = [n for n in NAMES if n.startswith("cap_")]
    assert caps
    for n in caps:
        doc = json.loads((RECORDS / f"{n}.json").read_text())
        assert sum(len(h) for h in doc["hands"]) == 52
        assert json.loads((RECORDS / f"{n}.expected.json").read_text())["output"]["plays"] == 300


@pytest.mark.parametrize("name", NAMES)
def test_record_cli(name):
    code, out = replay_cli(str(RECORDS / f"{name}.json"))
    check(name, code, out)


@pytest.mark.parametrize("name", ["spec_example", "err_game_over", "bad_not_json", "cap_draw_russian_52"])
def test_record_cli_stdin(name):
    code, out = replay_cli("-", (RECORDS / f"{name}.json").read_bytes())
    check(name, code, out)


@pytest.mark.parametrize("name", NAMES)
def test_record_in_process(name):
    """Same result through core.replay.run (fast, and the error path never raises)."""
    buf = io.StringIO()
    code = run((RECORDS / f"{name}.json").read_bytes(), buf)
    check(name, code, json.loads(buf.getvalue()))


def test_missing_file_is_exit_2(tmp_path):
    code, out = replay_cli(str(tmp_path / "nope.json"))
    assert code == 2 and out["error"] == "invalid_record"


def test_empty_stdin_is_exit_2():
    code, out = replay_cli("-", b"")
    assert code == 2 and out["error"] == "invalid_record"


def test_non_utf8_is_exit_2():
    code, out = replay_cli("-", b"\xff\xfe{")
    assert code == 2 and out["error"] == "invalid_record"
