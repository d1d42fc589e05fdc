"""The step-through realization debugger: walk one realization pass by pass and unit by unit.

A realization (``docs/realize.md``) schedules a graph through the twelve passes, plans memory,
builds exec units and runs them. The debugger shows each of those steps as it really happened:
the passes' rewrites are the ones the scheduler recorded (``ren.viz.record``), the kernels and the
memory plan are the realization's own, and the units run through ``Realization.run`` one batch at
a time, so the buffers shown are the real ones at that point. Nothing is scheduled or compiled
differently from a normal ``realize``.

Four ways in:

* ``Stepper(*values)``: the programmatic stepper, for notebooks and tests. Every method returns a
  screen (a string)::

      st = Stepper(c)              # c: a Poly (or a ciphertext) not realized yet
      print(st.step())             # the first pass: rules fired, nodes created, the graph after
      print(st.kernels())
      print(st.run(1))             # runs exec unit 0
      print(st.buffer(0, "limbs")) # what kernel 0 wrote
      st.finish()                  # runs the rest; c is realized exactly as realize() does

* ``debug(*values)``: the same steps as an interactive prompt (``(ren)``; ``help`` lists the
  commands).
* ``notebook(*values)`` (``notebook(fn, *args)`` calls ``fn`` for the values): the steps in a
  notebook (``ren.viz.debug.notebook``). Each step returns a display (a box with the screen and
  tables of what ran); the debugger shows as buttons (*next region*, *next pass*, *run unit*,
  *finish*) where ``ipywidgets`` is installed, and as the banner and the regions, stepped cell by
  cell (``dbg.next_region()``), where it is not (or with ``widgets=False``)::

      dbg = notebook(c)            # the last line of a cell: the buttons, or the regions
      dbg.next_region()            # a box: what ran in the region, the watched values' slots
      for step in dbg.steps():     # every region to the end, in one cell
          display(step)
* ``python -m ren.viz debug SCRIPT.py`` (``main``): runs a script and stops at its first
  realization (``--skip N`` lets ``N`` run first, ``--all`` stops at every one, ``--region NAME``
  runs on to the first kernel in a region ``NAME`` names: ``--region bootstrap``); when the prompt
  is left, the rest of the units run and the script goes on. ``debug(value, region=NAME)`` and
  ``Stepper.run_to_region(NAME)`` do the same for a value.

For CKKS, ``watch(ciphertext, context, expected)`` registers a ciphertext and its plaintext shadow
(a NumPy array of the slots it should hold); once the kernels writing its parts ran, the ``slots``
command decrypts the written buffers (with the context's secret key) and shows the first slots and
the precision in bits against the shadow (absolute: ``-log2`` of the largest slot error, as
``ckks.precision_bits``), and a line for each range the value breaks (a bootstrap's ModRaise
output past ``|t / q_0| <= 2^-8`` or ``|I| <= K``, a function's input outside its interval).

``regions()`` and ``next_region()`` (``regions`` and ``next region`` at the prompt) walk a
realization region by region (``ren.region``): a CKKS bootstrap stage by stage. A watched value
that the realization fuses away (a stage's output, which no buffer holds) is computed apart, in a
realization of its own that no observer sees and that repoints nothing, so the schedule stepped
through is the one ``realize`` runs.
"""

from __future__ import annotations

from ren.viz.debug.commands import Debugger, debug
from ren.viz.debug.notebook import NotebookDebugger, notebook
from ren.viz.debug.session import main
from ren.viz.debug.stepper import Stepper
from ren.viz.debug.watching import watch

__all__ = ["Debugger", "NotebookDebugger", "Stepper", "debug", "main", "notebook", "watch"]

# ``ren.viz`` binds the name ``debug`` to the function, hiding this package's attribute there; the
# function carries the package's other names so ``ren.viz.debug.watch(...)`` and
# ``ren.viz.debug.Stepper`` read the same either way.
debug.watch = watch  # type: ignore[attr-defined]
debug.Stepper = Stepper  # type: ignore[attr-defined]
debug.Debugger = Debugger  # type: ignore[attr-defined]
debug.main = main  # type: ignore[attr-defined]
debug.notebook = notebook  # type: ignore[attr-defined]
debug.NotebookDebugger = NotebookDebugger  # type: ignore[attr-defined]
