"""The one codec for callback data: compact ASCII, at most 64 bytes (docs/DESIGN.md, tgbot/).

>>> encode(Tap(Op.PLAY, "Ab3_x-9Z", action_count=41, cards="77Q", claim="7"))
'p:Ab3_x-9Z:41:77Q:7'
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import StrEnum

from telegram.constants import InlineKeyboardButtonLimit

__all__ = [
    "MAX_BYTES",
    "NOT_A_GAME",
    "PANEL_OPS",
    "CallbackDataError",
    "Op",
    "Setting",
    "Tap",
    "decode",
    "encode",
    "pattern",
    "person",
]

#: Telegram's limit on callback_data, in bytes.
MAX_BYTES = InlineKeyboardButtonLimit.MAX_CALLBACK_DATA


class Op(StrEnum):
    """What a button does; its callback data starts with the op's one-letter code (:data:`_OPS`)."""

    JOIN = "join"
    LEAVE = "leave"
    START = "start"
    CANCEL = "cancel"
    VARIANT = "variant"  #: ``arg``: the variant
    PICK = "pick"
    PLAY = "play"
    CHALLENGE = "challenge"
    BELIEVE = "believe"
    REFRESH = "refresh"
    LANG = "lang"  #: a /language choice; the tapped message's chat says group or private
    ADDBOT = "addbot"
    RMBOT = "rmbot"
    TAKEBACK = "takeback"
    QUIT = "quit"  #: leave a running game, confirmed; ``arg``: the seat it was offered to
    TIMER = "timer"  #: ``arg``: seconds as digits, or ``long``
    SETTINGS = "settings"  #: ``arg``: the setting's letter and value (vclassic, sshuffle, t60, tlong, lfr)
    STOPOK = "stopok"  #: stop a running game, confirmed; ``arg``: who asked (:func:`person`)
    AGAIN = "again"  #: a new lobby with the same players
    REC = "rec"  #: the game's record as a file


class Setting(StrEnum):
    """What a /settings button sets: the first letter of its ``arg`` (the rest is the value)."""

    VARIANT = "v"
    SEATING = "s"
    TIMER = "t"
    LANGUAGE = "l"


# op -> (code, fields after the game id)
_OPS: dict[Op, tuple[str, tuple[str, ...]]] = {
    Op.JOIN: ("j", ()),
    Op.LEAVE: ("l", ()),
    Op.START: ("s", ()),
    Op.CANCEL: ("x", ()),
    Op.VARIANT: ("v", ("arg",)),
    Op.PICK: ("k", ("action_count", "cards")),
    Op.PLAY: ("p", ("action_count", "cards", "claim")),
    Op.CHALLENGE: ("c", ("action_count",)),
    Op.BELIEVE: ("b", ("action_count",)),
    Op.REFRESH: ("r", ()),
    Op.LANG: ("g", ("arg",)),
    Op.ADDBOT: ("a", ()),
    Op.RMBOT: ("m", ()),
    Op.TAKEBACK: ("t", ()),
    Op.QUIT: ("q", ("arg",)),
    Op.TIMER: ("w", ("arg",)),
    Op.SETTINGS: ("e", ("arg",)),
    Op.STOPOK: ("y", ("arg",)),
    Op.AGAIN: ("n", ()),
    Op.REC: ("d", ()),
}
_BY_CODE = {code: (op, fields) for op, (code, fields) in _OPS.items()}
# ASCII only, matched whole (``fullmatch``: ``$`` would let a trailing newline through).
_GID = re.compile(r"[A-Za-z0-9_-]{1,16}", re.ASCII)  # a game id (a chat id for timer, settings)
_FIELDS = {
    "action_count": re.compile(r"0|[1-9][0-9]{0,5}", re.ASCII),
    "cards": re.compile(r"[A2-9TJQK]{0,4}", re.ASCII),
    "claim": re.compile(r"[A2-9TJQK]", re.ASCII),
    "arg": re.compile(r"[a-z0-9]{1,12}", re.ASCII),
}

#: Ops whose game id field is no game's id.
NOT_A_GAME = frozenset({Op.LANG, Op.TIMER, Op.SETTINGS})
#: Ops of a player's private panel: valid only on a message in the presser's own private chat.
PANEL_OPS = frozenset({Op.PICK, Op.PLAY, Op.CHALLENGE, Op.BELIEVE, Op.REFRESH, Op.TAKEBACK, Op.REC})


class CallbackDataError(ValueError):
    """Callback data this bot did not produce (or from an incompatible version)."""


@dataclass(frozen=True, slots=True)
class Tap:
    """A decoded button press: the op, the game id, and the op's fields: ``action_count``
    (engine actions applied when the keyboard was drawn), ``cards`` (a compact hand, e.g.
    ``77Q``), ``claim`` (one rank character), ``arg`` (a short word)."""

    op: Op
    game_id: str
    action_count: int = -1
    cards: str = ""
    claim: str = ""
    arg: str = ""


def pattern(*ops: Op) -> re.Pattern[str]:
    """The callback data of ``ops``, for ``CallbackQueryHandler(pattern=…)``."""
    return re.compile("^[" + "".join(_OPS[op][0] for op in ops) + "]:")


def person(user_id: int) -> str:
    """A user id as a callback ``arg``: base 36, at most 11 characters (ids have at most 52 bits)."""
    digits, rest, out = "0123456789abcdefghijklmnopqrstuvwxyz", abs(user_id), ""
    while True:
        rest, digit = divmod(rest, 36)
        out = digits[digit] + out
        if not rest:
            return out


def encode(tap: Tap) -> str:
    """The tap's callback data. Raises ``ValueError`` past 64 bytes."""
    code, fields = _OPS[tap.op]
    data = ":".join([code, tap.game_id] + [str(getattr(tap, field)) for field in fields])
    if len(data.encode()) > MAX_BYTES:
        raise ValueError(f"callback data over {MAX_BYTES} bytes: {data!r}")
    return data


def decode(data: str | None) -> Tap:
    """The tap of ``data``. Raises :class:`CallbackDataError` for anything :func:`encode` did
    not produce: the result always re-encodes to exactly ``data``."""
    if not isinstance(data, str) or not data.isascii() or len(data) > MAX_BYTES:
        raise CallbackDataError(f"unknown callback data: {data!r}")
    parts = data.split(":")
    entry = _BY_CODE.get(parts[0])
    if entry is None or len(parts) != 2 + len(entry[1]) or not _GID.fullmatch(parts[1]):
        raise CallbackDataError(f"unknown callback data: {data!r}")
    op, fields = entry
    values: dict[str, str | int] = {}
    for field, raw in zip(fields, parts[2:], strict=True):
        if not _FIELDS[field].fullmatch(raw):
            raise CallbackDataError(f"bad {field} in {data!r}")
        values[field] = int(raw) if field == "action_count" else raw
    tap = Tap(op, parts[1], **values)  # type: ignore[arg-type]
    if encode(tap) != data:  # a guard: every field above has one spelling
        raise CallbackDataError(f"not in canonical form: {data!r}")
    return tap
