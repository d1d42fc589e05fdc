"""The report of a ``Trace``: one self-contained HTML file, or the same as text for a terminal.

``build_report(trace, title)`` returns the HTML of everything Ren did in a recorded block
(``ren.viz.record()``), in the order it happened:

* a summary: the caller's text (an example's result against its oracle), the totals and a timeline
  of every realization and ``ren.jit`` call;
* for each realization: its regions (``ren.region``) as nested boxes, collapsed, each with its
  kernels, time, bytes and, for CKKS, level, scale and precision (``ren.viz.report.regions``,
  ``ren.viz.report.boxes``), and a sortable table of them; the lazy graph handed to the
  scheduler; each pass with its time, the rules it fired (with counts), the nodes it created and
  the graph after it (new nodes with a thick red border); the scheduled kernels with their source
  for each backend (the IR the ``python`` device interprets, the C of ``cpu``, the CUDA C of
  ``cuda``: rendered, not compiled); the memory plan (the picture of ``ren.viz.memory`` and its
  numbers); the exec units in the order they ran, with their buffers and times;
* the ``ren.jit`` calls: captures and replays, their units, runner and times;
* the time of each pass, summed over the realizations.

The file needs no network: graphs and memory plans are inline SVG, the parts that can be long are
``<details>`` elements, closed until clicked (a table of more than 64 rows too), and one small
inline script sorts the region table (the page reads the same without it). Graphs are drawn by
Graphviz's ``dot`` (``dot -Tsvg`` of ``ren.ir.dot.to_dot``); a graph of more than
``GRAPH_NODE_LIMIT`` nodes is drawn collapsed to its regions, and without ``dot`` the report says
how to install it: no graph is ever shown as DOT text. A trace with many
realizations (the key generation and encryptions of a CKKS program) gives each a heading with its
outputs' rings and kernel count, opens the ones in ``focus`` (by default the one with the most
kernels) and draws the graph after every pass only for those (``graphs="all"`` draws them all).

The output is stable: the same program gives the same bytes except for times, and
``times=False`` writes a dash for every time, so two reports can be compared byte for byte.
Buffers are named as in the trace (``b0``, ``arena[0:512]``); no ``id()`` or address is printed.
``text_report`` writes the same content for a terminal (without graphs and sources).
"""

from __future__ import annotations

from ren.viz.report.blocks import (
    BACKENDS,
    GRAPH_NODE_LIMIT,
    INSTALL_NOTE,
    fold_helpers,
    inline_svg,
)
from ren.viz.report.page import build_report, write_report
from ren.viz.report.text import device_plans, text_report

__all__ = [
    "BACKENDS",
    "GRAPH_NODE_LIMIT",
    "INSTALL_NOTE",
    "build_report",
    "device_plans",
    "fold_helpers",
    "inline_svg",
    "text_report",
    "write_report",
]
