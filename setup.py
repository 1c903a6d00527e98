"""The package list, which pyproject.toml cannot give: core/, tgbot/ and playground/ as found, plus the
catalogs of the top-level locales/ as ``tgbot.locales`` (mapped in pyproject.toml)."""

from setuptools import find_packages, setup

setup(
    packages=[
        *find_packages(include=["core", "core.*", "tgbot", "tgbot.*", "playground", "playground.*"]),
        "tgbot.locales",
    ]
)
