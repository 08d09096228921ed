"""Figures as people read them: a cost is never printed in exponent form."""

from __future__ import annotations

import pytest

from praisonmem.cli.output import fmt_cost


@pytest.mark.parametrize(("value", "human", "script"), [
    (1.2e-05, "$0.000012", "0.000012"),
    (6e-06, "$0.000006", "0.000006"),
    (2e-07, "$0.0000002", "0.0000002"),
    (0.0021, "$0.0021", "0.0021"),
    (0.0, "$0", "0"),
    (0, "$0", "0"),
    (1234.5, "$1234.5", "1234.5"),
    (None, "", ""),
])
def test_a_cost_is_a_plain_decimal_in_dollars_on_a_screen(value, human, script):
    assert (fmt_cost(value), fmt_cost(value, dollars=False)) == (human, script)


def test_what_is_not_a_number_is_shown_as_it_is():
    assert fmt_cost("n/a") == "n/a" and fmt_cost(True) == "True"
