"""The package list, which pyproject.toml cannot give: core/, tgbot/ and playground/ as found, plus the
catalogs of the top-level locales/ as ``tgbot.locales`` (mapped in pyproject.toml). The folders that
hold only data (the catalogs' ``<lang>/LC_MESSAGES``, ``playground/static``) are listed too, as
namespace packages: setuptools warns about each data folder that is importable but not listed
(the wheel's files are the same either way: pyproject.toml's package-data names them)."""

from setuptools import find_namespace_packages, find_packages, setup

setup(
    packages=[
        *find_packages(include=["core", "core.*", "tgbot", "tgbot.*", "playground", "playground.*"]),
        "playground.static",
        "tgbot.locales",
        *(f"tgbot.locales.{name}" for name in find_namespace_packages("locales")),
    ]
)
