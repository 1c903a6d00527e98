"""Telegram's limit of a message's text and the one rule of what a message too long for it loses
(:func:`fit`), with the length as Telegram counts it (after the HTML is parsed, in UTF-16 units)."""

from __future__ import annotations

import html
import re
from collections.abc import Callable

from telegram.constants import MessageLimit


def plain(text: str) -> str:
    """The text Telegram shows for our HTML ``text`` (tags dropped, entities decoded)."""
    return html.unescape(re.sub(r"<[^>]+>", "", text))


#: A token of the bot's HTML: a tag (group 1: "/" of a closing tag, group 2: its name), an
#: entity (&amp; &lt; &gt; &quot; &#NN;), or one character.
_HTML_TOKEN = re.compile(r"<(/?)([A-Za-z-]+)(?:\s[^>]*)?>|&(?:#[0-9]+|#x[0-9A-Fa-f]+|[A-Za-z]+);|.", re.S)


def utf16_units(text: str) -> int:
    """Length in UTF-16 code units (Telegram's unit: an emoji outside the BMP counts 2)."""
    return len(text.encode("utf-16-le")) // 2


def _token_size(token: re.Match[str]) -> int:
    """What one token counts in Telegram's length: a tag nothing, an entity one character."""
    if token.group(2) is not None:
        return 0
    return 1 if token.group().startswith("&") and len(token.group()) > 1 else utf16_units(token.group())


#: Telegram's limit of a message's text (https://core.telegram.org/bots/api#sendmessage: after
#: entities parsing, in UTF-16 code units), read at each call.
TEXT_LIMIT: int = MessageLimit.MAX_TEXT_LENGTH


def shown_length(text: str) -> int:
    """The length of our HTML ``text`` as Telegram counts it (:data:`TEXT_LIMIT`)."""
    return utf16_units(plain(text))


def cap(text: str, limit: int | None = None) -> str:
    """Keep a message within Telegram's limit as Telegram counts it (:data:`TEXT_LIMIT`, or
    ``limit``). A longer one is cut at a whole character or entity, ends with «…», and every tag
    still open there is closed."""
    limit = TEXT_LIMIT if limit is None else limit
    if utf16_units(text) <= limit:
        return text  # the usual case: the source is never shorter than what Telegram counts
    tokens = list(_HTML_TOKEN.finditer(text))
    sizes = [_token_size(token) for token in tokens]
    if sum(sizes) <= limit:
        return text
    kept: list[str] = []
    open_tags: list[str] = []
    used = 0
    for token, size in zip(tokens, sizes, strict=True):
        tag = token.group(2)
        if tag is not None:
            if not token.group(1):
                open_tags.append(tag.lower())
            elif tag.lower() in open_tags:
                del open_tags[len(open_tags) - 1 - open_tags[::-1].index(tag.lower())]
        elif used + size > limit - 1:  # room for the ellipsis
            break
        used += size
        kept.append(token.group())
    kept.append("…")
    kept.extend(f"</{tag}>" for tag in reversed(open_tags))
    return "".join(kept)


def lines(*parts: str) -> str:
    """Lines joined and capped (:func:`cap`)."""
    return cap("\n".join(parts))


def fit(head: list[str], history: list[str], tail: list[str], shape: Callable[[list[str], bool], list[str]]) -> str:
    """The one rule of what a message too long for Telegram loses: its ``history`` (the oldest
    items first), never its ``tail`` (whose turn, what is due, the result). ``shape(kept, cut)``
    turns the history items kept (``cut``: some were dropped) into lines. Past that, the
    ``head`` is cut (:func:`cap`), still never the tail."""
    kept = list(history)
    while True:
        text = "\n".join([*head, *shape(kept, len(kept) < len(history)), *tail])
        if (
            utf16_units(text) <= TEXT_LIMIT or shown_length(text) <= TEXT_LIMIT or not kept
        ):  # (the source is never shorter)
            break
        kept.pop(0)
    if shown_length(text) <= TEXT_LIMIT:
        return text
    ending = "\n".join(tail)
    room = TEXT_LIMIT - shown_length(ending) - 1
    if room < 2:
        return cap(ending)
    return cap("\n".join(head), room) + "\n" + ending
