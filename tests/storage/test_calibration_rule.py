"""scripts/train_ranker.py's calibration rule: within the noise band of the best cost, the
threshold nearest the current default (ties: the lower); without one, the lowest."""

from __future__ import annotations

from collections.abc import Callable

from tests.helpers import script

_MODULE = script("train_ranker")
chosen_row: Callable[..., tuple[float, int, int, int]] = _MODULE.chosen_row

# right − 1.25 × wrong: 0.4 → 100, 0.5 → 151, 0.6 → 150, 0.7 → 149, 0.8 → 140
CURVE = [(0.4, 150, 40, 210), (0.5, 176, 20, 204), (0.6, 170, 16, 214),
         (0.7, 164, 12, 224), (0.8, 150, 8, 242)]


def test_without_a_default_the_lowest_of_the_flat_top() -> None:
    assert chosen_row(CURVE)[0] == 0.5


def test_the_default_stays_when_the_curve_cannot_tell_it_apart() -> None:
    assert chosen_row(CURVE, 0.6)[0] == 0.6
    assert chosen_row(CURVE, 0.75)[0] == 0.7  # the nearest inside the band
    assert chosen_row(CURVE, 0.4)[0] == 0.5  # 0.4 is outside it


def test_a_tie_goes_to_the_lower_threshold() -> None:
    assert chosen_row(CURVE, 0.65)[0] == 0.6
