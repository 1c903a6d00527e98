"""The constants of the ``tuned`` player, per variant: data written by ``scripts/fit_tuned.py``
(coordinate search by self-play against three ``counting`` players on its own seeds).

Each entry overrides a class constant of :class:`core.counting.CountingPlayer`; one not listed
keeps ``counting``'s value.
"""

from __future__ import annotations

__all__ = ["TUNED"]

TUNED: dict[str, dict[str, float | list[float]]] = {
    "classic": {"FINAL_PRIOR": 0.6923, "OPEN_VALUE": 0.3333},
    "russian": {"CHALLENGE_COST": 1.5, "CHALLENGE_PRIOR": 0.069, "OPEN_VALUE": 0.3333},
}
