"""Translations (gettext catalogs ``locales/<lang>/LC_MESSAGES/cheat.po``, compiled in memory with
Babel) and the language rules (docs/DESIGN.md, i18n).

>>> translator("ru").n("{n} card", "{n} cards", 21)
'21 карта'
"""

from __future__ import annotations

import gettext
import io
from functools import cache
from pathlib import Path

from babel import negotiate_locale
from babel.messages.catalog import Catalog
from babel.messages.mofile import write_mo
from babel.messages.pofile import read_po

__all__ = [
    "DEFAULT_LANGUAGE",
    "DOMAIN",
    "LANGUAGES",
    "LANGUAGE_NAMES",
    "LOCALES_DIR",
    "N_",
    "CatalogError",
    "Np_",
    "Translator",
    "check_catalogs",
    "message_language",
    "new_seat_language",
    "pick_language",
    "supported",
    "translator",
]

#: Languages with a complete catalog.
LANGUAGES: tuple[str, ...] = ("ru", "en", "fr", "it")
DEFAULT_LANGUAGE = "ru"
DOMAIN = "cheat"


def _locales_dir() -> Path:
    """``tgbot/locales/`` of an installed wheel, else ``locales/`` beside ``tgbot/`` (the source tree)."""
    package = Path(__file__).resolve().parent
    packaged = package / "locales"
    return packaged if packaged.is_dir() else package.parent / "locales"


LOCALES_DIR = _locales_dir()


def N_(message: str) -> str:
    """Mark ``message`` for extraction into the catalogs without translating it yet."""
    return message


def Np_(singular: str, plural: str) -> tuple[str, str]:
    """Mark a plural pair for extraction (``pybabel extract … -k Np_:1,2``); returns the pair
    for :meth:`Translator.n`."""
    return singular, plural


#: Each language's name, as a msgid: shown translated into that same language (its autonym,
#: e.g. ``translator("fr").t(LANGUAGE_NAMES["fr"])`` is «Français») on the /language buttons.
LANGUAGE_NAMES: dict[str, str] = {"ru": N_("Russian"), "en": N_("English"), "fr": N_("French"), "it": N_("Italian")}


class Translator:
    """One language's texts: :meth:`t` (``gettext`` + ``str.format``) and :meth:`n` (plural)."""

    def __init__(self, lang: str, catalog: gettext.NullTranslations) -> None:
        self.lang = lang
        self._catalog = catalog

    def t(self, message: str, /, **params: object) -> str:
        """The translation of ``message`` with ``{name}`` placeholders filled from ``params``."""
        text = self._catalog.gettext(message)
        return text.format(**params) if params else text

    def n(self, singular: str, plural: str, n: int, /, **params: object) -> str:
        """The plural form of ``singular``/``plural`` for count ``n``; ``{n}`` is filled in."""
        return self._catalog.ngettext(singular, plural, n).format(n=n, **params)


class CatalogError(Exception):
    """A language's catalog is missing, unreadable or has no translated message."""


def _read(lang: str) -> Catalog:
    """The catalog of ``lang``. Raises :class:`CatalogError`."""
    path = LOCALES_DIR / lang / "LC_MESSAGES" / f"{DOMAIN}.po"
    try:
        with path.open("rb") as source:
            catalog = read_po(source, locale=lang, domain=DOMAIN)
    except (OSError, ValueError) as error:
        raise CatalogError(f"cannot read the {lang!r} catalog {path}: {error}") from error
    if not any(message.id and message.string for message in catalog):
        raise CatalogError(f"the {lang!r} catalog {path} has no translated message")
    return catalog


def check_catalogs() -> None:
    """Read every catalog once at start-up, so a broken install stops there; raises :class:`CatalogError`."""
    for lang in LANGUAGES:
        translator(lang)


def _load(lang: str) -> gettext.NullTranslations:
    catalog = _read(lang)
    compiled = io.BytesIO()
    write_mo(compiled, catalog, use_fuzzy=False)
    compiled.seek(0)
    return gettext.GNUTranslations(compiled)


@cache
def translator(lang: str | None) -> Translator:
    """The translator for ``lang`` (falls back to the default language for unknown codes)."""
    code = pick_language(lang)
    return Translator(code, _load(code))


def supported(code: str | None) -> str | None:
    """The catalog language of a Telegram ``language_code`` (an IETF tag: ``en-US`` → ``en``), or
    ``None`` when there is none (Babel's :func:`~babel.negotiate_locale`)."""
    if not code:
        return None
    found = negotiate_locale([code.replace("_", "-")], LANGUAGES, sep="-", aliases={})
    return found.lower() if found else None


def pick_language(*candidates: str | None) -> str:
    """The first supported candidate (``en-US`` counts as ``en``), else the default language."""
    return next((found for candidate in candidates if (found := supported(candidate))), DEFAULT_LANGUAGE)


# -- the language of each kind of message (docs/DESIGN.md, i18n) ----------------------------------


def new_seat_language(own: str | None, group: str | None, telegram: str | None) -> str | None:
    """The language a new seat stores (``Seat.lang``): the person's own choice (/language in
    private), else ``None`` (the table's) when the group set one, else their Telegram language if
    supported, else ``None``."""
    if supported(own):
        return supported(own)
    if supported(group):
        return None
    return supported(telegram)


def message_language(own: str | None, group: str | None, telegram: str | None) -> str:
    """The language of a message to one person outside a seat: their own choice, else their
    group's (a setting or a game's), else their Telegram language, else the default."""
    return pick_language(own, group, telegram)
