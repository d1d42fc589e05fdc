"""The scheme tests' fixture: ``scheme``, BFV and then BGV (``tests/schemes/integer_cases.py``)."""

from __future__ import annotations

import pytest

from tests.schemes.integer_cases import SCHEMES


@pytest.fixture(params=sorted(SCHEMES))
def scheme(request):
    """``ren.schemes.bfv``, then ``ren.schemes.bgv``."""
    return SCHEMES[request.param]
