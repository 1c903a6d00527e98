"""The one codec for callback data (DESIGN.md: compact ASCII, at most 64 bytes).

A callback is ``op:gid[:field…]``. ``gid`` is the game id; actions whose meaning depends on the
moment (a card picked, a play, a challenge, a belief) carry ``action_count``, the number of engine actions
applied so far, so a stale or replayed tap is refused. Actions that do not depend on the moment
(join, leave, start, refresh, addbot, rmbot, takeback, quit) carry the game id only; all
but addbot and rmbot are idempotent. ``timer`` carries the chat id in place of the game id.

Telegram's limit: callback_data is 1–64 bytes (Bot API, InlineKeyboardButton); PTB does not check
it (TELEGRAM.md), so :func:`encode` does.

>>> data = encode(Tap(Op.PLAY, "Ab3_x-9Z", action_count=41, cards="77Q", claim="7"))
>>> data
'p:Ab3_x-9Z:41:77Q:7'
>>> decode(data) == Tap(Op.PLAY, "Ab3_x-9Z", action_count=41, cards="77Q", claim="7")
True
>>> decode("j:Ab3_x-9Z").op
<Op.JOIN: 'join'>
>>> decode("zzz")
Traceback (most recent call last):
...
tgbot.codec.CallbackDataError: unknown callback data: 'zzz'
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import StrEnum

from telegram.constants import InlineKeyboardButtonLimit

__all__ = ["Op", "Tap", "encode", "decode", "CallbackDataError", "MAX_BYTES", "NOT_A_GAME", "person"]

#: Telegram's limit on callback_data, in bytes.
MAX_BYTES = InlineKeyboardButtonLimit.MAX_CALLBACK_DATA

# op name -> (code, fields after gid)
_OPS: dict[str, tuple[str, tuple[str, ...]]] = {
    "join": ("j", ()),
    "leave": ("l", ()),
    "start": ("s", ()),
    "cancel": ("x", ()),
    "variant": ("v", ("arg",)),
    "pick": ("k", ("action_count", "cards")),
    "play": ("p", ("action_count", "cards", "claim")),
    "challenge": ("c", ("action_count",)),
    "believe": ("b", ("action_count",)),
    "refresh": ("r", ()),
    # /language keyboards: gid is "0" (no game); the chat of the tapped message says whether
    # it is the group's language or the user's own.
    "lang": ("g", ("arg",)),
    "addbot": ("a", ()),
    "rmbot": ("m", ()),
    "takeback": ("t", ()),
    # confirmations name whom they were offered to: quit the seat's index, stopok the asking
    # user (:func:`person`); only that person's tap counts
    "quit": ("q", ("arg",)),
    "timer": ("w", ("arg",)),
    # /settings: gid is the chat id; arg is the setting's letter and value (vclassic, sshuffle,
    # t60, tlong, lfr).
    "settings": ("e", ("arg",)),
    "stopok": ("y", ("arg",)),
    "again": ("n", ()),
    "rec": ("d", ()),
}
_BY_CODE = {code: (name, fields) for name, (code, fields) in _OPS.items()}
# Patterns are ASCII only and matched whole (``fullmatch``: ``$`` would let a trailing newline
# through, ``str.isdigit`` a superscript digit).
_GID = re.compile(r"[A-Za-z0-9_-]{1,16}", re.ASCII)  # a game id (or a chat id for ``timer``, ``settings``)
_TURN = re.compile(r"0|[1-9][0-9]{0,5}", re.ASCII)
_CARDS = re.compile(r"[A2-9TJQK]{0,4}", re.ASCII)
_CLAIM = re.compile(r"[A2-9TJQK]", re.ASCII)
_ARG = re.compile(r"[a-z0-9]{1,12}", re.ASCII)


class Op(StrEnum):
    """What a button does (the first field of its callback data, as a one-letter code)."""

    JOIN = "join"
    LEAVE = "leave"
    START = "start"
    CANCEL = "cancel"
    VARIANT = "variant"
    PICK = "pick"
    PLAY = "play"
    CHALLENGE = "challenge"
    BELIEVE = "believe"
    REFRESH = "refresh"
    LANG = "lang"
    ADDBOT = "addbot"
    RMBOT = "rmbot"
    TAKEBACK = "takeback"
    QUIT = "quit"
    TIMER = "timer"
    SETTINGS = "settings"
    STOPOK = "stopok"
    AGAIN = "again"
    REC = "rec"


class CallbackDataError(ValueError):
    """Callback data this bot did not produce (or from an incompatible version)."""


@dataclass(frozen=True, slots=True)
class Tap:
    """A decoded button press: ``op`` (join, leave, start, cancel, variant, pick, play,
    challenge, believe, refresh, lang (a /language choice), addbot, rmbot, takeback, quit (leave a
    running game, confirmed), timer (a chat's turn timer: ``arg`` seconds as digits, or
    ``long``), settings (a /settings choice, chat id in place of the game id), stopok (stopping
    a running game, confirmed), again (a new lobby with the same players), rec (the game's
    record as a file)), the game id, and the op's fields: ``action_count`` (engine actions
    applied when the keyboard was drawn), ``cards`` (compact hand, e.g. ``77Q``), ``claim``
    (one rank character) and ``arg`` (a short word)."""

    op: Op
    gid: str
    action_count: int = -1
    cards: str = ""
    claim: str = ""
    arg: str = ""


#: Ops whose ``gid`` field is not a game id (a /language choice; a chat id for these two).
NOT_A_GAME = frozenset({"lang", "timer", "settings"})


def person(user_id: int) -> str:
    """A user id as a callback ``arg`` (base 36: Telegram's ids have at most 52 bits, so at most
    11 characters; ``0``, an anonymous admin, is ``0``)."""
    digits, n, out = "0123456789abcdefghijklmnopqrstuvwxyz", abs(user_id), ""
    while True:
        n, r = divmod(n, 36)
        out = digits[r] + out
        if not n:
            return out


def encode(tap: Tap) -> str:
    """Encode a tap as callback data. Raises ``ValueError`` if it would exceed 64 bytes."""
    code, fields = _OPS[tap.op]
    parts = [code, tap.gid] + [str(getattr(tap, f)) for f in fields]
    data = ":".join(parts)
    if len(data.encode()) > MAX_BYTES:
        raise ValueError(f"callback data over {MAX_BYTES} bytes: {data!r}")
    return data


def decode(data: str | None) -> Tap:
    """Decode callback data. Raises :class:`CallbackDataError` for anything :func:`encode` did not
    produce: the result always re-encodes to exactly ``data``."""
    if not isinstance(data, str) or not data.isascii() or len(data) > MAX_BYTES:
        raise CallbackDataError(f"unknown callback data: {data!r}")
    parts = data.split(":")
    entry = _BY_CODE.get(parts[0])
    if entry is None or len(parts) != 2 + len(entry[1]) or not _GID.fullmatch(parts[1]):
        raise CallbackDataError(f"unknown callback data: {data!r}")
    name, fields = entry
    values: dict[str, object] = {}
    for field, raw in zip(fields, parts[2:]):
        pattern = {"action_count": _TURN, "cards": _CARDS, "claim": _CLAIM}.get(field, _ARG)
        if not pattern.fullmatch(raw):
            raise CallbackDataError(f"bad {field} in {data!r}")
        values[field] = int(raw) if field == "action_count" else raw
    tap = Tap(Op(name), parts[1], **values)  # type: ignore[arg-type]
    if encode(tap) != data:  # (a guard: every field above already has one spelling)
        raise CallbackDataError(f"not in canonical form: {data!r}")
    return tap
