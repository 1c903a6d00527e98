"""Telegram's HTML parse mode, re-implemented after TDLib's ``parse_html``.

``parse_html(text)`` returns the plain text and the message entities Telegram would
produce (offsets and lengths in UTF-16 code units), or raises :class:`HTMLParseError`
whose ``str`` is the part after ``"Bad Request: can't parse entities: "``.

Supported like Telegram: tags ``b strong i em u ins s strike del span(class="tg-spoiler")
tg-spoiler a(href) code pre (+ <code class="language-x"> inside) blockquote(expandable)
tg-emoji(emoji-id) tg-time(unix, format)`` (tag names are case-insensitive), the named
entities ``&lt; &gt; &amp; &quot;`` and numeric ones (``&#NNN;`` / ``&#xHH;``).

``<tg-time unix="1796131919" format="r">text</tg-time>`` gives a ``date_time`` entity with
``unix_time`` and ``date_time_format`` (omitted when empty), as TDLib's ``parse_html`` does: a
``unix`` that is missing, zero or not a number drops the entity silently; a ``format`` that does
not match the Bot API's ``r|w?[dD]?[tT]?`` is refused ("Invalid date format used"). TDLib itself
takes any mix of ``tTdDwW`` and ``R``; the emulator keeps to the documented grammar, so that it is
never more lenient than Telegram promises.

One deliberate difference: Telegram keeps an ``&`` that does not start a known entity as a
literal character. With ``strict_amp=True`` (the default) the emulator rejects it, because
our bot must escape every user-supplied string.

    >>> parse_html("<b>Hi</b> &lt;you&gt;")
    ('Hi <you>', [{'type': 'bold', 'offset': 0, 'length': 2}])
    >>> utf16_len("🃏♠")
    3
"""

from __future__ import annotations

import re

__all__ = ["HTMLParseError", "parse_html", "utf16_len", "trim_formatted"]

_SPACES = " \t\r\n\x00\x0b\x0c"
_SIMPLE_TAGS = {
    "b": "bold",
    "strong": "bold",
    "i": "italic",
    "em": "italic",
    "u": "underline",
    "ins": "underline",
    "s": "strikethrough",
    "strike": "strikethrough",
    "del": "strikethrough",
    "tg-spoiler": "spoiler",
    "span": "spoiler",
    "code": "code",
    "pre": "pre",
    "blockquote": "blockquote",
    "tg-emoji": "custom_emoji",
    "a": "text_link",
    "tg-time": "date_time",
}
#: ``date_time_format`` as the Bot API documents it (MessageEntity, date-time entity formatting).
DATE_TIME_FORMAT = re.compile(r"r|w?[dD]?[tT]?")
_NAMED = {"lt": "<", "gt": ">", "amp": "&", "quot": '"'}
_ENTITY_RE = re.compile(r"&(?:(lt|gt|amp|quot)|#([0-9]{1,7})|#[xX]([0-9a-fA-F]{1,6}));")
_INT_PREFIX = re.compile(r"-?[0-9]*")
_URL_RE = re.compile(r"^(?:(?:https?|tg|ton)://)?[^\s/$.?#<>\"'][^\s<>\"']*$", re.I)


class HTMLParseError(ValueError):
    """An HTML text Telegram refuses; ``str(exc)`` is Telegram's wording."""


def utf16_len(s: str) -> int:
    """Length of ``s`` in UTF-16 code units (the unit of entity offsets)."""
    return len(s.encode("utf-16-le")) // 2


def _decode_entity(text: str, i: int) -> tuple[str, int] | None:
    """Decode an HTML entity at ``text[i] == '&'``; return (char, new index) or None."""
    m = _ENTITY_RE.match(text, i)
    if not m:
        return None
    if m.group(1):
        return _NAMED[m.group(1)], m.end()
    code = int(m.group(2)) if m.group(2) else int(m.group(3), 16)
    if code == 0 or code > 0x10FFFF or 0xD800 <= code <= 0xDFFF:
        return None
    return chr(code), m.end()


def parse_html(text: str, *, strict_amp: bool = True) -> tuple[str, list[dict]]:
    """Parse Telegram HTML; return ``(plain_text, entities)``.

    Raises :class:`HTMLParseError` with TDLib's messages ("Unsupported start tag \\"x\\" at
    byte offset N", "Can't find end tag corresponding to start tag \\"b\\"", ...). Byte
    offsets are offsets in the UTF-8 encoding of ``text``.
    """

    def boff(pos: int) -> int:
        return len(text[:pos].encode("utf-8"))

    n = len(text)

    def at(pos: int) -> str:
        return text[pos] if pos < n else "\x00"

    out: list[str] = []
    out_u16 = 0
    stack: list[dict] = []  # open tags: name, argument, u16 offset
    entities: list[tuple[int, dict]] = []  # (opening order, entity)
    i = 0
    while i < n:
        c = text[i]
        if c == "&":
            dec = _decode_entity(text, i)
            if dec is not None:
                ch, i = dec
                out.append(ch)
                out_u16 += utf16_len(ch)
                continue
            if strict_amp:
                raise HTMLParseError(f'Unescaped "&" at byte offset {boff(i)}')
        if c != "<":
            out.append(c)
            out_u16 += utf16_len(c)
            i += 1
            continue

        begin = i
        i += 1
        if at(i) != "/":
            start = i
            while at(i) not in _SPACES and at(i) != ">":
                i += 1
            if i >= n:
                raise HTMLParseError(f"Unclosed start tag at byte offset {boff(begin)}")
            tag = text[start:i].lower()
            if tag not in _SIMPLE_TAGS:
                raise HTMLParseError(f'Unsupported start tag "{tag}" at byte offset {boff(begin)}')
            argument = ""
            date = 0
            while at(i) != ">":
                while i < n and at(i) in _SPACES:
                    i += 1
                if at(i) == ">":
                    break
                if i >= n:
                    raise HTMLParseError(f"Unclosed start tag at byte offset {boff(begin)}")
                a_start = i
                while at(i) not in _SPACES and at(i) != "=" and at(i) != ">":
                    i += 1
                attr = text[a_start:i]
                if not attr:
                    raise HTMLParseError(f'Empty attribute name in the tag "{tag}" at byte offset {boff(begin)}')
                while i < n and at(i) in _SPACES:
                    i += 1
                if at(i) != "=":
                    if tag == "blockquote" and attr == "expandable":
                        argument = "1"
                        continue
                    raise HTMLParseError(
                        f'Expected equal sign in declaration of an attribute of the tag "{tag}" '
                        f"at byte offset {boff(begin)}"
                    )
                i += 1
                while i < n and at(i) in _SPACES:
                    i += 1
                if i >= n:
                    raise HTMLParseError(f'Unclosed start tag "{tag}" at byte offset {boff(begin)}')
                if at(i) not in "'\"":
                    v_start = i
                    while at(i).isalnum() and at(i) != "\x00" or at(i) in ".-":
                        i += 1
                    value = text[v_start:i].lower()
                    if at(i) not in _SPACES and at(i) != ">":
                        raise HTMLParseError(f"Unexpected end of name token at byte offset {boff(v_start)}")
                else:
                    quote = text[i]
                    i += 1
                    chars: list[str] = []
                    while i < n and text[i] != quote:
                        if text[i] == "&":
                            dec = _decode_entity(text, i)
                            if dec is not None:
                                chars.append(dec[0])
                                i = dec[1]
                                continue
                            if strict_amp:
                                raise HTMLParseError(f'Unescaped "&" at byte offset {boff(i)}')
                        chars.append(text[i])
                        i += 1
                    if i < n:
                        i += 1
                    value = "".join(chars)
                if i >= n:
                    raise HTMLParseError(f"Unclosed start tag at byte offset {boff(begin)}")
                if tag == "a" and attr == "href":
                    argument = value
                elif tag == "code" and attr == "class" and value.startswith("language-"):
                    argument = value[9:]
                elif tag == "span" and attr == "class" and value.startswith("tg-"):
                    argument = value[3:]
                elif tag == "tg-emoji" and attr == "emoji-id":
                    argument = value
                elif tag == "blockquote" and attr == "expandable":
                    argument = "1"
                elif tag == "tg-time" and attr == "unix":
                    digits = _INT_PREFIX.match(value).group()  # TDLib's to_integer: leading digits, else 0
                    date = int(digits) if digits not in ("", "-") else 0
                elif tag == "tg-time" and attr == "format":
                    argument = value
            if tag == "span" and argument != "spoiler":
                raise HTMLParseError(f'Tag "span" must have class "tg-spoiler" at byte offset {boff(begin)}')
            stack.append({"tag": tag, "arg": argument, "u16": out_u16, "pos": len(out), "seq": begin, "date": date})
            i += 1  # skip '>'
        else:
            if not stack:
                raise HTMLParseError(f"Unexpected end tag at byte offset {boff(begin)}")
            i += 1
            name_start = i
            while at(i) not in _SPACES and at(i) != ">":
                i += 1
            end_name = text[name_start:i].lower()
            while i < n and at(i) in _SPACES:
                i += 1
            if at(i) != ">":
                raise HTMLParseError(f"Unclosed end tag at byte offset {boff(begin)}")
            open_ = stack[-1]
            if end_name and end_name != open_["tag"]:
                raise HTMLParseError(
                    f'Unmatched end tag at byte offset {boff(begin)}, expected "</{open_["tag"]}>", '
                    f'found "</{end_name}>"'
                )
            stack.pop()
            i += 1
            length = out_u16 - open_["u16"]
            if length <= 0:
                continue
            tag, arg = open_["tag"], open_["arg"]
            ent: dict = {"type": _SIMPLE_TAGS[tag], "offset": open_["u16"], "length": length}
            if tag == "a":
                url = arg or "".join(out[open_["pos"] :])
                if not _URL_RE.match(url):
                    continue  # Telegram silently drops links with invalid URLs
                if not arg:
                    ent = {"type": "url", "offset": open_["u16"], "length": length}
                else:
                    ent["url"] = url
            elif tag == "code" and arg and stack and stack[-1]["tag"] == "pre":
                stack[-1]["lang"] = arg  # <pre><code class="language-x"> → pre with language
                continue
            elif tag == "pre" and open_.get("lang"):
                ent["language"] = open_["lang"]
            elif tag == "blockquote" and arg:
                ent["type"] = "expandable_blockquote"
            elif tag == "tg-emoji":
                if not arg:
                    continue
                ent["custom_emoji_id"] = arg
            elif tag == "tg-time":
                if not DATE_TIME_FORMAT.fullmatch(arg):
                    raise HTMLParseError("Invalid date format used")
                if open_["date"] <= 0:
                    continue  # TDLib keeps the text and drops the entity
                ent["unix_time"] = open_["date"]
                if arg:
                    ent["date_time_format"] = arg
            entities.append((open_["seq"], ent))
    if stack:
        raise HTMLParseError(f'Can\'t find end tag corresponding to start tag "{stack[-1]["tag"]}"')
    entities.sort(key=lambda se: (se[1]["offset"], -se[1]["length"], se[0]))
    return trim_formatted("".join(out), [e for _, e in entities])


def trim_formatted(text: str, entities: list[dict]) -> tuple[str, list[dict]]:
    """Strip leading/trailing whitespace like Telegram and clip entities accordingly."""
    stripped = text.strip(" \t\r\n")
    if stripped == text:
        return text, entities
    lead = utf16_len(text[: len(text) - len(text.lstrip(" \t\r\n"))])
    total = utf16_len(stripped)
    result = []
    for e in entities:
        start = max(0, e["offset"] - lead)
        end = min(total, e["offset"] + e["length"] - lead)
        if end > start:
            result.append({**e, "offset": start, "length": end - start})
    return stripped, result
