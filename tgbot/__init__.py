"""The Telegram adapter of the «Верю — не верю» bot: python-telegram-bot 22 + Redis (docs/DESIGN.md)."""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("cheat-bot")
except PackageNotFoundError:  # run from a source tree that is not installed
    __version__ = "unknown"
