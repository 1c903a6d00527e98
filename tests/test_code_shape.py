"""The shape of the code: no function over 50 lines and no module over 500 in ``core/`` (issue
15); in ``tgbot/`` none over 40 and 400, and no module docstring over 6 lines (issue 24).

A function's length runs from its ``def`` line to the last line of its body, docstring included
(``end_lineno - lineno + 1``); methods and nested functions count on their own.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("core", "tgbot")
#: By package: the longest function, the longest module (lines).
LIMITS = {"core": (50, 500), "tgbot": (40, 400)}
#: The longest module docstring in ``tgbot/`` (lines): the narrative is docs/DESIGN.md's.
MODULE_DOCSTRING = 6


def _modules(package: str) -> list[Path]:
    files = sorted((ROOT / package).rglob("*.py"))
    assert files, f"no Python files under {ROOT / package}"
    return files


def _name(path: Path) -> str:
    return path.relative_to(ROOT).as_posix()


def _functions(node: ast.AST, prefix: str = "") -> Iterator[tuple[str, int]]:
    """(qualified name, lines) of every function under ``node``, nested ones included."""
    for child in ast.iter_child_nodes(node):
        if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef):
            name = prefix + child.name
            assert child.end_lineno is not None
            yield name, child.end_lineno - child.lineno + 1
            yield from _functions(child, name + ".")
        elif isinstance(child, ast.ClassDef):
            yield from _functions(child, prefix + child.name + ".")
        else:
            yield from _functions(child, prefix)


def long_functions(package: str) -> dict[str, int]:
    """``{"path:qualified.name": lines}`` of the package's functions over the limit."""
    found: dict[str, int] = {}
    for path in _modules(package):
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for name, lines in _functions(tree):
            if lines > LIMITS[package][0]:
                key = f"{_name(path)}:{name}"
                found[key] = max(lines, found.get(key, 0))
    return found


def big_modules() -> dict[str, int]:
    """``{path: lines}`` of the modules of every package over the limit."""
    found: dict[str, int] = {}
    for package in PACKAGES:
        for path in _modules(package):
            lines = len(path.read_text(encoding="utf-8").splitlines())
            if lines > LIMITS[package][1]:
                found[_name(path)] = lines
    return found


def _listing(found: dict[str, int], names: set[str] | frozenset[str]) -> str:
    return "\n".join(f"  {name} ({found[name]} lines)" if name in found else f"  {name}" for name in sorted(names))


@pytest.mark.parametrize("package", PACKAGES)
def test_functions_are_short(package: str) -> None:
    found = long_functions(package)
    assert not found, f"functions over {LIMITS[package][0]} lines:\n{_listing(found, set(found))}"


def test_modules_are_short() -> None:
    found = big_modules()
    assert not found, f"modules over the limit (core 500, tgbot 400 lines):\n{_listing(found, set(found))}"


def long_module_docstrings() -> dict[str, int]:
    """``{path: lines}`` of the ``tgbot/`` modules whose docstring is over :data:`MODULE_DOCSTRING`."""
    found: dict[str, int] = {}
    for path in _modules("tgbot"):
        body = ast.parse(path.read_text(encoding="utf-8")).body
        if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
            lines = (body[0].end_lineno or 0) - body[0].lineno + 1
            if lines > MODULE_DOCSTRING:
                found[_name(path)] = lines
    return found


def test_module_docstrings_are_short() -> None:
    found = long_module_docstrings()
    assert not found, f"module docstrings over {MODULE_DOCSTRING} lines:\n{_listing(found, set(found))}"
