"""Translations: gettext catalogs in ``locales/<lang>/LC_MESSAGES/cheat.po``.

The catalogs are compiled in memory at start-up with Babel, so there is no build step and no
``.mo`` file to forget. Message ids are English; Russian is the default language (DESIGN.md,
i18n). Plurals follow each catalog's ``Plural-Forms`` header (CLDR rules via Babel).

>>> tr = translator("ru")
>>> tr.n("{n} card", "{n} cards", 5)
'5 карт'
>>> tr.n("{n} card", "{n} cards", 21)
'21 карта'
"""

from __future__ import annotations

import gettext
import io
import os
from functools import lru_cache
from pathlib import Path

from babel.messages.mofile import write_mo
from babel.messages.pofile import read_po

__all__ = ["N_", "Np_", "LANGUAGES", "LANGUAGE_NAMES", "supported", "private_language", "DEFAULT_LANGUAGE", "DOMAIN", "LOCALES_DIR", "Translator", "translator", "pick_language"]

#: Languages with a complete catalog.
LANGUAGES: tuple[str, ...] = ("ru", "en", "fr", "it")
DEFAULT_LANGUAGE = "ru"
DOMAIN = "cheat"


def _locales_dir() -> Path:
    """``$CHEAT_LOCALES``, else ``locales/`` of the source tree, else of the working directory."""
    env = os.environ.get("CHEAT_LOCALES")
    if env:
        return Path(env)
    beside = Path(__file__).resolve().parent.parent / "locales"
    return beside if beside.is_dir() else Path.cwd() / "locales"


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


def _load(lang: str) -> gettext.NullTranslations:
    path = LOCALES_DIR / lang / "LC_MESSAGES" / f"{DOMAIN}.po"
    if not path.exists():
        return gettext.NullTranslations()
    with path.open("rb") as f:
        catalog = read_po(f, locale=lang, domain=DOMAIN)
    buf = io.BytesIO()
    write_mo(buf, catalog, use_fuzzy=False)
    buf.seek(0)
    return gettext.GNUTranslations(buf)


@lru_cache(maxsize=None)
def translator(lang: str | None) -> Translator:
    """The translator for ``lang`` (falls back to the default language for unknown codes)."""
    code = pick_language(lang)
    return Translator(code, _load(code))


def supported(code: str | None) -> str | None:
    """``code``'s base language (``en-US`` → ``en``) if it has a catalog, else ``None``."""
    if not code:
        return None
    base = code.split("-")[0].split("_")[0].lower()
    return base if base in LANGUAGES else None


def private_language(own: str | None, group: str | None, telegram: str | None) -> str | None:
    """The language of a player's private messages (DESIGN.md, i18n): their own choice
    (``/language`` in private), else the group's explicit setting (``None`` is returned then,
    meaning "follow the table's language"), else their Telegram ``language_code`` when
    supported, else ``None`` (the table's language, Russian by default)."""
    if supported(own):
        return supported(own)
    if supported(group):
        return None
    return supported(telegram)


def pick_language(*candidates: str | None) -> str:
    """The first candidate that is a supported language (``en-US`` counts as ``en``), else the
    default."""
    for c in candidates:
        if supported(c):
            return supported(c)  # type: ignore[return-value]
    return DEFAULT_LANGUAGE

