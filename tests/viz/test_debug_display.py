"""How the debugger's screens print slot values (``ren.viz.debug.screens.complex_row``).

Oracle: the decimal text of each value, written out by hand.
"""

from __future__ import annotations

import numpy as np

from ren.viz.debug.screens import complex_row


def test_a_slot_that_rounds_to_zero_is_shown_without_a_minus_sign():
    row = complex_row(np.array([-1e-12 - 1e-12j]))
    assert row == "+0.000000000+0.000000000j"
    assert "-" not in row


def test_signs_that_survive_the_rounding_are_kept():
    row = complex_row(np.array([-0.5 + 0.25j, 1 - 2j, -0.0 + 0.0j]))
    assert row == "-0.500000000+0.250000000j  +1.000000000-2.000000000j  +0.000000000+0.000000000j"


def test_integer_slots_are_shown_as_integers():
    assert complex_row(np.array([3, -1, 0])) == "3  -1  0"
