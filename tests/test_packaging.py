"""What ``pip install .`` gives is enough to run: every third-party module that core/ and tgbot/
import is a declared runtime dependency (or one of theirs). The installed wheel itself is tried
by tests/installed (.ci/run's installed-wheel stage)."""

from __future__ import annotations

import ast
import re
import sys
import tomllib
from importlib.metadata import PackageNotFoundError, distribution, packages_distributions
from pathlib import Path

from packaging.requirements import Requirement

ROOT = Path(__file__).resolve().parents[1]
OWN = {"core", "tgbot"}


def _imported(package: str) -> set[str]:
    """The top-level names of the modules that ``package``'s files import (absolute imports)."""
    found = set()
    for path in (ROOT / package).rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Import):
                found |= {alias.name.partition(".")[0] for alias in node.names}
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                found.add(node.module.partition(".")[0])
    return found


def _name(text: str) -> str:
    return re.sub(r"[-_.]+", "-", text).lower()


def _runtime_closure() -> set[str]:
    """The distributions ``pip install .`` installs: the declared dependencies and, recursively,
    theirs (with the extras asked for; markers evaluated here)."""
    declared = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    todo = [(Requirement(text), "") for text in declared]
    seen: set[str] = set()
    while todo:
        requirement, extra = todo.pop()
        if requirement.marker and not requirement.marker.evaluate({"extra": extra}):
            continue
        name = _name(requirement.name)
        if name in seen and not requirement.extras:
            continue
        seen.add(name)
        try:
            requires = distribution(requirement.name).requires or []
        except PackageNotFoundError:
            continue
        for text in requires:
            inner = Requirement(text)
            for wanted in requirement.extras or {""}:
                todo.append((inner, wanted))
    return seen


def test_every_third_party_import_is_a_runtime_dependency():
    modules = (_imported("core") | _imported("tgbot")) - OWN - set(sys.stdlib_module_names) - {"__future__"}
    providers = packages_distributions()
    closure = _runtime_closure()
    missing = {
        module: providers.get(module, ["(not installed)"])
        for module in sorted(modules)
        if not any(_name(dist) in closure for dist in providers.get(module, []))
    }
    assert missing == {}, f"imported but not installed by `pip install .`: {missing}"
