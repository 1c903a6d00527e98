"""docs/DESIGN.md cites only what exists: every path under ``core/`` or ``tgbot/`` and every dotted
name in backticks (``tgbot.owner.store.Store``, ``Table.link_offers``: a name the code imports),
every class cited bare, and every ``package/module`` of the path of an update."""

from __future__ import annotations

import importlib
import pkgutil
import re
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parent.parent
DESIGN = (ROOT / "docs" / "DESIGN.md").read_text(encoding="utf-8")
FENCED = re.compile(r"```.*?```", re.S)
PROSE = FENCED.sub("", DESIGN)
CITED = re.findall(r"`([^`\n]+)`", PROSE)
PATHS = sorted({c.rstrip("/") for c in CITED if re.fullmatch(r"(core|tgbot)(/[\w.]+)*/?", c)})
NAMES = sorted(
    {c for c in CITED if re.fullmatch(r"[A-Za-z_]\w*(\.\w+)+", c) and not re.search(r"\.(toml|md|json|yml|py)$", c)}
)
#: Class names cited bare (``FencedError``, ``SchemaError``): each is some module's.
CLASSES = sorted({c for c in CITED if re.fullmatch(r"[A-Z][a-z0-9]+(?:[A-Z][a-z0-9]*)+", c)})
PACKAGES = "process|ingest|handlers|sync|owner|render|storage|game"
DRAWN = sorted(
    set(re.findall(rf"\b((?:{PACKAGES})/\w+)", "".join(FENCED.findall(DESIGN))))
    - {"storage/" + word for word in ("keys", "redis")}  # (named below the drawing as storage's)
)


def _modules() -> list[ModuleType]:
    """Every module of ``core`` and ``tgbot``."""
    found = []
    for package in ("core", "tgbot"):
        root = importlib.import_module(package)
        found.append(root)
        for info in pkgutil.walk_packages(root.__path__, package + "."):
            if not info.name.endswith("__main__"):
                found.append(importlib.import_module(info.name))
    return found


def resolve(name: str) -> object:
    """The object ``name`` names: the longest importable module prefix, then attributes; else a
    name some module of ``core`` or ``tgbot`` has (a class, or what it imports), then attributes."""
    parts = name.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            found: object = importlib.import_module(".".join(parts[:cut]))
        except ModuleNotFoundError:
            continue
        for attribute in parts[cut:]:
            found = getattr(found, attribute)
        return found
    owner = next(module for module in _modules() if hasattr(module, parts[0]))
    found = getattr(owner, parts[0])
    for attribute in parts[1:]:
        found = getattr(found, attribute)
    return found


def test_design_cites_names_and_paths():
    assert (
        len(NAMES) >= 10 and len(PATHS) >= 5 and len(DRAWN) >= 10 and len(CLASSES) >= 5
    )  # the scan finds what it checks


@pytest.mark.parametrize("path", PATHS)
def test_cited_path_exists(path: str):
    assert (ROOT / path).exists() or (ROOT / f"{path}.py").exists(), path


@pytest.mark.parametrize("name", NAMES + CLASSES)
def test_cited_name_exists(name: str):
    assert resolve(name) is not None


@pytest.mark.parametrize("module", DRAWN)
def test_drawn_module_exists(module: str):
    assert isinstance(resolve("tgbot." + module.replace("/", ".")), ModuleType), module
