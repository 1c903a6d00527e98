"""The shape of the code (issue 15): no function over 50 lines, no module over 500.

A function's length runs from its ``def`` line to the last line of its body, docstring included
(``end_lineno - lineno + 1``); methods and nested functions count on their own. ``core/`` is held
to both limits. ``tgbot/`` is being reshaped: today's offenders are listed below, and the lists
may only shrink: an offender not listed fails, and so does a listed one that now fits (take it
off the list).
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("core", "tgbot")
MAX_FUNCTION_LINES = 50
MAX_MODULE_LINES = 500

#: tgbot/ functions over MAX_FUNCTION_LINES, as "path:qualified.name"; to be emptied.
KNOWN_LONG_TGBOT = frozenset(
    {
        "tgbot/handlers/commands.py:_apply_tap",
        "tgbot/owner/store.py:connect",
    }
)

#: Modules over MAX_MODULE_LINES; to be emptied.
KNOWN_BIG_MODULES = frozenset(
    {
        "tgbot/handlers/commands.py",
        "tgbot/game/model.py",
        "tgbot/owner/store.py",
    }
)


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
            if lines > MAX_FUNCTION_LINES:
                key = f"{_name(path)}:{name}"
                found[key] = max(lines, found.get(key, 0))
    return found


def big_modules() -> dict[str, int]:
    """``{path: lines}`` of the modules of every package over the limit."""
    found: dict[str, int] = {}
    for package in PACKAGES:
        for path in _modules(package):
            lines = len(path.read_text(encoding="utf-8").splitlines())
            if lines > MAX_MODULE_LINES:
                found[_name(path)] = lines
    return found


def _listing(found: dict[str, int], names: set[str] | frozenset[str]) -> str:
    return "\n".join(f"  {name} ({found[name]} lines)" if name in found else f"  {name}" for name in sorted(names))


def test_core_functions_are_short() -> None:
    found = long_functions("core")
    assert not found, f"core/ functions over {MAX_FUNCTION_LINES} lines:\n{_listing(found, set(found))}"


def test_no_new_long_tgbot_function() -> None:
    found = long_functions("tgbot")
    new = set(found) - KNOWN_LONG_TGBOT
    assert not new, f"tgbot/ functions over {MAX_FUNCTION_LINES} lines:\n{_listing(found, new)}"


def test_known_long_tgbot_functions_are_still_long() -> None:
    stale = KNOWN_LONG_TGBOT - set(long_functions("tgbot"))
    assert not stale, f"now within {MAX_FUNCTION_LINES} lines or gone; remove from KNOWN_LONG_TGBOT:\n" + _listing(
        {}, stale
    )


def test_no_new_big_module() -> None:
    found = big_modules()
    new = set(found) - KNOWN_BIG_MODULES
    assert not new, f"modules over {MAX_MODULE_LINES} lines:\n{_listing(found, new)}"


def test_known_big_modules_are_still_big() -> None:
    stale = KNOWN_BIG_MODULES - set(big_modules())
    assert not stale, f"now within {MAX_MODULE_LINES} lines or gone; remove from KNOWN_BIG_MODULES:\n" + _listing(
        {}, stale
    )


def test_lengths_are_measured_from_def_to_last_line() -> None:
    tree = ast.parse(
        "class A:\n"
        "    @staticmethod\n"
        "    def f():\n"
        '        """Doc."""\n'
        "        def g():\n"
        "            return 1\n"
        "        return g\n"
        "async def h():\n"
        "    pass\n"
    )
    assert dict(_functions(tree)) == {"A.f": 5, "A.f.g": 2, "h": 2}
