"""The report's observing pass: each CKKS region's output decrypted against its plaintext shadow.

Inside ``ren.viz.record()`` every region entered with ``ren.ir.region.in_region`` (each CKKS
operation, each circuit and bootstrap stage) keeps its output, and while the context holds the
secret key each ciphertext carries a plaintext shadow (``ren.schemes.ckks.shadow``): the same
operations on exact NumPy values. ``measure_precision(trace)`` runs after the program: it
decrypts every kept output in realizations of its own, with no observer (nothing of it is
recorded, and the schedule the trace holds is the one the program ran), compares each with its
shadow and notes the precision on the region (``notes["bits"]``: absolute,
``ckks.precision_bits`` against the shadow's slots; ``notes["bits_relative"]`` and
``notes["magnitude"]`` where the values pass 1; ``notes["warning"]`` for a range the value breaks,
also a ``RangeWarning``), which the report shows in each box, labelled. Then it lets the outputs
go. A region inside a ``ren.jit`` function whose plan was replayed since its capture is not
measured (``notes["unmeasured"]`` says why): the replay wrote its own words where the value was.
A BFV or BGV ciphertext, in a context holding the secret key, notes its noise budget instead
(``notes["noise_budget"]``). The measure of a value (its ``__ren_observe__``) returns a float (the
bits) or a dict of notes.

``python -m ren.viz`` calls it before writing the report.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator
from typing import TYPE_CHECKING

from ren.engine.observe import OBSERVERS
from ren.hooks import Measure
from ren.ir.region import KEEP, Instance, instances_of
from ren.viz.trace import Trace

if TYPE_CHECKING:
    from ren.poly import Poly

#: A kept output's measure: its bits, or notes of its own (an integer scheme's noise budget).
_Measure = Measure  # ren.hooks: what a value's __ren_observe__ gives back to measure

__all__ = ["measure_precision"]

#: Why a region inside a ``ren.jit`` function replayed since its capture has no measure.
REPLAYED = (
    "not measured: a later call of its jitted function replayed the plan into the buffers that "
    "hold the value this region kept"
)

#: How many outputs one realization decrypts (each holds its ring's words a few times over).
CHUNK = 128


@contextlib.contextmanager
def _unobserved() -> Iterator[None]:
    """No observer and no kept outputs: what runs inside is not part of the recording."""
    token, keep = OBSERVERS.set(()), KEEP.set(False)
    try:
        yield
    finally:
        KEEP.reset(keep)
        OBSERVERS.reset(token)


def _kept(trace: Trace) -> list[tuple[Instance, tuple[Poly, ...], _Measure]]:
    """``(instance, polys, bits)`` of every region of the trace whose output can be measured.

    A value that can says how through ``__ren_observe__()`` (CKKS ciphertexts with a shadow, BFV
    and BGV ciphertexts under a secret key): the polys to realize, then a function giving the bits
    (or a dict of notes).
    """
    seen: dict[int, Instance] = {}
    for rec in trace.realizations:
        for kernel in rec.kernels:
            for instance in instances_of(kernel.region):
                seen.setdefault(instance.serial, instance)
    out: list[tuple[Instance, tuple[Poly, ...], _Measure]] = []
    for instance in seen.values():
        if instance.notes.get("replayed"):  # its kept value holds a later call's words
            instance.notes["unmeasured"] = REPLAYED
            continue
        value = instance.notes.get("output")
        how = getattr(type(value), "__ren_observe__", None)
        got = how(value) if how is not None else None
        if got is not None:
            out.append((instance, *got))
    return out


def measure_precision(trace: Trace, progress: bool | None = None) -> int:
    """Note the precision of every CKKS region output in ``trace`` (see the module docstring).

    Args:
        trace: what ``ren.viz.record()`` recorded.
        progress: print a progress line on standard error (default: when it is a terminal).

    Returns:
        How many regions got a precision.
    """
    from ren.poly import realize

    if progress is None:
        progress = sys.stderr.isatty()
    done = 0
    with _unobserved():
        kept = _kept(trace)
        for start in range(0, len(kept), CHUNK):
            chunk = kept[start : start + CHUNK]
            realize(*[p for _, polys, _ in chunk for p in polys])
            for instance, _, measure in chunk:
                got = measure()
                if isinstance(got, dict):  # notes of their own (an integer scheme's budget)
                    instance.notes.update(got)
                else:
                    instance.notes["bits"] = got
                done += 1
            if progress:
                print(f"\rprecision of each region: {done}/{len(kept)}", end="", file=sys.stderr)
    if progress and kept:
        print(file=sys.stderr)
    for instance in _all_instances(trace):
        instance.notes.pop("output", None)  # measured or not, the outputs go
    return done


def _all_instances(trace: Trace) -> Iterator[Instance]:
    for rec in trace.realizations:
        for kernel in rec.kernels:
            yield from instances_of(kernel.region)
