"""The constants of the ``tuned`` player, per variant: data written by ``scripts/fit_tuned.py``
(coordinate search by self-play against three ``counting`` players on its own seeds).

Each entry overrides a class constant of :class:`core.counting.CountingPlayer`; one not listed
keeps ``counting``'s value.
"""

from __future__ import annotations

__all__ = ["TUNED"]

TUNED: dict[str, dict[str, float | list[float]]] = {
    "classic": {
        "CHALLENGE_PRIOR": 0.069,
        "FINAL_PRIOR": 0.7714,
        "MULTI_RATIO": [2.0, 3.3333, 5.3333],
        "OPEN_VALUE": 0.3333,
        "THREAT_SCALE": 0.45,
    },
    "russian": {"CHALLENGE_COST": 1.5, "CHALLENGE_PRIOR": 0.0471, "OPEN_VALUE": 0.3333},
}
