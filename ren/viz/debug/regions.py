"""Regions in the debugger: which kernels a region name names, and the walk region by region.

A kernel's region is the path of ``ren.region`` blocks it was built in (``ren.ir.region``). This
module holds the name matching that ``--region`` and ``Stepper.run_to_region`` share
(``region_arg``, ``region_matches``, ``region_names_text``), and the stepper's region screens
(``RegionViews``: ``regions``, ``next_region``, ``finish_region``, ``run_to_region``).
"""

from __future__ import annotations

from ren.engine.observe import observing
from ren.engine.schedule import ScheduledKernel
from ren.ir.region import region_name
from ren.viz.debug.watching import WatchViews


class RegionViews(WatchViews):
    """The stepper's ``regions``, ``next_region``, ``finish_region`` and ``run_to_region``.

    A region screen shows the ``slots`` of the watched values that became available, so these
    build on the watch views.
    """

    def regions(self, depth: int = 2) -> str:
        """The regions of the kernels (paths cut to ``depth`` names), in the order they first run.

        Each with its kernels' index ranges (one region's kernels may come between another's:
        the schedule runs a kernel once its inputs are ready), its units and how many ran;
        ``->`` marks the region of the next unit.
        """
        depth = depth_arg(depth)
        spans: dict[tuple[str, ...], list[tuple[int, int]]] = {}
        for path, first, last in _region_runs(self._kernels, depth):
            spans.setdefault(path, []).append((first, last))
        here = () if self.done else tuple(getattr(self._kernels[self.ran], "region", ()))[:depth]
        width = max(len(_region_text(path)) for path in spans)
        lines = [
            f"{len(spans)} regions (paths cut to {depth} name{'s' * (depth != 1)}) in the order "
            f"they first run; {self.ran} of {len(self._kernels)} units ran",
            f"   {'region':<{width}}  {'units':>5}  {'ran':>5}  kernels",
        ]
        for path, runs in spans.items():
            units = sum(last - first + 1 for first, last in runs)
            ran = sum(max(0, min(last, self.ran - 1) - first + 1) for first, last in runs)
            state = "all" if ran == units else "no" if ran == 0 else str(ran)
            mark = "->" if path == here and not self.done else "  "
            lines.append(
                f"{mark} {_region_text(path):<{width}}  {units:5d}  {state:>5}  {spans_text(runs)}"
            )
        return "\n".join(lines)

    def next_region(self, depth: int = 2) -> str:
        """Run units until the next one belongs to another region (paths cut to ``depth``).

        Or to the end. The screen names the region that ran (its kernels, units and time) and
        the next unit, then shows the ``slots`` of the watched ciphertexts that became available
        (a value this realization fuses away is computed apart: see ``slots``).
        """
        return self._run_region(depth, last=False)

    def finish_region(self, depth: int = 2) -> str:
        """Run until every kernel of the next unit's region (cut to ``depth``) has run.

        Through its last kernel, and those of other regions between (the schedule interleaves
        them); the screen is ``next_region``'s.
        """
        return self._run_region(depth, last=True)

    def run_to_region(self, name: str) -> str:
        """Run units until the next one is in a region ``name`` names; show what ran.

        ``name`` is a region name (``eval_mod``) or a path (``bootstrap/eval_mod``), matched
        against each name or run of names of a kernel's region path (``region_matches``). No
        unit runs when the next one is in that region already.

        Raises:
            ValueError: when no kernel left to run is in such a region (the message lists the
                region names this realization has).
        """
        name = region_arg(name)
        kernels, start = self._kernels, self.ran
        paths = [tuple(getattr(k, "region", ())) for k in kernels]
        target = next(
            (i for i in range(start, len(kernels)) if region_matches(paths[i], name)), None
        )
        if target is None:
            where = "left to run" if start else "in this realization"
            raise ValueError(
                f"no kernel {where} is in a region matching {name!r}; this realization's region "
                f"names are: {region_names_text(paths)}"
            )
        k = kernels[target]
        nxt = f"next: kernel {target} {k.info.name} in {_region_text(paths[target])}"
        if target == start:
            return f"{nxt} (the first in a region matching {name!r}: nothing ran)"
        with observing(self):
            self.realization.run(target - start)
        seconds = sum(u.seconds or 0.0 for u in self.record.units[start:target])
        count = target - start
        return (
            f"ran kernel{'s' * (count > 1)} {_span(start, target - 1)} ({count} "
            f"unit{'s' * (count > 1)} in {seconds * 1e3:.3f} ms) to reach a region matching "
            f"{name!r}\n{nxt}"
        )

    def _run_region(self, depth: int, last: bool) -> str:
        depth = depth_arg(depth)
        if self.done:
            return "every unit ran already: the realization is done"
        kernels, start = self._kernels, self.ran
        path = tuple(getattr(kernels[start], "region", ()))[:depth]
        inside = [tuple(getattr(k, "region", ()))[:depth] == path for k in kernels]
        stop = start + 1
        if last:
            stop = max(i for i in range(start, len(kernels)) if inside[i]) + 1
        while not last and stop < len(kernels) and inside[stop]:
            stop += 1
        before = self._available()
        with observing(self):
            self.realization.run(stop - start)
        units = self.record.units[start:stop]
        seconds = sum(u.seconds or 0.0 for u in units)
        count = stop - start
        lines = [
            f"ran {_region_text(path)}: kernel{'s' * (count > 1)} {_span(start, stop - 1)}, "
            f"{count} unit{'s' * (count > 1)} in {seconds * 1e3:.3f} ms"
        ]
        if self.done:
            lines.append(f"{self.ran} of {len(kernels)} units ran: done; the outputs are stored")
        else:
            k = kernels[self.ran]
            where = _region_text(tuple(getattr(k, "region", ()))[:depth])
            lines.append(f"next: kernel {self.ran} {k.info.name} in {where}")
        arrivals = self._arrivals(before)
        return "\n".join([*lines, arrivals] if arrivals else lines)


def _region_runs(
    kernels: list[ScheduledKernel], depth: int
) -> list[tuple[tuple[str, ...], int, int]]:
    """The kernels as runs ``(path cut to depth, first, last)`` of one region, in order."""
    runs: list[tuple[tuple[str, ...], int, int]] = []
    for i, k in enumerate(kernels):
        path = tuple(getattr(k, "region", ()))[:depth]
        if runs and runs[-1][0] == path:
            runs[-1] = (path, runs[-1][1], i)
        else:
            runs.append((path, i, i))
    return runs


def region_matches(path: tuple[str, ...], name: str) -> bool:
    """Whether ``name`` names region ``path`` (or a region that holds it).

    ``name`` is one region name (``eval_mod`` names ``bootstrap/eval_mod`` and every region
    inside it) or a run of names written as a printed path (``bootstrap/eval_mod``, also found
    inside ``outer/bootstrap/eval_mod/multiply``). A name that holds ``.`` and no ``/`` is also
    read with ``.`` between the names (``bootstrap.eval_mod``), since ``/`` is the separator
    ``region_name`` prints.
    """
    readings = [name.split("/")]
    if "." in name and "/" not in name:
        readings.append(name.split("."))
    for parts in readings:
        k = len(parts)
        if any(tuple(path[i : i + k]) == tuple(parts) for i in range(len(path) - k + 1)):
            return True
    return False


def region_arg(name: object) -> str:
    """``name`` as a region name to look for (``region_matches``), or a clear ``ValueError``."""
    if not isinstance(name, str):
        raise TypeError(f"a region is named by a str, got {type(name).__name__} {name!r}")
    text = name.strip().strip("/")
    if not text or any(not part.strip() for part in text.split("/")):
        raise ValueError(
            f"a region name is text such as 'bootstrap' or 'bootstrap/eval_mod', got {name!r}"
        )
    return text


def region_names_text(paths: list[tuple[str, ...]], limit: int = 40) -> str:
    """The distinct names in ``paths``, in the order they first appear, for a message."""
    names = list(dict.fromkeys(part for path in paths for part in path))
    if not names:
        return "none (no kernel was built inside a ren.region block)"
    shown = ", ".join(names[:limit])
    return shown + (f", ... ({len(names)} names)" if len(names) > limit else "")


def depth_arg(depth: object) -> int:
    """``depth`` checked: a region depth is an ``int`` from 1 on (``ValueError`` otherwise)."""
    if not isinstance(depth, int) or isinstance(depth, bool) or depth < 1:
        raise ValueError(f"the region depth must be a number from 1 on, got {depth!r}")
    return depth


def _span(first: int, last: int) -> str:
    return str(first) if first == last else f"{first}-{last}"


def spans_text(runs: list[tuple[int, int]], limit: int = 6) -> str:
    """Runs of kernels ``(first, last)`` as ``0-7, 9``; past ``limit`` runs, counted."""
    shown = ", ".join(_span(first, last) for first, last in runs[:limit])
    return shown + (f", ... ({len(runs)} runs)" if len(runs) > limit else "")


def _region_text(path: tuple[str, ...]) -> str:
    return region_name(path) or "(no region)"
