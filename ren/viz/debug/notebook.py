"""The debugger in a notebook: the ``Stepper``'s steps as displays, with buttons where it can.

``notebook(*values)`` (or ``notebook(fn, *args)``: ``fn(*args)`` builds the values) wraps a
``Stepper`` in a ``NotebookDebugger``, whose steps (``next_region``, ``next_pass``, ``run``,
``finish``; the views ``regions``, ``slots``) return ``ren.display.Display``s: in a notebook a box
with the Stepper's screen and a table where one helps (what ran by region: kernels, units, time,
limbs; a pass's rules; the watched values' slots and precision), printed the screen. The steps
are the Stepper's own: the realization is the one ``realize`` runs.

As a cell's value the debugger is, where ``ipywidgets`` imports, a widget: buttons *next region*,
*next pass*, *run unit* and *finish* over the latest step's box; a click runs that step and
replaces the box, a button with nothing left is disabled, and a step called in a cell moves it
too. Otherwise (or with ``widgets=False``: a test, a static export) it is the banner and the
regions with a line saying how to step (``dbg.next_region()`` in the next cell), each call's value
showing its step (nbconvert's export shows a widget's view, not that HTML: a page meant to be
read static passes ``widgets=False``). ``for step in dbg.steps(): display(step)`` shows every
region's step in one cell.

The displays keep ``ren.display``'s rules: offline HTML (no script, no link), at most
``ren.display.LIMIT`` bytes (a long screen is cut in the box, not in its text), no word of a
buffer or a key; slots only for the values registered with ``watch`` (which asks for them).
"""

from __future__ import annotations

import importlib
import re
from collections import Counter
from collections.abc import Iterator
from types import ModuleType
from typing import Any, Self

from numpy.typing import ArrayLike

from ren.display import Display, box, esc, fields, table
from ren.errors import RenError
from ren.ir.region import region_name
from ren.poly import Poly
from ren.viz.debug.regions import depth_arg, spans_text
from ren.viz.debug.screens import count_text, cut_lines
from ren.viz.debug.stepper import Stepper

__all__ = ["PRE_LINES", "TABLE_ROWS", "NotebookDebugger", "notebook", "watched_values"]

#: Lines of a screen a step's box shows (its text, printed, keeps them all).
PRE_LINES = 80
#: Regions the table of what ran shows; the rest are counted in a last row.
TABLE_ROWS = 24

#: The widget's buttons, in order: label -> the method a click calls (with no argument).
BUTTONS = {
    "next region": "next_region",
    "next pass": "next_pass",
    "run unit": "run",
    "finish": "finish",
}

_PRE = "font-family:monospace;font-size:12px;margin:4px 0;white-space:pre;overflow-x:auto"
_HINT = "margin:4px 0;color:#546e7a"


class NotebookDebugger:
    """A ``Stepper`` whose steps return displays, shown as buttons where ``ipywidgets`` is.

    Args:
        stepper: the stepper to drive (``notebook`` makes one); kept as ``.stepper``.
        depth: the region depth ``next_region``, ``regions`` and the *next region* button use
            (paths cut to ``depth`` names; 2: ``bootstrap/eval_mod``).
        widgets: ``True`` shows the widget (and needs ``ipywidgets``), ``False`` the printed
            steps, ``None`` (the default) the widget when ``ipywidgets`` can be imported.

    Raises:
        ValueError: for a depth that is not a number from 1 on.
        TypeError: for ``widgets`` that is not ``True``, ``False`` or ``None``.
    """

    def __init__(self, stepper: Stepper, depth: int = 2, widgets: bool | None = None) -> None:
        if widgets is not None and not isinstance(widgets, bool):
            raise TypeError(f"widgets is True, False or None (automatic), got {widgets!r}")
        self.stepper = stepper
        self.depth = depth_arg(depth)
        self.widgets = widgets
        self.count = 0  # steps taken, for the boxes' titles
        self.latest = self.overview()  # what the widget shows: the latest step
        self._html: Any = None  # the widget's HTML (ipywidgets.HTML), once made
        self._buttons: dict[str, Any] = {}
        self._widget: Any = None

    @property
    def done(self) -> bool:
        """Whether every unit ran (the values are realized)."""
        return self.stepper.done

    def __repr__(self) -> str:
        return self.overview().text

    # --- the steps -------------------------------------------------------------------------------
    def next_region(self, depth: int | None = None) -> Display:
        """Run to the end of the next unit's region (paths cut to ``depth``; default: ``.depth``).

        The box: ``Stepper.next_region``'s screen, what ran by region, the values that arrived.
        """
        start = self.stepper.ran
        text = self.stepper.next_region(self.depth if depth is None else depth)
        return self._step("next region", text, start, _watched_table(text))

    def next_pass(self) -> Display:
        """Move the pass cursor on (``Stepper.next_pass``): the rules fired, the graph after it."""
        before = self.stepper.cursor
        text, rules = self.stepper.next_pass(), ""
        if self.stepper.cursor != before and (p := self.stepper.record.passes[before]).rules:
            rows = [(name, n) for name, n in p.rule_counts()]
            rules = table(("rule", "rewrites"), rows, f"rules pass {p.step} ({p.name}) fired")
        return self._step("next pass", text, self.stepper.ran, rules)

    def run(self, count: int | None = 1) -> Display:
        """Run the next ``count`` exec units (``None``: the rest), as ``Stepper.run``.

        Raises:
            ValueError: for a count below 1.
        """
        start = self.stepper.ran
        text = self.stepper.run(count)
        what = "run the rest" if count is None else f"run {count} unit{'s' * (count != 1)}"
        return self._step(what, text, start)

    def finish(self) -> Display:
        """Run every unit left (the values end as ``realize`` leaves them); the watched slots."""
        start, was_done = self.stepper.ran, self.stepper.done
        text = self.stepper.finish()
        if not was_done:
            slots = self.stepper.slots()
            if watched_values(slots):
                text = f"{text}\n{slots}"
        return self._step("finish", text, start, _watched_table(text))

    def steps(self, depth: int | None = None) -> Iterator[Display]:
        """Run region by region to the end, yielding each ``next_region`` display (none if done).

        ``for step in dbg.steps(): display(step)`` shows them all in one cell.
        """
        while not self.stepper.done:
            yield self.next_region(depth)

    # --- views: nothing runs ---------------------------------------------------------------------
    def overview(self) -> Display:
        """The banner, the regions and how to step: what the debugger shows as a cell's value."""
        how = (
            "to step: dbg.next_region() in the next cell (also next_pass(), run(), finish(), "
            "or steps() for every region at once), dbg being this debugger; each shows its step"
        )
        if self.stepper.done:
            how = "every unit ran: the values are realized (dbg.slots() shows the watched ones)"
        banner, regions = self.stepper.banner(), self.stepper.regions(self.depth)
        html = box(
            "ren debugger", _pre(banner), _pre(regions), f'<p style="{_HINT}">{esc(how)}</p>'
        )
        return Display(html, f"{banner}\n{regions}\n{how}")

    def regions(self, depth: int | None = None) -> Display:
        """The regions in the order they first run, and how many of their units ran."""
        text = self.stepper.regions(self.depth if depth is None else depth)
        return Display(box("ren debugger: regions", _status(self.stepper), _pre(text)), text)

    def slots(self) -> Display:
        """The watched values' slots and precision as their buffers stand now (as ``slots``)."""
        text = self.stepper.slots()
        parts = [_pre(text), _watched_table(text)]
        return Display(box("ren debugger: slots", _status(self.stepper), *parts), text)

    def watch(
        self,
        ciphertext: object,
        context: object = None,
        expected: ArrayLike | None = None,
        label: str | None = None,
    ) -> Self:
        """Watch a ciphertext in the ``slots`` views (``Stepper.watch``); returns the debugger."""
        self.stepper.watch(ciphertext, context, expected, label)
        return self

    # --- the widget ------------------------------------------------------------------------------
    def widget(self) -> Any:  # Any: an ipywidgets.VBox; ipywidgets has no type information
        """The buttons over the latest step's box, as an ``ipywidgets.VBox`` (made once).

        Raises:
            ImportError: when ``ipywidgets`` is not installed.
        """
        if self._widget is None:
            w = _ipywidgets()
            if w is None:
                raise ImportError(
                    "the notebook debugger's buttons need ipywidgets (pip install ipywidgets); "
                    "without it, step with dbg.next_region() and the other methods"
                )
            self._html = w.HTML(value=self.latest.html)
            for label, name in BUTTONS.items():
                button = w.Button(description=label, tooltip=f"dbg.{name}()")
                button.on_click(lambda _button, name=name: self._click(name))
                self._buttons[label] = button
            self._widget = w.VBox([w.HBox(list(self._buttons.values())), self._html])
            self._sync()
        return self._widget

    def _repr_html_(self) -> str:
        return self.overview().html

    def _repr_mimebundle_(self, include: object = None, exclude: object = None) -> Any:
        """The widget's bundle where widgets are on (IPython adds ``_repr_html_`` beside it)."""
        if self.widgets is False or (self.widgets is None and _ipywidgets() is None):
            return None
        return dict(self.widget()._repr_mimebundle_(include=include, exclude=exclude))

    def _click(self, name: str) -> None:
        try:
            getattr(self, name)()
        except (ValueError, TypeError, RenError) as e:  # shown in the box, not lost in a log
            text = f"error: {e}"
            self.latest = Display(box("ren debugger: error", _pre(text)), text)
            self._sync()

    def _sync(self) -> None:
        """Show the latest step in the widget (once made); disable a button with nothing left."""
        if self._html is None:
            return
        self._html.value = self.latest.html
        last_pass = self.stepper.cursor >= len(self.stepper.record.passes)
        for label, button in self._buttons.items():
            button.disabled = last_pass if label == "next pass" else self.stepper.done

    # --- the boxes -------------------------------------------------------------------------------
    def _step(self, what: str, text: str, start: int, extra: str = "") -> Display:
        """A step's box: the status, the screen ``text``, what ran from unit ``start``, more."""
        parts = (_ran_table(self.stepper, start, self.stepper.ran), extra)
        self.count += 1
        title = f"ren debugger, step {self.count}: {what}"
        self.latest = Display(box(title, _status(self.stepper), _pre(text), *parts), text)
        self._sync()
        return self.latest


def notebook(
    *values: object, region: str | None = None, depth: int = 2, widgets: bool | None = None
) -> NotebookDebugger:
    """Step through the realization of ``values`` in a notebook: ``notebook(ct)``, ``(fn, x)``.

    Args:
        values: lazy ``Poly`` values or ciphertexts (as ``Stepper`` takes), or a function and its
            arguments: ``fn(*args)`` is called for the values (a tuple or list it returns is
            several values; ``functools.partial`` passes keywords).
        region: run the units before the first kernel in this region (``eval_mod``,
            ``bootstrap/eval_mod``) first, as ``debug(value, region=)`` does.
        depth: the region depth of ``next_region`` and its button (default 2).
        widgets: ``True``, ``False`` or ``None`` (automatic): see ``NotebookDebugger``.

    Returns:
        debugger (NotebookDebugger): over a ``Stepper`` (``.stepper``) with no unit run but
        those before ``region``.

    Raises:
        TypeError: for an argument (or a value ``fn`` returned) that is neither a ``Poly`` nor a
            ciphertext, or no argument at all.
        ValueError: when every value is realized already, or no kernel is in ``region``.
    """
    accepted = (
        "notebook() takes lazy Poly values or ciphertexts (values with parts and "
        "__ren_watch__), or a function and its arguments that builds them"
    )
    if not values:
        raise TypeError(f"{accepted}; it got none")
    where = "argument"
    if callable(values[0]):
        fn, args = values[0], values[1:]
        name = getattr(fn, "__qualname__", type(fn).__name__)
        built = fn(*args)
        values = tuple(built) if isinstance(built, (tuple, list)) else (built,)
        if not values:
            raise TypeError(f"{accepted}; {name}(...) returned no value to step through")
        where = f"{name}(...) returned, as value"
    for i, v in enumerate(values):
        if not isinstance(v, Poly) and not (hasattr(v, "__ren_watch__") and hasattr(v, "parts")):
            text = repr(v) if len(repr(v)) <= 60 else repr(v)[:60] + "..."
            raise TypeError(f"{accepted}; {where} {i}, of type {type(v).__name__}: {text}")
    depth = depth_arg(depth)
    stepper = Stepper(*values)
    if region is not None:
        stepper.title = stepper.run_to_region(region)
    return NotebookDebugger(stepper, depth, widgets)


def watched_values(text: str) -> list[dict[str, str]]:
    """The watched values a screen shows (``slots``, ``next_region``), as dicts of its fields.

    A value is a line ``LABEL: SUMMARY`` then indented lines: its keys are ``label``, ``summary``,
    ``slots``, ``expected`` and ``precision`` where shown, and ``notes`` for the other lines.
    """
    lines = text.splitlines()
    out: list[dict[str, str]] = []
    value: dict[str, str] | None = None
    for i, line in enumerate(lines):
        if line.startswith("  "):
            if value is not None:
                m = _FIELD.fullmatch(line[2:])
                if m:
                    value[m["key"]] = m["rest"]
                else:
                    value["notes"] = "; ".join(filter(None, [value.get("notes"), line[2:]]))
            continue
        value = None
        if ": " in line and i + 1 < len(lines) and lines[i + 1].startswith("  "):
            label, summary = line.split(": ", 1)
            value = {"label": label, "summary": summary}
            out.append(value)
    return out


#: An indented line of a watched value that is a field: ``slots[:4]  ...``, ``precision: ...``.
_FIELD = re.compile(r"(?P<key>slots|expected|precision)(?:\[:\d+\])?:?\s+(?P<rest>.*)")


# --------------------------------------------------------------------------------------------
# the pieces of a box


def _pre(text: str) -> str:
    return f'<pre style="{_PRE}">{esc(cut_lines(text, PRE_LINES, "print the step for all"))}</pre>'


def _status(st: Stepper) -> str:
    kernels = st.realization.kernels
    if st.done:
        nxt = "none: every unit ran"
    else:
        k = kernels[st.ran]
        nxt = f"kernel {st.ran} {k.info.name} in {region_name(k.region) or '(no region)'}"
    passes = f"{st.cursor} of {len(st.record.passes)}"
    return fields(
        [("pass cursor", passes), ("units ran", f"{st.ran} of {len(kernels)}"), ("next unit", nxt)]
    )


def _ran_table(st: Stepper, start: int, stop: int) -> str:
    """The units ``start .. stop - 1`` by region: kernels, units, time, kinds and limbs."""
    if stop <= start:
        return ""
    kernels, units = st.realization.kernels, st.record.units
    groups: dict[tuple[str, ...], list[int]] = {}
    for i in range(start, stop):
        groups.setdefault(tuple(kernels[i].region), []).append(i)
    rows: list[tuple[object, ...]] = []
    for path, index in groups.items():
        seconds = sum(units[i].seconds or 0.0 for i in index if i < len(units))
        limbs = sorted({kernels[i].info.ring.L for i in index})
        kinds = count_text(Counter(kernels[i].info.kind for i in index))
        where, ms = region_name(path) or "(no region)", f"{seconds * 1e3:.3f}"
        span = str(limbs[0]) if len(limbs) == 1 else f"{limbs[0]}-{limbs[-1]}"
        rows.append((where, _spans(index), len(index), ms, kinds, span))
    if len(rows) > TABLE_ROWS:
        rows[TABLE_ROWS:] = [(f"... {len(rows) - TABLE_ROWS} more regions", "", "", "", "", "")]
    header = ("region", "kernels", "units", "ms", "kinds", "limbs")
    return table(header, rows, f"what ran: {stop - start} unit{'s' * (stop - start > 1)}")


def _watched_table(text: str) -> str:
    """The watched values in a screen as a table (nothing when it shows none)."""
    values = watched_values(text)
    if not values:
        return ""
    keys = ("label", "summary", "slots", "expected", "precision", "notes")
    rows = [tuple(v.get(k, "") for k in keys) for v in values]
    header = ("value", "is", "slots", "expected", "precision", "notes")
    return table(header, rows, "watched values (decrypted: you asked with watch)")


def _spans(index: list[int]) -> str:
    """Sorted kernel indices as ranges (``spans_text``): ``0-7, 9``."""
    runs: list[tuple[int, int]] = []
    for i in index:
        if runs and runs[-1][1] == i - 1:
            runs[-1] = (runs[-1][0], i)
        else:
            runs.append((i, i))
    return spans_text(runs)


def _ipywidgets() -> ModuleType | None:
    """``ipywidgets`` if it can be imported (here, on first use: it is optional), else ``None``."""
    try:
        return importlib.import_module("ipywidgets")
    except ImportError:
        return None
