"""Typed errors of the engine.

Every illegal action raises an :class:`IllegalActionError` subclass whose ``code`` is one of the
machine codes of GAME_RECORD.md; the state it was applied to is left unchanged (states are
immutable). Errors carry codes and short English developer messages, never user-facing prose:
only ``tgbot/`` writes text for people.

>>> try:
...     raise NotYourTurnError("seat 2 acted, seat 0 is to act")
... except IllegalActionError as e:
...     e.code
'not_your_turn'
>>> error_for_code("bad_card_count") is BadCardCountError
True
"""

from __future__ import annotations

__all__ = [
    "ERROR_CODES",
    "BadCardCountError",
    "BelieveNotAllowedError",
    "CardsNotInHandError",
    "ChallengeNotAllowedError",
    "ClaimNotAllowedError",
    "GameOverError",
    "IllegalActionError",
    "NotYourTurnError",
    "PlayNotAllowedError",
    "error_for_code",
]


class IllegalActionError(ValueError):
    """An action the rules refuse. ``code`` is the GAME_RECORD.md error code."""

    code: str = "illegal_action"


class GameOverError(IllegalActionError):
    """Any action after the game has ended."""

    code = "game_over"


class NotYourTurnError(IllegalActionError):
    """The acting seat is not the current player."""

    code = "not_your_turn"


class PlayNotAllowedError(IllegalActionError):
    """A play during a final check or a cap answer (only challenge or believe are allowed)."""

    code = "play_not_allowed"


class BelieveNotAllowedError(IllegalActionError):
    """A belief outside a final check or a cap answer (belief is implicit in a play)."""

    code = "believe_not_allowed"


class ChallengeNotAllowedError(IllegalActionError):
    """A challenge on an empty pile: there is no play to challenge."""

    code = "challenge_not_allowed"


class BadCardCountError(IllegalActionError):
    """A play of 0 or of more than 4 cards."""

    code = "bad_card_count"


class CardsNotInHandError(IllegalActionError):
    """A play with a card the player does not hold."""

    code = "cards_not_in_hand"


class ClaimNotAllowedError(IllegalActionError):
    """A claim the variant forbids (wrong rank, or none where one is needed)."""

    code = "claim_not_allowed"


_BY_CODE = {
    cls.code: cls
    for cls in (
        GameOverError,
        NotYourTurnError,
        PlayNotAllowedError,
        BelieveNotAllowedError,
        ChallengeNotAllowedError,
        BadCardCountError,
        CardsNotInHandError,
        ClaimNotAllowedError,
    )
}
#: The codes in the precedence order of GAME_RECORD.md: when several apply, the first is reported.
ERROR_CODES: tuple[str, ...] = tuple(_BY_CODE)


def error_for_code(code: str) -> type[IllegalActionError]:
    """The error class for a GAME_RECORD.md code. Raises ``KeyError`` for unknown codes."""
    return _BY_CODE[code]
