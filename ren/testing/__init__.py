"""The backend conformance kit: check any device against the python reference.

``python -m ren.testing --device NAME`` runs every kernel family on rings of several sizes and
both word types, random fused programs, and edge values, on ``NAME`` and on ``"python"``, and
prints a table of what passed. ``run_conformance`` does the same from Python and returns a
``Report``. See the "Writing a backend" page of the docs.

Each *case* is one small program built twice from the same seeded inputs: once on the device under
test, once on ``"python"`` (the NumPy reference). Both are realized, and every output's stored
words (Montgomery form, limb-major) are compared word by word; a mismatch names the output, the
first differing limb and slot, the two words, and, found by re-running the case with
``REN_VALIDATE=1``, the first kernel that went wrong. A case that raises is a failure that keeps
the error message and where it was raised; the suite goes on.

Inputs are made on ``"python"`` in the domain a case needs (an NTT-form input is transformed
there) and copied to the device, so a case runs on the device only the kernels of its family and
the copy: a broken NTT fails the ``ntt`` family and the cases whose programs run an NTT, not the
rest. Each ``CaseResult`` lists the kernel kinds its program ran on the device.

Families (``FAMILIES``): ``elementwise``, ``ntt``, ``intt``, ``automorphism``, ``rescale``,
``basis``, ``copy``, ``random``, ``edge``. Rings: ``n`` in 2, 8, 64, 1024, 4096, ``u32`` words
(30-bit moduli) and ``u64`` words (60-bit moduli; the edge family adds 62-bit ones, the largest
``u64`` allows), 1 to 4 moduli; ``quick=True`` uses two small rings.

Exit status of the command: 0 when every case passed, 1 when one failed, 2 when the device cannot
be used at all (an unknown name, or a ``RenError`` or ``ImportError`` the first time it runs a
kernel, such as PyCUDA missing).
"""

from __future__ import annotations

from ren.testing.cases import FAMILIES, cases
from ren.testing.cli import main
from ren.testing.programs import edge_patterns, random_program
from ren.testing.rings import BITS as BITS
from ren.testing.rings import QUICK_RINGS as QUICK_RINGS
from ren.testing.rings import SIZES as SIZES
from ren.testing.rings import Case, conformance_rings, ring_label
from ren.testing.run import (
    CaseResult,
    DeviceUnavailable,
    FamilyStats,
    Report,
    check_device,
    compare,
    run_case,
    run_conformance,
    stored_words,
)
from ren.testing.run import (
    pinpoint as pinpoint,  # the tests pinpoint a case directly
)

__all__ = [
    "FAMILIES",
    "Case",
    "CaseResult",
    "DeviceUnavailable",
    "FamilyStats",
    "Report",
    "cases",
    "check_device",
    "compare",
    "conformance_rings",
    "edge_patterns",
    "main",
    "random_program",
    "ring_label",
    "run_case",
    "run_conformance",
    "stored_words",
]
