"""tests/conftest.py's LONGEST_FIRST names test files that exist, each once, and pytest-xdist keeps
the order it gives (pyproject.toml's addopts)."""

from __future__ import annotations

import tomllib
from pathlib import Path

from tests.conftest import LONGEST_FIRST

ROOT = Path(__file__).resolve().parents[1]


def test_longest_first_names_test_files_each_once():
    missing = [path for path in LONGEST_FIRST if not (ROOT / path).is_file() or not Path(path).name.startswith("test_")]
    assert missing == []
    assert len(set(LONGEST_FIRST)) == len(LONGEST_FIRST)


def test_the_workers_take_the_files_in_that_order():
    options = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["pytest"]["ini_options"]["addopts"].split()
    assert "--no-loadscope-reorder" in options
    assert options[options.index("--dist") + 1] in ("loadfile", "loadscope")


def test_the_longest_files_are_collected_first(pytestconfig):
    """Sorting puts the listed files first, in the list's order, and keeps each file's tests in order."""
    from tests.conftest import pytest_collection_modifyitems

    class Item:
        def __init__(self, nodeid: str) -> None:
            self.nodeid = nodeid

    names = ["core/cards.py::core.cards", f"{LONGEST_FIRST[1]}::test_b", f"{LONGEST_FIRST[0]}::test_a"]
    names += ["tests/x.py::test_1", f"{LONGEST_FIRST[1]}::test_c", "tests/x.py::test_2"]
    items = [Item(n) for n in names]
    pytest_collection_modifyitems(pytestconfig, items)  # type: ignore[arg-type]
    assert [i.nodeid for i in items] == [names[2], names[1], names[4], names[0], names[3], names[5]]
